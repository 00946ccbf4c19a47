//! The journal: every change a call makes to the world through the bridge, held as a [`Delta`]
//! so `history.undo` and `history.redo` can take it back and make it again.
//!
//! It attaches to the executor as a [`CallHook`] ([`JournalHook`]). Before a call runs,
//! [`Watch::before`] holds what the call may change, as its action declares it beside its handler
//! (its [`Footprint`]: the entity it names and its descendants, a resource, game time, or the
//! whole world); after it succeeds, [`Watch::after`] reads them again (with the entities it made)
//! and keeps what differs. A change the bridge cannot take back (input, events, assets, state
//! transitions, files, the passage of time) is listed as not undoable, with the reason its action
//! gives. The journal is bounded by entries and bytes; old entries go first and the listing says
//! how many.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::prelude::{Entity, Name, Resource, World};
use bevy::reflect::TypeRegistry;
use mcp_vocabulary::catalog::Effect;
use serde_json::Value;

use crate::history::holding::HoldingArea;
use crate::history::snapshot::read_raw;
use crate::history::world_delta::{
    self, Change, Delta, EntityChange, EntitySnapshot, Raw, Snapshot, Tally, TimeState,
    component_raw, resource_raw, tracked, value_changes,
};
use crate::reflect::hierarchy;
use crate::reflect::names;
use crate::reflect::world::{frame, is_present, plain_entity_count};
use crate::runtime::action::{Focus, Footprint, Parts};
use crate::runtime::hooks::{AfterCall, CallHook, CallStart};

/// Bounds on the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalLimits {
    /// Most entries held; the oldest go first. Default 256; 0 turns journaling off (nothing
    /// is read around calls, and nothing can be undone).
    pub max_entries: usize,
    /// Most serialized bytes of values held over all entries (about one and a half times that
    /// in memory). Default 64 MiB.
    pub max_bytes: usize,
    /// Most entities the bridge removed that it holds out of sight so undo and restore bring
    /// them back whole; past it the oldest are despawned for real (and only their reflected
    /// values can come back). Default 100,000.
    pub max_held_entities: usize,
    /// Largest world (plain entities) the journal reads whole before and after a call that may
    /// change anything (a game action under `GameUndo::World`): reading a bigger one would hold
    /// the game's frame, so such a call is listed as not undoable instead. Default 500: `mcp-bench`
    /// P8 measured 4 ms for the two reads of a 1,000-entity world.
    pub max_world_entities: usize,
}

impl Default for JournalLimits {
    fn default() -> Self {
        JournalLimits {
            max_entries: 256,
            max_bytes: 64 * 1024 * 1024,
            max_held_entities: 100_000,
            max_world_entities: 500,
        }
    }
}

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryState {
    /// Its change is in the world.
    Done,
    /// It was undone; `redo` makes it again.
    Undone,
    /// It was undone, then its session made a newer change: it can no longer be redone.
    Superseded,
    /// Rendering failed right after it, and the bridge took it back so the app keeps running
    /// (see [`crate::history::render_backstop`]); it cannot be redone.
    #[cfg_attr(not(feature = "render"), allow(dead_code))]
    // Only the render backstop makes it.
    RolledBack,
}

impl EntryState {
    /// As the listing names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EntryState::Done => "done",
            EntryState::Undone => "undone",
            EntryState::Superseded => "superseded",
            EntryState::RolledBack => "rolledBack",
        }
    }
}

/// One call that changed (or may have changed) the world.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its number, counting from 1 since the app started.
    pub id: u64,
    /// The session that made the call.
    pub session: String,
    /// `tool.action`.
    pub action: String,
    /// The frame it ran in.
    pub frame: u64,
    /// When it ran.
    pub at: Instant,
    /// What changed, or why it cannot be taken back (shared: an undo that spans frames holds
    /// the deltas it applies).
    pub change: Result<Arc<Delta>, String>,
    /// What the change holds, as serialized bytes.
    pub bytes: usize,
    /// Where it stands.
    pub state: EntryState,
    /// A short sentence saying what it changed (made once: a change can hold the whole world).
    summary: String,
}

