//! `control_entity` actions that make and remove whole entities: spawn (with a tree of children,
//! all or nothing), duplicate (with the subtree, if asked), despawn, and despawn only what is
//! below an entity. What they remove goes to the history's holding area, so undo brings it back
//! whole.

use std::any::TypeId;
use std::collections::HashMap;

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{ChildOf, Children, Entity, Name, World};
use bevy::reflect::{Reflect, TypeRegistry};
use bevy_mcp_generated::params::{
    ControlEntityDespawnDescendantsParams, ControlEntityDespawnParams,
    ControlEntityDuplicateParams, ControlEntitySpawnParams,
};
use serde_json::{Value, json};

use super::{insert_prepared, nothing_applied, prepare_components};
use crate::error::BridgeError;
use crate::history::holding;
use crate::reflect::hierarchy;
use crate::reflect::hierarchy::parent_of;
use crate::reflect::names;
use crate::reflect::names::{entity_info, resolve_entity};
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::reflect::world::require_plain_entity;
use crate::runtime::action::{Action, Focus, Footprint};

/// `control_entity.spawn`: the journal holds the entity and the children it names in its reply.
pub(crate) const SPAWN: Action<ControlEntitySpawnParams> =
    Action::run(spawn).touching(|_, _| Footprint::makes(&["entity", "children"]));
/// `control_entity.despawn`: the entity and everything below it, whole.
pub(crate) const DESPAWN: Action<ControlEntityDespawnParams> = Action::run(despawn)
    .touching(|world, params| Footprint::tree(world, &params.entity, Focus::Whole));
/// `control_entity.despawn_descendants`: everything below the entity; the entity itself stays.
pub(crate) const DESPAWN_DESCENDANTS: Action<ControlEntityDespawnDescendantsParams> =
    Action::run(despawn_descendants).touching(|world, params| {
        Footprint::tree(world, &params.entity, Focus::Components(Vec::new()))
    });
/// `control_entity.duplicate`: the copies it names in its reply, with their descendants.
pub(crate) const DUPLICATE: Action<ControlEntityDuplicateParams> =
    Action::run(duplicate).touching(|_, _| Footprint::makes(&["copies"]));

/// Most entities one `duplicate` call creates (copies times the entities of each copy).
pub(super) const MAX_DUPLICATED_ENTITIES: usize = 10_000;

/// Spawns an entity, and the tree of children given with it. Every value of every entity is
/// checked before anything is spawned: a refused component anywhere spawns nothing.
fn spawn(world: &mut World, params: ControlEntitySpawnParams) -> Result<Value, BridgeError> {
    let parent = match &params.parent {
        Some(parent) => {
            let parent = resolve_entity(world, parent)?;
            require_plain_entity(world, parent)?;
            Some(parent)
        }
        None => None,
    };
    let children = params.children.unwrap_or_default();
    for (index, child) in children.iter().enumerate() {
        if let Some(under) = child.under.filter(|under| *under as usize >= index) {
            return Err(BridgeError::InvalidParams(format!(
                "children[{index}].under is {under}: it must be the index of an earlier item ({})",
                match index {
                    0 => "the first child has none; omit under to attach it to the new entity"
                        .to_owned(),
                    _ => format!("0 to {}", index - 1),
                }
            )));
        }
    }
    let policy = WritePolicy::of(world);
    // Each child's level below the new entity: 1, or one more than the item it hangs under.
    let mut levels: Vec<usize> = Vec::with_capacity(children.len());
    for child in &children {
        let level = child
            .under
            .and_then(|under| levels.get(under as usize))
            .map_or(1, |above| above + 1);
        levels.push(level);
    }
    let height = levels.iter().copied().max().unwrap_or(0);
    hierarchy::check_depth(world, parent, height, policy.limits().max_hierarchy_depth)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let prepare = |components| match components {
        Some(components) => prepare_components(world, &registry, &policy, components, None),
        None => (Vec::new(), Vec::new()),
    };
    let (ready, mut failed) = prepare(params.components.as_ref());
    let mut children_ready = Vec::with_capacity(children.len());
    for (index, child) in children.iter().enumerate() {
        let (ready, child_failed) = prepare(child.components.as_ref());
        let place = match &child.name {
            Some(name) => format!("children[{index}] ({name})"),
            None => format!("children[{index}]"),
        };
        failed.extend(child_failed.into_iter().map(|(given, error)| {
            let error = BridgeError::At {
                place: format!("{place}, component {given}"),
                error: Box::new(error),
            };
            (given, error)
        }));
        children_ready.push(ready);
    }
    // All or nothing: a half-built tree would only be confusing to retry.
    if !failed.is_empty() {
        return Err(nothing_applied("nothing was spawned", failed));
    }
    let entity = spawn_named(world, params.name.as_deref());
    let applied = insert_prepared(world, entity, &registry, ready)?;
    if let (Some(parent), Ok(mut entity_mut)) = (parent, world.get_entity_mut(entity)) {
        entity_mut.insert(ChildOf(parent));
    }
    let mut spawned: Vec<Entity> = Vec::with_capacity(children.len());
    for (child, ready) in children.iter().zip(children_ready) {
        let id = spawn_named(world, child.name.as_deref());
        insert_prepared(world, id, &registry, ready)?;
        // `under` was checked above to name an earlier, already spawned item.
        let parent = child
            .under
            .and_then(|under| spawned.get(under as usize).copied())
            .unwrap_or(entity);
        if let Ok(mut entity_mut) = world.get_entity_mut(id) {
            entity_mut.insert(ChildOf(parent));
        }
        spawned.push(id);
    }
    let mut reply = json!({"entity": entity_info(world, entity), "applied": applied, "failed": []});
    if !spawned.is_empty() {
        reply["children"] = json!(
            spawned
                .iter()
                .map(|child| entity_info(world, *child))
                .collect::<Vec<_>>()
        );
    }
    Ok(reply)
}

