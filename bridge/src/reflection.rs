//! Shared reflection helpers: naming types and entities the way a model does, and moving values
//! between Bevy's reflect JSON form and the world. Every world access here is fallible.

use std::any::TypeId;

use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityGeneration, EntityIndex};
use bevy::ecs::observer::Observer;
use bevy::ecs::reflect::{AppTypeRegistry, ReflectComponent, ReflectResource};
use bevy::ecs::resource::IsResource;
use bevy::prelude::{Entity, EntityRef, Name, World};
use bevy::reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
use bevy::reflect::{
    PartialReflect, ReflectFromReflect, ReflectPath, TypeRegistration, TypeRegistry,
};
use bevy_mcp_generated::params::EntityRef as EntityParam;
use mcp_native_transport::gateway::guidance::suggest;
use serde::de::DeserializeSeed;
use serde_json::{Value, json};

use crate::error::BridgeError;
pub use crate::hierarchy::{children_of, parent_of};
use crate::policy::WritePolicy;
use crate::reflect_paths::{self, field_at};
use crate::type_schema;

/// The app's type registry (cloned handle; read it with `.read()`).
pub fn registry(world: &World) -> AppTypeRegistry {
    world
        .get_resource::<AppTypeRegistry>()
        .cloned()
        .unwrap_or_default()
}

/// Finds a registered type by full path, or by a short path that names exactly one type.
pub fn resolve_type<'r>(
    registry: &'r TypeRegistry,
    given: &str,
) -> Result<&'r TypeRegistration, BridgeError> {
    if let Some(registration) = registry.get_with_type_path(given) {
        return Ok(registration);
    }
    if registry.is_ambiguous(given) {
        let mut candidates: Vec<String> = registry
            .iter()
            .filter(|registration| registration.type_info().type_path_table().short_path() == given)
            .map(|registration| registration.type_info().type_path().to_owned())
            .collect();
        candidates.sort();
        return Err(BridgeError::AmbiguousType {
            given: given.to_owned(),
            candidates,
        });
    }
    if let Some(registration) = registry.get_with_short_type_path(given) {
        return Ok(registration);
    }
    let short_paths: Vec<&str> = registry
        .iter()
        .map(|registration| registration.type_info().type_path_table().short_path())
        .collect();
    Err(BridgeError::TypeNotFound {
        given: given.to_owned(),
        suggestions: suggest(given, short_paths)
            .into_iter()
            .map(str::to_owned)
            .collect(),
    })
}

/// A type that is a reflected component (and not a resource).
pub fn resolve_component<'r>(
    registry: &'r TypeRegistry,
    given: &str,
) -> Result<(&'r TypeRegistration, &'r ReflectComponent), BridgeError> {
    let registration = resolve_type(registry, given)?;
    let type_path = registration.type_info().type_path().to_owned();
    if registration.data::<ReflectResource>().is_some() {
        return Err(BridgeError::NotAComponent {
            type_path,
            reason: "it is a resource; read it with inspect.get_resource".to_owned(),
        });
    }
    let component =
        registration
            .data::<ReflectComponent>()
            .ok_or_else(|| BridgeError::NotAComponent {
                type_path,
                reason: "it is registered but has no #[reflect(Component)]".to_owned(),
            })?;
    Ok((registration, component))
}

/// The component id of a registered type, when the world knows it as a component.
pub fn component_id(world: &World, type_id: TypeId) -> Option<ComponentId> {
    world.components().get_id(type_id)
}

/// Whether the world knows this type as a component that can be changed in place (reflection's
/// `reflect_mut` panics on immutable ones).
pub fn is_mutable(world: &World, type_id: TypeId) -> bool {
    component_id(world, type_id)
        .and_then(|id| world.components().get_info(id))
        .is_some_and(|info| info.mutable())
}

