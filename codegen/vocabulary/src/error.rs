//! The error object a model sees inside an `isError` tool result, whoever raised it: the gateway
//! (a wrong name, a missing consent) or an action's handler (an entity that does not exist).

use std::fmt;

use serde_json::{Map, Value, json};

use crate::codes::ErrorCode;
use crate::next_call::without_empty_keys;

/// An error a model can act on: a code to branch on, what went wrong, and what to do next.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    /// The code.
    pub code: ErrorCode,
    /// What went wrong, in one or two sentences.
    pub message: String,
    /// What to do about it (for action errors, the records' hint is used when this is empty).
    pub hint: Option<String>,
    /// Closest valid names, best first.
    pub suggestions: Vec<String>,
    /// A call that can be sent back unchanged to make progress.
    pub next_call: Option<Value>,
    /// Structured facts: candidates, the last value seen, ...
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            hint: None,
            suggestions: Vec::new(),
            next_call: None,
            details: None,
        }
    }

    /// Adds a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds suggestions.
    #[must_use]
    pub fn suggestions<S: Into<String>>(
        mut self,
        suggestions: impl IntoIterator<Item = S>,
    ) -> Self {
        self.suggestions = suggestions.into_iter().map(Into::into).collect();
        self
    }

    /// Adds the next call; empty keys are dropped so it can be sent back unchanged.
    #[must_use]
    pub fn next_call(mut self, next_call: Value) -> Self {
        self.next_call = Some(without_empty_keys(next_call));
        self
    }

    /// Adds structured details.
    #[must_use]
    pub fn details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The error as JSON: `{"error": {code, message, hint?, suggestions?, nextCall?, details?}}`.
    pub fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".to_owned(), json!(self.code));
        error.insert("message".to_owned(), json!(self.message));
        if let Some(hint) = &self.hint {
            error.insert("hint".to_owned(), json!(hint));
        }
        if !self.suggestions.is_empty() {
            error.insert("suggestions".to_owned(), json!(self.suggestions));
        }
        if let Some(next_call) = &self.next_call {
            error.insert("nextCall".to_owned(), next_call.clone());
        }
        if let Some(details) = &self.details {
            error.insert("details".to_owned(), details.clone());
        }
        json!({ "error": Value::Object(error) })
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes;

    #[test]
    fn the_wire_form_has_only_what_is_set() {
        let error = ToolError::new(codes::UNKNOWN_TOOL, "no")
            .suggestions(["inspect"])
            .next_call(json!({"operation": "describe", "tool": "", "action": null}));
        assert_eq!(
            error.to_json(),
            json!({"error": {"code": "UNKNOWN_TOOL", "message": "no", "suggestions": ["inspect"], "nextCall": {"operation": "describe"}}})
        );
        assert_eq!(error.to_string(), "UNKNOWN_TOOL: no");
    }
}
