//! Rust types for JSON Schemas: typed parameter structs with `deny_unknown_fields`.
//!
//! The mapping covers what the records use and refuses the rest with a message, so a record can
//! never produce a struct that accepts less (or more) than its schema:
//! `string` -> `String` (or an enum for `enum`), `integer` -> `u64` when `minimum >= 0` else `i64`,
//! `number` -> `f64`, `boolean` -> `bool`, fixed-length arrays -> `[T; N]`, other arrays ->
//! `Vec<T>`, objects with `properties` -> a struct, objects with an `additionalProperties`
//! schema -> `BTreeMap<String, T>`, `oneOf` with `null` -> `Option<T>`, other `oneOf` -> an
//! untagged enum, no type -> `serde_json::Value`, `$ref` -> the definition's named type.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::schema::{ordered_properties, ref_target, required_names};

/// Accumulates the items (structs, enums, aliases, default functions) of `params.rs`.
#[derive(Debug, Default)]
pub struct TypeGen {
    /// Item definitions, in the order they were first needed.
    pub items: Vec<String>,
    /// Functions returning field defaults, for `#[serde(default = "...")]`.
    pub default_fns: Vec<String>,
    /// `pub type` aliases emitted for definitions, to the type they stand for.
    aliases: BTreeMap<String, String>,
}

/// A field of a generated struct.
#[derive(Debug)]
pub struct Field<'a> {
    /// The JSON property name.
    pub name: &'a str,
    /// The property's schema as written (may be a `$ref`).
    pub schema: &'a Value,
    /// The property's schema with `$ref`s inlined (for descriptions and defaults).
    pub resolved: &'a Value,
    /// Whether the property must be present.
    pub required: bool,
}

impl TypeGen {
    /// Emits a `pub type`, struct or enum for a shared definition.
    pub fn definition(&mut self, name: &str, schema: &Value) -> Result<(), String> {
        let type_name = pascal_case(name);
        let rust = self.rust_type(schema, &type_name)?;
        if rust != type_name {
            self.aliases.insert(type_name.clone(), rust.clone());
            self.items.push(format!(
                "{}pub type {type_name} = {rust};\n",
                doc_comment(schema, "")
            ));
        }
        Ok(())
    }

