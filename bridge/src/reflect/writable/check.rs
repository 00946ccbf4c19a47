//! Checking a written value against its type's rules, field by field.

use super::*;

impl WritableType {
    pub(super) fn rule_for(&self, field: &str) -> Option<&'static FieldRule> {
        self.fields.iter().find(|rule| rule.field == field)
    }

    /// Whether a write may reach this top-level field.
    pub(super) fn field_writable(&self, field: &str) -> bool {
        match self.rule_for(field) {
            Some(rule) => !matches!(rule.bound, Bound::Kept),
            None => self.others == Others::Open,
        }
    }

    /// The top-level fields a write may reach, for messages.
    pub(super) fn writable_fields(&self) -> Vec<&'static str> {
        self.fields
            .iter()
            .filter(|rule| !matches!(rule.bound, Bound::Kept) && !rule.field.is_empty())
            .map(|rule| rule.field)
            .collect()
    }

    /// Refuses a mutation at `path` (a reflect path from the root) that reaches a kept field.
    pub(crate) fn check_path(&self, path: &str) -> Result<(), String> {
        let field = top_field(path);
        if field.is_empty() || self.field_writable(field) {
            return Ok(());
        }
        Err(self.kept_message(field))
    }

    pub(super) fn kept_message(&self, field: &str) -> String {
        let writable = self.writable_fields();
        if self.others == Others::Open {
            format!("field `{field}` is Bevy's to manage and keeps its value")
        } else {
            format!(
                "field `{field}` is Bevy's to manage and keeps its value; the writable fields are: {}",
                writable.join(", ")
            )
        }
    }

    /// Checks a whole new value: every rule, every number bound, and that kept fields keep their
    /// value in `reference` (what the value replaces, or the type's default; none for a value
    /// taken whole).
    pub(crate) fn check(
        &self,
        written: &Written<'_>,
        reference: Option<&dyn PartialReflect>,
        registry: Option<&TypeRegistry>,
    ) -> Result<(), String> {
        if let Some(bound) = self.numbers {
            within(written.new, bound, &mut String::new())?;
        }
        for rule in self.fields {
            let field = if rule.field.is_empty() {
                Some(written.new)
            } else {
                field_of(written.new, rule.field)
            };
            let Some(field) = field else { continue };
            let mut at = format!(".{}", rule.field);
            match &rule.bound {
                Bound::Any | Bound::Kept => {}
                Bound::Within(bound) => within(field, *bound, &mut at)?,
                Bound::OneOf(allowed) => {
                    let mut found = Vec::new();
                    numbers(field, &mut at, &mut found);
                    for (number, path) in found {
                        if !allowed.contains(&number) {
                            return Err(format!(
                                "at {path}: {number} is not allowed; use one of {}",
                                list(allowed)
                            ));
                        }
                    }
                }
                Bound::Rule { says, check } => {
                    check(written).map_err(|reason| format!("{reason} (allowed: {says})"))?;
                }
            }
        }
        if let Some(reference) = reference {
            for field in kept_fields(self, written.new) {
                let (Some(new), Some(old)) =
                    (field_of(written.new, &field), field_of(reference, &field))
                else {
                    continue;
                };
                if !same(new, old, registry) {
                    return Err(self.kept_message(&field));
                }
            }
        }
        Ok(())
    }

    /// What a write may change, as `inspect.describe_type` shows it.
    pub(crate) fn summary(&self) -> Value {
        let rules: Map<String, Value> = self
            .fields
            .iter()
            .filter_map(|rule| {
                let shown = match &rule.bound {
                    Bound::Any | Bound::Kept => return None,
                    Bound::Within(bound) => json!({"minimum": bound.min, "maximum": bound.max}),
                    Bound::OneOf(allowed) => json!({"enum": allowed.to_vec()}),
                    Bound::Rule { says, .. } => json!(says),
                };
                let name = if rule.field.is_empty() {
                    "(whole value)"
                } else {
                    rule.field
                };
                Some((name.to_owned(), shown))
            })
            .collect();
        let kept: Vec<&str> = self
            .fields
            .iter()
            .filter(|rule| matches!(rule.bound, Bound::Kept))
            .map(|rule| rule.field)
            .collect();
        let mut summary = json!({
            "fields": match self.others {
                Others::Open => json!("all but the kept ones"),
                Others::Kept => json!(self.writable_fields()),
            },
            "rules": rules,
        });
        if !kept.is_empty() || self.others == Others::Kept {
            summary["kept"] = match self.others {
                Others::Open => json!(kept),
                Others::Kept => json!("every field not listed in fields keeps its value"),
            };
        }
        if let Some(bound) = self.numbers {
            summary["numbers"] = json!({"minimum": bound.min, "maximum": bound.max});
        }
        summary
    }

    /// The type's schema with the rules shown: `minimum`/`maximum` on bounded numbers, `enum` for
    /// allowed sets, `readOnly` on kept fields, and a description of each rule.
    pub(crate) fn annotate(&self, schema: &mut Value) {
        let Value::Object(document) = schema else {
            return;
        };
        // The root body is taken out of `$defs` while it is annotated: bounds inline the
        // definitions they reach, so one shared with an unbounded field stays as it was.
        let mut defs = document.remove("$defs").unwrap_or(Value::Null);
        let root_key = document
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/$defs/"))
            .map(str::to_owned);
        match &root_key {
            Some(key) => {
                let Some(mut root) = defs.as_object_mut().and_then(|defs| defs.remove(key)) else {
                    document.insert("$defs".to_owned(), defs);
                    return;
                };
                self.annotate_body(&mut root, &mut defs);
                if let Value::Object(map) = &mut defs {
                    map.insert(key.clone(), root);
                }
            }
            None => {
                let mut root = Value::Object(std::mem::take(document));
                self.annotate_body(&mut root, &mut defs);
                if let Value::Object(root) = root {
                    *document = root;
                }
            }
        }
        if !defs.is_null() {
            document.insert("$defs".to_owned(), defs);
        }
    }

    pub(super) fn annotate_body(&self, root: &mut Value, defs: &mut Value) {
        let mut notes = Vec::new();
        if let Some(bound) = self.numbers {
            notes.push(format!(
                "every number within {}..{}",
                show(bound.min),
                show(bound.max)
            ));
            constrain_numbers(root, defs, bound, 0);
        }
        let properties: Vec<String> = root
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        for name in properties {
            let Some(property) = root.pointer_mut(&format!("/properties/{name}")) else {
                continue;
            };
            match self.rule_for(&name).map(|rule| &rule.bound) {
                Some(Bound::Within(bound)) => constrain_numbers(property, defs, *bound, 0),
                Some(Bound::OneOf(allowed)) => {
                    if let Value::Object(property) = property {
                        property.insert("enum".to_owned(), json!(allowed.to_vec()));
                    }
                }
                Some(Bound::Rule { says, .. }) => describe(property, says),
                Some(Bound::Kept) => keep(property),
                Some(Bound::Any) => {}
                None if self.others == Others::Kept => keep(property),
                None => {}
            }
        }
        if let Some(Bound::Rule { says, .. }) = self.rule_for("").map(|rule| &rule.bound) {
            notes.push((*says).to_owned());
        }
        if !notes.is_empty() {
            describe(root, &notes.join("; "));
        }
    }
}

