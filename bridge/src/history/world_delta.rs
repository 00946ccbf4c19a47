//! What differs between two states of the world, and making the world match one side of a
//! difference.
//!
//! `history` builds on it: a checkpoint is a [`Snapshot`], `diff` compares two, and `restore`, the
//! journal's `undo` and `redo` all apply a [`Delta`] with [`Applying`], under the rules every
//! other write obeys. Values are held as text ([`Raw`], [`EntitySnapshot`]); see
//! [`crate::history::snapshot`].

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{ChildOf, Entity, Resource, Time, Virtual, World};
use bevy::reflect::{Reflect, TypeRegistration, TypeRegistry};
use serde_json::{Map, Value, json};

use crate::error::BridgeError;
use crate::history::holding;
pub(crate) use crate::history::snapshot::{
    CHILD_OF, EntitySnapshot, Raw, Snapshot, component_raw, entity_snapshot, resource_raw,
    snapshot, tracked, unheld_resource_reason,
};
use crate::reflect::handles::HandleReader;
use crate::reflect::hierarchy;
use crate::reflect::models;
use crate::reflect::names;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::reflect::world;
use crate::reflect::world::is_present;
use crate::reflect::world::{resource_entity, resource_slot};
use crate::runtime::retire::FreedOverFrames;
use crate::runtime::slices::Slice;

/// Resources never written back: a game state changes only through a transition.
const STATE_PREFIX: &str = "bevy_state::";
/// How the reason of a type the write policy protects begins.
const PROTECTED: &str = "protected";
/// How the reason of a reflected but unreadable component of a respawned entity begins (Bevy
/// may add it back as a required component; then it is not listed).
const LOST_ON_RESPAWN: &str = "not brought back";

/// Game time as `control_app` sets it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimeState {
    /// Whether virtual time is paused.
    pub paused: bool,
    /// Its speed relative to real time.
    pub speed: f64,
}

impl TimeState {
    /// Game time now, when the app has virtual time.
    pub(crate) fn of(world: &World) -> Option<TimeState> {
        world.get_resource::<Time<Virtual>>().map(|time| TimeState {
            paused: time.is_paused(),
            speed: time.relative_speed_f64(),
        })
    }

    fn json(&self) -> Value {
        json!({"paused": self.paused, "speed": self.speed})
    }
}

/// A value on each side of a change; `None` where it did not exist.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change<T> {
    /// Before the change.
    pub before: Option<T>,
    /// After it.
    pub after: Option<T>,
}

impl<T> Change<T> {
    /// The value on one side.
    pub(crate) fn side(&self, side: Side) -> Option<&T> {
        match side {
            Side::Before => self.before.as_ref(),
            Side::After => self.after.as_ref(),
        }
    }
}

/// One side of a [`Delta`]: undo makes the world match `Before`, redo `After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Before the change.
    Before,
    /// After it.
    After,
}

impl Side {
    /// The other side.
    pub(crate) fn other(self) -> Side {
        match self {
            Side::Before => Side::After,
            Side::After => Side::Before,
        }
    }
}

/// How one entity differs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EntityChange {
    /// It exists on one side only: all it holds there.
    Whole(Change<EntitySnapshot>),
    /// It exists on both sides: the components that differ.
    Components {
        /// Its `Name`, for people reading it.
        name: Option<String>,
        /// Type path to change.
        changes: BTreeMap<String, Change<Raw>>,
    },
}

impl EntityChange {
    /// How an entity differs between two snapshots of it (`None` where it did not exist).
    pub(crate) fn between(
        before: Option<&EntitySnapshot>,
        after: Option<&EntitySnapshot>,
    ) -> Option<EntityChange> {
        match (before, after) {
            (None, None) => None,
            (Some(before), Some(after)) if before.same_values(after) => None,
            (Some(before), Some(after)) => {
                let changes = value_changes(&before.values(), &after.values());
                (!changes.is_empty()).then(|| EntityChange::Components {
                    name: after.name().or_else(|| before.name()),
                    changes,
                })
            }
            (before, after) => Some(EntityChange::Whole(Change {
                before: before.cloned(),
                after: after.cloned(),
            })),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            EntityChange::Whole(change) => {
                change.before.as_ref().map_or(0, EntitySnapshot::bytes)
                    + change.after.as_ref().map_or(0, EntitySnapshot::bytes)
            }
            EntityChange::Components { changes, .. } => changes.values().map(change_bytes).sum(),
        }
    }
}

fn change_bytes(change: &Change<Raw>) -> usize {
    change.before.as_ref().map_or(0, Raw::bytes) + change.after.as_ref().map_or(0, Raw::bytes)
}

/// What differs between two states of (part of) the world, keyed by entity bits and type paths.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Delta {
    /// By entity bits, as they were when the delta was made.
    pub entities: BTreeMap<u64, EntityChange>,
    /// Type path to change.
    pub resources: BTreeMap<String, Change<Raw>>,
    /// Game time, when it changed.
    pub time: Option<Change<TimeState>>,
    /// The game's own resources one side or the other could not hold: applying the delta leaves
    /// them as they are and names them in `not_restored`.
    pub unheld_resources: BTreeSet<String>,
}

impl Delta {
    /// Frees a delta no one else holds on the game thread over the next frames (see
    /// [`FreedOverFrames`]); one still shared is only let go of.
    pub(crate) fn free_over_frames(delta: Arc<Delta>, world: &mut World) {
        if let Ok(delta) = Arc::try_unwrap(delta) {
            FreedOverFrames::hand_over_items(world, delta.entities);
        }
    }
}

/// Keys only in `after`, keys only in `before`, and keys in both whose values differ.
pub(crate) fn value_changes<V: PartialEq + Clone>(
    before: &BTreeMap<String, V>,
    after: &BTreeMap<String, V>,
) -> BTreeMap<String, Change<V>> {
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter_map(|key| {
            let change = Change {
                before: before.get(key).cloned(),
                after: after.get(key).cloned(),
            };
            (change.before != change.after).then(|| (key.clone(), change))
        })
        .collect()
}

/// What differs in the resources of two snapshots.
pub(crate) fn resource_changes(
    before: &BTreeMap<String, Raw>,
    after: &BTreeMap<String, Raw>,
) -> BTreeMap<String, Change<Raw>> {
    value_changes(before, after)
}

/// Entities of one kind a summary names: how many, and the first.
#[derive(Debug, Default)]
struct Named {
    count: usize,
    first: Option<String>,
}

impl Named {
    fn add(&mut self, label: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(label());
        }
    }

    fn sentence(&self, verb: &str) -> Option<String> {
        let first = self.first.as_ref()?;
        Some(match self.count {
            1 => format!("{verb} {first}"),
            count => format!("{verb} {first} and {} more", count - 1),
        })
    }
}

impl Delta {
    /// What differs from `before` to `after`.
    pub(crate) fn between(before: &Snapshot, after: &Snapshot) -> Delta {
        let mut entities = BTreeMap::new();
        let keys: BTreeSet<&u64> = before
            .entities
            .keys()
            .chain(after.entities.keys())
            .collect();
        for bits in keys {
            let change = EntityChange::between(before.entities.get(bits), after.entities.get(bits));
            if let Some(change) = change {
                entities.insert(*bits, change);
            }
        }
        Delta {
            entities,
            resources: resource_changes(&before.resources, &after.resources),
            time: None,
            unheld_resources: before
                .unheld_resources
                .union(&after.unheld_resources)
                .cloned()
                .collect(),
        }
    }

