//! The world as held values: each entity's tracked components serialized once, as one compact
//! JSON object ([`EntitySnapshot`]), and whole-world [`Snapshot`]s read a slice at a time
//! ([`SnapshotScan`]).
//!
//! Values are held as JSON text, not as trees of `serde_json::Value`: a tree took about 24 times
//! the bytes of its text, so a checkpoint's bound said little of what it occupied. Text is also
//! what is compared (an entity that did not change reads to the same text), and it is parsed only
//! where a value is shown or written back. Every text here comes from serializing a value the
//! world held (never from a caller's JSON), so equal values are equal texts.
//!
//! State that changes by itself every frame (clocks, input, diagnostics, window and render
//! bookkeeping, `GlobalTransform`, which follows `Transform`) is not held: it would make every
//! comparison differ without anyone changing anything. Nor is what Bevy computes from other
//! components (text and UI layout, visibility, bounds): a restore writes what it follows, and
//! Bevy computes it again.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bevy::asset::UntypedHandle;
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::change_detection::{MAX_CHANGE_AGE, Tick};
use bevy::ecs::component::ComponentId;
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::prelude::{Entity, World};
use bevy::reflect::{TypeRegistration, TypeRegistry};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::handles::KeptByHistory;
use crate::reflect::json;
use crate::reflect::names;
use crate::reflect::world::{PlainIndex, bridge_markers, frame, resource_entity};
use crate::runtime::retire::FreedOverFrames;
use crate::runtime::slices::Slice;

/// Type paths never held: they change by themselves every frame, or Bevy computes them from
/// other components (a restore that wrote a `Text` lets Bevy lay it out again; listing its old
/// layout as not restored said something wrong).
const UNTRACKED_PREFIXES: [&str; 19] = [
    "bevy_time::",
    "bevy_input::",
    "bevy_diagnostic::",
    "bevy_window::",
    "bevy_winit::",
    "bevy_render::",
    "bevy_extract::",
    "bevy_picking::",
    "bevy_log::",
    "bevy_tasks::",
    "bevy_asset::",
    "bevy_app::",
    "bevy_transform::components::global_transform::",
    "bevy_text::pipeline::TextLayoutInfo",
    "bevy_text::text::ComputedTextBlock",
    "bevy_ui::ui_node::Computed",
    "bevy_camera::visibility::InheritedVisibility",
    "bevy_camera::visibility::ViewVisibility",
    "bevy_camera::primitives::Aabb",
];

/// The parent relation: its value names an entity, which a respawned parent renames.
pub(crate) const CHILD_OF: &str = "bevy_ecs::hierarchy::ChildOf";
/// An entity's name.
const NAME: &str = "bevy_ecs::name::Name";
/// Engine bookkeeping kept anyway: the name and the parent of an entity.
const TRACKED_EXCEPTIONS: [&str; 2] = [NAME, CHILD_OF];

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

/// One value as compact JSON text.
#[derive(Clone)]
pub(crate) struct Raw(Box<RawValue>);

impl Raw {
    /// `value` as text.
    pub(crate) fn of(value: &Value) -> Raw {
        // A `Value` always serializes (its keys are strings).
        Raw(serde_json::value::to_raw_value(value).unwrap_or_default())
    }

    /// Text the bridge wrote itself (valid JSON).
    fn from_text(text: Vec<u8>) -> Result<Raw, BridgeError> {
        let text = String::from_utf8(text).map_err(|error| BridgeError::NotSerializable {
            type_path: "a value".to_owned(),
            reason: error.to_string(),
        })?;
        RawValue::from_string(text)
            .map(Raw)
            .map_err(|error| BridgeError::NotSerializable {
                type_path: "a value".to_owned(),
                reason: error.to_string(),
            })
    }

    fn from_raw(raw: &RawValue) -> Raw {
        Raw(raw.to_owned())
    }

    /// The text.
    pub(crate) fn text(&self) -> &str {
        self.0.get()
    }

