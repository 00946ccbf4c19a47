//! `history`: named in-memory checkpoints of the world and the differences between them, and the
//! journal of every change made through the bridge, listed, undone and redone.
//!
//! A checkpoint holds every plain entity's reflected components and every reflected resource as
//! reflect JSON ([`crate::history::world_delta`]), so two of them (or one and the world now) compare value
//! by value. The journal ([`crate::history::journal`]) holds each call's change as a difference; undo makes
//! the world hold its before side, redo its after side, each checked first against what the
//! world holds now so nothing changed since is overwritten silently.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use bevy::prelude::{Entity, World};
use bevy_mcp_generated::params::{
    HistoryListCheckpointsParams, HistoryListParams, HistoryRedoParams, HistoryUndoParams,
};
use serde_json::{Map, Value, json};

use crate::error::BridgeError;
use crate::history::checkpoints::{Checkpoints, MAX_CHECKPOINT_BYTES, MAX_CHECKPOINTS};
use crate::history::journal::{Entry, EntryState, Journal};
use crate::history::snapshot::Difference;
use crate::history::world_delta::{
    self, Applied, Applying, Delta, EntitySnapshot, HierarchyCheck, Planned, Raw, Side,
    value_changes,
};
use crate::reflect::policy::WritePolicy;
use crate::reflect::world::frame;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::executor::CallingSession;
use crate::runtime::job::{LongJob, Outcome};
use crate::runtime::retire::retire;
use crate::runtime::slices::Slice;
use mcp_native_transport::ProgressSink;

mod whole_world;
pub(crate) use whole_world::{CHECKPOINT, DIFF, RESTORE};

/// `history.list_checkpoints`.
pub(crate) const LIST_CHECKPOINTS: Action<HistoryListCheckpointsParams> =
    Action::read(list_checkpoints);
/// `history.list`.
pub(crate) const LIST: Action<HistoryListParams> = Action::read(list);
/// `history.undo`: it changes entries' states rather than making an entry of its own.
pub(crate) const UNDO: Action<HistoryUndoParams> = Action::run_long(undo)
    .touching(|_, _| Footprint::Nothing)
    .over_whole_world();
/// `history.redo`: as undo.
pub(crate) const REDO: Action<HistoryRedoParams> = Action::run_long(redo)
    .touching(|_, _| Footprint::Nothing)
    .over_whole_world();

/// Entities came back under new ids: later undo steps, redo steps and every checkpoint follow
/// them.
fn calling_respawned(world: &mut World, respawned: &BTreeMap<u64, Entity>) {
    if respawned.is_empty() {
        return;
    }
    world_delta::remember_respawned(world, respawned);
    if let Some(mut held) = world.get_resource_mut::<Checkpoints>() {
        for checkpoint in held.snapshots_mut() {
            Arc::make_mut(checkpoint).follow_respawned(respawned);
        }
    }
}

/// The first 8 characters of a session id, as the audit log shows it.
fn short_session(session: &str) -> &str {
    session.get(..8).unwrap_or(session)
}

fn list_checkpoints(
    world: &World,
    _params: HistoryListCheckpointsParams,
) -> Result<Value, BridgeError> {
    let now_frame = frame(world);
    let now = Instant::now();
    let held = world
        .get_resource::<Checkpoints>()
        .map(|held| held.0.as_slice())
        .unwrap_or_default();
    let rows: Vec<Value> = held
        .iter()
        .map(|held| {
            let snapshot = &held.snapshot;
            json!({
                "name": held.name,
                "frame": snapshot.frame,
                "framesAgo": now_frame.saturating_sub(snapshot.frame),
                "secondsAgo": now.saturating_duration_since(held.taken).as_secs_f64(),
                "entities": snapshot.entities.len(),
                "resources": snapshot.resources.len(),
                "bytes": snapshot.bytes,
            })
        })
        .collect();
    let bytes: usize = held.iter().map(|held| held.snapshot.bytes).sum();
    Ok(json!({
        "held": rows.len(),
        "checkpoints": rows,
        "bytes": bytes,
        "limits": {"checkpoints": MAX_CHECKPOINTS, "bytesEach": MAX_CHECKPOINT_BYTES},
    }))
}