impl Entry {
    /// A short sentence saying what it changed.
    pub(crate) fn summary(&self) -> &str {
        &self.summary
    }
}

/// The journal of changes, oldest first.
#[derive(Resource, Debug)]
pub(crate) struct Journal {
    limits: JournalLimits,
    entries: VecDeque<Entry>,
    next_id: u64,
    dropped: u64,
    bytes: usize,
}

impl Journal {
    /// An empty journal within `limits`.
    pub(crate) fn new(limits: JournalLimits) -> Journal {
        Journal {
            limits,
            entries: VecDeque::new(),
            next_id: 1,
            dropped: 0,
            bytes: 0,
        }
    }

    /// Its bounds.
    pub(crate) fn limits(&self) -> JournalLimits {
        self.limits
    }

    /// The entries held, oldest first.
    pub(crate) fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.entries.iter()
    }

    /// How many entries were dropped to stay within the limits.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What the held entries take, as JSON bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The entry numbered `id`.
    pub(crate) fn get(&self, id: u64) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.id == id)
    }

    /// Sets where entry `id` stands.
    pub(crate) fn set_state(&mut self, id: u64, state: EntryState) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.id == id) {
            entry.state = state;
        }
    }

    /// The entries `session` has undone now: a change it starts now gives up redoing them.
    fn undone_by(&self, session: &str) -> Vec<u64> {
        self.entries
            .iter()
            .filter(|entry| entry.session == session && entry.state == EntryState::Undone)
            .map(|entry| entry.id)
            .collect()
    }

    fn push(
        &mut self,
        session: &str,
        action: String,
        frame: u64,
        change: Result<Delta, String>,
        tally: Option<Tally>,
        supersedes: &[u64],
    ) -> Vec<Arc<Delta>> {
        let mut let_go = Vec::new();
        // A session that changes the world after undoing gives up redoing what it undid; a call
        // it started before that undo (a hold that ends later) does not.
        for entry in &mut self.entries {
            if supersedes.contains(&entry.id) && entry.state == EntryState::Undone {
                entry.state = EntryState::Superseded;
            }
        }
        let bytes = match (&change, &tally) {
            (Ok(delta), Some(tally)) => tally.bytes_of(delta),
            (Ok(delta), None) => delta.bytes(),
            (Err(_), _) => 0,
        };
        let change = match change {
            Ok(delta) if bytes > self.limits.max_bytes => {
                let_go.push(Arc::new(delta));
                Err(format!(
                    "the change takes {bytes} bytes; the journal holds at most {}",
                    self.limits.max_bytes
                ))
            }
            change => change,
        };
        let bytes = change.as_ref().map_or(0, |_| bytes);
        let summary = match (&change, &tally) {
            (Ok(delta), Some(tally)) => tally.summary(delta),
            (Ok(delta), None) => delta.summary(),
            (Err(_), _) => "not held".to_owned(),
        };
        let change = change.map(Arc::new);
        self.entries.push_back(Entry {
            summary,
            id: self.next_id,
            session: session.to_owned(),
            action,
            frame,
            at: Instant::now(),
            change,
            bytes,
            state: EntryState::Done,
        });
        self.next_id += 1;
        self.bytes += bytes;
        while self.entries.len() > self.limits.max_entries || self.bytes > self.limits.max_bytes {
            let Some(oldest) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= oldest.bytes;
            self.dropped += 1;
            if let Ok(delta) = oldest.change {
                let_go.push(delta);
            }
        }
        let_go
    }
}

/// An entity's values held around a call.
#[derive(Debug, Clone)]
struct Held {
    name: Option<String>,
    /// The named components' values (a focused call).
    values: BTreeMap<String, Raw>,
    /// The whole entity (a call that may change anything of it).
    whole: Option<EntitySnapshot>,
    /// Named components whose values cannot be held.
    unread: BTreeSet<String>,
    /// Its archetype, to see what a focused call added or removed besides what it names
    /// (archetypes live as long as the world, so the ids can be read after the call).
    archetype: Option<ArchetypeId>,
}

