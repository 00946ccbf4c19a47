//! The everyday loop at the transport, over real HTTP on 127.0.0.1: sessions that survive a
//! restart of the app, clients that connect together at the session cap, and stalled
//! connections at the connection cap. (Its own test binary: the stalled-connection test holds
//! some 600 sockets.)

mod support;

use std::path::Path;

use bevy_mcp_contract_tests::http::{self, RawRequest};
use bevy_mcp_contract_tests::mcp::McpSession;
use hyper::StatusCode;
use serde_json::{Value, json};
use support::{TestServer, eventually};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

async fn status_of(session: &McpSession, id: i64) -> StatusCode {
    http::send(session.address, session.request(&ping(id)))
        .await
        .status()
}

fn kept_ids(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let file: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    file["sessions"]
        .as_array()
        .map(|sessions| {
            sessions
                .iter()
                .filter_map(|session| session["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_survive_a_restart_of_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("sessions.json");
    let first = TestServer::start_with(|config| config.session_file = Some(file.clone())).await;
    let port = first.address.port();
    let session = McpSession::start(first.address).await;
    let disabled = session
        .call(json!({"operation": "configure", "action": "disable_tools", "params": {"tools": ["control_app"]}}))
        .await;
    assert_eq!(disabled.payload()["disabled"], json!(["control_app"]));
    let deleted = McpSession::start(first.address).await;
    let delete = deleted.bare(hyper::Method::DELETE);
    assert_eq!(
        http::send(first.address, delete).await.status(),
        StatusCode::OK
    );
    let written = eventually(250, || kept_ids(&file) == vec![session.id.clone()]).await;
    assert!(
        written,
        "the file holds the live session and not the deleted one"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).map(|meta| meta.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
    }
    first.handle.shutdown().await;

    let second = TestServer::start_with(|config| {
        config.port(port);
        config.session_file = Some(file.clone());
    })
    .await;
    assert_eq!(second.address, session.address);
    assert_eq!(
        status_of(&session, 10).await,
        StatusCode::OK,
        "the old session id works after the restart"
    );
    let refused = session.execute("control_app", "get_state", json!({})).await;
    assert_eq!(
        refused.error_code().as_deref(),
        Some("TOOL_DISABLED"),
        "its visibility came back with it"
    );
    assert_eq!(
        status_of(&deleted, 11).await,
        StatusCode::NOT_FOUND,
        "a deleted session stays deleted"
    );
    second.handle.shutdown().await;

    // Without the file (the default) a restart ends every session.
    let third = TestServer::start_with(|config| {
        config.port(port);
    })
    .await;
    assert_eq!(status_of(&session, 12).await, StatusCode::NOT_FOUND);
    third.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_session_needs_its_token_still_configured() {
    const OLD: &str = "old-token-0123456789abcdef";
    const NEW: &str = "new-token-0123456789abcdef";
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("sessions.json");
    let first = TestServer::start_with(|config| {
        config.session_file = Some(file.clone());
        config.token(mcp_native_transport::Token::new(OLD).expect("token"));
    })
    .await;
    let port = first.address.port();
    let session = McpSession::start_with(
        first.address,
        "2025-11-25",
        &[("x-mcp-capability-token", OLD)],
    )
    .await;
    first.handle.shutdown().await;
    assert_eq!(kept_ids(&file), vec![session.id.clone()]);
    let second = TestServer::start_with(|config| {
        config.port(port);
        config.session_file = Some(file.clone());
        config.token(mcp_native_transport::Token::new(NEW).expect("token"));
    })
    .await;
    let with_new = session
        .request(&ping(2))
        .header("x-mcp-capability-token", NEW);
    assert_eq!(
        http::send(second.address, with_new).await.status(),
        StatusCode::NOT_FOUND,
        "the session of a token no longer configured is not taken back"
    );
    second.handle.shutdown().await;
}

/// Eight clients connect at once at the cap, which is full of sessions of an earlier run: every
/// one gets in and keeps its session (none pushes another out), and while all eight are within
/// their grace a ninth is refused rather than evicting one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_connecting_together_at_the_cap_all_get_in() {
    const CAP: usize = 8;
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("sessions.json");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or(0);
    let old: Vec<Value> = (0..CAP)
        .map(|_| {
            json!({"id": uuid::Uuid::new_v4().to_string(), "protocolVersion": "2025-11-25",
                   "used": true, "lastActiveUnix": now})
        })
        .collect();
    std::fs::write(
        &file,
        serde_json::to_vec(&json!({"format": 1, "sessions": old})).expect("json"),
    )
    .expect("write");
    let server = TestServer::start_with(|config| {
        config.limits.max_sessions = CAP;
        config.session_file = Some(file.clone());
    })
    .await;
    assert_eq!(
        server.handle.session_count(),
        CAP,
        "the earlier run's sessions are back"
    );

    let connects = (0..CAP).map(|_| McpSession::start(server.address));
    let clients = join_all(connects).await;
    for (index, client) in clients.iter().enumerate() {
        assert_eq!(
            status_of(client, index as i64).await,
            StatusCode::OK,
            "client {index} kept its session"
        );
    }
    assert_eq!(server.handle.session_count(), CAP);
    let ninth = http::send(
        server.address,
        RawRequest::post(&bevy_mcp_contract_tests::mcp::initialize_body(
            1,
            "2025-11-25",
        )),
    )
    .await;
    assert_eq!(ninth.status(), StatusCode::SERVICE_UNAVAILABLE);
}

/// Runs the futures as tasks at once and collects their outputs in order.
async fn join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut outputs = Vec::with_capacity(handles.len());
    for handle in handles {
        outputs.push(handle.await.expect("task"));
    }
    outputs
}

/// 300 connections send their headers and never their body (the connection cap is 256): a new
/// client is still served, because connections without a whole request give way first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_connections_give_way_to_a_new_client() {
    let server = TestServer::start().await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n",
        server.address
    );
    let mut stalled = Vec::with_capacity(300);
    for _ in 0..300 {
        let mut stream = TcpStream::connect(server.address).await.expect("connect");
        stream.write_all(head.as_bytes()).await.expect("write head");
        stalled.push(stream);
    }
    let client = McpSession::start(server.address).await;
    assert_eq!(status_of(&client, 1).await, StatusCode::OK);
    drop(stalled);
}