fn list(world: &World, params: HistoryListParams) -> Result<Value, BridgeError> {
    let caller = calling_session(world);
    let Some(journal) = world.get_resource::<Journal>() else {
        return Ok(json!({"entries": [], "held": 0, "bytes": 0, "dropped": 0}));
    };
    let now = Instant::now();
    let entries: Vec<Value> = journal
        .entries()
        .rev()
        .filter(|entry| !params.mine || entry.session == caller)
        .take(params.limit as usize)
        .map(|entry| {
            let mut row = json!({
                "id": entry.id,
                "session": short_session(&entry.session),
                "yours": entry.session == caller,
                "action": entry.action,
                "frame": entry.frame,
                "secondsAgo": now.saturating_duration_since(entry.at).as_secs_f64(),
                "summary": entry.summary(),
                "undoable": entry.change.is_ok(),
                "state": entry.state.as_str(),
                "bytes": entry.bytes,
            });
            if let Err(reason) = &entry.change {
                row["notUndoable"] = json!(reason);
            }
            row
        })
        .collect();
    let limits = journal.limits();
    let mut reply = json!({
        "entries": entries,
        "held": journal.entries().count(),
        "bytes": journal.bytes(),
        "limits": {"entries": limits.max_entries, "bytes": limits.max_bytes},
        "dropped": journal.dropped(),
    });
    if journal.dropped() > 0 {
        reply["droppedNote"] = json!(format!(
            "{} older entries were dropped to stay within the journal's bounds ({} entries, {} bytes); they can no longer be undone",
            journal.dropped(),
            limits.max_entries,
            limits.max_bytes
        ));
    }
    Ok(reply)
}

fn calling_session(world: &World) -> String {
    world
        .get_resource::<CallingSession>()
        .and_then(|calling| calling.0.clone())
        .unwrap_or_default()
}

/// What an undo or redo call asks for.
struct Steps {
    redo: bool,
    steps: u64,
    to: Option<u64>,
    all_sessions: bool,
    force: bool,
}

impl Steps {
    /// The side the world must hold before a step, and the side it holds after.
    fn sides(&self) -> (Side, Side) {
        if self.redo {
            (Side::Before, Side::After)
        } else {
            (Side::After, Side::Before)
        }
    }

    /// The same call, forced (for the conflict's nextCall).
    fn forced(&self) -> Value {
        let mut call = json!({"steps": self.steps, "force": true});
        if let Some(to) = self.to {
            call["to"] = json!(to);
        }
        if self.all_sessions {
            call["allSessions"] = json!(true);
        }
        call
    }
}

/// The entries a step run takes, in the order it takes them, and those it passes over (not
/// undoable) with why.
fn select(
    journal: &Journal,
    caller: &str,
    asked: &Steps,
) -> Result<(Vec<u64>, Vec<Value>), BridgeError> {
    let wanted_state = if asked.redo {
        EntryState::Undone
    } else {
        EntryState::Done
    };
    let ours = |entry: &&Entry| asked.all_sessions || entry.session == caller;
    if let Some(to) = asked.to {
        let entry = journal.get(to).ok_or_else(|| BridgeError::EntryNotFound {
            id: to,
            reason: if journal.dropped() > 0 {
                "it is not held (older entries were dropped to stay within the journal's bounds)"
                    .to_owned()
            } else {
                "it is not held".to_owned()
            },
        })?;
        if !ours(&entry) {
            return Err(BridgeError::EntryNotFound {
                id: to,
                reason: "it is another session's; pass allSessions: true to take it".to_owned(),
            });
        }
        if let Err(reason) = &entry.change {
            return Err(BridgeError::NotUndoable {
                id: to,
                action: entry.action.clone(),
                reason: reason.clone(),
            });
        }
        if entry.state != wanted_state {
            return Err(BridgeError::EntryNotFound {
                id: to,
                reason: format!("it is {}", entry.state.as_str()),
            });
        }
    }
    let candidates: Vec<&Entry> = if asked.redo {
        journal.entries().filter(ours).collect()
    } else {
        journal.entries().rev().filter(ours).collect()
    };
    let mut taken = Vec::new();
    let mut passed = Vec::new();
    for entry in candidates {
        if entry.state != wanted_state {
            continue;
        }
        if let Err(reason) = &entry.change {
            // Only changes made before the last one taken are passed over.
            if !asked.redo {
                passed.push(json!({"id": entry.id, "action": entry.action, "reason": reason}));
            }
            continue;
        }
        taken.push(entry.id);
        let reached = match asked.to {
            Some(to) => entry.id == to,
            None => taken.len() as u64 >= asked.steps,
        };
        if reached {
            break;
        }
    }
    if taken.is_empty() {
        let others = journal
            .entries()
            .filter(|entry| {
                entry.session != caller && entry.state == wanted_state && entry.change.is_ok()
            })
            .count();
        return Err(BridgeError::NothingToUndo {
            redo: asked.redo,
            others: if asked.all_sessions { 0 } else { others },
        });
    }
    let last = taken.last().copied().unwrap_or_default();
    passed.retain(|row| row["id"].as_u64().is_some_and(|id| id > last));
    Ok((taken, passed))
}

