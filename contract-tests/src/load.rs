//! A load generator for any Streamable HTTP MCP server: N clients, each on its own keep-alive
//! connection and session, send `ping` or a `tools/call` and check every response. Used by the
//! `mcp-load` binary; latencies are measured, never asserted on.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// What each client sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// `ping`.
    Ping,
    /// `tools/call` of `tool` with these arguments.
    ToolsCall {
        /// The tool name (`bevy`).
        tool: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A plain JSON-RPC request outside MCP (no session, no `initialize`): how the Bevy Remote
    /// Protocol is called.
    JsonRpc {
        /// The method, e.g. `world.get_components`.
        method: String,
        /// Its params.
        params: Value,
    },
}

impl Operation {
    /// Whether each client opens an MCP session first.
    fn is_mcp(&self) -> bool {
        !matches!(self, Operation::JsonRpc { .. })
    }
}

/// How to load the server.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Server address (loopback).
    pub address: SocketAddr,
    /// Endpoint path, e.g. `/mcp`.
    pub path: String,
    /// Concurrent clients, each with its own connection and session.
    pub concurrency: usize,
    /// Requests in all (split across clients); the run stops at whichever of this and
    /// `duration` comes first.
    pub requests: u64,
    /// Longest run.
    pub duration: Duration,
    /// What to send.
    pub operation: Operation,
    /// The protocol version to initialize with.
    pub version: String,
    /// A capability token, when the server needs one.
    pub token: Option<String>,
    /// Every request in a new session (its initialize is not timed).
    pub fresh_sessions: bool,
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// Successful requests.
    pub requests: u64,
    /// Failed requests (wrong status, JSON-RPC error, or `isError`).
    pub errors: u64,
    /// Wall time of the run.
    pub seconds: f64,
    /// Latency percentiles and maximum, in milliseconds.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest request.
    pub max_ms: f64,
}

impl LoadReport {
    /// Successful requests per second.
    pub fn requests_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "requests": self.requests,
            "errors": self.errors,
            "seconds": self.seconds,
            "requestsPerSecond": self.requests_per_second(),
            "p50Ms": self.p50_ms,
            "p90Ms": self.p90_ms,
            "p99Ms": self.p99_ms,
            "maxMs": self.max_ms,
        })
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Connecting or the HTTP handshake failed.
    #[error("cannot connect to {0}: {1}")]
    Connect(SocketAddr, String),
    /// `initialize` did not return a session.
    #[error("initialize failed: {0}")]
    Initialize(String),
}

/// One client's keep-alive connection.
struct Client {
    sender: http1::SendRequest<Full<Bytes>>,
    config: LoadConfig,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    async fn connect(config: &LoadConfig) -> Result<Client, LoadError> {
        let stream = TcpStream::connect(config.address)
            .await
            .map_err(|error| LoadError::Connect(config.address, error.to_string()))?;
        stream
            .set_nodelay(true)
            .map_err(|error| LoadError::Connect(config.address, error.to_string()))?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| LoadError::Connect(config.address, error.to_string()))?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server closes the connection.
            let _ = connection.await;
        });
        Ok(Client {
            sender,
            config: config.clone(),
            session: None,
            next_id: 0,
        })
    }

    /// Sends one JSON-RPC message; returns the response message (from JSON or SSE) and headers.
    async fn post(&mut self, body: &Value) -> Result<(Value, Option<String>), String> {
        let mut request = Request::post(self.config.path.as_str())
            .header("host", self.config.address.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(token) = &self.config.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(
                serde_json::to_vec(body).unwrap_or_default(),
            )))
            .map_err(|error| error.to_string())?;
        self.sender
            .ready()
            .await
            .map_err(|error| error.to_string())?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|error| error.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|error| error.to_string())?
            .to_bytes();
        let message = serde_json::from_slice::<Value>(&bytes).ok().or_else(|| {
            String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str::<Value>(data).ok())
                .rfind(|message| message.get("id").is_some())
        });
        message
            .map(|message| (message, session))
            .ok_or_else(|| "no JSON-RPC response".to_owned())
    }

    async fn initialize(&mut self) -> Result<(), LoadError> {
        self.session = None;
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": self.config.version, "capabilities": {}, "clientInfo": {"name": "mcp-load", "version": "1"}}
        });
        let (message, session) = self.post(&body).await.map_err(LoadError::Initialize)?;
        if message.get("result").is_none() {
            return Err(LoadError::Initialize(message.to_string()));
        }
        self.session = session;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        // A notification answers 202 with no body; only the status matters.
        let _ = self.post(&initialized).await;
        Ok(())
    }

    /// One measured request; `Ok` when the response is a success.
    async fn request(&mut self) -> Result<(), String> {
        self.next_id += 1;
        let body = match &self.config.operation {
            Operation::Ping => json!({"jsonrpc": "2.0", "id": self.next_id, "method": "ping"}),
            Operation::ToolsCall { tool, arguments } => json!({
                "jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}
            }),
            Operation::JsonRpc { method, params } => json!({
                "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params
            }),
        };
        let (message, _) = self.post(&body).await?;
        if let Some(error) = message.get("error") {
            return Err(error.to_string());
        }
        if message["result"]["isError"] == json!(true) {
            return Err(message["result"]["content"][0]["text"].to_string());
        }
        Ok(())
    }
}

/// The `fraction` percentile of sorted durations, in milliseconds.
pub(crate) fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

/// Runs the load and reports it.
pub async fn run(config: LoadConfig) -> Result<LoadReport, LoadError> {
    let concurrency = config.concurrency.max(1);
    let per_client = config.requests.div_ceil(concurrency as u64);
    let started = Instant::now();
    let deadline = started + config.duration;
    let mut clients = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let mut client = Client::connect(&config).await?;
        if config.operation.is_mcp() {
            client.initialize().await?;
        }
        clients.push(client);
    }
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                // Duration-bound runs pass a huge request count: do not reserve for it.
                let mut latencies = Vec::with_capacity(per_client.min(1 << 16) as usize);
                let mut errors = 0u64;
                for _ in 0..per_client {
                    if Instant::now() >= deadline {
                        break;
                    }
                    if client.config.fresh_sessions
                        && client.config.operation.is_mcp()
                        && client.initialize().await.is_err()
                    {
                        errors += 1;
                        continue;
                    }
                    let sent = Instant::now();
                    match client.request().await {
                        Ok(()) => latencies.push(sent.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        match task.await {
            Ok((mut client_latencies, client_errors)) => {
                latencies.append(&mut client_latencies);
                errors += client_errors;
            }
            Err(_) => errors = errors.saturating_add(per_client),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    latencies.sort();
    Ok(LoadReport {
        requests: latencies.len() as u64,
        errors,
        seconds,
        p50_ms: percentile(&latencies, 0.50),
        p90_ms: percentile(&latencies, 0.90),
        p99_ms: percentile(&latencies, 0.99),
        max_ms: latencies
            .last()
            .map_or(0.0, |max| max.as_secs_f64() * 1000.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 0.5), 51.0);
        assert_eq!(percentile(&samples, 0.99), 99.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
