//! The frame's time for work over the whole world: checkpoints, differences, restores, clears,
//! world files, big undos and queries read or change the world a slice at a time, one slice per
//! frame, so none of them holds the game's frame however big the world is.
//!
//! Every call doing such work in a frame shares one allowance ([`WORLD_WORK_PER_FRAME`]) in equal
//! shares (by how many slices the last frame took), never less than [`LEAST_SHARE`]; once it is
//! spent ([`SliceTime::spent`]) the jobs not yet polled wait for the next frame and go first
//! there, so sixteen at once cost the frame about what one does and each moves on in turn. A
//! slice also ends after [`MAX_UNITS`] units (entities, mostly) whatever the clock says, so how
//! many frames a job takes has a lower bound a test can count on.

use std::time::{Duration, Instant};

use bevy::prelude::{Resource, World};

/// What work over the whole world may take of one frame, all calls together.
pub(crate) const WORLD_WORK_PER_FRAME: Duration = Duration::from_micros(1_000);
/// A call's share of a frame never falls below this, so every call moves on.
const LEAST_SHARE: Duration = Duration::from_micros(20);
/// Most units one slice takes.
pub const MAX_UNITS: u32 = 2_048;
/// The clock is read every this many units: a unit that costs much (an entity moved into a
/// table that must grow) ends its slice at once.
const CHECK_EVERY: u32 = 1;

/// How much of this frame's allowance the slices taken so far used.
#[derive(Resource, Debug, Default)]
pub(crate) struct SliceTime {
    used: Duration,
    /// Slices taken this frame, and in the last one (how many share the allowance).
    slices: u32,
    last_slices: u32,
}

impl SliceTime {
    /// Whether this frame's allowance is used up: jobs that take slices wait for the next.
    pub(crate) fn spent(world: &World) -> bool {
        world
            .get_resource::<SliceTime>()
            .is_some_and(|time| time.used >= WORLD_WORK_PER_FRAME)
    }

    /// A new frame: nothing used yet (the executor calls it first in every frame).
    pub(crate) fn new_frame(world: &mut World) {
        if let Some(mut time) = world.get_resource_mut::<SliceTime>() {
            time.used = Duration::ZERO;
            time.last_slices = std::mem::take(&mut time.slices);
        }
    }
}

/// Where the frame's allowance stood before a job was polled.
#[derive(Debug)]
pub(crate) struct PollMark {
    used: Duration,
    slices: u32,
    started: Instant,
}

impl PollMark {
    /// Marks the allowance before a poll.
    pub(crate) fn before(world: &World) -> Option<PollMark> {
        let time = world.get_resource::<SliceTime>()?;
        Some(PollMark {
            used: time.used,
            slices: time.slices,
            started: Instant::now(),
        })
    }

    /// A poll that took a slice counts whole against the allowance: the work around its slice
    /// (setting up, reporting progress) too, so sixteen such jobs in a frame cost about what
    /// the allowance says.
    /// Returns whether the poll took a slice.
    pub(crate) fn count_poll(self, world: &mut World) -> bool {
        if let Some(mut time) = world.get_resource_mut::<SliceTime>()
            && time.slices > self.slices
        {
            time.used = time.used.max(self.used + self.started.elapsed());
            return true;
        }
        false
    }
}

/// One job's slice of a frame: ask [`Slice::more`] before each unit of work.
#[derive(Debug)]
pub(crate) struct Slice {
    started: Instant,
    /// `None`: no bound (a small world done at once, or a caller outside the executor).
    allowance: Option<Duration>,
    units: u32,
    over: bool,
}

impl Slice {
    /// This frame's slice for one job: an equal share of the frame's allowance, within what is
    /// left of it, at least [`LEAST_SHARE`].
    pub(crate) fn begin(world: &mut World) -> Slice {
        let (used, sharing) = match world.get_resource_mut::<SliceTime>() {
            Some(mut time) => {
                time.slices += 1;
                (time.used, time.last_slices.max(time.slices))
            }
            None => (Duration::ZERO, 1),
        };
        let share = WORLD_WORK_PER_FRAME / sharing.max(1);
        let left = WORLD_WORK_PER_FRAME.saturating_sub(used);
        Slice {
            started: Instant::now(),
            allowance: Some(share.min(left).max(LEAST_SHARE)),
            units: 0,
            over: false,
        }
    }

    /// Runs `work` in this frame's slice for one job ([`Slice::begin`] to [`Slice::end`]).
    pub(crate) fn within<R>(
        world: &mut World,
        work: impl FnOnce(&mut World, &mut Slice) -> R,
    ) -> R {
        let mut slice = Slice::begin(world);
        let done = work(world, &mut slice);
        slice.end(world);
        done
    }

    /// A slice without bound: everything at once.
    pub(crate) fn unbounded() -> Slice {
        Slice {
            started: Instant::now(),
            allowance: None,
            units: 0,
            over: false,
        }
    }

    /// Whether one more unit fits; once it says no, it keeps saying no.
    pub(crate) fn more(&mut self) -> bool {
        if self.over {
            return false;
        }
        if let Some(allowance) = self.allowance {
            let timed_out = self.units > 0
                && self.units.is_multiple_of(CHECK_EVERY)
                && self.started.elapsed() >= allowance;
            if self.units >= MAX_UNITS || timed_out {
                self.over = true;
                return false;
            }
        }
        self.units += 1;
        true
    }

