//! `execute`: every check, in the order of DESIGN section 3, before an action may run.
//!
//! resolve -> visibility -> `action`/`operation` inside params -> unknown arguments ->
//! placeholder values -> JSON Schema -> consent -> plan for dispatch.

use mcp_vocabulary::{ToolError, codes, next_call};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::consent::ConsentRefusal;
use super::guidance::{MAX_NAME_CHARS, clip};
use super::params_check::{check_schema, check_unknown};
use super::shaping::{Detail, HARD_MAX_BYTES};
use super::{ExecutePlan, Gateway, Prepared, Visibility};
use crate::catalog::{ActionRecord, Consent, ToolRecord};

/// Who the call comes from, for the consent check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    /// A client: destructive actions need a single-use grant.
    Client,
    /// Code inside the app (a test, a replayed script): whoever runs it already has consent.
    InProcess,
}

pub(super) fn execute(
    gateway: &Gateway,
    state: &Mutex<Visibility>,
    arguments: &mut Map<String, Value>,
    caller: Caller,
) -> Result<Prepared, ToolError> {
    let tool_name = arguments
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let action_name = arguments
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if tool_name.is_empty() {
        return Err(missing_tool(gateway, action_name, arguments.get("params")));
    }
    let tool = gateway.resolve_tool(tool_name)?;
    if action_name.is_empty() {
        return Err(ToolError::new(
            codes::MISSING_ACTION,
            format!("execute needs an action of {}", tool.name),
        )
        .next_call(next_call::describe(Some(tool.name), None, None)));
    }
    let found = gateway.resolve_action(tool, action_name)?;
    let action = found.action;
    super::check_scope(&state.lock(), tool, action)?;

    if gateway
        .configure_tool()
        .is_some_and(|configure| configure.name == tool.name)
    {
        // The visibility tool runs locally, exactly as configure does.
        let mut state = state.lock();
        let value =
            super::configure::run(gateway, &mut state, action.name, arguments.get("params"))?;
        return Ok(Prepared::Reply {
            value: std::sync::Arc::new(value),
            text: None,
            error: None,
            execute: None,
        });
    }

    let enabled = state.lock().is_enabled(tool.name);
    if !enabled {
        return Err(ToolError::new(codes::TOOL_DISABLED,
            format!("{} is disabled for this session", tool.name),
        )
        .hint("Enable it with configure enable_tools (the nextCall), then retry.")
        .next_call(json!({"operation": "configure", "action": "enable_tools", "params": {"tools": [tool.name]}})));
    }

    let no_params = Value::Object(Map::new());
    let given = match arguments.get("params") {
        None | Some(Value::Null) => &no_params,
        Some(given) => given,
    };
    let params = match given {
        Value::Object(params) => params,
        other => {
            return Err(ToolError::new(
                codes::INVALID_PARAMS,
                format!(
                    "params must be an object of {}.{}'s parameters, not {}",
                    tool.name,
                    action.name,
                    kind(other)
                ),
            )
            .next_call(next_call::describe(
                Some(tool.name),
                Some(action.name),
                None,
            )));
        }
    };
    check_misplaced(tool, action, arguments, params)?;
    check_unknown(tool, action, params)?;
    check_placeholders(gateway, tool, action, params)?;
    check_schema(gateway, tool, action, given)?;
    if caller == Caller::Client {
        check_consent(state, tool, action, arguments)?;
    }

    let options = arguments.get("options").and_then(Value::as_object);
    let option = |key: &str| options.and_then(|options| options.get(key));
    let (default_timeout, max_timeout) = gateway.timeouts();
    let timeout = option("timeoutMs")
        .and_then(Value::as_u64)
        .map_or(default_timeout, |millis| {
            Duration::from_millis(millis.max(1)).min(max_timeout)
        });
    let detail = match option("detail").and_then(Value::as_str) {
        Some("full") => Detail::Full,
        _ => Detail::Summary,
    };
    let max_bytes = option("maxBytes")
        .and_then(Value::as_u64)
        .map_or(HARD_MAX_BYTES, |bytes| {
            (bytes as usize).clamp(1024, HARD_MAX_BYTES)
        });
    // Every check passed: the params move into the plan.
    let params = match arguments.remove("params") {
        Some(params @ Value::Object(_)) => params,
        _ => no_params,
    };
    Ok(Prepared::Execute(ExecutePlan {
        tool,
        action,
        resolved_from: found.resolved_from,
        params,
        timeout,
        detail,
        max_bytes,
    }))
}

