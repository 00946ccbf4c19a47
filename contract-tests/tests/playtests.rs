//! Recording a playtest over real HTTP: a session's world-changing calls and expectations go into
//! the script, reads and other sessions' calls do not, and the script replays.

use bevy_mcp_bridge::playtest::{read_script, replay};
use bevy_mcp_contract_tests::mcp::{CallOutcome, McpSession};
use bevy_mcp_sandbox::testing::{Harness, SandboxServer};
use serde_json::{Value, json};

fn ok(outcome: &CallOutcome) -> Value {
    assert!(!outcome.is_error(), "{}", outcome.payload());
    outcome.payload()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_records_its_changes_and_expectations_into_a_replayable_script() {
    let scripts = tempfile::tempdir().expect("scripts dir");
    let dir = scripts.path().to_owned();
    let server = SandboxServer::start(120.0, move |config| config.with_scripts_dir(dir));
    let agent = McpSession::start(server.address).await;
    let bystander = McpSession::start(server.address).await;

    let stop_first = agent.execute("playtest", "record_stop", json!({})).await;
    assert_eq!(stop_first.error_code().as_deref(), Some("INVALID_PARAMS"));
    let started = ok(&agent
        .execute("playtest", "record_start", json!({"name": "dash/up"}))
        .await);
    assert_eq!(started["recording"], json!("dash/up.json"));
    let twice = agent
        .execute("playtest", "record_start", json!({"name": "other"}))
        .await;
    assert_eq!(twice.error_code().as_deref(), Some("INVALID_PARAMS"));

    ok(&agent
        .execute(
            "control_entity",
            "mutate_component",
            json!({"entity": "Player", "component": "Velocity", "path": ".linear", "value": [0, 0, 0]}),
        )
        .await);
    ok(&agent
        .execute("inspect", "get_entity", json!({"entity": "Player"}))
        .await);
    ok(&bystander
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "Crate", "translation": [1, 1, 0]}),
        )
        .await);
    ok(&agent
        .execute(
            "input",
            "press_keys",
            json!({"keys": ["ArrowUp"], "frames": 15}),
        )
        .await);
    // The live server's fixed steps follow real time (15 frames at 120 fps are 7 or 8 steps of
    // 1/60 s), so only the direction is certain here; the replay below is exact.
    let held = ok(&agent
        .execute(
            "playtest",
            "expect",
            json!({"entity": "Player", "component": "Transform", "path": ".translation.y", "op": "gt", "value": 0.1}),
        )
        .await);
    assert_eq!(held["pass"], json!(true), "{held}");
    let stopped = ok(&agent.execute("playtest", "record_stop", json!({})).await);
    assert_eq!(stopped["steps"], json!(3), "mutate, press_keys, expect");
    assert_eq!(stopped["expectations"], json!(1));

    let listed = ok(&agent.execute("playtest", "list_scripts", json!({})).await);
    assert_eq!(listed["scripts"][0]["file"], json!("dash/up.json"));
    let script = read_script(&scripts.path().join("dash/up.json")).expect("a script");
    let calls: Vec<String> = script
        .steps
        .iter()
        .map(|step| format!("{}.{}", step.tool, step.action))
        .collect();
    assert_eq!(
        calls,
        [
            "control_entity.mutate_component",
            "input.press_keys",
            "playtest.expect"
        ]
    );
    drop(server);

    let report = std::thread::spawn(move || {
        let mut harness = Harness::new();
        replay(&mut harness.app, &script).map(|report| report.passed())
    })
    .join()
    .expect("the replay thread");
    assert_eq!(report, Ok(true));
}
