//! `history`: named in-memory checkpoints of the world and the differences between them.
//!
//! A checkpoint holds every plain entity's reflected components and every reflected resource as
//! reflect JSON, keyed by entity and type path, so two of them (or one and the world now) compare
//! value by value. State that changes by itself every frame (clocks, input, diagnostics, window
//! and render bookkeeping, `GlobalTransform`, which follows `Transform`) is not held: it would
//! make every diff non-empty without anyone changing anything.

use std::collections::BTreeMap;

use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::prelude::{Entity, Mut, Resource, World};
use bevy::reflect::TypeRegistry;
use bevy_mcp_generated::call::HistoryCall;
use bevy_mcp_generated::params::{
    HistoryCheckpointParams, HistoryDiffParams, HistoryRestoreParams,
};
use serde_json::{Map, Value, json};

use super::inspect::frame;
use crate::error::BridgeError;
use crate::policy::WritePolicy;
use crate::reflection::{self, plain_entities_by_index};

/// Most checkpoints held; taking one more drops the oldest (the reply names it).
pub const MAX_CHECKPOINTS: usize = 8;
/// Most JSON bytes one checkpoint may hold.
pub const MAX_CHECKPOINT_BYTES: usize = 32 * 1024 * 1024;

/// Type paths never held: they change by themselves every frame.
const UNTRACKED_PREFIXES: [&str; 12] = [
    "bevy_time::",
    "bevy_input::",
    "bevy_diagnostic::",
    "bevy_window::",
    "bevy_winit::",
    "bevy_render::",
    "bevy_picking::",
    "bevy_log::",
    "bevy_tasks::",
    "bevy_asset::",
    "bevy_app::",
    "bevy_transform::components::global_transform::",
];

/// Engine bookkeeping kept anyway: the name and the parent of an entity.
const TRACKED_EXCEPTIONS: [&str; 2] = ["bevy_ecs::name::Name", "bevy_ecs::hierarchy::ChildOf"];

fn tracked(type_path: &str) -> bool {
    if TRACKED_EXCEPTIONS.contains(&type_path) {
        return true;
    }
    // The rest of `bevy_ecs` is bookkeeping Bevy maintains (children lists, observers...).
    !type_path.starts_with("bevy_ecs::")
        && !UNTRACKED_PREFIXES
            .iter()
            .any(|prefix| type_path.starts_with(prefix))
}

/// One entity as a checkpoint holds it.
#[derive(Debug, Clone, PartialEq)]
struct EntitySnapshot {
    name: Option<String>,
    components: BTreeMap<String, Value>,
}

/// The world at one frame.
#[derive(Debug, Clone, PartialEq)]
struct Snapshot {
    frame: u64,
    entities: BTreeMap<u64, (Entity, EntitySnapshot)>,
    resources: BTreeMap<String, Value>,
    bytes: usize,
}

/// The checkpoints held, oldest first.
#[derive(Resource, Debug, Default)]
pub struct Checkpoints(Vec<(String, Snapshot)>);

impl Checkpoints {
    fn names(&self) -> Vec<String> {
        self.0.iter().map(|(name, _)| name.clone()).collect()
    }

    fn get(&self, name: &str) -> Result<&Snapshot, BridgeError> {
        self.0
            .iter()
            .find(|(held, _)| held == name)
            .map(|(_, snapshot)| snapshot)
            .ok_or_else(|| BridgeError::CheckpointNotFound {
                name: name.to_owned(),
                held: self.names(),
            })
    }
}

/// Runs a `history` action.
pub fn run(world: &mut World, call: HistoryCall) -> Result<Value, BridgeError> {
    match call {
        HistoryCall::Checkpoint(params) => checkpoint(world, params),
        HistoryCall::Diff(params) => diff(world, params),
        HistoryCall::Restore(params) => restore(world, params),
    }
}