    /// Whether one more unit fits that may cost a slice's whole time by itself (one that grows
    /// an engine table, see [`entity_table_room`]): only as the slice's first unit, so its
    /// cost is not added to other work in the same frame.
    pub(crate) fn more_as_first(&mut self) -> bool {
        if self.allowance.is_some() && self.units > 0 {
            self.over = true;
            return false;
        }
        self.more()
    }

    /// Halves this slice's time: for work the game pays for again after the bridge's turn
    /// (components inserted into many entities make the game's systems work on each of them in
    /// the same frame).
    pub(crate) fn halve(&mut self) {
        if let Some(allowance) = &mut self.allowance {
            *allowance = (*allowance / 2).max(LEAST_SHARE);
        }
    }

    /// Units taken so far (a job's progress counts them).
    pub(crate) fn units(&self) -> u32 {
        self.units
    }

    /// Whether the slice ran out (the job goes on in the next frame).
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }

    /// Ends the slice: its time counts against the frame's allowance.
    pub(crate) fn end(self, world: &mut World) {
        if self.allowance.is_none() {
            return;
        }
        if let Some(mut time) = world.get_resource_mut::<SliceTime>() {
            time.used += self.started.elapsed();
        }
    }
}

/// Entities the count of spawned ones does not see (freed this frame and not yet reusable,
/// reserved and not yet spawned): the margin by which [`entity_table_room`] foresees.
const UNSEEN_ENTITIES: usize = 256;

/// Entities a spawning job spawns, one at a time, in a slice of their own once
/// [`entity_table_room`] is short: it ends right after the growth, and a false alarm costs one
/// frame.
pub(crate) const SPAWNED_NEAR_GROWTH: usize = 2 * UNSEEN_ENTITIES;

/// How many entities may still be spawned before Bevy's entity table may grow: it doubles and
/// fills its new half in the one spawn that crosses it (1.3 to 1.8 ms of one frame at 131,072
/// entities), so the unit holding it should start a slice of its own. Counted from the
/// spawned entities, with a margin for the ones that count does not see; read once per slice
/// (each spawn of the slice takes one from it).
pub(crate) fn entity_table_room(world: &World) -> usize {
    let spawned: usize = world
        .archetypes()
        .iter()
        .map(|archetype| archetype.len() as usize)
        .sum();
    (world.entities().len() as usize).saturating_sub(spawned + UNSEEN_ENTITIES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spawn_that_grows_the_entity_table_is_foreseen() {
        let mut world = World::new();
        let (mut grown, mut foreseen_at, mut spawns) = (0, 0, 0);
        let mut living = Vec::new();
        // Spawns with despawns between (some indices freed, some reused), as a game does.
        for step in 0..20_000 {
            if step % 5 == 4
                && let Some(entity) = living.pop()
            {
                world.despawn(entity);
                if step % 3 == 0 {
                    world.flush();
                }
                continue;
            }
            let (foreseen, before) = (entity_table_room(&world) < 1, world.entities().len());
            living.push(world.spawn_empty().id());
            spawns += 1;
            let grew = world.entities().len() > before;
            assert!(!grew || foreseen, "a growth at {before} was not foreseen");
            grown += usize::from(grew);
            foreseen_at += usize::from(foreseen);
        }
        assert!(grown >= 2, "the table grows more than once");
        assert!(
            foreseen_at <= grown * (UNSEEN_ENTITIES + 1),
            "a growth is foreseen at most the margin ahead: {foreseen_at} spawns of {spawns}"
        );
    }

    #[test]
    fn a_unit_that_may_cost_a_slice_comes_first_or_not_at_all() {
        let mut world = World::new();
        let mut slice = Slice::begin(&mut world);
        assert!(slice.more_as_first());
        let mut second = Slice::begin(&mut world);
        assert!(second.more());
        assert!(!second.more_as_first(), "the slice did work already");
        assert!(!second.more(), "and it is over");
        let mut unbounded = Slice::unbounded();
        assert!(unbounded.more() && unbounded.more_as_first());
    }

    #[test]
    fn a_slice_stops_at_its_unit_bound_and_stays_stopped() {
        let mut world = World::new();
        let mut slice = Slice::begin(&mut world);
        let mut taken = 0;
        // The clock is not the bound here: the machine may be slow, so only the units count.
        while slice.more() {
            taken += 1;
            if taken > MAX_UNITS {
                break;
            }
        }
        assert!(taken <= MAX_UNITS);
        assert!(slice.is_over());
        assert!(!slice.more());
    }

    #[test]
    fn a_halved_slice_keeps_its_least_share() {
        let mut world = World::new();
        let mut slice = Slice::begin(&mut world);
        for _ in 0..32 {
            slice.halve();
        }
        assert_eq!(slice.allowance, Some(LEAST_SHARE));
        let mut unbounded = Slice::unbounded();
        unbounded.halve();
        assert_eq!(unbounded.allowance, None);
    }

    #[test]
    fn an_unbounded_slice_never_stops() {
        let mut slice = Slice::unbounded();
        assert!((0..MAX_UNITS * 2).all(|_| slice.more()));
        assert!(!slice.is_over());
    }
}
