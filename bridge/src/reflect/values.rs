//! Values in and out of the world as reflect JSON (the form the Bevy Remote Protocol uses):
//! reading components, building values of registered types (a [`ValueReader`] reads the parts
//! Bevy's deserializer cannot, asset handles), and applying a value at a reflect path.

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, EntityRef, World};
use bevy::reflect::serde::SerializationData;
use bevy::reflect::serde::{ReflectDeserializerProcessor, TypedReflectDeserializer};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::structs::{DynamicStruct, StructInfo};
use bevy::reflect::{
    PartialReflect, ReflectFromReflect, ReflectPath, TypeInfo, TypeRegistration, TypeRegistry,
};
use serde::de::DeserializeSeed;
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::entity_text;
use crate::reflect::paths::{self, field_at};
use crate::reflect::schema;

pub use crate::reflect::json::to_json;
#[cfg(feature = "test-support")]
pub use crate::reflect::json::write_json;

/// What reads, while a value is deserialized, the parts of it Bevy's deserializer cannot (asset
/// handles: [`crate::reflect::handles::HandleReader`]), and the typed error behind a part it
/// refused.
pub(crate) trait ValueReader: ReflectDeserializerProcessor {
    /// The error that refused a part of the value, if one did.
    fn take_refusal(&mut self) -> Option<BridgeError>;
}

/// Deserializes JSON into a value of the registered type (a dynamic value for most types);
/// `handles` reads the asset handles inside it.
pub(crate) fn from_json<R: ValueReader>(
    registration: &TypeRegistration,
    registry: &TypeRegistry,
    value: &Value,
    handles: &mut R,
) -> Result<Box<dyn PartialReflect>, BridgeError> {
    let value = entity_text::entity_text_as_bits(registry, registration.type_id(), value);
    let value = value.as_ref();
    TypedReflectDeserializer::with_processor(registration, registry, handles)
        .deserialize(value)
        .map_err(|error| {
            if let Some(refused) = handles.take_refusal() {
                return refused;
            }
            let type_path = registration.type_info().type_path().to_owned();
            let reason = error.to_string();
            // Only a refused value pays for the schema.
            match schema::first_violation(registry, registration, value) {
                Some(violation) => BridgeError::ValueBreaksSchema {
                    type_path,
                    reason,
                    violation,
                },
                None => BridgeError::InvalidValue { type_path, reason },
            }
        })
}

/// Deserializes JSON into a concrete value of the type, so inserting it can never hit Bevy's
/// panicking fallback construction. A struct with a registered default may leave fields out:
/// they take their default value (a UI `Node` is spawned from the few fields that matter).
pub(crate) fn concrete_from_json<R: ValueReader>(
    registration: &TypeRegistration,
    registry: &TypeRegistry,
    value: &Value,
    handles: &mut R,
) -> Result<Box<dyn bevy::reflect::Reflect>, BridgeError> {
    let dynamic = match over_default(registration, registry, value, handles) {
        Some(filled) => filled?,
        None => from_json(registration, registry, value, handles)?,
    };
    let type_path = registration.type_info().type_path().to_owned();
    let from_reflect =
        registration
            .data::<ReflectFromReflect>()
            .ok_or_else(|| BridgeError::InvalidValue {
                type_path: type_path.clone(),
                reason: "the type cannot be built through reflection (no FromReflect)".to_owned(),
            })?;
    from_reflect.from_reflect(dynamic.as_ref()).ok_or_else(|| BridgeError::InvalidValue {
        type_path,
        reason: "some fields are missing or have the wrong type; send the complete value (see inspect.describe_type)".to_owned(),
    })
}

/// The value of a struct type with a default, built from an object that leaves some of its
/// fields out: those keep the default's value. `None` when the value is complete (or the type
/// is not such a struct), so the ordinary reading and its messages apply.
fn over_default<R: ValueReader>(
    registration: &TypeRegistration,
    registry: &TypeRegistry,
    value: &Value,
    handles: &mut R,
) -> Option<Result<Box<dyn PartialReflect>, BridgeError>> {
    let (TypeInfo::Struct(info), Value::Object(given)) = (registration.type_info(), value) else {
        return None;
    };
    let skipped = registration.data::<SerializationData>();
    let missing = info.iter().enumerate().any(|(index, field)| {
        !given.contains_key(field.name())
            && !skipped.is_some_and(|data| data.is_field_skipped(index))
    });
    if !missing {
        return None;
    }
    let default = registration.data::<ReflectDefault>()?;
    Some(fill_over_default(info, default, registry, given, handles))
}