fn undo(world: &mut World, params: HistoryUndoParams) -> Outcome {
    steps(
        world,
        Steps {
            redo: false,
            steps: params.steps,
            to: params.to,
            all_sessions: params.all_sessions,
            force: params.force,
        },
    )
}

fn redo(world: &mut World, params: HistoryRedoParams) -> Outcome {
    steps(
        world,
        Steps {
            redo: true,
            steps: params.steps,
            to: params.to,
            all_sessions: params.all_sessions,
            force: params.force,
        },
    )
}

/// Undoes or redoes a run of entries: every step is checked against the world (as the steps
/// before it will have left it) and every value it writes is read back, before the first step
/// changes anything. A big run goes on over frames, a slice per frame.
fn steps(world: &mut World, asked: Steps) -> Outcome {
    let caller = calling_session(world);
    let Some(journal) = world.get_resource::<Journal>() else {
        return Outcome::Done(Err(BridgeError::NothingToUndo {
            redo: asked.redo,
            others: 0,
        }));
    };
    let (taken, passed) = match select(journal, &caller, &asked) {
        Ok(selected) => selected,
        Err(error) => return Outcome::Done(Err(error)),
    };
    let run: Vec<StepEntry> = taken
        .iter()
        .filter_map(|id| journal.get(*id))
        .filter_map(|entry| {
            Some(StepEntry {
                id: entry.id,
                action: entry.action.clone(),
                summary: entry.summary().to_owned(),
                delta: Arc::clone(entry.change.as_ref().ok()?),
            })
        })
        .collect();
    Outcome::first_frame(
        world,
        StepsJob {
            asked,
            taken,
            passed,
            run,
            stage: StepsStage::Plan,
            index: 0,
            after: None,
            planned: Planned::default(),
            hierarchy: None,
            conflicts: Vec::new(),
            first: None,
            applying: None,
            applied: Applied::default(),
            units: 0,
        },
    )
}

/// One entry of a run, as the job holds it.
struct StepEntry {
    id: u64,
    action: String,
    summary: String,
    delta: Arc<Delta>,
}

/// Where a run of undo or redo steps is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepsStage {
    /// Checking each step against the world as the steps before it leave it.
    Plan,
    /// Checking the hierarchy the steps leave.
    Hierarchy,
    /// Reading back every value the steps write.
    Values,
    /// Applying the steps, in order.
    Apply,
}

/// A run of undo or redo steps in progress.
struct StepsJob {
    asked: Steps,
    taken: Vec<u64>,
    passed: Vec<Value>,
    run: Vec<StepEntry>,
    stage: StepsStage,
    /// The step at hand, and the last entity of it done.
    index: usize,
    after: Option<u64>,
    planned: Planned,
    hierarchy: Option<HierarchyCheck>,
    /// Conflicts found, each with its entry.
    conflicts: Vec<Value>,
    /// The first conflict: (entry, action, what).
    first: Option<(u64, String, String)>,
    applying: Option<Box<Applying>>,
    applied: Applied,
    /// Units of work done (the progress reported).
    units: u64,
}

