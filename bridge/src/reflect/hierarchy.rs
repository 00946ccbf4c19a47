//! Walks along relations between entities (the hierarchy, or any relationship), each bounded and
//! safe against loops, and the loop check every change of a relation passes.
//!
//! The bridge never makes a loop, but the game might, and a walk that trusts the data would then
//! spin forever on the game thread: every walk here keeps a visited set and a bound.

use std::collections::HashSet;

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{ChildOf, Children, Entity, World};
use bevy::reflect::enums::VariantField;
use bevy::reflect::{PartialReflect, ReflectRef};

use crate::error::BridgeError;

/// Most entities one walk visits; a longer walk stops and says so.
pub(crate) const MAX_WALK: usize = 100_000;

/// The entities a walk reached, and whether it stopped at [`MAX_WALK`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Walk {
    /// What the walk reached, each entity once.
    pub entities: Vec<Entity>,
    /// Whether the walk stopped before the end.
    pub truncated: bool,
}

/// The children of an entity, in order.
pub(crate) fn children_of(world: &World, entity: Entity) -> Vec<Entity> {
    world
        .get::<Children>(entity)
        .map(|children| children.iter().copied().collect())
        .unwrap_or_default()
}

/// The parent of an entity, if any.
pub(crate) fn parent_of(world: &World, entity: Entity) -> Option<Entity> {
    world.get::<ChildOf>(entity).map(ChildOf::parent)
}

/// Every descendant of `entity`, depth first, each once.
pub(crate) fn descendants(world: &World, entity: Entity) -> Walk {
    let mut seen = HashSet::from([entity]);
    let mut walk = Walk::default();
    let mut stack = children_of(world, entity);
    stack.reverse();
    while let Some(next) = stack.pop() {
        if !seen.insert(next) {
            continue;
        }
        if walk.entities.len() >= MAX_WALK {
            walk.truncated = true;
            break;
        }
        walk.entities.push(next);
        let mut children = children_of(world, next);
        children.reverse();
        stack.extend(children);
    }
    walk
}

/// Whether making `entity` a child of `parent` would close a loop: `parent` is `entity` itself
/// or one of its descendants (found by walking up from `parent`). A walk that meets an existing
/// loop, or runs past [`MAX_WALK`], also counts as one: nothing is attached to broken data.
pub(crate) fn parent_would_loop(world: &World, entity: Entity, parent: Entity) -> bool {
    follow_would_loop(entity, parent, |current| parent_of(world, current))
}

/// Whether pointing `source`'s relation (the component `relation`) at `target` would close a
/// loop along that relation.
pub(crate) fn relation_would_loop(
    world: &World,
    relation: &ReflectComponent,
    source: Entity,
    target: Entity,
) -> bool {
    follow_would_loop(source, target, |current| {
        let entity_ref = world.get_entity(current).ok()?;
        first_entity(relation.reflect(entity_ref)?.as_partial_reflect())
    })
}

fn follow_would_loop(
    source: Entity,
    target: Entity,
    mut next: impl FnMut(Entity) -> Option<Entity>,
) -> bool {
    let mut seen = HashSet::new();
    let mut current = Some(target);
    while let Some(step) = current {
        if step == source || !seen.insert(step) || seen.len() > MAX_WALK {
            return true;
        }
        current = next(step);
    }
    false
}

/// How many ancestors `entity` has (0 for a root); a walk that meets a loop or passes
/// [`MAX_WALK`] stops there.
pub(crate) fn depth_of(world: &World, entity: Entity) -> usize {
    let mut seen = HashSet::from([entity]);
    let mut current = entity;
    while let Some(parent) = parent_of(world, current) {
        if !seen.insert(parent) || seen.len() > MAX_WALK {
            break;
        }
        current = parent;
    }
    seen.len() - 1
}

/// How many levels hang below `entity` (0 for a leaf), walked level by level without recursion.
pub(crate) fn height_of(world: &World, entity: Entity) -> usize {
    let mut seen = HashSet::from([entity]);
    let mut level = vec![entity];
    let mut height = 0;
    loop {
        let next: Vec<Entity> = level
            .iter()
            .flat_map(|entity| children_of(world, *entity))
            .filter(|child| seen.insert(*child))
            .collect();
        if next.is_empty() || seen.len() > MAX_WALK {
            return height;
        }
        height += 1;
        level = next;
    }
}

/// Refuses to hang a tree (with `height` levels below its top) under `parent`, or at the top
/// when there is none, when the result would be more than `limit` levels deep: deep chains make
/// Bevy's own recursive walks (despawn, transform propagation) overflow the game thread's stack.
pub(crate) fn check_depth(
    world: &World,
    parent: Option<Entity>,
    height: usize,
    limit: usize,
) -> Result<(), BridgeError> {
    // Levels counted as entities from the root down: the parent's, then the tree's own.
    let above = parent.map_or(0, |parent| depth_of(world, parent) + 1);
    let levels = above + 1 + height;
    if levels > limit {
        return Err(BridgeError::LimitExceeded {
            what: format!("a hierarchy {levels} levels deep"),
            limit: limit as u64,
            unit: "levels",
            advice: "attach it higher up, or make the tree flatter (WriteLimits::max_hierarchy_depth)",
        });
    }
    Ok(())
}

/// The first entity a reflected value holds, depth first: the target of a relation.
pub(crate) fn first_entity(value: &dyn PartialReflect) -> Option<Entity> {
    if let Some(entity) = value.try_downcast_ref::<Entity>() {
        return Some(*entity);
    }
    match value.reflect_ref() {
        ReflectRef::Struct(value) => value
            .iter_fields()
            .find_map(|(_, field)| first_entity(field)),
        ReflectRef::TupleStruct(value) => value.iter_fields().find_map(first_entity),
        ReflectRef::Tuple(value) => value.iter_fields().find_map(first_entity),
        ReflectRef::Enum(value) => value.iter_fields().find_map(|field| match field {
            VariantField::Struct(_, field) | VariantField::Tuple(field) => first_entity(field),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_found_from_either_side() {
        let mut world = World::new();
        let root = world.spawn_empty().id();
        let child = world.spawn(ChildOf(root)).id();
        let grandchild = world.spawn(ChildOf(child)).id();
        let other = world.spawn_empty().id();
        assert!(parent_would_loop(&world, root, grandchild));
        assert!(parent_would_loop(&world, root, root));
        assert!(!parent_would_loop(&world, grandchild, other));
        assert!(!parent_would_loop(&world, other, grandchild));
        assert_eq!(descendants(&world, root).entities, [child, grandchild]);
        assert!(first_entity(&ChildOf(root)) == Some(root));
    }

    #[test]
    fn a_walk_into_an_existing_loop_ends() {
        // A loop the bridge did not make (the game's own data): every step is seen once.
        let steps = [1u32, 2, 3, 1];
        let entity = |index: u32| Entity::from_raw_u32(index).unwrap_or(Entity::PLACEHOLDER);
        let looped = follow_would_loop(entity(9), entity(1), |current| {
            let at = steps.iter().position(|step| entity(*step) == current)?;
            steps.get(at + 1).map(|step| entity(*step))
        });
        assert!(looped, "an existing loop is refused, not walked forever");
    }
}
