//! `history.checkpoint`, `diff` and `restore`: work over the whole world, done a slice per frame
//! under the frame's allowance ([`crate::runtime::slices`]), so a world of 100,000 entities is
//! read, compared or put back without holding the game's frame. A small world is done within the
//! call's first frame and answered at once.
//!
//! While one of them runs, calls that change the world wait (the action is
//! [`Action::over_whole_world`]), so a checkpoint holds one world and a restore is one change;
//! the game's own systems still run between slices, and each entity is held as it was when its
//! slice read it. A restore that has begun to change the world finishes even when cancelled, so
//! the world is never left half restored.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use bevy::prelude::{Entity, World};
use bevy_mcp_generated::params::{
    HistoryCheckpointParams, HistoryDiffParams, HistoryRestoreParams,
};
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

use super::{Rows, calling_respawned};
use crate::error::BridgeError;
use crate::history::checkpoints::{Checkpoints, MAX_CHECKPOINT_BYTES};
use crate::history::holding::HoldingArea;
use crate::history::journal::report_change;
use crate::history::snapshot::{
    CompareScan, Difference, EntityReader, Snapshot, SnapshotScan, resources_now,
    unheld_resource_reason, unheld_resources,
};
use crate::history::world_delta::{
    Applied, Applying, Change, Delta, EntityChange, EntitySnapshot, HierarchyCheck, OneSide, Raw,
    Side, Tally, resource_changes,
};
use crate::reflect::names;
use crate::reflect::policy::WritePolicy;
use crate::reflect::world::{frame, is_present};
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};
use crate::runtime::retire::{FreedOverFrames, retire};
use crate::runtime::slices::Slice;

/// `history.checkpoint`: keeps the world in memory (the world itself does not change).
pub(crate) const CHECKPOINT: Action<HistoryCheckpointParams> =
    Action::run_long(checkpoint).over_whole_world();
/// `history.diff`.
pub(crate) const DIFF: Action<HistoryDiffParams> = Action::run_long(diff).over_whole_world();
/// `history.restore`: reports what it changed to the journal itself, once done.
pub(crate) const RESTORE: Action<HistoryRestoreParams> = Action::run_long(restore)
    .touching(|_, _| Footprint::Reported)
    .over_whole_world();

fn checkpoint(world: &mut World, params: HistoryCheckpointParams) -> Outcome {
    if exists(world, &params.name) && !params.overwrite {
        return Outcome::Done(Err(BridgeError::CheckpointExists { name: params.name }));
    }
    let scan = SnapshotScan::new(world, MAX_CHECKPOINT_BYTES);
    Outcome::first_frame(
        world,
        CheckpointJob {
            params,
            scan: Some(scan),
            frames: 0,
        },
    )
}

fn exists(world: &World, name: &str) -> bool {
    world
        .get_resource::<Checkpoints>()
        .is_some_and(|held| held.holds(name))
}

/// A checkpoint being read.
struct CheckpointJob {
    params: HistoryCheckpointParams,
    scan: Option<SnapshotScan>,
    frames: u64,
}

impl LongJob for CheckpointJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let scan = self.scan.as_mut()?;
        self.frames += 1;
        let read = Slice::within(world, |world, slice| scan.advance(world, slice));
        match read {
            Err(error) => Some(Err(error)),
            Ok(false) => {
                let (done, total) = scan.progress(world);
                progress.report_paced(f64::from(done), Some(f64::from(total)), Some("reading"));
                None
            }
            Ok(true) => {
                let scan = self.scan.take()?;
                Some(
                    scan.finish(world)
                        .map(|snapshot| self.keep(world, snapshot)),
                )
            }
        }
    }
}