impl LongJob for StepsJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let result = Slice::within(world, |world, slice| {
            let advanced = self.advance(world, slice);
            self.units += u64::from(slice.units());
            advanced
        });
        match result {
            Ok(true) => Some(Ok(self.finish(world))),
            Ok(false) => {
                // Units of work, not steps: one step over a whole world takes many frames.
                let stage = match self.stage {
                    StepsStage::Plan | StepsStage::Hierarchy | StepsStage::Values => "checking",
                    StepsStage::Apply => "applying",
                };
                progress.report_paced(self.units as f64, None, Some(stage));
                None
            }
            Err(error) => Some(Err(error)),
        }
    }

    fn cancellable(&self) -> bool {
        // Once a step began to change the world, the run finishes.
        self.stage != StepsStage::Apply
            || (self.index == 0
                && self
                    .applying
                    .as_ref()
                    .is_none_or(|applying| !applying.changed_anything()))
    }

    /// What the plan read of the world (for an undo of a clear, every entity's values) and the
    /// step at hand are freed on the game thread a slice per frame; the rest off it.
    fn free(mut self, world: &mut World) {
        std::mem::take(&mut self.planned).free_over_frames(world);
        if let Some(applying) = self.applying.take() {
            applying.free_over_frames(world);
        }
        for step in std::mem::take(&mut self.run) {
            Delta::free_over_frames(step.delta, world);
        }
        retire(self);
    }
}

impl StepsJob {
    /// Goes on while the slice lasts; `true` once every step is applied.
    fn advance(&mut self, world: &mut World, slice: &mut Slice) -> Result<bool, BridgeError> {
        let (expect, target) = self.asked.sides();
        while !slice.is_over() {
            match self.stage {
                StepsStage::Plan => {
                    let Some(step) = self.run.get(self.index) else {
                        self.refuse_conflicts(world)?;
                        let limit = WritePolicy::of(world).limits().max_hierarchy_depth;
                        self.hierarchy = Some(HierarchyCheck::new(limit));
                        self.stage = StepsStage::Hierarchy;
                        continue;
                    };
                    let mut found = Vec::new();
                    let done = self.planned.step_some(
                        world,
                        &step.delta,
                        expect,
                        &mut self.after,
                        slice,
                        &mut found,
                    );
                    for conflict in found {
                        self.first.get_or_insert((
                            step.id,
                            step.action.clone(),
                            conflict.what.clone(),
                        ));
                        if self.conflicts.len() < 64 {
                            let mut row = conflict.json();
                            row["entry"] = json!(step.id);
                            self.conflicts.push(row);
                        }
                    }
                    if done {
                        self.index += 1;
                        self.after = None;
                    }
                }
                StepsStage::Hierarchy => {
                    let Some(check) = self.hierarchy.as_mut() else {
                        self.stage = StepsStage::Values;
                        continue;
                    };
                    let Some(broken) = check.advance(&self.planned, world, slice) else {
                        return Ok(false);
                    };
                    // Forcing overwrites values, never the rules: no loop, no hierarchy past
                    // the bound.
                    if let (Some(problem), Some(step)) = (broken.first(), self.run.last()) {
                        return Err(BridgeError::UndoBreaksHierarchy {
                            redo: self.asked.redo,
                            entry: step.id,
                            action: step.action.clone(),
                            first: problem.what.clone(),
                            conflicts: broken.iter().map(|conflict| conflict.json()).collect(),
                        });
                    }
                    self.hierarchy = None;
                    self.stage = StepsStage::Values;
                    self.index = 0;
                }
                StepsStage::Values => {
                    let Some(step) = self.run.get(self.index) else {
                        self.stage = StepsStage::Apply;
                        self.index = 0;
                        continue;
                    };
                    if world_delta::check_values(
                        world,
                        &step.delta,
                        target,
                        &mut self.after,
                        slice,
                    )? {
                        self.index += 1;
                        self.after = None;
                    }
                }
                StepsStage::Apply => {
                    let Some(step) = self.run.get(self.index) else {
                        return Ok(true);
                    };
                    let applying = self.applying.get_or_insert_with(|| {
                        Box::new(Applying::new(world, Arc::clone(&step.delta), target))
                    });
                    if let Some(done) = applying.advance(world, slice)? {
                        calling_respawned(world, &done.respawned);
                        self.applied.add(done);
                        // What it read of 100,000 entities is freed a slice per frame.
                        if let Some(applying) = self.applying.take() {
                            applying.free_over_frames(world);
                        }
                        self.index += 1;
                    }
                }
            }
        }
        Ok(false)
    }

