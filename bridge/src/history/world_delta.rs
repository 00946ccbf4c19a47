//! The world as values: snapshots of entities and resources as reflect JSON, what differs between
//! two of them, and making the world match one side of a difference.
//!
//! `history` builds on it: a checkpoint is a [`Snapshot`], `diff` compares two, and `restore`, the
//! journal's `undo` and `redo` all apply a [`Delta`] with [`apply`], under the rules every other
//! write obeys. State that changes by itself every frame (clocks, input, diagnostics, window and
//! render bookkeeping, `GlobalTransform`, which follows `Transform`) is not held: it would make
//! every comparison differ without anyone changing anything.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::prelude::{ChildOf, Entity, Name, Resource, Time, Virtual, World};
use bevy::reflect::{Reflect, TypeRegistration, TypeRegistry};
use serde_json::{Map, Value, json};

use crate::error::BridgeError;
use crate::history::holding;
use crate::reflect::hierarchy;
use crate::reflect::names;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::reflect::world;
use crate::reflect::world::{BridgeOwned, HeldOutOfSight, is_present, plain_entities_by_index};
use crate::reflect::world::{frame, resource_entity, resource_json, resource_slot};

/// Type paths never held: they change by themselves every frame.
const UNTRACKED_PREFIXES: [&str; 12] = [
    "bevy_time::",
    "bevy_input::",
    "bevy_diagnostic::",
    "bevy_window::",
    "bevy_winit::",
    "bevy_render::",
    "bevy_picking::",
    "bevy_log::",
    "bevy_tasks::",
    "bevy_asset::",
    "bevy_app::",
    "bevy_transform::components::global_transform::",
];

/// The parent relation: its value names an entity, which a respawned parent renames.
pub(crate) const CHILD_OF: &str = "bevy_ecs::hierarchy::ChildOf";
/// Engine bookkeeping kept anyway: the name and the parent of an entity.
const TRACKED_EXCEPTIONS: [&str; 2] = ["bevy_ecs::name::Name", CHILD_OF];
/// Resources never written back: a game state changes only through a transition.
const STATE_PREFIX: &str = "bevy_state::";

/// Whether values of this type are held and compared.
pub(crate) fn tracked(type_path: &str) -> bool {
    if TRACKED_EXCEPTIONS.contains(&type_path) {
        return true;
    }
    // The rest of `bevy_ecs` is bookkeeping Bevy maintains (children lists, observers...).
    !type_path.starts_with("bevy_ecs::")
        && !UNTRACKED_PREFIXES
            .iter()
            .any(|prefix| type_path.starts_with(prefix))
}

/// One entity's tracked reflected components, by type path, and the names of the components it
/// has whose values cannot be held.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EntitySnapshot {
    /// Its `Name`, for people reading a difference.
    pub name: Option<String>,
    /// Type path to value.
    pub components: BTreeMap<String, Value>,
    /// Components it has that are not held as values (not reflected, or not readable as JSON,
    /// such as ones holding asset handles), by the name Bevy knows: a difference compares them
    /// as a set, and what cannot come back is named.
    pub unread: BTreeSet<String>,
}

/// The world at one frame: every plain entity and every tracked resource.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    /// The frame it was taken at.
    pub frame: u64,
    /// By entity bits.
    pub entities: BTreeMap<u64, (Entity, EntitySnapshot)>,
    /// Type path to value.
    pub resources: BTreeMap<String, Value>,
    /// What it holds, as JSON bytes.
    pub bytes: usize,
}