    /// The value, parsed.
    pub(crate) fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The value when it is an unsigned integer (an entity's bits).
    pub(crate) fn as_u64(&self) -> Option<u64> {
        self.0.get().parse().ok()
    }

    /// Its length.
    pub(crate) fn bytes(&self) -> usize {
        self.0.get().len()
    }
}

impl PartialEq for Raw {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// One entity's tracked reflected components, serialized once, and the names of the components
/// it has whose values cannot be held.
#[derive(Debug, Clone)]
pub(crate) struct EntitySnapshot {
    /// Type path to value, as one compact JSON object sorted by type path (shared, so a
    /// checkpoint and the journal entry of a restore hold one copy).
    json: Arc<str>,
    /// Components it has that are not held as values (not reflected, or not readable as JSON,
    /// such as ones holding asset handles), by the name Bevy knows: a difference compares them
    /// as a set, and what cannot come back is named.
    pub unread: BTreeSet<String>,
    /// When it was read from the world, if it was: what has not changed since need not be read
    /// again to be compared.
    read: Option<ReadAt>,
}

/// When an entity was read: its archetype then, and the world's change tick.
#[derive(Debug, Clone, Copy)]
struct ReadAt {
    archetype: ArchetypeId,
    tick: Tick,
}

impl PartialEq for EntitySnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json && self.unread == other.unread
    }
}

impl Default for EntitySnapshot {
    fn default() -> Self {
        EntitySnapshot {
            json: Arc::from("{}"),
            unread: BTreeSet::new(),
            read: None,
        }
    }
}

impl EntitySnapshot {
    /// An entity holding these values.
    pub(crate) fn from_values<'a>(
        values: impl IntoIterator<Item = (&'a str, &'a RawValue)>,
        unread: BTreeSet<String>,
    ) -> EntitySnapshot {
        let values: BTreeMap<&str, &RawValue> = values.into_iter().collect();
        EntitySnapshot {
            json: Arc::from(serde_json::to_string(&values).unwrap_or_else(|_| "{}".to_owned())),
            unread,
            read: None,
        }
    }

    /// Type path to value, borrowed from the held text.
    pub(crate) fn entries(&self) -> BTreeMap<&str, &RawValue> {
        // The text was written from such a map; type paths need no escapes.
        serde_json::from_str(&self.json).unwrap_or_default()
    }

    /// Type path to value, owned.
    pub(crate) fn values(&self) -> BTreeMap<String, Raw> {
        self.entries()
            .into_iter()
            .map(|(path, value)| (path.to_owned(), Raw::from_raw(value)))
            .collect()
    }

    /// The value of one component.
    pub(crate) fn get(&self, type_path: &str) -> Option<Raw> {
        // Most lookups (a parent, on entities that have none) find nothing: a text search says
        // so without parsing.
        if !self.json.contains(type_path) {
            return None;
        }
        self.entries()
            .get(type_path)
            .map(|value| Raw::from_raw(value))
    }

    /// Whether it holds a value of this component.
    pub(crate) fn holds(&self, type_path: &str) -> bool {
        self.json.contains(type_path) && self.entries().contains_key(type_path)
    }

    /// Its `Name`, for people reading a difference.
    pub(crate) fn name(&self) -> Option<String> {
        let entries = self.entries();
        serde_json::from_str(entries.get(NAME)?.get()).ok()
    }

    /// Whether it holds the same values as `other` (unread components aside).
    pub(crate) fn same_values(&self, other: &EntitySnapshot) -> bool {
        self.json == other.json
    }

    /// The values as a JSON object, for a reply.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    /// The same entity with some values replaced (`Some`) or taken away (`None`).
    pub(crate) fn with(&self, changes: &BTreeMap<String, Option<Raw>>) -> EntitySnapshot {
        if changes.is_empty() {
            return self.clone();
        }
        let mut entries = self.entries();
        for (path, value) in changes {
            match value {
                Some(value) => entries.insert(path.as_str(), &value.0),
                None => entries.remove(path.as_str()),
            };
        }
        EntitySnapshot::from_values(entries, self.unread.clone())
    }

    /// What it holds, as serialized bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.json.len() + self.unread.iter().map(String::len).sum::<usize>()
    }
}

