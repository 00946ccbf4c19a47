//! LAN access over real HTTP: scoped tokens on the real bridge, the tokens file read again while
//! the server runs, HTTPS with a certificate made for the machine (a real TLS client trusting
//! only the made CA, and the official Python SDK), and wrong tokens slowed down.

use crate::clients;
use crate::support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use bevy_mcp_bridge::{BridgeConfig, Token};
use bevy_mcp_contract_tests::http::{self, RawRequest, VERSIONS};
use bevy_mcp_contract_tests::mcp::{McpSession, initialize_body, tool_payload};
use bevy_mcp_sandbox::testing::SandboxServer;
use hyper::StatusCode;
use mcp_native_transport::TlsConfig;
use mcp_native_transport::catalog::Scope;
use serde_json::{Value, json};
use support::TestServer;

const HEADER: &str = "x-mcp-capability-token";
const READER: &str = "reader-token-0123456789abcdef";
const WRITER: &str = "writer-token-0123456789abcdef";
const ADMIN: &str = "admin-token-0123456789abcdef00";

fn token(value: &str, scope: Scope, label: &str) -> Token {
    Token::new(value)
        .expect("a long token")
        .with_scope(scope)
        .labelled(label)
}

fn scoped(config: BridgeConfig) -> BridgeConfig {
    config
        .with_token(token(READER, Scope::Read, "observer"))
        .with_token(token(WRITER, Scope::Write, "designer"))
        .with_token(token(ADMIN, Scope::Admin, "developer"))
}

async fn session_with(address: SocketAddr, token: &str) -> McpSession {
    McpSession::start_with(address, VERSIONS[0], &[(HEADER, token)]).await
}

/// The row of `action` in a `describe {tool}` page.
fn row<'a>(page: &'a Value, action: &str) -> &'a Value {
    page["actions"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["action"] == json!(action)))
        .unwrap_or_else(|| panic!("{action} is listed: {page}"))
}

async fn crates(session: &McpSession) -> Value {
    session
        .execute("inspect", "find_entities", json!({"name": "Crate"}))
        .await
        .payload()["total"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_scope_runs_what_it_allows_and_a_refusal_changes_nothing() {
    let server = SandboxServer::start(60.0, scoped);
    let reader = session_with(server.address, READER).await;

    // describe and search say what this session may run, before it tries.
    let page = reader
        .call(json!({"operation": "describe", "tool": "control_entity"}))
        .await
        .payload();
    assert_eq!(row(&page, "despawn")["mayRun"], json!(false));
    assert_eq!(row(&page, "despawn")["needsScope"], json!("admin"));
    assert_eq!(row(&page, "rename")["needsScope"], json!("write"));
    let page = reader
        .call(json!({"operation": "describe", "tool": "inspect"}))
        .await
        .payload();
    assert_eq!(row(&page, "find_entities")["mayRun"], json!(true));
    let overview = reader
        .call(json!({"operation": "describe"}))
        .await
        .payload();
    assert_eq!(overview["sessionScope"], json!("read"));
    let found = reader
        .call(json!({"operation": "search", "query": "rename the crate"}))
        .await
        .payload();
    let rename = found["results"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["action"] == json!("rename")))
        .unwrap_or_else(|| panic!("rename is found: {found}"));
    assert_eq!(rename["mayRun"], json!(false));

    // A read runs; a write is refused with what to do, and the world is as it was.
    assert_eq!(crates(&reader).await, json!(1));
    let refused = reader
        .execute(
            "control_entity",
            "rename",
            json!({"entity": "Crate", "name": "Box"}),
        )
        .await;
    assert_eq!(refused.error_code().as_deref(), Some("SCOPE_DENIED"));
    let error = &refused.payload()["error"];
    assert_eq!(error["details"]["needsScope"], json!("write"));
    assert_eq!(error["details"]["sessionScope"], json!("read"));
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains("token"))
    );
    assert_eq!(error["nextCall"]["operation"], json!("describe"));
    assert_eq!(crates(&reader).await, json!(1), "the crate kept its name");
    // Changing the session's tools and the doctor (which reads files) are for admin tokens.
    for (operation, tool, action) in [
        ("configure", None, "disable_tools"),
        ("execute", Some("system_control"), "doctor"),
    ] {
        let mut call = json!({"operation": operation, "action": action});
        if let Some(tool) = tool {
            call["tool"] = json!(tool);
        }
        if action == "disable_tools" {
            call["params"] = json!({"tools": ["watch"]});
        }
        let outcome = reader.call(call).await;
        assert_eq!(
            outcome.error_code().as_deref(),
            Some("SCOPE_DENIED"),
            "{action}"
        );
    }
    let listed = reader
        .call(json!({"operation": "configure", "action": "list_tools"}))
        .await;
    assert!(!listed.is_error(), "listing tools is a read");

    // A write session changes things, but not destructively.
    let writer = session_with(server.address, WRITER).await;
    let despawn = writer
        .execute("control_entity", "despawn", json!({"entity": "Crate"}))
        .await;
    assert_eq!(despawn.error_code().as_deref(), Some("SCOPE_DENIED"));
    assert_eq!(crates(&writer).await, json!(1), "the crate is still there");
    let renamed = writer
        .execute(
            "control_entity",
            "rename",
            json!({"entity": "Crate", "name": "Box"}),
        )
        .await;
    assert!(!renamed.is_error(), "{:?}", renamed.payload());
    assert_eq!(crates(&writer).await, json!(0));

    // An admin session can do everything (a destructive action still asks for consent).
    let admin = session_with(server.address, ADMIN).await;
    let first = admin
        .execute("control_entity", "despawn", json!({"entity": "Box"}))
        .await;
    assert_eq!(first.error_code().as_deref(), Some("CONSENT_REQUIRED"));
    let granted = admin
        .call(first.payload()["error"]["nextCall"].clone())
        .await;
    assert_eq!(granted.payload()["despawned"]["name"], json!("Box"));
    let overview = admin.call(json!({"operation": "describe"})).await.payload();
    assert!(
        overview.get("sessionScope").is_none(),
        "an admin sees the catalog as without tokens"
    );

    // The audit names each call's token by its label, never by its value.
    let audit = admin
        .execute("system_control", "audit_log", json!({"limit": 50}))
        .await
        .payload();
    let entries = audit["entries"].as_array().cloned().unwrap_or_default();
    let refused_rename = entries
        .iter()
        .find(|entry| {
            entry["action"] == json!("control_entity.rename")
                && entry["outcome"] == json!("SCOPE_DENIED")
        })
        .unwrap_or_else(|| panic!("the refused rename is audited: {audit}"));
    assert_eq!(refused_rename["token"], json!("observer"));
    let text = audit.to_string();
    for secret in [READER, WRITER, ADMIN] {
        assert!(!text.contains(secret), "no token value in the audit");
    }

    // A scope cannot be widened by sending another token in the same session.
    let swapped = reader
        .request(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}))
        .header(HEADER, ADMIN);
    let response = http::send(server.address, swapped).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