/// Every tracked component of every plain entity and every tracked resource; refused past
/// `limit` JSON bytes.
pub(crate) fn snapshot(world: &World, limit: usize) -> Result<Snapshot, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let too_large = |bytes| BridgeError::CheckpointTooLarge { bytes, limit };
    let mut bytes = 0;
    let mut entities = BTreeMap::new();
    for entity in plain_entities_by_index(world) {
        let snapshot = entity_snapshot(world, entity, &registry);
        bytes += snapshot.bytes();
        if bytes > limit {
            return Err(too_large(bytes));
        }
        entities.insert(entity.to_bits(), (entity, snapshot));
    }
    let mut resources = BTreeMap::new();
    for (id, _) in world.resource_entities().iter() {
        let Some(registration) = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
        else {
            continue;
        };
        let type_path = registration.type_info().type_path();
        if registration.data::<ReflectResource>().is_none() || !tracked(type_path) {
            continue;
        }
        // A resource whose value cannot be read as JSON is left out, as unreadable components are.
        if let Ok(value) = resource_json(world, registration, &registry) {
            bytes += json_bytes(&value);
            resources.insert(type_path.to_owned(), value);
        }
    }
    if bytes > limit {
        return Err(too_large(bytes));
    }
    Ok(Snapshot {
        frame: frame(world),
        entities,
        resources,
        bytes,
    })
}

/// One entity's tracked components (empty when it does not exist).
pub(crate) fn entity_snapshot(
    world: &World,
    entity: Entity,
    registry: &TypeRegistry,
) -> EntitySnapshot {
    let mut components = BTreeMap::new();
    let mut unread = BTreeSet::new();
    let name = world
        .get::<Name>(entity)
        .map(|name| name.as_str().to_owned());
    let Ok(entity_ref) = world.get_entity(entity) else {
        return EntitySnapshot {
            name,
            components,
            unread,
        };
    };
    let own = [
        world.component_id::<HeldOutOfSight>(),
        world.component_id::<BridgeOwned>(),
    ];
    for id in entity_ref.archetype().components().iter().copied() {
        if own.contains(&Some(id)) {
            continue;
        }
        let registration = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
            .filter(|registration| registration.data::<ReflectComponent>().is_some());
        let Some(registration) = registration else {
            let label = names::component_label(world, id);
            if names::is_unnamed(&label) || tracked(&label) {
                unread.insert(label);
            }
            continue;
        };
        let type_path = registration.type_info().type_path();
        if !tracked(type_path) {
            continue;
        }
        match component_value(world, entity, registration, registry) {
            Some(Ok(value)) => {
                components.insert(type_path.to_owned(), value);
            }
            _ => {
                unread.insert(type_path.to_owned());
            }
        }
    }
    EntitySnapshot {
        name,
        components,
        unread,
    }
}