/// The first segment of a reflect path (`.font_size.Px` -> `font_size`, `.0` -> `0`).
pub(super) fn top_field(path: &str) -> &str {
    let path = path.trim_start_matches('.');
    let end = path.find(['.', '[', '#']).unwrap_or(path.len());
    &path[..end]
}

/// A top-level field of a struct or tuple struct value.
pub(super) fn field_of<'v>(
    value: &'v dyn PartialReflect,
    field: &str,
) -> Option<&'v dyn PartialReflect> {
    match value.reflect_ref() {
        ReflectRef::Struct(value) => value.field(field),
        ReflectRef::TupleStruct(value) => value.field(field.parse().ok()?),
        _ => None,
    }
}

/// The names of the top-level fields that keep their value.
pub(super) fn kept_fields(entry: &WritableType, value: &dyn PartialReflect) -> Vec<String> {
    let names: Vec<String> = match value.reflect_ref() {
        ReflectRef::Struct(value) => (0..value.field_len())
            .filter_map(|index| value.name_at(index).map(str::to_owned))
            .collect(),
        ReflectRef::TupleStruct(value) => (0..value.field_len()).map(|i| i.to_string()).collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|name| !entry.field_writable(name))
        .collect()
}

/// Whether two values are the same: reflection's equality, else their JSON.
pub(super) fn same(
    a: &dyn PartialReflect,
    b: &dyn PartialReflect,
    registry: Option<&TypeRegistry>,
) -> bool {
    if let Some(equal) = a.reflect_partial_eq(b) {
        return equal;
    }
    let Some(registry) = registry else {
        return false;
    };
    match (
        crate::reflect::json::reflect_to_json(a, registry),
        crate::reflect::json::reflect_to_json(b, registry),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Every number inside `value` with its path (appended to `path`).
pub(super) fn numbers(value: &dyn PartialReflect, path: &mut String, out: &mut Vec<(f64, String)>) {
    let walked: Result<(), std::convert::Infallible> =
        walk(value, path, 0, &mut |value, path, _| {
            if let Some(number) = number_of(value) {
                out.push((number, path.to_owned()));
            }
            Ok(Step::Descend)
        });
    let Ok(()) = walked;
}

/// A reflected number as f64.
pub(crate) fn number_of(value: &dyn PartialReflect) -> Option<f64> {
    macro_rules! as_f64 {
        ($($kind:ty),*) => {
            $(if let Some(number) = value.try_downcast_ref::<$kind>() {
                return Some(*number as f64);
            })*
        };
    }
    as_f64!(
        f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, u128, i128
    );
    None
}

/// Refuses a number of `value` outside `bound`.
pub(super) fn within(
    value: &dyn PartialReflect,
    bound: Span,
    path: &mut String,
) -> Result<(), String> {
    let mut found = Vec::new();
    numbers(value, path, &mut found);
    for (number, at) in found {
        if !(bound.min..=bound.max).contains(&number) {
            let at = if at.is_empty() {
                "the value".to_owned()
            } else {
                format!("at {at}")
            };
            return Err(format!(
                "{at}: {} is outside {}..{}",
                show(number),
                show(bound.min),
                show(bound.max)
            ));
        }
    }
    Ok(())
}

pub(super) fn show(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

pub(super) fn list(numbers: &[f64]) -> String {
    numbers
        .iter()
        .map(|n| show(*n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The variant name and its first field's number, for an enum of one-number variants.
pub(super) fn variant_number(value: &dyn PartialReflect) -> Option<(&str, Option<f64>)> {
    let ReflectRef::Enum(value) = value.reflect_ref() else {
        return None;
    };
    let number = value.field_at(0).and_then(number_of);
    Some((value.variant_name(), number))
}

/// The value at a reflect path inside `value`.
pub(super) fn at<'v>(value: &'v dyn PartialReflect, path: &str) -> Option<&'v dyn PartialReflect> {
    path.reflect_element(value).ok()
}

/// A numeric field by reflect path, as f64.
pub(super) fn number_at(value: &dyn PartialReflect, path: &str) -> Option<f64> {
    at(value, path).and_then(number_of)
}
