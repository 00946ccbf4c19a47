//! A raw hyper server that answers every JSON-RPC request with `{"result": {}}` and its id: the
//! ceiling for any MCP server on hyper, with no sessions and no MCP logic.

use std::convert::Infallible;
use std::process::ExitCode;

use bevy_mcp_reference_servers::listen_from_args;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

async fn echo(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|message| message.get("id").cloned());
    let response = match id {
        Some(id) => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(
                json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
            ))),
        // A notification: accepted, no body.
        None => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}

#[tokio::main]
async fn main() -> ExitCode {
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
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(echo))
                .await;
        });
    }
}