/// One component of an entity as JSON: `None` when absent (or not a component).
pub(crate) fn component_value(
    world: &World,
    entity: Entity,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Result<Value, BridgeError>> {
    let component = registration.data::<ReflectComponent>()?;
    values::component_json(world.get_entity(entity).ok()?, component, registry)
}

/// The length of a value's compact JSON, counted without building the text.
fn json_bytes(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` into an infallible writer cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

impl EntitySnapshot {
    /// What it holds, as JSON bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.components.values().map(json_bytes).sum()
    }
}

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
        changes: BTreeMap<String, Change<Value>>,
    },
}

/// What differs between two states of (part of) the world, keyed by entity bits and type paths.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Delta {
    /// By entity bits, as they were when the delta was made.
    pub entities: BTreeMap<u64, EntityChange>,
    /// Type path to change.
    pub resources: BTreeMap<String, Change<Value>>,
    /// Game time, when it changed.
    pub time: Option<Change<TimeState>>,
}

/// Keys only in `after`, keys only in `before`, and keys in both whose values differ.
pub(crate) fn value_changes(
    before: &BTreeMap<String, Value>,
    after: &BTreeMap<String, Value>,
) -> BTreeMap<String, Change<Value>> {
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
            let was = before.entities.get(bits).map(|(_, held)| held);
            let is = after.entities.get(bits).map(|(_, held)| held);
            if let Some(change) = EntityChange::between(was, is) {
                entities.insert(*bits, change);
            }
        }
        let resources = value_changes(&before.resources, &after.resources);
        Delta {
            entities,
            resources,
            time: None,
        }
    }

    /// Whether nothing differs.
    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty() && self.resources.is_empty() && self.time.is_none()
    }

    /// What it holds, as JSON bytes.
    pub(crate) fn bytes(&self) -> usize {
        let change_bytes = |change: &Change<Value>| {
            change.before.as_ref().map_or(0, json_bytes)
                + change.after.as_ref().map_or(0, json_bytes)
        };
        let entities: usize = self
            .entities
            .values()
            .map(|change| match change {
                EntityChange::Whole(change) => {
                    change.before.as_ref().map_or(0, EntitySnapshot::bytes)
                        + change.after.as_ref().map_or(0, EntitySnapshot::bytes)
                }
                EntityChange::Components { changes, .. } => {
                    changes.values().map(change_bytes).sum()
                }
            })
            .sum();
        entities + self.resources.values().map(change_bytes).sum::<usize>()
    }

    /// A short sentence saying what changed, for a journal listing.
    pub(crate) fn summary(&self) -> String {
        let mut parts = Vec::new();
        let label = |bits: &u64, name: Option<&String>| {
            let entity = Entity::try_from_bits(*bits)
                .map_or_else(|| bits.to_string(), |entity| entity.to_string());
            match name {
                Some(name) => format!("{name} ({entity})"),
                None => entity,
            }
        };
        let mut spawned = Vec::new();
        let mut despawned = Vec::new();
        let mut changed = Vec::new();
        for (bits, change) in &self.entities {
            match change {
                EntityChange::Whole(Change {
                    before: None,
                    after: Some(after),
                }) => spawned.push(label(bits, after.name.as_ref())),
                EntityChange::Whole(Change {
                    before: Some(before),
                    ..
                }) => despawned.push(label(bits, before.name.as_ref())),
                EntityChange::Whole(_) => {}
                EntityChange::Components { name, changes } => changed.push(format!(
                    "{}: {}",
                    label(bits, name.as_ref()),
                    changes
                        .keys()
                        .map(|path| short(path))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        for (verb, list) in [
            ("spawned", spawned),
            ("despawned", despawned),
            ("changed", changed),
        ] {
            if let Some(first) = list.first() {
                parts.push(match list.len() {
                    1 => format!("{verb} {first}"),
                    count => format!("{verb} {first} and {} more", count - 1),
                });
            }
        }
        if !self.resources.is_empty() {
            let names: Vec<&str> = self.resources.keys().map(|path| short(path)).collect();
            parts.push(format!("resources {}", names.join(", ")));
        }
        if let Some(Change {
            before: Some(before),
            after: Some(after),
        }) = &self.time
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

impl EntityChange {
    /// How an entity differs between two snapshots of it (`None` where it did not exist).
    pub(crate) fn between(
        before: Option<&EntitySnapshot>,
        after: Option<&EntitySnapshot>,
    ) -> Option<EntityChange> {
        match (before, after) {
            (None, None) => None,
            (Some(before), Some(after)) => {
                let changes = value_changes(&before.components, &after.components);
                (!changes.is_empty()).then(|| EntityChange::Components {
                    name: after.name.clone().or_else(|| before.name.clone()),
                    changes,
                })
            }
            (before, after) => Some(EntityChange::Whole(Change {
                before: before.cloned(),
                after: after.cloned(),
            })),
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
    fn value(&self, type_path: &str, value: &Value) -> Value {
        match value.as_u64() {
            Some(bits) if type_path == CHILD_OF => json!(self.current(bits)),
            _ => value.clone(),
        }
    }

    fn snapshot(&self, held: &EntitySnapshot) -> EntitySnapshot {
        EntitySnapshot {
            name: held.name.clone(),
            unread: held.unread.clone(),
            components: held
                .components
                .iter()
                .map(|(path, value)| (path.clone(), self.value(path, value)))
                .collect(),
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

/// The world as a run of undo (or redo) steps will have left it, before any step is applied:
/// each step is checked against what the steps before it will have made, so a run is refused
/// whole or applied whole.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    wholes: HashMap<u64, Option<EntitySnapshot>>,
    components: HashMap<(u64, String), Option<Value>>,
    resources: HashMap<String, Option<Value>>,
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
        let mut held = match planned.wholes.get(&key) {
            Some(held) => held.clone(),
            None => Entity::try_from_bits(key)
                .filter(|entity| is_present(self.world, *entity))
                .map(|entity| entity_snapshot(self.world, entity, self.registry)),
        }?;
        for ((bits, path), value) in &planned.components {
            if *bits != key {
                continue;
            }
            match value {
                Some(value) => held.components.insert(path.clone(), value.clone()),
                None => held.components.remove(path),
            };
        }
        Some(held)
    }

    fn component(&self, planned: &Planned, key: u64, type_path: &str) -> Option<Value> {
        if let Some(value) = planned.components.get(&(key, type_path.to_owned())) {
            return value.clone();
        }
        if let Some(held) = planned.wholes.get(&key) {
            return held.as_ref()?.components.get(type_path).cloned();
        }
        let entity = Entity::try_from_bits(key).filter(|entity| is_present(self.world, *entity))?;
        let registration = self.registry.get_with_type_path(type_path)?;
        component_value(self.world, entity, registration, self.registry)?.ok()
    }

    fn resource(&self, planned: &Planned, type_path: &str) -> Option<Value> {
        if let Some(value) = planned.resources.get(type_path) {
            return value.clone();
        }
        let registration = self.registry.get_with_type_path(type_path)?;
        resource_json(self.world, registration, self.registry).ok()
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
    held.map_or(Value::Null, |held| json!(held.components))
}

impl Planned {
    /// Checks that the world (as the steps planned before will have left it) holds `delta`'s
    /// `expect` side, then plans the other side. Returns what differs.
    pub(crate) fn step(&mut self, world: &World, delta: &Delta, expect: Side) -> Vec<Conflict> {
        let registry = names::registry(world);
        let registry = registry.read();
        let reader = Reader {
            world,
            registry: &registry,
            ids: Ids::of(world),
        };
        let target = expect.other();
        let mut conflicts = Vec::new();
        for (bits, change) in &delta.entities {
            let key = reader.ids.current(*bits);
            match change {
                EntityChange::Whole(change) => {
                    let expected = change.side(expect).map(|held| reader.ids.snapshot(held));
                    let current = reader.whole(self, key);
                    let same = match (&expected, &current) {
                        (Some(expected), Some(current)) => {
                            expected.components == current.components
                        }
                        (None, None) => true,
                        _ => false,
                    };
                    if !same {
                        let name = expected
                            .as_ref()
                            .or(current.as_ref())
                            .and_then(|held| held.name.as_ref());
                        conflicts.push(Conflict {
                            what: entity_label(key, name),
                            expected: snapshot_json(expected.as_ref()),
                            current: snapshot_json(current.as_ref()),
                        });
                    }
                    let planned = change.side(target).map(|held| reader.ids.snapshot(held));
                    self.components.retain(|(bits, _), _| *bits != key);
                    self.wholes.insert(key, planned);
                }
                EntityChange::Components { name, changes } => {
                    for (type_path, change) in changes {
                        let expected = change
                            .side(expect)
                            .map(|value| reader.ids.value(type_path, value));
                        let current = reader.component(self, key, type_path);
                        if expected != current {
                            conflicts.push(Conflict {
                                what: format!(
                                    "{}, component {type_path}",
                                    entity_label(key, name.as_ref())
                                ),
                                expected: expected.unwrap_or(Value::Null),
                                current: current.unwrap_or(Value::Null),
                            });
                        }
                        let planned = change
                            .side(target)
                            .map(|value| reader.ids.value(type_path, value));
                        self.components.insert((key, type_path.clone()), planned);
                    }
                }
            }
        }
        for (type_path, change) in &delta.resources {
            let expected = change.side(expect).cloned();
            let current = reader.resource(self, type_path);
            if expected != current {
                conflicts.push(Conflict {
                    what: format!("resource {type_path}"),
                    expected: expected.unwrap_or(Value::Null),
                    current: current.unwrap_or(Value::Null),
                });
            }
            self.resources
                .insert(type_path.clone(), change.side(target).cloned());
        }
        if let Some(change) = &delta.time {
            let expected = change.side(expect).copied();
            let current = reader.time(self);
            if expected != current {
                conflicts.push(Conflict {
                    what: "game time".to_owned(),
                    expected: expected.map_or(Value::Null, |time| time.json()),
                    current: current.map_or(Value::Null, |time| time.json()),
                });
            }
            self.time = change.side(target).copied();
        }
        conflicts
    }
}

/// Most hierarchy problems one refusal lists.
const MAX_REPORTED: usize = 8;

impl Planned {
    /// Where the world, as the planned steps will have left it, would hold a parent loop or a
    /// hierarchy more than `limit` levels deep (the first few found): undo and redo are ordinary writes, and no
    /// ordinary write may make either.
    pub(crate) fn hierarchy_conflicts(&self, world: &World, limit: usize) -> Vec<Conflict> {
        let mut planned: HashMap<u64, Option<u64>> = HashMap::new();
        for (key, whole) in &self.wholes {
            let parent = whole
                .as_ref()
                .and_then(|held| held.components.get(CHILD_OF))
                .and_then(Value::as_u64);
            planned.insert(*key, parent);
        }
        for ((key, path), value) in &self.components {
            if path == CHILD_OF {
                planned.insert(*key, value.as_ref().and_then(Value::as_u64));
            }
        }
        let parent_of = |bits: u64| match planned.get(&bits) {
            Some(parent) => *parent,
            None => Entity::try_from_bits(bits)
                .filter(|entity| is_present(world, *entity))
                .and_then(|entity| hierarchy::parent_of(world, entity))
                .map(Entity::to_bits),
        };
        // A parent must be in the world as the steps leave it: a child of a held (or gone)
        // entity would hang under something the game cannot see.
        let present = |bits: u64| match self.wholes.get(&bits) {
            Some(planned) => planned.is_some(),
            None => Entity::try_from_bits(bits).is_some_and(|entity| is_present(world, entity)),
        };
        let mut conflicts = Vec::new();
        for (key, parent) in &planned {
            let (Some(parent), true) = (parent, present(*key)) else {
                continue;
            };
            if !present(*parent) && conflicts.len() < MAX_REPORTED {
                conflicts.push(Conflict {
                    what: format!(
                        "{} would hang under {}, which is not in the world now",
                        entity_label(*key, None),
                        entity_label(*parent, None)
                    ),
                    expected: json!("a parent in the world"),
                    current: json!(null),
                });
            }
        }
        // Levels (entities from the root down) of every entity walked, each walked once.
        let mut levels: HashMap<u64, usize> = HashMap::new();
        for key in planned.keys() {
            if conflicts.len() >= MAX_REPORTED {
                break;
            }
            let mut path = Vec::new();
            let mut on_path = std::collections::HashSet::new();
            let mut current = Some(*key);
            let mut level = 0;
            while let Some(step) = current {
                if let Some(known) = levels.get(&step) {
                    level = *known;
                    break;
                }
                if !on_path.insert(step) {
                    conflicts.push(Conflict {
                        what: format!(
                            "{} would be below itself (a parent loop through {})",
                            entity_label(*key, None),
                            entity_label(step, None)
                        ),
                        expected: json!("a hierarchy without loops"),
                        current: json!(path.len()),
                    });
                    path.clear();
                    break;
                }
                path.push(step);
                current = parent_of(step);
            }
            for step in path.into_iter().rev() {
                level += 1;
                levels.insert(step, level);
            }
            let Some(level) = levels.get(key).copied() else {
                continue;
            };
            // A present entity keeps what hangs below it.
            let below = Entity::try_from_bits(*key)
                .filter(|entity| is_present(world, *entity) && planned[key].is_some())
                .map_or(0, |entity| hierarchy::height_of(world, entity));
            if level + below > limit {
                conflicts.push(Conflict {
                    what: format!(
                        "{} would be more than {limit} levels deep",
                        entity_label(*key, None)
                    ),
                    expected: json!(format!("at most {limit} levels")),
                    current: json!(level + below),
                });
            }
        }
        conflicts
    }
}

/// What [`apply`] did.
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
}

/// A component value to write, checked before anything changes.
struct Write<'r> {
    /// The entity as the delta holds it (bits).
    key: u64,
    component: &'r ReflectComponent,
    value: Box<dyn Reflect>,
}

/// Makes the world hold `delta`'s `side`. Every value is read back from JSON and checked before
/// anything changes: a value that no longer fits its type refuses the whole call. Types the write
/// policy protects are left as they are (the parent relation aside: it is remapped and written
/// here, and the held hierarchy had no loop), as are game states (they change through
/// transitions); both are listed in `not_restored`. Does not check what the world holds now:
/// callers do that first ([`Planned::step`]) unless asked to force.
pub(crate) fn apply(world: &mut World, delta: &Delta, side: Side) -> Result<Applied, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let ids = Ids::owned(world);
    let mut applied = Applied::default();

    let mut not_restored: BTreeMap<String, String> = BTreeMap::new();
    let writable = |type_path: &str, not_restored: &mut BTreeMap<String, String>| {
        let found = registry
            .get_with_type_path(type_path)
            .and_then(|registration| {
                Some((registration, registration.data::<ReflectComponent>()?))
            });
        let Some(found) = found else {
            not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| "no longer registered".to_owned());
            return None;
        };
        let protection = (type_path != CHILD_OF)
            .then(|| policy.protection(world, found.0))
            .flatten();
        if let Some(protection) = protection {
            not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| format!("protected: {}", protection.reason));
            return None;
        }
        Some(found)
    };
    let checked = |registration: &TypeRegistration, type_path: &str, value: &Value| {
        let value =
            values::concrete_from_json(registration, &registry, &ids.value(type_path, value))?;
        if type_path != CHILD_OF {
            policy.check_value(world, registration, value.as_partial_reflect())?;
        }
        Ok::<_, BridgeError>(value)
    };

    let mut despawn: Vec<Entity> = Vec::new();
    let mut bring_back: Vec<Entity> = Vec::new();
    let mut respawn: Vec<u64> = Vec::new();
    let mut writes: Vec<Write> = Vec::new();
    let mut removals: Vec<(u64, &ReflectComponent)> = Vec::new();
    for (bits, change) in &delta.entities {
        let live = ids.live(world, *bits);
        // The rule every entity action keeps: resource entities and observers are not touched.
        if let Some(entity) = live
            && world::require_plain_entity(world, entity).is_err()
        {
            not_restored.insert(
                format!("entity {entity}"),
                "it is a resource entity or an observer now; entity actions leave those alone"
                    .to_owned(),
            );
            continue;
        }
        let (wanted, current): (BTreeMap<&String, &Value>, BTreeMap<String, Value>) = match change {
            EntityChange::Whole(change) => match (change.side(side), live) {
                (None, Some(entity)) => {
                    despawn.push(entity);
                    continue;
                }
                (None, None) => continue,
                (Some(held), live) => {
                    let current = match (live, ids.held(world, *bits)) {
                        (Some(entity), _) => entity_snapshot(world, entity, &registry).components,
                        // Held out of sight: it comes back whole, under the same id.
                        (None, Some(entity)) => {
                            bring_back.push(entity);
                            entity_snapshot(world, entity, &registry).components
                        }
                        (None, None) => {
                            respawn.push(*bits);
                            let label = entity_label(ids.current(*bits), held.name.as_ref());
                            for lost in &held.unread {
                                not_restored.entry(lost.clone()).or_insert_with(|| {
                                    format!(
                                        "not brought back on {label}: it was despawned outside the bridge (or held too long), so only its reflected values came back under a new id"
                                    )
                                });
                            }
                            BTreeMap::new()
                        }
                    };
                    for type_path in current
                        .keys()
                        .filter(|path| !held.components.contains_key(*path))
                    {
                        if let Some((_, component)) = writable(type_path, &mut not_restored) {
                            removals.push((*bits, component));
                        }
                    }
                    (held.components.iter().collect(), current)
                }
            },
            EntityChange::Components { name, changes } => {
                let Some(entity) = live else {
                    not_restored.insert(
                        entity_label(ids.current(*bits), name.as_ref()),
                        "the entity no longer exists".to_owned(),
                    );
                    continue;
                };
                let mut wanted = BTreeMap::new();
                let mut current = BTreeMap::new();
                for (type_path, change) in changes {
                    let Some(found) = writable(type_path, &mut not_restored) else {
                        continue;
                    };
                    let now =
                        component_value(world, entity, found.0, &registry).and_then(Result::ok);
                    match change.side(side) {
                        Some(value) => {
                            wanted.insert(type_path, value);
                            if let Some(now) = now {
                                current.insert(type_path.clone(), now);
                            }
                        }
                        None if now.is_some() => removals.push((*bits, found.1)),
                        None => {}
                    }
                }
                (wanted, current)
            }
        };
        for (type_path, value) in wanted {
            if current.get(type_path) == Some(&ids.value(type_path, value)) {
                continue;
            }
            let Some((registration, component)) = writable(type_path, &mut not_restored) else {
                continue;
            };
            writes.push(Write {
                key: *bits,
                component,
                value: checked(registration, type_path, value)?,
            });
        }
    }
    let mut resource_writes = Vec::new();
    let mut resource_removals = Vec::new();
    for (type_path, change) in &delta.resources {
        if type_path.starts_with(STATE_PREFIX) {
            not_restored.insert(
                type_path.clone(),
                "a game state changes only through a transition; use state.set".to_owned(),
            );
            continue;
        }
        let Some((registration, component)) = writable(type_path, &mut not_restored) else {
            continue;
        };
        let now = resource_json(world, registration, &registry).ok();
        match change.side(side) {
            Some(value) if now.as_ref() != Some(value) => {
                resource_writes.push((
                    registration,
                    component,
                    checked(registration, type_path, value)?,
                ));
            }
            None if now.is_some() => resource_removals.push(registration),
            _ => {}
        }
    }
    let time = delta
        .time
        .as_ref()
        .and_then(|change| change.side(side).copied());

    // Nothing has changed so far; from here on every step is one the checks above allowed.
    // Children of an entity that goes, and that do not go with it, are detached first so they
    // stay in the world.
    let going: BTreeSet<Entity> = despawn.iter().copied().collect();
    let mut detach = Vec::new();
    for entity in &despawn {
        for child in hierarchy::children_of(world, *entity) {
            if !going.contains(&child) {
                detach.push(child);
            }
        }
    }
    for child in detach {
        if let Ok(mut entity_mut) = world.get_entity_mut(child) {
            entity_mut.remove::<ChildOf>();
        }
    }
    // What goes is held out of sight (so a later undo brings it back whole), or despawned
    // leaf-first where the history keeps no holding area.
    if world.contains_resource::<holding::HoldingArea>() {
        holding::hold(world, &despawn);
    } else {
        holding::despawn_leaf_first(world, &despawn);
    }
    applied.despawned += despawn.len();
    for entity in bring_back {
        if holding::bring_back(world, entity) {
            applied.brought_back += 1;
        }
    }
    for bits in respawn {
        applied.respawned.insert(bits, world.spawn_empty().id());
    }
    let live = |world: &World, bits: u64| {
        applied
            .respawned
            .get(&bits)
            .copied()
            .or_else(|| ids.live(world, bits))
    };
    for (bits, component) in removals {
        if let Some(mut entity_mut) =
            live(world, bits).and_then(|entity| world.get_entity_mut(entity).ok())
        {
            component.remove(&mut entity_mut);
            applied.components_removed += 1;
        }
    }
    // Parents last: every entity a parent names exists by then.
    writes.sort_by_key(|write| write.value.reflect_type_path() == CHILD_OF);
    for write in writes {
        let Some(entity) = live(world, write.key) else {
            continue;
        };
        let mut value = write.value;
        if let Some(child_of) = value.downcast_mut::<ChildOf>()
            && let Some(parent) = applied.respawned.get(&child_of.parent().to_bits())
        {
            *child_of = ChildOf(*parent);
        }
        if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
            write
                .component
                .insert(&mut entity_mut, value.as_partial_reflect(), &registry);
            applied.components_written += 1;
        }
    }
    for (registration, component, value) in resource_writes {
        let entity = resource_slot(world, registration);
        if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
            component.insert(&mut entity_mut, value.as_partial_reflect(), &registry);
            applied.resources_written += 1;
        }
    }
    for registration in resource_removals {
        if resource_entity(world, registration).is_ok()
            && names::component_id(world, registration.type_id())
                .is_some_and(|id| world.remove_resource_by_id(id))
        {
            applied.resources_removed += 1;
        }
    }
    if let (Some(time), Some(mut virtual_time)) = (time, world.get_resource_mut::<Time<Virtual>>())
    {
        if time.paused {
            virtual_time.pause();
        } else {
            virtual_time.unpause();
        }
        virtual_time.set_relative_speed_f64(time.speed);
    }
    forget_readded(
        world,
        &registry,
        delta,
        side,
        &applied.respawned,
        &mut not_restored,
    );
    applied.not_restored = not_restored;
    Ok(applied)
}

/// Drops from `not_restored` the protected components that every entity brought back holds
/// again anyway: Bevy adds required components (a transform's `GlobalTransform` and
/// `TransformTreeChanged`) when the components that require them come back.
fn forget_readded(
    world: &World,
    registry: &TypeRegistry,
    delta: &Delta,
    side: Side,
    respawned: &BTreeMap<u64, Entity>,
    not_restored: &mut BTreeMap<String, String>,
) {
    not_restored.retain(|type_path, reason| {
        if !reason.starts_with("protected") {
            return true;
        }
        let Some(id) = registry
            .get_with_type_path(type_path)
            .and_then(|registration| world.components().get_id(registration.type_id()))
        else {
            return true;
        };
        let mut holders = delta
            .entities
            .iter()
            .filter_map(|(bits, change)| match change {
                EntityChange::Whole(change) => change
                    .side(side)
                    .filter(|held| held.components.contains_key(type_path))
                    .map(|_| *bits),
                EntityChange::Components { .. } => None,
            })
            .peekable();
        if holders.peek().is_none() {
            return true;
        }
        !holders.all(|bits| {
            respawned
                .get(&bits)
                .and_then(|entity| world.get_entity(*entity).ok())
                .is_some_and(|entity| entity.contains_id(id))
        })
    });
}

/// Checks that every value `delta`'s `side` would write still reads as its type and passes the
/// write policy, without changing anything: a run of steps is checked whole before its first
/// step is applied.
pub(crate) fn check_values(world: &World, delta: &Delta, side: Side) -> Result<(), BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let ids = Ids::of(world);
    let check = |type_path: &str, value: &Value| {
        let Some(registration) = registry.get_with_type_path(type_path) else {
            return Ok(());
        };
        if type_path == CHILD_OF || type_path.starts_with(STATE_PREFIX) {
            return Ok(());
        }
        if policy.protection(world, registration).is_some() {
            return Ok(());
        }
        let value =
            values::concrete_from_json(registration, &registry, &ids.value(type_path, value))?;
        policy.check_value(world, registration, value.as_partial_reflect())
    };
    for change in delta.entities.values() {
        match change {
            EntityChange::Whole(change) => {
                if let Some(held) = change.side(side) {
                    for (type_path, value) in &held.components {
                        check(type_path, value)?;
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
    Ok(())
}
