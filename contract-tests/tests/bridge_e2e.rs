//! End to end: the real sandbox app with the bridge, over real HTTP, through the `bevy` tool.

use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_sandbox::testing::SandboxServer;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_get_mutate_step_get_shows_the_change() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    assert!(
        !session
            .execute("control_app", "pause", json!({}))
            .await
            .is_error()
    );
    let spawned = session
        .execute(
            "control_entity",
            "spawn",
            json!({"name": "Probe", "components": {"Transform": {"translation": [0, 0, 0], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1]}, "Velocity": {"linear": [1, 0, 0]}}}),
        )
        .await;
    assert!(!spawned.is_error(), "{:?}", spawned.payload());
    let read = |outcome: &bevy_mcp_contract_tests::mcp::CallOutcome| {
        outcome.payload()["components"]["bevy_transform::components::transform::Transform"]["translation"][0]
            .as_f64()
            .expect("translation.x")
    };
    let before = session
        .execute("inspect", "get_entity", json!({"entity": "Probe"}))
        .await;
    assert_eq!(read(&before), 0.0);
    let mutated = session
        .execute(
            "control_entity",
            "mutate_component",
            json!({"entity": "Probe", "component": "Velocity", "path": ".linear.x", "value": 10}),
        )
        .await;
    assert_eq!(mutated.payload()["after"], json!(10.0));
    let id = json!(session.next_id());
    let stepped = session
        .call_with_id(
            id,
            json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 30}}),
            Some(json!("steps")),
        )
        .await;
    assert_eq!(stepped.payload()["stepped"], json!(30));
    assert_eq!(stepped.payload()["paused"], json!(true));
    assert!(!stepped.progress.is_empty(), "progress was streamed");
    let after = session
        .execute("inspect", "get_entity", json!({"entity": "Probe"}))
        .await;
    assert!(
        read(&after) > 0.0,
        "the probe moved while stepping: {:?}",
        after.payload()
    );
    let still = session
        .execute("inspect", "get_entity", json!({"entity": "Probe"}))
        .await;
    assert_eq!(read(&still), read(&after), "and stays put while paused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consent_gated_despawn_on_the_real_app() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    let first = session
        .execute("control_entity", "despawn", json!({"entity": "Crate"}))
        .await;
    assert_eq!(first.error_code().as_deref(), Some("CONSENT_REQUIRED"));
    let still_there = session
        .execute("inspect", "find_entities", json!({"name": "Crate"}))
        .await;
    assert_eq!(
        still_there.payload()["total"],
        json!(1),
        "nothing happened without consent"
    );
    let granted = session
        .call(first.payload()["error"]["nextCall"].clone())
        .await;
    assert_eq!(granted.payload()["despawned"]["name"], json!("Crate"));
    let gone = session
        .execute("inspect", "find_entities", json!({"name": "Crate"}))
        .await;
    assert_eq!(gone.payload()["total"], json!(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_running_wait_on_the_real_app() {
    use bevy_mcp_contract_tests::http::{SseEvent, SseReader};
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    assert!(
        !session
            .execute("control_app", "pause", json!({}))
            .await
            .is_error()
    );
    let waiting = session
        .start_call(
            json!("wait-1"),
            json!({"operation": "execute", "tool": "control_app", "action": "wait_until",
                   "params": {"entity": "Player", "component": "Health", "path": ".current", "op": "lt", "value": 0, "maxFrames": 100000}}),
            Some(json!(1)),
        )
        .await;
    let mut reader = SseReader::new(waiting);
    assert!(
        matches!(reader.next().await, Some(SseEvent::Message(_, message)) if message["method"] == json!("notifications/progress"))
    );
    assert_eq!(
        session.cancel(json!("wait-1")).await,
        hyper::StatusCode::ACCEPTED
    );
    let rest = reader.rest().await;
    assert!(
        rest.iter().all(
            |event| !matches!(event, SseEvent::Message(_, message) if message.get("id").is_some())
        ),
        "no response after the cancel: {rest:?}"
    );
    let state = session.execute("control_app", "get_state", json!({})).await;
    assert_eq!(
        state.payload()["paused"],
        json!(true),
        "the session and the app are fine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_records_executes_with_secrets_redacted() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let path = file.path().to_owned();
    let server = SandboxServer::start(60.0, move |config| config.with_audit_log_file(path));
    let session = McpSession::start(server.address).await;
    let secret = "4f9c2b7e1d8a6035c4b2e9f7a1d3c5b8e0f2a4c6";
    assert!(
        !session
            .execute(
                "control_entity",
                "rename",
                json!({"entity": "Crate", "name": secret})
            )
            .await
            .is_error()
    );
    let refused = session
        .execute(
            "inspect",
            "get_entity",
            json!({"entity": "Player", "password": "hunter2"}),
        )
        .await;
    assert_eq!(refused.error_code().as_deref(), Some("UNKNOWN_PARAM"));
    let audit = session
        .execute("system_control", "audit_log", json!({"limit": 10}))
        .await
        .payload();
    let entries = audit["entries"].as_array().expect("entries").clone();
    assert_eq!(entries.len(), 2, "{audit}");
    assert_eq!(entries[0]["action"], json!("control_entity.rename"));
    assert_eq!(entries[0]["effect"], json!("write"));
    assert_eq!(entries[0]["outcome"], json!("ok"));
    assert_eq!(entries[0]["params"]["name"], json!("[redacted]"));
    assert_eq!(entries[1]["outcome"], json!("UNKNOWN_PARAM"));
    assert_eq!(entries[1]["params"]["password"], json!("[redacted]"));
    assert_eq!(entries[1]["params"]["entity"], json!("Player"));
    assert!(
        entries
            .iter()
            .all(|entry| entry["session"].as_str().is_some_and(|id| id.len() == 8))
    );
    // The file is written by the audit's own thread: wait (boundedly) for both lines.
    let mut lines = String::new();
    for _ in 0..250 {
        lines = std::fs::read_to_string(file.path()).unwrap_or_default();
        if lines.lines().count() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(lines.lines().count() >= 2, "{lines}");
    assert!(
        !lines.contains(secret) && !lines.contains("hunter2"),
        "no secret reaches the file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_whose_session_is_deleted_leaves_no_observer_behind() {
    let server = SandboxServer::start(60.0, |config| config);
    let observer = McpSession::start(server.address).await;
    let baseline = observer
        .execute("inspect", "world_summary", json!({}))
        .await
        .payload()["observerCount"]
        .clone();
    let watcher = McpSession::start(server.address).await;
    let watching = watcher
        .start_call(
            json!(1),
            json!({"operation": "execute", "tool": "watch", "action": "observe_event", "params": {"event": "Explosion", "frames": 100000}}),
            Some(json!("w")),
        )
        .await;
    let mut reader = bevy_mcp_contract_tests::http::SseReader::new(watching);
    assert!(reader.next().await.is_some(), "the watch is running");
    let during = observer
        .execute("inspect", "world_summary", json!({}))
        .await
        .payload()["observerCount"]
        .clone();
    assert_eq!(during, json!(baseline.as_u64().unwrap_or(0) + 1));
    let deleted =
        bevy_mcp_contract_tests::http::send(server.address, watcher.bare(hyper::Method::DELETE))
            .await;
    assert_eq!(deleted.status(), hyper::StatusCode::OK);
    let mut cleaned = false;
    for _ in 0..250 {
        let now = observer
            .execute("inspect", "world_summary", json!({}))
            .await
            .payload()["observerCount"]
            .clone();
        if now == baseline {
            cleaned = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(cleaned, "the observer went with the session");
}

/// Issue 12's table over real HTTP against the real sandbox: each call is refused with a typed
/// error whose nextCall describes the dedicated action, discovery says what is protected, and the
/// app keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_engine_state_is_refused_with_the_dedicated_action() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    for (tool, action, params, use_instead) in [
        (
            "manage_resource",
            "mutate",
            json!({"resource": "Time<Virtual>", "path": ".context.relative_speed", "value": -1}),
            "set_speed",
        ),
        (
            "manage_resource",
            "mutate",
            json!({"resource": "Time<Real>", "path": ".wrap_period", "value": {"secs": 0, "nanos": 0}}),
            "set_speed",
        ),
        (
            "manage_resource",
            "mutate",
            json!({"resource": "Time<Fixed>", "path": ".context.timestep", "value": {"secs": 0, "nanos": 0}}),
            "set_speed",
        ),
        (
            "manage_events",
            "write_message",
            json!({"message": "AppExit", "value": "Success"}),
            "exit",
        ),
        (
            "control_entity",
            "insert_components",
            json!({"entity": "Base", "components": {"ChildOf": 0}}),
            "set_parent",
        ),
    ] {
        let refused = session.execute(tool, action, params).await;
        assert_eq!(
            refused.error_code().as_deref(),
            Some("PROTECTED_TYPE"),
            "{tool}.{action}"
        );
        let next_call = refused.payload()["error"]["nextCall"].clone();
        assert_eq!(next_call["action"], json!(use_instead), "{next_call}");
        // The nextCall works as sent.
        let described = session.call(next_call).await;
        assert!(!described.is_error(), "{:?}", described.payload());
    }
    let described = session
        .execute("inspect", "describe_type", json!({"type": "Time<Virtual>"}))
        .await
        .payload();
    assert_eq!(
        described["protected"]["useInstead"],
        json!("control_app.set_speed"),
        "{described}"
    );
    let resources = session
        .execute(
            "inspect",
            "list_resources",
            json!({"filter": "bevy_time::time"}),
        )
        .await
        .payload();
    assert!(
        resources["resources"].as_array().is_some_and(
            // Unreflected resources (TimeUpdateStrategy) are listed by name since Bevy keeps
            // names; every reflected clock is protected.
            |rows| !rows.is_empty()
                && rows
                    .iter()
                    .filter(|row| row["reflected"] == json!(true))
                    .all(|row| row["protected"].is_object())
        ),
        "{resources}"
    );
    let state = session.execute("control_app", "get_state", json!({})).await;
    assert!(!state.is_error(), "the app keeps answering");
}

/// The deadline is the transport's alone: a call past it answers `TIMEOUT`, never the bridge's
/// `CANCELLED`, wherever the deadline falls (in the mailbox, between frames, during a frame). Run
/// many times with deadlines spread over several frames, since the old race showed only at some.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_deadline_answers_timeout_every_time() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    for round in 0..60u64 {
        // 1 to 58 ms: queued at the deadline, or stepping for a few frames when it comes.
        let timeout = 1 + (round % 20) * 3;
        let outcome = session
            .call(json!({
                "operation": "execute", "tool": "control_app", "action": "step_frames",
                "params": {"frames": 100000}, "options": {"timeoutMs": timeout}
            }))
            .await;
        assert_eq!(
            outcome.error_code().as_deref(),
            Some("TIMEOUT"),
            "round {round} ({timeout} ms): {}",
            outcome.payload()
        );
    }
    // Deadlines that fall while the job steps frames (the report: 100 to 300 ms against 600
    // frames answered CANCELLED about one call in fifteen).
    for round in 0..30u64 {
        let timeout = 100 + (round * 7) % 201;
        let outcome = session
            .call(json!({
                "operation": "execute", "tool": "control_app", "action": "step_frames",
                "params": {"frames": 600}, "options": {"timeoutMs": timeout}
            }))
            .await;
        assert_eq!(
            outcome.error_code().as_deref(),
            Some("TIMEOUT"),
            "stepping round {round} ({timeout} ms): {}",
            outcome.payload()
        );
    }
    // Every job was wound down: the app still answers, and no stepping is left over.
    let state = session.execute("control_app", "get_state", json!({})).await;
    assert!(!state.is_error(), "{}", state.payload());
    let diagnostics = session
        .execute("system_control", "diagnostics", json!({}))
        .await;
    assert_eq!(
        diagnostics.payload()["bridge"]["activeJobs"],
        json!(0),
        "{}",
        diagnostics.payload()
    );
}
