//! Soak: many sessions mixing every kind of call against the real sandbox over real HTTP (reads,
//! writes, consent, long-running calls with progress, cancellations, DELETEs mid-call, slow
//! readers, refused calls), then a check that nothing leaked: sessions, calls in flight,
//! long-running jobs, observers, entities and held assets.
//!
//! Short by default, so it runs in CI; `BRIDGE_SOAK_ROUNDS=200` makes the long form, which also
//! checks that the process's resident memory stops growing.

use std::sync::Arc;
use std::time::Duration;

use bevy_mcp_contract_tests::http::{self, SseEvent, SseReader};
use bevy_mcp_contract_tests::mcp::{CallOutcome, McpSession};
use bevy_mcp_sandbox::testing::SandboxServer;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

/// Rounds per client unless `BRIDGE_SOAK_ROUNDS` says otherwise.
const DEFAULT_ROUNDS: usize = 4;
/// Clients running at once, each with its own session.
const CLIENTS: usize = 6;
/// The kinds of round a client cycles through.
const SCENARIOS: usize = 7;
/// Rounds from which the long form checks memory.
const LONG_FORM: usize = 50;

fn rounds() -> usize {
    std::env::var("BRIDGE_SOAK_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS)
}

fn ok(outcome: &CallOutcome, what: &str) -> Value {
    assert!(!outcome.is_error(), "{what}: {:?}", outcome.payload());
    outcome.payload()
}

/// Runs a destructive action through its consent flow: refused, then sent back with the grant.
async fn with_consent(session: &McpSession, tool: &str, action: &str, params: Value) -> Value {
    let asked = session.execute(tool, action, params).await;
    assert_eq!(
        asked.error_code().as_deref(),
        Some("CONSENT_REQUIRED"),
        "{:?}",
        asked.payload()
    );
    let next_call = asked.payload()["error"]["nextCall"].clone();
    ok(&session.call(next_call).await, action)
}

/// Reads a streamed call to its end; returns how many progress messages came and the response.
async fn drain(reader: &mut SseReader) -> (usize, Option<Value>) {
    let mut progress = 0;
    let mut response = None;
    while let Some(event) = reader.next().await {
        if let SseEvent::Message(_, message) = event {
            if message.get("id").is_some() {
                response = Some(message);
            } else {
                progress += 1;
            }
        }
    }
    (progress, response)
}

async fn reads(session: &McpSession) {
    for (tool, action, params) in [
        ("inspect", "world_summary", json!({})),
        ("inspect", "list_entities", json!({"limit": 10})),
        ("inspect", "get_entity", json!({"entity": "Player"})),
        (
            "inspect",
            "find_entities",
            json!({"withComponents": ["Health"]}),
        ),
        ("inspect", "describe_type", json!({"type": "Velocity"})),
        ("system_control", "diagnostics", json!({})),
    ] {
        ok(&session.execute(tool, action, params).await, action);
    }
    let found = session
        .call(json!({"operation": "search", "query": "move an entity"}))
        .await;
    ok(&found, "search");
}

async fn writes(session: &McpSession, client: usize, round: usize) {
    let name = format!("soak-{client}-{round}");
    let spawned = ok(
        &session
            .execute(
                "control_entity",
                "spawn",
                json!({"name": name, "components": {"Transform": {"translation": [0, 0, 0], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1]}}}),
            )
            .await,
        "spawn",
    );
    let bits = spawned["entity"]["bits"].clone();
    ok(
        &session
            .execute(
                "control_entity",
                "set_transform",
                json!({"entity": bits, "mode": "translate", "translation": [0, 1, 0]}),
            )
            .await,
        "set_transform",
    );
    let copies = ok(
        &session
            .execute(
                "control_entity",
                "duplicate",
                json!({"entity": bits, "count": 2}),
            )
            .await,
        "duplicate",
    );
    let mut made = vec![bits];
    made.extend(
        copies["copies"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|copy| copy["bits"].clone()),
    );
    for entity in made {
        with_consent(
            session,
            "control_entity",
            "despawn",
            json!({"entity": entity}),
        )
        .await;
    }
}

async fn long_call_with_progress(session: &McpSession) {
    let response = session
        .start_call(
            json!(session.next_id()),
            json!({"operation": "execute", "tool": "watch", "action": "watch_entity", "params": {"entity": "Player", "frames": 10}}),
            Some(json!("soak")),
        )
        .await;
    let mut reader = SseReader::new(response);
    let (progress, response) = drain(&mut reader).await;
    assert!(progress > 0, "progress came");
    assert!(response.is_some(), "the watch answered");
}

async fn cancel_mid_call(session: &McpSession) {
    let id = session.next_id();
    let response = session
        .start_call(
            json!(id),
            json!({"operation": "execute", "tool": "watch", "action": "observe_event", "params": {"event": "Explosion", "frames": 100000}}),
            Some(json!(format!("cancel-{id}"))),
        )
        .await;
    let mut reader = SseReader::new(response);
    // One progress message: the job is running on the game thread.
    assert!(matches!(reader.next().await, Some(SseEvent::Message(..))));
    assert_eq!(session.cancel(json!(id)).await, StatusCode::ACCEPTED);
    let (_, response) = drain(&mut reader).await;
    assert!(response.is_none(), "no response after a cancel");
}

