//! The audit trail: one entry per `execute`, handed to whoever keeps it (the bridge keeps a
//! bounded ring and, optionally, a JSON-lines file). Secrets never reach it.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::{Map, Value, json};

/// One finished (or refused) `execute`.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// When it finished.
    pub at: SystemTime,
    /// The first 8 characters of the session id.
    pub session: String,
    /// The session's token as logs name it (its label or `tok-` and a fingerprint prefix;
    /// never the token), when the server has tokens.
    pub token: Option<String>,
    /// `tool.action` as called (canonical when it resolved).
    pub action: String,
    /// `read`, `write`, `destructive`, or `unknown` when it did not resolve.
    pub effect: String,
    /// `ok`, or the error code (`CANCELLED` when the client cancelled).
    pub outcome: String,
    /// From the call to its outcome.
    pub duration: Duration,
    /// The parameters, with secret-looking keys and values redacted.
    pub params: Value,
}

impl AuditEntry {
    /// The entry as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).unwrap_or(Value::Null)
    }

    /// The entry as one line of JSON (what the trail's file holds).
    pub fn to_line(&self) -> String {
        // Serializing strings, numbers and a `Value` cannot fail.
        serde_json::to_string(&self.view()).unwrap_or_default()
    }

    fn view(&self) -> EntryView<'_> {
        EntryView {
            time: self
                .at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|since| since.as_secs_f64())
                .unwrap_or(0.0),
            session: &self.session,
            token: self.token.as_deref(),
            action: &self.action,
            effect: &self.effect,
            outcome: &self.outcome,
            duration_ms: self.duration.as_secs_f64() * 1000.0,
            params: &self.params,
        }
    }
}

/// An entry's JSON form, serialized without building a `Value` first.
#[derive(Serialize)]
struct EntryView<'a> {
    time: f64,
    session: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<&'a str>,
    action: &'a str,
    effect: &'a str,
    outcome: &'a str,
    #[serde(rename = "durationMs")]
    duration_ms: f64,
    params: &'a Value,
}

/// Keeps audit entries. Called on the transport's threads; must not block for long.
pub trait AuditSink: Send + Sync + 'static {
    /// Records one entry.
    fn record(&self, entry: AuditEntry);
}

/// What replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// Words that mark a key as naming a secret, as keys are compared: without `-` and `_`.
const SECRET_KEY_STEMS: [&[u8]; 8] = [
    b"token",
    b"password",
    b"passwd",
    b"secret",
    b"apikey",
    b"auth",
    b"credential",
    b"privatekey",
];

/// Whether a key names a secret (`token`, `accessToken`, `db_password`, `apiKey`, `api-key`, ...):
/// compared without `-` and `_`, ASCII case folded.
fn is_secret_key(key: &str) -> bool {
    let folded: Vec<u8> = key
        .bytes()
        .filter(|byte| !matches!(byte, b'-' | b'_'))
        .map(|byte| byte.to_ascii_lowercase())
        .collect();
    SECRET_KEY_STEMS
        .iter()
        .any(|stem| folded.windows(stem.len()).any(|window| window == *stem))
}

/// Whether a string looks like a credential: long, one word, letters and digits mixed.
fn looks_like_secret(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("bearer ") || lower.starts_with("sk-") || lower.starts_with("ghp_") {
        return true;
    }
    text.len() >= 32
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/' | '=' | '.'))
        && text.chars().any(|c| c.is_ascii_digit())
        && text.chars().any(|c| c.is_ascii_alphabetic())
}

/// Strings longer than this (in characters) are cut in an audit entry.
pub const MAX_STRING_CHARS: usize = 200;
/// Arrays and objects keep at most this many items in an audit entry.
pub const MAX_ITEMS: usize = 20;
/// Deeper values are replaced by a marker in an audit entry.
pub const MAX_DEPTH: usize = 6;
/// An entry's params never take more than this (serialized); beyond it only their size is kept.
pub const MAX_PARAMS_BYTES: usize = 2048;

/// What an audit entry keeps of a call's params: secrets redacted ([`redact`]), long strings,
/// long lists and deep values cut, and at most [`MAX_PARAMS_BYTES`] in all, so the trail holds
/// what was called, not megabytes of it.
pub fn summarize(params: &Value) -> Value {
    let summary = summary_of(params, 0);
    let bytes = serde_json::to_vec(&summary).map_or(0, |text| text.len());
    if bytes <= MAX_PARAMS_BYTES {
        return summary;
    }
    let original = serde_json::to_vec(params).map_or(0, |text| text.len());
    json!({"truncated": true, "bytes": original})
}

