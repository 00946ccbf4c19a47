//! Guided errors: closest-name suggestions and the error object a model sees.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

/// Most suggestions an error carries.
pub const MAX_SUGGESTIONS: usize = 3;
/// The longest tool, action, parameter or operation name the gateway works on; no real name is
/// near it. Longer names get no suggestions and are not echoed whole.
pub const MAX_NAME_CHARS: usize = 128;
/// The longest `search` or `describe` query.
pub const MAX_QUERY_CHARS: usize = 512;

/// `text` cut to `max_chars` characters (with `…`), for messages that echo what a client sent.
pub fn clip(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// Ranks `candidates` by closeness to `given`: Levenshtein distance, minus 4 when one contains
/// the other; ties go to the longer common prefix, then to the name. Returns at most three that
/// are close enough to be worth reading.
///
/// The work is bounded: nothing is suggested for a name over [`MAX_NAME_CHARS`] characters or
/// against a candidate over it, and the edit distance is only computed where the lengths alone
/// do not already rule a candidate out.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let given_chars = given.chars().count();
    if given_chars > MAX_NAME_CHARS {
        return Vec::new();
    }
    let given_lower = given.to_ascii_lowercase();
    let threshold = (given_chars as i64 / 2).max(2);
    let mut scored: Vec<(i64, usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let candidate_chars = candidate.chars().count();
            if candidate_chars > MAX_NAME_CHARS {
                return None;
            }
            let lower = candidate.to_ascii_lowercase();
            let contained = !given_lower.is_empty()
                && (lower.contains(&given_lower) || given_lower.contains(&lower));
            // The distance is at least the difference in length.
            if !contained && (candidate_chars.abs_diff(given_chars) as i64) > threshold {
                return None;
            }
            let distance = strsim::levenshtein(&given_lower, &lower) as i64;
            // Containment always makes a name worth suggesting; otherwise it must be close.
            (contained || distance <= threshold).then(|| {
                let score = if contained { distance - 4 } else { distance };
                (score, common_prefix(&given_lower, &lower), candidate)
            })
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, name)| name)
        .collect()
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// An error a model sees inside an `isError` tool result.
#[derive(Clone, Debug, PartialEq)]
pub struct GuidedError {
    /// The code (`UNKNOWN_TOOL`, ...).
    pub code: &'static str,
    /// What went wrong.
    pub message: String,
    /// What to do.
    pub hint: Option<String>,
    /// Closest valid names.
    pub suggestions: Vec<String>,
    /// A call that can be sent back unchanged.
    pub next_call: Option<Value>,
    /// Extra facts.
    pub details: Option<Value>,
}

impl GuidedError {
    /// An error with a code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        GuidedError {
            code,
            message: message.into(),
            hint: None,
            suggestions: Vec::new(),
            next_call: None,
            details: None,
        }
    }

    /// Adds a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds suggestions.
    #[must_use]
    pub fn suggestions<S: Into<String>>(
        mut self,
        suggestions: impl IntoIterator<Item = S>,
    ) -> Self {
        self.suggestions = suggestions.into_iter().map(Into::into).collect();
        self
    }

    /// Adds the next call; empty keys are dropped so it can be sent back unchanged.
    #[must_use]
    pub fn next_call(mut self, next_call: Value) -> Self {
        self.next_call = Some(without_empty_keys(next_call));
        self
    }

    /// Adds details.
    #[must_use]
    pub fn details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The error as JSON: `{"error": {code, message, hint?, suggestions?, nextCall?, details?}}`.
    pub fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".to_owned(), json!(self.code));
        error.insert("message".to_owned(), json!(self.message));
        if let Some(hint) = &self.hint {
            error.insert("hint".to_owned(), json!(hint));
        }
        if !self.suggestions.is_empty() {
            error.insert("suggestions".to_owned(), json!(self.suggestions));
        }
        if let Some(next_call) = &self.next_call {
            error.insert("nextCall".to_owned(), next_call.clone());
        }
        if let Some(details) = &self.details {
            error.insert("details".to_owned(), details.clone());
        }
        json!({ "error": Value::Object(error) })
    }
}

/// Removes `null` values and empty strings from the top level of a call object, so a `nextCall`
/// never carries a key the model would have to fill in.
pub fn without_empty_keys(call: Value) -> Value {
    match call {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, value)| {
                    !(value.is_null() || value.as_str().is_some_and(str::is_empty))
                })
                .collect(),
        ),
        other => other,
    }
}

/// `{operation: "describe"}` plus the given scope.
pub fn describe_call(tool: Option<&str>, action: Option<&str>, param: Option<&str>) -> Value {
    let mut call = Map::new();
    call.insert("operation".to_owned(), json!("describe"));
    for (key, value) in [("tool", tool), ("action", action), ("param", param)] {
        if let Some(value) = value {
            call.insert(key.to_owned(), json!(value));
        }
    }
    Value::Object(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_distance_then_prefix_then_name() {
        let tools = ["control_entity", "control_app", "inspect", "manage_tools"];
        assert_eq!(suggest("control_entty", tools)[0], "control_entity");
        assert_eq!(suggest("inspekt", tools), ["inspect"]);
        assert_eq!(
            suggest("entity", ["control_entity", "entities", "spawn"]),
            ["entities", "control_entity"]
        );
        assert!(
            suggest("zzzzzzzz", tools).is_empty(),
            "nothing close enough"
        );
        // Equal distance: the longer common prefix wins, then the name.
        assert_eq!(suggest("abcx", ["abyy", "abcy"]), ["abcy", "abyy"]);
        assert_eq!(suggest("ab", ["ax", "aa"]), ["aa", "ax"]);
    }

    #[test]
    fn containment_counts_as_close() {
        let actions = ["list_entities", "find_entities", "get_entity"];
        assert_eq!(suggest("entities", actions).len(), 2);
        assert!(suggest("transform", ["set_transform", "spawn"]).contains(&"set_transform"));
    }

    #[test]
    fn long_names_get_no_suggestions_and_are_clipped() {
        let long = "control_entity".repeat(100);
        assert!(suggest(&long, ["control_entity"]).is_empty());
        assert_eq!(clip("abc", 2), "ab…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("héllo", 2), "hé…");
    }

    #[test]
    fn at_most_three() {
        let names = ["aa", "ab", "ac", "ad", "ae"];
        assert_eq!(suggest("a", names).len(), MAX_SUGGESTIONS);
    }

    #[test]
    fn next_calls_have_no_empty_keys() {
        let error = GuidedError::new("UNKNOWN_TOOL", "no")
            .next_call(json!({"operation": "describe", "tool": "", "action": null, "query": "x"}));
        assert_eq!(
            error.next_call,
            Some(json!({"operation": "describe", "query": "x"}))
        );
        assert_eq!(
            describe_call(Some("inspect"), None, None),
            json!({"operation": "describe", "tool": "inspect"})
        );
    }
}
