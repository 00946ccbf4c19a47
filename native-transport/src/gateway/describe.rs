//! `describe`: the catalog, a tool, an action, or one parameter.

use mcp_vocabulary::{ToolError, codes, next_call};
use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::guidance::{MAX_NAME_CHARS, clip, suggest};
use super::{Gateway, Visibility, mark_runnable, stamp};
use crate::catalog::{ActionRecord, Consent, Scope, ToolRecord};

/// Default and largest page of actions for `describe {tool}`.
const DEFAULT_PAGE: usize = 25;
const MAX_PAGE: usize = 50;

pub(super) fn describe(
    gateway: &Gateway,
    state: &Mutex<Visibility>,
    arguments: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    match (text("tool"), text("action"), text("param")) {
        // The gateway answers it from its cache (`Gateway::catalog_overview`).
        (None, None, None) => Ok(catalog_overview(gateway, &state.lock().view())),
        (None, Some(action), _) => {
            if let Some((tool, found)) = gateway.split_action_name(action) {
                return Err(ToolError::new(
                    codes::MISSING_TOOL,
                    format!(
                        "describe takes the tool and the action apart: \"{}\" is tool \"{}\", action \"{}\"",
                        clip(action, MAX_NAME_CHARS),
                        tool.name,
                        found.action.name
                    ),
                )
                .next_call(next_call::describe(
                    Some(tool.name),
                    Some(found.action.name),
                    text("param"),
                )));
            }
            // An action without its tool: find the tool for the model.
            let found = gateway.catalog().actions_named(action);
            match found.first() {
                Some(first) => Err(ToolError::new(
                    codes::MISSING_TOOL,
                    format!(
                        "describe needs the tool of \"{action}\": it is an action of {}",
                        first.tool.name
                    ),
                )
                .next_call(next_call::describe(
                    Some(first.tool.name),
                    Some(first.action.name),
                    text("param"),
                ))),
                None => Err(ToolError::new(
                    codes::MISSING_TOOL,
                    format!("describe needs a tool; no tool has an action \"{action}\""),
                )
                .next_call(json!({"operation": "search", "query": action.replace('_', " ")}))),
            }
        }
        (None, None, Some(_)) => Err(ToolError::new(
            codes::MISSING_TOOL,
            "describe {param} needs a tool and an action",
        )
        .next_call(next_call::describe(None, None, None))),
        (Some(tool), None, param) => {
            let tool = gateway.resolve_tool(tool)?;
            if param.is_some() {
                return Err(ToolError::new(
                    codes::MISSING_ACTION,
                    format!("describe {{param}} needs an action of {}", tool.name),
                )
                .next_call(next_call::describe(Some(tool.name), None, None)));
            }
            let view = state.lock().view();
            Ok(tool_page(gateway, &view, tool, arguments))
        }
        (Some(tool), Some(action), None) => {
            let tool = gateway.resolve_tool(tool)?;
            let found = gateway.resolve_action(tool, action)?;
            Ok(action_contract(
                gateway,
                state,
                tool,
                found.action,
                found.resolved_from,
            ))
        }
        (Some(tool), Some(action), Some(param)) => {
            let tool = gateway.resolve_tool(tool)?;
            let found = gateway.resolve_action(tool, action)?;
            param_schema(gateway, tool, found.action, param)
        }
    }
}

/// Whether the arguments ask for the catalog itself (no tool, action or param).
pub(super) fn is_catalog_overview(arguments: &Map<String, Value>) -> bool {
    ["tool", "action", "param"].iter().all(|key| {
        arguments
            .get(*key)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    })
}