fn checkpoint(world: &mut World, params: HistoryCheckpointParams) -> Result<Value, BridgeError> {
    let exists = world
        .get_resource::<Checkpoints>()
        .is_some_and(|held| held.0.iter().any(|(name, _)| *name == params.name));
    if exists && !params.overwrite {
        return Err(BridgeError::CheckpointExists { name: params.name });
    }
    let snapshot = snapshot(world)?;
    let reply = json!({
        "checkpoint": params.name,
        "frame": snapshot.frame,
        "entities": snapshot.entities.len(),
        "resources": snapshot.resources.len(),
        "bytes": snapshot.bytes,
    });
    let mut held = world.get_resource_or_init::<Checkpoints>();
    held.0.retain(|(name, _)| *name != params.name);
    held.0.push((params.name, snapshot));
    let dropped = (held.0.len() > MAX_CHECKPOINTS).then(|| held.0.remove(0).0);
    let mut reply = reply;
    reply["checkpoints"] = json!(held.names());
    if let Some(dropped) = dropped {
        reply["dropped"] = json!(dropped);
    }
    Ok(reply)
}

fn diff(world: &mut World, params: HistoryDiffParams) -> Result<Value, BridgeError> {
    world.get_resource_or_init::<Checkpoints>();
    world
        .try_resource_scope(|world, held: Mut<Checkpoints>| {
            let from = held.get(&params.from)?;
            match &params.to {
                Some(name) => Ok(compare(&params.from, from, name, held.get(name)?)),
                None => Ok(compare(&params.from, from, "now", &snapshot(world)?)),
            }
        })
        .unwrap_or_else(|| {
            Err(BridgeError::CheckpointNotFound {
                name: params.from.clone(),
                held: Vec::new(),
            })
        })
}

/// The parent relation: its value names an entity, which a respawned parent renames.
const CHILD_OF: &str = "bevy_ecs::hierarchy::ChildOf";
/// Resources restore leaves alone: a game state changes only through a transition.
const STATE_PREFIX: &str = "bevy_state::";

/// One write restore makes, checked before any is made.
struct Write<'r> {
    /// The checkpoint's entity (its bits), or `None` for a resource.
    entity: Option<u64>,
    component: &'r ReflectComponent,
    value: Box<dyn bevy::reflect::Reflect>,
}

fn restore(world: &mut World, params: HistoryRestoreParams) -> Result<Value, BridgeError> {
    world.get_resource_or_init::<Checkpoints>();
    world
        .try_resource_scope(|world, mut held: Mut<Checkpoints>| {
            let index = held
                .0
                .iter()
                .position(|(name, _)| *name == params.name)
                .ok_or_else(|| BridgeError::CheckpointNotFound {
                    name: params.name.clone(),
                    held: held.names(),
                })?;
            let target = &mut held.0[index].1;
            restore_to(world, &params.name, target)
        })
        .unwrap_or_else(|| {
            Err(BridgeError::CheckpointNotFound {
                name: params.name.clone(),
                held: Vec::new(),
            })
        })
}

