//! Result shaping: results stay small unless the caller asks for more, and say what was cut.
//!
//! In `summary` detail, lists longer than [`ROW_CAP`] keep their first rows and strings longer
//! than [`STRING_CAP`] characters are cut on a character boundary with `…`; the result then
//! carries `returned`, `total`, `moreAvailable`, a `hint`, and `truncatedFields` naming every
//! cut. `full` detail lifts the caps. Either way a read's result larger than the byte limit
//! becomes `RESULT_TOO_LARGE`, which says how to narrow the call; a change's result is cut until
//! it fits instead ([`shape_to_fit`]), because the change was made.

use mcp_vocabulary::{ToolError, codes};
use serde_json::{Map, Value, json};

/// Rows kept per list in summary detail.
pub const ROW_CAP: usize = 50;
/// Characters kept per string in summary detail.
pub const STRING_CAP: usize = 500;
/// The largest result ever sent, whatever `options.maxBytes` says.
pub const HARD_MAX_BYTES: usize = 256 * 1024;

/// How much of a result to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Detail {
    /// Capped rows and strings.
    #[default]
    Summary,
    /// Everything, up to the byte limit.
    Full,
}

/// A shaped result and its compact JSON text (the text content of the tool result, and the
/// measure of its size).
#[derive(Debug)]
pub struct Shaped {
    /// The result, capped as its detail asks.
    pub value: Value,
    /// `value` serialized.
    pub text: String,
}

/// Shapes `value`; fails when even the shaped result exceeds `max_bytes`.
pub fn shape(value: Value, detail: Detail, max_bytes: usize) -> Result<Shaped, ToolError> {
    let mut cuts = Cuts::default();
    let mut shaped = value;
    if detail == Detail::Summary {
        cap(&mut shaped, &mut Vec::new(), SUMMARY, &mut cuts);
    }
    if let Value::Object(object) = &mut shaped
        && !cuts.is_empty()
    {
        annotate(object, &cuts);
    }
    // Serializing a `Value` cannot fail (its keys are strings).
    let text = serde_json::to_string(&shaped).unwrap_or_default();
    let limit = max_bytes.min(HARD_MAX_BYTES);
    if text.len() > limit {
        let size = text.len();
        return Err(ToolError::new(codes::RESULT_TOO_LARGE,
            format!("the result is {size} bytes, over the limit of {limit} bytes"),
        )
        .hint("Narrow the call: filter (name, components, filter), page with offset/limit, or ask for fewer components; options.detail \"summary\" caps lists."));
    }
    Ok(Shaped {
        value: shaped,
        text,
    })
}

/// Shapes the result of a call that changed something: a result over `max_bytes` is never
/// turned into an error (the change was made, and an error would say it was not). Lists and maps
/// are cut harder, level by level, until it fits; `cutToFit` says so and what was cut.
pub fn shape_to_fit(value: Value, detail: Detail, max_bytes: usize) -> Shaped {
    let limit = max_bytes.min(HARD_MAX_BYTES);
    let original = value.clone();
    if let Ok(shaped) = shape(value, detail, max_bytes) {
        return shaped;
    }
    for rows in [ROW_CAP, 10, 3, 0] {
        // Below the top every list and map is cut; the top object keeps its keys.
        let caps = Caps {
            rows,
            entries: Some(rows),
        };
        let mut cuts = Cuts::default();
        let mut shaped = original.clone();
        if let Value::Object(object) = &mut shaped {
            for (key, item) in object.iter_mut() {
                let mut path = vec![Step::Key(key)];
                cap(item, &mut path, caps, &mut cuts);
            }
            annotate(object, &cuts);
            object.insert("cutToFit".to_owned(), json!(true));
            object.insert(
                "hint".to_owned(),
                json!(format!(
                    "The call was carried out; its reply was over {limit} bytes and was cut to fit (see truncatedFields). Read what it changed with history.list, or the world with inspect actions."
                )),
            );
        } else {
            cap(&mut shaped, &mut Vec::new(), caps, &mut cuts);
        }
        let text = serde_json::to_string(&shaped).unwrap_or_default();
        if text.len() <= limit || rows == 0 {
            return Shaped {
                value: shaped,
                text,
            };
        }
    }
    // The loop always returns at cap 0.
    Shaped {
        value: Value::Null,
        text: "null".to_owned(),
    }
}