fn missing_tool(gateway: &Gateway, action_name: &str, params: Option<&Value>) -> ToolError {
    // `history.checkpoint` whole in `action`, the way search and the journal name actions: the
    // nextCall is the same call with the two apart.
    if let Some((tool, found)) = gateway.split_action_name(action_name) {
        let mut call =
            json!({"operation": "execute", "tool": tool.name, "action": found.action.name});
        if let Some(params @ Value::Object(_)) = params {
            call["params"] = params.clone();
        }
        return ToolError::new(
            codes::MISSING_TOOL,
            format!(
                "execute takes the tool and the action apart: \"{}\" is tool \"{}\", action \"{}\"",
                clip(action_name, MAX_NAME_CHARS),
                tool.name,
                found.action.name
            ),
        )
        .hint("Resend it as the nextCall.")
        .next_call(call);
    }
    let owners = gateway.catalog().actions_named(action_name);
    match owners.first() {
        Some(first) if !action_name.is_empty() => ToolError::new(
            codes::MISSING_TOOL,
            format!(
                "execute needs a tool: \"{action_name}\" is an action of {}",
                first.tool.name
            ),
        )
        .next_call(next_call::describe(
            Some(first.tool.name),
            Some(first.action.name),
            None,
        )),
        _ => ToolError::new(codes::MISSING_TOOL, "execute needs a tool and an action")
            .hint("Find them with search {query} or describe {}.")
            .next_call(next_call::describe(None, None, None)),
    }
}

/// `action` or `operation` inside params almost always means the call was nested wrongly.
fn check_misplaced(
    tool: &ToolRecord,
    action: &ActionRecord,
    arguments: &Map<String, Value>,
    params: &Map<String, Value>,
) -> Result<(), ToolError> {
    let misplaced: Vec<&str> = ["action", "operation"]
        .into_iter()
        .filter(|key| params.contains_key(*key) && action.param(key).is_none())
        .collect();
    let Some(first) = misplaced.first() else {
        return Ok(());
    };
    let mut fixed_params = params.clone();
    for key in &misplaced {
        fixed_params.remove(*key);
    }
    let mut fixed = arguments.clone();
    fixed.insert("params".to_owned(), Value::Object(fixed_params));
    Err(ToolError::new(
        codes::INVALID_PARAMS,
        format!(
            "\"{first}\" belongs at the top level of the call, not inside params of {}.{}",
            tool.name, action.name
        ),
    )
    .hint("The nextCall is your call with it removed from params.")
    .next_call(Value::Object(fixed)))
}

/// Values a model writes when it does not know the real one.
fn is_placeholder(text: &str) -> bool {
    let lower = text.trim().to_ascii_lowercase();
    let exact = [
        "tbd",
        "todo",
        "fixme",
        "placeholder",
        "changeme",
        "change_me",
        "replace_me",
        "replaceme",
        "replace-me",
        "undefined",
        "example",
        "...",
        "…",
        "?",
        "??",
        "???",
        "your_value",
        "your-value",
    ];
    if exact.contains(&lower.as_str()) {
        return true;
    }
    let wrapped = |open: &str, close: &str| {
        lower.starts_with(open) && lower.ends_with(close) && lower.len() > open.len() + close.len()
    };
    if wrapped("<", ">") || wrapped("{{", "}}") || wrapped("${", "}") || wrapped("[[", "]]") {
        return true;
    }
    if lower.len() >= 3 && lower.chars().all(|c| c == 'x') {
        return true;
    }
    let starts_with_word = |prefix: &str| {
        lower
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(['_', '-']) && rest.len() > 1)
    };
    if starts_with_word("your")
        || starts_with_word("some")
        || starts_with_word("insert")
        || starts_with_word("enter")
    {
        return true;
    }
    // dummy_1, dummy-entity, example_id, placeholder_2
    ["dummy", "example", "placeholder", "sample"]
        .iter()
        .any(|word| starts_with_word(word))
}