/// Resolves an entity reference: bits, `"12v1"`, a digits-only string of bits, or a unique Name.
/// Resource entities are found too; callers that must not touch them check [`is_resource`].
pub fn resolve_entity(world: &mut World, given: &EntityParam) -> Result<Entity, BridgeError> {
    match given {
        EntityParam::Bits(bits) => entity_from_bits(world, *bits, &bits.to_string()),
        EntityParam::Text(text) => {
            if let Some(bits) = text.parse::<u64>().ok().filter(|_| !text.is_empty()) {
                return entity_from_bits(world, bits, text);
            }
            if let Some(entity) = display_form(text) {
                // Looked up, not searched for: the cost does not grow with the world.
                return Some(entity)
                    .filter(|entity| world.get_entity(*entity).is_ok())
                    .ok_or_else(|| BridgeError::EntityNotFound {
                        given: text.clone(),
                        suggestions: Vec::new(),
                    });
            }
            by_name(world, text)
        }
    }
}

fn entity_from_bits(world: &World, bits: u64, given: &str) -> Result<Entity, BridgeError> {
    Entity::try_from_bits(bits)
        .filter(|entity| world.get_entity(*entity).is_ok())
        .ok_or_else(|| BridgeError::EntityNotFound {
            given: given.to_owned(),
            suggestions: Vec::new(),
        })
}

/// The entity `"12v1"` names (index 12, generation 1), as `Entity`'s `Display` writes it.
fn display_form(text: &str) -> Option<Entity> {
    let (index, generation) = text.split_once('v')?;
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(index) || !digits(generation) {
        return None;
    }
    let index = EntityIndex::from_raw_u32(index.parse().ok()?)?;
    let generation = EntityGeneration::from_bits(generation.parse().ok()?);
    Some(Entity::from_index_and_generation(index, generation))
}

fn by_name(world: &mut World, name: &str) -> Result<Entity, BridgeError> {
    // One pass that copies nothing: names are only collected when there is no match.
    let mut query = world.query::<(Entity, &Name)>();
    // `Name` compares its precomputed hashes first: the scan reads no string it does not match.
    let wanted = Name::new(name.to_owned());
    let matches: Vec<Entity> = query
        .iter(world)
        .filter(|(_, candidate)| **candidate == wanted)
        .map(|(entity, _)| entity)
        .collect();
    match matches.as_slice() {
        [entity] => Ok(*entity),
        [] => Err(BridgeError::EntityNotFound {
            given: format!("{name:?}"),
            suggestions: suggest(
                name,
                query.iter(world).map(|(_, candidate)| candidate.as_str()),
            )
            .into_iter()
            .map(str::to_owned)
            .collect(),
        }),
        several => Err(BridgeError::AmbiguousEntity {
            given: name.to_owned(),
            candidates: several
                .iter()
                .map(|entity| json!({"entity": entity.to_string(), "bits": entity.to_bits()}))
                .collect(),
        }),
    }
}

/// Whether the entity holds a resource.
pub fn is_resource(world: &World, entity: Entity) -> bool {
    world.get::<IsResource>(entity).is_some()
}

/// Refuses resource entities and observers (Bevy plumbing: the game's, or another session's
/// watch) for actions that change entities.
pub fn require_plain_entity(world: &World, entity: Entity) -> Result<(), BridgeError> {
    if is_resource(world, entity) {
        return Err(BridgeError::IsResource {
            entity: entity.to_string(),
        });
    }
    if world.get::<Observer>(entity).is_some() {
        return Err(BridgeError::ProtectedEntity {
            entity: entity.to_string(),
            what: "an observer (Bevy plumbing that runs when an event is triggered)",
        });
    }
    Ok(())
}

/// `{entity, bits, name?}` as results show an entity.
pub fn entity_info(world: &World, entity: Entity) -> Value {
    let mut info = json!({"entity": entity.to_string(), "bits": entity.to_bits()});
    if let Some(name) = world.get::<Name>(entity) {
        info["name"] = json!(name.as_str());
    }
    info
}

/// Serializes a reflected value to JSON in the reflect serde form.
pub fn to_json(value: &dyn PartialReflect, registry: &TypeRegistry) -> Result<Value, BridgeError> {
    if let Some(json) = crate::reflect_json::reflect_to_json(value, registry) {
        return Ok(json);
    }
    serde_json::to_value(TypedReflectSerializer::new(value, registry)).map_err(|error| {
        BridgeError::NotSerializable {
            type_path: value.reflect_type_path().to_owned(),
            reason: error.to_string(),
        }
    })
}