/// The world over the frames it was read in: every plain entity and every tracked resource.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    /// The frame reading began in.
    pub first_frame: u64,
    /// The frame it was finished in.
    pub frame: u64,
    /// By entity bits.
    pub entities: BTreeMap<u64, EntitySnapshot>,
    /// Type path to value.
    pub resources: BTreeMap<String, Raw>,
    /// The game's own resources it could not hold, by the name Bevy knows (see
    /// [`unheld_resources`]).
    pub unheld_resources: BTreeSet<String>,
    /// What it holds, as serialized bytes.
    pub bytes: usize,
    /// Parent bits to the keys of the entities whose held `ChildOf` names it: renaming a
    /// respawned parent then touches its children only, not every entity of the world.
    children: BTreeMap<u64, BTreeSet<u64>>,
}

impl Snapshot {
    /// Frees a snapshot no one else holds on the game thread over the next frames (see
    /// [`FreedOverFrames`]); one still shared (a restore reading it) is only let go of.
    pub(crate) fn free_over_frames(snapshot: Arc<Snapshot>, world: &mut World) {
        if let Ok(snapshot) = Arc::try_unwrap(snapshot) {
            FreedOverFrames::hand_over_items(world, snapshot.entities);
            FreedOverFrames::hand_over_items(world, snapshot.children);
        }
    }

    /// Follows entities that came back under new ids: their keys, and the parent held by each
    /// of their children. Costs what the respawned entities and their children hold, whatever
    /// the size of the snapshot (a whole-world walk here held a frame for 25 ms at 100,000).
    pub(crate) fn follow_respawned(&mut self, respawned: &BTreeMap<u64, Entity>) {
        let mut moved = Vec::new();
        for (old, new) in respawned {
            let Some(held) = self.entities.remove(old) else {
                continue;
            };
            let new = new.to_bits();
            // Its own place among its parent's children follows its new key.
            if let Some(siblings) =
                parent_of(&held).and_then(|parent| self.children.get_mut(&parent))
            {
                siblings.remove(old);
                siblings.insert(new);
            }
            moved.push((new, held));
        }
        self.entities.extend(moved);
        for (old, new) in respawned {
            let Some(children) = self.children.remove(old) else {
                continue;
            };
            let new = new.to_bits();
            let parent = BTreeMap::from([(CHILD_OF.to_owned(), Some(Raw::of(&json!(new))))]);
            for child in &children {
                if let Some(held) = self.entities.get_mut(child) {
                    *held = held.with(&parent);
                }
            }
            self.children.insert(new, children);
        }
    }
}

/// The parent an entity's held `ChildOf` names.
fn parent_of(held: &EntitySnapshot) -> Option<u64> {
    held.get(CHILD_OF).and_then(|parent| parent.as_u64())
}

/// How the components of one archetype are read: decided once per archetype, not per entity.
struct ArchetypeReading<'r> {
    /// Held components, sorted by type path.
    held: Vec<(&'static str, &'r ReflectComponent, ComponentId)>,
    /// Components that are not reflected, by the name Bevy knows.
    unreflected: Vec<String>,
}

/// Reads entities as [`EntitySnapshot`]s, deciding per archetype which components are held
/// (archetypes live as long as the world, so what it decided holds across changes of it).
pub(crate) struct EntityReader<'r> {
    registry: &'r TypeRegistry,
    archetypes: HashMap<ArchetypeId, ArchetypeReading<'r>>,
}