fn spawn_named(world: &mut World, name: Option<&str>) -> Entity {
    let mut entity = world.spawn_empty();
    if let Some(name) = name {
        entity.insert(Name::new(name.to_owned()));
    }
    entity.id()
}

/// Despawns an entity and its descendants.
fn despawn(world: &mut World, params: ControlEntityDespawnParams) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let info = entity_info(world, entity);
    let removed = holding::remove_trees(world, &[entity]);
    Ok(json!({"despawned": info, "descendants": removed.saturating_sub(1)}))
}

/// Despawns everything below an entity and keeps the entity.
fn despawn_descendants(
    world: &mut World,
    params: ControlEntityDespawnDescendantsParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let children = hierarchy::children_of(world, entity);
    let despawned = holding::remove_trees(world, &children);
    Ok(json!({"entity": entity_info(world, entity), "despawned": despawned}))
}

/// One entity to copy: its component values, and the index of its parent among the entities
/// copied before it (`None` for the top one).
struct Original<'r> {
    values: Vec<(&'r ReflectComponent, Box<dyn Reflect>)>,
    parent: Option<usize>,
}

/// Copies an entity `count` times, each copy a sibling of the original and, with
/// `withDescendants`, with its own copy of the original's subtree.
fn duplicate(
    world: &mut World,
    params: ControlEntityDuplicateParams,
) -> Result<Value, BridgeError> {
    let source = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, source)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);

    let mut tree = vec![(source, None)];
    if params.with_descendants {
        let walk = hierarchy::descendants(world, source);
        if walk.truncated {
            return Err(too_many_entities(hierarchy::MAX_WALK));
        }
        // The walk is depth first, so each parent is listed before its children.
        let mut index_of: HashMap<Entity, usize> = HashMap::from([(source, 0)]);
        for (index, descendant) in walk.entities.into_iter().enumerate() {
            let parent = parent_of(world, descendant).and_then(|parent| index_of.get(&parent));
            tree.push((descendant, parent.copied()));
            index_of.insert(descendant, index + 1);
        }
    }
    let height = if params.with_descendants {
        hierarchy::height_of(world, source)
    } else {
        0
    };
    hierarchy::check_depth(
        world,
        parent_of(world, source),
        height,
        policy.limits().max_hierarchy_depth,
    )?;
    let per_copy = tree.len();
    if per_copy.saturating_mul(params.count as usize) > MAX_DUPLICATED_ENTITIES {
        return Err(too_many_entities(
            per_copy.saturating_mul(params.count as usize),
        ));
    }

    let mut skipped = Vec::new();
    let mut copy_bytes = 0usize;
    let mut originals = Vec::with_capacity(per_copy);
    let mut copied = Vec::new();
    for (position, (entity, parent)) in tree.iter().enumerate() {
        let mut values = Vec::new();
        for (type_path, component, outcome) in
            copy_values(world, *entity, &registry, &policy, &mut copy_bytes)
        {
            match outcome {
                Ok(value) => {
                    if position == 0 {
                        copied.push(type_path);
                    }
                    values.push((component, value));
                }
                Err(reason) => {
                    let mut row = json!({"type": type_path, "reason": reason});
                    if position > 0 {
                        row["entity"] = entity_info(world, *entity);
                    }
                    skipped.push(row);
                }
            }
        }
        originals.push(Original {
            values,
            parent: *parent,
        });
    }
    let limit = policy.limits().max_duplicate_bytes;
    let total = copy_bytes.saturating_mul(params.count as usize);
    if total > limit {
        return Err(BridgeError::LimitExceeded {
            what: format!("{} copies of {copy_bytes} bytes each", params.count),
            limit: limit as u64,
            unit: "bytes",
            advice: "ask for fewer copies (or leave out the descendants)",
        });
    }

    let source_parent = parent_of(world, source);
    let mut copies = Vec::new();
    for index in 1..=params.count {
        let made = spawn_copy(
            world,
            &originals,
            &registry,
            (&params, index),
            source_parent,
        );
        if let Some(top) = made.first() {
            copies.push(entity_info(world, *top));
        }
    }
    let mut reply = json!({"copies": copies, "copied": copied, "skipped": skipped});
    if params.with_descendants {
        reply["descendantsCopied"] = json!(per_copy - 1);
    }
    Ok(reply)
}

