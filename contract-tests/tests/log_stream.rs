//! Log notifications and resumable streams on the real bridge: a session that sets its log level
//! gets the app's log lines on its GET stream, with event ids; after dropping the stream it
//! reconnects with `Last-Event-ID` and gets exactly the events it missed.
//!
//! Its own test binary: it installs the process's logger (Bevy's `LogPlugin` with the bridge's
//! capture layer), which only the first app of a process can do.

use std::time::Duration;

use bevy::app::{App, Update};
use bevy::log::LogPlugin;
use bevy::prelude::{Local, Res};
use bevy::time::Time;
use bevy_mcp_bridge::capture_logs;
use bevy_mcp_contract_tests::http::{self, SseEvent, SseReader};
use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_sandbox::testing::SandboxServer;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

/// What the test game logs, twice a second of its time.
const HEARTBEAT: &str = "log-stream test heartbeat";

fn heartbeat(time: Res<Time>, mut last: Local<f64>) {
    let now = time.elapsed_secs_f64();
    if now - *last >= 0.5 {
        *last = now;
        bevy::log::info!("{HEARTBEAT} at {now:.1}s");
        bevy::log::debug!("{HEARTBEAT} detail");
    }
}

fn with_logs(app: &mut App) {
    app.add_plugins(LogPlugin {
        custom_layer: capture_logs,
        filter: "info,log_stream=debug".to_owned(),
        ..LogPlugin::default()
    })
    .add_systems(Update, heartbeat);
}

/// The next heartbeat line on `reader`, with its event id (other events are skipped); fails
/// the test when none comes within 30 seconds.
async fn next_heartbeat(reader: &mut SseReader) -> (u64, Value) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match reader
            .next_within(left)
            .await
            .expect("a heartbeat within 30 s")
        {
            Some(SseEvent::Numbered(id, message))
                if message["params"]["data"]
                    .as_str()
                    .is_some_and(|line| line.starts_with(HEARTBEAT)) =>
            {
                return (id, message);
            }
            Some(_) => {}
            None => panic!("the stream ended"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_come_at_the_level_asked_and_a_resumed_stream_misses_nothing() {
    let server = SandboxServer::with_app(60.0, |config| config, with_logs);
    let session = McpSession::start(server.address).await;
    let refused = session
        .rpc("logging/setLevel", json!({"level": "verbose"}))
        .await;
    assert_eq!(refused["error"]["code"], json!(-32602));
    let set = session
        .rpc("logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(set["result"], json!({}));

    let stream = http::send(server.address, session.bare(Method::GET)).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let mut reader = SseReader::new(stream);
    let (first_id, first) = next_heartbeat(&mut reader).await;
    assert_eq!(first["method"], json!("notifications/message"));
    assert_eq!(
        first["params"]["level"],
        json!("info"),
        "debug lines stay out"
    );
    let (second_id, second) = next_heartbeat(&mut reader).await;
    assert!(second_id > first_id);
    assert_eq!(second["params"]["level"], json!("info"));
    drop(reader);

    // While no stream is open the game keeps logging; give it time for a few lines.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The server learns the old stream is gone at its next write (a log line): until then a
    // reconnect is 409, and a client tries again, as this one does (at most 100 times).
    let mut resumed = None;
    for _ in 0..100 {
        let response = http::send(
            server.address,
            session
                .bare(Method::GET)
                .header("last-event-id", &second_id.to_string()),
        )
        .await;
        if response.status() != StatusCode::CONFLICT {
            resumed = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let resumed = resumed.expect("the old stream was noticed gone");
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut reader = SseReader::new(resumed);
    let mut ids = Vec::new();
    while ids.len() < 3 {
        match reader
            .next_within(Duration::from_secs(30))
            .await
            .expect("events within 30 s")
        {
            Some(SseEvent::Numbered(id, _)) => ids.push(id),
            Some(SseEvent::Comment(_)) => {}
            // A notice of lost events (it has no id) would fail here.
            other => panic!("unexpected {other:?}"),
        }
    }
    let expected: Vec<u64> = (second_id + 1..second_id + 4).collect();
    assert_eq!(
        ids, expected,
        "exactly the events after the last one seen, in order"
    );
    drop(reader);

    let unknown = http::send(
        server.address,
        session.bare(Method::GET).header("last-event-id", "999999"),
    )
    .await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
}

#[path = "clients/mod.rs"]
mod clients;

#[test]
fn the_official_python_sdk_gets_log_lines_and_resource_updates() {
    let python = match clients::ensure_venv() {
        Ok(python) => python,
        Err(reason) => return clients::unavailable(&reason),
    };
    let server = SandboxServer::with_app(60.0, |config| config, with_logs);
    let url = format!("http://{}/mcp", server.address);
    let script = clients::workspace().join("contract-tests/interop/notify_client.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .arg(&url)
        .arg(HEARTBEAT)
        .output()
        .expect("run the notify client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("NOTIFY OK "))
        .unwrap_or_else(|| panic!("a summary line: {stdout}"));
    let summary: Value = serde_json::from_str(line).expect("summary JSON");
    assert_eq!(summary["level"], json!("info"));
    assert_eq!(summary["logger"], json!("log_stream"));
    assert_eq!(summary["updated"], json!("bevy://world/summary"));
}
