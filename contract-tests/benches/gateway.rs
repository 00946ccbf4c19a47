//! Micro-benchmarks of the gateway's work per call, in process (no HTTP): `search` over the real
//! catalog and over 1,000 actions built from it (target P5: ≤ 1 ms per query), and a catalog
//! `describe` serialized to the bytes a client receives.
//!
//! ```text
//! cargo bench -p bevy_mcp_contract_tests --bench gateway
//! ```

use std::hint::black_box;

use bevy_mcp_contract_tests::synthetic::scaled_catalog;
use bevy_mcp_generated::CATALOG;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_native_transport::catalog::Catalog;
use mcp_native_transport::gateway::{Prepared, ToolResult};
use mcp_native_transport::{Gateway, ServerConfig, StartVisibility};
use serde_json::json;

fn gateway(catalog: &'static Catalog) -> Gateway {
    Gateway::new(
        catalog,
        &StartVisibility::default(),
        &ServerConfig::default(),
    )
    .unwrap_or_else(|error| panic!("the catalog compiles: {error}"))
}

fn search(c: &mut Criterion) {
    let arguments = json!({"operation": "search", "query": "move the player"});
    for (name, catalog) in [
        ("search/real catalog", &CATALOG),
        ("search/1000 actions", scaled_catalog(&CATALOG, 1000)),
    ] {
        let gateway = gateway(catalog);
        let state = parking_lot::Mutex::new(
            gateway.new_session_state(mcp_native_transport::catalog::Scope::Admin),
        );
        c.bench_function(name, |bench| {
            // The gateway takes its arguments; each run gets a copy made outside the timing.
            bench.iter_batched(
                || arguments.clone(),
                |arguments| black_box(gateway.prepare(&state, arguments)),
                BatchSize::SmallInput,
            )
        });
    }
}

fn describe(c: &mut Criterion) {
    let gateway = gateway(&CATALOG);
    let state = parking_lot::Mutex::new(
        gateway.new_session_state(mcp_native_transport::catalog::Scope::Admin),
    );
    let arguments = json!({"operation": "describe"});
    c.bench_function("describe/catalog to bytes", |bench| {
        bench.iter_batched(
            || arguments.clone(),
            |arguments| {
                let Prepared::Reply { value, error, .. } = gateway.prepare(&state, arguments)
                else {
                    panic!("describe is answered by the gateway");
                };
                black_box(serde_json::to_vec(&ToolResult::new(
                    &value,
                    error.is_some(),
                    true,
                )))
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, search, describe);
criterion_main!(benches);
