//! A reply as the client receives it: the `tools/call` result and the gateway's stamp on it.

use super::*;

/// A tool result: text content with compact JSON, `structuredContent` on 2025-06-18+, and the
/// images an action attached. It borrows the payload, so a reply is serialized straight to the
/// wire without being copied.
#[derive(Debug, Serialize)]
pub struct ToolResult<'a> {
    pub(super) content: Vec<Content<'a>>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub(super) structured_content: Option<Structured<'a>>,
    #[serde(rename = "isError")]
    pub(super) is_error: bool,
}

/// The structured content: the value, or its JSON text when that is at hand (written as it is,
/// instead of serializing the value a second time).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Structured<'a> {
    Value(&'a Value),
    Text(&'a serde_json::value::RawValue),
}

/// One MCP content block.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(super) enum Content<'a> {
    Text {
        text: std::borrow::Cow<'a, str>,
    },
    Image {
        /// Base64 of the encoded image.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl<'a> ToolResult<'a> {
    /// The result for `value`; `structured` when the session's version has `structuredContent`.
    pub fn new(value: &'a Value, is_error: bool, structured: bool) -> ToolResult<'a> {
        ToolResult {
            content: vec![Content::Text {
                text: std::borrow::Cow::Owned(serde_json::to_string(value).unwrap_or_default()),
            }],
            structured_content: (structured && value.is_object())
                .then_some(Structured::Value(value)),
            is_error,
        }
    }

    /// The result for `value` whose compact JSON `text` is already at hand.
    pub fn with_text(
        value: &'a Value,
        text: &'a str,
        is_error: bool,
        structured: bool,
    ) -> ToolResult<'a> {
        ToolResult {
            content: vec![Content::Text {
                text: std::borrow::Cow::Borrowed(text),
            }],
            structured_content: (structured && value.is_object()).then(|| {
                // Checking that `text` is JSON costs less than writing `value` again.
                serde_json::from_str(text).map_or(Structured::Value(value), Structured::Text)
            }),
            is_error,
        }
    }

    /// Adds `images` after the text, as `image` content blocks.
    #[must_use]
    pub fn with_images(mut self, images: &[ImageContent]) -> ToolResult<'a> {
        use base64::Engine as _;
        self.content
            .extend(images.iter().map(|image| Content::Image {
                data: base64::engine::general_purpose::STANDARD.encode(&image.data),
                mime_type: image.mime_type.clone(),
            }));
        self
    }
}

/// A finished call's result, shaped and serialized, ready to become a [`ToolResult`].
#[derive(Debug)]
pub struct Finished {
    /// The result (or the error) as JSON.
    pub payload: Value,
    /// `payload` serialized: the text content.
    pub text: String,
    /// Whether it is an error.
    pub is_error: bool,
}

impl Finished {
    pub(super) fn new(shaped: shaping::Shaped, is_error: bool) -> Finished {
        Finished {
            payload: shaped.value,
            text: shaped.text,
            is_error,
        }
    }

    /// An error result; shaped in summary detail so a huge message or detail stays bounded.
    pub(super) fn error(value: Value) -> Finished {
        match shaping::shape(value.clone(), Detail::Summary, shaping::HARD_MAX_BYTES) {
            Ok(shaped) => Finished::new(shaped, true),
            Err(_) => Finished {
                text: value.to_string(),
                payload: value,
                is_error: true,
            },
        }
    }

    /// The tool result to send; `structured` when the session's version has
    /// `structuredContent`.
    pub fn tool_result(&self, structured: bool) -> ToolResult<'_> {
        ToolResult::with_text(&self.payload, &self.text, self.is_error, structured)
    }
}

/// Catalog-wide facts every reply carries.
pub(crate) fn stamp(gateway: &Gateway, scope: &str, mut body: Map<String, Value>) -> Value {
    body.insert("scope".to_owned(), json!(scope));
    body.insert(
        "catalogRevision".to_owned(),
        json!(gateway.catalog.revision),
    );
    Value::Object(body)
}