/// The values a call may touch, held before it runs.
#[derive(Debug)]
struct Before {
    entities: Vec<(Entity, Focus, Held)>,
    resources: BTreeMap<String, Option<Raw>>,
    time: Option<Option<TimeState>>,
    /// The reply's keys that name the entities the call makes.
    made: &'static [&'static str],
}

/// What the journal holds of one call while it runs.
#[derive(Debug)]
pub(crate) struct Watch {
    /// The calling session.
    session: String,
    /// The entries the session had undone when the call started.
    undone: Vec<u64>,
    watching: Watching,
}

#[derive(Debug)]
enum Watching {
    /// A read, or a call that changes nothing of the world: not journaled.
    Nothing,
    /// A change that cannot be taken back, and why.
    NotUndoable {
        /// `tool.action`.
        action: String,
        /// Why.
        reason: String,
    },
    /// A change of parts of the world, held before it runs.
    Parts {
        /// `tool.action`.
        action: String,
        /// The values it may touch.
        before: Box<Before>,
    },
    /// A change the call reports itself when it finishes.
    Reported {
        /// `tool.action`.
        action: String,
    },
    /// A change of anything in the world, held whole before it runs.
    World {
        /// `tool.action`.
        action: String,
        /// The world before.
        before: Box<Snapshot>,
    },
}

const TOO_LARGE: &str = "the world is larger than the journal may hold";

impl Watch {
    /// Holds what `call` may change, before it runs, as its action declares it.
    pub(crate) fn before(world: &World, call: &CallStart<'_>) -> Watch {
        let action = call.name();
        let watching = match call.footprint(world) {
            Footprint::Nothing => Watching::Nothing,
            Footprint::NotUndoable(reason) => Watching::NotUndoable {
                action,
                reason: reason.into_owned(),
            },
            Footprint::Reported => Watching::Reported { action },
            Footprint::World => {
                let limit = limits(world).max_world_entities;
                let entities = plain_entity_count(world);
                if entities > limit {
                    Watching::NotUndoable {
                        action,
                        reason: format!(
                            "it may change anything, and the world has {entities} entities: the journal reads the whole world before and after such a call only up to {limit} entities (JournalLimits::max_world_entities), since reading more would hold the game's frame"
                        ),
                    }
                } else {
                    match world_snapshot(world) {
                        Ok(before) => Watching::World {
                            action,
                            before: Box::new(before),
                        },
                        Err(_) => Watching::NotUndoable {
                            action,
                            reason: TOO_LARGE.to_owned(),
                        },
                    }
                }
            }
            Footprint::Parts(parts) => {
                let before = hold(world, parts);
                // A component the call names whose value cannot be held (it holds an asset
                // handle, say) makes the change one that cannot be taken back: listed as such,
                // never left out of the journal.
                let unread = before.entities.iter().find_map(|(entity, focus, held)| {
                    let path = held.unread.first()?;
                    matches!(focus, Focus::Components(_)).then(|| (*entity, path.clone()))
                });
                match unread {
                    Some((entity, path)) => Watching::NotUndoable {
                        action,
                        reason: format!(
                            "the value of {path} on {entity} cannot be held as JSON (it holds an asset handle or another value without a serialized form)"
                        ),
                    },
                    None => Watching::Parts {
                        action,
                        before: Box::new(before),
                    },
                }
            }
        };
        Watch {
            session: call.session.to_owned(),
            undone: undone_by(world, call.session),
            watching,
        }
    }

    /// A call whose values could not be read (reading them panicked): listed as not undoable.
    fn unreadable(world: &World, call: &CallStart<'_>) -> Watch {
        Watch {
            session: call.session.to_owned(),
            undone: undone_by(world, call.session),
            watching: Watching::NotUndoable {
                action: call.name(),
                reason: "its values could not be read before it ran".to_owned(),
            },
        }
    }