#[derive(Default)]
struct Cuts {
    /// (pointer, rows kept, rows there were) for lists.
    lists: Vec<(String, usize, usize)>,
    /// Pointers of cut strings.
    strings: Vec<String>,
}

impl Cuts {
    fn is_empty(&self) -> bool {
        self.lists.is_empty() && self.strings.is_empty()
    }
}

/// One step of the path from the result's root to a value.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The JSON pointer of `path` (built only for what is cut).
fn pointer(path: &[Step<'_>]) -> String {
    let mut pointer = String::new();
    for step in path {
        pointer.push('/');
        match step {
            Step::Key(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Step::Index(index) => pointer.push_str(&index.to_string()),
        }
    }
    pointer
}

/// How hard [`cap`] cuts.
#[derive(Clone, Copy)]
struct Caps {
    /// Rows kept per list.
    rows: usize,
    /// Entries kept per map (maps are left whole without it).
    entries: Option<usize>,
}

/// Summary detail: lists capped at [`ROW_CAP`] rows, maps whole.
const SUMMARY: Caps = Caps {
    rows: ROW_CAP,
    entries: None,
};

/// Cuts lists (and maps, if asked) to their caps and strings to [`STRING_CAP`] characters,
/// recording every cut.
fn cap<'a>(value: &'a mut Value, path: &mut Vec<Step<'a>>, caps: Caps, cuts: &mut Cuts) {
    match value {
        Value::String(text) => {
            if let Some((index, _)) = text.char_indices().nth(STRING_CAP) {
                text.truncate(index);
                text.push('…');
                cuts.strings.push(pointer(path));
            }
        }
        Value::Array(items) => {
            if items.len() > caps.rows {
                cuts.lists.push((pointer(path), caps.rows, items.len()));
                items.truncate(caps.rows);
            }
            for (index, item) in items.iter_mut().enumerate() {
                path.push(Step::Index(index));
                cap(item, path, caps, cuts);
                path.pop();
            }
        }
        Value::Object(map) => {
            if let Some(entries) = caps.entries
                && map.len() > entries
            {
                cuts.lists.push((pointer(path), entries, map.len()));
                let keep: Vec<String> = map.keys().take(entries).cloned().collect();
                map.retain(|key, _| keep.contains(key));
            }
            for (key, item) in map.iter_mut() {
                path.push(Step::Key(key));
                cap(item, path, caps, cuts);
                path.pop();
            }
        }
        _ => {}
    }
}

fn annotate(object: &mut Map<String, Value>, cuts: &Cuts) {
    // The first capped list describes the page; a handler's own `total` (all matches, before its
    // paging) is kept because it is the more useful number.
    if let Some((_, kept, there)) = cuts.lists.first() {
        object.insert("returned".to_owned(), json!(kept));
        object.entry("total").or_insert(json!(there));
        object.insert("moreAvailable".to_owned(), json!(true));
        object.insert(
            "hint".to_owned(),
            json!(format!(
                "Lists are capped at {ROW_CAP} rows: page with offset/limit, narrow with a filter, or send options.detail \"full\"."
            )),
        );
    }
    let mut fields: Vec<String> = cuts
        .lists
        .iter()
        .map(|(pointer, kept, there)| format!("{pointer} ({kept} of {there} rows)"))
        .collect();
    fields.extend(
        cuts.strings
            .iter()
            .map(|pointer| format!("{pointer} (cut at {STRING_CAP} characters)")),
    );
    object.insert("truncatedFields".to_owned(), json!(fields));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_lists_and_counts_them() {
        let rows: Vec<Value> = (0..120).map(|index| json!({"index": index})).collect();
        let shaped = shape(json!({"entities": rows}), Detail::Summary, HARD_MAX_BYTES)
            .map_or(Value::Null, |shaped| shaped.value);
        assert_eq!(shaped["entities"].as_array().map(Vec::len), Some(ROW_CAP));
        assert_eq!(shaped["returned"], json!(ROW_CAP));
        assert_eq!(shaped["total"], json!(120));
        assert_eq!(shaped["moreAvailable"], json!(true));
        assert_eq!(
            shaped["truncatedFields"][0],
            json!("/entities (50 of 120 rows)")
        );
    }

    #[test]
    fn keeps_a_handler_total() {
        let rows: Vec<Value> = (0..60).map(|index| json!(index)).collect();
        let shaped = shape(
            json!({"entities": rows, "total": 900}),
            Detail::Summary,
            HARD_MAX_BYTES,
        )
        .map_or(Value::Null, |shaped| shaped.value);
        assert_eq!(shaped["total"], json!(900));
    }

    #[test]
    fn a_change_too_large_to_answer_is_cut_to_fit_not_refused() {
        let respawned: Map<String, Value> = (0..100_000)
            .map(|index| {
                (
                    format!("{index}v0"),
                    json!(format!("{}v0", index + 200_000)),
                )
            })
            .collect();
        let value = json!({"restored": "before", "despawned": 3, "respawned": respawned});
        let shaped = shape_to_fit(value.clone(), Detail::Full, HARD_MAX_BYTES);
        assert!(shaped.text.len() <= HARD_MAX_BYTES, "{}", shaped.text.len());
        assert_eq!(shaped.value["cutToFit"], json!(true));
        assert_eq!(shaped.value["despawned"], json!(3));
        assert_eq!(shaped.value["restored"], json!("before"));
        let kept = shaped.value["respawned"].as_object().map_or(0, Map::len);
        assert!(kept > 0 && kept < 100_000, "{kept}");
        assert!(
            shaped.value["truncatedFields"][0]
                .as_str()
                .is_some_and(
                    |field| field.starts_with("/respawned (") && field.ends_with("of 100000 rows)")
                ),
            "{}",
            shaped.value["truncatedFields"]
        );
        // A read answers RESULT_TOO_LARGE as before: nothing was done, so narrowing is the way.
        assert!(shape(value, Detail::Full, HARD_MAX_BYTES).is_err());
    }

    #[test]
    fn cuts_strings_on_char_boundaries() {
        let long = "é".repeat(600);
        let shaped = shape(json!({"name": long}), Detail::Summary, HARD_MAX_BYTES)
            .map_or(Value::Null, |shaped| shaped.value);
        let text = shaped["name"].as_str().unwrap_or_default();
        assert_eq!(text.chars().count(), STRING_CAP + 1);
        assert!(text.ends_with('…'));
        assert_eq!(
            shaped["truncatedFields"],
            json!(["/name (cut at 500 characters)"])
        );
    }

    #[test]
    fn full_detail_lifts_caps_but_not_the_byte_limit() {
        let rows: Vec<Value> = (0..120).map(|index| json!(index)).collect();
        let shaped = shape(json!({"rows": rows}), Detail::Full, HARD_MAX_BYTES)
            .map_or(Value::Null, |shaped| shaped.value);
        assert_eq!(shaped["rows"].as_array().map(Vec::len), Some(120));
        assert!(shaped.get("truncatedFields").is_none());
        let huge = "a".repeat(300 * 1024);
        let error = shape(json!({"blob": huge}), Detail::Full, usize::MAX)
            .err()
            .map(|error| error.code);
        assert_eq!(error, Some(codes::RESULT_TOO_LARGE));
    }

    #[test]
    fn small_results_are_untouched() {
        let value = json!({"entity": {"entity": "1v0"}, "applied": ["a"]});
        assert_eq!(
            shape(value.clone(), Detail::Summary, HARD_MAX_BYTES)
                .ok()
                .map(|shaped| shaped.value),
            Some(value)
        );
    }

    #[test]
    fn pointers_name_nested_cuts_and_the_text_is_the_result() {
        let rows: Vec<Value> = (0..60).map(|index| json!(index)).collect();
        let value = json!({"a/b": [{"x~y": "z".repeat(501)}], "list": {"rows": rows}});
        let Ok(shaped) = shape(value, Detail::Summary, HARD_MAX_BYTES) else {
            panic!("a small result is shaped");
        };
        assert_eq!(
            shaped.value["truncatedFields"],
            json!([
                "/list/rows (50 of 60 rows)",
                "/a~1b/0/x~0y (cut at 500 characters)"
            ])
        );
        assert_eq!(
            serde_json::from_str::<Value>(&shaped.text).ok(),
            Some(shaped.value)
        );
    }
}
