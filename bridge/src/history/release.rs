//! Releasing held entities: after a change that may have left some unnamed, the entities the
//! holding area keeps that no journal entry or checkpoint names any more (and the oldest past
//! its bound) are despawned for real (see [`crate::history::holding`]).
//!
//! A sweep reads what every entry and checkpoint names, then the held entities, then despawns,
//! each a slice per frame under the frame's allowance: a journal holding the clear of 100,000
//! entities is read over frames, never in one. What it reads it shares (`Arc`s), so the journal
//! and checkpoints may change meanwhile: an entry or checkpoint made during the sweep is read
//! too before anything is despawned (it can only name more), and one dropped meanwhile only
//! keeps an entity one sweep longer.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::Arc;

use bevy::prelude::{Entity, Resource, World};

use crate::history::checkpoints::Checkpoints;
use crate::history::holding::{HoldingArea, despawn_leaf_first};
use crate::history::journal::Journal;
use crate::history::snapshot::Snapshot;
use crate::history::world_delta::{Delta, RespawnedIds};
use crate::reflect::world::HeldOutOfSight;
use crate::runtime::executor::ActiveJobs;
use crate::runtime::retire::retire;
use crate::runtime::slices::Slice;

/// Keys of a journal entry or checkpoint read per unit of a slice.
const KEYS_PER_UNIT: usize = 64;

/// Something that names entities.
#[derive(Debug, Clone)]
enum Source {
    Entry(Arc<Delta>),
    Checkpoint(Arc<Snapshot>),
}

impl Source {
    /// Its keys after `after` (all of them for `None`).
    fn keys_after(&self, after: Option<u64>) -> Box<dyn Iterator<Item = u64> + '_> {
        use std::ops::Bound::{Excluded, Unbounded};
        let bounds = match after {
            Some(key) => (Excluded(key), Unbounded),
            None => (Unbounded, Unbounded),
        };
        match self {
            Source::Entry(delta) => Box::new(delta.entities.range(bounds).map(|(key, _)| *key)),
            Source::Checkpoint(snapshot) => {
                Box::new(snapshot.entities.range(bounds).map(|(key, _)| *key))
            }
        }
    }
}

/// Where a sweep is.
#[derive(Debug, Default)]
enum Stage {
    /// Reading what the sources name.
    #[default]
    Named,
    /// Finding the held entities, archetype by archetype.
    Held,
    /// Choosing which of them go.
    Choose,
    /// Despawning the ones to release.
    Release,
}

/// A sweep in progress.
#[derive(Debug, Default)]
struct Sweep {
    stage: Stage,
    /// Sources still to read, and the last key read of the first one.
    sources: VecDeque<Source>,
    after: Option<u64>,
    /// The newest journal entry and the checkpoints already taken as sources.
    last_entry: u64,
    checkpoints: HashSet<usize>,
    /// Ordered, not hashed: a hash set of 300,000 keys rehashed in one frame as it grew.
    named: BTreeSet<u64>,
    /// The held archetypes still to look through, and how far into the first one.
    archetypes: Vec<bevy::ecs::archetype::ArchetypeId>,
    row: usize,
    held: Vec<(u64, Entity)>,
    /// How many of `held` are chosen among, and how many at the front go anyway (the oldest
    /// past the bound).
    chosen: usize,
    over: usize,
    release: Vec<Entity>,
    released: usize,
    /// Whether an entry or checkpoint made after the choice was read: what it names stays
    /// (the oldest past the bound too).
    late_named: bool,
}

/// The sweep in progress, if any.
#[derive(Resource, Debug, Default)]
pub(crate) struct Releasing(Option<Sweep>);

impl Sweep {
    /// Takes as sources the journal entries and checkpoints it has not read yet.
    fn gather(&mut self, world: &World) {
        if let Some(journal) = world.get_resource::<Journal>() {
            let last = self.last_entry;
            for entry in journal.entries().filter(|entry| entry.id > last) {
                if let Ok(delta) = &entry.change {
                    self.sources.push_back(Source::Entry(Arc::clone(delta)));
                }
                self.last_entry = entry.id;
            }
        }
        if let Some(checkpoints) = world.get_resource::<Checkpoints>() {
            for snapshot in checkpoints.snapshots() {
                if self.checkpoints.insert(Arc::as_ptr(snapshot) as usize) {
                    self.sources
                        .push_back(Source::Checkpoint(Arc::clone(snapshot)));
                }
            }
        }
    }

    /// Reads the sources while the slice lasts, each key as the entity it names now (`ids`,
    /// read in place: a copy of 65,536 renames cost a millisecond each frame it was taken);
    /// `true` once all are read.
    fn read_named(&mut self, ids: &RespawnedIds, slice: &mut Slice) -> bool {
        while let Some(source) = self.sources.front().cloned() {
            let mut keys = source.keys_after(self.after);
            loop {
                if !slice.more() {
                    return false;
                }
                let mut took = 0;
                for bits in keys.by_ref().take(KEYS_PER_UNIT) {
                    self.named.insert(ids.current(bits));
                    self.after = Some(bits);
                    took += 1;
                }
                if took < KEYS_PER_UNIT {
                    break;
                }
            }
            self.sources.pop_front();
            self.after = None;
        }
        true
    }

