//! The stateful sequence fuzzer on the sandbox (see `sequences/mod.rs` for what it does and
//! checks). `BRIDGE_SEQUENCE_SEED` picks the first seed, `BRIDGE_SEQUENCE_SEEDS` how many seeds
//! run and `BRIDGE_SEQUENCE_STEPS` how many steps each (the long form by hand:
//! `BRIDGE_SEQUENCE_SEEDS=50 BRIDGE_SEQUENCE_STEPS=1000 cargo test --workspace --test sandbox sequence_fuzz::`).
//! A failure is shrunk and printed as a step list to keep under `tests/sequences/`.

use crate::sequences;

use std::time::Duration;

use serde_json::Value;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_sequences_from_three_sessions_keep_the_worlds_invariants() {
    let first = env_or("BRIDGE_SEQUENCE_SEED", 1);
    let seeds = env_or("BRIDGE_SEQUENCE_SEEDS", 8);
    let count = env_or("BRIDGE_SEQUENCE_STEPS", 400) as usize;
    for seed in first..first + seeds {
        let mut generator = sequences::Generator::new(seed);
        let steps: Vec<Value> = (0..count).map(|_| generator.step()).collect();
        eprintln!("sequence fuzz: seed {seed}, {count} steps");
        let outcome = sequences::run_counted(&steps);
        if let Ok(stats) = &outcome {
            let ok: usize = stats
                .answers
                .iter()
                .filter(|(call, _)| call.ends_with(" ok"))
                .map(|(_, count)| count)
                .sum();
            let all: usize = stats.answers.values().sum();
            eprintln!(
                "seed {seed}: {all} calls, {ok} answered ok, {} undo round trips checked: {:?}",
                stats.round_trips, stats.answers
            );
            // A run that only met refusals would check nothing.
            assert!(ok * 2 > all, "seed {seed}: most calls should go through");
            assert!(
                stats.round_trips > 0,
                "seed {seed}: no round trip was checked"
            );
        }
        if let Err(broken) = outcome {
            let budget = env_or("BRIDGE_SEQUENCE_SHRINK_SECONDS", 120);
            let shrunk = sequences::shrink(&steps, &broken, Duration::from_secs(budget));
            let script = serde_json::to_string_pretty(&shrunk).unwrap_or_default();
            // Also written down whole: a long script is easier to keep from a file.
            let saved = std::env::temp_dir().join(format!("sequence-seed-{seed}.json"));
            let _ = std::fs::write(&saved, &script);
            eprintln!("shrunk sequence written to {}", saved.display());
            panic!(
                "seed {seed}: {} at step {}: {}\nshrunk to {} steps (keep as tests/sequences/<name>.json):\n{script}",
                broken.kind,
                broken.step,
                broken.detail,
                shrunk.len()
            );
        }
    }
}

#[test]
fn kept_sequences_still_hold() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sequences");
    let mut kept: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| {
                    path.extension()
                        .is_some_and(|extension| extension == "json")
                })
                .collect()
        })
        .unwrap_or_default();
    kept.sort();
    for path in &kept {
        eprintln!("kept sequence {}", path.display());
        sequences::replay_steps(path);
    }
}