/// Spawns copy number `index` of the originals (the top one first), each under its copied parent;
/// the entities made, top first.
fn spawn_copy(
    world: &mut World,
    originals: &[Original],
    registry: &TypeRegistry,
    (params, index): (&ControlEntityDuplicateParams, u64),
    source_parent: Option<Entity>,
) -> Vec<Entity> {
    let mut made: Vec<Entity> = Vec::with_capacity(originals.len());
    for (position, original) in originals.iter().enumerate() {
        let copy = world.spawn_empty().id();
        if let Ok(mut entity_mut) = world.get_entity_mut(copy) {
            for (component, value) in &original.values {
                let Ok(fresh) = value.reflect_clone() else {
                    continue;
                };
                component.insert(&mut entity_mut, fresh.as_partial_reflect(), registry);
            }
            if position == 0
                && let Some(name) = &params.name
            {
                let name = if params.count > 1 {
                    format!("{name} ({index})")
                } else {
                    name.clone()
                };
                entity_mut.insert(Name::new(name));
            }
        }
        // The top copy is a sibling of the source (its parent cannot be below a brand-new
        // entity); the others hang from their copied parents.
        let parent = match original.parent {
            Some(parent) => made.get(parent).copied(),
            None if position == 0 => {
                source_parent.filter(|parent| world.get_entity(*parent).is_ok())
            }
            None => made.first().copied(),
        };
        if let (Some(parent), Ok(mut entity_mut)) = (parent, world.get_entity_mut(copy)) {
            entity_mut.insert(ChildOf(parent));
        }
        made.push(copy);
    }
    made
}

/// One component of an entity to copy: its type path, reflection, and its clone or why there is
/// none.
type CopiedValue<'r> = (
    String,
    &'r ReflectComponent,
    Result<Box<dyn Reflect>, String>,
);

/// The reflected components of `entity` that a copy gets, each cloned or with why it cannot be;
/// adds their JSON size to `bytes`. Relations are left out without a word: a copy's place in
/// the hierarchy is rebuilt by the caller, and Bevy builds each side of a relation itself.
fn copy_values<'r>(
    world: &World,
    entity: Entity,
    registry: &'r TypeRegistry,
    policy: &WritePolicy,
    bytes: &mut usize,
) -> Vec<CopiedValue<'r>> {
    let mut values = Vec::new();
    for (type_path, registration) in values::reflected_components(world, entity, registry) {
        let Some(component) = registration.data::<ReflectComponent>() else {
            continue;
        };
        if let Some(protection) = policy.protection(world, registration) {
            let type_id = registration.type_id();
            if type_id != TypeId::of::<ChildOf>() && type_id != TypeId::of::<Children>() {
                let reason = format!("protected: {}", protection.reason);
                values.push((type_path, component, Err(reason)));
            }
            continue;
        }
        let Some(value) = world
            .get_entity(entity)
            .ok()
            .and_then(|entity_ref| component.reflect(entity_ref))
        else {
            continue;
        };
        *bytes += values::to_json(value.as_partial_reflect(), registry)
            .map_or(0, |json| json.to_string().len());
        // A copy is a new value: it passes the same bounds a spawn would (fields Bevy keeps
        // are copied as they are).
        let clone = value
            .reflect_clone()
            .map_err(|error| error.to_string())
            .and_then(|clone| {
                policy
                    .check_copy(world, registry, registration, clone.as_partial_reflect())
                    .map(|()| clone)
                    .map_err(|error| error.to_string())
            });
        values.push((type_path, component, clone));
    }
    values
}

fn too_many_entities(count: usize) -> BridgeError {
    BridgeError::LimitExceeded {
        what: format!("{count} entities"),
        limit: MAX_DUPLICATED_ENTITIES as u64,
        unit: "entities",
        advice: "ask for fewer copies (or leave out the descendants)",
    }
}