    /// Whether nothing differs.
    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty() && self.resources.is_empty() && self.time.is_none()
    }

    /// What it holds, as serialized bytes.
    pub(crate) fn bytes(&self) -> usize {
        let entities: usize = self.entities.values().map(EntityChange::bytes).sum();
        entities + self.resources.values().map(change_bytes).sum::<usize>()
    }

    /// A short sentence saying what changed, for a journal listing: counts, and the first entity
    /// of each kind by name (only those are read, however many there are).
    pub(crate) fn summary(&self) -> String {
        let mut tally = Tally::default();
        for (bits, change) in &self.entities {
            tally.add(*bits, change);
        }
        tally.summary(self)
    }
}

/// What a delta's entities hold and the words that summarize them, counted as its entities are
/// added: a job that builds a delta of 100,000 entities over frames counts them as it goes,
/// instead of walking them all in the frame it hands the delta to the journal.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Serialized bytes of the entities' values.
    pub bytes: usize,
    spawned: Named,
    despawned: Named,
    changed: Named,
}

impl Tally {
    /// Counts one entity's change.
    pub(crate) fn add(&mut self, bits: u64, change: &EntityChange) {
        let label = |name: Option<String>| {
            let entity = Entity::try_from_bits(bits)
                .map_or_else(|| bits.to_string(), |entity| entity.to_string());
            match name {
                Some(name) => format!("{name} ({entity})"),
                None => entity,
            }
        };
        self.bytes += change.bytes();
        match change {
            EntityChange::Whole(Change {
                before: None,
                after: Some(after),
            }) => self.spawned.add(|| label(after.name())),
            EntityChange::Whole(Change {
                before: Some(before),
                ..
            }) => self.despawned.add(|| label(before.name())),
            EntityChange::Whole(_) => {}
            EntityChange::Components { name, changes } => self.changed.add(|| {
                format!(
                    "{}: {}",
                    label(name.clone()),
                    changes
                        .keys()
                        .map(|path| short(path))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        }
    }

    /// The bytes of `delta`, whose entities this tally counted.
    pub(crate) fn bytes_of(&self, delta: &Delta) -> usize {
        self.bytes + delta.resources.values().map(change_bytes).sum::<usize>()
    }

    /// The summary of `delta`, whose entities this tally counted.
    pub(crate) fn summary(&self, delta: &Delta) -> String {
        let mut parts: Vec<String> = [
            self.spawned.sentence("spawned"),
            self.despawned.sentence("despawned"),
            self.changed.sentence("changed"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !delta.resources.is_empty() {
            let names: Vec<&str> = delta.resources.keys().map(|path| short(path)).collect();
            parts.push(format!("resources {}", names.join(", ")));
        }
        if let Some(Change {
            before: Some(before),
            after: Some(after),
        }) = &delta.time
        {
            if before.paused != after.paused {
                parts.push(
                    if after.paused {
                        "paused game time"
                    } else {
                        "resumed game time"
                    }
                    .to_owned(),
                );
            }
            if before.speed != after.speed {
                parts.push(format!("game speed {} -> {}", before.speed, after.speed));
            }
        }
        if parts.is_empty() {
            "no change".to_owned()
        } else {
            parts.join("; ")
        }
    }
}

/// The last segment of a type path, for people.
fn short(type_path: &str) -> &str {
    let base = type_path.split('<').next().unwrap_or(type_path);
    base.rsplit("::").next().unwrap_or(base)
}

/// Ids of entities that came back after a despawn (by `restore`, `undo` or `redo`): a
/// despawned entity returns under a new id, and every held difference and checkpoint that names
/// the old one means the new one.
#[derive(Resource, Debug, Clone, Default)]
pub(crate) struct RespawnedIds {
    new_of_old: HashMap<u64, u64>,
    order: VecDeque<u64>,
}

/// Most renames kept; older ones are forgotten (the entries naming them are long gone).
const MAX_RENAMES: usize = 65_536;

impl RespawnedIds {
    /// The bits an entity held under `bits` has now.
    pub(crate) fn current(&self, bits: u64) -> u64 {
        let mut bits = bits;
        // Each step follows a newer rename; a chain is never longer than the map.
        for _ in 0..=self.new_of_old.len() {
            match self.new_of_old.get(&bits) {
                Some(next) if *next != bits => bits = *next,
                _ => break,
            }
        }
        bits
    }

    fn record(&mut self, old: u64, new: u64) {
        if self.new_of_old.insert(old, new).is_none() {
            self.order.push_back(old);
        }
        while self.order.len() > MAX_RENAMES {
            if let Some(oldest) = self.order.pop_front() {
                self.new_of_old.remove(&oldest);
            }
        }
    }
}

/// Writes the respawned ids down, so later differences and checkpoints find them.
pub(crate) fn remember_respawned(world: &mut World, respawned: &BTreeMap<u64, Entity>) {
    if respawned.is_empty() {
        return;
    }
    let mut ids = world.get_resource_or_init::<RespawnedIds>();
    for (old, new) in respawned {
        ids.record(*old, new.to_bits());
    }
}

/// What held ids mean now: the held bits renamed, and the parent inside a `ChildOf` value too.
struct Ids<'w>(Cow<'w, RespawnedIds>);

impl Ids<'_> {
    fn of(world: &World) -> Ids<'_> {
        Ids(world
            .get_resource::<RespawnedIds>()
            .map_or_else(|| Cow::Owned(RespawnedIds::default()), Cow::Borrowed))
    }

    /// A copy, for a caller that changes the world while it reads them.
    fn owned(world: &World) -> Ids<'static> {
        Ids(Cow::Owned(
            world
                .get_resource::<RespawnedIds>()
                .cloned()
                .unwrap_or_default(),
        ))
    }

    fn current(&self, bits: u64) -> u64 {
        self.0.current(bits)
    }

    /// The entity held as `bits`, if it is in the world now (not held out of sight).
    fn live(&self, world: &World, bits: u64) -> Option<Entity> {
        Entity::try_from_bits(self.current(bits)).filter(|entity| is_present(world, *entity))
    }

    /// The entity held as `bits`, if the holding area holds it.
    fn held(&self, world: &World, bits: u64) -> Option<Entity> {
        Entity::try_from_bits(self.current(bits)).filter(|entity| holding::is_held(world, *entity))
    }

    /// A held value as it reads now: a parent that came back under a new id is renamed.
    fn value(&self, type_path: &str, value: &Raw) -> Raw {
        match value.as_u64() {
            Some(bits) if type_path == CHILD_OF && self.current(bits) != bits => {
                Raw::of(&json!(self.current(bits)))
            }
            _ => value.clone(),
        }
    }

    fn snapshot(&self, held: &EntitySnapshot) -> EntitySnapshot {
        match held.get(CHILD_OF) {
            Some(parent) => {
                let renamed = self.value(CHILD_OF, &parent);
                if renamed == parent {
                    held.clone()
                } else {
                    held.with(&BTreeMap::from([(CHILD_OF.to_owned(), Some(renamed))]))
                }
            }
            None => held.clone(),
        }
    }
}

/// Where the world does not hold what a difference expects on one side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conflict {
    /// What differs: an entity and component, a resource, or game time.
    pub what: String,
    /// What was expected.
    pub expected: Value,
    /// What there is now.
    pub current: Value,
}