    /// Emits a struct named `name` with one field per property.
    pub fn structure(&mut self, name: &str, doc: &str, fields: &[Field<'_>]) -> Result<(), String> {
        let mut body = String::new();
        for field in fields {
            let field_ident = rust_field_name(field.name);
            let context = format!("{name}{}", pascal_case(field.name));
            let inner = self.rust_type(field.schema, &context)?;
            body.push_str(&doc_comment(field.resolved, "    "));
            let mut attributes = Vec::new();
            if field_ident.trim_start_matches("r#") != field.name {
                attributes.push(format!("rename = {:?}", field.name));
            }
            let ty = if field.required {
                inner
            } else if let Some(default_fn) = self.default_fn(&context, &inner, field.resolved) {
                attributes.push(format!("default = {default_fn:?}"));
                inner
            } else if inner.starts_with("Option<") {
                attributes.push("default".to_owned());
                attributes.push("skip_serializing_if = \"Option::is_none\"".to_owned());
                inner
            } else {
                attributes.push("default".to_owned());
                attributes.push("skip_serializing_if = \"Option::is_none\"".to_owned());
                format!("Option<{inner}>")
            };
            if !attributes.is_empty() {
                body.push_str(&format!("    #[serde({})]\n", attributes.join(", ")));
            }
            body.push_str(&format!("    pub {field_ident}: {ty},\n"));
        }
        self.items.push(format!(
            "/// {}\n#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]\n#[serde(deny_unknown_fields)]\npub struct {name} {{\n{body}}}\n",
            one_line(doc)
        ));
        Ok(())
    }

    /// The Rust type for `schema`, emitting any named item it needs under `context`.
    fn rust_type(&mut self, schema: &Value, context: &str) -> Result<String, String> {
        if let Some(reference) = schema.get("$ref") {
            return Ok(pascal_case(ref_target(reference)?));
        }
        if let Some(Value::Array(branches)) = schema.get("oneOf") {
            return self.one_of(schema, branches, context);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return self.string_enum(schema, values, context);
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Ok("String".to_owned()),
            Some("boolean") => Ok("bool".to_owned()),
            Some("number") => Ok("f64".to_owned()),
            Some("integer") => {
                let unsigned = ["minimum", "exclusiveMinimum"]
                    .iter()
                    .filter_map(|key| schema.get(key).and_then(Value::as_f64))
                    .any(|bound| bound >= 0.0);
                Ok(if unsigned { "u64" } else { "i64" }.to_owned())
            }
            Some("array") => {
                let item = match schema.get("items") {
                    Some(items) => self.rust_type(items, &format!("{context}Item"))?,
                    None => "serde_json::Value".to_owned(),
                };
                let min = schema.get("minItems").and_then(Value::as_u64);
                let max = schema.get("maxItems").and_then(Value::as_u64);
                Ok(match (min, max) {
                    (Some(min), Some(max)) if min == max && max <= 32 => format!("[{item}; {max}]"),
                    _ => format!("Vec<{item}>"),
                })
            }
            Some("object") => self.object(schema, context),
            Some("null") => Err("a bare null type is only allowed as a oneOf branch".to_owned()),
            Some(other) => Err(format!("type \"{other}\" has no Rust mapping")),
            None => Ok("serde_json::Value".to_owned()),
        }
    }

    fn object(&mut self, schema: &Value, context: &str) -> Result<String, String> {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let required = required_names(schema);
            let fields: Vec<Field<'_>> = ordered_properties(properties, &required)
                .into_iter()
                .map(|(name, property)| Field {
                    name,
                    schema: property,
                    resolved: property,
                    required: required.contains(&name),
                })
                .collect();
            let doc = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(context);
            self.structure(context, doc, &fields)?;
            return Ok(context.to_owned());
        }
        match schema.get("additionalProperties") {
            Some(Value::Object(_)) => {
                let value =
                    self.rust_type(&schema["additionalProperties"], &format!("{context}Value"))?;
                Ok(format!("std::collections::BTreeMap<String, {value}>"))
            }
            _ => Ok("serde_json::Map<String, serde_json::Value>".to_owned()),
        }
    }

    fn one_of(
        &mut self,
        schema: &Value,
        branches: &[Value],
        context: &str,
    ) -> Result<String, String> {
        let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
        let others: Vec<&Value> = branches.iter().filter(|branch| !is_null(branch)).collect();
        if others.len() < branches.len() {
            return match others.as_slice() {
                [single] => Ok(format!("Option<{}>", self.rust_type(single, context)?)),
                _ => Err("a nullable oneOf must have exactly one non-null branch".to_owned()),
            };
        }
        let mut variants = String::new();
        for (index, branch) in branches.iter().enumerate() {
            let variant = branch
                .get("title")
                .and_then(Value::as_str)
                .map(pascal_case)
                .ok_or_else(|| {
                    format!("oneOf branch {index} needs a title (it names the Rust variant)")
                })?;
            let ty = self.rust_type(branch, &format!("{context}{variant}"))?;
            variants.push_str(&doc_comment(branch, "    "));
            variants.push_str(&format!("    {variant}({ty}),\n"));
        }
        self.items.push(format!(
            "{}#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]\n#[serde(untagged)]\npub enum {context} {{\n{variants}}}\n",
            doc_comment(schema, "")
        ));
        Ok(context.to_owned())
    }

