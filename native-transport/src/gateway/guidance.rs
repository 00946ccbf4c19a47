//! Guidance for errors: closest-name suggestions, and the bounds on what a client sends that
//! they are computed on. The error object itself is [`mcp_vocabulary::ToolError`].

use std::borrow::Cow;

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
}
