//! JSON-RPC 2.0 messages as MCP uses them: request ids as typed keys, parsing, responses.

use std::fmt;

use serde_json::{Map, Value, json};

/// The protocol versions this server speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The version offered when the client asks for one we do not speak.
pub const LATEST_VERSION: &str = SUPPORTED_VERSIONS[0];
/// The only version on which JSON-RPC batches are accepted.
pub const BATCH_VERSION: &str = "2025-03-26";

/// Whether `version` is one this server speaks.
pub fn is_supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// Whether results carry `structuredContent` on this version (2025-06-18 and later).
pub fn has_structured_content(version: &str) -> bool {
    version != BATCH_VERSION
}

/// Whether prompts, resources and templates carry a `title` on this version (2025-06-18 and
/// later).
pub fn has_titles(version: &str) -> bool {
    version != BATCH_VERSION
}

/// JSON-RPC error codes.
pub mod codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Refused by the transport (Host, Origin, token, size, session, ...).
    pub const TRANSPORT_REFUSED: i64 = -32000;
    /// Missing or wrong capability token.
    pub const UNAUTHORIZED: i64 = -32001;
    /// No resource at that URI (MCP's code for `resources/read`).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// The longest string request id accepted. Ids are kept while a call runs and as cancel markers,
/// so a client cannot make the server hold megabytes per call.
pub const MAX_ID_CHARS: usize = 256;

/// The longest method name accepted (every method this server knows is far shorter).
pub const MAX_METHOD_CHARS: usize = 128;

/// A request id as a typed key: the string `"1"` and the number `1` are different requests.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestKey {
    /// A numeric id (integers only; JSON-RPC discourages fractions and we refuse them).
    Number(i64),
    /// A string id.
    Text(String),
}

impl RequestKey {
    /// The key of a JSON id value, if it is a valid id (an integer, or a string of at most
    /// [`MAX_ID_CHARS`] characters).
    pub fn from_value(value: &Value) -> Option<RequestKey> {
        match value {
            Value::Number(number) => number.as_i64().map(RequestKey::Number),
            Value::String(text) if text.chars().count() <= MAX_ID_CHARS => {
                Some(RequestKey::Text(text.clone()))
            }
            _ => None,
        }
    }

    /// The id as JSON, type preserved.
    pub fn to_value(&self) -> Value {
        match self {
            RequestKey::Number(number) => json!(number),
            RequestKey::Text(text) => json!(text),
        }
    }
}

impl fmt::Display for RequestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestKey::Number(number) => write!(f, "{number}"),
            RequestKey::Text(text) => write!(f, "{text:?}"),
        }
    }
}

/// One incoming JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request: it gets exactly one response.
    Request {
        /// Its id.
        id: RequestKey,
        /// The method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// A notification: no response.
    Notification {
        /// The method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// A response from the client to a server request; we send none, so these are ignored.
    Response,
}

/// Why a JSON value is not a JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidMessage {
    /// The id, when one could be read (so the error response can carry it).
    pub id: Option<RequestKey>,
    /// What is wrong.
    pub reason: String,
}

impl Message {
    /// Reads one JSON-RPC message from a JSON value.
    pub fn parse(value: &Value) -> Result<Message, InvalidMessage> {
        let Some(object) = value.as_object() else {
            return Err(invalid(None, "a JSON-RPC message must be an object"));
        };
        let id_value = object.get("id");
        let id = id_value.and_then(RequestKey::from_value);
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid(id, "\"jsonrpc\" must be \"2.0\""));
        }
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        if !(params.is_null() || params.is_object() || params.is_array()) {
            return Err(invalid(id, "\"params\" must be an object or an array"));
        }
        if let Some(Value::String(text)) = id_value
            && id.is_none()
        {
            return Err(invalid(
                None,
                &format!(
                    "\"id\" strings are at most {MAX_ID_CHARS} characters; this one has {}",
                    text.chars().count()
                ),
            ));
        }
        if let Some(Value::String(method)) = object.get("method")
            && method.chars().count() > MAX_METHOD_CHARS
        {
            return Err(invalid(
                id,
                &format!("\"method\" is at most {MAX_METHOD_CHARS} characters"),
            ));
        }
        match (object.get("method"), id_value) {
            (Some(Value::String(method)), None) => Ok(Message::Notification {
                method: method.clone(),
                params,
            }),
            (Some(Value::String(method)), Some(raw_id)) => match id {
                Some(id) => Ok(Message::Request {
                    id,
                    method: method.clone(),
                    params,
                }),
                None => Err(invalid(
                    None,
                    &format!("\"id\" must be a string or an integer, not {raw_id}"),
                )),
            },
            (Some(_), _) => Err(invalid(id, "\"method\" must be a string")),
            (None, Some(_)) if object.contains_key("result") || object.contains_key("error") => {
                Ok(Message::Response)
            }
            (None, _) => Err(invalid(id, "a request needs a \"method\"")),
        }
    }
}