/// `value` redacted ([`redact`]'s rules) and bounded (strings, items, depth) in one pass.
fn summary_of(value: &Value, depth: usize) -> Value {
    if depth >= MAX_DEPTH && (value.is_object() || value.is_array()) {
        return json!("[nested]");
    }
    match value {
        Value::String(text) if looks_like_secret(text) => json!(REDACTED),
        Value::String(text) => match text.char_indices().nth(MAX_STRING_CHARS) {
            None => value.clone(),
            Some((end, _)) => json!(format!("{}…({} bytes)", &text[..end], text.len())),
        },
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(MAX_ITEMS)
                .map(|item| summary_of(item, depth + 1))
                .collect();
            if items.len() > MAX_ITEMS {
                kept.push(json!(format!("…{} more", items.len() - MAX_ITEMS)));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            let mut kept: Map<String, Value> = map
                .iter()
                .take(MAX_ITEMS)
                .map(|(key, item)| {
                    let item = if is_secret_key(key) {
                        json!(REDACTED)
                    } else {
                        summary_of(item, depth + 1)
                    };
                    let key = match key.char_indices().nth(MAX_STRING_CHARS) {
                        None => key.clone(),
                        Some((end, _)) => format!("{}…", &key[..end]),
                    };
                    (key, item)
                })
                .collect();
            if map.len() > MAX_ITEMS {
                kept.insert(
                    "…".to_owned(),
                    json!(format!("{} more keys", map.len() - MAX_ITEMS)),
                );
            }
            Value::Object(kept)
        }
        other => other.clone(),
    }
}

/// A copy of `params` with secret-looking keys and values replaced by [`REDACTED`].
pub fn redact(params: &Value) -> Value {
    match params {
        Value::Object(map) => {
            let redacted: Map<String, Value> = map
                .iter()
                .map(|(key, value)| {
                    if is_secret_key(key) {
                        (key.clone(), json!(REDACTED))
                    } else {
                        (key.clone(), redact(value))
                    }
                })
                .collect();
            Value::Object(redacted)
        }
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(text) if looks_like_secret(text) => json!(REDACTED),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_are_redacted_at_any_depth() {
        let params = json!({
            "token": "abc",
            "nested": {"password": "hunter2", "apiKey": "k", "api_key": "k", "db-secret": "s", "name": "Player"},
            "list": [{"accessToken": "t"}],
            "Authorization": "x",
        });
        let redacted = redact(&params);
        assert_eq!(redacted["token"], json!(REDACTED));
        for key in ["password", "apiKey", "api_key", "db-secret"] {
            assert_eq!(redacted["nested"][key], json!(REDACTED), "{key}");
        }
        assert_eq!(redacted["nested"]["name"], json!("Player"));
        assert_eq!(redacted["list"][0]["accessToken"], json!(REDACTED));
        assert_eq!(redacted["Authorization"], json!(REDACTED));
    }

    #[test]
    fn entries_keep_a_bounded_summary_of_the_params() {
        let huge = json!({"name": "n".repeat(1024 * 1024), "list": (0..1000).collect::<Vec<_>>()});
        let summary = summarize(&huge);
        let bytes = serde_json::to_vec(&summary).map_or(usize::MAX, |text| text.len());
        assert!(bytes <= MAX_PARAMS_BYTES, "{bytes} bytes");
        assert!(
            summary["name"]
                .as_str()
                .is_some_and(|name| name.ends_with("(1048576 bytes)"))
        );
        assert_eq!(
            summary["list"].as_array().map(Vec::len),
            Some(MAX_ITEMS + 1)
        );
        let wide: Map<String, Value> = (0..5000)
            .map(|index| (format!("key{index}"), json!("v".repeat(150))))
            .collect();
        let summary = summarize(&Value::Object(wide));
        assert_eq!(summary["truncated"], json!(true));
        let small = json!({"entity": "Player", "token": "secret"});
        assert_eq!(
            summarize(&small),
            json!({"entity": "Player", "token": REDACTED})
        );
    }

    #[test]
    fn summaries_redact_secrets_at_any_depth_however_the_key_is_spelled() {
        let params = json!({
            "nested": {"list": [{"API-Key": "k", "db_Password": "p", "name": "Player"}]},
            "value": "4f9c2b7e1d8a6035c4b2e9f7a1d3c5b8e0f2a4c6",
            "keys": 3,
        });
        let summary = summarize(&params);
        assert_eq!(
            summary,
            json!({
                "nested": {"list": [{"API-Key": REDACTED, "db_Password": REDACTED, "name": "Player"}]},
                "value": REDACTED,
                "keys": 3,
            })
        );
    }

    #[test]
    fn secret_looking_values_are_redacted_and_ordinary_ones_kept() {
        let params = json!({
            "value": "4f9c2b7e1d8a6035c4b2e9f7a1d3c5b8e0f2a4c6",
            "header": "Bearer abc",
            "key": "sk-live-1",
            "name": "A very long but ordinary entity name with spaces",
            "type": "bevy_transform::components::transform::Transform",
            "bits": 4294967308u64,
        });
        let redacted = redact(&params);
        assert_eq!(redacted["value"], json!(REDACTED));
        assert_eq!(redacted["header"], json!(REDACTED));
        assert_eq!(redacted["key"], json!(REDACTED));
        assert_eq!(redacted["name"], params["name"]);
        assert_eq!(redacted["type"], params["type"]);
        assert_eq!(redacted["bits"], params["bits"]);
    }
}