impl Conflict {
    /// `{what, expected, current}`.
    pub(crate) fn json(&self) -> Value {
        json!({"what": self.what, "expected": self.expected, "current": self.current})
    }
}

/// Most conflicts one step lists (each with both values); the first is what the refusal names.
const MAX_CONFLICTS: usize = 64;

/// The world as a run of undo (or redo) steps will have left it, before any step is applied:
/// each step is checked against what the steps before it will have made, so a run is refused
/// whole or applied whole.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    wholes: BTreeMap<u64, Option<EntitySnapshot>>,
    /// By entity, type path to the value planned (`None`: removed).
    components: BTreeMap<u64, BTreeMap<String, Option<Raw>>>,
    resources: HashMap<String, Option<Raw>>,
    time: Option<TimeState>,
}

/// Reads the world as [`Planned`] will have left it.
struct Reader<'w> {
    world: &'w World,
    registry: &'w TypeRegistry,
    ids: Ids<'w>,
}

impl Reader<'_> {
    fn whole(&self, planned: &Planned, key: u64) -> Option<EntitySnapshot> {
        let held = match planned.wholes.get(&key) {
            Some(held) => held.clone(),
            None => Entity::try_from_bits(key)
                .filter(|entity| is_present(self.world, *entity))
                .map(|entity| entity_snapshot(self.world, entity, self.registry)),
        }?;
        Some(match planned.components.get(&key) {
            Some(changes) => held.with(changes),
            None => held,
        })
    }

    fn component(&self, planned: &Planned, key: u64, type_path: &str) -> Option<Raw> {
        if let Some(value) = planned
            .components
            .get(&key)
            .and_then(|changes| changes.get(type_path))
        {
            return value.clone();
        }
        if let Some(held) = planned.wholes.get(&key) {
            return held.as_ref()?.get(type_path);
        }
        let entity = Entity::try_from_bits(key).filter(|entity| is_present(self.world, *entity))?;
        let registration = self.registry.get_with_type_path(type_path)?;
        component_raw(self.world, entity, registration, self.registry)
    }

    fn resource(&self, planned: &Planned, type_path: &str) -> Option<Raw> {
        if let Some(value) = planned.resources.get(type_path) {
            return value.clone();
        }
        let registration = self.registry.get_with_type_path(type_path)?;
        resource_raw(self.world, registration, self.registry)
    }

    fn time(&self, planned: &Planned) -> Option<TimeState> {
        planned.time.or_else(|| TimeState::of(self.world))
    }
}

fn entity_label(key: u64, name: Option<&String>) -> String {
    let entity =
        Entity::try_from_bits(key).map_or_else(|| key.to_string(), |entity| entity.to_string());
    match name {
        Some(name) => format!("entity {entity} ({name})"),
        None => format!("entity {entity}"),
    }
}

fn snapshot_json(held: Option<&EntitySnapshot>) -> Value {
    held.map_or(Value::Null, EntitySnapshot::json)
}

fn raw_json(value: Option<Raw>) -> Value {
    value.as_ref().map_or(Value::Null, Raw::value)
}

impl Planned {
    /// Frees what the plan read a slice per frame on the game thread, which made it.
    pub(crate) fn free_over_frames(self, world: &mut World) {
        FreedOverFrames::hand_over_items(world, self.wholes);
        FreedOverFrames::hand_over_items(world, self.components);
    }

    /// Checks that the world (as the steps planned before will have left it) holds `delta`'s
    /// `expect` side (or already the other side's value, which the step would not change), then
    /// plans the other side: while the slice lasts, from the entity after
    /// `after` on (a cursor the caller keeps between frames). What differs goes into `conflicts`
    /// (at most [`MAX_CONFLICTS`]). `true` once the whole delta is planned.
    pub(crate) fn step_some(
        &mut self,
        world: &World,
        delta: &Delta,
        expect: Side,
        after: &mut Option<u64>,
        slice: &mut Slice,
        conflicts: &mut Vec<Conflict>,
    ) -> bool {
        use std::ops::Bound::{Excluded, Unbounded};
        let registry = names::registry(world);
        let registry = registry.read();
        let reader = Reader {
            world,
            registry: &registry,
            ids: Ids::of(world),
        };
        let target = expect.other();
        let mut conflict = |found: Conflict| {
            if conflicts.len() < MAX_CONFLICTS {
                conflicts.push(found);
            }
        };
        let range = match *after {
            Some(key) => delta.entities.range((Excluded(key), Unbounded)),
            None => delta.entities.range(..),
        };
        for (bits, change) in range {
            if !slice.more() {
                return false;
            }
            *after = Some(*bits);
            let key = reader.ids.current(*bits);
            match change {
                EntityChange::Whole(change) => {
                    let expected = change.side(expect).map(|held| reader.ids.snapshot(held));
                    let current = reader.whole(self, key);
                    let planned = change.side(target).map(|held| reader.ids.snapshot(held));
                    let same = |one: &Option<EntitySnapshot>, other: &Option<EntitySnapshot>| match (
                        one, other,
                    ) {
                        (Some(one), Some(other)) => one.same_values(other),
                        (None, None) => true,
                        _ => false,
                    };
                    // What the step would write being there already overwrites nothing (an
                    // earlier undo may have left a value it could not give back).
                    if !same(&expected, &current) && !same(&planned, &current) {
                        let name = expected
                            .as_ref()
                            .or(current.as_ref())
                            .and_then(|held| held.name());
                        conflict(Conflict {
                            what: entity_label(key, name.as_ref()),
                            expected: snapshot_json(expected.as_ref()),
                            current: snapshot_json(current.as_ref()),
                        });
                    }
                    self.components.remove(&key);
                    self.wholes.insert(key, planned);
                }
                EntityChange::Components { name, changes } => {
                    for (type_path, change) in changes {
                        let expected = change
                            .side(expect)
                            .map(|value| reader.ids.value(type_path, value));
                        let current = reader.component(self, key, type_path);
                        let planned = change
                            .side(target)
                            .map(|value| reader.ids.value(type_path, value));
                        if expected != current && planned != current {
                            conflict(Conflict {
                                what: format!(
                                    "{}, component {type_path}",
                                    entity_label(key, name.as_ref())
                                ),
                                expected: raw_json(expected),
                                current: raw_json(current),
                            });
                        }
                        self.components
                            .entry(key)
                            .or_default()
                            .insert(type_path.clone(), planned);
                    }
                }
            }
        }
        for (type_path, change) in &delta.resources {
            let expected = change.side(expect).cloned();
            let current = reader.resource(self, type_path);
            if expected != current && change.side(target).cloned() != current {
                conflict(Conflict {
                    what: format!("resource {type_path}"),
                    expected: raw_json(expected),
                    current: raw_json(current),
                });
            }
            self.resources
                .insert(type_path.clone(), change.side(target).cloned());
        }
        if let Some(change) = &delta.time {
            let expected = change.side(expect).copied();
            let current = reader.time(self);
            if expected != current {
                conflict(Conflict {
                    what: "game time".to_owned(),
                    expected: expected.map_or(Value::Null, |time| time.json()),
                    current: current.map_or(Value::Null, |time| time.json()),
                });
            }
            self.time = change.side(target).copied();
        }
        true
    }
}

/// Most hierarchy problems one refusal lists.
const MAX_REPORTED: usize = 8;