fn invalid(id: Option<RequestKey>, reason: &str) -> InvalidMessage {
    InvalidMessage {
        id,
        reason: reason.to_owned(),
    }
}

/// A JSON-RPC message serialized once, for the wire (a JSON body, an SSE event or a batch entry).
pub fn to_bytes(message: &impl serde::Serialize) -> bytes::Bytes {
    bytes::Bytes::from(serde_json::to_vec(message).unwrap_or_default())
}

/// A success response.
pub fn result(id: &RequestKey, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
}

/// A success response that borrows its result, for serializing straight to the wire.
#[derive(Debug, serde::Serialize)]
pub struct Success<R> {
    jsonrpc: &'static str,
    id: Value,
    result: R,
}

impl<R: serde::Serialize> Success<R> {
    /// The response to request `id`.
    pub fn new(id: &RequestKey, result: R) -> Success<R> {
        Success {
            jsonrpc: "2.0",
            id: id.to_value(),
            result,
        }
    }
}

/// An error response; `id` is `null` when the request's id could not be read.
pub fn error(id: Option<&RequestKey>, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = Map::new();
    error.insert("code".to_owned(), json!(code));
    error.insert("message".to_owned(), json!(message));
    if let Some(data) = data {
        error.insert("data".to_owned(), data);
    }
    json!({
        "jsonrpc": "2.0",
        "id": id.map_or(Value::Null, RequestKey::to_value),
        "error": Value::Object(error),
    })
}

/// A notification from the server.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_typed_keys() {
        let number = RequestKey::from_value(&json!(1));
        let text = RequestKey::from_value(&json!("1"));
        assert_ne!(number, text);
        assert_eq!(number.map(|key| key.to_value()), Some(json!(1)));
        assert_eq!(text.map(|key| key.to_value()), Some(json!("1")));
        assert_eq!(RequestKey::from_value(&json!(1.5)), None);
        assert_eq!(RequestKey::from_value(&Value::Null), None);
        assert_eq!(
            RequestKey::from_value(&json!(0)),
            Some(RequestKey::Number(0))
        );
    }

    #[test]
    fn parses_messages() {
        let request = Message::parse(&json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}));
        assert_eq!(
            request,
            Ok(Message::Request {
                id: RequestKey::Number(0),
                method: "ping".into(),
                params: Value::Null
            })
        );
        let notification =
            Message::parse(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(matches!(notification, Ok(Message::Notification { .. })));
        let response = Message::parse(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
        assert_eq!(response, Ok(Message::Response));
    }

    #[test]
    fn refuses_invalid_messages() {
        for bad in [
            json!([1]),
            json!("ping"),
            json!({"id": 1, "method": "ping"}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}),
        ] {
            assert!(Message::parse(&bad).is_err(), "{bad}");
        }
        let invalid = Message::parse(&json!({"jsonrpc": "1.0", "id": "a", "method": "ping"}));
        assert_eq!(
            invalid.err().and_then(|error| error.id),
            Some(RequestKey::Text("a".into()))
        );
    }

    #[test]
    fn builds_responses() {
        let id = RequestKey::Text("7".into());
        assert_eq!(
            result(&id, json!({})),
            json!({"jsonrpc": "2.0", "id": "7", "result": {}})
        );
        let error = error(None, codes::PARSE_ERROR, "bad", None);
        assert_eq!(error["id"], Value::Null);
        assert_eq!(error["error"]["code"], json!(-32700));
    }
}
