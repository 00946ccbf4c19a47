//! Reflected values to JSON in Bevy's reflect serde form, walked by the bridge itself: into a
//! `serde_json::Value` for replies, or straight into text for the history, which holds values as
//! text (one walk, [`ReflectJson`], for both).
//!
//! Bevy's `TypedReflectSerializer` first asks every value for custom serialization and, for each
//! struct, enum or list without it, builds an error message it then throws away (with the type
//! stack formatted in, under bevy_reflect's `debug_stack`); that was about half of what reading a
//! component cost. This walk produces the same JSON for what it understands — structs, tuple
//! structs, tuples, lists, arrays, sets, maps with plain keys, enums and leaves with
//! `ReflectSerialize` — and fails for anything else (registry-aware serialization, other map
//! keys, values it cannot place), so the caller falls back to Bevy's serializer, which then also
//! gives Bevy's own error messages. `tests/reflect_json.rs` in the sandbox compares both over
//! every registered type. Asset handles, which Bevy's serializer cannot write, take the bridge's
//! own form ([`crate::reflect::handle_form`]): a path or a reference.

use std::cell::RefCell;

use bevy::asset::{ReflectHandle, UntypedHandle};
use bevy::reflect::enums::{Enum, VariantInfo, VariantType};
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::serde::{ReflectSerializeWithRegistry, SerializationData};
use bevy::reflect::{
    PartialReflect, ReflectKind, ReflectRef, ReflectSerialize, TypeInfo, TypeRegistry,
};
use serde::ser::{Error, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::handle_form;

/// Serializes a reflected value to JSON in the reflect serde form.
pub fn to_json(value: &dyn PartialReflect, registry: &TypeRegistry) -> Result<Value, BridgeError> {
    if let Some(json) = reflect_to_json(value, registry) {
        return Ok(json);
    }
    serde_json::to_value(TypedReflectSerializer::new(value, registry)).map_err(|error| {
        BridgeError::NotSerializable {
            type_path: value.reflect_type_path().to_owned(),
            reason: error.to_string(),
        }
    })
}

/// Writes a reflected value as compact JSON text in the reflect serde form at the end of `out`
/// (what the history holds: the same values as [`to_json`], serialized once). On an error `out`
/// is as it was.
pub fn write_json(
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    out: &mut Vec<u8>,
) -> Result<(), BridgeError> {
    if write_reflect_json(value, registry, out) {
        return Ok(());
    }
    let start = out.len();
    serde_json::to_writer(&mut *out, &TypedReflectSerializer::new(value, registry)).map_err(
        |error| {
            out.truncate(start);
            BridgeError::NotSerializable {
                type_path: value.reflect_type_path().to_owned(),
                reason: error.to_string(),
            }
        },
    )
}

/// `value` as Bevy's reflect serializer would write it, or `None` where only that serializer
/// knows how (or where it would fail).
pub fn reflect_to_json(value: &dyn PartialReflect, registry: &TypeRegistry) -> Option<Value> {
    serde_json::to_value(ReflectJson {
        value,
        registry,
        kept: None,
    })
    .ok()
}

/// Writes `value` as compact JSON text at the end of `out`; `false` (with `out` as it was) where
/// only Bevy's serializer knows how.
pub(crate) fn write_reflect_json(
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    out: &mut Vec<u8>,
) -> bool {
    write_reflect_json_keeping(value, registry, out, None)
}

/// [`write_json`] for the history: the handles the text names only by id (assets made at run
/// time by the game) are added to `kept`, so the history can hold them and the assets live as
/// long as a value may be given back.
pub(crate) fn write_json_keeping(
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    out: &mut Vec<u8>,
    kept: &mut Vec<UntypedHandle>,
) -> Result<(), BridgeError> {
    let cell = RefCell::new(std::mem::take(kept));
    let written = write_reflect_json_keeping(value, registry, out, Some(&cell));
    *kept = cell.into_inner();
    if written {
        return Ok(());
    }
    write_json(value, registry, out)
}

fn write_reflect_json_keeping(
    value: &dyn PartialReflect,
    registry: &TypeRegistry,
    out: &mut Vec<u8>,
    kept: Option<&RefCell<Vec<UntypedHandle>>>,
) -> bool {
    let start = out.len();
    let walk = ReflectJson {
        value,
        registry,
        kept,
    };
    if serde_json::to_writer(&mut *out, &walk).is_ok() {
        return true;
    }
    out.truncate(start);
    false
}

/// Why the walk stopped: the caller hands the value to Bevy's serializer instead.
const ELSEWHERE: &str = "only Bevy's reflect serializer knows this value";

/// A reflected value, serialized by walking its reflection.
struct ReflectJson<'a> {
    value: &'a dyn PartialReflect,
    registry: &'a TypeRegistry,
    /// Where the handles named only by id go, when the caller keeps them.
    kept: Option<&'a RefCell<Vec<UntypedHandle>>>,
}