impl CheckpointJob {
    /// Keeps the snapshot under its name; the reply.
    fn keep(&self, world: &mut World, snapshot: Snapshot) -> Value {
        let name = self.params.name.clone();
        let mut reply = json!({
            "checkpoint": name,
            "frame": snapshot.frame,
            "firstFrame": snapshot.first_frame,
            "framesRead": self.frames,
            "entities": snapshot.entities.len(),
            "resources": snapshot.resources.len(),
            "bytes": snapshot.bytes,
        });
        if !snapshot.unheld_resources.is_empty() {
            let registry = names::registry(world);
            let registry = registry.read();
            reply["notHeld"] = snapshot
                .unheld_resources
                .iter()
                .map(|label| {
                    json!({"type": label, "reason": unheld_resource_reason(&registry, label)})
                })
                .collect();
        }
        let mut held = world.get_resource_or_init::<Checkpoints>();
        let (let_go, dropped) = held.keep(name, snapshot);
        reply["checkpoints"] = json!(held.names());
        if let Some(dropped) = dropped {
            reply["dropped"] = json!(dropped);
        }
        for snapshot in let_go {
            Snapshot::free_over_frames(snapshot, world);
        }
        // A checkpoint dropped or replaced may have been all that named a held entity.
        HoldingArea::mark_dirty(world);
        reply
    }
}

fn checkpoint_named(world: &World, name: &str) -> Result<Arc<Snapshot>, BridgeError> {
    match world.get_resource::<Checkpoints>() {
        Some(held) => held.get(name).cloned(),
        None => Err(BridgeError::CheckpointNotFound {
            name: name.to_owned(),
            held: Vec::new(),
        }),
    }
}

fn diff(world: &mut World, params: HistoryDiffParams) -> Outcome {
    let from = match checkpoint_named(world, &params.from) {
        Ok(from) => from,
        Err(error) => return Outcome::Done(Err(error)),
    };
    let against = match &params.to {
        Some(name) => match checkpoint_named(world, name) {
            Ok(to) => Against::Checkpoint {
                to,
                after: None,
                missing_after: None,
            },
            Err(error) => return Outcome::Done(Err(error)),
        },
        None => Against::Now(CompareScan::new(Arc::clone(&from))),
    };
    Outcome::first_frame(
        world,
        DiffJob {
            from_name: params.from,
            to_name: params.to.unwrap_or_else(|| "now".to_owned()),
            from,
            against,
            rows: Rows::default(),
        },
    )
}

/// What a difference is taken against.
enum Against {
    /// Another checkpoint: its entities and the first one's are walked by key.
    Checkpoint {
        to: Arc<Snapshot>,
        /// The first checkpoint's entities after this key are left to compare.
        after: Option<u64>,
        /// Then the second's entities after this key are left to look for in the first.
        missing_after: Option<Option<u64>>,
    },
    /// The world now.
    Now(CompareScan),
}

/// A difference being taken.
struct DiffJob {
    from_name: String,
    to_name: String,
    from: Arc<Snapshot>,
    against: Against,
    rows: Rows,
}

/// Checkpoint entities compared per unit of a slice (compared as text, without reading the
/// world).
const KEYS_PER_UNIT: usize = 32;

impl LongJob for DiffJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let mut slice = Slice::begin(world);
        let rows = &mut self.rows;
        let done = match &mut self.against {
            Against::Now(scan) => {
                let done = scan.advance(world, &mut slice, &mut |found| rows.note(found));
                if !done {
                    let (done, total) = scan.progress(world);
                    progress.report_paced(done as f64, Some(total as f64), Some("comparing"));
                }
                done
            }
            Against::Checkpoint {
                to,
                after,
                missing_after,
            } => compare_checkpoints(&self.from, to, after, missing_after, &mut slice, rows),
        };
        slice.end(world);
        if !done {
            return None;
        }
        let resources_to = match &self.against {
            Against::Now(_) => resources_now(world),
            Against::Checkpoint { to, .. } => to.resources.clone(),
        };
        let rows = std::mem::take(&mut self.rows);
        Some(Ok(rows.reply(
            &self.from_name,
            &self.to_name,
            &self.from.resources,
            &resources_to,
        )))
    }
}