async fn delete_mid_call(address: std::net::SocketAddr) {
    let doomed = McpSession::start(address).await;
    let response = doomed
        .start_call(
            json!(1),
            json!({"operation": "execute", "tool": "watch", "action": "observe_event", "params": {"event": "Explosion", "frames": 100000}}),
            Some(json!("doomed")),
        )
        .await;
    let mut reader = SseReader::new(response);
    assert!(matches!(reader.next().await, Some(SseEvent::Message(..))));
    let deleted = http::send(address, doomed.bare(Method::DELETE)).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    let (_, response) = drain(&mut reader).await;
    assert!(
        response.is_none(),
        "a deleted session's call ends without a response"
    );
}

async fn slow_reader_and_assets(session: &McpSession) {
    let response = session
        .start_call(
            json!(session.next_id()),
            json!({"operation": "execute", "tool": "watch", "action": "watch_resource", "params": {"resource": "Score", "frames": 20}}),
            Some(json!("slow")),
        )
        .await;
    // The client reads nothing for a while; the server must not care.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut reader = SseReader::new(response);
    let (_, response) = drain(&mut reader).await;
    assert!(response.is_some());
    ok(
        &session
            .execute("manage_asset", "load", json!({"path": "hello.note"}))
            .await,
        "load",
    );
    // Holds are the bridge's, not a session's: another client may have released it already.
    let released = session
        .execute("manage_asset", "release", json!({"path": "hello.note"}))
        .await;
    assert!(
        !released.is_error() || released.error_code().as_deref() == Some("ASSET_NOT_FOUND"),
        "{:?}",
        released.payload()
    );
}

async fn refused_calls(session: &McpSession) {
    for (tool, action, params, code) in [
        (
            "manage_resource",
            "mutate",
            json!({"resource": "Time<Virtual>", "path": ".context.relative_speed", "value": -1}),
            "PROTECTED_TYPE",
        ),
        (
            "inspect",
            "get_entity",
            json!({"entity": "TBD"}),
            "PLACEHOLDER_VALUE",
        ),
        ("control_entty", "spawn", json!({}), "UNKNOWN_TOOL"),
        (
            "control_entity",
            "insert_components",
            json!({"entity": "Crate", "components": {"Velocity": {"linear": [1e39, 0, 0]}}}),
            "INVALID_VALUE",
        ),
    ] {
        let refused = session.execute(tool, action, params).await;
        assert_eq!(
            refused.error_code().as_deref(),
            Some(code),
            "{tool}.{action}"
        );
    }
}

async fn client(address: std::net::SocketAddr, client: usize, rounds: usize) {
    let session = McpSession::start(address).await;
    for round in 0..rounds {
        match (client + round) % SCENARIOS {
            0 => reads(&session).await,
            1 => writes(&session, client, round).await,
            2 => long_call_with_progress(&session).await,
            3 => cancel_mid_call(&session).await,
            4 => delete_mid_call(address).await,
            5 => slow_reader_and_assets(&session).await,
            _ => refused_calls(&session).await,
        }
    }
    let deleted = http::send(address, session.bare(Method::DELETE)).await;
    assert_eq!(deleted.status(), StatusCode::OK);
}

/// The bridge's own counts, from `system_control.diagnostics` and `inspect.world_summary`.
async fn counts(session: &McpSession) -> (Value, Value) {
    let diagnostics = ok(
        &session
            .execute("system_control", "diagnostics", json!({}))
            .await,
        "diagnostics",
    );
    let summary = ok(
        &session.execute("inspect", "world_summary", json!({})).await,
        "world_summary",
    );
    (diagnostics, summary)
}

/// Resident memory of this process (the sandbox runs in it), in KiB.
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_mixing_every_kind_of_call_leave_nothing_behind() {
    let rounds = rounds();
    let server = SandboxServer::start(60.0, |config| config);
    let address = server.address;
    let checker = McpSession::start(address).await;
    let (_, before) = counts(&checker).await;
    // A first pass warms every path up, so memory is compared from a settled start.
    let warm_up: Vec<_> = (0..CLIENTS)
        .map(|index| tokio::spawn(client(address, index, SCENARIOS.min(rounds))))
        .collect();
    for task in warm_up {
        task.await.expect("a warm-up client");
    }
    let settled_memory = resident_kib();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|index| tokio::spawn(client(address, index, rounds)))
        .collect();
    for task in tasks {
        task.await.expect("a client");
    }
    // Calls of deleted sessions wind down at their next frame: wait, boundedly, for that.
    let quiet = Arc::new(parking_lot::Mutex::new(Value::Null));
    let mut settled = false;
    for _ in 0..200 {
        let (diagnostics, _) = counts(&checker).await;
        *quiet.lock() = diagnostics.clone();
        let bridge = &diagnostics["bridge"];
        if bridge["callsInFlight"] == json!(1) && bridge["activeJobs"] == json!(0) {
            settled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(settled, "calls still running: {}", quiet.lock());
    let (diagnostics, after) = counts(&checker).await;
    let bridge = &diagnostics["bridge"];
    assert_eq!(
        bridge["sessions"],
        json!(1),
        "only the checker's session is left: {bridge}"
    );
    assert_eq!(bridge["heldAssets"], json!(0), "{bridge}");
    for key in ["entityCount", "observerCount"] {
        assert_eq!(after[key], before[key], "{key}: {before} -> {after}");
    }
    let memory = resident_kib().zip(settled_memory);
    eprintln!(
        "soak: {CLIENTS} clients x {rounds} rounds; resident memory after warm-up and after: {memory:?} KiB"
    );
    if rounds >= LONG_FORM
        && let Some((end, start)) = memory
    {
        assert!(
            end.saturating_sub(start) < 64 * 1024,
            "resident memory grew by {} KiB",
            end.saturating_sub(start)
        );
    }
}