    /// Finds held entities while the slice lasts; `true` once all are found.
    fn find_held(&mut self, world: &World, slice: &mut Slice) -> bool {
        while let Some(id) = self.archetypes.last().copied() {
            let Some(archetype) = world.archetypes().get(id) else {
                self.archetypes.pop();
                self.row = 0;
                continue;
            };
            let rows = archetype.entities();
            while self.row < rows.len() {
                if !slice.more() {
                    return false;
                }
                let end = rows.len().min(self.row + KEYS_PER_UNIT);
                for row in &rows[self.row..end] {
                    let entity = row.id();
                    if let Some(held) = world.get::<HeldOutOfSight>(entity) {
                        self.held.push((held.order, entity));
                    }
                }
                self.row = end;
            }
            self.archetypes.pop();
            self.row = 0;
        }
        true
    }

    /// Chooses, while the slice lasts, which held entities go: the unnamed, and the oldest past
    /// the bound. `true` once all are chosen.
    fn choose(&mut self, slice: &mut Slice) -> bool {
        while self.chosen < self.held.len() {
            if !slice.more() {
                return false;
            }
            let end = self.held.len().min(self.chosen + KEYS_PER_UNIT);
            for index in self.chosen..end {
                let entity = self.held[index].1;
                if index < self.over || !self.named.contains(&entity.to_bits()) {
                    self.release.push(entity);
                }
            }
            self.chosen = end;
        }
        true
    }
}

/// The system that releases, a slice per frame, the held entities nothing names any more; it
/// starts a sweep only after something changed, and waits while a job over the whole world runs
/// (a clear or restore names what it holds only once done).
pub(crate) fn release_unnamed(world: &mut World) {
    let Some((wants_sweep, held, limit)) = world
        .get_resource::<HoldingArea>()
        .map(|area| (area.wants_sweep(), area.held(), area.limit()))
    else {
        return;
    };
    let busy = world
        .get_resource::<ActiveJobs>()
        .is_some_and(ActiveJobs::holding_world);
    let Some(mut sweep) = world.get_resource_or_init::<Releasing>().0.take() else {
        if !wants_sweep || busy {
            return;
        }
        // Nothing held, nothing to name: the journal and checkpoints are not read.
        if held == 0 {
            HoldingArea::settle(world);
            return;
        }
        HoldingArea::settle(world);
        let mut sweep = Sweep::default();
        sweep.gather(world);
        world.get_resource_or_init::<Releasing>().0 = Some(sweep);
        return;
    };
    if busy {
        world.get_resource_or_init::<Releasing>().0 = Some(sweep);
        return;
    }
    let done = Slice::within(world, |world, slice| {
        advance(world, &mut sweep, slice, limit)
    });
    if done {
        HoldingArea::released(world, sweep.released);
        // What the sweep read names every held entity: freed off the game thread.
        retire(sweep);
    } else {
        world.get_resource_or_init::<Releasing>().0 = Some(sweep);
    }
}

/// The renames of respawned entities, none if nothing was ever respawned.
fn respawned_ids(world: &World) -> &RespawnedIds {
    static NONE: std::sync::LazyLock<RespawnedIds> =
        std::sync::LazyLock::new(RespawnedIds::default);
    world.get_resource::<RespawnedIds>().unwrap_or(&NONE)
}

/// One frame of a sweep; `true` once it is done.
fn advance(world: &mut World, sweep: &mut Sweep, slice: &mut Slice, limit: usize) -> bool {
    loop {
        match sweep.stage {
            Stage::Named => {
                sweep.gather(world);
                if !sweep.read_named(respawned_ids(world), slice) {
                    return false;
                }
                sweep.stage = Stage::Held;
                if let Some(id) = world.component_id::<HeldOutOfSight>() {
                    sweep.archetypes = world
                        .archetypes()
                        .iter()
                        .filter(|archetype| archetype.contains(id))
                        .map(|archetype| archetype.id())
                        .collect();
                }
            }
            Stage::Held => {
                if !sweep.find_held(world, slice) {
                    return false;
                }
                sweep.over = sweep.held.len().saturating_sub(limit);
                if sweep.over > 0 {
                    // Past the bound, the oldest go first: they are put in front (not sorted).
                    let over = sweep.over;
                    sweep.held.select_nth_unstable(over - 1);
                }
                sweep.stage = Stage::Choose;
            }
            Stage::Choose => {
                if !sweep.choose(slice) {
                    return false;
                }
                sweep.stage = Stage::Release;
            }
            Stage::Release => {
                // An entry or checkpoint made since the choice may name more: read it first.
                sweep.gather(world);
                if !sweep.sources.is_empty() {
                    sweep.late_named = true;
                    if !sweep.read_named(respawned_ids(world), slice) {
                        return false;
                    }
                }
                // One despawn is one unit of the slice: popped first and despawned after, the
                // slice's clock saw only the pops, and a slice despawned up to its whole unit
                // bound (2,048 entities) past its allowance. Each is detached from its children
                // first (those still held and named stay), so nothing recurses. What a later
                // entry or checkpoint names is skipped as it comes up, not filtered out of the
                // whole list at once (100,000 lookups in one frame).
                while !sweep.release.is_empty() && slice.more() {
                    let Some(entity) = sweep.release.pop() else {
                        break;
                    };
                    if sweep.late_named && sweep.named.contains(&entity.to_bits()) {
                        continue;
                    }
                    sweep.released += usize::from(world.get::<HeldOutOfSight>(entity).is_some());
                    despawn_leaf_first(world, &[entity]);
                }
                return sweep.release.is_empty();
            }
        }
    }
}