/// Planned entities looked at per unit of a slice, for their parents.
const PARENTS_PER_UNIT: usize = 16;

/// Where the world, as planned steps will have left it, would hold a parent loop, a child under
/// an entity not in the world, or a hierarchy more than `limit` levels deep: undo, redo and
/// restore are ordinary writes, and no ordinary write may make any of them. Checked a slice at a
/// time (the first few problems found are kept): first the planned entities that get a parent
/// are found (entities planned without one are roots the steps leave as they are), then each
/// of those is checked.
#[derive(Debug)]
pub(crate) struct HierarchyCheck {
    limit: usize,
    /// Which of the planned world's runs of keys is being read, and the last key read of it.
    run: usize,
    after: Option<u64>,
    /// The planned entities that get a parent, once found, and how many are checked.
    children: Vec<u64>,
    found: bool,
    next: usize,
    /// Levels (entities from the root down) of every entity walked, each walked once.
    levels: HashMap<u64, usize>,
    conflicts: Vec<Conflict>,
}

/// The world as planned steps leave it, as [`HierarchyCheck`] reads it: a run's [`Planned`]
/// state, or one side of a single delta ([`OneSide`]).
pub(crate) trait PlannedWorld {
    /// How many ordered runs of planned keys there are.
    fn runs(&self) -> usize;
    /// The planned keys of run `run` after `after` (all of them for `None`), in order.
    fn keys_after(&self, run: usize, after: Option<u64>) -> Box<dyn Iterator<Item = u64> + '_>;
    /// An entity planned whole: `Some(None)` when it is planned out of the world.
    fn whole(&self, bits: u64) -> Option<Option<&EntitySnapshot>>;
    /// The parent planned for an entity (`Some(None)`: none); `None` when the steps leave its
    /// parent as the world has it.
    fn parent(&self, bits: u64) -> Option<Option<u64>>;
}

fn range_after<V>(
    map: &BTreeMap<u64, V>,
    after: Option<u64>,
) -> Box<dyn Iterator<Item = u64> + '_> {
    use std::ops::Bound::{Excluded, Unbounded};
    match after {
        Some(key) => Box::new(map.range((Excluded(key), Unbounded)).map(|(key, _)| *key)),
        None => Box::new(map.keys().copied()),
    }
}

impl PlannedWorld for Planned {
    fn runs(&self) -> usize {
        2
    }

    fn keys_after(&self, run: usize, after: Option<u64>) -> Box<dyn Iterator<Item = u64> + '_> {
        if run == 0 {
            range_after(&self.wholes, after)
        } else {
            range_after(&self.components, after)
        }
    }

    fn whole(&self, bits: u64) -> Option<Option<&EntitySnapshot>> {
        self.wholes.get(&bits).map(Option::as_ref)
    }

    fn parent(&self, bits: u64) -> Option<Option<u64>> {
        if let Some(whole) = self.wholes.get(&bits) {
            return Some(whole.as_ref().and_then(parent_in));
        }
        let planned = self.components.get(&bits)?.get(CHILD_OF)?;
        Some(planned.as_ref().and_then(Raw::as_u64))
    }
}

/// One side of one delta, as the world will hold it once applied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneSide<'d>(pub &'d Delta, pub Side);

impl PlannedWorld for OneSide<'_> {
    fn runs(&self) -> usize {
        1
    }

    fn keys_after(&self, _: usize, after: Option<u64>) -> Box<dyn Iterator<Item = u64> + '_> {
        range_after(&self.0.entities, after)
    }

    fn whole(&self, bits: u64) -> Option<Option<&EntitySnapshot>> {
        match self.0.entities.get(&bits)? {
            EntityChange::Whole(change) => Some(change.side(self.1)),
            EntityChange::Components { .. } => None,
        }
    }

    fn parent(&self, bits: u64) -> Option<Option<u64>> {
        match self.0.entities.get(&bits)? {
            EntityChange::Whole(change) => Some(change.side(self.1).and_then(parent_in)),
            EntityChange::Components { changes, .. } => {
                Some(changes.get(CHILD_OF)?.side(self.1).and_then(Raw::as_u64))
            }
        }
    }
}

/// The parent an entity's snapshot holds.
fn parent_in(held: &EntitySnapshot) -> Option<u64> {
    held.get(CHILD_OF).and_then(|parent| parent.as_u64())
}

impl HierarchyCheck {
    /// A check of what a planned world leaves, for hierarchies at most `limit` levels deep.
    pub(crate) fn new(limit: usize) -> HierarchyCheck {
        HierarchyCheck {
            limit,
            run: 0,
            after: None,
            children: Vec::new(),
            found: false,
            next: 0,
            levels: HashMap::new(),
            conflicts: Vec::new(),
        }
    }

    /// Goes on while the slice lasts; the problems found once done.
    pub(crate) fn advance(
        &mut self,
        planned: &impl PlannedWorld,
        world: &World,
        slice: &mut Slice,
    ) -> Option<Vec<Conflict>> {
        while !self.found {
            if self.run >= planned.runs() {
                self.found = true;
                break;
            }
            let mut keys = planned.keys_after(self.run, self.after);
            loop {
                if !slice.more() {
                    return None;
                }
                let mut took = 0;
                for key in keys.by_ref().take(PARENTS_PER_UNIT) {
                    took += 1;
                    self.after = Some(key);
                    if let Some(Some(_)) = planned.parent(key) {
                        self.children.push(key);
                    }
                }
                if took < PARENTS_PER_UNIT {
                    break;
                }
            }
            self.run += 1;
            self.after = None;
        }
        while self.next < self.children.len() {
            if self.conflicts.len() >= MAX_REPORTED {
                break;
            }
            if !slice.more() {
                return None;
            }
            let key = self.children[self.next];
            self.next += 1;
            self.check(planned, world, key);
        }
        Some(std::mem::take(&mut self.conflicts))
    }

    /// The planned parent of an entity: planned, or the world's.
    fn parent_of(planned: &impl PlannedWorld, world: &World, bits: u64) -> Option<u64> {
        match planned.parent(bits) {
            Some(parent) => parent,
            None => Entity::try_from_bits(bits)
                .filter(|entity| is_present(world, *entity))
                .and_then(|entity| hierarchy::parent_of(world, entity))
                .map(Entity::to_bits),
        }
    }

    /// Checks one entity the steps give a parent: the parent is in the world, no loop runs
    /// through it, and it (with what hangs below it) is not too deep.
    fn check(&mut self, planned: &impl PlannedWorld, world: &World, key: u64) {
        let Some(parent) = Self::parent_of(planned, world, key) else {
            return;
        };
        // A parent must be in the world as the steps leave it: a child of a held (or gone)
        // entity would hang under something the game cannot see.
        if present(planned, world, key) && !present(planned, world, parent) {
            self.conflicts.push(Conflict {
                what: format!(
                    "{} would hang under {}, which is not in the world now",
                    entity_label(key, None),
                    entity_label(parent, None)
                ),
                expected: json!("a parent in the world"),
                current: json!(null),
            });
        }
        let mut path = Vec::new();
        let mut on_path = HashSet::new();
        let mut current = Some(key);
        let mut level = 0;
        while let Some(step) = current {
            if let Some(known) = self.levels.get(&step) {
                level = *known;
                break;
            }
            if !on_path.insert(step) {
                self.conflicts.push(Conflict {
                    what: format!(
                        "{} would be below itself (a parent loop through {})",
                        entity_label(key, None),
                        entity_label(step, None)
                    ),
                    expected: json!("a hierarchy without loops"),
                    current: json!(path.len()),
                });
                return;
            }
            path.push(step);
            current = Self::parent_of(planned, world, step);
        }
        for step in path.into_iter().rev() {
            level += 1;
            self.levels.insert(step, level);
        }
        let Some(level) = self.levels.get(&key).copied() else {
            return;
        };
        // A present entity given a parent keeps what hangs below it.
        let below = Entity::try_from_bits(key)
            .filter(|entity| is_present(world, *entity))
            .map_or(0, |entity| hierarchy::height_of(world, entity));
        if level + below > self.limit {
            self.conflicts.push(Conflict {
                what: format!(
                    "{} would be more than {} levels deep",
                    entity_label(key, None),
                    self.limit
                ),
                expected: json!(format!("at most {} levels", self.limit)),
                current: json!(level + below),
            });
        }
    }
}

