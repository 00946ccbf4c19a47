//! An MCP session over the raw client: initialize, call `bevy`, read results and progress.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};

use hyper::Method;
use hyper::body::Incoming;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use crate::http::{self, RawRequest, SseEvent, SseReader};

/// A live MCP session.
#[derive(Debug)]
pub struct McpSession {
    /// Server address.
    pub address: SocketAddr,
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// The negotiated version.
    pub version: String,
    /// Extra headers sent with every request (a token).
    pub headers: Vec<(String, String)>,
    next_id: AtomicI64,
}

/// What a `tools/call` produced.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The JSON-RPC response, if one came.
    pub response: Option<Value>,
    /// Progress notifications, in order.
    pub progress: Vec<Value>,
}

impl CallOutcome {
    /// The tool result object.
    pub fn result(&self) -> &Value {
        self.response
            .as_ref()
            .map_or(&Value::Null, |response| &response["result"])
    }

    /// The tool result's payload: `structuredContent` or the parsed text content.
    pub fn payload(&self) -> Value {
        tool_payload(self.result())
    }

    /// Whether the tool result is an error.
    pub fn is_error(&self) -> bool {
        self.result()["isError"] == json!(true)
    }

    /// The error code of an error result.
    pub fn error_code(&self) -> Option<String> {
        self.payload()["error"]["code"].as_str().map(str::to_owned)
    }

    /// The `image` content blocks of the result: `(mimeType, decoded bytes)`; a block whose data
    /// is not base64 decodes to nothing.
    pub fn images(&self) -> Vec<(String, Vec<u8>)> {
        use base64::Engine as _;
        let blocks = self.result()["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        blocks
            .iter()
            .filter(|block| block["type"] == "image")
            .map(|block| {
                let data = block["data"].as_str().unwrap_or_default();
                (
                    block["mimeType"].as_str().unwrap_or_default().to_owned(),
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap_or_default(),
                )
            })
            .collect()
    }
}

/// The payload of a tool result: parsed from its text content (always present).
pub fn tool_payload(result: &Value) -> Value {
    result["content"][0]["text"]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

impl McpSession {
    /// Initializes a session at `version` with extra headers (e.g. a token).
    pub async fn start_with(
        address: SocketAddr,
        version: &str,
        headers: &[(&str, &str)],
    ) -> McpSession {
        let mut request = RawRequest::post(&initialize_body(0, version));
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = http::send(address, request).await;
        assert_eq!(response.status(), StatusCode::OK, "initialize succeeds");
        let id = http::header(&response, "mcp-session-id")
            .expect("session id")
            .to_owned();
        let body = http::body_json(response).await;
        let negotiated = body["result"]["protocolVersion"]
            .as_str()
            .expect("version")
            .to_owned();
        let session = McpSession {
            address,
            id,
            version: negotiated,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            next_id: AtomicI64::new(1),
        };
        let initialized =
            session.request(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(
            http::send(address, initialized).await.status(),
            StatusCode::ACCEPTED
        );
        session
    }

    /// Initializes a session at the latest version.
    pub async fn start(address: SocketAddr) -> McpSession {
        McpSession::start_with(address, http::VERSIONS[0], &[]).await
    }

    /// A fresh numeric request id.
    pub fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A POST of `body` in this session.
    pub fn request(&self, body: &Value) -> RawRequest {
        let mut request = RawRequest::post(body).header("mcp-session-id", &self.id);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request
    }

    /// A request of another method (GET, DELETE) in this session.
    pub fn bare(&self, method: Method) -> RawRequest {
        let mut request = RawRequest::new(method).header("mcp-session-id", &self.id);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request
    }

    /// Sends a JSON-RPC request and returns the JSON response (from JSON or SSE).
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params});
        let response = http::send(self.address, self.request(&body)).await;
        assert_eq!(response.status(), StatusCode::OK, "{method} answered 200");
        read_outcome(response).await.response.unwrap_or(Value::Null)
    }

    /// Calls the `bevy` tool and reads the whole reply.
    pub async fn call(&self, arguments: Value) -> CallOutcome {
        let id = self.next_id();
        self.call_with_id(json!(id), arguments, None).await
    }

    /// Calls `bevy` with a given id and optional progress token; reads the whole reply.
    pub async fn call_with_id(
        &self,
        id: Value,
        arguments: Value,
        progress_token: Option<Value>,
    ) -> CallOutcome {
        let response = self.start_call(id, arguments, progress_token).await;
        assert_eq!(response.status(), StatusCode::OK);
        read_outcome(response).await
    }

    /// Starts a `bevy` call and returns the raw response (to read its stream step by step).
    pub async fn start_call(
        &self,
        id: Value,
        arguments: Value,
        progress_token: Option<Value>,
    ) -> Response<Incoming> {
        let mut params = json!({"name": "bevy", "arguments": arguments});
        if let Some(token) = progress_token {
            params["_meta"] = json!({"progressToken": token});
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        http::send(self.address, self.request(&body)).await
    }

    /// Executes an action and returns its outcome.
    pub async fn execute(&self, tool: &str, action: &str, params: Value) -> CallOutcome {
        self.call(json!({"operation": "execute", "tool": tool, "action": action, "params": params}))
            .await
    }

    /// Sends `notifications/cancelled` for `request_id`; returns the HTTP status.
    pub async fn cancel(&self, request_id: Value) -> StatusCode {
        let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id, "reason": "test"}});
        http::send(self.address, self.request(&body)).await.status()
    }
}

/// The body of an `initialize` request.
pub fn initialize_body(id: i64, version: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "contract-tests", "version": "1"}
        }
    })
}

/// Reads a reply that is either `application/json` or an SSE stream.
pub async fn read_outcome(response: Response<Incoming>) -> CallOutcome {
    let is_sse = http::header(&response, "content-type")
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_sse {
        return CallOutcome {
            response: Some(http::body_json(response).await),
            progress: Vec::new(),
        };
    }
    let mut reader = SseReader::new(response);
    let mut outcome = CallOutcome {
        response: None,
        progress: Vec::new(),
    };
    for event in reader.rest().await {
        match event {
            SseEvent::Message(_, message) if message.get("id").is_some() => {
                assert!(
                    outcome.response.is_none(),
                    "exactly one response per stream"
                );
                outcome.response = Some(message);
            }
            SseEvent::Message(_, message) => {
                assert!(outcome.response.is_none(), "nothing after the response");
                outcome.progress.push(message);
            }
            SseEvent::Comment(_) => {}
            SseEvent::Numbered(id, _) => panic!("a call's stream carries no event ids ({id})"),
            SseEvent::Other(block) => panic!("unexpected SSE block: {block}"),
        }
    }
    outcome
}
