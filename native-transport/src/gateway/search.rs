//! `search`: rank every action of the catalog by how well it matches an intent.
//!
//! Words of the query are stemmed lightly ("moving" -> "mov") and matched against, from
//! strongest to weakest: the action's name, its aliases and topics, its tool's name, its summary.
//! The first word counts double: it is usually the verb of the intent.

use mcp_vocabulary::{ToolError, codes, next_call};
use serde_json::{Map, Value, json};

use super::{Gateway, Visibility, stamp};
use crate::catalog::{ActionRecord, Catalog, Category, Effect, ToolRecord};

/// Default and largest number of rows.
pub const DEFAULT_LIMIT: usize = 12;
/// Largest number of rows.
pub const MAX_LIMIT: usize = 25;

const STOP_WORDS: [&str; 31] = [
    "a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "my", "me", "please",
    "with", "by", "is", "it", "this", "that", "i", "want", "can", "how", "what", "which", "are",
    "there", "do", "does", "any",
];

const NAME_WEIGHT: u32 = 5;
const ALIAS_WEIGHT: u32 = 4;
const TOPIC_WEIGHT: u32 = 3;
const TOOL_WEIGHT: u32 = 1;
const SUMMARY_WEIGHT: u32 = 1;

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
    let category = match arguments.get("category").and_then(Value::as_str) {
        Some(name) => Some(Category::parse(name).ok_or_else(|| {
            ToolError::new(
                codes::INVALID_ARGUMENT,
                format!("unknown category \"{name}\""),
            )
            .suggestions(Category::ALL.iter().map(|category| category.as_str()))
            .next_call(json!({"operation": "search", "query": query}))
        })?),
        None => None,
    };
    let effect = match arguments.get("effect").and_then(Value::as_str) {
        Some(name) => Some(Effect::parse(name).ok_or_else(|| {
            ToolError::new(
                codes::INVALID_ARGUMENT,
                format!("unknown effect \"{name}\""),
            )
            .suggestions(Effect::ALL.iter().map(|effect| effect.as_str()))
            .next_call(json!({"operation": "search", "query": query}))
        })?),
        None => None,
    };
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |limit| (limit as usize).clamp(1, MAX_LIMIT));
    let ranked = rank(&gateway.search_index, query, category, effect);
    let total = ranked.len();
    let rows: Vec<Value> = ranked
        .into_iter()
        .take(limit)
        .map(|hit| {
            json!({
                "tool": hit.tool.name,
                "action": hit.action.name,
                "summary": hit.action.summary,
                "effect": hit.action.effect.as_str(),
                "enabled": state.is_enabled(hit.tool.name),
                "nextCall": next_call::describe(Some(hit.tool.name), Some(hit.action.name), None),
            })
        })
        .collect();
    let mut body = Map::new();
    body.insert("query".to_owned(), json!(query));
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

/// One ranked action.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Its tool.
    pub tool: &'static ToolRecord,
    /// The action.
    pub action: &'static ActionRecord,
    /// Its score; higher is better.
    pub score: u32,
}

/// Every action's words, stemmed once when the gateway is built, so a query only stems itself.
#[derive(Debug)]
pub(crate) struct SearchIndex {
    entries: Vec<IndexedAction>,
}

#[derive(Debug)]
struct IndexedAction {
    tool: &'static ToolRecord,
    action: &'static ActionRecord,
    name: Vec<String>,
    aliases: Vec<String>,
    topics: Vec<String>,
    tool_words: Vec<String>,
    summary: Vec<String>,
}

fn stemmed<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    texts
        .into_iter()
        .flat_map(words)
        .map(|word| stem(&word))
        .collect()
}

impl SearchIndex {
    /// Indexes every action of the catalog, in catalog order.
    pub(crate) fn build(catalog: &'static Catalog) -> SearchIndex {
        let entries = catalog
            .all_actions()
            .map(|(tool, action)| IndexedAction {
                tool,
                action,
                name: stemmed([action.name]),
                aliases: stemmed(action.aliases.iter().copied()),
                topics: stemmed(action.topics.iter().copied()),
                tool_words: stemmed([tool.name]),
                summary: stemmed([action.summary]),
            })
            .collect();
        SearchIndex { entries }
    }
}

/// Every action with a positive score, best first (ties in catalog order).
pub(crate) fn rank(
    index: &SearchIndex,
    query: &str,
    category: Option<Category>,
    effect: Option<Effect>,
) -> Vec<Hit> {
    let words: Vec<String> = words(query)
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .map(|word| stem(&word))
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let mut hits: Vec<Hit> = index
        .entries
        .iter()
        .filter(|entry| {
            category.is_none_or(|category| entry.tool.category == category)
                && effect.is_none_or(|effect| entry.action.effect == effect)
        })
        .filter_map(|entry| {
            let score = score(&words, entry);
            (score > 0).then_some(Hit {
                tool: entry.tool,
                action: entry.action,
                score,
            })
        })
        .collect();
    // A stable sort keeps catalog order among equal scores.
    hits.sort_by_key(|hit| std::cmp::Reverse(hit.score));
    hits
}

fn score(query: &[String], entry: &IndexedAction) -> u32 {
    let mut total = 0;
    for (position, word) in query.iter().enumerate() {
        let mut best = 0;
        for (field, weight) in [
            (&entry.name, NAME_WEIGHT),
            (&entry.aliases, ALIAS_WEIGHT),
            (&entry.topics, TOPIC_WEIGHT),
            (&entry.tool_words, TOOL_WEIGHT),
            (&entry.summary, SUMMARY_WEIGHT),
        ] {
            if field.iter().any(|candidate| candidate == word) {
                best = best.max(weight);
            }
        }
        // The first word of an intent is usually its verb ("save the world to a file"): it counts double.
        total += if position == 0 { best * 2 } else { best };
    }
    // The whole query naming the action exactly ("get_entity", "get entity") wins outright.
    if query.join("_") == entry.name.join("_") {
        total += 10;
    }
    total
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// A light stemmer: "moving", "moves" and "move" all become "mov".
fn stem(word: &str) -> String {
    if let Some(rest) = word.strip_suffix("ies")
        && rest.chars().count() >= 3
    {
        return format!("{rest}y");
    }
    let mut stem = word;
    for suffix in ["ing", "es", "ed", "s"] {
        if let Some(rest) = stem.strip_suffix(suffix)
            && rest.chars().count() >= 3
        {
            stem = rest;
            break;
        }
    }
    let stem = stem
        .strip_suffix('e')
        .filter(|rest| rest.chars().count() >= 3)
        .unwrap_or(stem);
    stem.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems() {
        assert_eq!(stem("moving"), "mov");
        assert_eq!(stem("moves"), "mov");
        assert_eq!(stem("move"), "mov");
        assert_eq!(stem("entities"), "entity");
        assert_eq!(stem("entity"), "entity");
        assert_eq!(stem("is"), "is");
    }
}
