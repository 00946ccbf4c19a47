//! The holding area: entities the bridge removes are not despawned at once but held out of the
//! game's sight (Bevy's `Disabled`, which every query leaves out by default, with the bridge's
//! [`HeldOutOfSight`] marker), so that undo and restore bring them back under the same id with
//! every component they had, reflected or not, asset handles included. They are despawned for
//! real once no journal entry or checkpoint names them, or when the area is past its bound
//! (oldest first); from then on only their reflected values can come back.
//!
//! Every removal here walks leaf-first without recursion: Bevy's own despawn of a parent recurses
//! through its children, and a chain thousands deep overflows the game thread's stack.

use std::collections::HashSet;

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::{ChildOf, Entity, Resource, World};

use crate::reflect::hierarchy::children_of;
use crate::reflect::models;
use crate::reflect::world::{
    HELD_SHARDS, HeldOutOfSight, HeldShard, HeldShards, with_shard_numbers,
};

/// The holding area's bookkeeping: how many entities it holds and whether it should look again
/// for ones nothing names any more.
#[derive(Resource, Debug)]
pub(crate) struct HoldingArea {
    /// Most entities held; past it the oldest are despawned for real.
    limit: usize,
    next_order: u64,
    held: usize,
    /// Something changed that may have left held entities unnamed.
    dirty: bool,
}

impl HoldingArea {
    /// An empty area holding at most `limit` entities.
    pub(crate) fn new(limit: usize) -> HoldingArea {
        HoldingArea {
            limit,
            next_order: 1,
            held: 0,
            dirty: false,
        }
    }

    /// How many entities it holds.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Whether something changed that may have left held entities unnamed.
    pub(crate) fn wants_sweep(&self) -> bool {
        self.dirty
    }

    /// Clears the request for a sweep (there was nothing to release).
    pub(crate) fn settle(world: &mut World) {
        if let Some(mut area) = world.get_resource_mut::<HoldingArea>() {
            area.dirty = false;
        }
    }

    /// Asks for a sweep at the end of the frame (a journal entry or a checkpoint was dropped).
    pub(crate) fn mark_dirty(world: &mut World) {
        if let Some(mut area) = world.get_resource_mut::<HoldingArea>() {
            area.dirty = true;
        }
    }
}

/// `roots` and everything below them, each once, parents before their children (loop-safe and
/// without recursion or a bound: removal must reach every entity).
pub(crate) fn trees(world: &World, roots: &[Entity]) -> Vec<Entity> {
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut stack: Vec<Entity> = roots.iter().rev().copied().collect();
    while let Some(entity) = stack.pop() {
        if world.get_entity(entity).is_err() || !seen.insert(entity) {
            continue;
        }
        order.push(entity);
        let mut children = children_of(world, entity);
        children.reverse();
        stack.extend(children);
    }
    order
}

/// Removes `roots` with everything below them, as the bridge removes entities: held out of
/// sight when the history keeps a holding area, else despawned for real (leaf-first). Returns
/// how many entities went.
pub(crate) fn remove_trees(world: &mut World, roots: &[Entity]) -> usize {
    let entities = trees(world, roots);
    let count = entities.len();
    if world.contains_resource::<HoldingArea>() {
        hold(world, &entities);
    } else {
        despawn_leaf_first(world, &entities);
    }
    count
}

/// Holds `entities` out of sight. A held entity whose parent stays in the world is detached
/// from it (the journal and checkpoints hold the relation, and undo writes it back); relations
/// among held entities stay as they are.
pub(crate) fn hold(world: &mut World, entities: &[Entity]) {
    let going: HashSet<Entity> = entities.iter().copied().collect();
    hold_among(world, entities, &going);
}

/// Holds `entities`, part of a removal of `going` that spans frames: a parent in `going` keeps
/// its held children.
pub(crate) fn hold_among(world: &mut World, entities: &[Entity], going: &HashSet<Entity>) {
    if !world.contains_resource::<HoldingArea>() {
        return;
    }
    for entity in entities {
        let Ok(mut entity_mut) = world.get_entity_mut(*entity) else {
            continue;
        };
        if entity_mut.contains::<HeldOutOfSight>() {
            continue;
        }
        let parent_stays = entity_mut
            .get::<ChildOf>()
            .is_some_and(|child_of| !going.contains(&child_of.parent()));
        if parent_stays {
            entity_mut.remove::<ChildOf>();
        }
        let was_disabled = entity_mut.contains::<Disabled>();
        let Some(mut area) = world.get_resource_mut::<HoldingArea>() else {
            return;
        };
        let order = area.next_order;
        area.next_order += 1;
        area.held += 1;
        area.dirty = true;
        if let Ok(mut entity_mut) = world.get_entity_mut(*entity) {
            let held = HeldOutOfSight {
                order,
                was_disabled,
            };
            // One archetype move: the marker, Bevy's `Disabled` and the entity's shard at once.
            macro_rules! held_in_shard {
                ($($n:literal)*) => {
                    match (order / SHARD_BLOCK) % HELD_SHARDS {
                        $($n => entity_mut.insert((held, Disabled, HeldShard::<$n>)),)*
                        _ => entity_mut.insert((held, Disabled)),
                    }
                };
            }
            with_shard_numbers!(held_in_shard);
        }
    }
}

