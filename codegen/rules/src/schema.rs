//! JSON Schema helpers: inlining `$ref`s to the shared defs, canonical JSON, and type labels.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// How deep `$ref`s may nest before we call it a cycle.
const MAX_REF_DEPTH: usize = 16;

/// The prefix every `$ref` in the records uses.
pub const DEFS_PREFIX: &str = "#/$defs/";

/// Returns `schema` with every `$ref` replaced by the definition it names. Keys written next to a
/// `$ref` (usually a more specific `description`) win over the definition's own.
pub fn inline_refs(schema: &Value, defs: &BTreeMap<String, Value>) -> Result<Value, String> {
    inline_at_depth(schema, defs, 0)
}

fn inline_at_depth(
    schema: &Value,
    defs: &BTreeMap<String, Value>,
    depth: usize,
) -> Result<Value, String> {
    if depth > MAX_REF_DEPTH {
        return Err("$ref nesting is too deep (a definition refers to itself?)".to_owned());
    }
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            if let Some(reference) = map.get("$ref") {
                let name = ref_target(reference)?;
                let def = defs.get(name).ok_or_else(|| {
                    format!("$ref \"{DEFS_PREFIX}{name}\" names no definition in defs.json")
                })?;
                if let Value::Object(def_map) = inline_at_depth(def, defs, depth + 1)? {
                    out.extend(def_map);
                }
            }
            for (key, value) in map {
                if key != "$ref" {
                    out.insert(key.clone(), inline_at_depth(value, defs, depth)?);
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .map(|item| inline_at_depth(item, defs, depth))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// The definition name a `$ref` value points at.
pub fn ref_target(reference: &Value) -> Result<&str, String> {
    let text = reference
        .as_str()
        .ok_or_else(|| "$ref must be a string".to_owned())?;
    text.strip_prefix(DEFS_PREFIX)
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .ok_or_else(|| format!("$ref \"{text}\" must have the form \"{DEFS_PREFIX}<name>\""))
}

/// A copy of `value` whose objects are built in key order, so serialization is sorted whether or
/// not some dependency turned on serde_json's `preserve_order`.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                if let Some(item) = map.get(key) {
                    out.insert(key.clone(), sorted(item));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Canonical compact JSON: sorted keys, no whitespace.
pub fn canonical(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::to_string(&sorted(value)).unwrap_or_default()
}

/// Canonical pretty JSON: sorted keys, two-space indent, trailing newline.
pub fn canonical_pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

/// A short type label for a resolved schema: `string`, `integer | string`, `number[3]`, ...
pub fn type_label(schema: &Value) -> String {
    let Some(map) = schema.as_object() else {
        return "any".to_owned();
    };
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            let labels: Vec<String> = branches.iter().map(type_label).collect();
            return labels.join(" | ");
        }
    }
    match map.get("type") {
        Some(Value::String(kind)) if kind == "array" => {
            let item = map
                .get("items")
                .map_or_else(|| "any".to_owned(), type_label);
            let min = map.get("minItems").and_then(Value::as_u64);
            let max = map.get("maxItems").and_then(Value::as_u64);
            match (min, max) {
                (Some(min), Some(max)) if min == max => format!("{item}[{min}]"),
                _ => format!("array<{item}>"),
            }
        }
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if map.contains_key("enum") => "enum".to_owned(),
        _ => "any".to_owned(),
    }
}

/// The `required` names of an object schema.
pub fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Properties in catalog order: the required ones in `required` order, then the rest by name.
pub fn ordered_properties<'a>(
    properties: &'a serde_json::Map<String, Value>,
    required: &[&str],
) -> Vec<(&'a str, &'a Value)> {
    let mut ordered: Vec<(&str, &Value)> = required
        .iter()
        .filter_map(|name| properties.get_key_value(*name))
        .map(|(name, value)| (name.as_str(), value))
        .collect();
    let optional: BTreeMap<&str, &Value> = properties
        .iter()
        .filter(|(name, _)| !required.contains(&name.as_str()))
        .map(|(name, value)| (name.as_str(), value))
        .collect();
    ordered.extend(optional);
    ordered
}

/// The string values of an `enum` schema.
pub fn enum_values(schema: &Value) -> Vec<String> {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defs() -> BTreeMap<String, Value> {
        let mut defs = BTreeMap::new();
        defs.insert("vec3".to_owned(), json!({"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "description": "A vector."}));
        defs.insert(
            "wrapped".to_owned(),
            json!({"$ref": "#/$defs/vec3", "title": "W"}),
        );
        defs.insert("loop".to_owned(), json!({"$ref": "#/$defs/loop"}));
        defs
    }

    #[test]
    fn inlines_refs_and_keeps_local_keys() {
        let schema =
            json!({"properties": {"at": {"$ref": "#/$defs/wrapped", "description": "Where."}}});
        let inlined = inline_refs(&schema, &defs()).unwrap_or_default();
        assert_eq!(
            inlined,
            json!({"properties": {"at": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "title": "W", "description": "Where."}}})
        );
    }

    #[test]
    fn reports_unknown_and_cyclic_refs() {
        let unknown = inline_refs(&json!({"$ref": "#/$defs/nope"}), &defs());
        assert!(unknown.is_err_and(|message| message.contains("#/$defs/nope")));
        let cyclic = inline_refs(&json!({"$ref": "#/$defs/loop"}), &defs());
        assert!(cyclic.is_err_and(|message| message.contains("too deep")));
        let malformed = inline_refs(&json!({"$ref": "other.json#/x"}), &defs());
        assert!(malformed.is_err_and(|message| message.contains("must have the form")));
    }

    #[test]
    fn canonical_json_sorts_keys() {
        let value = json!({"b": 1, "a": {"d": [1, {"z": 0, "y": 1}], "c": null}});
        assert_eq!(
            canonical(&value),
            r#"{"a":{"c":null,"d":[1,{"y":1,"z":0}]},"b":1}"#
        );
    }

    #[test]
    fn labels_types() {
        assert_eq!(type_label(&json!({"type": "string"})), "string");
        assert_eq!(
            type_label(&json!({"oneOf": [{"type": "integer"}, {"type": "string"}]})),
            "integer | string"
        );
        assert_eq!(
            type_label(
                &json!({"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3})
            ),
            "number[3]"
        );
        assert_eq!(
            type_label(&json!({"type": "array", "items": {"type": "string"}})),
            "array<string>"
        );
        assert_eq!(type_label(&json!({"description": "anything"})), "any");
    }
}
