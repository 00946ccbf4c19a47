//! Entity references written the way the bridge shows them (`"12v1"`) inside component values.
//!
//! Bevy's reflect JSON holds an `Entity` as its raw bits, while every action parameter and every
//! reply names entities as `"12v1"`. A model that copies an id from a reply into a value would
//! be refused; so before a value is read, each string in an `Entity` position that reads as
//! `"<index>v<generation>"` becomes the bits Bevy expects. Only positions the type says are
//! entities are touched: a `String` field holding `"3v1"` stays text.

use std::any::TypeId;
use std::borrow::Cow;

use bevy::ecs::entity::{Entity, EntityGeneration, EntityIndex};
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::{TypeInfo, TypeRegistry};
use serde_json::Value;

/// The entity `"12v1"` names (index 12, generation 1), as `Entity`'s `Display` writes it.
pub(crate) fn display_form(text: &str) -> Option<Entity> {
    let (index, generation) = text.split_once('v')?;
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(index) || !digits(generation) {
        return None;
    }
    let index = EntityIndex::from_raw_u32(index.parse().ok()?)?;
    let generation = EntityGeneration::from_bits(generation.parse().ok()?);
    Some(Entity::from_index_and_generation(index, generation))
}

/// How deep a value is followed (the reflect deserializer refuses deeper values anyway).
const MAX_DEPTH: usize = 64;

/// `value` with every `"12v1"` in an `Entity` position of `type_id` replaced by its bits;
/// borrowed unchanged when there is none (the common case costs one scan for a `v`).
pub(crate) fn entity_text_as_bits<'v>(
    registry: &TypeRegistry,
    type_id: TypeId,
    value: &'v Value,
) -> Cow<'v, Value> {
    if !holds_entity_text(value, 0) {
        return Cow::Borrowed(value);
    }
    let mut owned = value.clone();
    rewrite(registry, type_id, &mut owned, 0);
    Cow::Owned(owned)
}

/// Whether any string inside reads as an entity (cheap: most values hold none).
fn holds_entity_text(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::String(text) => display_form(text).is_some(),
        Value::Array(items) => items.iter().any(|item| holds_entity_text(item, depth + 1)),
        Value::Object(map) => map.values().any(|item| holds_entity_text(item, depth + 1)),
        _ => false,
    }
}

