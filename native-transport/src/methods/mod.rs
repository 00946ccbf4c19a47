//! The MCP methods besides tools: prompts, resources and completions. Each answers from the
//! catalog, the identity and the app's published terms, except a live resource, which runs a
//! read action through the dispatcher like a tool call.

pub(crate) mod completion;
pub(crate) mod prompts;
pub(crate) mod resources;

use serde_json::Value;

/// A JSON-RPC error a method answers: its code, message and optional data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MethodError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl MethodError {
    /// Invalid params (-32602), saying what was wrong and what to send.
    pub fn invalid(message: impl Into<String>) -> MethodError {
        MethodError {
            code: crate::jsonrpc::codes::INVALID_PARAMS,
            message: message.into(),
            data: None,
        }
    }

    /// A gateway refusal (bad params, a scope the session lacks) as invalid params, the tool
    /// error (code, hint, nextCall) as its data.
    pub fn from_tool_error(error: &mcp_vocabulary::ToolError) -> MethodError {
        MethodError::invalid(error.message.clone()).with_data(error.to_json())
    }

    /// The same error with data.
    pub fn with_data(mut self, data: Value) -> MethodError {
        self.data = Some(data);
        self
    }
}

/// The string member `key` of a method's params.
fn text<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}
