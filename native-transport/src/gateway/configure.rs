//! `configure`: the visibility tool's actions (the identity's `configure_tool`, `manage_tools` in
//! the bridge), run here on the session's own visibility.
//! One session's changes never reach another; bad input changes nothing.

use mcp_vocabulary::{ToolError, codes, next_call};
use serde_json::{Map, Value, json};

use super::guidance::suggest;
use super::{Gateway, Visibility, can_disable, params_check};
use crate::catalog::{Category, ToolRecord};

/// The `configure` operation: its `action` and `params` arguments.
pub(super) fn configure(
    gateway: &Gateway,
    state: &mut Visibility,
    arguments: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let action_name = arguments
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default();
    run(gateway, state, action_name, arguments.get("params"))
}

/// Runs one action of the visibility tool on this session (also reached through `execute`).
pub(super) fn run(
    gateway: &Gateway,
    state: &mut Visibility,
    action_name: &str,
    params: Option<&Value>,
) -> Result<Value, ToolError> {
    let Some(manage_tools) = gateway.configure_tool() else {
        return Err(ToolError::new(
            codes::UNKNOWN_OPERATION,
            "configure is not available: this server's catalog has no visibility tool",
        )
        .next_call(next_call::describe(None, None, None)));
    };
    if action_name.is_empty() {
        return Err(ToolError::new(
            codes::MISSING_ACTION,
            format!("configure needs an action of {}", manage_tools.name),
        )
        .next_call(next_call::describe(Some(manage_tools.name), None, None)));
    }
    let action = gateway.resolve_action(manage_tools, action_name)?.action;
    super::check_scope(state, manage_tools, action)?;
    let params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return Err(
                ToolError::new(codes::INVALID_PARAMS, "params must be an object").next_call(
                    next_call::describe(Some(manage_tools.name), Some(action.name), None),
                ),
            );
        }
    };
    params_check::check_params(gateway, manage_tools, action, &params)?;
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    let names = |key: &str| -> Vec<String> {
        params
            .get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let tools = gateway.catalog().tools;
    match action.name {
        "list_tools" => Ok(list_tools(tools, state, text("category"))),
        "list_categories" => Ok(list_categories(tools, state)),
        "enable_tools" => enable_tools(gateway, state, &names("tools")),
        "disable_tools" => disable_tools(gateway, state, &names("tools")),
        "enable_category" => {
            let category = category_param(text("category"))?;
            let enabled: Vec<&str> = tools
                .iter()
                .filter(|tool| tool.category == category && state.disabled.remove(tool.name))
                .map(|tool| tool.name)
                .collect();
            Ok(json!({ "category": category.as_str(), "enabled": enabled }))
        }
        "disable_category" => disable_category(tools, state, manage_tools, text("category")),
        "get_status" => {
            let changed: Vec<&str> = tools
                .iter()
                .filter(|tool| {
                    state.disabled.contains(tool.name) != state.start.contains(tool.name)
                })
                .map(|tool| tool.name)
                .collect();
            let (enabled, disabled) = split(tools, state);
            Ok(json!({ "enabled": enabled, "disabled": disabled, "changedFromStart": changed }))
        }
        "reset" => {
            state.disabled = state.start.clone();
            let (enabled, disabled) = split(tools, state);
            Ok(json!({ "enabled": enabled, "disabled": disabled }))
        }
        other => Err(ToolError::new(
            codes::UNKNOWN_ACTION,
            format!("{}.{other} is not handled by configure", manage_tools.name),
        )
        .next_call(next_call::describe(Some(manage_tools.name), None, None))),
    }
}

/// `list_tools`: every tool (of one category) and whether this session has it.
fn list_tools(tools: &'static [ToolRecord], state: &Visibility, category: Option<&str>) -> Value {
    let category = category.and_then(Category::parse);
    let rows: Vec<Value> = tools
        .iter()
        .filter(|tool| category.is_none_or(|category| tool.category == category))
        .map(|tool| {
            json!({
                "tool": tool.name,
                "category": tool.category.as_str(),
                "enabled": state.is_enabled(tool.name),
                "protected": !can_disable(tool),
                "actionCount": tool.actions.len(),
            })
        })
        .collect();
    json!({ "tools": rows })
}

