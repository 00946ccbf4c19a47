//! How a model names things, resolved against the live app: types by full or short path,
//! components, entities by bits, display form (`"12v1"`) or unique `Name`, and the short names
//! results show. Every lookup is fallible and says what was meant when it fails.

use std::any::TypeId;

use bevy::ecs::component::ComponentId;
use bevy::ecs::reflect::{AppTypeRegistry, ReflectComponent, ReflectResource};
use bevy::prelude::{Entity, Name, World};
use bevy::reflect::{TypeRegistration, TypeRegistry};
use bevy_mcp_generated::params::EntityRef as EntityParam;
use mcp_native_transport::gateway::guidance::suggest;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::entity_text::display_form;
use crate::reflect::world::PlumbingArchetypes;
use crate::reflect::writable::is_engine_crate;

/// The app's type registry (cloned handle; read it with `.read()`).
pub(crate) fn registry(world: &World) -> AppTypeRegistry {
    world
        .get_resource::<AppTypeRegistry>()
        .cloned()
        .unwrap_or_default()
}

/// Finds a registered type by full path, or by a short path that names exactly one type.
pub(crate) fn resolve_type<'r>(
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
pub(crate) fn resolve_component<'r>(
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

/// A component named for a presence test (`with`, `without`, `withComponents`): a reflected
/// component type, or else a component Bevy knows by name that is not reflected (most game
/// code: `Paddle`, `Ball`). `Ok(None)` for a type the world never saw as a component.
pub(crate) fn resolve_present_component(
    world: &World,
    registry: &TypeRegistry,
    given: &str,
) -> Result<Option<ComponentId>, BridgeError> {
    let not_reflected = match resolve_component(registry, given) {
        Ok((registration, _)) => return Ok(component_id(world, registration.type_id())),
        Err(error @ (BridgeError::TypeNotFound { .. } | BridgeError::NotAComponent { .. })) => {
            error
        }
        Err(other) => return Err(other),
    };
    let mut ids = components_named(world, given);
    match ids.len() {
        0 => Err(not_reflected),
        1 => Ok(ids.pop()),
        _ => {
            let mut candidates: Vec<String> =
                ids.iter().map(|id| component_label(world, *id)).collect();
            candidates.sort();
            Err(BridgeError::AmbiguousType {
                given: given.to_owned(),
                candidates,
            })
        }
    }
}

/// `error`, or, when it says reflection knows no type `given` that Bevy knows as exactly one
/// component, that the component is not reflected and how to reach its entities (game code
/// seldom derives `Reflect`: breakout's `Brick`). Looks inside errors placed in the params.
pub(crate) fn name_unreflected(world: &World, error: BridgeError) -> BridgeError {
    match error {
        BridgeError::TypeNotFound { given, suggestions } => {
            match components_named(world, &given).as_slice() {
                [id] => BridgeError::NotReflected {
                    type_path: component_label(world, *id),
                    given,
                },
                _ => BridgeError::TypeNotFound { given, suggestions },
            }
        }
        BridgeError::At { place, error } => BridgeError::At {
            place,
            error: Box::new(name_unreflected(world, *error)),
        },
        other => other,
    }
}

/// Components Bevy knows whose type path, or short name, is `given`.
fn components_named(world: &World, given: &str) -> Vec<ComponentId> {
    let mut exact = Vec::new();
    let mut short = Vec::new();
    for (id, info) in bevy::compat::registered_components(world) {
        let name = info.name();
        if &*name == given {
            exact.push(id);
        } else if name.shortname().to_string() == given {
            short.push(id);
        }
    }
    if exact.is_empty() { short } else { exact }
}

/// The ids of an entity's components (none for an entity that does not exist).
fn components_of(world: &World, entity: Entity) -> &[ComponentId] {
    world
        .entities()
        .get_spawned(entity)
        .ok()
        .and_then(|location| world.archetypes().get(location.archetype_id))
        .map_or(&[], |archetype| archetype.components())
}

/// Every component of an entity without reflection (no `ReflectComponent` registered), by the
/// name Bevy knows: its value cannot be read or written, but the model still sees what it is.
pub(crate) fn unreflected_components(
    world: &World,
    registry: &TypeRegistry,
    entity: Entity,
) -> Vec<String> {
    let mut names: Vec<String> = components_of(world, entity)
        .iter()
        .filter(|id| {
            world
                .components()
                .get_info(**id)
                .and_then(|info| info.type_id())
                .and_then(|type_id| registry.get(type_id))
                .is_none_or(|registration| registration.data::<ReflectComponent>().is_none())
        })
        .map(|id| component_label(world, *id))
        .collect();
    names.sort();
    names
}

/// The one-line fix for a component the bridge cannot read.
pub(crate) const HOW_TO_REFLECT: &str = "derive Reflect and register it: #[derive(Component, Reflect)] #[reflect(Component)] on the type, and app.register_type::<T>()";

/// The one-line fix for a resource the bridge cannot read.
pub(crate) const HOW_TO_REFLECT_RESOURCE: &str = "derive Reflect and register it: #[derive(Resource, Reflect)] #[reflect(Resource)] on the type, and app.register_type::<T>()";

/// Whether a type, by the path Bevy knows it by, is the game's own: not Bevy's, not the
/// bridge's, not the standard library's.
pub(crate) fn is_games_own(type_path: &str) -> bool {
    let crate_name = type_path.split("::").next().unwrap_or_default();
    !(is_engine_crate(crate_name)
        || crate_name.starts_with("bevy_mcp")
        || ["std", "core", "alloc"].contains(&crate_name))
}