/// Makes the world match `target`, then renames the respawned entities in it so it names what
/// is in the world now. Every value is read back from JSON before anything changes: a value that
/// no longer fits its type refuses the whole restore.
fn restore_to(world: &mut World, name: &str, target: &mut Snapshot) -> Result<Value, BridgeError> {
    let now = snapshot(world)?;
    let registry = reflection::registry(world);
    let registry = registry.read();
    let registration = |type_path: &str| {
        registry
            .get_with_type_path(type_path)
            .and_then(|registration| Some((registration, registration.data::<ReflectComponent>()?)))
    };
    // What to write, checked first, under the rules every other write obeys: a type the write
    // policy protects is left as it is (the parent excepted: restore renames and writes it
    // itself, and the held hierarchy had no loop), and every value passes the policy's checks.
    let policy = WritePolicy::of(world);
    let mut left_alone: BTreeMap<String, String> = BTreeMap::new();
    let writable = |type_path: &str, left_alone: &mut BTreeMap<String, String>| {
        let Some(found) = registration(type_path) else {
            left_alone
                .entry(type_path.to_owned())
                .or_insert_with(|| "no longer registered".to_owned());
            return None;
        };
        let protection = (type_path != CHILD_OF)
            .then(|| policy.protection(world, found.0))
            .flatten();
        if let Some(protection) = protection {
            left_alone
                .entry(type_path.to_owned())
                .or_insert_with(|| format!("protected: {}", protection.reason));
            return None;
        }
        Some(found)
    };
    let checked = |registration, value: &Value| {
        let value = reflection::concrete_from_json(registration, &registry, value)?;
        if value.reflect_type_path() != CHILD_OF {
            policy.check_value(world, registration, value.as_partial_reflect())?;
        }
        Ok::<_, BridgeError>(value)
    };
    let mut writes = Vec::new();
    let mut removals = Vec::new();
    for (bits, (_, wanted)) in &target.entities {
        let current = now
            .entities
            .get(bits)
            .map(|(_, current)| &current.components);
        for (type_path, value) in &wanted.components {
            if current.and_then(|current| current.get(type_path)) == Some(value) {
                continue;
            }
            let Some((registration, component)) = writable(type_path, &mut left_alone) else {
                continue;
            };
            // The parent is written once every entity exists (see below); check it reads.
            let value = checked(registration, value)?;
            writes.push(Write {
                entity: Some(*bits),
                component,
                value,
            });
        }
        if let Some(current) = current {
            for type_path in current
                .keys()
                .filter(|path| !wanted.components.contains_key(*path))
            {
                if let Some((_, component)) = writable(type_path, &mut left_alone) {
                    removals.push((*bits, component));
                }
            }
        }
    }
    let mut resource_writes = Vec::new();
    for (type_path, value) in &target.resources {
        if now.resources.get(type_path) == Some(value) {
            continue;
        }
        if type_path.starts_with(STATE_PREFIX) {
            left_alone.insert(
                type_path.clone(),
                "a game state changes only through a transition; use state.set".to_owned(),
            );
            continue;
        }
        let Some((registration, component)) = writable(type_path, &mut left_alone) else {
            continue;
        };
        let value = checked(registration, value)?;
        resource_writes.push((
            registration,
            Write {
                entity: None,
                component,
                value,
            },
        ));
    }
    for type_path in now
        .resources
        .keys()
        .filter(|path| !target.resources.contains_key(*path))
    {
        left_alone.insert(
            type_path.clone(),
            "added since the checkpoint; remove it with manage_resource.remove if it should go"
                .to_owned(),
        );
    }
    let not_restored: Vec<Value> = left_alone
        .into_iter()
        .map(|(type_path, reason)| json!({"type": type_path, "reason": reason}))
        .collect();

    // Entities spawned since go; their children that the checkpoint holds are detached first,
    // so the (recursive) despawn leaves them.
    let spawned_since: Vec<Entity> = now
        .entities
        .iter()
        .filter(|(bits, _)| !target.entities.contains_key(*bits))
        .map(|(_, (entity, _))| *entity)
        .collect();
    for (bits, (entity, _)) in &now.entities {
        if !target.entities.contains_key(bits) {
            continue;
        }
        let parent = world
            .get::<bevy::prelude::ChildOf>(*entity)
            .map(|child_of| child_of.parent());
        if parent.is_some_and(|parent| spawned_since.contains(&parent))
            && let Ok(mut entity_mut) = world.get_entity_mut(*entity)
        {
            entity_mut.remove::<bevy::prelude::ChildOf>();
        }
    }
    for entity in &spawned_since {
        if let Ok(entity_mut) = world.get_entity_mut(*entity) {
            entity_mut.despawn();
        }
    }
    // Entities despawned since come back, under new ids.
    let mut respawned: BTreeMap<u64, Entity> = BTreeMap::new();
    for bits in target.entities.keys() {
        if !now.entities.contains_key(bits) {
            respawned.insert(*bits, world.spawn_empty().id());
        }
    }
    let live = |bits: u64| {
        respawned
            .get(&bits)
            .copied()
            .or_else(|| target.entities.get(&bits).map(|(entity, _)| *entity))
    };
    let mut removed = 0;
    for (bits, component) in removals {
        if let Some(mut entity_mut) =
            live(bits).and_then(|entity| world.get_entity_mut(entity).ok())
        {
            component.remove(&mut entity_mut);
            removed += 1;
        }
    }
    let mut written = 0;
    // Parents last: every entity a parent names exists by then.
    writes.sort_by_key(|write| write.value.reflect_type_path() == CHILD_OF);
    for write in writes {
        let Some(entity) = write.entity.and_then(live) else {
            continue;
        };
        let mut value = write.value;
        if value.reflect_type_path() == CHILD_OF
            && let Some(child_of) = value.downcast_mut::<bevy::prelude::ChildOf>()
            && let Some(parent) = respawned.get(&child_of.parent().to_bits())
        {
            *child_of = bevy::prelude::ChildOf(*parent);
        }
        if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
            write
                .component
                .insert(&mut entity_mut, value.as_partial_reflect(), &registry);
            written += 1;
        }
    }
    let mut resources_written = 0;
    for (registration, write) in resource_writes {
        let entity = super::inspect::resource_slot(world, registration);
        if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
            write
                .component
                .insert(&mut entity_mut, write.value.as_partial_reflect(), &registry);
            resources_written += 1;
        }
    }
    rename_respawned(target, &respawned);
    Ok(json!({
        "restored": name,
        "despawned": spawned_since.len(),
        "respawned": respawned
            .iter()
            .map(|(old, new)| (Entity::from_bits(*old).to_string(), json!(new.to_string())))
            .collect::<Map<String, Value>>(),
        "componentsWritten": written,
        "componentsRemoved": removed,
        "resourcesWritten": resources_written,
        "notRestored": not_restored,
    }))
}