/// `list_categories`: each category's tools, and whether this session has them all.
fn list_categories(tools: &'static [ToolRecord], state: &Visibility) -> Value {
    let rows: Vec<Value> = Category::ALL
        .iter()
        .map(|category| {
            let members: Vec<&ToolRecord> = tools
                .iter()
                .filter(|tool| tool.category == *category)
                .collect();
            json!({
                "category": category.as_str(),
                "tools": members.iter().map(|tool| tool.name).collect::<Vec<_>>(),
                "enabled": members.iter().all(|tool| state.is_enabled(tool.name)),
                "protected": *category == Category::Core,
            })
        })
        .collect();
    json!({ "categories": rows })
}

/// `enable_tools`: all named tools, or none when one is unknown.
fn enable_tools(
    gateway: &Gateway,
    state: &mut Visibility,
    names: &[String],
) -> Result<Value, ToolError> {
    let chosen = known_tools(gateway, names)?;
    let (mut enabled, mut already) = (Vec::new(), Vec::new());
    for tool in chosen {
        if state.disabled.remove(tool.name) {
            enabled.push(tool.name);
        } else {
            already.push(tool.name);
        }
    }
    Ok(json!({ "enabled": enabled, "alreadyEnabled": already }))
}

/// `disable_tools`: all named tools, or none when one is unknown or protected.
fn disable_tools(
    gateway: &Gateway,
    state: &mut Visibility,
    names: &[String],
) -> Result<Value, ToolError> {
    let chosen = known_tools(gateway, names)?;
    if let Some(protected) = chosen.iter().find(|tool| !can_disable(tool)) {
        return Err(ToolError::new(
            codes::TOOL_PROTECTED,
            format!(
                "{} is protected (core tools cannot be disabled); nothing was changed",
                protected.name
            ),
        )
        .next_call(json!({"operation": "configure", "action": "list_tools"})));
    }
    let (mut disabled, mut already) = (Vec::new(), Vec::new());
    for tool in chosen {
        if state.disabled.insert(tool.name) {
            disabled.push(tool.name);
        } else {
            already.push(tool.name);
        }
    }
    Ok(json!({ "disabled": disabled, "alreadyDisabled": already }))
}

/// `disable_category`: every unprotected tool of it; the core category never.
fn disable_category(
    tools: &'static [ToolRecord],
    state: &mut Visibility,
    manage_tools: &ToolRecord,
    category: Option<&str>,
) -> Result<Value, ToolError> {
    let category = category_param(category)?;
    if category == Category::Core {
        return Err(ToolError::new(
            codes::CATEGORY_PROTECTED,
            "the core category cannot be disabled; nothing was changed",
        )
        .hint(format!(
            "Disable single unprotected tools with {}.disable_tools.",
            manage_tools.name
        ))
        .next_call(json!({"operation": "configure", "action": "list_tools"})));
    }
    let disabled: Vec<&str> = tools
        .iter()
        .filter(|tool| {
            tool.category == category && can_disable(tool) && state.disabled.insert(tool.name)
        })
        .map(|tool| tool.name)
        .collect();
    Ok(json!({ "category": category.as_str(), "disabled": disabled }))
}

fn split(
    tools: &'static [ToolRecord],
    state: &Visibility,
) -> (Vec<&'static str>, Vec<&'static str>) {
    let enabled = tools
        .iter()
        .filter(|tool| state.is_enabled(tool.name))
        .map(|tool| tool.name)
        .collect();
    let disabled = tools
        .iter()
        .filter(|tool| !state.is_enabled(tool.name))
        .map(|tool| tool.name)
        .collect();
    (enabled, disabled)
}

/// Every name must be a tool; otherwise nothing changes and the closest names are suggested.
fn known_tools(gateway: &Gateway, names: &[String]) -> Result<Vec<&'static ToolRecord>, ToolError> {
    let mut found = Vec::new();
    for name in names {
        match gateway.catalog().tool(name) {
            Some(tool) => found.push(tool),
            None => {
                return Err(ToolError::new(
                    codes::UNKNOWN_TOOL,
                    format!("no tool is named \"{name}\"; nothing was changed"),
                )
                .suggestions(suggest(
                    name,
                    gateway.catalog().tools.iter().map(|tool| tool.name),
                ))
                .next_call(json!({"operation": "configure", "action": "list_tools"})));
            }
        }
    }
    Ok(found)
}

fn category_param(name: Option<&str>) -> Result<Category, ToolError> {
    name.and_then(Category::parse).ok_or_else(|| {
        ToolError::new(
            codes::INVALID_PARAMS,
            "category must be core, world, gameplay or utility",
        )
        .next_call(json!({"operation": "configure", "action": "list_categories"}))
    })
}
