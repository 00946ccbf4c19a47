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
use bevy_mcp_generated::params::{HistoryCheckpointParams, HistoryDiffParams};
use serde_json::{Map, Value, json};

use super::inspect::frame;
use crate::error::BridgeError;
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
    let (resources_added, resources_removed, resources_changed) =
        map_changes(&from.resources, &to.resources);
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
    let (added, removed, changed) = map_changes(&before.components, &after.components);
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

/// Keys only in `after`, keys only in `before`, and keys in both whose values differ.
fn map_changes<'a>(
    before: &'a BTreeMap<String, Value>,
    after: &'a BTreeMap<String, Value>,
) -> (
    Map<String, Value>,
    Map<String, Value>,
    Vec<(&'a str, &'a Value, &'a Value)>,
) {
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
    (added, removed, changed)
}