/// Held entities go to one shard in runs of this many, so the shards' tables grow (and are
/// copied) at different times, not all in one frame.
const SHARD_BLOCK: u64 = 256;

/// Brings a held entity back into sight (its relations as they were held); false when it is not
/// held.
pub(crate) fn bring_back(world: &mut World, entity: Entity) -> bool {
    let Ok(mut entity_mut) = world.get_entity_mut(entity) else {
        return false;
    };
    let Some(held) = entity_mut.take::<HeldOutOfSight>() else {
        return false;
    };
    if held.was_disabled {
        entity_mut.remove::<HeldShards>();
    } else {
        entity_mut.remove::<(Disabled, HeldShards)>();
    }
    if let Some(mut area) = world.get_resource_mut::<HoldingArea>() {
        area.held = area.held.saturating_sub(1);
    }
    models::respawn_if_gone(world, entity);
    true
}

/// Whether `entity` is held out of sight.
pub(crate) fn is_held(world: &World, entity: Entity) -> bool {
    world.get::<HeldOutOfSight>(entity).is_some()
}

/// Despawns `entities` (a closed set: parents listed before their children), children first,
/// so no despawn recurses.
pub(crate) fn despawn_leaf_first(world: &mut World, entities: &[Entity]) {
    for entity in entities.iter().rev() {
        // A child left out of the set would be despawned with its parent, recursively: it is
        // detached first.
        for child in children_of(world, *entity) {
            if let Ok(mut child_mut) = world.get_entity_mut(child) {
                child_mut.remove::<ChildOf>();
            }
        }
        if let Ok(entity_mut) = world.get_entity_mut(*entity) {
            entity_mut.despawn();
        }
    }
}

impl HoldingArea {
    /// Most entities it holds before the oldest go for real.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// A sweep released `count` entities; it looks again only when something changes.
    pub(crate) fn released(world: &mut World, count: usize) {
        if let Some(mut area) = world.get_resource_mut::<HoldingArea>() {
            area.held = area.held.saturating_sub(count);
        }
    }
}

#[cfg(test)]
mod tests {
    use bevy::ecs::entity_disabling::Disabled;
    use bevy::prelude::{Name, World};

    use super::{HoldingArea, bring_back, hold};
    use crate::reflect::world::{HELD_SHARDS, HeldOutOfSight, bridge_markers};

    /// A full holding area spreads its entities so thinly that no table of held entities grows
    /// past 2,048 rows: growing one copies at most 1,024 rows (Bevy doubles a table by copying
    /// it whole, in one frame).
    #[test]
    fn a_full_holding_area_keeps_every_table_small() {
        let mut world = World::new();
        world.insert_resource(HoldingArea::new(100_000));
        let entities: Vec<_> = (0..100_000)
            .map(|index| world.spawn(Name::new(format!("Crate {index}"))).id())
            .collect();
        hold(&mut world, &entities);
        let held = world
            .component_id::<HeldOutOfSight>()
            .expect("holding registered the marker");
        let tables: Vec<usize> = world
            .archetypes()
            .iter()
            .filter(|archetype| archetype.contains(held))
            .map(|archetype| archetype.len() as usize)
            .collect();
        assert_eq!(
            tables.iter().sum::<usize>(),
            100_000,
            "every entity is held"
        );
        let largest = tables.iter().copied().max().unwrap_or_default();
        assert!(
            largest <= 2_048,
            "the largest table of held entities has {largest} rows ({} tables)",
            tables.len()
        );
    }

    /// Every shard an entity may be held in is one `bring_back` takes off again: the shard
    /// numbers of `hold` and the `HeldShards` bundle list the same markers.
    #[test]
    fn an_entity_brought_back_from_any_shard_carries_no_marker() {
        let mut world = World::new();
        let count = HELD_SHARDS as usize * super::SHARD_BLOCK as usize;
        world.insert_resource(HoldingArea::new(count));
        let entities: Vec<_> = (0..count)
            .map(|index| world.spawn(Name::new(format!("Crate {index}"))).id())
            .collect();
        hold(&mut world, &entities);
        for entity in &entities {
            assert!(bring_back(&mut world, *entity), "{entity} was held");
        }
        let markers = bridge_markers(&world);
        let disabled = world.component_id::<Disabled>();
        let left: Vec<usize> = world
            .archetypes()
            .iter()
            .filter(|archetype| {
                !archetype.is_empty()
                    && (markers.iter().any(|marker| archetype.contains(*marker))
                        || disabled.is_some_and(|id| archetype.contains(id)))
            })
            .map(|archetype| archetype.len() as usize)
            .collect();
        assert!(left.is_empty(), "entities still marked: {left:?}");
    }
}
