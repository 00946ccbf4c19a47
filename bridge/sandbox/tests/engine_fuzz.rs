//! The reflective fuzzer (see `fuzzing/mod.rs`) over every type registered in an app with Bevy's
//! default plugins that renders what real games do (sprites plain, sliced and tiled, 2D and UI
//! text, a UI panel, a 3D scene with meshes, materials, a point and a directional light with
//! shadows, 2D and 3D cameras), offscreen on the software Vulkan driver. After each accepted case
//! frames are rendered; a case fails if the app panics, quits, a render error happens (even one
//! the bridge's backstop recovered from: the bounds should have refused the write), or it stops
//! making frames (the watchdog).
//!
//! The writable engine types get `BRIDGE_ENGINE_FUZZ_CASES` cases each (default 32); every other
//! type gets 2: Bevy's others are closed to generic writes (refused before a value is read), and
//! the sandbox's own are fuzzed at length headless (`reflective_fuzz.rs`). `BRIDGE_FUZZ_SEED`
//! reproduces a run.

#![cfg(feature = "render")]

use crate::fuzzing;

use bevy_mcp_bridge::RenderRecoveries;
use bevy_mcp_bridge::test_support::writable_engine_types;
use bevy_mcp_sandbox::testing::Harness;
use fuzzing::{Plan, env_or, fuzz};

/// The seed when `BRIDGE_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x0e61_e5f0_22ed;
/// Cases per writable type when `BRIDGE_ENGINE_FUZZ_CASES` is not set.
const DEFAULT_CASES: usize = 32;
/// Cases per other type.
const OTHER_CASES: usize = 2;

#[test]
fn every_type_of_a_rendering_app_survives_extreme_generic_writes() {
    let cases = env_or("BRIDGE_ENGINE_FUZZ_CASES", DEFAULT_CASES);
    let writable = writable_engine_types();
    fuzz(Plan {
        name: "engine fuzz",
        seed: env_or("BRIDGE_FUZZ_SEED", DEFAULT_SEED),
        harness: || Harness::showcase(|config| config),
        cases_for: Box::new(move |target| {
            let path = target.type_path.as_str();
            let open = writable.iter().any(|writable| {
                if writable.ends_with('<') {
                    path.starts_with(writable)
                } else {
                    path == *writable
                }
            });
            if open { cases } else { OTHER_CASES }
        }),
        settle_frames: 2,
        after_case: |harness| {
            let recoveries = harness.world().resource::<RenderRecoveries>();
            if recoveries.recoveries.is_empty() && recoveries.unexplained == 0 {
                Ok(())
            } else {
                Err(format!("a render error followed the case: {recoveries:?}"))
            }
        },
    });
}
