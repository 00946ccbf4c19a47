//! Models placed through `WorldAssetRoot` (a glTF file's `#Scene0`): Bevy spawns the model's
//! entities as children of the entity holding the component, and spawns them again whenever the
//! handle changes, but leaves them where they are when the component is removed. A removal by the
//! bridge (`remove_components`, an undo of the insert) takes the model's entities with it, so what
//! the agent sees matches what history says; writing the component again brings them back.
//!
//! The same holds when history takes the root away without its parts (an undone spawn: the parts
//! came later, from Bevy): the parts go, and the root brought back spawns its model again.

use std::any::TypeId;

use bevy::ecs::change_detection::DetectChangesMut as _;
use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, World};
use bevy::world_serialization::{WorldAssetRoot, WorldInstance, WorldInstanceSpawner};

/// Removes `component` (of type `type_id`) from `entity`, with the model's entities when it is a
/// `WorldAssetRoot`; false when the entity is gone or does not hold it.
pub(crate) fn remove_component(
    world: &mut World,
    entity: Entity,
    type_id: TypeId,
    component: &ReflectComponent,
) -> bool {
    let holds = world
        .get_entity(entity)
        .is_ok_and(|entity_ref| component.contains(entity_ref));
    if !holds {
        return false;
    }
    if type_id == TypeId::of::<WorldAssetRoot>() {
        despawn_model(world, entity);
    }
    let Ok(mut entity_mut) = world.get_entity_mut(entity) else {
        return false;
    };
    component.remove(&mut entity_mut);
    true
}

/// Despawns the entities Bevy spawned for `entity`'s model, if it has one.
pub(crate) fn despawn_model(world: &mut World, entity: Entity) {
    let Some(instance) = world
        .get::<WorldInstance>(entity)
        .map(|instance| **instance)
    else {
        return;
    };
    world.try_resource_scope(
        |world, mut spawner: bevy::prelude::Mut<WorldInstanceSpawner>| {
            spawner.despawn_instance_sync(world, &instance);
        },
    );
}

/// The entities Bevy spawned for the world's models: a world file leaves them out, since the
/// model's root spawns them again when the file is loaded.
pub(crate) fn model_parts(world: &World) -> EntityHashSet {
    let mut parts = EntityHashSet::default();
    let (Some(spawner), Some(mut roots)) = (
        world.get_resource::<WorldInstanceSpawner>(),
        world.try_query::<&WorldInstance>(),
    ) else {
        return parts;
    };
    for instance in roots.iter(world) {
        parts.extend(spawner.iter_instance_entities(**instance));
    }
    parts
}

/// The entities Bevy spawned for `root`'s model (none when it holds no model).
pub(crate) fn parts_of(world: &World, root: Entity) -> EntityHashSet {
    let (Some(spawner), Some(instance)) = (
        world.get_resource::<WorldInstanceSpawner>(),
        world.get::<WorldInstance>(root),
    ) else {
        return EntityHashSet::default();
    };
    spawner.iter_instance_entities(**instance).collect()
}

/// Has Bevy spawn `root`'s model again when its parts are gone (despawned with
/// [`despawn_model`] while the root was held out of sight).
pub(crate) fn respawn_if_gone(world: &mut World, root: Entity) {
    if world.get::<WorldAssetRoot>(root).is_none() || !parts_of(world, root).is_empty() {
        return;
    }
    if let Some(mut model) = world.get_mut::<WorldAssetRoot>(root) {
        model.set_changed();
    }
}