    /// Refuses the run when a step conflicts, unless forced; nothing has changed yet.
    fn refuse_conflicts(&mut self, world: &World) -> Result<(), BridgeError> {
        let asked = &self.asked;
        if let Some((entry, action, what)) = self.first.clone()
            && !asked.force
        {
            let newer = world
                .get_resource::<Journal>()
                .map(|journal| newer_entries(journal, &self.taken, entry))
                .unwrap_or_default();
            return Err(BridgeError::UndoConflict {
                redo: asked.redo,
                entry,
                action,
                first: what,
                conflicts: std::mem::take(&mut self.conflicts),
                newer,
                forced: asked.forced(),
            });
        }
        Ok(())
    }

    /// The reply, once every step is applied: the entries change state.
    fn finish(&mut self, world: &mut World) -> Value {
        let state = if self.asked.redo {
            EntryState::Done
        } else {
            EntryState::Undone
        };
        if let Some(mut journal) = world.get_resource_mut::<Journal>() {
            for id in &self.taken {
                journal.set_state(*id, state);
            }
        }
        let rows: Vec<Value> = self
            .run
            .iter()
            .map(|step| json!({"id": step.id, "action": step.action, "summary": step.summary}))
            .collect();
        let applied = std::mem::take(&mut self.applied);
        let overridden = if self.asked.force {
            std::mem::take(&mut self.conflicts)
        } else {
            Vec::new()
        };
        json!({
            if self.asked.redo { "redone" } else { "undone" }: rows,
            "passedOver": std::mem::take(&mut self.passed),
            "respawned": applied.respawned_json(),
            "broughtBack": applied.brought_back,
            "despawned": applied.despawned,
            "componentsWritten": applied.components_written,
            "componentsRemoved": applied.components_removed,
            "resourcesWritten": applied.resources_written,
            "resourcesRemoved": applied.resources_removed,
            "notRestored": applied.not_restored_json(),
            "overwritten": overridden,
        })
    }
}

/// Entries newer than `entry` still in the world and not part of the run: who may have changed
/// what conflicts.
fn newer_entries(journal: &Journal, taken: &[u64], entry: u64) -> Vec<Value> {
    journal
        .entries()
        .filter(|newer| {
            newer.id > entry && !taken.contains(&newer.id) && newer.state == EntryState::Done
        })
        .take(8)
        .map(|newer| {
            json!({
                "id": newer.id,
                "session": short_session(&newer.session),
                "action": newer.action,
                "summary": newer.summary(),
            })
        })
        .collect()
}

/// The display form of an entity held by its bits.
fn entity_text(bits: u64) -> String {
    Entity::try_from_bits(bits).map_or_else(|| bits.to_string(), |entity| entity.to_string())
}

fn entity_row(bits: u64, snapshot: &EntitySnapshot) -> Value {
    let mut row = json!({"entity": entity_text(bits), "components": snapshot.json()});
    if !snapshot.unread.is_empty() {
        row["unreadable"] = json!(snapshot.unread);
    }
    if let Some(name) = snapshot.name() {
        row["name"] = json!(name);
    }
    row
}

/// Rows of each kind a difference shows at most (every one is counted): the gateway shows 50
/// unless `detail: "full"`, and more would not fit the largest result anyway.
const ROWS_KEPT: usize = 200;

/// A difference's rows as they are found: every entity counted, the first [`ROWS_KEPT`] of each
/// kind kept as rows.
#[derive(Debug, Default)]
struct Rows {
    added: Vec<Value>,
    removed: Vec<Value>,
    changed: Vec<Value>,
    counts: [usize; 3],
}