fn rewrite(registry: &TypeRegistry, type_id: TypeId, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if type_id == TypeId::of::<Entity>() {
        if let Value::String(text) = value
            && let Some(entity) = display_form(text)
        {
            *value = Value::from(entity.to_bits());
        }
        return;
    }
    let Some(info) = registry.get_type_info(type_id) else {
        return;
    };
    let inner = |type_id: TypeId, value: &mut Value| rewrite(registry, type_id, value, depth + 1);
    match (info, value) {
        (TypeInfo::Struct(info), Value::Object(fields)) => {
            for (name, field_value) in fields.iter_mut() {
                if let Some(field) = info.field(name) {
                    inner(field.type_id(), field_value);
                }
            }
        }
        (TypeInfo::TupleStruct(info), value) => match value {
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    if let Some(field) = info.field_at(index) {
                        inner(field.type_id(), item);
                    }
                }
            }
            // A newtype is written as its one field.
            single => {
                if info.field_len() == 1
                    && let Some(field) = info.field_at(0)
                {
                    inner(field.type_id(), single);
                }
            }
        },
        (TypeInfo::Tuple(info), Value::Array(items)) => {
            for (index, item) in items.iter_mut().enumerate() {
                if let Some(field) = info.field_at(index) {
                    inner(field.type_id(), item);
                }
            }
        }
        (TypeInfo::List(info), Value::Array(items)) => {
            for item in items {
                inner(info.item_ty().id(), item);
            }
        }
        (TypeInfo::Array(info), Value::Array(items)) => {
            for item in items {
                inner(info.item_ty().id(), item);
            }
        }
        (TypeInfo::Set(info), Value::Array(items)) => {
            for item in items {
                inner(info.value_ty().id(), item);
            }
        }
        (TypeInfo::Map(info), Value::Object(entries)) => {
            for entry in entries.values_mut() {
                inner(info.value_ty().id(), entry);
            }
        }
        (TypeInfo::Enum(info), value) => {
            // `Option` is written as its value or null; other enums as {"Variant": fields}.
            if info.type_path_table().module_path() == Some("core::option")
                && info.type_path_table().ident() == Some("Option")
            {
                if let Some(VariantInfo::Tuple(some)) = info.variant("Some")
                    && let Some(field) = some.field_at(0)
                    && !value.is_null()
                {
                    inner(field.type_id(), value);
                }
                return;
            }
            let Value::Object(tagged) = value else {
                return;
            };
            for (name, fields) in tagged.iter_mut() {
                match (info.variant(name), fields) {
                    (Some(VariantInfo::Struct(variant)), Value::Object(fields)) => {
                        for (field_name, field_value) in fields.iter_mut() {
                            if let Some(field) = variant.field(field_name) {
                                inner(field.type_id(), field_value);
                            }
                        }
                    }
                    (Some(VariantInfo::Tuple(variant)), Value::Array(items)) => {
                        for (index, item) in items.iter_mut().enumerate() {
                            if let Some(field) = variant.field_at(index) {
                                inner(field.type_id(), item);
                            }
                        }
                    }
                    (Some(VariantInfo::Tuple(variant)), single) if variant.field_len() == 1 => {
                        if let Some(field) = variant.field_at(0) {
                            inner(field.type_id(), single);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::prelude::Reflect;
    use serde_json::json;

    #[allow(dead_code, reason = "read through reflection only")]
    #[derive(Reflect)]
    struct Target {
        entity: Entity,
        label: String,
        chain: Vec<Entity>,
        maybe: Option<Entity>,
        pair: (Entity, u32),
        aim: Aim,
    }

    #[allow(dead_code, reason = "read through reflection only")]
    #[derive(Reflect)]
    enum Aim {
        Nothing,
        At(Entity),
        Follow { leader: Entity },
    }

    fn registry() -> TypeRegistry {
        let mut registry = TypeRegistry::new();
        registry.register::<Target>();
        registry
    }

    #[test]
    fn entity_positions_take_the_display_form_and_text_stays_text() {
        let registry = registry();
        let bits = |text: &str| {
            display_form(text)
                .map(|entity| json!(entity.to_bits()))
                .unwrap_or(Value::Null)
        };
        let given = json!({
            "entity": "12v1", "label": "3v1", "chain": ["4v0", 17],
            "maybe": "5v2", "pair": ["6v0", 2], "aim": {"Follow": {"leader": "7v3"}}
        });
        let read = entity_text_as_bits(&registry, TypeId::of::<Target>(), &given);
        assert_eq!(read["entity"], bits("12v1"));
        assert_eq!(read["label"], json!("3v1"), "a String stays text");
        assert_eq!(read["chain"], json!([bits("4v0"), 17]));
        assert_eq!(read["maybe"], bits("5v2"));
        assert_eq!(read["pair"][0], bits("6v0"));
        assert_eq!(read["aim"]["Follow"]["leader"], bits("7v3"));
        let tuple = json!({"aim": {"At": "8v0"}});
        let read = entity_text_as_bits(&registry, TypeId::of::<Target>(), &tuple);
        assert_eq!(read["aim"]["At"], bits("8v0"));
    }

    #[test]
    fn values_without_entity_text_are_borrowed() {
        let registry = registry();
        let given = json!({"entity": 42, "label": "plain"});
        assert!(matches!(
            entity_text_as_bits(&registry, TypeId::of::<Target>(), &given),
            Cow::Borrowed(_)
        ));
    }
}