impl<'r> EntityReader<'r> {
    /// A reader with the types of `registry`.
    pub(crate) fn new(registry: &'r TypeRegistry) -> EntityReader<'r> {
        EntityReader {
            registry,
            archetypes: HashMap::new(),
        }
    }

    /// One entity's tracked components (empty when it does not exist).
    pub(crate) fn read(&mut self, world: &World, entity: Entity) -> EntitySnapshot {
        let Ok(entity_ref) = world.get_entity(entity) else {
            return EntitySnapshot::default();
        };
        let id = entity_ref.archetype().id();
        let registry = self.registry;
        let reading = self
            .archetypes
            .entry(id)
            .or_insert_with(|| archetype_reading(world, registry, id));
        let mut unread: BTreeSet<String> = reading.unreflected.iter().cloned().collect();
        let mut kept = Vec::new();
        let mut text = Vec::with_capacity(64 * reading.held.len() + 2);
        text.push(b'{');
        let mut first = true;
        for (type_path, component, _) in &reading.held {
            let before = text.len();
            if !first {
                text.push(b',');
            }
            // Writing a string into a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut text, type_path);
            text.push(b':');
            let written = component.reflect(entity_ref).is_some_and(|value| {
                json::write_json_keeping(value.as_partial_reflect(), registry, &mut text, &mut kept)
                    .is_ok()
            });
            if written {
                first = false;
            } else {
                text.truncate(before);
                unread.insert((*type_path).to_owned());
            }
        }
        text.push(b'}');
        keep_for_history(world, kept);
        EntitySnapshot {
            json: Arc::from(String::from_utf8(text).unwrap_or_else(|_| "{}".to_owned())),
            unread,
            read: Some(ReadAt {
                archetype: id,
                tick: world.read_change_tick(),
            }),
        }
    }

    /// Whether `entity` still holds what `held` read: the same components, none of them changed
    /// since (Bevy's change ticks). `false` when that cannot be told, so the caller reads it.
    pub(crate) fn unchanged(
        &mut self,
        world: &World,
        entity: Entity,
        held: &EntitySnapshot,
    ) -> bool {
        let (Some(read), Ok(entity_ref)) = (held.read, world.get_entity(entity)) else {
            return false;
        };
        let id = entity_ref.archetype().id();
        let now = world.read_change_tick();
        // Bevy clamps ticks older than this; a read that old cannot be compared by ticks.
        if id != read.archetype || now.get().wrapping_sub(read.tick.get()) > MAX_CHANGE_AGE / 2 {
            return false;
        }
        let registry = self.registry;
        let reading = self
            .archetypes
            .entry(id)
            .or_insert_with(|| archetype_reading(world, registry, id));
        reading.held.iter().all(|(_, _, component)| {
            entity_ref
                .get_change_ticks_by_id(*component)
                .is_some_and(|ticks| !ticks.is_changed(read.tick, now))
        })
    }
}

/// Moves the world's change tick on, so every change made after a read (by the bridge in the
/// same frame, or the game later) has a newer tick than the read.
fn after_reading(world: &World) {
    world
        .as_unsafe_world_cell_readonly()
        .increment_change_tick();
}

fn archetype_reading<'r>(
    world: &World,
    registry: &'r TypeRegistry,
    id: ArchetypeId,
) -> ArchetypeReading<'r> {
    let own = bridge_markers(world);
    let mut held = Vec::new();
    let mut unreflected = Vec::new();
    let Some(archetype) = world.archetypes().get(id) else {
        return ArchetypeReading { held, unreflected };
    };
    for component in archetype.components().iter().copied() {
        if own.contains(&component) {
            continue;
        }
        let registration = world
            .components()
            .get_info(component)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id));
        let reflect = registration.and_then(|registration| {
            Some((
                registration.type_info().type_path(),
                registration.data::<ReflectComponent>()?,
            ))
        });
        match reflect {
            Some((type_path, reflect)) => {
                if tracked(type_path) {
                    held.push((type_path, reflect, component));
                }
            }
            None => {
                let label = names::component_label(world, component);
                if names::is_unnamed(&label) || tracked(&label) {
                    unreflected.push(label);
                }
            }
        }
    }
    held.sort_by_key(|(type_path, _, _)| *type_path);
    ArchetypeReading { held, unreflected }
}

/// One entity's tracked components (empty when it does not exist).
pub(crate) fn entity_snapshot(
    world: &World,
    entity: Entity,
    registry: &TypeRegistry,
) -> EntitySnapshot {
    EntityReader::new(registry).read(world, entity)
}