/// [`over_default`]'s work: the given fields read by their types, applied over the default.
fn fill_over_default<R: ValueReader>(
    info: &StructInfo,
    default: &ReflectDefault,
    registry: &TypeRegistry,
    given: &serde_json::Map<String, Value>,
    handles: &mut R,
) -> Result<Box<dyn PartialReflect>, BridgeError> {
    let type_path = info.type_path();
    {
        let mut patch = DynamicStruct::default();
        for (name, field_value) in given {
            let field = info.field(name).ok_or_else(|| BridgeError::InvalidValue {
                type_path: type_path.to_owned(),
                reason: format!(
                    "it has no field `{name}`; its fields are: {}",
                    info.field_names().join(", ")
                ),
            })?;
            let field_registration =
                registry
                    .get(field.type_id())
                    .ok_or_else(|| BridgeError::InvalidValue {
                        type_path: field.type_path().to_owned(),
                        reason: format!("field `{name}`'s type is not registered for reflection"),
                    })?;
            let read = match over_default(field_registration, registry, field_value, handles) {
                Some(filled) => filled?,
                None => from_json(field_registration, registry, field_value, handles)?,
            };
            patch.insert_boxed(name.clone(), read);
        }
        let mut whole = default.default().into_partial_reflect();
        whole
            .try_apply(&patch)
            .map_err(|error| BridgeError::InvalidValue {
                type_path: type_path.to_owned(),
                reason: error.to_string(),
            })?;
        Ok(whole)
    }
}

/// A new value for the field at `path` inside `target`, read from reflect JSON and checked
/// against the field's registered type; the world is not touched yet.
pub(crate) fn value_at_path<R: ValueReader>(
    target: &dyn PartialReflect,
    path: &str,
    value: &Value,
    registry: &TypeRegistry,
    owner: &str,
    handles: &mut R,
) -> Result<Box<dyn PartialReflect>, BridgeError> {
    let field = field_at(target, path, owner)?;
    let field_type = field.reflect_type_path();
    let registration = registry.get_with_type_path(field_type).ok_or_else(|| BridgeError::InvalidValue {
        type_path: field_type.to_owned(),
        reason: "the field's type is not registered for reflection, so a value cannot be read for it".to_owned(),
    })?;
    from_json(registration, registry, value, handles)
}

/// Applies a value made by [`value_at_path`] at `path` inside `target` and returns the field
/// before and after.
pub(crate) fn apply_at_path(
    target: &mut dyn PartialReflect,
    path: &str,
    new_value: &dyn PartialReflect,
    registry: &TypeRegistry,
    owner: &str,
) -> Result<(Value, Value), BridgeError> {
    let field = if path.is_empty() {
        target
    } else {
        let info = target.get_represented_type_info();
        match path.reflect_element_mut(target) {
            Ok(field) => field,
            Err(error) => return Err(paths::path_not_found(path, owner, info, error)),
        }
    };
    let before = to_json(field, registry)?;
    field
        .try_apply(new_value)
        .map_err(|error| BridgeError::InvalidValue {
            type_path: field.reflect_type_path().to_owned(),
            reason: error.to_string(),
        })?;
    Ok((before, to_json(field, registry)?))
}

/// Reads one component of an entity as JSON.
pub(crate) fn component_json(
    entity: EntityRef<'_>,
    component: &ReflectComponent,
    registry: &TypeRegistry,
) -> Option<Result<Value, BridgeError>> {
    component
        .reflect(entity)
        .map(|value| to_json(value.as_partial_reflect(), registry))
}

/// Every reflected component of an entity: (type path, registration) pairs, sorted by path.
pub fn reflected_components<'r>(
    world: &World,
    entity: Entity,
    registry: &'r TypeRegistry,
) -> Vec<(String, &'r TypeRegistration)> {
    let Ok(entity_ref) = world.get_entity(entity) else {
        return Vec::new();
    };
    let mut found: Vec<(String, &TypeRegistration)> = entity_ref
        .archetype()
        .components()
        .iter()
        .filter_map(|id| world.components().get_info(*id))
        .filter_map(|info| info.type_id())
        .filter_map(|type_id| registry.get(type_id))
        .filter(|registration| registration.data::<ReflectComponent>().is_some())
        .map(|registration| {
            (
                registration.type_info().type_path().to_owned(),
                registration,
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}