/// Compares two checkpoints while the slice lasts: the first's entities by key, then the
/// second's that the first lacks. `true` once done.
fn compare_checkpoints(
    from: &Snapshot,
    to: &Snapshot,
    after: &mut Option<u64>,
    missing_after: &mut Option<Option<u64>>,
    slice: &mut Slice,
    rows: &mut Rows,
) -> bool {
    use std::ops::Bound::{Excluded, Unbounded};
    if missing_after.is_none() {
        let range = match *after {
            Some(key) => from.entities.range((Excluded(key), Unbounded)),
            None => from.entities.range(..),
        };
        for (index, (bits, then)) in range.enumerate() {
            if index % KEYS_PER_UNIT == 0 && !slice.more() {
                return false;
            }
            *after = Some(*bits);
            match to.entities.get(bits) {
                None => rows.note(Difference::Removed {
                    bits: *bits,
                    then: then.clone(),
                }),
                Some(now) if now != then => rows.note(Difference::Changed {
                    bits: *bits,
                    then: then.clone(),
                    now: now.clone(),
                }),
                Some(_) => {}
            }
        }
        *missing_after = Some(None);
    }
    let Some(last) = *missing_after else {
        return true;
    };
    let range = match last {
        Some(key) => to.entities.range((Excluded(key), Unbounded)),
        None => to.entities.range(..),
    };
    for (index, (bits, now)) in range.enumerate() {
        if index % KEYS_PER_UNIT == 0 && !slice.more() {
            return false;
        }
        *missing_after = Some(Some(*bits));
        if !from.entities.contains_key(bits) {
            rows.note(Difference::Added {
                bits: *bits,
                now: now.clone(),
            });
        }
    }
    true
}

fn restore(world: &mut World, params: HistoryRestoreParams) -> Outcome {
    let target = match checkpoint_named(world, &params.name) {
        Ok(target) => target,
        Err(error) => return Outcome::Done(Err(error)),
    };
    Outcome::first_frame(
        world,
        RestoreJob {
            name: params.name,
            stage: RestoreStage::Compare(CompareScan::new(target)),
            building: Delta::default(),
            was: BTreeMap::new(),
            delta: Arc::new(Delta::default()),
            not_restored: BTreeMap::new(),
            applied: None,
            units: 0,
            tally: Tally::default(),
        },
    )
}

/// Where a restore is.
enum RestoreStage {
    /// Reading what differs from the checkpoint (nothing changes yet).
    Compare(CompareScan),
    /// Checking the hierarchy the checkpoint would leave (nothing changes yet).
    Hierarchy(Box<HierarchyCheck>),
    /// Making the world hold the checkpoint's side.
    Apply(Box<Applying>),
    /// Reading the entities it changed, for the journal.
    Reread {
        /// The last entity read again.
        after: Option<u64>,
        /// Entities that came back whole as the checkpoint holds them: not read again.
        unchanged: HashMap<u64, EntitySnapshot>,
        change: BTreeMap<u64, EntityChange>,
    },
}

/// A restore in progress.
struct RestoreJob {
    name: String,
    stage: RestoreStage,
    /// From the world now to the checkpoint, while it is being found.
    building: Delta,
    /// Each entity the restore changes as the world held it when the restore began (`None`:
    /// not in the world then).
    was: BTreeMap<u64, Option<EntitySnapshot>>,
    /// From the world now to the checkpoint, once found.
    delta: Arc<Delta>,
    not_restored: BTreeMap<String, String>,
    applied: Option<Applied>,
    /// Units of work done, over every stage (the progress reported).
    units: u64,
    /// The change recorded for the journal, counted as it is read.
    tally: Tally,
}

impl LongJob for RestoreJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let result = Slice::within(world, |world, slice| self.advance(world, slice));
        match result {
            Ok(true) => Some(Ok(self.finish(world))),
            Ok(false) => {
                let stage = match self.stage {
                    RestoreStage::Compare(_) => "comparing with the checkpoint",
                    RestoreStage::Hierarchy(_) => "checking the hierarchy",
                    RestoreStage::Apply(_) => "restoring",
                    RestoreStage::Reread { .. } => "recording the change",
                };
                progress.report_paced(self.units as f64, None, Some(stage));
                None
            }
            Err(error) => Some(Err(error)),
        }
    }

    fn cancellable(&self) -> bool {
        // Once the world began to change, the restore finishes: never half a checkpoint.
        match &self.stage {
            RestoreStage::Compare(_) | RestoreStage::Hierarchy(_) => true,
            RestoreStage::Apply(applying) => !applying.changed_anything(),
            RestoreStage::Reread { .. } => false,
        }
    }
}