/// Deserializes JSON into a value of the registered type (a dynamic value for most types).
pub fn from_json(
    registration: &TypeRegistration,
    registry: &TypeRegistry,
    value: &Value,
) -> Result<Box<dyn PartialReflect>, BridgeError> {
    TypedReflectDeserializer::new(registration, registry)
        .deserialize(value)
        .map_err(|error| {
            let type_path = registration.type_info().type_path().to_owned();
            let reason = error.to_string();
            // Only a refused value pays for the schema.
            match type_schema::first_violation(registry, registration, value) {
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
/// panicking fallback construction.
pub fn concrete_from_json(
    registration: &TypeRegistration,
    registry: &TypeRegistry,
    value: &Value,
) -> Result<Box<dyn bevy::reflect::Reflect>, BridgeError> {
    let dynamic = from_json(registration, registry, value)?;
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

/// A reflected value in the world: a component of an entity, or a resource (its entity).
#[derive(Clone, Copy)]
pub struct Reflected<'r> {
    /// The entity that holds it.
    pub entity: Entity,
    /// Its registration.
    pub registration: &'r TypeRegistration,
    /// Its component reflection.
    pub component: &'r ReflectComponent,
}

impl std::fmt::Debug for Reflected<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflected")
            .field("entity", &self.entity)
            .field("type", &self.registration.type_info().type_path())
            .finish()
    }
}

/// Sets the field at `path` of a reflected value to `value` (reflect JSON) and returns the field
/// before and after. The new value is read and checked by the write policy before anything is
/// borrowed mutably, so a refused value changes nothing, not even the change tick; `missing` is
/// the error when the value is not there.
pub fn mutate_at_path(
    world: &mut World,
    target: Reflected<'_>,
    registry: &TypeRegistry,
    path: &str,
    value: &Value,
    missing: &dyn Fn() -> BridgeError,
) -> Result<(Value, Value), BridgeError> {
    let owner = target.registration.type_info().type_path();
    let new_value = {
        let entity_ref = world.get_entity(target.entity).map_err(|_| missing())?;
        let current = target.component.reflect(entity_ref).ok_or_else(missing)?;
        value_at_path(current.as_partial_reflect(), path, value, registry, owner)?
    };
    WritePolicy::of(world).check_value(world, target.registration, new_value.as_ref())?;
    let mut entity_mut = world.get_entity_mut(target.entity).map_err(|_| missing())?;
    let mut reflected = target
        .component
        .reflect_mut(&mut entity_mut)
        .ok_or_else(missing)?;
    apply_at_path(
        reflected.as_partial_reflect_mut(),
        path,
        new_value.as_ref(),
        registry,
        owner,
    )
}

/// A new value for the field at `path` inside `target`, read from reflect JSON and checked
/// against the field's registered type; the world is not touched yet.
fn value_at_path(
    target: &dyn PartialReflect,
    path: &str,
    value: &Value,
    registry: &TypeRegistry,
    owner: &str,
) -> Result<Box<dyn PartialReflect>, BridgeError> {
    let field = field_at(target, path, owner)?;
    let field_type = field.reflect_type_path();
    let registration = registry.get_with_type_path(field_type).ok_or_else(|| BridgeError::InvalidValue {
        type_path: field_type.to_owned(),
        reason: "the field's type is not registered for reflection, so a value cannot be read for it".to_owned(),
    })?;
    from_json(registration, registry, value)
}

/// Applies a value made by [`value_at_path`] at `path` inside `target` and returns the field
/// before and after.
fn apply_at_path(
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
            Err(error) => return Err(reflect_paths::path_not_found(path, owner, info, error)),
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
pub fn component_json(
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

/// A component's short name from the type registry (Bevy only keeps debug names with its
/// `debug` feature), or its Rust type name when it is not registered.
pub fn component_short_name(world: &World, registry: &TypeRegistry, id: ComponentId) -> String {
    let Some(info) = world.components().get_info(id) else {
        return format!("{id:?}");
    };
    info.type_id()
        .and_then(|type_id| registry.get(type_id))
        .map(|registration| {
            registration
                .type_info()
                .type_path_table()
                .short_path()
                .to_owned()
        })
        .unwrap_or_else(|| info.name().shortname().to_string())
}

/// Short names of every component of an entity (reflected or not), sorted.
pub fn component_names(world: &World, registry: &TypeRegistry, entity: Entity) -> Vec<String> {
    let Ok(entity_ref) = world.get_entity(entity) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entity_ref
        .archetype()
        .components()
        .iter()
        .map(|id| component_short_name(world, registry, *id))
        .collect();
    names.sort();
    names
}

/// Every entity that is not plumbing (a resource entity or an observer), ordered by index.
pub fn plain_entities(world: &World) -> Vec<Entity> {
    plain_entities_by_index(world).collect()
}

/// [`plain_entities`] one at a time, walked in index order: a page of a listing costs what it
/// skips and returns, never a sort of the whole world.
pub fn plain_entities_by_index(world: &World) -> impl Iterator<Item = Entity> + '_ {
    plain_entities_in(world, 0..world.entities().len())
}

/// [`plain_entities_by_index`] over a range of entity indices only: a scan that spans frames
/// takes one slice per frame.
pub fn plain_entities_in(
    world: &World,
    indices: std::ops::Range<u32>,
) -> impl Iterator<Item = Entity> + '_ {
    let entities = world.entities();
    // Plumbing is decided once per archetype: per entity it was two type-id lookups, most of
    // what a listing's skip over 50,000 indices cost.
    let plumbing = plumbing_archetypes(world);
    indices.filter_map(move |index| {
        let entity = entities.resolve_from_index(EntityIndex::from_raw_u32(index)?);
        let location = entities.get_spawned(entity).ok()?;
        let is_plumbing = plumbing
            .get(location.archetype_id.index())
            .copied()
            .unwrap_or(true);
        (!is_plumbing).then_some(entity)
    })
}

/// For every archetype (by index), whether its entities are resource entities or observers.
fn plumbing_archetypes(world: &World) -> Vec<bool> {
    let plumbing = [
        world.component_id::<IsResource>(),
        world.component_id::<Observer>(),
    ];
    world
        .archetypes()
        .iter()
        .map(|archetype| plumbing.iter().flatten().any(|id| archetype.contains(*id)))
        .collect()
}

/// How many [`plain_entities`] there are, counted per archetype rather than per entity.
pub fn plain_entity_count(world: &World) -> usize {
    plumbing_archetypes(world)
        .iter()
        .zip(world.archetypes().iter())
        .filter(|(plumbing, _)| !**plumbing)
        .map(|(_, archetype)| archetype.len() as usize)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_display_form_reads_back_as_the_entity_it_shows() {
        let mut world = World::new();
        let first = world.spawn_empty().id();
        world.despawn(first);
        // The same index, one generation on: the generation must be read, not assumed.
        let reused = world.spawn_empty().id();
        assert_eq!(display_form(&reused.to_string()), Some(reused));
        assert_ne!(display_form(&first.to_string()), Some(reused));
        for text in ["v1", "12v", "Player", "12v1x", "-1v0", "4294967295v0"] {
            assert_eq!(display_form(text), None, "{text}");
        }
        let more: Vec<Entity> = (0..5).map(|_| world.spawn_empty().id()).collect();
        world.despawn(more[2]);
        let listed = plain_entities(&world);
        assert!(
            listed.is_sorted_by_key(|entity| entity.index()),
            "{listed:?}"
        );
        assert_eq!(listed.len(), plain_entity_count(&world));
        assert!(!listed.contains(&more[2]));
        let stale = EntityParam::Text(first.to_string());
        assert!(
            resolve_entity(&mut world, &stale).is_err(),
            "a despawned id is not found"
        );
    }
}
