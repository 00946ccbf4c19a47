//! The top-level arguments of the `bevy` tool: which keys each operation takes, and their lengths.

use super::*;

/// Whether a tool can be switched off on its own: protected tools cannot. (The core category as
/// a whole cannot be disabled either; its unprotected tools can, one by one.)
pub(crate) fn can_disable(tool: &ToolRecord) -> bool {
    !tool.protected
}

/// Refuses names and queries longer than any real one before any work is done on them: no
/// suggestion is computed for them and they are not echoed back.
pub(super) fn check_lengths(arguments: &Map<String, Value>) -> Result<(), ToolError> {
    let too_long = |key: &str, limit: usize| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(|text| text.chars().count())
            .filter(|count| *count > limit)
    };
    for key in ["operation", "tool", "action", "param"] {
        if let Some(count) = too_long(key, MAX_NAME_CHARS) {
            return Err(ToolError::new(
                codes::ARGUMENT_TOO_LONG,
                format!(
                    "\"{key}\" is {count} characters long; names have at most {MAX_NAME_CHARS}"
                ),
            )
            .hint("No name is that long: list the real ones with the nextCall.")
            .next_call(next_call::describe(None, None, None)));
        }
    }
    if let Some(count) = too_long("query", MAX_QUERY_CHARS) {
        return Err(ToolError::new(
            codes::ARGUMENT_TOO_LONG,
            format!("\"query\" is {count} characters long; queries have at most {MAX_QUERY_CHARS}"),
        )
        .hint("Say what you want to do in a few words.")
        .next_call(next_call::describe(None, None, None)));
    }
    Ok(())
}

/// The top-level keys each operation accepts.
pub(super) fn allowed_keys(operation: &str) -> &'static [&'static str] {
    match operation {
        "describe" => &[
            "operation",
            "tool",
            "action",
            "param",
            "query",
            "limit",
            "offset",
        ],
        "search" => &["operation", "query", "category", "effect", "limit"],
        "configure" => &["operation", "action", "params"],
        _ => &[
            "operation",
            "tool",
            "action",
            "params",
            "consent",
            "options",
        ],
    }
}

/// Refuses unknown top-level keys. A key that is a parameter name gets moved into `params` in
/// the nextCall, since that is almost always what was meant.
pub(super) fn check_top_level_keys(
    operation: &str,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    let allowed = allowed_keys(operation);
    let unknown: Vec<&String> = arguments
        .keys()
        .filter(|key| !allowed.contains(&key.as_str()))
        .collect();
    let Some(first) = unknown.first() else {
        return Ok(());
    };
    let mut error = ToolError::new(
        codes::UNKNOWN_ARGUMENT,
        format!(
            "\"{}\" is not an argument of {operation}; it accepts {}",
            clip(first, MAX_NAME_CHARS),
            allowed.join(", ")
        ),
    )
    .suggestions(suggest(first, allowed.iter().copied()));
    if operation == "execute" || operation == "configure" {
        let mut fixed = arguments.clone();
        let mut params = fixed
            .remove("params")
            .and_then(|params| params.as_object().cloned())
            .unwrap_or_default();
        for key in &unknown {
            if let Some(value) = fixed.remove(key.as_str()) {
                params.insert((*key).clone(), value);
            }
        }
        fixed.insert("params".to_owned(), Value::Object(params));
        error = error
            .hint("Action parameters go inside params; the nextCall moves them there.")
            .next_call(Value::Object(fixed));
    } else {
        let mut fixed = arguments.clone();
        for key in &unknown {
            fixed.remove(key.as_str());
        }
        error = error.next_call(Value::Object(fixed));
    }
    Err(error)
}
