//! The checks of an action's params that `execute` and `configure` share: no unknown parameter,
//! and the action's JSON Schema.

use mcp_vocabulary::{ToolError, codes, next_call};
use serde_json::{Map, Value, json};

use super::Gateway;
use super::guidance::{MAX_NAME_CHARS, clip, suggest};
use crate::catalog::{ActionRecord, ToolRecord};

/// How many schema violations one error lists.
const MAX_VIOLATIONS: usize = 5;
/// The longest schema problem text an error carries (it quotes the offending value).
const MAX_PROBLEM_CHARS: usize = 300;

/// A value as an error shows it back: short ones whole, long strings cut, big lists and objects
/// summarized.
fn shown_value(value: &Value) -> Value {
    match value {
        Value::String(text) => json!(clip(text, MAX_NAME_CHARS)),
        Value::Array(items) if items.len() > 16 => json!(format!("[{} items]", items.len())),
        Value::Object(map) if map.len() > 16 => json!(format!("{{{} keys}}", map.len())),
        Value::Array(_) | Value::Object(_) if value.to_string().len() > 512 => {
            json!("[a large value]")
        }
        other => other.clone(),
    }
}

/// The checks `configure` shares with `execute`: unknown arguments, then the schema.
pub(super) fn check_params(
    gateway: &Gateway,
    tool: &'static ToolRecord,
    action: &ActionRecord,
    params: &Map<String, Value>,
) -> Result<(), ToolError> {
    check_unknown(tool, action, params)?;
    check_schema(gateway, tool, action, &Value::Object(params.clone()))
}

/// An unknown parameter is named, with the closest accepted ones and the sibling actions that
/// take it.
pub(super) fn check_unknown(
    tool: &'static ToolRecord,
    action: &ActionRecord,
    params: &Map<String, Value>,
) -> Result<(), ToolError> {
    let Some(unknown) = params.keys().find(|key| action.param(key).is_none()) else {
        return Ok(());
    };
    let suggestions = suggest(unknown, action.params.iter().map(|param| param.name));
    let siblings: Vec<&str> = tool
        .actions
        .iter()
        .filter(|other| other.name != action.name && other.param(unknown).is_some())
        .map(|other| other.name)
        .collect();
    let accepted: Vec<&str> = action.params.iter().map(|param| param.name).collect();
    let mut message = format!(
        "{}.{} has no parameter \"{}\"",
        tool.name,
        action.name,
        clip(unknown, MAX_NAME_CHARS)
    );
    if let Some(best) = suggestions.first() {
        message.push_str(&format!("; did you mean \"{best}\"?"));
    }
    let mut error = ToolError::new(codes::UNKNOWN_PARAM, message).suggestions(suggestions.clone());
    if !siblings.is_empty() {
        let names: Vec<String> = siblings
            .iter()
            .map(|name| format!("{}.{name}", tool.name))
            .collect();
        error = error.hint(format!(
            "\"{unknown}\" is a parameter of {}",
            names.join(", ")
        ));
    }
    error = error.details(json!({"accepted": accepted}));
    let next_call = match (suggestions.first(), siblings.first()) {
        (Some(best), _) => next_call::describe(Some(tool.name), Some(action.name), Some(best)),
        (None, Some(sibling)) => next_call::describe(Some(tool.name), Some(sibling), None),
        (None, None) => next_call::describe(Some(tool.name), Some(action.name), None),
    };
    Err(error.next_call(next_call))
}

/// Every schema violation (at most a few), the first one in the message.
pub(super) fn check_schema(
    gateway: &Gateway,
    tool: &ToolRecord,
    action: &ActionRecord,
    params: &Value,
) -> Result<(), ToolError> {
    let Some(validator) = gateway.validator(tool.name, action.name) else {
        return Ok(());
    };
    let violations: Vec<Value> = validator
        .iter_errors(params)
        .take(MAX_VIOLATIONS)
        .map(|error| {
            // The problem text quotes the value: both are cut, so a huge value is not echoed.
            json!({
                "pointer": clip(&error.instance_path().to_string(), MAX_NAME_CHARS),
                "value": shown_value(error.instance().as_ref()),
                "problem": clip(&error.to_string(), MAX_PROBLEM_CHARS),
            })
        })
        .collect();
    let Some(first) = violations.first() else {
        return Ok(());
    };
    let pointer = first["pointer"].as_str().unwrap_or_default();
    let param = pointer
        .trim_start_matches('/')
        .split('/')
        .next()
        .filter(|name| !name.is_empty());
    let location = if pointer.is_empty() {
        "params".to_owned()
    } else {
        format!("params{pointer}")
    };
    Err(ToolError::new(
        codes::INVALID_PARAMS,
        format!(
            "{location}: {}",
            first["problem"].as_str().unwrap_or("invalid")
        ),
    )
    .hint("Fix the value at the pointer; the nextCall shows what the parameter takes.")
    .details(json!({"violations": violations}))
    .next_call(next_call::describe(
        Some(tool.name),
        Some(action.name),
        param.filter(|name| action.param(name).is_some()),
    )))
}
