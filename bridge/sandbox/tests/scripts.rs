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

/// The sandbox whose scripts folder holds the committed script as `good` and, with one
/// expectation made wrong, as `bad`.
fn with_good_and_bad_scripts(dir: &Path) -> Harness {
    let scripts = dir.join("scripts");
    std::fs::create_dir_all(&scripts).expect("scripts folder");
    let mut script = read_script(&committed_script()).unwrap_or_else(|error| panic!("{error}"));
    let write = |name: &str, script: &Script| {
        let text = serde_json::to_string_pretty(script).expect("serializable");
        std::fs::write(scripts.join(format!("{name}.json")), text).expect("written");
    };
    write("good", &script);
    if let Some(expect) = script
        .steps
        .iter_mut()
        .find(|step| step.action == "expect" && step.params.get("component").is_some())
    {
        expect.params["value"] = json!(5.0);
    }
    write("bad", &script);
    let mut harness = Harness::configured(
        |config| {
            config
                .with_scripts_dir(scripts.clone())
                .with_scenes_dir(dir.join("scenes"))
        },
        |_| {},
    );
    harness.run_frames(1);
    harness
}

fn player_transform(harness: &mut Harness) -> Option<Transform> {
    let player = harness.entity("Player");
    harness.world().get::<Transform>(player).copied()
}

fn run_script(harness: &mut Harness, params: Value) -> Value {
    let pending = harness.start(
        "playtest",
        "run",
        params,
        mcp_native_transport::ProgressSink::disabled(),
    );
    harness
        .finish(&pending)
        .unwrap_or_else(|error| panic!("{error:?}"))
}

#[test]
fn an_agent_runs_a_script_in_the_running_app_and_the_app_comes_back() {
    let dir = tempfile::tempdir().expect("a folder");
    let mut harness = with_good_and_bad_scripts(dir.path());
    // The player stands still, so where it stands is where the app left it.
    harness
        .call(
            "control_entity",
            "mutate_component",
            json!({"entity": "Player", "component": "Velocity", "path": ".linear", "value": [0, 0, 0]}),
        )
        .unwrap_or_else(|error| panic!("{error:?}"));
    harness.run_frames(1);
    let before = player_transform(&mut harness);

    let good = run_script(&mut harness, json!({"name": "good"}));
    assert_eq!(good["passed"], json!(true), "{good}");
    assert_eq!(good["steps"], json!(6), "{good}");
    assert_eq!(good["failures"], json!([]), "{good}");
    assert_eq!(good["restored"], json!(true), "{good}");
    assert_eq!(
        player_transform(&mut harness),
        before,
        "the app is as it was"
    );

    let bad = run_script(&mut harness, json!({"name": "bad.json"}));
    assert_eq!(bad["passed"], json!(false), "{bad}");
    let failure = &bad["failures"][0];
    assert_eq!(failure["call"], json!("playtest.expect"), "{bad}");
    let difference = failure["diff"][0]["difference"].as_f64().unwrap_or(0.0);
    assert!((difference + 3.0).abs() < 0.01, "{bad}");
    assert!(failure["actual"].is_number(), "{bad}");

    let listed = harness
        .call("playtest", "list_scripts", json!({}))
        .unwrap_or_else(|error| panic!("{error:?}"));
    let last_run = |file: &str| {
        listed["scripts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|row| row["file"] == json!(file))
            .map(|row| row["lastRun"]["passed"].clone())
    };
    assert_eq!(last_run("good.json"), Some(json!(true)), "{listed}");
    assert_eq!(last_run("bad.json"), Some(json!(false)), "{listed}");

    // Kept: the player walked as the script made it.
    let kept = run_script(&mut harness, json!({"name": "good", "restore": false}));
    assert_eq!(kept["restored"], json!(false), "{kept}");
    assert_ne!(
        player_transform(&mut harness),
        before,
        "the run's result is kept"
    );

    let missing = harness.call("playtest", "run", json!({"name": "nothing_here"}));
    assert!(missing.is_err(), "{missing:?}");
}

#[test]
fn bevy_mcp_replay_writes_a_junit_report_a_ci_system_reads() {
    let dir = tempfile::tempdir().expect("a folder");
    drop(with_good_and_bad_scripts(dir.path()));
    let report = |name: &str| {
        let file = dir.path().join(format!("{name}.xml"));
        let run = Command::new(env!("CARGO_BIN_EXE_bevy-mcp"))
            .arg("--scripts-dir")
            .arg(dir.path().join("scripts"))
            .args(["--replay", name, "--junit"])
            .arg(&file)
            .output()
            .expect("bevy-mcp runs");
        let text = std::fs::read_to_string(&file).expect("the report is written");
        (run.status.code(), text)
    };
    let (code, good) = report("good");
    assert_eq!(code, Some(0));
    let document = roxmltree::Document::parse(&good).expect("well-formed XML");
    let case = document
        .descendants()
        .find(|node| node.has_tag_name("testcase"))
        .expect("one test case");
    assert_eq!(case.attribute("name"), Some("good"));
    assert!(case.children().all(|child| !child.has_tag_name("failure")));

    let (code, bad) = report("bad");
    assert_eq!(code, Some(1));
    let document = roxmltree::Document::parse(&bad).expect("well-formed XML");
    let suites = document.root_element();
    assert_eq!(suites.tag_name().name(), "testsuites");
    assert_eq!(suites.attribute("failures"), Some("1"));
    let failure = document
        .descendants()
        .find(|node| node.has_tag_name("failure"))
        .expect("the failing case's failure");
    let message = failure.attribute("message").unwrap_or_default();
    assert!(message.contains("playtest.expect"), "{message}");
    assert!(
        failure.text().unwrap_or_default().contains("difference"),
        "{bad}"
    );
}
