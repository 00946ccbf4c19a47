//! A minimal MCP server on the official Rust SDK (rmcp) with one tool, served by its
//! Streamable HTTP service in its default (session) mode on plain hyper.
//!
//! `reference-rmcp [PORT] [PAYLOAD]`: the tool answers `ok`, or with the JSON object in the file
//! PAYLOAD as text and structured content, so a comparison can send the same bytes as ours.

use std::process::ExitCode;
use std::sync::Arc;

use bevy_mcp_reference_servers::listen_from_args;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};

/// One tool, `bevy`, that answers any arguments with the same payload.
#[derive(Debug, Clone, Default)]
struct OneTool {
    /// The answer's text and, when it is a JSON object, its structured content.
    payload: Option<(String, serde_json::Map<String, serde_json::Value>)>,
}

impl ServerHandler for OneTool {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({"type": "object"});
        let schema = match schema {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "bevy",
            "Answers ok.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some((text, structured)) = &self.payload else {
            return Ok(CallToolResult::success(vec![ContentBlock::text("ok")]).into());
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        result.structured_content = Some(serde_json::Value::Object(structured.clone()));
        Ok(result.into())
    }
}

/// Reads a JSON object from `path`: its text and its value.
fn read_payload(
    path: String,
) -> Result<(String, serde_json::Map<String, serde_json::Value>), String> {
    let text = std::fs::read_to_string(&path).map_err(|error| format!("{path}: {error}"))?;
    match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(object)) => Ok((text, object)),
        _ => Err(format!("{path}: not a JSON object")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    // The payload is read first: the address is only announced once the server can serve.
    let tool = match std::env::args().nth(2).map(read_payload).transpose() {
        Ok(payload) => OneTool { payload },
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
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(tool.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    ));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
