//! JSON Schemas (draft 2020-12) of registered types, describing the exact JSON form the bridge
//! reads and writes: Bevy's reflect serde form, or the type's own serde form where it registers
//! one. Named types (structs, enums) go in `$defs`, so nested and recursive types stay finite.

use crate::reflect::handle_form;
use crate::reflect::json;
use std::any::TypeId;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use bevy::prelude::{Entity, Name};
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{ReflectSerialize, TypeInfo, TypeRegistration, TypeRegistry};
use serde_json::{Map, Value, json};

/// Named types one schema defines at most; deeper types are left open (`{}`) and say so.
const MAX_DEFS: usize = 128;

/// The JSON Schema of a registered type: `{$schema, $ref | <inline>, $defs}`.
pub fn type_schema(registry: &TypeRegistry, registration: &TypeRegistration) -> Value {
    let mut builder = Builder {
        registry,
        defs: Map::new(),
        keys: HashMap::new(),
        used: HashSet::new(),
        own_forms: Vec::new(),
    };
    let root = builder.schema_of(registration.type_info());
    builder.check_own_forms();
    let mut document = json!({"$schema": "https://json-schema.org/draft/2020-12/schema"});
    if let (Value::Object(document), Value::Object(root)) = (&mut document, root) {
        document.extend(root);
        if !builder.defs.is_empty() {
            document.insert("$defs".to_owned(), Value::Object(builder.defs));
        }
    }
    document
}

/// The first place where `value` breaks the type's schema: `{instancePath, schemaPath, message}`.
/// `None` when the value fits (or the schema cannot be compiled, which would be a bug here).
pub(crate) fn first_violation(
    registry: &TypeRegistry,
    registration: &TypeRegistration,
    value: &Value,
) -> Option<Value> {
    let schema = type_schema(registry, registration);
    let validator = jsonschema::draft202012::new(&schema).ok()?;
    let error = validator.iter_errors(value).next()?;
    Some(json!({
        "instancePath": error.instance_path().to_string(),
        "schemaPath": error.schema_path().to_string(),
        "message": error.to_string(),
    }))
}

struct Builder<'r> {
    registry: &'r TypeRegistry,
    defs: Map<String, Value>,
    keys: HashMap<TypeId, String>,
    used: HashSet<String>,
    /// Definitions built from reflection for types that serialize with their own serde: checked
    /// against their default value at the end.
    own_forms: Vec<(String, TypeId)>,
}