impl Rows {
    /// Counts one difference, and keeps its row while there is room.
    fn note(&mut self, found: Difference) {
        let (kind, rows) = match &found {
            Difference::Added { .. } => (0, &mut self.added),
            Difference::Removed { .. } => (1, &mut self.removed),
            Difference::Changed { .. } => (2, &mut self.changed),
        };
        self.counts[kind] += 1;
        if rows.len() >= ROWS_KEPT {
            return;
        }
        rows.push(match &found {
            Difference::Added { bits, now } => entity_row(*bits, now),
            Difference::Removed { bits, then } => entity_row(*bits, then),
            Difference::Changed { bits, then, now } => entity_changes(*bits, then, now),
        });
    }

    /// The reply of `history.diff`, shaped like every result (the gateway clips long lists
    /// unless `detail: "full"`).
    fn reply(
        self,
        from_name: &str,
        to_name: &str,
        resources_from: &BTreeMap<String, Raw>,
        resources_to: &BTreeMap<String, Raw>,
    ) -> Value {
        let MapChanges {
            added: resources_added,
            removed: resources_removed,
            changed: resources_changed,
        } = map_changes(resources_from, resources_to);
        let [added, removed, changed] = self.counts;
        let counts = json!({
            "entitiesAdded": added,
            "entitiesRemoved": removed,
            "entitiesChanged": changed,
            "resourcesAdded": resources_added.len(),
            "resourcesRemoved": resources_removed.len(),
            "resourcesChanged": resources_changed.len(),
        });
        let same = added + removed + changed == 0
            && resources_added.is_empty()
            && resources_removed.is_empty()
            && resources_changed.is_empty();
        let mut reply = json!({
            "from": from_name,
            "to": to_name,
            "same": same,
            "counts": counts,
            "entitiesAdded": self.added,
            "entitiesRemoved": self.removed,
            "entitiesChanged": self.changed,
            "resourcesAdded": resources_added,
            "resourcesRemoved": resources_removed,
            "resourcesChanged": resources_changed
                .into_iter()
                .map(|(resource, before, after)| json!({"resource": resource, "before": before, "after": after}))
                .collect::<Vec<_>>(),
        });
        if added.max(removed).max(changed) > ROWS_KEPT {
            reply["rowsKept"] = json!(format!(
                "each entity list holds the first {ROWS_KEPT} entities found; counts has them all"
            ));
        }
        reply
    }
}

fn entity_changes(bits: u64, before: &EntitySnapshot, after: &EntitySnapshot) -> Value {
    let MapChanges {
        added,
        removed,
        changed,
    } = map_changes(&before.values(), &after.values());
    let mut row = json!({
        "entity": entity_text(bits),
        "added": added,
        "removed": removed,
        "changed": changed
            .into_iter()
            .map(|(component, before, after)| json!({"component": component, "before": before, "after": after}))
            .collect::<Vec<_>>(),
    });
    // Components whose values are not held still count: one missing is a difference.
    let unread_added: Vec<&String> = after.unread.difference(&before.unread).collect();
    let unread_removed: Vec<&String> = before.unread.difference(&after.unread).collect();
    if !unread_added.is_empty() {
        row["addedUnreadable"] = json!(unread_added);
    }
    if !unread_removed.is_empty() {
        row["removedUnreadable"] = json!(unread_removed);
    }
    if let Some(name) = after.name().or_else(|| before.name()) {
        row["name"] = json!(name);
    }
    row
}

/// What differs between two maps of values by type path, grouped for a diff's reply.
struct MapChanges {
    added: Map<String, Value>,
    removed: Map<String, Value>,
    /// (type path, before, after).
    changed: Vec<(String, Value, Value)>,
}

/// Keys only in `after`, keys only in `before`, and keys in both whose values differ.
fn map_changes(before: &BTreeMap<String, Raw>, after: &BTreeMap<String, Raw>) -> MapChanges {
    let mut grouped = MapChanges {
        added: Map::new(),
        removed: Map::new(),
        changed: Vec::new(),
    };
    for (key, change) in value_changes(before, after) {
        match (change.before, change.after) {
            (None, Some(value)) => {
                grouped.added.insert(key, value.value());
            }
            (Some(value), None) => {
                grouped.removed.insert(key, value.value());
            }
            (Some(old), Some(new)) => grouped.changed.push((key, old.value(), new.value())),
            (None, None) => {}
        }
    }
    grouped
}