    /// Keeps what the call changed, once it succeeded with `reply` (`None` for a call that goes
    /// on over frames).
    pub(crate) fn after(self, world: &mut World, reply: Option<&Value>) {
        let (action, change, tally) = match self.watching {
            Watching::Nothing => return,
            Watching::NotUndoable { action, reason } => (action, Err(reason), None),
            Watching::Reported { action } => {
                let Some((change, tally)) = world
                    .get_resource_mut::<ReportedChange>()
                    .and_then(|mut reported| reported.0.take())
                else {
                    return;
                };
                (action, change, tally)
            }
            Watching::World { action, before } => {
                // A call may grow the world past what can be read in a frame (a load of a big
                // file): then it is not undoable, rather than read whole now.
                let limit = limits(world).max_world_entities;
                let entities = plain_entity_count(world);
                let change = if entities > limit {
                    Err(format!(
                        "it may change anything, and it left the world with {entities} entities: the journal reads the whole world after such a call only up to {limit} entities (JournalLimits::max_world_entities), since reading more would hold the game's frame"
                    ))
                } else {
                    world_snapshot(world)
                        .map(|after| Delta::between(&before, &after))
                        .map_err(|_| TOO_LARGE.to_owned())
                };
                (action, change, None)
            }
            Watching::Parts { action, before } => (action, held_delta(world, *before, reply), None),
        };
        if matches!(&change, Ok(delta) if delta.is_empty()) {
            return;
        }
        let frame = frame(world);
        // The hook runs only while the journal exists (the history plugin inserts it).
        let mut dropped_some = false;
        let mut let_go = Vec::new();
        if let Some(mut journal) = world.get_resource_mut::<Journal>() {
            let dropped = journal.dropped();
            let_go = journal.push(&self.session, action, frame, change, tally, &self.undone);
            dropped_some = journal.dropped() > dropped;
        }
        // What the journal let go of is freed a slice per frame (one entry of a whole-world
        // change, dropped at once, took 13 ms).
        for delta in let_go {
            Delta::free_over_frames(delta, world);
        }
        // An entry dropped to make room may have been all that named a held entity.
        if dropped_some {
            HoldingArea::mark_dirty(world);
        }
    }
}

fn undone_by(world: &World, session: &str) -> Vec<u64> {
    world
        .get_resource::<Journal>()
        .map(|journal| journal.undone_by(session))
        .unwrap_or_default()
}

/// The journal's place on the executor: every call is watched before it runs and kept once it
/// succeeded.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JournalHook;

impl CallHook for JournalHook {
    fn before(&self, world: &World, call: &CallStart<'_>) -> Option<Box<dyn AfterCall>> {
        // Reads change nothing, and a journal of 0 entries is off: nothing is read for them.
        if call.action.effect == Effect::Read
            || world
                .get_resource::<Journal>()
                .is_none_or(|journal| journal.limits.max_entries == 0)
        {
            return None;
        }
        // Journaling never takes a call down: values it cannot read make the call not undoable.
        let watch = catch_unwind(AssertUnwindSafe(|| Watch::before(world, call)))
            .unwrap_or_else(|_| Watch::unreadable(world, call));
        match watch.watching {
            Watching::Nothing => None,
            _ => Some(Box::new(watch)),
        }
    }
}

impl AfterCall for Watch {
    fn succeeded(self: Box<Self>, world: &mut World, reply: &Value) {
        self.after(world, Some(reply));
    }
}

/// The whole world, within the journal's byte bound (a call that changes anything is held whole
/// before and after it runs).
fn world_snapshot(world: &World) -> Result<Snapshot, crate::error::BridgeError> {
    world_delta::snapshot(world, limits(world).max_bytes)
}

/// The journal's bounds (the defaults without a journal).
fn limits(world: &World) -> JournalLimits {
    world
        .get_resource::<Journal>()
        .map_or_else(JournalLimits::default, Journal::limits)
}