/// Renames respawned entities in the checkpoint (keys and parent values), so it names the world.
fn rename_respawned(target: &mut Snapshot, respawned: &BTreeMap<u64, Entity>) {
    if respawned.is_empty() {
        return;
    }
    let entities = std::mem::take(&mut target.entities);
    for (bits, (entity, mut held)) in entities {
        if let Some(parent) = held.components.get_mut(CHILD_OF)
            && let Some(new) = parent.as_u64().and_then(|old| respawned.get(&old))
        {
            *parent = json!(new.to_bits());
        }
        match respawned.get(&bits) {
            Some(new) => target.entities.insert(new.to_bits(), (*new, held)),
            None => target.entities.insert(bits, (entity, held)),
        };
    }
}

/// Every tracked reflected component of every plain entity, and every tracked resource.
fn snapshot(world: &World) -> Result<Snapshot, BridgeError> {
    let registry = reflection::registry(world);
    let registry = registry.read();
    let mut bytes = 0;
    let mut entities = BTreeMap::new();
    for entity in plain_entities_by_index(world) {
        let snapshot = entity_snapshot(world, entity, &registry);
        bytes += snapshot
            .components
            .values()
            .map(|value| value.to_string().len())
            .sum::<usize>();
        if bytes > MAX_CHECKPOINT_BYTES {
            return Err(BridgeError::CheckpointTooLarge {
                bytes,
                limit: MAX_CHECKPOINT_BYTES,
            });
        }
        entities.insert(entity.to_bits(), (entity, snapshot));
    }
    let mut resources = BTreeMap::new();
    for (id, _) in world.resource_entities().iter() {
        let Some(registration) = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
        else {
            continue;
        };
        let type_path = registration.type_info().type_path();
        if registration.data::<ReflectResource>().is_none() || !tracked(type_path) {
            continue;
        }
        // A resource whose value cannot be read as JSON is left out, as unreadable components are.
        if let Ok(value) = super::inspect::resource_json(world, registration, &registry) {
            bytes += value.to_string().len();
            resources.insert(type_path.to_owned(), value);
        }
    }
    if bytes > MAX_CHECKPOINT_BYTES {
        return Err(BridgeError::CheckpointTooLarge {
            bytes,
            limit: MAX_CHECKPOINT_BYTES,
        });
    }
    Ok(Snapshot {
        frame: frame(world),
        entities,
        resources,
        bytes,
    })
}

