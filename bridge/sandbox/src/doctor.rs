//! `bevy-mcp --doctor`: asks a running app with the bridge for its `system_control.doctor`
//! checks over MCP, and when no app answers, says so and runs the checks that need no app (client
//! configuration, the token file). Prints one line per check, with the fix under a failed one.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use bevy_mcp_bridge::doctor::{Check, client_checks, token_file_check};
use serde_json::{Value, json};

/// How long the doctor waits for the app, per request.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the doctor against `host:port` and prints what it found; exit 0 when every check passed.
pub fn run(host: &str, port: u16, token_file: Option<&Path>) -> ExitCode {
    let host = match host {
        "" | "0.0.0.0" | "localhost" => "127.0.0.1",
        "::" => "::1",
        other => other,
    };
    let url = if host.contains(':') {
        format!("http://[{host}]:{port}/mcp")
    } else {
        format!("http://{host}:{port}/mcp")
    };
    let token = std::env::var("BEVY_MCP_TOKEN").ok().or_else(|| {
        token_file.and_then(|path| mcp_native_transport::tokens::token_for_client(path).ok())
    });
    let project = std::env::current_dir().unwrap_or_default();
    let mut checks = match ask_the_app(host, port, token.as_deref(), &project) {
        Ok(checks) => checks,
        Err(reason) => {
            let mut checks = vec![Check::fail(
                "endpoint",
                format!("{url} does not answer: {reason}"),
                "start the app with the bridge (cargo run --release), or pass the --port it listens on",
            )];
            let home = std::env::var_os("HOME").map(PathBuf::from);
            checks.extend(client_checks(
                &project,
                home.as_deref(),
                &url,
                token.is_some(),
            ));
            checks
        }
    };
    if let Some(path) = token_file {
        checks.push(token_file_check(path));
    }
    for check in &checks {
        let mark = if check.ok { "ok  " } else { "FAIL" };
        println!("[{mark}] {}: {}", check.check, check.detail);
        if let Some(fix) = &check.fix {
            println!("       fix: {fix}");
        }
    }
    if checks.iter().all(|check| check.ok) {
        println!("all checks passed");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The app's own checks, through MCP: initialize, then `system_control.doctor`.
fn ask_the_app(
    host: &str,
    port: u16,
    token: Option<&str>,
    project: &Path,
) -> Result<Vec<Check>, String> {
    let address = (host, port)
        .to_socket_addrs()
        .map_err(|error| error.to_string())?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bevy-mcp-doctor", "version": env!("CARGO_PKG_VERSION")}}});
    let (session, answer) = post(address, host, token, None, &initialize)?;
    if answer.get("error").is_some() {
        return Err(format!(
            "initialize was refused: {}",
            answer["error"]["message"]
        ));
    }
    let session = session.ok_or("initialize answered without a session id")?;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bevy", "arguments": {"operation": "execute", "tool": "system_control",
        "action": "doctor", "params": {"projectDir": project.display().to_string()}}}});
    let (_, answer) = post(address, host, token, Some(&session), &call)?;
    let result = &answer["result"];
    let payload = result
        .get("structuredContent")
        .cloned()
        .or_else(|| {
            result["content"][0]["text"]
                .as_str()
                .and_then(|text| serde_json::from_str(text).ok())
        })
        .unwrap_or(Value::Null);
    let _ = delete(address, host, token, &session);
    let checks = payload["checks"]
        .as_array()
        .ok_or_else(|| format!("the app's doctor answered no checks: {answer}"))?;
    Ok(checks
        .iter()
        .map(|check| Check {
            check: check["check"].as_str().unwrap_or("?").to_owned(),
            ok: check["ok"].as_bool().unwrap_or(false),
            detail: check["detail"].as_str().unwrap_or_default().to_owned(),
            fix: check["fix"].as_str().map(str::to_owned),
        })
        .collect())
}

/// One POST of a JSON-RPC message on its own connection: the session id header and the JSON-RPC
/// message of the answer (a JSON body, or the last event of an SSE stream).
fn post(
    address: SocketAddr,
    host: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> Result<(Option<String>, Value), String> {
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("X-MCP-Capability-Token: {token}\r\n"));
    }
    if let Some(session) = session {
        head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    let response = exchange(address, &format!("{head}\r\n{body}"))?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or("the answer has no HTTP head")?;
    let status = head.split(' ').nth(1).unwrap_or_default();
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let body = if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
        unchunk(body)
    } else {
        body.to_owned()
    };
    let message = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .next_back()
        .unwrap_or(body.trim());
    let value: Value =
        serde_json::from_str(message).map_err(|_| format!("HTTP {status}: {}", body.trim()))?;
    if !status.starts_with('2') {
        let why = value["error"]["message"].as_str().unwrap_or(body.trim());
        return Err(format!("HTTP {status}: {why}"));
    }
    Ok((header("mcp-session-id"), value))
}

/// Ends the doctor's session (best effort).
fn delete(
    address: SocketAddr,
    host: &str,
    token: Option<&str>,
    session: &str,
) -> Result<String, String> {
    let mut head = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {host}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n"
    );
    if let Some(token) = token {
        head.push_str(&format!("X-MCP-Capability-Token: {token}\r\n"));
    }
    exchange(address, &format!("{head}\r\n"))
}

fn exchange(address: SocketAddr, request: &str) -> Result<String, String> {
    let mut stream =
        TcpStream::connect_timeout(&address, TIMEOUT).map_err(|error| error.to_string())?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .map_err(|error| error.to_string())?;
    stream
        .write_all(request.as_bytes())
        .map_err(|error| error.to_string())?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|error| error.to_string())?;
    Ok(String::from_utf8_lossy(&response).into_owned())
}

/// A chunked body, joined.
fn unchunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 {
            break;
        }
        let Some(chunk) = after.get(..size) else {
            break;
        };
        out.push_str(chunk);
        rest = after.get(size + 2..).unwrap_or_default();
    }
    out
}