fn check_placeholders(
    gateway: &Gateway,
    tool: &ToolRecord,
    action: &ActionRecord,
    params: &Map<String, Value>,
) -> Result<(), ToolError> {
    for (name, value) in params {
        let Some(found) = find_placeholder(value) else {
            continue;
        };
        let (hint, next_call) = where_to_look(gateway, tool, action, name);
        return Err(ToolError::new(
            codes::PLACEHOLDER_VALUE,
            format!(
                "\"{}\" in {name} is a placeholder, not a real value",
                clip(found, MAX_NAME_CHARS)
            ),
        )
        .hint(hint)
        .next_call(next_call));
    }
    Ok(())
}

fn find_placeholder(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) if is_placeholder(text) => Some(text),
        Value::Array(items) => items.iter().find_map(find_placeholder),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            if is_placeholder(key) {
                Some(key.as_str())
            } else {
                find_placeholder(item)
            }
        }),
        _ => None,
    }
}

/// Where the real value of parameter `name` can be found.
/// Where the real value of parameter `name` can be found: the identity's first lookup that
/// applies, else the parameter's own contract.
fn where_to_look(
    gateway: &Gateway,
    tool: &ToolRecord,
    action: &ActionRecord,
    name: &str,
) -> (String, Value) {
    let type_label = action.param(name).map_or("", |param| param.type_label);
    if let Some(lookup) = gateway
        .identity()
        .lookups
        .iter()
        .find(|lookup| lookup.applies_to(name, type_label))
    {
        return (
            lookup.hint.clone(),
            next_call::describe_action(&lookup.tool, &lookup.action),
        );
    }
    (
        format!("See what {name} takes in the action's contract."),
        next_call::describe(Some(tool.name), Some(action.name), Some(name)),
    )
}

fn check_consent(
    state: &Mutex<Visibility>,
    tool: &ToolRecord,
    action: &ActionRecord,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    if action.consent == Consent::None {
        return Ok(());
    }
    let mut state = state.lock();
    let refusal = match state.consent.redeem(
        tool.name,
        action.name,
        action.consent,
        arguments.get("consent"),
    ) {
        Ok(()) => return Ok(()),
        Err(refusal) => refusal,
    };
    let grant = state.consent.issue(tool.name, action.name, action.consent);
    let mut retry = arguments.clone();
    retry.insert("consent".to_owned(), grant.clone());
    let (code, message) = match refusal {
        ConsentRefusal::Missing => (
            codes::CONSENT_REQUIRED,
            format!(
                "{}.{} is {}: it needs {} consent. Resend with the consentGrant only if the user wants this.",
                tool.name,
                action.name,
                action.effect.as_str(),
                action.consent.as_str()
            ),
        ),
        ConsentRefusal::Reused => (
            codes::CONSENT_REUSED,
            "that consent grant was already used; grants work once. A fresh one is attached."
                .to_owned(),
        ),
        ConsentRefusal::Invalid(reason) => (
            codes::CONSENT_INVALID,
            format!("the consent grant was refused: {reason}. A fresh one is attached."),
        ),
    };
    Err(ToolError::new(code, message)
        .details(json!({"consentGrant": grant}))
        .next_call(Value::Object(retry)))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_recognised() {
        for placeholder in [
            "TBD",
            "xxx",
            "XXXX",
            "dummy_1",
            "dummy-entity",
            "<entity>",
            "<id>",
            "your_entity",
            "your-entity-id",
            "REPLACE_ME",
            "{{entity}}",
            "${ID}",
            "placeholder",
            "example_id",
            "some_entity",
            "...",
            "todo",
        ] {
            assert!(is_placeholder(placeholder), "{placeholder}");
        }
    }

    #[test]
    fn real_values_that_contain_such_words_are_accepted() {
        for real in [
            "Player",
            "Your Castle",
            "TBD Tower",
            "Example Room 2",
            "dummyHealth",
            "box<T>",
            "x",
            "xy",
            "Dummy",
            "Training Dummy",
            "12v1",
            "bevy_transform::components::transform::Transform",
            "Todo List Board",
            "Xxx_Boss",
            "sampler",
        ] {
            assert!(!is_placeholder(real), "{real}");
        }
    }
}