fn entity_snapshot(world: &World, entity: Entity, registry: &TypeRegistry) -> EntitySnapshot {
    let mut components = BTreeMap::new();
    let name = world
        .get::<bevy::prelude::Name>(entity)
        .map(|name| name.as_str().to_owned());
    let Ok(entity_ref) = world.get_entity(entity) else {
        return EntitySnapshot { name, components };
    };
    for (type_path, registration) in reflection::reflected_components(world, entity, registry) {
        if !tracked(&type_path) {
            continue;
        }
        let Some(component) = registration.data::<ReflectComponent>() else {
            continue;
        };
        if let Some(Ok(value)) = reflection::component_json(entity_ref, component, registry) {
            components.insert(type_path, value);
        }
    }
    EntitySnapshot { name, components }
}

fn entity_row(entity: Entity, snapshot: &EntitySnapshot) -> Value {
    let mut row = json!({"entity": entity.to_string(), "components": snapshot.components});
    if let Some(name) = &snapshot.name {
        row["name"] = json!(name);
    }
    row
}

/// What differs between two snapshots, shaped like every result (the gateway clips long lists
/// unless `detail: "full"`).
fn compare(from_name: &str, from: &Snapshot, to_name: &str, to: &Snapshot) -> Value {
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    for (bits, (entity, before)) in &from.entities {
        match to.entities.get(bits) {
            None => removed.push(entity_row(*entity, before)),
            Some((_, after)) if after != before => {
                changed.push(entity_changes(*entity, before, after));
            }
            Some(_) => {}
        }
    }
    for (bits, (entity, after)) in &to.entities {
        if !from.entities.contains_key(bits) {
            added.push(entity_row(*entity, after));
        }
    }
    let MapChanges {
        added: resources_added,
        removed: resources_removed,
        changed: resources_changed,
    } = map_changes(&from.resources, &to.resources);
    let counts = json!({
        "entitiesAdded": added.len(),
        "entitiesRemoved": removed.len(),
        "entitiesChanged": changed.len(),
        "resourcesAdded": resources_added.len(),
        "resourcesRemoved": resources_removed.len(),
        "resourcesChanged": resources_changed.len(),
    });
    let same = added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
        && resources_added.is_empty()
        && resources_removed.is_empty()
        && resources_changed.is_empty();
    json!({
        "from": from_name,
        "to": to_name,
        "same": same,
        "counts": counts,
        "entitiesAdded": added,
        "entitiesRemoved": removed,
        "entitiesChanged": changed,
        "resourcesAdded": resources_added,
        "resourcesRemoved": resources_removed,
        "resourcesChanged": resources_changed
            .into_iter()
            .map(|(resource, before, after)| json!({"resource": resource, "before": before, "after": after}))
            .collect::<Vec<_>>(),
    })
}

fn entity_changes(entity: Entity, before: &EntitySnapshot, after: &EntitySnapshot) -> Value {
    let MapChanges {
        added,
        removed,
        changed,
    } = map_changes(&before.components, &after.components);
    let mut row = json!({
        "entity": entity.to_string(),
        "added": added,
        "removed": removed,
        "changed": changed
            .into_iter()
            .map(|(component, before, after)| json!({"component": component, "before": before, "after": after}))
            .collect::<Vec<_>>(),
    });
    if let Some(name) = after.name.as_ref().or(before.name.as_ref()) {
        row["name"] = json!(name);
    }
    row
}

/// What differs between two maps of values by type path.
struct MapChanges<'a> {
    added: Map<String, Value>,
    removed: Map<String, Value>,
    /// (type path, before, after).
    changed: Vec<(&'a str, &'a Value, &'a Value)>,
}

/// Keys only in `after`, keys only in `before`, and keys in both whose values differ.
fn map_changes<'a>(
    before: &'a BTreeMap<String, Value>,
    after: &'a BTreeMap<String, Value>,
) -> MapChanges<'a> {
    let added = after
        .iter()
        .filter(|(key, _)| !before.contains_key(*key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let removed = before
        .iter()
        .filter(|(key, _)| !after.contains_key(*key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let changed = before
        .iter()
        .filter_map(|(key, old)| {
            let new = after.get(key)?;
            (new != old).then_some((key.as_str(), old, new))
        })
        .collect();
    MapChanges {
        added,
        removed,
        changed,
    }
}