/// One component of an entity as text: `None` when absent, or not a component; `Some(Err)`
/// when its value cannot be read as JSON.
pub(crate) fn read_raw(
    world: &World,
    entity: Entity,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Result<Raw, BridgeError>> {
    let component = registration.data::<ReflectComponent>()?;
    let value = component.reflect(world.get_entity(entity).ok()?)?;
    let mut text = Vec::new();
    let mut kept = Vec::new();
    let written =
        json::write_json_keeping(value.as_partial_reflect(), registry, &mut text, &mut kept);
    keep_for_history(world, kept);
    Some(written.and_then(|()| Raw::from_text(text)))
}

/// Hands the handles a value names only by id to [`KeptByHistory`], so what the history holds
/// can be given back after the game dropped them.
fn keep_for_history(world: &World, kept: Vec<UntypedHandle>) {
    if let Some(history) = world.get_resource::<KeptByHistory>() {
        history.keep(kept);
    }
}

/// One component of an entity as text: `None` when absent, unreadable, or not a component.
pub(crate) fn component_raw(
    world: &World,
    entity: Entity,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Raw> {
    read_raw(world, entity, registration, registry)?.ok()
}

/// A resource's value as text, when it has one that reads as JSON.
pub(crate) fn resource_raw(
    world: &World,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Raw> {
    let (entity, _) = resource_entity(world, registration).ok()?;
    component_raw(world, entity, registration, registry)
}

/// The game's own resources the world has whose values `held` (the resources as [`resources`]
/// read them) lacks, by the name Bevy knows: not reflected as resources, or not readable as JSON
/// (an asset handle, say). A checkpoint or an undo leaves them as they are, so a restore names
/// them instead of passing over them in silence (breakout's `Score` derives no `Reflect`).
pub(crate) fn unheld_resources(
    world: &World,
    registry: &TypeRegistry,
    held: &BTreeMap<String, Raw>,
) -> BTreeSet<String> {
    let mut unheld = BTreeSet::new();
    for (id, _) in world.resource_entities().iter() {
        let label = names::component_label(world, id);
        if names::is_unnamed(&label) || !names::is_games_own(&label) {
            continue;
        }
        let is_held = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
            .is_some_and(|registration| held.contains_key(registration.type_info().type_path()));
        if !is_held {
            unheld.insert(label);
        }
    }
    unheld
}

/// Why a resource [`unheld_resources`] names keeps its value: for a restore's or an undo's
/// `notRestored`.
pub(crate) fn unheld_resource_reason(registry: &TypeRegistry, label: &str) -> String {
    let reflected = registry
        .get_with_type_path(label)
        .is_some_and(|registration| registration.data::<ReflectResource>().is_some());
    if reflected {
        "a resource of the game whose value cannot be held as JSON (it holds an asset handle or another value without a serialized form): it keeps the value it has now, which may not match the rest of the world".to_owned()
    } else {
        format!(
            "a resource of the game that is not reflected, so its value could not be held: it keeps the value it has now, which may not match the rest of the world; to bring it back next time, {}",
            names::HOW_TO_REFLECT_RESOURCE
        )
    }
}

/// Every tracked resource's value.
fn resources(world: &World, registry: &TypeRegistry) -> BTreeMap<String, Raw> {
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
        if let Some(value) = resource_raw(world, registration, registry) {
            resources.insert(type_path.to_owned(), value);
        }
    }
    resources
}

/// Reads the whole world into a [`Snapshot`], a slice of entity indices at a time. Each entity is
/// held as it was in the frame its slice read it; entities spawned at indices already read are
/// not in it.
#[derive(Debug)]
pub(crate) struct SnapshotScan {
    limit: usize,
    next_index: u32,
    first_frame: u64,
    entities: BTreeMap<u64, EntitySnapshot>,
    children: BTreeMap<u64, BTreeSet<u64>>,
    bytes: usize,
}

impl SnapshotScan {
    /// A scan refused past `limit` serialized bytes.
    pub(crate) fn new(world: &World, limit: usize) -> SnapshotScan {
        SnapshotScan {
            limit,
            next_index: 0,
            first_frame: frame(world),
            entities: BTreeMap::new(),
            children: BTreeMap::new(),
            bytes: 0,
        }
    }

    /// Reads entities while the slice lasts; `true` once every index is read.
    pub(crate) fn advance(
        &mut self,
        world: &World,
        slice: &mut Slice,
    ) -> Result<bool, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        let plain = PlainIndex::of(world);
        let mut reader = EntityReader::new(&registry);
        while self.next_index < PlainIndex::len(world) && slice.more() {
            if let Some(entity) = plain.at(world, self.next_index) {
                let held = reader.read(world, entity);
                self.bytes += held.bytes();
                if self.bytes > self.limit {
                    return Err(BridgeError::CheckpointTooLarge {
                        bytes: self.bytes,
                        limit: self.limit,
                    });
                }
                if let Some(parent) = parent_of(&held) {
                    self.children
                        .entry(parent)
                        .or_default()
                        .insert(entity.to_bits());
                }
                self.entities.insert(entity.to_bits(), held);
            }
            self.next_index += 1;
        }
        after_reading(world);
        Ok(self.next_index >= PlainIndex::len(world))
    }

    /// `(indices read, indices there are)`, for progress.
    pub(crate) fn progress(&self, world: &World) -> (u32, u32) {
        (self.next_index, world.entities().len())
    }

    /// The snapshot, with the resources as they are now.
    pub(crate) fn finish(self, world: &World) -> Result<Snapshot, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        let resources = resources(world, &registry);
        let unheld_resources = unheld_resources(world, &registry, &resources);
        let bytes = self.bytes
            + resources.values().map(Raw::bytes).sum::<usize>()
            + unheld_resources.iter().map(String::len).sum::<usize>();
        if bytes > self.limit {
            return Err(BridgeError::CheckpointTooLarge {
                bytes,
                limit: self.limit,
            });
        }
        Ok(Snapshot {
            first_frame: self.first_frame,
            frame: frame(world),
            entities: self.entities,
            resources,
            unheld_resources,
            bytes,
            children: self.children,
        })
    }
}

