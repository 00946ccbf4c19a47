//! Releasing held entities: once a frame at most, and only after a change, the entities the
//! holding area keeps that no journal entry or checkpoint names any more are despawned for real
//! (see [`crate::history::holding`]).

use std::collections::HashSet;

use bevy::prelude::World;

use crate::history::checkpoints::Checkpoints;
use crate::history::holding::{HoldingArea, sweep};
use crate::history::journal::Journal;
use crate::history::world_delta::RespawnedIds;
use crate::runtime::executor::ActiveJobs;

/// Entity bits (as they read now) that a journal entry or a checkpoint names.
fn named_entities(world: &World) -> HashSet<u64> {
    let ids = world.get_resource::<RespawnedIds>();
    let current = |bits: u64| ids.map_or(bits, |ids| ids.current(bits));
    let mut named = HashSet::new();
    if let Some(journal) = world.get_resource::<Journal>() {
        for entry in journal.entries() {
            if let Ok(delta) = &entry.change {
                named.extend(delta.entities.keys().map(|bits| current(*bits)));
            }
        }
    }
    if let Some(checkpoints) = world.get_resource::<Checkpoints>() {
        for (_, snapshot) in &checkpoints.0 {
            named.extend(snapshot.entities.keys().map(|bits| current(*bits)));
        }
    }
    named
}

/// The system that despawns, once a frame at most and only after a change, the held entities
/// nothing names any more.
pub(crate) fn release_unnamed(world: &mut World) {
    let Some(area) = world.get_resource::<HoldingArea>() else {
        return;
    };
    if !area.wants_sweep() {
        return;
    }
    // A job over the whole world (a clear, a restore) holds entities it names only once done.
    if world
        .get_resource::<ActiveJobs>()
        .is_some_and(ActiveJobs::holding_world)
    {
        return;
    }
    // Nothing held, nothing to name: the journal and checkpoints are not read.
    if area.held() == 0 {
        HoldingArea::settle(world);
        return;
    }
    let named = named_entities(world);
    sweep(world, |entity| named.contains(&entity.to_bits()));
}