/// Whether an entity is in the world as the planned steps leave it.
fn present(planned: &impl PlannedWorld, world: &World, bits: u64) -> bool {
    match planned.whole(bits) {
        Some(planned) => planned.is_some(),
        None => Entity::try_from_bits(bits).is_some_and(|entity| is_present(world, entity)),
    }
}

/// What applying a delta did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Entities despawned.
    pub despawned: usize,
    /// Entities that came back, old bits to the new entity.
    pub respawned: BTreeMap<u64, Entity>,
    /// Entities brought back whole from the holding area, under their own ids.
    pub brought_back: usize,
    /// Component values written.
    pub components_written: usize,
    /// Components removed.
    pub components_removed: usize,
    /// Resource values written.
    pub resources_written: usize,
    /// Resources removed.
    pub resources_removed: usize,
    /// Type path (or entity) to why it was left as it is.
    pub not_restored: BTreeMap<String, String>,
}

impl Applied {
    /// `{old: new}` of the respawned entities.
    pub(crate) fn respawned_json(&self) -> Value {
        self.respawned
            .iter()
            .map(|(old, new)| {
                let old = Entity::try_from_bits(*old)
                    .map_or_else(|| old.to_string(), |old| old.to_string());
                (old, json!(new.to_string()))
            })
            .collect::<Map<String, Value>>()
            .into()
    }

    /// `[{type, reason}]` of what was left as it is.
    pub(crate) fn not_restored_json(&self) -> Value {
        self.not_restored
            .iter()
            .map(|(what, reason)| json!({"type": what, "reason": reason}))
            .collect::<Vec<_>>()
            .into()
    }

    /// Adds what another step did.
    pub(crate) fn add(&mut self, step: Applied) {
        self.despawned += step.despawned;
        self.components_written += step.components_written;
        self.components_removed += step.components_removed;
        self.resources_written += step.resources_written;
        self.resources_removed += step.resources_removed;
        self.respawned.extend(step.respawned);
        self.brought_back += step.brought_back;
        self.not_restored.extend(step.not_restored);
    }
}

/// A component value to write, checked before anything changes.
struct Write {
    /// The entity as the delta holds it (bits).
    key: u64,
    type_path: &'static str,
    value: Box<dyn Reflect>,
}

/// Where [`Applying`] is: checking (nothing changed yet), then each kind of change in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Check,
    Detach,
    Remove,
    BringBack,
    Respawn,
    Removals,
    Writes,
    Parents,
    Resources,
    Readded,
    Done,
}

/// Makes the world hold one side of a delta, a slice at a time. Every value is read back from
/// JSON and checked before anything changes (the check stage changes nothing, so a value that no
/// longer fits its type refuses the whole delta); then the changes are made in order: children
/// of departing entities detached, departing entities held (or despawned), held ones brought
/// back, gone ones respawned, components removed, values written, parents last (every entity a
/// parent names exists by then), resources and game time.
///
/// Types the write policy protects are left as they are (the parent relation aside: it is
/// remapped and written here, and the held hierarchy had no loop), as are game states (they
/// change through transitions); both are listed in `not_restored`. Does not check what the world
/// holds now: callers do that first ([`Planned::step`]) unless asked to force. A big delta spans
/// frames, and the game runs between them; an entity the game despawns meanwhile is passed over.
pub(crate) struct Applying {
    delta: Arc<Delta>,
    side: Side,
    ids: Ids<'static>,
    /// The last entity of the delta the stage at hand looked at (the check and the re-added
    /// stages walk the delta itself, by key: collecting 100,000 keys at once held a frame).
    after: Option<u64>,
    stage: Stage,
    next: usize,
    despawn: Vec<Entity>,
    going: HashSet<Entity>,
    bring_back: Vec<Entity>,
    respawn: Vec<u64>,
    removals: Vec<(u64, &'static str)>,
    writes: Vec<Write>,
    parents: Vec<Write>,
    resource_writes: Vec<(&'static str, Box<dyn Reflect>)>,
    resource_removals: Vec<&'static str>,
    /// The protected types left out that Bevy may have re-added to every entity holding them
    /// (required components), each with whether every holder so far came back new with it.
    readded: Vec<(String, bool, bool)>,
    /// Entities that already held what the side holds (brought back whole), as read.
    unchanged: HashMap<u64, EntitySnapshot>,
    applied: Applied,
}

impl std::fmt::Debug for Applying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applying")
            .field("stage", &self.stage)
            .field("entities", &self.delta.entities.len())
            .finish_non_exhaustive()
    }
}

/// A registered component type, as the apply stages need it.
fn component_of<'r>(
    registry: &'r TypeRegistry,
    type_path: &str,
) -> Option<(&'r TypeRegistration, &'r ReflectComponent)> {
    let registration = registry.get_with_type_path(type_path)?;
    Some((registration, registration.data::<ReflectComponent>()?))
}

impl Applying {
    /// Starts making the world hold `delta`'s `side`.
    pub(crate) fn new(world: &World, delta: Arc<Delta>, side: Side) -> Applying {
        // Sized once: growing a map of 100,000 rehashes it in one frame.
        let (going, unchanged) = (
            HashSet::with_capacity(delta.entities.len()),
            HashMap::with_capacity(delta.entities.len()),
        );
        Applying {
            delta,
            side,
            ids: Ids::owned(world),
            after: None,
            stage: Stage::Check,
            next: 0,
            despawn: Vec::new(),
            going,
            bring_back: Vec::new(),
            respawn: Vec::new(),
            removals: Vec::new(),
            writes: Vec::new(),
            parents: Vec::new(),
            resource_writes: Vec::new(),
            resource_removals: Vec::new(),
            readded: Vec::new(),
            unchanged,
            applied: Applied::default(),
        }
    }

    /// Frees what it read and wrote on the game thread over the next frames (see
    /// [`FreedOverFrames`]): dropped at once, the values of 100,000 entities took 17 ms.
    pub(crate) fn free_over_frames(self, world: &mut World) {
        Delta::free_over_frames(self.delta, world);
        FreedOverFrames::hand_over_items(world, self.writes);
        FreedOverFrames::hand_over_items(world, self.parents);
        FreedOverFrames::hand_over_items(world, self.unchanged);
        FreedOverFrames::hand_over_items(world, self.going);
        FreedOverFrames::hand_over_items(world, self.applied.respawned);
    }

