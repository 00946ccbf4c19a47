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

mod reading;
mod scan;

pub(crate) use reading::*;
pub(crate) use scan::*;

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
