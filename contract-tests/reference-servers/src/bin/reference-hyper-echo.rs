//! A raw hyper server that answers every JSON-RPC request with `{"result": {}}` and its id: the
//! ceiling for any MCP server on hyper, with no sessions and no MCP logic.
//!
//! `reference-hyper-echo PORT PAYLOAD_FILE` answers `tools/call` with that JSON object as a tool
//! result (as text and as structured content, the bytes our describe sends), serialized once: the
//! ceiling for a server that sends the same bytes.

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;

use bevy_mcp_reference_servers::listen_from_args;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// A `tools/call` answer serialized once, split where the request's id goes.
#[derive(Debug)]
struct Canned {
    before_id: Bytes,
    after_id: Bytes,
}

impl Canned {
    fn from_file(path: &str) -> Result<Canned, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("{path}: {error}"))?;
        let structured: Value =
            serde_json::from_str(&text).map_err(|error| format!("{path}: {error}"))?;
        let marker = "\u{1}id\u{1}";
        let answer = json!({
            "jsonrpc": "2.0",
            "id": marker,
            "result": {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false},
        })
        .to_string();
        let quoted = serde_json::to_string(marker).map_err(|error| error.to_string())?;
        let (before, after) = answer
            .split_once(&quoted)
            .ok_or_else(|| "the id marker is missing".to_owned())?;
        Ok(Canned {
            before_id: Bytes::copy_from_slice(before.as_bytes()),
            after_id: Bytes::copy_from_slice(after.as_bytes()),
        })
    }

    fn answer(&self, id: &Value) -> Bytes {
        let id = id.to_string();
        let mut bytes = Vec::with_capacity(self.before_id.len() + id.len() + self.after_id.len());
        bytes.extend_from_slice(&self.before_id);
        bytes.extend_from_slice(id.as_bytes());
        bytes.extend_from_slice(&self.after_id);
        Bytes::from(bytes)
    }
}

async fn echo(
    request: Request<Incoming>,
    canned: Arc<Option<Canned>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let message = serde_json::from_slice::<Value>(&body).ok();
    let id = message
        .as_ref()
        .and_then(|message| message.get("id").cloned());
    let is_call = message
        .as_ref()
        .and_then(|message| message.get("method"))
        .and_then(Value::as_str)
        == Some("tools/call");
    let response = match (id, canned.as_ref().as_ref()) {
        (Some(id), Some(canned)) if is_call => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(canned.answer(&id))),
        (Some(id), _) => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(
                json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
            ))),
        // A notification: accepted, no body.
        (None, _) => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}

#[tokio::main]
async fn main() -> ExitCode {
    // The payload is read first: the address is only announced once the server can serve.
    let canned = match std::env::args()
        .nth(2)
        .map(|path| Canned::from_file(&path))
        .transpose()
    {
        Ok(canned) => Arc::new(canned),
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match listen_from_args().await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let canned = canned.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| echo(request, canned.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
