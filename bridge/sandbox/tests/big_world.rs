//! Reads in a world of twenty thousand entities, some despawned in the middle: pages come in
//! index order with the right total, and an entity late in the world is found by its display
//! form and by its name. (What the reads cost at 1 000 to 100 000 entities belongs in a
//! benchmark; these machines are too noisy for timing assertions.)

use bevy::prelude::{Entity, Name};
use bevy_mcp_sandbox::testing::Harness;
use serde_json::{Value, json};

const SPAWNED: usize = 20_000;

fn ok(result: Result<Value, mcp_native_transport::ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

#[test]
fn pages_totals_and_lookups_stay_right_in_a_big_world() {
    let mut harness = Harness::new();
    let before = ok(harness.call("inspect", "list_entities", json!({"limit": 1})))["total"]
        .as_u64()
        .unwrap_or_default() as usize;
    let spawned: Vec<Entity> = (0..SPAWNED)
        .map(|index| {
            harness
                .world()
                .spawn(Name::new(format!("Crate {index}")))
                .id()
        })
        .collect();
    // Holes in the index space: despawned entities are neither listed nor counted.
    let holes: Vec<Entity> = spawned.iter().copied().skip(100).step_by(1000).collect();
    for entity in &holes {
        harness.world().despawn(*entity);
    }
    let despawned = holes.len();
    let expected = before + SPAWNED - despawned;

    let first = ok(harness.call("inspect", "list_entities", json!({"limit": 50})));
    assert_eq!(first["total"], json!(expected));
    let last_page = ok(harness.call(
        "inspect",
        "list_entities",
        json!({"offset": expected - 10, "limit": 50}),
    ));
    let rows = last_page["entities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(rows.len(), 10, "the last ten");
    let indices: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["bits"].as_u64())
        .map(|bits| Entity::from_bits(bits).index().index().into())
        .collect();
    assert!(indices.is_sorted(), "index order: {indices:?}");
    assert_eq!(
        rows.last().map(|row| row["name"].clone()),
        Some(json!(format!("Crate {}", SPAWNED - 1)))
    );

    let late = spawned[SPAWNED - 1];
    let by_display = ok(harness.call("inspect", "get_entity", json!({"entity": late.to_string()})));
    assert_eq!(by_display["entity"]["bits"], json!(late.to_bits()));
    let by_name = ok(harness.call("inspect", "get_entity", json!({"entity": "Crate 19998"})));
    assert_eq!(
        by_name["entity"]["bits"],
        json!(spawned[SPAWNED - 2].to_bits())
    );
    let gone = harness.call(
        "inspect",
        "get_entity",
        json!({"entity": spawned[100].to_string()}),
    );
    assert_eq!(
        gone.err().map(|error| error.code.to_string()).as_deref(),
        Some("ENTITY_NOT_FOUND")
    );

    let found = ok(harness.call(
        "inspect",
        "find_entities",
        json!({"name": "Crate 1999", "limit": 3}),
    ));
    // "Crate 1999" and "Crate 19990".."Crate 19999": eleven match, three are returned.
    assert_eq!(found["total"], json!(11));
    assert_eq!(found["entities"].as_array().map(Vec::len), Some(3));
}
