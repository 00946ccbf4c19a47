//! The `search` operation: reads its arguments, ranks the catalog with [`mcp_search`], and
//! shapes each hit as a row a model can act on (ready `nextCall`s, what its session may run).

use mcp_search::{Explanation, Hit, rank};
use mcp_vocabulary::{ToolError, codes, next_call};
use serde_json::{Map, Value, json};

use super::{Gateway, Visibility, mark_runnable, stamp};
use crate::catalog::{Category, Effect};

/// Default number of rows.
pub const DEFAULT_LIMIT: usize = 12;
/// Largest number of rows.
pub const MAX_LIMIT: usize = 25;

/// An optional filter argument (`category`, `effect`) read with `parse`; an unknown name is
/// refused with the known ones as suggestions.
fn filter<T>(
    arguments: &Map<String, Value>,
    key: &str,
    query: &str,
    parse: fn(&str) -> Option<T>,
    known: &[&'static str],
) -> Result<Option<T>, ToolError> {
    let Some(name) = arguments.get(key).and_then(Value::as_str) else {
        return Ok(None);
    };
    parse(name).map(Some).ok_or_else(|| {
        ToolError::new(codes::INVALID_ARGUMENT, format!("unknown {key} \"{name}\""))
            .suggestions(known.iter().copied())
            .next_call(json!({"operation": "search", "query": query}))
    })
}

pub(super) fn search(
    gateway: &Gateway,
    state: &Visibility,
    arguments: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if query.trim().is_empty() {
        return Err(ToolError::new(
            codes::MISSING_QUERY,
            "search needs a query: say what you want to do, e.g. \"move an entity\"",
        )
        .next_call(next_call::describe(None, None, None)));
    }
    let category = filter(
        arguments,
        "category",
        query,
        Category::parse,
        &Category::ALL.map(Category::as_str),
    )?;
    let effect = filter(
        arguments,
        "effect",
        query,
        Effect::parse,
        &Effect::ALL.map(Effect::as_str),
    )?;
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |limit| (limit as usize).clamp(1, MAX_LIMIT));
    let world = gateway.world_index();
    let query = gateway.search_index.parse_query(query, world.as_deref());
    let ranked = rank(
        &gateway.search_index,
        world.as_deref(),
        &query,
        category,
        effect,
    );
    let total = ranked.hits.len();
    let rows: Vec<Value> = ranked
        .hits
        .iter()
        .take(limit)
        .map(|hit| {
            row(
                gateway,
                state,
                hit,
                ranked.explain(&gateway.search_index, hit),
            )
        })
        .collect();
    let mut body = Map::new();
    body.insert("query".to_owned(), json!(query.text));
    if let Some(read_as) = &query.read_as {
        body.insert("readAs".to_owned(), json!(read_as));
    }
    body.insert("returned".to_owned(), json!(rows.len()));
    body.insert("total".to_owned(), json!(total));
    if rows.is_empty() {
        body.insert(
            "hint".to_owned(),
            json!("Nothing matched; try other words, or browse the tools with the nextCall."),
        );
        body.insert("nextCall".to_owned(), next_call::describe(None, None, None));
    }
    body.insert("results".to_owned(), json!(rows));
    Ok(stamp(gateway, "search", body))
}

/// One result row: the action, why it matched the app when it did, and the next call: a ready
/// `execute` for a read whose every required parameter the query gave, else a `describe` with
/// the parameters it did give (a change is never offered ready: the query did not ask for it
/// in so many words).
fn row(gateway: &Gateway, state: &Visibility, hit: &Hit, explained: Explanation) -> Value {
    let mut row = json!({
        "tool": hit.tool.name,
        "action": hit.action.name,
        "summary": hit.action.summary,
        "effect": hit.action.effect.as_str(),
        "enabled": state.is_enabled(hit.tool.name),
    });
    let describe = next_call::describe(Some(hit.tool.name), Some(hit.action.name), None);
    let known = !explained.params.is_empty();
    let params = Value::Object(explained.params);
    let ready = known
        && hit.action.effect == Effect::Read
        && state.scope().allows(hit.action.scope)
        && gateway
            .validator(hit.tool.name, hit.action.name)
            .is_some_and(|validator| validator.is_valid(&params));
    if let Some(object) = row.as_object_mut() {
        mark_runnable(object, state, hit.action);
        if !explained.because.is_empty() {
            object.insert("because".to_owned(), json!(explained.because.join("; ")));
        }
        if ready {
            object.insert(
                "nextCall".to_owned(),
                next_call::execute(hit.tool.name, hit.action.name, params),
            );
        } else {
            if params.as_object().is_some_and(|params| !params.is_empty()) {
                object.insert("knownParams".to_owned(), params);
            }
            object.insert("nextCall".to_owned(), describe);
        }
    }
    row
}