/// The component id of a registered type, when the world knows it as a component.
pub(crate) fn component_id(world: &World, type_id: TypeId) -> Option<ComponentId> {
    world.components().get_id(type_id)
}

/// What to call a component by its id: the name Bevy knows (its type's path), or, when Bevy was
/// built without names (its `debug` feature), `unnamed component #<id>`.
pub(crate) fn component_label(world: &World, id: ComponentId) -> String {
    let name = world
        .components()
        .get_info(id)
        .map(|info| info.name().to_string())
        .unwrap_or_default();
    if name.is_empty() || name.starts_with('<') {
        format!("{UNNAMED_PREFIX}{}", id.index())
    } else {
        name
    }
}

const UNNAMED_PREFIX: &str = "unnamed component #";

/// Whether a [`component_label`] is a placeholder for a component Bevy knows no name of.
pub(crate) fn is_unnamed(label: &str) -> bool {
    label.starts_with(UNNAMED_PREFIX)
}

/// Whether the world knows this type as a component that can be changed in place (reflection's
/// `reflect_mut` panics on immutable ones).
pub(crate) fn is_mutable(world: &World, type_id: TypeId) -> bool {
    component_id(world, type_id)
        .and_then(|id| world.components().get_info(id))
        .is_some_and(|info| info.mutable())
}

/// Resolves an entity reference: bits, `"12v1"`, a digits-only string of bits, or a unique Name.
/// Resource entities are found too; callers that must not touch them check [`is_resource`].
pub(crate) fn resolve_entity(world: &World, given: &EntityParam) -> Result<Entity, BridgeError> {
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

/// How many of a component's carriers a [`BridgeError::NamedByComponent`] lists.
const CARRIERS_LISTED: usize = 5;

/// When no entity is named `name`: the game's entities that carry a component of that short
/// name, any case ("Paddle", "ball"), as the error that tells their ids. Plumbing is not such
/// an entity (resources, observers, the bridge's own, those the history holds out of sight).
/// Only on the error path: a scan of component types and archetypes.
fn named_by_component(world: &World, name: &str) -> Option<BridgeError> {
    let plumbing = PlumbingArchetypes::of(world);
    bevy::compat::registered_components(world)
        .filter(|(_, info)| {
            !info.name().to_string().contains('<')
                && info
                    .name()
                    .shortname()
                    .to_string()
                    .eq_ignore_ascii_case(name)
        })
        .find_map(|(id, info)| {
            let mut count = 0;
            let mut carriers = Vec::new();
            for archetype in world.archetypes().iter() {
                if !archetype.contains(id) || plumbing.contains(archetype.id()) {
                    continue;
                }
                count += archetype.len() as usize;
                let room = CARRIERS_LISTED.saturating_sub(carriers.len());
                carriers.extend(archetype.entities().iter().take(room).map(
                    |found| json!({"entity": found.id().to_string(), "bits": found.id().to_bits()}),
                ));
            }
            (count > 0).then(|| BridgeError::NamedByComponent {
                given: name.to_owned(),
                type_path: info.name().to_string(),
                count,
                carriers,
            })
        })
}

fn by_name(world: &World, name: &str) -> Result<Entity, BridgeError> {
    // One pass that copies nothing: names are only collected when there is no match. A world
    // that has never seen a `Name` has no query for it, and no entity of that name.
    let Some(mut query) = world.try_query::<(Entity, &Name)>() else {
        return Err(named_by_component(world, name).unwrap_or_else(|| {
            BridgeError::EntityNotFound {
                given: format!("{name:?}"),
                suggestions: Vec::new(),
            }
        }));
    };
    // `Name` compares its precomputed hashes first: the scan reads no string it does not match.
    let wanted = Name::new(name.to_owned());
    let matches: Vec<Entity> = query
        .iter(world)
        .filter(|(_, candidate)| **candidate == wanted)
        .map(|(entity, _)| entity)
        .collect();
    match matches.as_slice() {
        [entity] => Ok(*entity),
        [] => Err(
            named_by_component(world, name).unwrap_or_else(|| BridgeError::EntityNotFound {
                given: format!("{name:?}"),
                suggestions: suggest(
                    name,
                    query.iter(world).map(|(_, candidate)| candidate.as_str()),
                )
                .into_iter()
                .map(str::to_owned)
                .collect(),
            }),
        ),
        several => Err(BridgeError::AmbiguousEntity {
            given: name.to_owned(),
            candidates: several
                .iter()
                .map(|entity| json!({"entity": entity.to_string(), "bits": entity.to_bits()}))
                .collect(),
        }),
    }
}

/// `{entity, bits, name?}` as results show an entity.
pub(crate) fn entity_info(world: &World, entity: Entity) -> Value {
    let mut info = json!({"entity": entity.to_string(), "bits": entity.to_bits()});
    if let Some(name) = world.get::<Name>(entity) {
        info["name"] = json!(name.as_str());
    }
    info
}

/// A component's short name from the type registry (Bevy only keeps debug names with its
/// `debug` feature), or its Rust type name when it is not registered.
pub(crate) fn component_short_name(
    world: &World,
    registry: &TypeRegistry,
    id: ComponentId,
) -> String {
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
pub(crate) fn component_names(
    world: &World,
    registry: &TypeRegistry,
    entity: Entity,
) -> Vec<String> {
    let mut names: Vec<String> = components_of(world, entity)
        .iter()
        .map(|id| component_short_name(world, registry, *id))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflect::world::{plain_entities, plain_entity_count};

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
            resolve_entity(&world, &stale).is_err(),
            "a despawned id is not found"
        );
    }
}