/// Every tool with whether this session may use it.
pub(super) fn catalog_overview(gateway: &Gateway, state: &Visibility) -> Value {
    let tools: Vec<Value> = gateway
        .catalog()
        .tools
        .iter()
        .map(|tool| {
            json!({
                "tool": tool.name,
                "category": tool.category.as_str(),
                "summary": tool.summary,
                "enabled": state.is_enabled(tool.name),
                "actionCount": tool.actions.len(),
                "nextCall": next_call::describe(Some(tool.name), None, None),
            })
        })
        .collect();
    let mut body = Map::new();
    body.insert("tools".to_owned(), json!(tools));
    if state.scope() != Scope::Admin {
        body.insert("sessionScope".to_owned(), json!(state.scope().as_str()));
    }
    body.insert(
        "hint".to_owned(),
        json!("Describe a tool to list its actions, or search {query} by intent."),
    );
    stamp(gateway, "catalog", body)
}

fn tool_page(
    gateway: &Gateway,
    state: &Visibility,
    tool: &'static ToolRecord,
    arguments: &Map<String, Value>,
) -> Value {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .filter(|query| !query.is_empty());
    let matching: Vec<&ActionRecord> = tool
        .actions
        .iter()
        .filter(|action| {
            query.as_ref().is_none_or(|query| {
                action.name.contains(query.as_str())
                    || action.summary.to_ascii_lowercase().contains(query.as_str())
                    || action
                        .aliases
                        .iter()
                        .any(|alias| alias.contains(query.as_str()))
            })
        })
        .collect();
    let offset = arguments.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_PAGE, |limit| (limit as usize).clamp(1, MAX_PAGE));
    let page: Vec<Value> = matching
        .iter()
        .skip(offset)
        .take(limit)
        .map(|action| {
            let mut row = Map::new();
            row.insert("action".to_owned(), json!(action.name));
            row.insert("summary".to_owned(), json!(action.summary));
            row.insert("effect".to_owned(), json!(action.effect.as_str()));
            if action.consent != Consent::None {
                row.insert("consent".to_owned(), json!(action.consent.as_str()));
            }
            if action.long_running {
                row.insert("longRunning".to_owned(), json!(true));
            }
            mark_runnable(&mut row, state, action);
            row.insert(
                "nextCall".to_owned(),
                next_call::describe(Some(tool.name), Some(action.name), None),
            );
            Value::Object(row)
        })
        .collect();
    let mut body = Map::new();
    body.insert("tool".to_owned(), json!(tool.name));
    body.insert("category".to_owned(), json!(tool.category.as_str()));
    body.insert("summary".to_owned(), json!(tool.summary));
    body.insert("protected".to_owned(), json!(tool.protected));
    body.insert("enabled".to_owned(), json!(state.is_enabled(tool.name)));
    body.insert("actions".to_owned(), json!(page));
    body.insert("actionCount".to_owned(), json!(matching.len()));
    body.insert("offset".to_owned(), json!(offset));
    body.insert("limit".to_owned(), json!(limit));
    body.insert(
        "hasMore".to_owned(),
        json!(offset.saturating_add(limit) < matching.len()),
    );
    if let Some(query) = query {
        body.insert("query".to_owned(), json!(query));
    }
    stamp(gateway, "tool", body)
}

/// The parameter rows `describe {tool, action}` shows; the parity test compares them with
/// `generated/catalog.json`.
pub(crate) fn parameter_rows(action: &ActionRecord) -> Vec<Value> {
    action
        .params
        .iter()
        .map(|param| {
            let mut row = Map::new();
            row.insert("name".to_owned(), json!(param.name));
            row.insert("type".to_owned(), json!(param.type_label));
            row.insert("required".to_owned(), json!(param.required));
            row.insert("description".to_owned(), json!(param.description));
            if !param.enum_values.is_empty() {
                row.insert("enum".to_owned(), json!(param.enum_values));
            }
            if let Some(default) = param
                .default_json
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
            {
                row.insert("default".to_owned(), default);
            }
            Value::Object(row)
        })
        .collect()
}