    fn string_enum(
        &mut self,
        schema: &Value,
        values: &[Value],
        context: &str,
    ) -> Result<String, String> {
        let mut variants = String::new();
        for value in values {
            let text = value.as_str().ok_or_else(|| {
                format!("enum value {value} is not a string; only string enums are supported")
            })?;
            let variant = pascal_case(text);
            variants.push_str(&format!("    /// `{text}`\n"));
            if snake_case(&variant) != text {
                variants.push_str(&format!("    #[serde(rename = {text:?})]\n"));
            }
            variants.push_str(&format!("    {variant},\n"));
        }
        self.items.push(format!(
            "{}#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]\n#[serde(rename_all = \"snake_case\")]\npub enum {context} {{\n{variants}}}\n",
            doc_comment(schema, "")
        ));
        Ok(context.to_owned())
    }

    /// A function returning the schema's scalar `default`, or `None` when there is none (or it is
    /// not a scalar we can write as a literal; the field then stays an `Option`).
    fn default_fn(&mut self, context: &str, ty: &str, schema: &Value) -> Option<String> {
        let default = schema.get("default")?;
        let underlying = self.aliases.get(ty).map_or(ty, String::as_str);
        let literal = match (underlying, default) {
            ("bool", Value::Bool(value)) => value.to_string(),
            ("u64" | "i64", Value::Number(number)) if number.is_i64() || number.is_u64() => {
                number.to_string()
            }
            ("f64", Value::Number(number)) => {
                let value = number.as_f64()?;
                format!("{value:?}")
            }
            ("String", Value::String(text)) => format!("{text:?}.to_owned()"),
            (_, Value::String(text)) if schema.get("enum").is_some() => {
                format!("{ty}::{}", pascal_case(text))
            }
            _ => return None,
        };
        let function = format!("default_{}", snake_case(context));
        self.default_fns.push(format!(
            "pub(crate) fn {function}() -> {ty} {{\n    {literal}\n}}\n"
        ));
        Some(format!("defaults::{function}"))
    }
}

/// `look_at` -> `LookAt`, `withComponents` -> `WithComponents`, `set_transform` -> `SetTransform`.
pub fn pascal_case(name: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' || c == '.' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `withComponents` -> `with_components`, `SetTransform` -> `set_transform`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (index, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if index > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `SET_TRANSFORM` for `set_transform`.
pub fn upper_snake_case(name: &str) -> String {
    snake_case(name).to_ascii_uppercase()
}

fn rust_field_name(name: &str) -> String {
    const KEYWORDS: [&str; 12] = [
        "type", "ref", "mod", "fn", "match", "move", "loop", "use", "where", "impl", "in", "as",
    ];
    let snake = snake_case(name);
    if KEYWORDS.contains(&snake.as_str()) {
        format!("r#{snake}")
    } else {
        snake
    }
}

/// A `///` comment from the schema's description, or nothing.
fn doc_comment(schema: &Value, indent: &str) -> String {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(|text| format!("{indent}/// {}\n", markdown_escaped(&one_line(text))))
        .unwrap_or_default()
}

/// Description text as rustdoc Markdown: brackets and angle brackets are text (`items[2]`,
/// `<scenes dir>`), not links or HTML.
pub(crate) fn markdown_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_escape_markdown_links_and_tags() {
        assert_eq!(
            markdown_escaped("items[2] to <scenes dir>/<name>"),
            "items\\[2\\] to \\<scenes dir\\>/\\<name\\>"
        );
    }

    #[test]
    fn case_conversions() {
        assert_eq!(pascal_case("look_at"), "LookAt");
        assert_eq!(pascal_case("withComponents"), "WithComponents");
        assert_eq!(snake_case("withComponents"), "with_components");
        assert_eq!(upper_snake_case("set_transform"), "SET_TRANSFORM");
        assert_eq!(rust_field_name("type"), "r#type");
    }

    #[test]
    fn orders_required_first_then_by_name() {
        let properties = serde_json::json!({"z": {}, "b": {}, "a": {}, "entity": {}});
        let map = properties.as_object().cloned().unwrap_or_default();
        let ordered = ordered_properties(&map, &["entity", "z"]);
        let names: Vec<&str> = ordered.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["entity", "z", "a", "b"]);
    }
}