    /// The entities that already held what the side holds, as the check read them (once done,
    /// they hold it still: nothing was written to them).
    pub(crate) fn take_unchanged(&mut self) -> HashMap<u64, EntitySnapshot> {
        std::mem::take(&mut self.unchanged)
    }

    /// Whether anything has changed yet (a failure before that changed nothing).
    pub(crate) fn changed_anything(&self) -> bool {
        self.stage != Stage::Check
    }

    /// `(units done, units in all)` of the current stage, for progress.
    pub(crate) fn progress(&self) -> (usize, usize) {
        let total = match self.stage {
            Stage::Check => self.delta.entities.len(),
            Stage::Detach | Stage::Remove => self.despawn.len(),
            Stage::BringBack => self.bring_back.len(),
            Stage::Respawn => self.respawn.len(),
            Stage::Removals => self.removals.len(),
            Stage::Writes => self.writes.len(),
            Stage::Parents => self.parents.len(),
            Stage::Resources | Stage::Readded | Stage::Done => 0,
        };
        (self.next.min(total), total)
    }

    /// Goes on while the slice lasts; `Some` once done. An error comes only from the check stage,
    /// before anything changed.
    pub(crate) fn advance(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
    ) -> Result<Option<Applied>, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        while !slice.is_over() && self.stage != Stage::Done {
            let more = match self.stage {
                Stage::Check => self.check(world, &registry, slice)?,
                Stage::Detach => self.detach(world, slice),
                Stage::Remove => self.remove(world, slice),
                Stage::BringBack => self.bring_back(world, slice),
                Stage::Respawn => self.respawn(world, slice),
                Stage::Removals => self.remove_components(world, &registry, slice),
                Stage::Writes => self.write(world, &registry, slice, false),
                Stage::Parents => self.write(world, &registry, slice, true),
                Stage::Resources => {
                    self.resources(world, &registry);
                    false
                }
                Stage::Readded => self.forget_readded(world, &registry, slice),
                Stage::Done => false,
            };
            if !more {
                self.stage = match self.stage {
                    Stage::Check => Stage::Detach,
                    Stage::Detach => Stage::Remove,
                    Stage::Remove => Stage::BringBack,
                    Stage::BringBack => Stage::Respawn,
                    Stage::Respawn => Stage::Removals,
                    Stage::Removals => Stage::Writes,
                    Stage::Writes => Stage::Parents,
                    Stage::Parents => Stage::Resources,
                    Stage::Resources => Stage::Readded,
                    Stage::Readded | Stage::Done => Stage::Done,
                };
                self.next = 0;
                self.after = None;
            }
        }
        if self.stage == Stage::Done {
            return Ok(Some(std::mem::take(&mut self.applied)));
        }
        Ok(None)
    }

    /// The check stage: decides every change and reads every value back, changing nothing.
    /// `true` while entities are left to check.
    fn check(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> Result<bool, BridgeError> {
        let policy = WritePolicy::of(world);
        let delta = Arc::clone(&self.delta);
        for (bits, change) in entities_after(&delta, self.after) {
            if !slice.more() {
                return Ok(true);
            }
            self.after = Some(*bits);
            self.next += 1;
            self.check_entity(world, registry, &policy, *bits, change)?;
        }
        self.check_resources(world, registry, &policy)?;
        self.after = None;
        Ok(false)
    }

    /// The component type at `type_path` when the delta may write it; otherwise `None`, and why
    /// goes into `not_restored`.
    fn writable<'r>(
        &mut self,
        world: &World,
        registry: &'r TypeRegistry,
        policy: &WritePolicy,
        type_path: &str,
    ) -> Option<(&'r TypeRegistration, &'r ReflectComponent)> {
        let Some(found) = component_of(registry, type_path) else {
            self.applied
                .not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| "no longer registered".to_owned());
            return None;
        };
        let protection = (type_path != CHILD_OF)
            .then(|| policy.protection(world, found.0))
            .flatten();
        if let Some(protection) = protection {
            self.applied
                .not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| format!("{PROTECTED}: {}", protection.reason));
            return None;
        }
        Some(found)
    }

    /// [`Applying::checked`], but a value naming an asset that is gone (one the game made at
    /// run time, freed since, and no longer kept by the history) is left as it is and named in
    /// `not_restored`: the rest of the change is given back.
    fn checked_or_named(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        registration: &TypeRegistration,
        type_path: &str,
        value: &Raw,
    ) -> Result<Option<Box<dyn Reflect>>, BridgeError> {
        match self.checked(world, registry, policy, registration, type_path, value) {
            Ok(value) => Ok(Some(value)),
            Err(BridgeError::HandleRefused { reason, .. }) => {
                self.applied
                    .not_restored
                    .entry(type_path.to_owned())
                    .or_insert_with(|| format!("an asset it names is gone: {reason}"));
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    fn checked(
        &self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        registration: &TypeRegistration,
        type_path: &str,
        value: &Raw,
    ) -> Result<Box<dyn Reflect>, BridgeError> {
        let value = values::concrete_from_json(
            registration,
            registry,
            &self.ids.value(type_path, value).value(),
            &mut HandleReader::naming(world),
        )?;
        if type_path != CHILD_OF {
            policy.check_value(world, registration, value.as_partial_reflect())?;
        }
        Ok(value)
    }

    fn check_entity(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        bits: u64,
        change: &EntityChange,
    ) -> Result<(), BridgeError> {
        let live = self.ids.live(world, bits);
        // The rule every entity action keeps: resource entities and observers are not touched.
        if let Some(entity) = live
            && world::require_plain_entity(world, entity).is_err()
        {
            self.applied.not_restored.insert(
                format!("entity {entity}"),
                "it is a resource entity or an observer now; entity actions leave those alone"
                    .to_owned(),
            );
            return Ok(());
        }
        let side = self.side;
        let (wanted, current): (BTreeMap<String, Raw>, BTreeMap<String, Raw>) = match change {
            EntityChange::Whole(change) => match (change.side(side), live) {
                (None, Some(entity)) => {
                    self.despawn.push(entity);
                    self.going.insert(entity);
                    return Ok(());
                }
                (None, None) => return Ok(()),
                (Some(held), live) => {
                    let now = match (live, self.ids.held(world, bits)) {
                        (Some(entity), _) => Some(entity_snapshot(world, entity, registry)),
                        // Held out of sight: it comes back whole, under the same id.
                        (None, Some(entity)) => {
                            self.bring_back.push(entity);
                            Some(entity_snapshot(world, entity, registry))
                        }
                        (None, None) => None,
                    };
                    // What it holds already: nothing to write or remove.
                    if let Some(now) = &now
                        && now.same_values(&self.ids.snapshot(held))
                    {
                        self.unchanged.insert(bits, now.clone());
                        return Ok(());
                    }
                    let current = match now {
                        Some(now) => now.values(),
                        None => {
                            let label = entity_label(self.ids.current(bits), held.name().as_ref());
                            self.respawn.push(bits);
                            for lost in &held.unread {
                                // A game's own unreflected marker matters most: a brick without
                                // it may be a picture the ball passes through.
                                let fix = if registry.get_with_type_path(lost).is_none() {
                                    format!(
                                        ". The component is not reflected, so the copy lacks it and may behave differently; to bring it back next time, {}",
                                        names::HOW_TO_REFLECT
                                    )
                                } else {
                                    String::new()
                                };
                                self.applied.not_restored.entry(lost.clone()).or_insert_with(|| {
                                    format!(
                                        "{LOST_ON_RESPAWN} on {label}: it was despawned outside the bridge (or held too long), so only its reflected values came back under a new id{fix}"
                                    )
                                });
                            }
                            BTreeMap::new()
                        }
                    };
                    let wanted = held.values();
                    for type_path in current.keys().filter(|path| !wanted.contains_key(*path)) {
                        if let Some((registration, _)) =
                            self.writable(world, registry, policy, type_path)
                        {
                            self.removals
                                .push((bits, registration.type_info().type_path()));
                        }
                    }
                    (wanted, current)
                }
            },
            EntityChange::Components { name, changes } => {
                let Some(entity) = live else {
                    self.applied.not_restored.insert(
                        entity_label(self.ids.current(bits), name.as_ref()),
                        "the entity no longer exists".to_owned(),
                    );
                    return Ok(());
                };
                let mut wanted = BTreeMap::new();
                let mut current = BTreeMap::new();
                for (type_path, change) in changes {
                    let Some((registration, _)) = self.writable(world, registry, policy, type_path)
                    else {
                        continue;
                    };
                    let now = component_raw(world, entity, registration, registry);
                    match change.side(side) {
                        Some(value) => {
                            wanted.insert(type_path.clone(), value.clone());
                            if let Some(now) = now {
                                current.insert(type_path.clone(), now);
                            }
                        }
                        None if now.is_some() => self
                            .removals
                            .push((bits, registration.type_info().type_path())),
                        None => {}
                    }
                }
                (wanted, current)
            }
        };
        for (type_path, value) in &wanted {
            if current.get(type_path) == Some(&self.ids.value(type_path, value)) {
                continue;
            }
            let Some((registration, _)) = self.writable(world, registry, policy, type_path) else {
                continue;
            };
            let Some(value) =
                self.checked_or_named(world, registry, policy, registration, type_path, value)?
            else {
                continue;
            };
            let write = Write {
                key: bits,
                type_path: registration.type_info().type_path(),
                value,
            };
            if type_path == CHILD_OF {
                self.parents.push(write);
            } else {
                self.writes.push(write);
            }
        }
        Ok(())
    }

    fn check_resources(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
    ) -> Result<(), BridgeError> {
        let delta = Arc::clone(&self.delta);
        for (type_path, change) in &delta.resources {
            if type_path.starts_with(STATE_PREFIX) {
                self.applied.not_restored.insert(
                    type_path.clone(),
                    "a game state changes only through a transition; use state.set".to_owned(),
                );
                continue;
            }
            let Some((registration, _)) = self.writable(world, registry, policy, type_path) else {
                continue;
            };
            let now = resource_raw(world, registration, registry);
            let path = registration.type_info().type_path();
            match change.side(self.side) {
                Some(value) if now.as_ref() != Some(value) => {
                    if let Some(value) = self.checked_or_named(
                        world,
                        registry,
                        policy,
                        registration,
                        type_path,
                        value,
                    )? {
                        self.resource_writes.push((path, value));
                    }
                }
                None if now.is_some() => self.resource_removals.push(path),
                _ => {}
            }
        }
        Ok(())
    }

    /// Children of an entity that goes, and that do not go with it, stay in the world.
    fn detach(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.despawn.len() {
            if !slice.more() {
                return true;
            }
            let entity = self.despawn[self.next];
            self.next += 1;
            // A model's parts came from Bevy, after the change this undoes: they go with their
            // root, which spawns them again if it comes back.
            let parts = models::parts_of(world, entity);
            if !parts.is_empty() && parts.iter().any(|part| !self.going.contains(part)) {
                models::despawn_model(world, entity);
            }
            for child in hierarchy::children_of(world, entity) {
                if !self.going.contains(&child)
                    && let Ok(mut entity_mut) = world.get_entity_mut(child)
                {
                    entity_mut.remove::<ChildOf>();
                }
            }
        }
        false
    }

    /// What goes is held out of sight (so a later undo brings it back whole), or despawned
    /// leaf-first where the history keeps no holding area.
    fn remove(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        let start = self.next;
        while self.next < self.despawn.len() && slice.more() {
            self.next += 1;
        }
        let chunk = &self.despawn[start..self.next];
        if world.contains_resource::<holding::HoldingArea>() {
            holding::hold_among(world, chunk, &self.going);
        } else {
            holding::despawn_leaf_first(world, chunk);
        }
        self.applied.despawned += chunk.len();
        self.next < self.despawn.len()
    }

    fn bring_back(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.bring_back.len() {
            if !slice.more() {
                return true;
            }
            if holding::bring_back(world, self.bring_back[self.next]) {
                self.applied.brought_back += 1;
            }
            self.next += 1;
        }
        false
    }

    fn respawn(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.respawn.len() {
            if !slice.more() {
                return true;
            }
            let bits = self.respawn[self.next];
            self.applied
                .respawned
                .insert(bits, world.spawn_empty().id());
            self.next += 1;
        }
        false
    }

    /// The entity the delta holds as `bits`, as it is now.
    fn live(&self, world: &World, bits: u64) -> Option<Entity> {
        self.applied
            .respawned
            .get(&bits)
            .copied()
            .or_else(|| self.ids.live(world, bits))
    }

    fn remove_components(
        &mut self,
        world: &mut World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> bool {
        while self.next < self.removals.len() {
            if !slice.more() {
                return true;
            }
            let (bits, type_path) = self.removals[self.next];
            self.next += 1;
            let Some((registration, component)) = component_of(registry, type_path) else {
                continue;
            };
            if let Some(entity) = self.live(world, bits)
                && models::remove_component(world, entity, registration.type_id(), component)
            {
                self.applied.components_removed += 1;
            }
        }
        false
    }

    fn write(
        &mut self,
        world: &mut World,
        registry: &TypeRegistry,
        slice: &mut Slice,
        parents: bool,
    ) -> bool {
        let total = if parents {
            self.parents.len()
        } else {
            self.writes.len()
        };
        while self.next < total {
            if !slice.more() {
                return true;
            }
            let index = self.next;
            self.next += 1;
            let write = if parents {
                &mut self.parents[index]
            } else {
                &mut self.writes[index]
            };
            let (key, type_path) = (write.key, write.type_path);
            if let Some(child_of) = write.value.downcast_mut::<ChildOf>() {
                if let Some(parent) = self.applied.respawned.get(&child_of.parent().to_bits()) {
                    *child_of = ChildOf(*parent);
                }
                // A parent gone for good (despawned by the game, not held): the child stays a
                // root rather than hang under nothing.
                if world.get_entity(child_of.parent()).is_err() {
                    let parent = child_of.parent();
                    self.applied
                        .not_restored
                        .entry(CHILD_OF.to_owned())
                        .or_insert_with(|| {
                            format!("entity {parent} stays gone, so its children came back without a parent")
                        });
                    continue;
                }
            }
            let entity = self
                .applied
                .respawned
                .get(&key)
                .copied()
                .or_else(|| self.ids.live(world, key));
            let (Some(entity), Some((_, component))) = (entity, component_of(registry, type_path))
            else {
                continue;
            };
            let value = if parents {
                &self.parents[index].value
            } else {
                &self.writes[index].value
            };
            if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
                component.insert(&mut entity_mut, value.as_partial_reflect(), registry);
                self.applied.components_written += 1;
            }
        }
        false
    }

    fn resources(&mut self, world: &mut World, registry: &TypeRegistry) {
        for label in &self.delta.unheld_resources {
            self.applied
                .not_restored
                .entry(label.clone())
                .or_insert_with(|| unheld_resource_reason(registry, label));
        }
        for (type_path, value) in std::mem::take(&mut self.resource_writes) {
            let Some((registration, component)) = component_of(registry, type_path) else {
                continue;
            };
            let entity = resource_slot(world, registration);
            if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
                component.insert(&mut entity_mut, value.as_partial_reflect(), registry);
                self.applied.resources_written += 1;
            }
        }
        for type_path in std::mem::take(&mut self.resource_removals) {
            let Some(registration) = registry.get_with_type_path(type_path) else {
                continue;
            };
            if resource_entity(world, registration).is_ok()
                && names::component_id(world, registration.type_id())
                    .is_some_and(|id| world.remove_resource_by_id(id))
            {
                self.applied.resources_removed += 1;
            }
        }
        let time = self
            .delta
            .time
            .as_ref()
            .and_then(|change| change.side(self.side).copied());
        if let (Some(time), Some(mut virtual_time)) =
            (time, world.get_resource_mut::<Time<Virtual>>())
        {
            if time.paused {
                virtual_time.pause();
            } else {
                virtual_time.unpause();
            }
            virtual_time.set_relative_speed_f64(time.speed);
        }
    }

    /// Drops from `not_restored` the protected components that every entity holding them came
    /// back new with anyway: Bevy adds required components (a transform's `GlobalTransform` and
    /// `TransformTreeChanged`) when the components that require them come back. Looks through
    /// the delta's whole entities while the slice lasts; `true` while some are left.
    fn forget_readded(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> bool {
        if self.next == 0 {
            self.readded = self
                .applied
                .not_restored
                .iter()
                .filter(|(_, reason)| {
                    reason.starts_with(PROTECTED) || reason.starts_with(LOST_ON_RESPAWN)
                })
                .map(|(type_path, _)| (type_path.clone(), false, true))
                .collect();
        }
        if self.readded.is_empty() {
            return false;
        }
        let ids: Vec<_> = self
            .readded
            .iter()
            .map(|(type_path, _, _)| {
                registry
                    .get_with_type_path(type_path)
                    .and_then(|registration| world.components().get_id(registration.type_id()))
            })
            .collect();
        let delta = Arc::clone(&self.delta);
        for (bits, change) in entities_after(&delta, self.after) {
            if !slice.more() {
                return true;
            }
            let bits = *bits;
            self.after = Some(bits);
            self.next += 1;
            let EntityChange::Whole(change) = change else {
                continue;
            };
            let Some(held) = change.side(self.side) else {
                continue;
            };
            for ((type_path, held_somewhere, every), id) in self.readded.iter_mut().zip(&ids) {
                if !held.holds(type_path) && !held.unread.contains(type_path) {
                    continue;
                }
                *held_somewhere = true;
                // A respawned entity under its new id; one brought back whole under its own.
                let back = self
                    .applied
                    .respawned
                    .get(&bits)
                    .copied()
                    .or_else(|| Entity::try_from_bits(self.ids.current(bits)))
                    .and_then(|entity| world.get_entity(entity).ok())
                    .is_some_and(|entity| id.is_some_and(|id| entity.contains_id(id)));
                *every &= back;
            }
        }
        for (type_path, held_somewhere, every) in std::mem::take(&mut self.readded) {
            if held_somewhere && every {
                self.applied.not_restored.remove(&type_path);
            }
        }
        false
    }
}

/// The delta's entities after `after` (all of them for `None`), in order.
fn entities_after(
    delta: &Delta,
    after: Option<u64>,
) -> std::collections::btree_map::Range<'_, u64, EntityChange> {
    use std::ops::Bound::{Excluded, Unbounded};
    match after {
        Some(key) => delta.entities.range((Excluded(key), Unbounded)),
        None => delta.entities.range(..),
    }
}

/// Makes the world hold `delta`'s `side` at once (see [`Applying`]): the render backstop takes
/// recent changes back within the frame of a render error.
#[cfg(feature = "render")]
pub(crate) fn apply(
    world: &mut World,
    delta: Arc<Delta>,
    side: Side,
) -> Result<Applied, BridgeError> {
    let mut applying = Applying::new(world, delta, side);
    loop {
        if let Some(applied) = applying.advance(world, &mut Slice::unbounded())? {
            return Ok(applied);
        }
    }
}

/// Checks that every value `delta`'s `side` would write still reads as its type and passes the
/// write policy, without changing anything: a run of steps is checked whole before its first
/// step is applied. Goes on while the slice lasts, from the entity after `after` on; `true` once
/// the whole delta is checked.
pub(crate) fn check_values(
    world: &World,
    delta: &Delta,
    side: Side,
    after: &mut Option<u64>,
    slice: &mut Slice,
) -> Result<bool, BridgeError> {
    use std::ops::Bound::{Excluded, Unbounded};
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let ids = Ids::of(world);
    let check = |type_path: &str, value: &Raw| {
        let Some(registration) = registry.get_with_type_path(type_path) else {
            return Ok(());
        };
        if type_path == CHILD_OF || type_path.starts_with(STATE_PREFIX) {
            return Ok(());
        }
        if policy.protection(world, registration).is_some() {
            return Ok(());
        }
        let value = match values::concrete_from_json(
            registration,
            &registry,
            &ids.value(type_path, value).value(),
            &mut HandleReader::naming(world),
        ) {
            Ok(value) => value,
            // Applying leaves it as it is and names it (see `Applying::checked_or_named`).
            Err(BridgeError::HandleRefused { .. }) => return Ok(()),
            Err(error) => return Err(error),
        };
        policy.check_value(world, registration, value.as_partial_reflect())
    };
    let range = match *after {
        Some(key) => delta.entities.range((Excluded(key), Unbounded)),
        None => delta.entities.range(..),
    };
    for (bits, change) in range {
        if !slice.more() {
            return Ok(false);
        }
        *after = Some(*bits);
        match change {
            EntityChange::Whole(change) => {
                if let Some(held) = change.side(side) {
                    for (type_path, value) in held.values() {
                        check(&type_path, &value)?;
                    }
                }
            }
            EntityChange::Components { changes, .. } => {
                for (type_path, change) in changes {
                    if let Some(value) = change.side(side) {
                        check(type_path, value)?;
                    }
                }
            }
        }
    }
    for (type_path, change) in &delta.resources {
        if let Some(value) = change.side(side) {
            check(type_path, value)?;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::retire::ITEMS_PER_UNIT;
    use crate::runtime::slices::MAX_UNITS;

    #[test]
    fn what_a_plan_read_is_freed_over_frames_not_at_once() {
        // More entities than one slice frees (MAX_UNITS units of ITEMS_PER_UNIT).
        let entities = (MAX_UNITS as u64) * (ITEMS_PER_UNIT as u64) + 10;
        let mut planned = Planned::default();
        for id in 0..entities {
            planned.wholes.insert(id, None);
            planned.components.insert(id, BTreeMap::new());
        }
        let mut world = World::new();
        world.init_resource::<FreedOverFrames>();
        planned.free_over_frames(&mut world);
        assert_eq!(
            world.resource::<FreedOverFrames>().len(),
            2,
            "the wholes and the components wait"
        );
        assert!(
            FreedOverFrames::frames_to_free_all(&mut world) >= 2,
            "everything was freed in one frame"
        );
    }
}
