//! How well `search` finds the action an intent needs: the labelled phrases of
//! `search-intents.json`, run against a live bridge, scored as recall@1 and recall@3 for the
//! tuning part and the held-out part apart.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::mcp::McpSession;

/// The labelled set, checked in beside this crate.
pub const INTENTS_JSON: &str = include_str!("../search-intents.json");

/// One labelled phrase.
#[derive(Debug, Clone, Deserialize)]
pub struct Intent {
    /// What a user or model typed.
    pub query: String,
    /// The actions (`tool.action`) that answer it; any of them counts.
    pub expect: Vec<String>,
    /// `tuning` or `held_out`.
    pub part: String,
}

#[derive(Deserialize)]
struct IntentFile {
    intents: Vec<Intent>,
}

/// The labelled phrases, or why the file does not parse.
pub fn intents() -> Result<Vec<Intent>, serde_json::Error> {
    serde_json::from_str::<IntentFile>(INTENTS_JSON).map(|file| file.intents)
}

/// A phrase whose expected action was not first.
#[derive(Debug, Clone)]
pub struct Miss {
    /// The phrase.
    pub query: String,
    /// What it should have found.
    pub expect: Vec<String>,
    /// The top three found.
    pub found: Vec<String>,
}

/// Recall of one part of the set.
#[derive(Debug, Clone, Default)]
pub struct Recall {
    /// `tuning` or `held_out`.
    pub part: String,
    /// Phrases scored.
    pub phrases: usize,
    /// Phrases whose first result is expected.
    pub first: usize,
    /// Phrases with an expected action in the first three.
    pub top_three: usize,
    /// Phrases not answered first.
    pub misses: Vec<Miss>,
}

impl Recall {
    /// Recall@1.
    pub fn at_1(&self) -> f64 {
        self.first as f64 / self.phrases.max(1) as f64
    }

    /// Recall@3.
    pub fn at_3(&self) -> f64 {
        self.top_three as f64 / self.phrases.max(1) as f64
    }

    /// The figures as JSON (for `mcp-bench`).
    pub fn to_json(&self) -> Value {
        json!({
            "part": self.part,
            "phrases": self.phrases,
            "recallAt1": self.at_1(),
            "recallAt3": self.at_3(),
            "misses": self.misses.iter().map(|miss| json!({"query": miss.query, "expect": miss.expect, "found": miss.found})).collect::<Vec<_>>(),
        })
    }
}

/// The first three `tool.action`s search answers `query` with.
pub async fn top_three(session: &McpSession, query: &str) -> Vec<String> {
    let reply = session
        .call(json!({"operation": "search", "query": query, "limit": 3}))
        .await
        .payload();
    reply["results"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    format!(
                        "{}.{}",
                        row["tool"].as_str().unwrap_or("?"),
                        row["action"].as_str().unwrap_or("?")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs every phrase through `session` and scores each part, tuning first.
pub async fn measure(session: &McpSession, intents: &[Intent]) -> Vec<Recall> {
    let mut parts: Vec<Recall> = Vec::new();
    for intent in intents {
        let found = top_three(session, &intent.query).await;
        let part = match parts.iter().position(|part| part.part == intent.part) {
            Some(index) => index,
            None => {
                parts.push(Recall {
                    part: intent.part.clone(),
                    ..Recall::default()
                });
                parts.len() - 1
            }
        };
        let Some(recall) = parts.get_mut(part) else {
            continue;
        };
        recall.phrases += 1;
        let hit_first = found.first().is_some_and(|top| intent.expect.contains(top));
        if hit_first {
            recall.first += 1;
        } else {
            recall.misses.push(Miss {
                query: intent.query.clone(),
                expect: intent.expect.clone(),
                found: found.clone(),
            });
        }
        if found.iter().any(|action| intent.expect.contains(action)) {
            recall.top_three += 1;
        }
    }
    parts
}