impl Builder<'_> {
    /// The schema of a value of this type, inline or as a `$ref`.
    fn schema_of(&mut self, info: &'static TypeInfo) -> Value {
        if let Some(schema) = primitive(info.type_id()) {
            return schema;
        }
        if let Some(inner) = option_inner(info) {
            let inner = self.schema_of(inner);
            return json!({"anyOf": [{"type": "null"}, inner]});
        }
        match info {
            TypeInfo::List(list) => {
                let items = self.schema_of_type(list.item_info(), list.item_ty().id());
                json!({"type": "array", "items": items})
            }
            TypeInfo::Array(array) => {
                let items = self.schema_of_type(array.item_info(), array.item_ty().id());
                json!({"type": "array", "items": items, "minItems": array.capacity(), "maxItems": array.capacity()})
            }
            TypeInfo::Set(set) => {
                let items = self.schema_of_type(None, set.value_ty().id());
                json!({"type": "array", "items": items, "uniqueItems": true})
            }
            TypeInfo::Map(map) => {
                let values = self.schema_of_type(map.value_info(), map.value_ty().id());
                json!({"type": "object", "additionalProperties": values})
            }
            TypeInfo::Tuple(tuple) => {
                let items: Vec<Value> = tuple
                    .iter()
                    .map(|field| self.schema_of_type(field.type_info(), field.type_id()))
                    .collect();
                sequence(items)
            }
            TypeInfo::Struct(_)
            | TypeInfo::TupleStruct(_)
            | TypeInfo::Enum(_)
            | TypeInfo::Opaque(_) => match self.define(info) {
                Some(key) => json!({"$ref": format!("#/$defs/{key}")}),
                None => {
                    json!({"description": format!("{}: not expanded (the schema holds {MAX_DEFS} types at most)", info.type_path())})
                }
            },
        }
    }

    /// The schema of a field's type, from its type info or, when the field carries none, from the
    /// registry.
    fn schema_of_type(&mut self, info: Option<&'static TypeInfo>, id: TypeId) -> Value {
        if let Some(schema) = primitive(id) {
            return schema;
        }
        match info.or_else(|| self.registry.get(id).map(TypeRegistration::type_info)) {
            Some(info) => self.schema_of(info),
            None => json!({"description": "a type that is not registered for reflection"}),
        }
    }

    /// Defines a named type in `$defs` (once) and returns its key.
    fn define(&mut self, info: &'static TypeInfo) -> Option<String> {
        if let Some(key) = self.keys.get(&info.type_id()) {
            return Some(key.clone());
        }
        if self.keys.len() >= MAX_DEFS {
            return None;
        }
        let key = self.fresh_key(info.type_path());
        // Registered before the body is built, so a recursive type refers to itself.
        self.keys.insert(info.type_id(), key.clone());
        let mut body = self.body_of(info, &key);
        if let Value::Object(body) = &mut body {
            body.insert("title".to_owned(), json!(info.type_path()));
        }
        self.defs.insert(key.clone(), body);
        Some(key)
    }

    fn fresh_key(&mut self, type_path: &str) -> String {
        // `a::b::C<d::E>` becomes `a.b.C_d.E`: readable, and safe in a JSON pointer.
        let mut base = String::with_capacity(type_path.len());
        for c in type_path.replace("::", ".").chars() {
            let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                c
            } else {
                '_'
            };
            if !(c == '_' && base.ends_with('_')) {
                base.push(c);
            }
        }
        let base = base.trim_end_matches('_').to_owned();
        let mut key = base.clone();
        let mut n = 2;
        while !self.used.insert(key.clone()) {
            key = format!("{base}_{n}");
            n += 1;
        }
        key
    }

    /// The schema of a named type's values.
    fn body_of(&mut self, info: &'static TypeInfo, key: &str) -> Value {
        if let Some(schema) = known_form(info) {
            return schema;
        }
        let registration = self.registry.get(info.type_id());
        if let Some(schema) = registration
            .and_then(|registration| handle_form::handle_schema(self.registry, registration))
        {
            return schema;
        }
        let own_serde = registration.is_some_and(|registration| {
            registration.data::<ReflectSerialize>().is_some()
                || registration
                    .data::<ReflectSerializeWithRegistry>()
                    .is_some()
        });
        let skipped = |index: usize| {
            !own_serde
                && registration
                    .and_then(|registration| registration.data::<SerializationData>())
                    .is_some_and(|data| data.is_field_skipped(index))
        };
        let body = match info {
            TypeInfo::Struct(info) => {
                let mut properties = Map::new();
                let mut required = Vec::new();
                for (index, field) in info.iter().enumerate() {
                    if skipped(index) {
                        continue;
                    }
                    let schema = self.schema_of_type(field.type_info(), field.type_id());
                    properties.insert(field.name().to_owned(), schema);
                    required.push(json!(field.name()));
                }
                json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
            }
            TypeInfo::TupleStruct(info) => {
                let has_skips = registration
                    .and_then(|registration| registration.data::<SerializationData>())
                    .is_some();
                let items: Vec<Value> = info
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| !skipped(*index))
                    .map(|(_, field)| self.schema_of_type(field.type_info(), field.type_id()))
                    .collect();
                // A one-field tuple struct is a newtype: its JSON is the field's.
                match (info.field_len(), has_skips && !own_serde, items.as_slice()) {
                    (1, false, [only]) => only.clone(),
                    _ => sequence(items),
                }
            }
            TypeInfo::Enum(info) => self.enum_body(info),
            TypeInfo::Opaque(_) => {
                let example =
                    registration.and_then(|registration| default_json(self.registry, registration));
                return match (own_serde, example) {
                    (true, Some(example)) => inferred(&example),
                    (true, None) => {
                        json!({"description": "serialized by the type's own serde form, which reflection cannot describe; read a value to see it"})
                    }
                    (false, _) => {
                        json!({"description": "cannot be read or written as JSON: the type registers no serde form"})
                    }
                };
            }
            // Inline kinds are never defined.
            _ => json!({}),
        };
        if own_serde {
            self.own_forms.push((key.to_owned(), info.type_id()));
        }
        body
    }

    /// An enum's schema: its unit variants as strings, the others as `{"Variant": payload}`.
    fn enum_body(&mut self, info: &'static bevy::reflect::enums::EnumInfo) -> Value {
        let mut units = Vec::new();
        let mut shapes = Vec::new();
        for variant in info.iter() {
            let name = variant.name();
            let payload = match variant {
                bevy::reflect::enums::VariantInfo::Unit(_) => {
                    units.push(json!(name));
                    continue;
                }
                bevy::reflect::enums::VariantInfo::Tuple(tuple) => {
                    let items: Vec<Value> = tuple
                        .iter()
                        .map(|field| self.schema_of_type(field.type_info(), field.type_id()))
                        .collect();
                    match items.as_slice() {
                        [only] => only.clone(),
                        _ => sequence(items),
                    }
                }
                bevy::reflect::enums::VariantInfo::Struct(fields) => {
                    let mut properties = Map::new();
                    for field in fields.iter() {
                        let schema = self.schema_of_type(field.type_info(), field.type_id());
                        properties.insert(field.name().to_owned(), schema);
                    }
                    let required: Vec<&str> = fields.iter().map(|field| field.name()).collect();
                    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
                }
            };
            shapes.push(json!({
                "type": "object",
                "properties": {name: payload},
                "required": [name],
                "additionalProperties": false,
            }));
        }
        if !units.is_empty() {
            shapes.insert(0, json!({"type": "string", "enum": units}));
        }
        match shapes.len() {
            1 => shapes.remove(0),
            _ => json!({"oneOf": shapes}),
        }
    }

    /// A definition built from reflection for a type with its own serde form may not match that
    /// form; where the type's default value proves it wrong, the definition is inferred from the
    /// default value instead.
    fn check_own_forms(&mut self) {
        for (key, type_id) in std::mem::take(&mut self.own_forms) {
            let Some(example) = self
                .registry
                .get(type_id)
                .and_then(|registration| default_json(self.registry, registration))
            else {
                continue;
            };
            let document = json!({"$ref": format!("#/$defs/{key}"), "$defs": self.defs.clone()});
            let fits = jsonschema::draft202012::new(&document)
                .is_ok_and(|validator| validator.is_valid(&example));
            if !fits {
                let title = self
                    .defs
                    .get(&key)
                    .and_then(|def| def.get("title"))
                    .cloned();
                let mut replacement = inferred(&example);
                if let (Value::Object(replacement), Some(title)) = (&mut replacement, title) {
                    replacement.insert("title".to_owned(), title);
                }
                self.defs.insert(key, replacement);
            }
        }
    }
}