/// How the world differs from a snapshot, for one entity.
#[derive(Debug)]
pub(crate) enum Difference {
    /// In the world, not in the snapshot.
    Added {
        /// Its bits.
        bits: u64,
        /// What it holds now.
        now: EntitySnapshot,
    },
    /// In the snapshot, not in the world (held out of sight, or gone).
    Removed {
        /// Its bits.
        bits: u64,
        /// What it held then.
        then: EntitySnapshot,
    },
    /// In both, holding other values or other unreadable components.
    Changed {
        /// Its bits.
        bits: u64,
        /// What it held then.
        then: EntitySnapshot,
        /// What it holds now.
        now: EntitySnapshot,
    },
}

/// Compares the world now with a snapshot, a slice at a time: first every plain entity of the
/// world (one that has not changed since the snapshot read it, by Bevy's change ticks, is not
/// read again), then every entity of the snapshot the world no longer shows.
#[derive(Debug)]
pub(crate) struct CompareScan {
    base: Arc<Snapshot>,
    next_index: u32,
    seen: HashSet<u64>,
    /// Past the world's entities: the snapshot's entities after this key are left to look at.
    missing_after: Option<Option<u64>>,
    /// The snapshot's entities looked at so far.
    looked: u64,
}

/// Entities of a snapshot looked at per unit of a slice when only their keys are compared.
const KEYS_PER_UNIT: usize = 32;

impl CompareScan {
    /// A comparison of the world with `base`.
    pub(crate) fn new(base: Arc<Snapshot>) -> CompareScan {
        CompareScan {
            // Sized once: growing a set of 100,000 keys rehashes it in one frame.
            seen: HashSet::with_capacity(base.entities.len()),
            base,
            next_index: 0,
            missing_after: None,
            looked: 0,
        }
    }