impl<'a> ReflectJson<'a> {
    fn of(&self, value: &'a dyn PartialReflect) -> ReflectJson<'a> {
        ReflectJson {
            value,
            registry: self.registry,
            kept: self.kept,
        }
    }
}

impl Serialize for ReflectJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let elsewhere = || S::Error::custom(ELSEWHERE);
        let value = self.value;
        // Looked up once: how the type serializes, and which fields it skips.
        let registration = value
            .get_represented_type_info()
            .and_then(|info| self.registry.get(info.type_id()));
        let skipped =
            registration.and_then(|registration| registration.data::<SerializationData>());
        if let Some(reflect) = value.try_as_reflect() {
            let registration = registration.ok_or_else(elsewhere)?;
            if let Some(serialize) = registration.data::<ReflectSerialize>() {
                return serialize.serialize(reflect, serializer);
            }
            if registration
                .data::<ReflectSerializeWithRegistry>()
                .is_some()
            {
                return Err(elsewhere());
            }
            if let Some(handle) = handle_form::as_handle(reflect, registration) {
                let typed = registration.data::<ReflectHandle>().is_some();
                let json = handle_form::handle_json(&handle, typed, self.registry);
                if let Some(kept) = self.kept
                    && handle_form::named_only_by_id(&handle)
                {
                    kept.borrow_mut().push(handle);
                }
                return json.serialize(serializer);
            }
        }
        match value.reflect_ref() {
            ReflectRef::Struct(value) => {
                let Some(TypeInfo::Struct(info)) = value.get_represented_type_info() else {
                    return Err(elsewhere());
                };
                let mut object = serializer.serialize_map(None)?;
                for (index, (_, field)) in value.iter_fields().enumerate() {
                    if skipped.is_some_and(|data| data.is_field_skipped(index)) {
                        continue;
                    }
                    let name = info.field_at(index).ok_or_else(elsewhere)?.name();
                    object.serialize_entry(name, &self.of(field))?;
                }
                object.end()
            }
            ReflectRef::TupleStruct(value) => {
                let Some(TypeInfo::TupleStruct(_)) = value.get_represented_type_info() else {
                    return Err(elsewhere());
                };
                if value.field_len() == 1 && skipped.is_none() {
                    // A newtype struct is its field.
                    return self
                        .of(value.field(0).ok_or_else(elsewhere)?)
                        .serialize(serializer);
                }
                let mut items = serializer.serialize_seq(Some(value.field_len()))?;
                for (index, field) in value.iter_fields().enumerate() {
                    if skipped.is_some_and(|data| data.is_field_skipped(index)) {
                        continue;
                    }
                    items.serialize_element(&self.of(field))?;
                }
                items.end()
            }
            ReflectRef::Tuple(value) => self.array(value.iter_fields(), serializer),
            ReflectRef::List(value) => self.array(value.iter(), serializer),
            ReflectRef::Array(value) => self.array(value.iter(), serializer),
            ReflectRef::Set(value) => self.array(value.iter(), serializer),
            ReflectRef::Enum(value) => self.serialize_enum(value, serializer),
            ReflectRef::Map(value) => {
                let mut object = serializer.serialize_map(Some(value.len()))?;
                for (key, item) in value.iter() {
                    let key = map_key(key, self.registry).ok_or_else(elsewhere)?;
                    object.serialize_entry(&key, &self.of(item))?;
                }
                object.end()
            }
            // Opaque values without `ReflectSerialize`, functions.
            _ => Err(elsewhere()),
        }
    }
}

impl<'a> ReflectJson<'a> {
    /// An enum: `Option` as its value or null, a unit variant as its name, others as
    /// `{"Variant": fields}`.
    fn serialize_enum<S: Serializer>(
        &self,
        value: &dyn Enum,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let elsewhere = || S::Error::custom(ELSEWHERE);
        let Some(TypeInfo::Enum(info)) = value.get_represented_type_info() else {
            return Err(elsewhere());
        };
        let variant = info
            .variant_at(value.variant_index())
            .ok_or_else(elsewhere)?;
        let table = info.type_path_table();
        let is_option =
            table.module_path() == Some("core::option") && table.ident() == Some("Option");
        match value.variant_type() {
            VariantType::Unit if is_option => serializer.serialize_unit(),
            VariantType::Unit => serializer.serialize_str(variant.name()),
            VariantType::Tuple if value.field_len() == 1 => {
                let field = self.of(value.field_at(0).ok_or_else(elsewhere)?);
                if is_option {
                    return field.serialize(serializer);
                }
                let mut object = serializer.serialize_map(Some(1))?;
                object.serialize_entry(variant.name(), &field)?;
                object.end()
            }
            VariantType::Tuple => {
                let mut object = serializer.serialize_map(Some(1))?;
                object.serialize_entry(
                    variant.name(),
                    &Items {
                        of: self,
                        items: value.iter_fields().map(|field| field.value()).collect(),
                    },
                )?;
                object.end()
            }
            VariantType::Struct => {
                let VariantInfo::Struct(fields_info) = variant else {
                    return Err(elsewhere());
                };
                let mut fields = Vec::with_capacity(value.field_len());
                for (index, field) in value.iter_fields().enumerate() {
                    let name = fields_info.field_at(index).ok_or_else(elsewhere)?.name();
                    fields.push((name.to_owned(), field.value()));
                }
                let mut object = serializer.serialize_map(Some(1))?;
                object.serialize_entry(variant.name(), &Fields { of: self, fields })?;
                object.end()
            }
        }
    }

    fn array<S: Serializer>(
        &self,
        items: impl Iterator<Item = &'a dyn PartialReflect>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for item in items {
            seq.serialize_element(&self.of(item))?;
        }
        seq.end()
    }
}

/// An enum variant's tuple fields, as an array.
struct Items<'s, 'a> {
    of: &'s ReflectJson<'a>,
    items: Vec<&'a dyn PartialReflect>,
}

impl Serialize for Items<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.items.len()))?;
        for item in &self.items {
            seq.serialize_element(&self.of.of(*item))?;
        }
        seq.end()
    }
}

/// An enum variant's named fields, as an object.
struct Fields<'s, 'a> {
    of: &'s ReflectJson<'a>,
    fields: Vec<(String, &'a dyn PartialReflect)>,
}

impl Serialize for Fields<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut object = serializer.serialize_map(Some(self.fields.len()))?;
        for (name, field) in &self.fields {
            object.serialize_entry(name, &self.of.of(*field))?;
        }
        object.end()
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