fn action_contract(
    gateway: &Gateway,
    state: &Mutex<Visibility>,
    tool: &'static ToolRecord,
    action: &'static ActionRecord,
    resolved_from: Option<&'static str>,
) -> Value {
    let mut body = Map::new();
    body.insert("tool".to_owned(), json!(tool.name));
    body.insert("action".to_owned(), json!(action.name));
    if let Some(alias) = resolved_from {
        body.insert("resolvedFrom".to_owned(), json!(alias));
    }
    body.insert("summary".to_owned(), json!(action.summary));
    body.insert("effect".to_owned(), json!(action.effect.as_str()));
    body.insert("consent".to_owned(), json!(action.consent.as_str()));
    body.insert("longRunning".to_owned(), json!(action.long_running));
    {
        let state = state.lock();
        body.insert("enabled".to_owned(), json!(state.is_enabled(tool.name)));
        mark_runnable(&mut body, &state, action);
    }
    body.insert("aliases".to_owned(), json!(action.aliases));
    body.insert("whenToUse".to_owned(), json!(action.when_to_use));
    body.insert("whenNotToUse".to_owned(), json!(action.when_not_to_use));
    body.insert("parameters".to_owned(), json!(parameter_rows(action)));
    let errors: Map<String, Value> = action
        .errors
        .iter()
        .map(|error| (error.code.to_string(), json!(error.hint)))
        .collect();
    body.insert("errors".to_owned(), Value::Object(errors));
    let mut next_call = Map::new();
    next_call.insert("operation".to_owned(), json!("execute"));
    next_call.insert("tool".to_owned(), json!(tool.name));
    next_call.insert("action".to_owned(), json!(action.name));
    if let Some(example) = action.examples.first() {
        body.insert(
            "example".to_owned(),
            json!({"title": example.title, "expect": example.expect}),
        );
        let params =
            serde_json::from_str::<Value>(example.params_json).unwrap_or_else(|_| json!({}));
        next_call.insert("params".to_owned(), params);
    }
    if action.consent != Consent::None {
        let grant = state
            .lock()
            .consent
            .issue(tool.name, action.name, action.consent);
        next_call.insert("consent".to_owned(), grant.clone());
        body.insert("consentGrant".to_owned(), grant);
        body.insert(
            "consentNote".to_owned(),
            json!(format!(
                "{}: send the grant only if the user wants this; it works once.",
                action.effect.as_str()
            )),
        );
    }
    body.insert("nextCall".to_owned(), Value::Object(next_call));
    stamp(gateway, "action", body)
}

fn param_schema(
    gateway: &Gateway,
    tool: &'static ToolRecord,
    action: &'static ActionRecord,
    name: &str,
) -> Result<Value, ToolError> {
    let Some(param) = action.param(name) else {
        let suggestions = suggest(name, action.params.iter().map(|param| param.name));
        let next_call = next_call::describe(
            Some(tool.name),
            Some(action.name),
            suggestions.first().copied(),
        );
        return Err(ToolError::new(
            codes::UNKNOWN_PARAM,
            format!("{}.{} has no parameter \"{name}\"", tool.name, action.name),
        )
        .suggestions(suggestions)
        .next_call(next_call));
    };
    let examples: Vec<Value> = action
        .examples
        .iter()
        .filter_map(|example| serde_json::from_str::<Value>(example.params_json).ok())
        .filter_map(|params| params.get(name).cloned())
        .collect();
    let mut body = Map::new();
    body.insert("tool".to_owned(), json!(tool.name));
    body.insert("action".to_owned(), json!(action.name));
    body.insert("param".to_owned(), json!(param.name));
    body.insert("required".to_owned(), json!(param.required));
    body.insert("type".to_owned(), json!(param.type_label));
    body.insert("description".to_owned(), json!(param.description));
    body.insert(
        "schema".to_owned(),
        serde_json::from_str::<Value>(param.schema).unwrap_or(Value::Null),
    );
    body.insert("examples".to_owned(), json!(examples));
    body.insert(
        "nextCall".to_owned(),
        next_call::describe(Some(tool.name), Some(action.name), None),
    );
    Ok(stamp(gateway, "param", body))
}