/// What restoring a checkpoint changes for one entity that differs: its id, what the world holds
/// now, and the change (before: the world now; after: the checkpoint).
fn restoring(difference: Difference) -> (u64, Option<EntitySnapshot>, Option<EntityChange>) {
    match difference {
        Difference::Added { bits, now } => (
            bits,
            Some(now.clone()),
            Some(EntityChange::Whole(Change {
                before: Some(now),
                after: None,
            })),
        ),
        Difference::Removed { bits, then } => (
            bits,
            None,
            Some(EntityChange::Whole(Change {
                before: None,
                after: Some(then),
            })),
        ),
        Difference::Changed { bits, then, now } => {
            let change = EntityChange::between(Some(&now), Some(&then));
            (bits, Some(now), change)
        }
    }
}

impl RestoreJob {
    /// Goes on while the slice lasts; `true` once done.
    fn advance(&mut self, world: &mut World, slice: &mut Slice) -> Result<bool, BridgeError> {
        loop {
            match &mut self.stage {
                RestoreStage::Compare(scan) => {
                    let (entities, was) = (&mut self.building.entities, &mut self.was);
                    let mut found = |difference| {
                        let (bits, now, change) = restoring(difference);
                        if let Some(change) = change {
                            entities.insert(bits, change);
                            was.insert(bits, now);
                        }
                    };
                    let before = scan.progress(world).0;
                    let done = scan.advance(world, slice, &mut found);
                    self.units += scan.progress(world).0.saturating_sub(before);
                    if !done {
                        return Ok(false);
                    }
                    let target = scan.base().resources.clone();
                    let unheld = scan.base().unheld_resources.clone();
                    self.plan_resources(world, &target, unheld);
                    self.delta = Arc::new(std::mem::take(&mut self.building));
                    // A restore is an ordinary write: it keeps the hierarchy rules any other
                    // write keeps.
                    let limit = WritePolicy::of(world).limits().max_hierarchy_depth;
                    let check = HierarchyCheck::new(limit);
                    retire(std::mem::replace(
                        &mut self.stage,
                        RestoreStage::Hierarchy(Box::new(check)),
                    ));
                }
                RestoreStage::Hierarchy(check) => {
                    let planned = OneSide(&self.delta, Side::After);
                    let Some(broken) = check.advance(&planned, world, slice) else {
                        return Ok(false);
                    };
                    if let Some(problem) = broken.first() {
                        return Err(BridgeError::RestoreBreaksHierarchy {
                            name: self.name.clone(),
                            first: problem.what.clone(),
                            conflicts: broken.iter().map(|conflict| conflict.json()).collect(),
                        });
                    }
                    let applying = Applying::new(world, Arc::clone(&self.delta), Side::After);
                    retire(std::mem::replace(
                        &mut self.stage,
                        RestoreStage::Apply(Box::new(applying)),
                    ));
                }
                RestoreStage::Apply(applying) => {
                    let before = applying.progress().0;
                    let applied = applying.advance(world, slice)?;
                    self.units += applying.progress().0.saturating_sub(before) as u64 + 1;
                    let Some(applied) = applied else {
                        return Ok(false);
                    };
                    calling_respawned(world, &applied.respawned);
                    let unchanged = applying.take_unchanged();
                    let reread = RestoreStage::Reread {
                        after: None,
                        unchanged,
                        change: BTreeMap::new(),
                    };
                    if let RestoreStage::Apply(applying) =
                        std::mem::replace(&mut self.stage, reread)
                    {
                        applying.free_over_frames(world);
                    }
                    self.applied = Some(applied);
                }
                RestoreStage::Reread {
                    after,
                    unchanged,
                    change,
                } => {
                    use std::ops::Bound::{Excluded, Unbounded};
                    let registry = names::registry(world);
                    let registry = registry.read();
                    let mut reader = EntityReader::new(&registry);
                    let respawned = self.applied.as_ref().map(|applied| &applied.respawned);
                    let left = match *after {
                        Some(key) => self.was.range((Excluded(key), Unbounded)),
                        None => self.was.range(..),
                    };
                    for (bits, was) in left {
                        if !slice.more() {
                            return Ok(false);
                        }
                        let bits = *bits;
                        *after = Some(bits);
                        self.units += 1;
                        let was = was.as_ref();
                        if let Some(now) = unchanged.remove(&bits) {
                            if let Some(made) = EntityChange::between(was, Some(&now)) {
                                self.tally.add(bits, &made);
                                change.insert(bits, made);
                            }
                            continue;
                        }
                        let entity = respawned
                            .and_then(|respawned| respawned.get(&bits).copied())
                            .or_else(|| Entity::try_from_bits(bits))
                            .filter(|entity| is_present(world, *entity));
                        let now = entity.map(|entity| reader.read(world, entity));
                        if let Some(made) = EntityChange::between(was, now.as_ref()) {
                            self.tally.add(bits, &made);
                            change.insert(bits, made);
                        }
                    }
                    return Ok(true);
                }
            }
        }
    }