    /// Compares while the slice lasts, handing each difference to `found`; `true` once done.
    pub(crate) fn advance(
        &mut self,
        world: &World,
        slice: &mut Slice,
        found: &mut impl FnMut(Difference),
    ) -> bool {
        if self.missing_after.is_none() {
            let registry = names::registry(world);
            let registry = registry.read();
            let plain = PlainIndex::of(world);
            let mut reader = EntityReader::new(&registry);
            while self.next_index < PlainIndex::len(world) && slice.more() {
                if let Some(entity) = plain.at(world, self.next_index) {
                    let bits = entity.to_bits();
                    match self.base.entities.get(&bits) {
                        Some(then) => {
                            self.seen.insert(bits);
                            if !reader.unchanged(world, entity, then) {
                                let now = reader.read(world, entity);
                                if now != *then {
                                    found(Difference::Changed {
                                        bits,
                                        then: then.clone(),
                                        now,
                                    });
                                }
                            }
                        }
                        None => found(Difference::Added {
                            bits,
                            now: reader.read(world, entity),
                        }),
                    }
                }
                self.next_index += 1;
            }
            if self.next_index < PlainIndex::len(world) {
                return false;
            }
            self.missing_after = Some(None);
        }
        let Some(after) = self.missing_after else {
            return false;
        };
        let range = match after {
            Some(key) => self
                .base
                .entities
                .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded)),
            None => self.base.entities.range(..),
        };
        let mut last = after;
        for (index, (bits, then)) in range.enumerate() {
            if index % KEYS_PER_UNIT == 0 && !slice.more() {
                self.missing_after = Some(last);
                return false;
            }
            self.looked += 1;
            if !self.seen.contains(bits) {
                found(Difference::Removed {
                    bits: *bits,
                    then: then.clone(),
                });
            }
            last = Some(*bits);
        }
        self.missing_after = Some(last);
        true
    }

    /// `(units done, units in all)`: the world's indices, then the snapshot's entities.
    pub(crate) fn progress(&self, world: &World) -> (u64, u64) {
        let indices = u64::from(world.entities().len().max(self.next_index));
        (
            u64::from(self.next_index) + self.looked,
            indices + self.base.entities.len() as u64,
        )
    }

    /// The snapshot compared with.
    pub(crate) fn base(&self) -> &Snapshot {
        &self.base
    }
}

/// Every tracked resource's value now (a few dozen: read at once).
pub(crate) fn resources_now(world: &World) -> BTreeMap<String, Raw> {
    let registry = names::registry(world);
    let registry = registry.read();
    resources(world, &registry)
}

