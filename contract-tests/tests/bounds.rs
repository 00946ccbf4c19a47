//! The transport stays responsive: every input is bounded before work is done on it. Over real
//! HTTP on 127.0.0.1, one test per way a client used to starve or bloat the server (issue 12).

use crate::support;

use bevy_mcp_contract_tests::http;
use bevy_mcp_contract_tests::mcp::McpSession;
use hyper::StatusCode;
use serde_json::{Value, json};
use support::TestServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Reads the status line of a raw HTTP/1.1 exchange.
async fn status_line(stream: &mut tokio::net::TcpStream) -> String {
    let mut head = [0u8; 12];
    tokio::time::timeout(http::READ_LIMIT, stream.read_exact(&mut head))
        .await
        .expect("an answer in time")
        .expect("read the status line");
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_is_cut_off_with_408() {
    let server = TestServer::start_with(|config| {
        config.limits.body_read_timeout = std::time::Duration::from_millis(300);
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .expect("connect");
    // Headers announce 100 bytes; only 10 come, then nothing.
    let raw = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"";
    stream.write_all(raw.as_bytes()).await.expect("write");
    assert_eq!(status_line(&mut stream).await, "HTTP/1.1 408");
    // The server closes the connection: what is left of the body cannot be trusted.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(http::READ_LIMIT, stream.read_to_end(&mut rest)).await;
    assert!(closed.is_ok_and(|read| read.is_ok()), "the connection ends");
    // Other clients were never held up.
    let session = McpSession::start(server.address).await;
    assert_eq!(session.rpc("ping", json!({})).await["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_names_and_queries_are_refused_without_work_or_echo() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let huge = "control_entity".repeat(3 * 1024 * 1024 / 14);
    for arguments in [
        json!({"operation": "execute", "tool": "control_entity", "action": huge}),
        json!({"operation": "describe", "tool": huge}),
        json!({"operation": "search", "query": huge}),
        json!({"operation": huge}),
    ] {
        let response = session
            .start_call(json!(session.next_id()), arguments, None)
            .await;
        let body = http::body_bytes(response).await;
        assert!(
            body.len() < 4096,
            "the reply is small ({} bytes): the name is not echoed",
            body.len()
        );
        let text = String::from_utf8_lossy(&body);
        assert!(
            text.contains("ARGUMENT_TOO_LONG") || text.contains("UNKNOWN_OPERATION"),
            "{text}"
        );
        assert!(!text.contains("suggestions"), "{text}");
    }
    // A huge unknown parameter name and a huge tool name in tools/call are not echoed either.
    let unknown_param = session
        .execute("inspect", "get_entity", json!({ huge.as_str(): 1 }))
        .await;
    assert_eq!(unknown_param.error_code().as_deref(), Some("UNKNOWN_PARAM"));
    assert!(unknown_param.payload().to_string().len() < 4096);
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": huge, "arguments": {}}});
    let reply = http::body_bytes(http::send(server.address, session.request(&body)).await).await;
    assert!(reply.len() < 4096, "{} bytes", reply.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_hold_a_bounded_number_of_messages() {
    let server = TestServer::start_with(|config| config.limits.max_batch_entries = 4).await;
    let old = McpSession::start_with(server.address, "2025-03-26", &[]).await;
    let batch = |count: i64| {
        Value::Array(
            (0..count)
                .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
                .collect(),
        )
    };
    let (status, body) =
        http::status_json(http::send(server.address, old.request(&batch(4))).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.as_array().map(Vec::len), Some(4));
    let (status, body) =
        http::status_json(http::send(server.address, old.request(&batch(5))).await).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600)),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_are_bounded_in_length() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let long_id = "i".repeat(10_000);
    let body = json!({"jsonrpc": "2.0", "id": long_id, "method": "ping"});
    let response = http::send(server.address, session.request(&body)).await;
    let (status, reply) = http::status_json(response).await;
    assert_eq!(
        (status, reply["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600)),
        "{reply}"
    );
    assert_eq!(reply["id"], Value::Null, "the id is not echoed");
    // The longest allowed id still works.
    let fine = json!({"jsonrpc": "2.0", "id": "i".repeat(256), "method": "ping"});
    let (status, _) =
        http::status_json(http::send(server.address, session.request(&fine)).await).await;
    assert_eq!(status, StatusCode::OK);
    // A cancel for a long id is ignored, as any unknown id is.
    assert_eq!(session.cancel(json!(long_id)).await, StatusCode::ACCEPTED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_host_headers_are_400() {
    let server = TestServer::start().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    // Loopback first, then a foreign one: a proxy and this server could read them differently.
    for hosts in [
        ["127.0.0.1", "evil.example.com"],
        ["127.0.0.1", "127.0.0.1"],
    ] {
        let mut stream = tokio::net::TcpStream::connect(server.address)
            .await
            .expect("connect");
        let raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            hosts[0],
            hosts[1],
            body.len()
        );
        stream.write_all(raw.as_bytes()).await.expect("write");
        assert_eq!(status_line(&mut stream).await, "HTTP/1.1 400", "{hosts:?}");
    }
    assert_eq!(server.handle.session_count(), 0, "no session was started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_past_the_end_is_an_empty_page() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let page = session
        .call(json!({"operation": "describe", "tool": "inspect", "offset": u64::MAX, "limit": 50}))
        .await;
    assert!(!page.is_error(), "{:?}", page.payload());
    let payload = page.payload();
    assert_eq!(payload["actions"], json!([]));
    assert_eq!(payload["hasMore"], json!(false));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_entries_of_huge_calls_stay_small() {
    use mcp_native_transport::{AuditEntry, AuditSink};
    /// Keeps every entry the server records.
    struct Kept(parking_lot::Mutex<Vec<AuditEntry>>);
    impl AuditSink for Kept {
        fn record(&self, entry: AuditEntry) {
            self.0.lock().push(entry);
        }
    }
    let kept = std::sync::Arc::new(Kept(parking_lot::Mutex::new(Vec::new())));
    let mut config = mcp_native_transport::ServerConfig {
        identity: bevy_mcp_bridge::bevy_identity(),
        ..mcp_native_transport::ServerConfig::default()
    };
    config.port(0);
    let mut builder =
        mcp_native_transport::ServerBuilder::new(config, &bevy_mcp_generated::CATALOG);
    builder.audit_sink(kept.clone());
    let handle = builder
        .start(std::sync::Arc::new(support::TestDispatch::new()))
        .await
        .expect("server starts");
    let session = McpSession::start(handle.local_addr()).await;
    let huge = "y".repeat(1024 * 1024);
    // Calls refused for a huge value (by the schema, as a placeholder) and for a huge action
    // name: neither the replies nor the audit entries carry the megabyte.
    for (params, code) in [
        (json!({"entity": huge}), "INVALID_PARAMS"),
        (
            json!({"entity": "x".repeat(1024 * 1024)}),
            "PLACEHOLDER_VALUE",
        ),
    ] {
        let refused = session.execute("inspect", "get_entity", params).await;
        assert_eq!(refused.error_code().as_deref(), Some(code));
        let reply = refused.payload().to_string().len();
        assert!(
            reply < 4096,
            "{code}: the value is not echoed back whole: {reply} bytes"
        );
    }
    session
        .call(json!({"operation": "execute", "tool": "inspect", "action": huge}))
        .await;
    let entries = kept.0.lock().clone();
    assert_eq!(entries.len(), 3);
    for entry in entries {
        let bytes = entry.to_json().to_string().len();
        assert!(bytes < 4096, "an audit entry of {bytes} bytes");
    }
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_are_431() {
    let server = TestServer::start().await;
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .expect("connect");
    let padding = "p".repeat(20 * 1024);
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: {padding}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    stream.write_all(raw.as_bytes()).await.expect("write");
    assert_eq!(status_line(&mut stream).await, "HTTP/1.1 431");
}
