//! Playtest scripts: the committed `scripts/walk_right.json` (recorded from an agent session
//! over HTTP) replays and passes, twice to the same world; a failing expectation fails the
//! replay with its diff; a bad step is refused before anything runs; `bevy-mcp --replay` says
//! all of it in its exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use bevy::prelude::Transform;
use bevy_mcp_bridge::playtest::{
    ReplayReport, Script, ScriptError, StepOutcome, read_script, replay, replay_file,
};
use bevy_mcp_sandbox::testing::Harness;
use serde_json::{Value, json};

fn committed_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/walk_right.json")
}

/// Every entity with every reflected component, as `inspect.query` answers: the world to compare.
fn snapshot(harness: &mut Harness) -> Value {
    let mut pages = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let mut params = json!({"limit": 50});
        if let Some(cursor) = &cursor {
            params["cursor"] = cursor.clone();
        }
        let page = harness
            .call("inspect", "query", params)
            .unwrap_or_else(|error| panic!("{error:?}"));
        pages.push(page["entities"].clone());
        match page.get("cursor") {
            Some(next) if page["moreAvailable"] == json!(true) => cursor = Some(next.clone()),
            _ => break,
        }
    }
    json!(pages)
}

fn replayed(script: &Script) -> (ReplayReport, Harness) {
    let mut harness = Harness::new();
    let report = replay(&mut harness.app, script).unwrap_or_else(|error| panic!("{error}"));
    (report, harness)
}

#[test]
fn the_recorded_script_replays_to_the_same_world_twice() {
    let script = read_script(&committed_script()).unwrap_or_else(|error| panic!("{error}"));
    assert!(script.steps.len() >= 4, "{script:?}");
    let (first, mut one) = replayed(&script);
    assert!(first.passed(), "{first}");
    assert_eq!(
        first
            .steps
            .iter()
            .filter(|step| step.call == "playtest.expect")
            .count(),
        2
    );
    let (second, mut two) = replayed(&script);
    assert!(second.passed(), "{second}");
    assert_eq!(first, second, "the same answers, step by step");
    assert_eq!(snapshot(&mut one), snapshot(&mut two), "the same world");
    // The helper for a game's own tests reads the file itself.
    let mut harness = Harness::new();
    let report = replay_file(&mut harness.app, &committed_script())
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(report.passed(), "{report}");
}

#[test]
fn a_failing_expectation_fails_the_replay_with_its_diff() {
    let mut script = read_script(&committed_script()).unwrap_or_else(|error| panic!("{error}"));
    let expect = script
        .steps
        .iter_mut()
        .find(|step| step.action == "expect" && step.params.get("component").is_some())
        .unwrap_or_else(|| panic!("the script checks a component"));
    expect.params["value"] = json!(5.0);
    let (report, _) = replayed(&script);
    assert!(!report.passed());
    let failures: Vec<_> = report.failures().collect();
    assert_eq!(failures.len(), 1, "{report}");
    match &failures[0].outcome {
        StepOutcome::ExpectationFailed(answer) => {
            assert_eq!(answer["pass"], json!(false));
            let difference = answer["diff"][0]["difference"].as_f64().unwrap_or(0.0);
            assert!((difference + 3.0).abs() < 0.01, "{answer}");
        }
        other => panic!("expected a failed expectation, got {other:?}"),
    }
    assert!(report.to_string().contains("FAIL"), "{report}");
}

#[test]
fn a_bad_step_is_refused_before_anything_runs() {
    let mut script = read_script(&committed_script()).unwrap_or_else(|error| panic!("{error}"));
    script.steps[2].params = json!({"keys": ["ArrowRight"], "frames": 0});
    let mut harness = Harness::new();
    harness.run_frames(1);
    let player = harness.entity("Player");
    let before = harness.world().get::<Transform>(player).copied();
    let refused = replay(&mut harness.app, &script);
    match refused {
        Err(ScriptError::BadStep {
            index,
            tool,
            action,
            reason,
        }) => {
            assert_eq!(
                (index, tool.as_str(), action.as_str()),
                (2, "input", "press_keys")
            );
            assert!(reason.contains("/frames"), "{reason}");
        }
        other => panic!("expected BadStep, got {other:?}"),
    }
    // Not even the first step (which stops the player) ran.
    let after = harness.world().get::<Transform>(player).copied();
    assert_eq!(before, after);
    script.steps[2].action = "press_keyz".to_owned();
    assert!(matches!(
        replay(&mut harness.app, &script),
        Err(ScriptError::BadStep { index: 2, .. })
    ));
}

#[test]
fn bevy_mcp_replay_exits_zero_only_when_everything_passes() {
    let scripts = tempfile::tempdir().expect("scripts dir");
    let mut script = read_script(&committed_script()).unwrap_or_else(|error| panic!("{error}"));
    let write = |name: &str, script: &Script| {
        let text = serde_json::to_string_pretty(script).expect("serializable");
        std::fs::write(scripts.path().join(format!("{name}.json")), text).expect("written");
    };
    write("good", &script);
    script.steps[3].params["value"] = json!(-1.0);
    write("bad", &script);
    let run = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_bevy-mcp"))
            .arg("--scripts-dir")
            .arg(scripts.path())
            .args(["--replay", name])
            .output()
            .expect("bevy-mcp runs")
    };
    let good = run("good");
    let stdout = String::from_utf8_lossy(&good.stdout);
    assert_eq!(good.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("passed: 6 steps"), "{stdout}");
    let bad = run("bad");
    let stdout = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL") && stdout.contains("difference"),
        "{stdout}"
    );
    let missing = run("nothing_here");
    assert_eq!(missing.status.code(), Some(2));
    let escape = run("../etc/passwd");
    assert_eq!(escape.status.code(), Some(2));
}