/// The whole world at once, refused past `limit` serialized bytes (for small worlds and callers
/// that cannot wait a frame).
pub(crate) fn snapshot(world: &World, limit: usize) -> Result<Snapshot, BridgeError> {
    let mut scan = SnapshotScan::new(world, limit);
    scan.advance(world, &mut Slice::unbounded())?;
    scan.finish(world)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (The types are Bevy's UI and text, built with the `render` feature.)
    #[cfg(feature = "render")]
    #[test]
    fn what_bevy_computes_from_other_components_is_not_held() {
        use bevy::camera::primitives::Aabb;
        use bevy::camera::visibility::{InheritedVisibility, ViewVisibility, Visibility};
        use bevy::reflect::TypePath;
        use bevy::text::{ComputedTextBlock, TextLayoutInfo};
        use bevy::ui::{ComputedNode, ComputedUiTargetCamera, Node};
        for computed in [
            TextLayoutInfo::type_path(),
            ComputedTextBlock::type_path(),
            ComputedNode::type_path(),
            ComputedUiTargetCamera::type_path(),
            InheritedVisibility::type_path(),
            ViewVisibility::type_path(),
            Aabb::type_path(),
        ] {
            assert!(!tracked(computed), "{computed}");
        }
        for written in [Node::type_path(), Visibility::type_path()] {
            assert!(tracked(written), "{written}");
        }
    }

    #[test]
    fn an_entity_snapshot_is_the_text_of_its_values_sorted_by_type_path() {
        let health = Raw::of(&serde_json::json!({"current": 5.0}));
        let name = Raw::of(&serde_json::json!("Goblin"));
        let held = EntitySnapshot::from_values(
            [("game::Health", &*health.0), (NAME, &*name.0)],
            BTreeSet::new(),
        );
        assert_eq!(
            held.json.as_ref(),
            r#"{"bevy_ecs::name::Name":"Goblin","game::Health":{"current":5.0}}"#
        );
        assert_eq!(held.name().as_deref(), Some("Goblin"));
        assert_eq!(held.get("game::Health"), Some(health));
        let changed = held.with(&BTreeMap::from([("game::Health".to_owned(), None)]));
        assert_eq!(
            changed.json.as_ref(),
            r#"{"bevy_ecs::name::Name":"Goblin"}"#
        );
        assert!(!changed.same_values(&held));
    }

    /// What following respawned entities must give: every entity renamed and every held parent
    /// renamed, by walking the whole snapshot.
    fn renamed_by_walking_everything(
        snapshot: &Snapshot,
        respawned: &BTreeMap<u64, Entity>,
    ) -> BTreeMap<u64, EntitySnapshot> {
        let rename = |bits: u64| respawned.get(&bits).map_or(bits, |new| new.to_bits());
        snapshot
            .entities
            .iter()
            .map(|(bits, held)| {
                let held = match parent_of(held) {
                    Some(parent) if rename(parent) != parent => held.with(&BTreeMap::from([(
                        CHILD_OF.to_owned(),
                        Some(Raw::of(&json!(rename(parent)))),
                    )])),
                    _ => held.clone(),
                };
                (rename(*bits), held)
            })
            .collect()
    }

    #[test]
    fn following_respawned_entities_renames_keys_and_parents_as_a_whole_walk_would() {
        use bevy::prelude::{AppTypeRegistry, ChildOf, Name};
        let mut world = World::new();
        let registry = AppTypeRegistry::default();
        registry.write().register::<ChildOf>();
        registry.write().register::<Name>();
        world.insert_resource(registry);
        let base = world.spawn(Name::new("Base")).id();
        let turret = world.spawn((Name::new("Turret"), ChildOf(base))).id();
        let barrel = world.spawn((Name::new("Barrel"), ChildOf(turret))).id();
        let flag = world.spawn((Name::new("Flag"), ChildOf(base))).id();
        let crate_ = world.spawn(Name::new("Crate")).id();
        let held = snapshot(&world, usize::MAX).expect("a small world is read");
        assert_eq!(
            parent_of(&held.entities[&turret.to_bits()]),
            Some(base.to_bits())
        );
        // Each case: which of them came back under new ids.
        let cases: [&[Entity]; 5] = [
            &[base],
            &[barrel],
            &[base, barrel],
            &[turret, flag, crate_],
            &[base, turret, barrel, flag, crate_],
        ];
        for case in cases {
            let respawned: BTreeMap<u64, Entity> = case
                .iter()
                .map(|old| (old.to_bits(), world.spawn_empty().id()))
                .collect();
            let mut followed = held.clone();
            followed.follow_respawned(&respawned);
            assert_eq!(
                followed.entities,
                renamed_by_walking_everything(&held, &respawned),
                "respawned: {respawned:?}"
            );
            // The index follows too: a second round of respawns still finds every child.
            let again: BTreeMap<u64, Entity> = followed
                .entities
                .keys()
                .map(|bits| (*bits, world.spawn_empty().id()))
                .collect();
            let expected = renamed_by_walking_everything(&followed, &again);
            followed.follow_respawned(&again);
            assert_eq!(
                followed.entities, expected,
                "second round after {respawned:?}"
            );
        }
    }

    #[test]
    fn raw_values_compare_as_text_and_read_back() {
        let bits = Raw::of(&serde_json::json!(4294967308u64));
        assert_eq!(bits.as_u64(), Some(4294967308));
        assert_eq!(bits.value(), serde_json::json!(4294967308u64));
        assert_eq!(
            Raw::of(&serde_json::json!([1.5])),
            Raw::of(&serde_json::json!([1.5]))
        );
    }
}