    /// Resources differ as the checkpoint and the world now hold them; resources added since are
    /// listed, not removed (the game may rely on them now), as are the game's resources that
    /// either could not hold.
    fn plan_resources(
        &mut self,
        world: &World,
        target: &BTreeMap<String, Raw>,
        mut unheld: BTreeSet<String>,
    ) {
        let now = resources_now(world);
        let registry = names::registry(world);
        unheld.extend(unheld_resources(world, &registry.read(), &now));
        self.building.unheld_resources = unheld;
        let mut resources = resource_changes(&now, target);
        resources.retain(|type_path, change| {
            let keep = change.after.is_some();
            if !keep {
                self.not_restored.insert(
                    type_path.clone(),
                    "added since the checkpoint; remove it with manage_resource.remove if it should go"
                        .to_owned(),
                );
            }
            keep
        });
        self.building.resources = resources;
    }

    /// The reply, once every stage is done; the journal gets what changed.
    fn finish(&mut self, world: &mut World) -> Value {
        let applied = self.applied.take().unwrap_or_default();
        let mut change = Delta {
            entities: match &mut self.stage {
                RestoreStage::Reread { change, .. } => std::mem::take(change),
                _ => BTreeMap::new(),
            },
            unheld_resources: self.delta.unheld_resources.clone(),
            ..Delta::default()
        };
        let resources_after = resources_now(world);
        for (type_path, planned) in &self.delta.resources {
            let now = resources_after.get(type_path).cloned();
            if planned.before != now {
                change.resources.insert(
                    type_path.clone(),
                    Change {
                        before: planned.before.clone(),
                        after: now,
                    },
                );
            }
        }
        report_change(world, Ok(change), Some(std::mem::take(&mut self.tally)));
        let mut not_restored = std::mem::take(&mut self.not_restored);
        not_restored.extend(applied.not_restored.clone());
        let applied = Applied {
            not_restored,
            ..applied
        };
        // What it read of the whole world is freed a slice per frame (11 ms at once).
        FreedOverFrames::hand_over_items(world, std::mem::take(&mut self.was));
        Delta::free_over_frames(std::mem::take(&mut self.delta), world);
        if let RestoreStage::Reread { unchanged, .. } = &mut self.stage {
            FreedOverFrames::hand_over_items(world, std::mem::take(unchanged));
        }
        json!({
            "restored": self.name,
            "despawned": applied.despawned,
            "respawned": applied.respawned_json(),
            "broughtBack": applied.brought_back,
            "componentsWritten": applied.components_written,
            "componentsRemoved": applied.components_removed,
            "resourcesWritten": applied.resources_written,
            "notRestored": applied.not_restored_json(),
            "frame": frame(world),
        })
    }
}
