//! Reflected values to JSON in Bevy's reflect serde form, written straight into a
//! `serde_json::Value`.
//!
//! Bevy's `TypedReflectSerializer` first asks every value for custom serialization and, for each
//! struct, enum or list without it, builds an error message it then throws away (with the type
//! stack formatted in, under bevy_reflect's `debug_stack`); that was about half of what reading a
//! component cost. This walk produces the same JSON for what it understands — structs, tuple
//! structs, tuples, lists, arrays, sets, maps with plain keys, enums and leaves with
//! `ReflectSerialize` — and says `None` for anything else (registry-aware serialization, other
//! map keys, values it cannot place), so the
//! caller falls back to Bevy's serializer, which then also gives Bevy's own error messages.
//! `tests/reflect_json.rs` in the sandbox compares both over every registered type.

use bevy::reflect::enums::{VariantInfo, VariantType};
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::{
    PartialReflect, ReflectKind, ReflectRef, ReflectSerialize, TypeInfo, TypeRegistry,
};
use serde_json::{Map, Value};

/// `value` as Bevy's reflect serializer would write it, or `None` where only that serializer
/// knows how (or where it would fail).
pub fn reflect_to_json(value: &dyn PartialReflect, registry: &TypeRegistry) -> Option<Value> {
    // Looked up once: how the type serializes, and which fields it skips.
    let registration = value
        .get_represented_type_info()
        .and_then(|info| registry.get(info.type_id()));
    let skipped = registration.and_then(|registration| registration.data::<SerializationData>());
    if let Some(reflect) = value.try_as_reflect() {
        let registration = registration?;
        if let Some(serialize) = registration.data::<ReflectSerialize>() {
            return serialize
                .serialize(reflect, serde_json::value::Serializer)
                .ok();
        }
        if registration
            .data::<ReflectSerializeWithRegistry>()
            .is_some()
        {
            return None;
        }
    }
    match value.reflect_ref() {
        ReflectRef::Struct(value) => {
            let Some(TypeInfo::Struct(info)) = value.get_represented_type_info() else {
                return None;
            };
            let mut object = Map::new();
            for (index, (_, field)) in value.iter_fields().enumerate() {
                if skipped.is_some_and(|data| data.is_field_skipped(index)) {
                    continue;
                }
                let name = info.field_at(index)?.name();
                object.insert(name.to_owned(), reflect_to_json(field, registry)?);
            }
            Some(Value::Object(object))
        }
        ReflectRef::TupleStruct(value) => {
            let Some(TypeInfo::TupleStruct(_)) = value.get_represented_type_info() else {
                return None;
            };
            if value.field_len() == 1 && skipped.is_none() {
                // A newtype struct is its field.
                return reflect_to_json(value.field(0)?, registry);
            }
            let mut items = Vec::with_capacity(value.field_len());
            for (index, field) in value.iter_fields().enumerate() {
                if skipped.is_some_and(|data| data.is_field_skipped(index)) {
                    continue;
                }
                items.push(reflect_to_json(field, registry)?);
            }
            Some(Value::Array(items))
        }
        ReflectRef::Tuple(value) => array(value.iter_fields(), value.field_len(), registry),
        ReflectRef::List(value) => array(value.iter(), value.len(), registry),
        ReflectRef::Array(value) => array(value.iter(), value.len(), registry),
        ReflectRef::Set(value) => array(value.iter(), value.len(), registry),
        ReflectRef::Enum(value) => {
            let Some(TypeInfo::Enum(info)) = value.get_represented_type_info() else {
                return None;
            };
            let variant = info.variant_at(value.variant_index())?;
            let table = info.type_path_table();
            let is_option =
                table.module_path() == Some("core::option") && table.ident() == Some("Option");
            let inner = match value.variant_type() {
                VariantType::Unit if is_option => return Some(Value::Null),
                VariantType::Unit => return Some(Value::String(variant.name().to_owned())),
                VariantType::Tuple if value.field_len() == 1 => {
                    let field = reflect_to_json(value.field_at(0)?, registry)?;
                    if is_option {
                        return Some(field);
                    }
                    field
                }
                VariantType::Tuple => {
                    let fields = value.iter_fields().map(|field| field.value());
                    array(fields, value.field_len(), registry)?
                }
                VariantType::Struct => {
                    let VariantInfo::Struct(fields_info) = variant else {
                        return None;
                    };
                    let mut object = Map::new();
                    for (index, field) in value.iter_fields().enumerate() {
                        let name = fields_info.field_at(index)?.name();
                        object.insert(name.to_owned(), reflect_to_json(field.value(), registry)?);
                    }
                    Value::Object(object)
                }
            };
            let mut object = Map::new();
            object.insert(variant.name().to_owned(), inner);
            Some(Value::Object(object))
        }
        ReflectRef::Map(value) => {
            let mut object = Map::new();
            for (key, item) in value.iter() {
                object.insert(map_key(key, registry)?, reflect_to_json(item, registry)?);
            }
            Some(Value::Object(object))
        }
        // Opaque values without `ReflectSerialize`, functions.
        _ => None,
    }
}

/// A map key as serde_json writes it: strings as they are, integers and booleans as text. Other
/// keys (floats, structs, enums) go to Bevy's serializer, which applies serde_json's own rules.
fn map_key(key: &dyn PartialReflect, registry: &TypeRegistry) -> Option<String> {
    if key.reflect_kind() != ReflectKind::Opaque {
        return None;
    }
    match reflect_to_json(key, registry)? {
        Value::String(text) => Some(text),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

fn array<'a>(
    items: impl Iterator<Item = &'a dyn PartialReflect>,
    len: usize,
    registry: &TypeRegistry,
) -> Option<Value> {
    let mut values = Vec::with_capacity(len);
    for item in items {
        values.push(reflect_to_json(item, registry)?);
    }
    Some(Value::Array(values))
}