/// A fixed-length array of these item schemas.
fn sequence(items: Vec<Value>) -> Value {
    let len = items.len();
    if items.is_empty() {
        return json!({"type": "array", "maxItems": 0});
    }
    json!({"type": "array", "prefixItems": items, "items": false, "minItems": len, "maxItems": len})
}

/// `T` of `Option<T>`.
fn option_inner(info: &TypeInfo) -> Option<&'static TypeInfo> {
    let TypeInfo::Enum(info) = info else {
        return None;
    };
    let table = info.type_path_table();
    if table.module_path() != Some("core::option") || table.ident() != Some("Option") {
        return None;
    }
    match info.variant("Some")? {
        bevy::reflect::enums::VariantInfo::Tuple(some) => some.field_at(0)?.type_info(),
        _ => None,
    }
}

/// The default value of a type as JSON, when it has one that serializes.
fn default_json(registry: &TypeRegistry, registration: &TypeRegistration) -> Option<Value> {
    let value = registration.data::<ReflectDefault>()?.default();
    json::to_json(value.as_partial_reflect(), registry).ok()
}

/// A schema read off one example value: its JSON kinds, arrays by their items, objects by their
/// keys (all required, as the type's serde form writes them all).
fn inferred(example: &Value) -> Value {
    let mut schema = match example {
        Value::Null => json!({"type": "null"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::String(_) => json!({"type": "string"}),
        Value::Array(items) => match items.first() {
            Some(first) => json!({"type": "array", "items": inferred(first)}),
            None => json!({"type": "array"}),
        },
        Value::Object(fields) => {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|(name, value)| (name.clone(), inferred(value)))
                .collect();
            let required: Vec<&String> = fields.keys().collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
    };
    if let Value::Object(schema) = &mut schema {
        schema.insert(
            "description".to_owned(),
            json!("the type's own serde form, read off its default value"),
        );
    }
    schema
}

/// Schemas of the types whose JSON form is fixed: numbers, strings, booleans.
fn primitive(id: TypeId) -> Option<Value> {
    let integer = |min: i64, max: u64| json!({"type": "integer", "minimum": min, "maximum": max});
    let schema = if id == TypeId::of::<bool>() {
        json!({"type": "boolean"})
    } else if id == TypeId::of::<u8>() {
        integer(0, u8::MAX.into())
    } else if id == TypeId::of::<u16>() {
        integer(0, u16::MAX.into())
    } else if id == TypeId::of::<u32>() {
        integer(0, u32::MAX.into())
    } else if id == TypeId::of::<u64>() || id == TypeId::of::<usize>() {
        integer(0, u64::MAX)
    } else if id == TypeId::of::<i8>() {
        integer(i8::MIN.into(), i8::MAX as u64)
    } else if id == TypeId::of::<i16>() {
        integer(i16::MIN.into(), i16::MAX as u64)
    } else if id == TypeId::of::<i32>() {
        integer(i32::MIN.into(), i32::MAX as u64)
    } else if id == TypeId::of::<i64>() || id == TypeId::of::<isize>() {
        integer(i64::MIN, i64::MAX as u64)
    } else if id == TypeId::of::<u128>() || id == TypeId::of::<i128>() {
        json!({"type": "integer"})
    } else if id == TypeId::of::<f32>() || id == TypeId::of::<f64>() {
        // JSON has no infinity or NaN: they read as null (and are refused on write).
        json!({"type": ["number", "null"]})
    } else if id == TypeId::of::<char>() {
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    } else if id == TypeId::of::<String>()
        || id == TypeId::of::<&'static str>()
        || id == TypeId::of::<Cow<'static, str>>()
        || id == TypeId::of::<PathBuf>()
    {
        json!({"type": "string"})
    } else {
        return None;
    };
    Some(schema)
}

/// Named types whose own serde form is known: math types as arrays of numbers, `Entity` as
/// `"12v1"` or its bits, `Name` as its text, `Duration` as seconds and nanoseconds.
fn known_form(info: &TypeInfo) -> Option<Value> {
    let id = info.type_id();
    if id == TypeId::of::<Entity>() {
        return Some(json!({
            "anyOf": [
                {"type": "string", "pattern": "^[0-9]+v[0-9]+$"},
                {"type": "integer", "minimum": 0}
            ],
            "description": "an entity: \"12v1\" as replies show it, or its bits"
        }));
    }
    if id == TypeId::of::<Name>() {
        return Some(json!({"type": "string"}));
    }
    if id == TypeId::of::<Duration>() {
        return Some(json!({
            "type": "object",
            "properties": {
                "secs": {"type": "integer", "minimum": 0},
                "nanos": {"type": "integer", "minimum": 0, "maximum": 999_999_999},
            },
            "required": ["secs", "nanos"],
            "additionalProperties": false,
        }));
    }
    let table = info.type_path_table();
    if table.module_path() == Some("glam") {
        return table.ident().and_then(glam_form);
    }
    None
}

/// glam's serde form: vectors, quaternions, matrices and affine transforms are flat arrays.
fn glam_form(ident: &str) -> Option<Value> {
    let (element, rest) = if let Some(rest) = ident.strip_prefix("DAffine") {
        ("number", format!("Affine{rest}"))
    } else if let Some(rest) = ident.strip_prefix('D') {
        ("number", rest.to_owned())
    } else if let Some(rest) = ident.strip_prefix('B') {
        ("boolean", rest.to_owned())
    } else if let Some(position) = ident.find("Vec").filter(|at| *at > 0) {
        // IVec2, U64Vec3, I8Vec4...
        ("integer", ident[position..].to_owned())
    } else {
        ("number", ident.to_owned())
    };
    let len = match rest.as_str() {
        "Vec2" => 2,
        "Vec3" | "Vec3A" => 3,
        "Vec4" | "Quat" => 4,
        "Mat2" => 4,
        "Mat3" | "Mat3A" => 9,
        "Mat4" => 16,
        "Affine2" => 6,
        "Affine3" | "Affine3A" => 12,
        _ => return None,
    };
    // Like plain floats, a non-finite component reads as null.
    let item = match element {
        "number" => json!({"type": ["number", "null"]}),
        other => json!({"type": other}),
    };
    Some(json!({
        "type": "array",
        "items": item,
        "minItems": len,
        "maxItems": len,
    }))
}
