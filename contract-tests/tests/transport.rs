//! The transport contract (DESIGN section 2), row by row, over real HTTP on 127.0.0.1.
//! The crate docs of `mcp_native_transport` map each rule to its test here.

use crate::support;

use std::sync::atomic::Ordering;

use bevy_mcp_contract_tests::http::{self, RawRequest, SseEvent, SseReader, VERSIONS};
use bevy_mcp_contract_tests::mcp::{McpSession, initialize_body, read_outcome};
use bevy_mcp_generated::CATALOG;
use hyper::{Method, StatusCode};
use mcp_native_transport::{ServerBuilder, ServerConfig, Token, TransportError};
use serde_json::{Value, json};
use support::{TestDispatch, TestServer, eventually};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-0123456789abcdef-longer";

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

async fn token_server() -> TestServer {
    TestServer::start_with(|config| {
        config.token(Token::new(TOKEN_A).expect("token"));
        config.token(Token::new(TOKEN_B).expect("token"));
        config.allow_origin("https://tools.example.com");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_path_is_404_and_wrong_method_405() {
    let server = TestServer::start().await;
    let (status, body) = http::status_json(
        http::send(server.address, RawRequest::post(&ping(1)).path("/other")).await,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], json!(-32000));
    let response = http::send(server.address, RawRequest::new(Method::PUT)).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(http::header(&response, "allow").is_some_and(|allow| allow.contains("POST")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_must_be_loopback() {
    let server = TestServer::start().await;
    for bad in [
        "evil.example.com",
        "evil.example.com:15720",
        "127.0.0.1.nip.io",
    ] {
        let request = RawRequest::post(&initialize_body(1, VERSIONS[0])).header("host", bad);
        let (status, body) = http::status_json(http::send(server.address, request).await).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{bad}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("Host"))
        );
    }
    let missing = RawRequest::post(&initialize_body(1, VERSIONS[0])).without("host");
    assert_eq!(
        http::send(server.address, missing).await.status(),
        StatusCode::FORBIDDEN
    );
    for good in [
        format!("localhost:{}", server.address.port()),
        "127.0.0.1".to_owned(),
        "[::1]:80".to_owned(),
    ] {
        let request = RawRequest::post(&initialize_body(1, VERSIONS[0])).header("host", &good);
        assert_eq!(
            http::send(server.address, request).await.status(),
            StatusCode::OK,
            "{good}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_rules() {
    let server = TestServer::start().await;
    for bad in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.com",
        "http://localhost:1/path",
    ] {
        let request = RawRequest::post(&initialize_body(1, VERSIONS[0])).header("origin", bad);
        assert_eq!(
            http::send(server.address, request).await.status(),
            StatusCode::FORBIDDEN,
            "{bad}"
        );
    }
    let port = server.address.port();
    for good in [
        format!("http://localhost:{port}"),
        "http://127.0.0.1".to_owned(),
        "https://[::1]:9".to_owned(),
    ] {
        let request = RawRequest::post(&initialize_body(1, VERSIONS[0])).header("origin", &good);
        let response = http::send(server.address, request).await;
        assert_eq!(response.status(), StatusCode::OK, "{good}");
        assert!(
            http::header(&response, "access-control-allow-origin").is_none(),
            "no CORS headers without a token"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_preflight_rules() {
    let open = TestServer::start().await;
    let preflight = RawRequest::new(Method::OPTIONS).header("origin", "http://localhost:3000");
    assert_eq!(
        http::send(open.address, preflight).await.status(),
        StatusCode::FORBIDDEN,
        "no CORS without a token"
    );

    let protected = token_server().await;
    for allowed in ["http://localhost:3000", "https://tools.example.com"] {
        let preflight = RawRequest::new(Method::OPTIONS)
            .header("origin", allowed)
            .header("access-control-request-method", "POST");
        let response = http::send(protected.address, preflight).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{allowed}");
        assert_eq!(
            http::header(&response, "access-control-allow-origin"),
            Some(allowed)
        );
        assert!(
            http::header(&response, "access-control-allow-headers")
                .is_some_and(|value| value.contains("x-mcp-capability-token"))
        );
    }
    let evil = RawRequest::new(Method::OPTIONS).header("origin", "http://evil.example.com");
    assert_eq!(
        http::send(protected.address, evil).await.status(),
        StatusCode::FORBIDDEN
    );
    let no_origin = RawRequest::new(Method::OPTIONS);
    assert_eq!(
        http::send(protected.address, no_origin).await.status(),
        StatusCode::FORBIDDEN
    );
    // An allowed origin on a token server gets CORS headers on the real request too.
    let request = RawRequest::post(&initialize_body(1, VERSIONS[0]))
        .header("origin", "http://localhost:3000")
        .header("x-mcp-capability-token", TOKEN_A);
    let response = http::send(protected.address, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        http::header(&response, "access-control-allow-origin"),
        Some("http://localhost:3000")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_rules() {
    let server = token_server().await;
    let init = || RawRequest::post(&initialize_body(1, VERSIONS[0]));
    for request in [
        init(),
        init().header("x-mcp-capability-token", ""),
        init().header("x-mcp-capability-token", "token-a-0123456789abcdeX"),
        init().header("x-mcp-capability-token", "short"),
        init().header("x-mcp-capability-token", &format!("{TOKEN_A}-and-more")),
        init().header("authorization", &format!("Basic {TOKEN_A}")),
    ] {
        let response = http::send(server.address, request).await;
        assert!(
            http::header(&response, "www-authenticate").is_none(),
            "no challenge that would start an OAuth sign-in"
        );
        let (status, body) = http::status_json(response).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(body["jsonrpc"], json!("2.0"));
        assert_eq!(body["error"]["code"], json!(-32001));
        assert_eq!(body["id"], json!(1), "the request's id is answered");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains(TOKEN_A), "never echo a secret");
        assert!(
            message.contains("X-MCP-Capability-Token: <token>"),
            "{message}"
        );
    }
    let header = init().header("x-mcp-capability-token", TOKEN_A);
    assert_eq!(
        http::send(server.address, header).await.status(),
        StatusCode::OK
    );
    let bearer = init().header("authorization", &format!("Bearer {TOKEN_A}"));
    assert_eq!(
        http::send(server.address, bearer).await.status(),
        StatusCode::OK
    );
    // The token check comes before the session check: no session id leaks to a caller without it.
    let no_token = RawRequest::post(&ping(2)).header("mcp-session-id", "whatever");
    assert_eq!(
        http::send(server.address, no_token).await.status(),
        StatusCode::FORBIDDEN
    );
}

/// OAuth clients (Claude Code, `mcp-remote`) probe discovery and registration paths; the answer
/// is an OAuth error they can show, naming the capability token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_probes_are_told_the_server_needs_its_token() {
    let server = token_server().await;
    for (method, path) in [
        (Method::GET, "/.well-known/oauth-protected-resource/mcp"),
        (Method::GET, "/.well-known/oauth-authorization-server"),
        (Method::GET, "/.well-known/openid-configuration"),
        (Method::POST, "/register"),
    ] {
        let request = RawRequest::new(method).path(path);
        let (status, body) = http::status_json(http::send(server.address, request).await).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(body["error"], json!("invalid_request"), "{path}");
        let description = body["error_description"].as_str().unwrap_or_default();
        assert!(
            description.contains("does not use OAuth")
                && description.contains("X-MCP-Capability-Token: <token>"),
            "{path}: {description}"
        );
    }
    let open = TestServer::start().await;
    let request = RawRequest::new(Method::GET).path("/.well-known/oauth-authorization-server");
    let (_, body) = http::status_json(http::send(open.address, request).await).await;
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|text| text.contains("needs no sign-in")),
        "{body}"
    );
}

/// Errors of the HTTP layer answer the request's id whenever the body could be read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_answer_the_request_id() {
    let server = TestServer::start().await;
    let unknown = RawRequest::post(&ping(41)).header("mcp-session-id", "no-such-session");
    let (status, body) = http::status_json(http::send(server.address, unknown).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["id"], json!(41));
    let missing = RawRequest::post(&json!({"jsonrpc": "2.0", "id": "text-id", "method": "ping"}));
    let (status, body) = http::status_json(http::send(server.address, missing).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["id"], json!("text-id"));
    let session = McpSession::start(server.address).await;
    let bad_version = session
        .request(&ping(42))
        .header("mcp-protocol-version", "1999-01-01");
    let (_, body) = http::status_json(http::send(server.address, bad_version).await).await;
    assert_eq!(body["id"], json!(42));
    let not_acceptable = session.request(&ping(43)).header("accept", "text/html");
    let (status, body) = http::status_json(http::send(server.address, not_acceptable).await).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(body["id"], json!(43));
    let wrong_media = session
        .request(&ping(44))
        .header("content-type", "application/x-www-form-urlencoded");
    let (status, body) = http::status_json(http::send(server.address, wrong_media).await).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(body["id"], json!(44));
    let foreign_host = session
        .request(&ping(45))
        .header("host", "evil.example.com");
    let (status, body) = http::status_json(http::send(server.address, foreign_host).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["id"], json!(45));
    // What cannot be read stays null: a body that is not JSON.
    let garbage = session.request(&ping(46)).body("{not json");
    let (status, body) = http::status_json(http::send(server.address, garbage).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["id"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_swap_on_a_live_session_is_401() {
    let server = token_server().await;
    let session = McpSession::start_with(
        server.address,
        VERSIONS[0],
        &[("x-mcp-capability-token", TOKEN_A)],
    )
    .await;
    let swapped = session
        .request(&ping(5))
        .header("x-mcp-capability-token", TOKEN_B);
    assert_eq!(
        http::send(server.address, swapped).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let same = session.request(&ping(6));
    assert_eq!(
        http::send(server.address, same).await.status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_loopback_bind_without_token_is_refused() {
    let mut config = ServerConfig::default();
    config.host("0.0.0.0").port(0);
    // The product says how its operators give a token (the bevy-mcp binary names its flags).
    config.identity.token_help = "Set BEVY_MCP_TOKEN or pass --token-file PATH".to_owned();
    let refused = ServerBuilder::new(config, &CATALOG)
        .start(std::sync::Arc::new(TestDispatch::new()))
        .await;
    let error = refused.expect_err("refused");
    assert!(matches!(error, TransportError::TokenRequired { .. }));
    assert!(
        error
            .to_string()
            .contains("Set BEVY_MCP_TOKEN or pass --token-file PATH"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_are_413() {
    let server = TestServer::start_with(|config| config.limits.max_body_bytes = 1024).await;
    let padding = "x".repeat(2000);
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": padding}});
    let (status, body) =
        http::status_json(http::send(server.address, RawRequest::post(&big)).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("1024"))
    );

    // A chunked body has no Content-Length: the limit applies while reading.
    let mut stream = tokio::net::TcpStream::connect(server.address)
        .await
        .expect("connect");
    let chunk = "y".repeat(1500);
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        chunk.len()
    );
    stream.write_all(raw.as_bytes()).await.expect("write");
    let mut head = [0u8; 12];
    tokio::time::timeout(http::READ_LIMIT, stream.read_exact(&mut head))
        .await
        .expect("answer in time")
        .expect("read");
    assert_eq!(&head, b"HTTP/1.1 413");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_type_rules() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let wrong_type = session
        .request(&ping(1))
        .header("content-type", "text/plain");
    assert_eq!(
        http::send(server.address, wrong_type).await.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    for accept in ["application/json", "text/event-stream", "text/html"] {
        let request = session.request(&ping(2)).header("accept", accept);
        assert_eq!(
            http::send(server.address, request).await.status(),
            StatusCode::NOT_ACCEPTABLE,
            "{accept}"
        );
    }
    let get = session
        .bare(Method::GET)
        .header("accept", "application/json");
    assert_eq!(
        http::send(server.address, get).await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_jsonrpc_validity() {
    let server = TestServer::start().await;
    let (status, body) = http::status_json(
        http::send(
            server.address,
            RawRequest::new(Method::POST).body("{not json"),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].clone(), body["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32700), Value::Null)
    );
    for invalid in [
        json!({"jsonrpc": "1.0", "id": 1, "method": "initialize"}),
        json!({"jsonrpc": "2.0", "id": null, "method": "initialize"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!("ping"),
    ] {
        let (status, body) =
            http::status_json(http::send(server.address, RawRequest::post(&invalid)).await).await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(-32600)),
            "{invalid}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_only_on_2025_03_26() {
    let server = TestServer::start().await;
    let old = McpSession::start_with(server.address, "2025-03-26", &[]).await;
    let batch = json!([ping(1), {"jsonrpc": "2.0", "id": "two", "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let (status, body) =
        http::status_json(http::send(server.address, old.request(&batch)).await).await;
    assert_eq!(status, StatusCode::OK);
    let responses = body.as_array().cloned().unwrap_or_default();
    assert_eq!(responses.len(), 2, "{body}");
    assert_eq!(responses[1]["id"], json!("two"));
    let with_init = json!([initialize_body(3, "2025-03-26")]);
    assert_eq!(
        http::send(server.address, old.request(&with_init))
            .await
            .status(),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        http::send(server.address, old.request(&json!([])))
            .await
            .status(),
        StatusCode::BAD_REQUEST
    );
    let only_notifications = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    assert_eq!(
        http::send(server.address, old.request(&only_notifications))
            .await
            .status(),
        StatusCode::ACCEPTED
    );

    for version in ["2025-06-18", "2025-11-25"] {
        let newer = McpSession::start_with(server.address, version, &[]).await;
        let (status, body) =
            http::status_json(http::send(server.address, newer.request(&json!([ping(1)]))).await)
                .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (StatusCode::BAD_REQUEST, json!(-32600)),
            "{version}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_lifecycle() {
    let server = TestServer::start().await;
    let (status, body) =
        http::status_json(http::send(server.address, RawRequest::post(&ping(1))).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("Mcp-Session-Id"))
    );
    let unknown =
        RawRequest::post(&ping(1)).header("mcp-session-id", "00000000-0000-4000-8000-000000000000");
    assert_eq!(
        http::send(server.address, unknown).await.status(),
        StatusCode::NOT_FOUND
    );

    let session = McpSession::start(server.address).await;
    assert_eq!(
        http::send(server.address, session.request(&ping(1)))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        http::send(server.address, session.bare(Method::DELETE))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        http::send(server.address, session.request(&ping(2)))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        http::send(server.address, session.bare(Method::DELETE))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    let get = session
        .bare(Method::GET)
        .header("accept", "text/event-stream");
    assert_eq!(
        http::send(server.address, get).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_initialize_is_refused() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let again = session.request(&initialize_body(9, VERSIONS[0]));
    let (status, body) = http::status_json(http::send(server.address, again).await).await;
    assert_eq!(
        (status, body["error"]["code"].clone(), body["id"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600), json!(9))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_header_rules() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    assert_eq!(
        http::send(server.address, session.request(&ping(1)))
            .await
            .status(),
        StatusCode::OK,
        "absent"
    );
    for supported in VERSIONS {
        let request = session
            .request(&ping(2))
            .header("mcp-protocol-version", supported);
        assert_eq!(
            http::send(server.address, request).await.status(),
            StatusCode::OK,
            "{supported}"
        );
    }
    for unsupported in ["2024-11-05", "2026-07-28", "latest", ""] {
        let request = session
            .request(&ping(3))
            .header("mcp-protocol-version", unsupported);
        assert_eq!(
            http::send(server.address, request).await.status(),
            StatusCode::BAD_REQUEST,
            "{unsupported:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_negotiation() {
    let server = TestServer::start().await;
    for (requested, expected) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let response = http::send(
            server.address,
            RawRequest::post(&initialize_body(0, requested)),
        )
        .await;
        assert!(http::header(&response, "mcp-session-id").is_some());
        let body = http::body_json(response).await;
        assert_eq!(body["id"], json!(0), "id 0 is a valid id");
        assert_eq!(
            body["result"]["protocolVersion"],
            json!(expected),
            "{requested}"
        );
        // Prompts, resources, completions and logging add their flags, nothing else.
        assert_eq!(
            body["result"]["capabilities"],
            json!({"tools": {}, "prompts": {}, "resources": {"subscribe": true}, "completions": {}, "logging": {}})
        );
        assert!(body["result"]["serverInfo"]["name"].is_string());
        assert!(
            body["result"]["instructions"]
                .as_str()
                .is_some_and(|text| text.len() <= 512)
        );
    }
    for bad in [json!({}), json!({"protocolVersion": 20250618})] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": bad});
        let response = http::send(server.address, RawRequest::post(&body)).await;
        assert!(
            http::header(&response, "mcp-session-id").is_none(),
            "no session on failure"
        );
        let body = http::body_json(response).await;
        assert_eq!(body["error"]["code"], json!(-32602));
        assert_eq!(body["error"]["data"]["supported"], json!(VERSIONS));
        assert_eq!(
            body["error"]["data"]["requested"],
            bad.get("protocolVersion").cloned().unwrap_or(Value::Null)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn methods() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/whatever"});
    let response = http::send(server.address, session.request(&notification)).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(http::body_bytes(response).await.is_empty());
    let client_response = json!({"jsonrpc": "2.0", "id": 77, "result": {}});
    assert_eq!(
        http::send(server.address, session.request(&client_response))
            .await
            .status(),
        StatusCode::ACCEPTED
    );
    assert_eq!(session.rpc("ping", json!({})).await["result"], json!({}));
    let tools = session.rpc("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(1));
    assert_eq!(tools["result"]["tools"][0]["name"], json!("bevy"));
    let unknown = session.rpc("sampling/createMessage", json!({})).await;
    assert_eq!(unknown["error"]["code"], json!(-32601));
    let wrong_tool = session
        .rpc("tools/call", json!({"name": "inspect", "arguments": {}}))
        .await;
    assert_eq!(wrong_tool["error"]["code"], json!(-32602));
    assert_eq!(
        wrong_tool["error"]["data"]["nextCall"],
        json!({"operation": "describe", "tool": "inspect"})
    );
    let action_as_tool = session
        .rpc("tools/call", json!({"name": "get_entity"}))
        .await;
    assert_eq!(
        action_as_tool["error"]["data"]["nextCall"],
        json!({"operation": "describe", "tool": "inspect", "action": "get_entity"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_get_stream_per_session() {
    let server = TestServer::start_with(|config| {
        config.limits.keep_alive_interval = std::time::Duration::from_millis(50)
    })
    .await;
    let session = McpSession::start(server.address).await;
    let get = || {
        session
            .bare(Method::GET)
            .header("accept", "text/event-stream")
    };
    let first = http::send(server.address, get()).await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(
        http::header(&first, "content-type"),
        Some("text/event-stream")
    );
    assert_eq!(
        http::send(server.address, get()).await.status(),
        StatusCode::CONFLICT
    );
    let mut reader = SseReader::new(first);
    assert_eq!(
        reader.next().await,
        Some(SseEvent::Comment("keep-alive".to_owned()))
    );
    drop(reader);
    let mut reopened = false;
    for _ in 0..250 {
        let response = http::send(server.address, get()).await;
        if response.status() == StatusCode::OK {
            reopened = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(reopened, "a closed stream frees the slot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_get_stream() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let stream = http::send(
        server.address,
        session
            .bare(Method::GET)
            .header("accept", "text/event-stream"),
    )
    .await;
    assert_eq!(stream.status(), StatusCode::OK);
    let mut reader = SseReader::new(stream);
    assert_eq!(
        http::send(server.address, session.bare(Method::DELETE))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        reader.next().await,
        None,
        "the stream ends with the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cap_evicts() {
    // No grace here, to see the eviction order (`restarts_and_crowds.rs` tests the grace).
    let server = TestServer::start_with(|config| {
        config.limits.max_sessions = 2;
        config.limits.session_eviction_grace = std::time::Duration::ZERO;
    })
    .await;
    let used = McpSession::start(server.address).await;
    assert_eq!(
        http::send(server.address, used.request(&ping(1)))
            .await
            .status(),
        StatusCode::OK
    );
    let never_used_id = {
        let response = http::send(
            server.address,
            RawRequest::post(&initialize_body(1, VERSIONS[0])),
        )
        .await;
        http::header(&response, "mcp-session-id")
            .map(str::to_owned)
            .expect("id")
    };
    let third = McpSession::start(server.address).await;
    let probe = RawRequest::post(&ping(2)).header("mcp-session-id", &never_used_id);
    assert_eq!(
        http::send(server.address, probe).await.status(),
        StatusCode::NOT_FOUND,
        "the never-used session was evicted"
    );
    assert_eq!(
        http::send(server.address, used.request(&ping(3)))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        http::send(server.address, third.request(&ping(4)))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(server.handle.session_count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire() {
    let server = TestServer::start_with(|config| {
        config.limits.session_idle_timeout = std::time::Duration::from_millis(100)
    })
    .await;
    let session = McpSession::start(server.address).await;
    let expired = eventually(250, || server.handle.session_count() == 0).await;
    assert!(expired, "the sweeper removes idle sessions");
    assert_eq!(
        http::send(server.address, session.request(&ping(1)))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_cap() {
    let server = TestServer::start_with(|config| config.limits.max_in_flight_per_session = 1).await;
    let session = McpSession::start(server.address).await;
    let slow = session
        .start_call(json!(100), json!({"operation": "execute", "tool": "control_app", "action": "wait_until", "params": {"entity": "Player", "component": "Transform", "path": ".translation.x", "op": "changed"}}), None)
        .await;
    let second = session.execute("control_app", "get_state", json!({})).await;
    assert_eq!(second.error_code().as_deref(), Some("TOO_MANY_IN_FLIGHT"));
    assert_eq!(session.cancel(json!(100)).await, StatusCode::ACCEPTED);
    assert!(read_outcome(slow).await.response.is_none());
    assert!(
        eventually(250, || server.dispatch.0.cancelled.load(Ordering::SeqCst)
            == 1)
        .await
    );
    let third = session.execute("control_app", "get_state", json!({})).await;
    assert!(
        !third.is_error(),
        "the slot is free again: {:?}",
        third.response
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_queued_call_drops_it() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let queued = session
        .start_call(
            json!("q1"),
            json!({"operation": "execute", "tool": "control_app", "action": "resume"}),
            None,
        )
        .await;
    assert_eq!(session.cancel(json!("q1")).await, StatusCode::ACCEPTED);
    let outcome = read_outcome(queued).await;
    assert!(
        outcome.response.is_none(),
        "no response for a cancelled call"
    );
    server.dispatch.0.gate.add_permits(1);
    assert!(
        eventually(250, || server.dispatch.0.cancelled.load(Ordering::SeqCst)
            == 1)
        .await
    );
    assert_eq!(
        server.dispatch.0.started.load(Ordering::SeqCst),
        0,
        "the queued job never ran"
    );
    assert_eq!(session.rpc("ping", json!({})).await["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_running_call_sends_nothing_more() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let running = session
        .start_call(
            json!(7),
            json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 100000}}),
            Some(json!("p7")),
        )
        .await;
    let mut reader = SseReader::new(running);
    let first = reader.next().await;
    assert!(
        matches!(&first, Some(SseEvent::Message(_, message)) if message["method"] == json!("notifications/progress"))
    );
    assert_eq!(session.cancel(json!(7)).await, StatusCode::ACCEPTED);
    let rest = reader.rest().await;
    let after_cancel_responses = rest
        .iter()
        .filter(
            |event| matches!(event, SseEvent::Message(_, message) if message.get("id").is_some()),
        )
        .count();
    assert_eq!(after_cancel_responses, 0, "no response after a cancel");
    assert!(
        eventually(250, || server.dispatch.0.cancelled.load(Ordering::SeqCst)
            == 1)
        .await,
        "the job saw the cancel"
    );
    // The session stays fully usable.
    let next = session
        .execute("control_app", "step_frames", json!({"frames": 2}))
        .await;
    assert_eq!(next.payload()["stepped"], json!(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_from_another_session_changes_nothing() {
    let server = TestServer::start().await;
    let owner = McpSession::start(server.address).await;
    let other = McpSession::start(server.address).await;
    let call = owner
        .start_call(json!(1), json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 20}}), None)
        .await;
    assert_eq!(other.cancel(json!(1)).await, StatusCode::ACCEPTED);
    let outcome = read_outcome(call).await;
    assert_eq!(outcome.payload()["stepped"], json!(20));
    assert_eq!(server.dispatch.0.cancelled.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_and_number_ids_are_different_requests() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    // Long enough that both are still running when the cancel comes.
    let arguments = json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 400}});
    let call = |id: Value| {
        let arguments = arguments.clone();
        let session = &session;
        async move { read_outcome(session.start_call(id, arguments, None).await).await }
    };
    // A quick answer comes as one JSON body, so the response headers do not say a call started;
    // the dispatcher does.
    let cancel = async {
        let both_running = eventually(250, || server.dispatch.0.calls.lock().len() == 2).await;
        assert!(both_running, "both calls reached the dispatcher");
        session.cancel(json!(1)).await
    };
    let (text, number, cancelled) = tokio::join!(call(json!("1")), call(json!(1)), cancel);
    assert_eq!(cancelled, StatusCode::ACCEPTED);
    assert!(number.response.is_none(), "number 1 was cancelled");
    let text = text.response.expect("string \"1\" completes");
    assert_eq!(text["id"], json!("1"));
    // A malformed cancel is ignored (still 202).
    let malformed = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"x": 1}}});
    assert_eq!(
        http::send(server.address, session.request(&malformed))
            .await
            .status(),
        StatusCode::ACCEPTED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_increasing_and_stops_at_completion() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    for token in [json!("tok"), json!(42)] {
        let id = json!(session.next_id());
        let outcome = session
            .call_with_id(
                id,
                json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 10}}),
                Some(token.clone()),
            )
            .await;
        assert_eq!(outcome.payload()["stepped"], json!(10));
        assert!(!outcome.progress.is_empty());
        let mut last = 0.0;
        for notification in &outcome.progress {
            assert_eq!(notification["method"], json!("notifications/progress"));
            assert_eq!(
                notification["params"]["progressToken"], token,
                "type preserved"
            );
            let progress = notification["params"]["progress"]
                .as_f64()
                .expect("progress");
            assert!(progress > last, "strictly increasing");
            last = progress;
            assert_eq!(notification["params"]["total"], json!(10.0));
        }
    }
    // Without a token, no progress at all.
    let quiet = session
        .execute("control_app", "step_frames", json!({"frames": 5}))
        .await;
    assert!(quiet.progress.is_empty());
}

/// The framing of a call's reply: an answer within `json_reply_window` (and before any progress)
/// is one `application/json` body; progress first, or a slower answer, opens an SSE stream; a
/// call cancelled before it answered gets a stream that ends without a response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_answers_are_json_and_the_rest_stream() {
    let server = TestServer::start_with(|config| {
        config.limits.json_reply_window = std::time::Duration::from_millis(200);
    })
    .await;
    let session = McpSession::start(server.address).await;
    let content_type = |response: &hyper::Response<hyper::body::Incoming>| {
        http::header(response, "content-type").map(str::to_owned)
    };
    let execute = |action: &str, params: Value| json!({"operation": "execute", "tool": if action == "get_entity" { "inspect" } else { "control_app" }, "action": action, "params": params});

    let quick = session
        .start_call(
            json!(1),
            execute("get_entity", json!({"entity": "Player"})),
            None,
        )
        .await;
    assert_eq!(content_type(&quick).as_deref(), Some("application/json"));
    let quick = read_outcome(quick).await;
    assert_eq!(quick.payload()["echo"]["entity"], json!("Player"));

    // 100 frames of at least 5 ms: the 200 ms window passes first.
    let slow = session
        .start_call(
            json!(2),
            execute("step_frames", json!({"frames": 100})),
            None,
        )
        .await;
    assert_eq!(content_type(&slow).as_deref(), Some("text/event-stream"));
    assert_eq!(read_outcome(slow).await.payload()["stepped"], json!(100));

    let reporting = session
        .start_call(
            json!(3),
            execute("step_frames", json!({"frames": 3})),
            Some(json!("p")),
        )
        .await;
    assert_eq!(
        content_type(&reporting).as_deref(),
        Some("text/event-stream")
    );
    let reporting = read_outcome(reporting).await;
    assert_eq!(reporting.progress.len(), 3, "progress, then the answer");
    assert_eq!(reporting.payload()["stepped"], json!(3));

    // A gated call never starts; cancelled, it ends without a response, however it was framed.
    let (gated, cancelled) = tokio::join!(
        async {
            read_outcome(
                session
                    .start_call(json!(4), execute("resume", json!({})), None)
                    .await,
            )
            .await
        },
        async {
            let queued = eventually(250, || {
                server
                    .dispatch
                    .0
                    .calls
                    .lock()
                    .iter()
                    .any(|call| call == "control_app.resume")
            })
            .await;
            assert!(queued, "the gated call reached the dispatcher");
            session.cancel(json!(4)).await
        }
    );
    assert_eq!(cancelled, StatusCode::ACCEPTED);
    assert!(gated.response.is_none(), "no response after a cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_expiry_cancels_the_job() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let outcome = session
        .call(json!({
            "operation": "execute", "tool": "control_app", "action": "wait_until",
            "params": {"entity": "Player", "component": "Transform", "path": ".translation.x", "op": "changed"},
            "options": {"timeoutMs": 100}
        }))
        .await;
    assert_eq!(outcome.error_code().as_deref(), Some("TIMEOUT"));
    assert!(
        outcome.payload()["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("cancelled"))
    );
    assert!(
        eventually(250, || server.dispatch.0.cancelled.load(Ordering::SeqCst)
            == 1)
        .await,
        "the job was cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_calls_and_sessions() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let running = session
        .start_call(json!(1), json!({"operation": "execute", "tool": "control_app", "action": "step_frames", "params": {"frames": 100000}}), None)
        .await;
    server.handle.shutdown().await;
    assert!(read_outcome(running).await.response.is_none());
    assert_eq!(server.dispatch.0.cancelled.load(Ordering::SeqCst), 1);
    assert!(
        tokio::net::TcpStream::connect(server.address)
            .await
            .is_err(),
        "no longer listening"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_generator_checks_every_response() {
    use bevy_mcp_contract_tests::load::{LoadConfig, Operation, run};
    let server = TestServer::start().await;
    let base = LoadConfig {
        address: server.address,
        path: "/mcp".to_owned(),
        concurrency: 4,
        requests: 200,
        duration: std::time::Duration::from_secs(60),
        operation: Operation::Ping,
        version: VERSIONS[0].to_owned(),
        token: None,
        fresh_sessions: false,
    };
    let pings = run(base.clone()).await.expect("load run");
    assert_eq!((pings.requests, pings.errors), (200, 0));
    assert!(pings.p50_ms <= pings.p99_ms && pings.p99_ms <= pings.max_ms);
    let describe = LoadConfig {
        operation: Operation::ToolsCall {
            tool: "bevy".to_owned(),
            arguments: json!({"operation": "describe"}),
        },
        fresh_sessions: true,
        requests: 40,
        ..base.clone()
    };
    let described = run(describe).await.expect("load run");
    assert_eq!((described.requests, described.errors), (40, 0));
    // Every response is checked: a failing call counts as an error, not as a request.
    let failing = LoadConfig {
        operation: Operation::ToolsCall {
            tool: "bevy".to_owned(),
            arguments: json!({"operation": "execute", "tool": "nope"}),
        },
        requests: 8,
        ..base
    };
    let failed = run(failing).await.expect("load run");
    assert_eq!((failed.requests, failed.errors), (0, 8));
}

#[tokio::test]
async fn images_travel_as_image_content_after_the_text() {
    let server = TestServer::start().await;
    for version in VERSIONS {
        let session = McpSession::start_with(server.address, version, &[]).await;
        let outcome = session.execute("view", "screenshot", json!({})).await;
        assert!(!outcome.is_error(), "{}", outcome.payload());
        let content = outcome.result()["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(content.len(), 2, "{version}: text, then the image");
        assert_eq!(content[0]["type"], json!("text"));
        assert_eq!(outcome.payload()["width"], json!(1));
        assert_eq!(content[1]["type"], json!("image"));
        assert_eq!(
            outcome.images(),
            vec![("image/png".to_owned(), support::TEST_IMAGE_BYTES.to_vec())],
            "{version}: base64 of the exact bytes"
        );
    }
    // An error result carries no image, and other results carry only text.
    let session = McpSession::start(server.address).await;
    let plain = session.execute("inspect", "list_entities", json!({})).await;
    assert_eq!(plain.result()["content"].as_array().map(Vec::len), Some(1));
}
