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

mod apply;
mod hierarchy_check;
mod plan;
mod respawned;

pub(crate) use apply::*;
pub(crate) use hierarchy_check::*;
pub(crate) use plan::*;
pub(crate) use respawned::*;

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