/// The most bytes a change the journal keeps may hold, when the journal is on (`None`: the
/// history is off, so a call that reports its change need not read what it changes).
pub(crate) fn journal_bytes(world: &World) -> Option<usize> {
    world
        .get_resource::<Journal>()
        .filter(|journal| journal.limits.max_entries > 0)
        .map(|journal| journal.limits.max_bytes)
}

/// What a call that works over the whole world changed, reported by the call itself when it
/// finishes (its footprint is [`Footprint::Reported`]); the journal takes it right after.
#[derive(Resource, Debug, Default)]
pub(crate) struct ReportedChange(Option<(Result<Delta, String>, Option<Tally>)>);

/// Reports what the finishing call changed (an empty delta: nothing), or why it cannot be taken
/// back, with the tally of its entities when the call counted them as it went (a big change is
/// then not walked again in one frame); read by the journal once the call's answer is ready.
pub(crate) fn report_change(
    world: &mut World,
    change: Result<Delta, String>,
    tally: Option<Tally>,
) {
    world.get_resource_or_init::<ReportedChange>().0 = Some((change, tally));
}

fn hold(world: &World, parts: Parts) -> Before {
    let registry = names::registry(world);
    let registry = registry.read();
    let entities = parts
        .entities
        .into_iter()
        .map(|(entity, focus)| {
            let held = held_values(world, entity, &focus, &registry);
            (entity, focus, held)
        })
        .collect();
    let resources = parts
        .resources
        .into_iter()
        .map(|type_path| {
            let value = resource_value(world, &type_path, &registry);
            (type_path, value)
        })
        .collect();
    Before {
        entities,
        resources,
        time: parts.time.then(|| TimeState::of(world)),
        made: parts.made,
    }
}

fn resource_value(world: &World, type_path: &str, registry: &TypeRegistry) -> Option<Raw> {
    let registration = registry.get_with_type_path(type_path)?;
    resource_raw(world, registration, registry)
}

fn archetype_of(world: &World, entity: Entity) -> Option<ArchetypeId> {
    world
        .get_entity(entity)
        .ok()
        .map(|entity_ref| entity_ref.archetype().id())
}

/// The component ids of `from` that `to` lacks.
fn missing_from(
    world: &World,
    from: Option<ArchetypeId>,
    to: Option<ArchetypeId>,
) -> Vec<ComponentId> {
    let components = |id: Option<ArchetypeId>| {
        id.and_then(|id| world.archetypes().get(id))
            .map(|archetype| archetype.components().to_vec())
            .unwrap_or_default()
    };
    let to = components(to);
    components(from)
        .into_iter()
        .filter(|id| !to.contains(id))
        .collect()
}

/// The values of `entity` a focus covers (all tracked ones, or the named ones).
fn held_values(world: &World, entity: Entity, focus: &Focus, registry: &TypeRegistry) -> Held {
    let name = world
        .get::<Name>(entity)
        .map(|name| name.as_str().to_owned());
    let mut values = BTreeMap::new();
    let mut unread = BTreeSet::new();
    let whole = match focus {
        Focus::Whole => Some(world_delta::entity_snapshot(world, entity, registry)),
        Focus::Components(paths) => {
            for path in paths {
                let Some(registration) = registry.get_with_type_path(path) else {
                    continue;
                };
                match read_raw(world, entity, registration, registry) {
                    Some(Ok(value)) => {
                        values.insert(path.clone(), value);
                    }
                    Some(Err(_)) => {
                        unread.insert(path.clone());
                    }
                    None => {}
                }
            }
            None
        }
    };
    Held {
        name,
        values,
        whole,
        unread,
        archetype: archetype_of(world, entity),
    }
}

/// The tracked type path of a component id, when it is reflected.
fn tracked_path(world: &World, id: ComponentId, registry: &TypeRegistry) -> Option<String> {
    let type_id = world.components().get_info(id)?.type_id()?;
    let path = registry.get(type_id)?.type_info().type_path();
    tracked(path).then(|| path.to_owned())
}