fn write_tokens(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    // Written beside and renamed over, as editors do: the server never reads half a file.
    let staging = path.with_extension("new");
    std::fs::write(&staging, text).expect("write the tokens file");
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600)).expect("mode 0600");
    std::fs::rename(&staging, path).expect("replace the tokens file");
}

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef00";
const CAROL: &str = "carol-token-0123456789abcdef";

async fn initialize_status(address: SocketAddr, token: &str) -> StatusCode {
    let request = RawRequest::post(&initialize_body(1, VERSIONS[0])).header(HEADER, token);
    http::send(address, request).await.status()
}

/// Whether `token` opens a session within 200 tries, 25 ms apart (the file is polled every 50 ms).
async fn admitted_soon(address: SocketAddr, token: &str) -> bool {
    for _ in 0..200 {
        if initialize_status(address, token).await == StatusCode::OK {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

async fn ping_status(session: &McpSession) -> (StatusCode, Value) {
    let request = session.request(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    http::status_json(http::send(session.address, request).await).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tokens_file_is_read_again_while_the_server_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tokens");
    write_tokens(&path, &format!("{ALICE} admin alice\n"));
    let file = path.clone();
    let server = TestServer::start_with(move |config| {
        config.tokens_file = Some(file);
        config.limits.tokens_file_poll = Duration::from_millis(50);
        // This test sends many refused tokens on purpose: not a guesser to slow down.
        config.limits.wrong_token_free_attempts = u32::MAX;
    })
    .await;
    let alice = session_with(server.address, ALICE).await;
    assert_eq!(ping_status(&alice).await.0, StatusCode::OK);
    assert_eq!(
        initialize_status(server.address, BOB).await,
        StatusCode::FORBIDDEN
    );

    // A new token works without a restart, with its scope.
    write_tokens(&path, &format!("{ALICE} admin alice\n{BOB} read bob\n"));
    assert!(
        admitted_soon(server.address, BOB).await,
        "bob's new token was taken up"
    );
    let bob = session_with(server.address, BOB).await;
    let refused = bob
        .execute("control_entity", "despawn", json!({"entity": "Crate"}))
        .await;
    assert_eq!(refused.error_code().as_deref(), Some("SCOPE_DENIED"));

    // A removed token's session ends at its next request, with 401 saying why.
    write_tokens(&path, &format!("{BOB} read bob\n"));
    let mut ended = None;
    for _ in 0..200 {
        let (status, body) = ping_status(&alice).await;
        if status != StatusCode::OK {
            ended = Some((status, body));
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let (status, body) = ended.expect("alice's session ends");
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("removed"), "{message}");
    assert_eq!(
        initialize_status(server.address, ALICE).await,
        StatusCode::FORBIDDEN
    );

    // A malformed file is not applied: bob keeps working and carol (on the bad file) never
    // gets in, however many times the server looks at it.
    write_tokens(&path, &format!("{CAROL} admin carol\n{BOB} reader bob\n"));
    for _ in 0..40 {
        assert_eq!(ping_status(&bob).await.0, StatusCode::OK);
        assert_eq!(
            initialize_status(server.address, CAROL).await,
            StatusCode::FORBIDDEN
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Fixed, it applies.
    write_tokens(&path, &format!("{CAROL} admin carol\n{BOB} read bob\n"));
    assert!(
        admitted_soon(server.address, CAROL).await,
        "the fixed file was applied"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_a_client_that_trusts_the_made_ca_and_refuses_plain_http() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tls_dir = dir.path().to_owned();
    let server = TestServer::start_with(move |config| {
        config.token(token(ADMIN, Scope::Admin, "developer"));
        config.tls = Some(TlsConfig::Generated {
            dir: tls_dir,
            extra_names: Vec::new(),
        });
    })
    .await;
    assert!(server.handle.url().starts_with("https://"));
    let trust = server.handle.tls_trust().cloned().expect("TLS trust");
    assert_eq!(trust.ca_file, dir.path().join("ca.pem"));
    assert_eq!(
        trust.fingerprint.split(':').count(),
        32,
        "SHA-256, as AB:CD:.."
    );
    let client = http::tls_client(&trust.ca_file);
    let address = server.address;

    let initialize = RawRequest::post(&initialize_body(1, VERSIONS[0])).header(HEADER, ADMIN);
    let response = http::send_tls(address, &client, "127.0.0.1", initialize)
        .await
        .expect("the handshake succeeds against the made CA");
    assert_eq!(response.status(), StatusCode::OK);
    let session_id = http::header(&response, "mcp-session-id")
        .expect("a session")
        .to_owned();
    let call = |id: i64| {
        RawRequest::post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bevy", "arguments": {"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"entity": "Player"}}}}))
        .header(HEADER, ADMIN)
        .header("mcp-session-id", &session_id)
    };
    let answered = http::send_tls(address, &client, "localhost", call(2))
        .await
        .expect("localhost is covered too");
    let body = http::body_json(answered).await;
    assert_eq!(
        tool_payload(&body["result"])["echo"]["entity"],
        json!("Player")
    );

    // Plain HTTP on the TLS port is told to use https, and nothing else is hurt.
    let (status, body) = http::status_json(
        http::send(address, RawRequest::post(&initialize_body(1, VERSIONS[0]))).await,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("https://")),
        "{body}"
    );
    // A client that does not trust the made CA cannot talk to it.
    let stranger_ca = dir.path().join("stranger.pem");
    let other = tempfile::tempdir().expect("temp dir");
    std::fs::copy(make_other_ca(other.path()).await, &stranger_ca).expect("copy");
    let untrusting = http::tls_client(&stranger_ca);
    let refused = http::send_tls(address, &untrusting, "127.0.0.1", call(3)).await;
    assert!(refused.is_err(), "an unknown issuer is refused");
    let still = http::send_tls(address, &client, "127.0.0.1", call(4))
        .await
        .expect("the session is unharmed");
    assert_eq!(still.status(), StatusCode::OK);
}

/// The CA file of another made certificate (another machine's).
async fn make_other_ca(dir: &Path) -> std::path::PathBuf {
    let owned = dir.to_owned();
    let other = TestServer::start_with(move |config| {
        config.tls = Some(TlsConfig::Generated {
            dir: owned,
            extra_names: Vec::new(),
        });
    })
    .await;
    let ca = other.handle.tls_trust().map(|trust| trust.ca_file.clone());
    other.handle.shutdown().await;
    ca.expect("a CA")
}

#[test]
fn the_official_python_sdk_works_over_tls_with_a_token() {
    let python = match clients::ensure_venv() {
        Ok(python) => python,
        Err(reason) => return clients::unavailable(&reason),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let tls_dir = dir.path().to_owned();
    let server = SandboxServer::start(60.0, move |config| {
        scoped(config).with_tls(TlsConfig::Generated {
            dir: tls_dir,
            extra_names: Vec::new(),
        })
    });
    let url = format!("https://127.0.0.1:{}/mcp", server.address.port());
    let script = clients::workspace().join("contract-tests/interop/tls_client.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .arg(&url)
        .arg(dir.path().join("ca.pem"))
        .env("BEVY_MCP_TOKEN", READER)
        .output()
        .expect("run the TLS client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("TLS OK "))
        .unwrap_or_else(|| panic!("a summary line: {stdout}"));
    let summary: Value = serde_json::from_str(line).expect("summary JSON");
    assert_eq!(summary["player"], json!("Player"));
    assert_eq!(summary["despawn"], json!("SCOPE_DENIED"));
}

const RIGHT: &str = "the-right-token-0123456789";

/// A server whose one token is [`RIGHT`], slowing wrong tokens down after `free` of them by
/// `delay` (doubling up to `max_delay`).
async fn guarded_server(free: u32, delay: Duration, max_delay: Duration) -> TestServer {
    TestServer::start_with(move |config| {
        config.token(token(RIGHT, Scope::Admin, "dev"));
        config.limits.wrong_token_free_attempts = free;
        config.limits.wrong_token_delay = delay;
        config.limits.wrong_token_max_delay = max_delay;
    })
    .await
}

/// Sends `count` wrong tokens one after the other; each is checked and refused (403).
async fn guess_wrong(address: SocketAddr, count: usize) {
    for guess in 0..count {
        let status = initialize_status(address, &format!("wrong-guess-{guess}-0123456789")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "guess {guess} is checked");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_tokens_are_slowed_and_live_sessions_are_not() {
    // A delay long enough that the two requests below always meet; the test never waits for it.
    let minute = Duration::from_secs(60);
    let server = guarded_server(2, minute, minute).await;
    let live = session_with(server.address, RIGHT).await;
    guess_wrong(server.address, 3).await;
    // The next guesses: one waits for its check, the other is turned away unchecked (429).
    let address = server.address;
    let guess = |n: usize| {
        tokio::spawn(async move {
            let request = RawRequest::post(&initialize_body(1, VERSIONS[0]))
                .header(HEADER, &format!("another-guess-{n}-0123456789"));
            http::send(address, request).await
        })
    };
    let (mut first, mut second) = (guess(1), guess(2));
    let turned_away = tokio::select! {
        response = &mut first => response,
        response = &mut second => response,
    }
    .expect("a response");
    first.abort();
    second.abort();
    assert_eq!(turned_away.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(http::header(&turned_away, "retry-after").is_some());
    // A live session presenting its own token is never slowed down.
    assert_eq!(ping_status(&live).await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_token_still_gets_in_after_wrong_ones() {
    let server = guarded_server(1, Duration::from_millis(100), Duration::from_millis(200)).await;
    guess_wrong(server.address, 6).await;
    assert_eq!(
        initialize_status(server.address, RIGHT).await,
        StatusCode::OK
    );
    // And the right token cleared the address's record: the next guess is checked at once.
    assert_eq!(
        initialize_status(server.address, "one-more-wrong-guess-0123").await,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_hold_the_session_scope_and_are_audited() {
    // A live resource whose read action needs admin (the doctor reads files beyond the game).
    let server = SandboxServer::start(60.0, |config| {
        let mut config = scoped(config);
        config
            .server
            .identity
            .live_resources
            .push(mcp_native_transport::LiveResource {
                path: "setup/doctor".to_owned(),
                name: "doctor".to_owned(),
                title: "Setup checks".to_owned(),
                description: "The doctor's checks.".to_owned(),
                tool: "system_control".to_owned(),
                action: "doctor".to_owned(),
                placeholder: None,
                volatile_fields: Vec::new(),
            });
        config
    });
    let reader = session_with(server.address, READER).await;
    for method in ["resources/read", "resources/subscribe"] {
        let refused = reader
            .rpc(method, json!({"uri": "bevy://setup/doctor"}))
            .await;
        assert_eq!(refused["error"]["code"], json!(-32602), "{method}");
        assert_eq!(
            refused["error"]["data"]["error"]["code"],
            json!("SCOPE_DENIED"),
            "{method}: {refused}"
        );
    }
    let player = reader
        .rpc("resources/read", json!({"uri": "bevy://entity/Player"}))
        .await;
    assert!(
        player["result"]["contents"][0]["text"].is_string(),
        "{player}"
    );
    let admin = session_with(server.address, ADMIN).await;
    let doctor = admin
        .rpc("resources/read", json!({"uri": "bevy://setup/doctor"}))
        .await;
    assert!(
        doctor["result"]["contents"][0]["text"].is_string(),
        "{doctor}"
    );
    // Reads through resources leave audit entries, like executes.
    let audit = admin
        .execute("system_control", "audit_log", json!({"limit": 50}))
        .await
        .payload();
    let entries = audit["entries"].as_array().cloned().unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|entry| entry["action"] == json!("inspect.get_entity")
                && entry["token"] == json!("observer")),
        "{audit}"
    );
}
