//! The bounds written into a type's JSON Schema, so a model sees them before it writes.

use super::*;

/// Adds `minimum`/`maximum` to every number in `schema`, inlining definitions it refers to (so a
/// definition shared with an unbounded field stays unbounded). `defs` is the document's `$defs`.
pub(super) fn constrain_numbers(schema: &mut Value, defs: &mut Value, bound: Span, depth: usize) {
    if depth > 8 {
        return;
    }
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(key) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .map(str::to_owned)
        && let Some(body) = defs.get(&key).cloned()
    {
        object.remove("$ref");
        if let Value::Object(body) = body {
            for (name, value) in body {
                object.entry(name).or_insert(value);
            }
        }
    }
    let is_number = matches!(
        object.get("type").and_then(Value::as_str),
        Some("number" | "integer")
    );
    if is_number {
        bounded(object, bound);
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = object.get_mut(key) {
            for item in items {
                constrain_numbers(item, defs, bound, depth + 1);
            }
        }
    }
    for key in ["properties"] {
        if let Some(Value::Object(properties)) = object.get_mut(key) {
            for (_, property) in properties.iter_mut() {
                constrain_numbers(property, defs, bound, depth + 1);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(item) = object.get_mut(key) {
            constrain_numbers(item, defs, bound, depth + 1);
        }
    }
}

pub(super) fn bounded(object: &mut Map<String, Value>, bound: Span) {
    let tighter_min = object
        .get("minimum")
        .and_then(Value::as_f64)
        .map_or(bound.min, |min| min.max(bound.min));
    let tighter_max = object
        .get("maximum")
        .and_then(Value::as_f64)
        .map_or(bound.max, |max| max.min(bound.max));
    object.insert("minimum".to_owned(), json!(tighter_min));
    object.insert("maximum".to_owned(), json!(tighter_max));
}

pub(super) fn describe(schema: &mut Value, says: &str) {
    if let Value::Object(object) = schema {
        let text = match object.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own} Allowed: {says}."),
            None => format!("Allowed: {says}."),
        };
        object.insert("description".to_owned(), json!(text));
    }
}

pub(super) fn keep(schema: &mut Value) {
    if let Value::Object(object) = schema {
        object.insert("readOnly".to_owned(), json!(true));
    }
    describe(
        schema,
        "nothing new: Bevy manages this field, so a write keeps its value",
    );
}