/// What differs between the values held before and the same values now, with the entities the
/// call made (from its reply).
fn held_delta(world: &World, before: Before, reply: Option<&Value>) -> Result<Delta, String> {
    let registry = names::registry(world);
    let registry = registry.read();
    let mut delta = Delta::default();
    for (entity, focus, held) in before.entities {
        let exists = is_present(world, entity);
        let change = match (&focus, exists) {
            (Focus::Whole, true) => {
                let after = world_delta::entity_snapshot(world, entity, &registry);
                EntityChange::between(held.whole.as_ref(), Some(&after))
            }
            (Focus::Whole, false) => EntityChange::between(held.whole.as_ref(), None),
            (Focus::Components(_), false) => {
                return Err(format!(
                    "it despawned {entity}, whose full contents were not held"
                ));
            }
            (Focus::Components(_), true) => {
                let mut after = held_values(world, entity, &focus, &registry);
                let reshaped = after.archetype != held.archetype;
                let added = if reshaped {
                    missing_from(world, after.archetype, held.archetype)
                } else {
                    Vec::new()
                };
                let removed = if reshaped {
                    missing_from(world, held.archetype, after.archetype)
                } else {
                    Vec::new()
                };
                for id in &added {
                    let Some(path) = tracked_path(world, *id, &registry) else {
                        continue;
                    };
                    if let Some(value) =
                        registry.get_with_type_path(&path).and_then(|registration| {
                            component_raw(world, entity, registration, &registry)
                        })
                    {
                        after.values.insert(path, value);
                    }
                }
                for id in &removed {
                    let Some(path) = tracked_path(world, *id, &registry) else {
                        continue;
                    };
                    if !held.values.contains_key(&path) {
                        return Err(format!(
                            "it also removed {path} from {entity}, whose value was not held"
                        ));
                    }
                }
                let changes = value_changes(&held.values, &after.values);
                (!changes.is_empty()).then(|| EntityChange::Components {
                    name: after.name.or(held.name),
                    changes,
                })
            }
        };
        if let Some(change) = change {
            delta.entities.insert(entity.to_bits(), change);
        }
    }
    for entity in made_entities(world, before.made, reply) {
        let after = world_delta::entity_snapshot(world, entity, &registry);
        delta.entities.insert(
            entity.to_bits(),
            EntityChange::Whole(Change {
                before: None,
                after: Some(after),
            }),
        );
    }
    for (type_path, was) in before.resources {
        let is = resource_value(world, &type_path, &registry);
        if was != is {
            delta.resources.insert(
                type_path,
                Change {
                    before: was,
                    after: is,
                },
            );
        }
    }
    if let Some(was) = before.time {
        let is = TimeState::of(world);
        if was != is {
            delta.time = Some(Change {
                before: was,
                after: is,
            });
        }
    }
    Ok(delta)
}

/// The entities a call made, named in its reply under `keys` (an entity row, or an array of
/// them), with their descendants.
fn made_entities(world: &World, keys: &[&str], reply: Option<&Value>) -> Vec<Entity> {
    let Some(reply) = reply else {
        return Vec::new();
    };
    let bits_of = |row: &Value| row["bits"].as_u64().and_then(Entity::try_from_bits);
    let rows: Vec<&Value> = keys
        .iter()
        .flat_map(|key| match &reply[*key] {
            Value::Array(rows) => rows.iter().collect::<Vec<_>>(),
            row => vec![row],
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut found: Vec<Entity> = Vec::new();
    for entity in rows.into_iter().filter_map(bits_of) {
        if world.get_entity(entity).is_err() {
            continue;
        }
        let tree = std::iter::once(entity).chain(hierarchy::descendants(world, entity).entities);
        found.extend(tree.filter(|entity| seen.insert(*entity)));
    }
    found
}
