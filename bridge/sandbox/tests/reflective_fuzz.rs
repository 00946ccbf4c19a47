//! The reflective fuzzer (see `fuzzing/mod.rs`) over every registered type of the headless
//! sandbox. `BRIDGE_FUZZ_SEED` and `BRIDGE_FUZZ_CASES_PER_TYPE` (default 48) reproduce or widen
//! it.

use crate::fuzzing;

use bevy_mcp_sandbox::testing::Harness;
use fuzzing::{Plan, env_or, fuzz};

/// The seed when `BRIDGE_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 0x00b1_d6e5_eed5;
/// Cases per type when `BRIDGE_FUZZ_CASES_PER_TYPE` is not set.
const DEFAULT_CASES_PER_TYPE: usize = 48;

#[test]
fn every_registered_type_survives_extreme_generic_writes() {
    let per_type = env_or("BRIDGE_FUZZ_CASES_PER_TYPE", DEFAULT_CASES_PER_TYPE);
    let summary = fuzz(Plan {
        name: "reflective fuzz",
        seed: env_or("BRIDGE_FUZZ_SEED", DEFAULT_SEED),
        harness: || Ok(Harness::new()),
        cases_for: Box::new(move |_| per_type),
        settle_frames: 3,
        after_case: |_| Ok(()),
    });
    assert!(summary.is_some(), "the headless sandbox always builds");
}
