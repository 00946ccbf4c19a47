//! Planning a write: what the world must still hold, and what each step will leave.

use super::*;

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
pub(super) const MAX_CONFLICTS: usize = 64;

/// The world as a run of undo (or redo) steps will have left it, before any step is applied:
/// each step is checked against what the steps before it will have made, so a run is refused
/// whole or applied whole.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    pub(super) wholes: BTreeMap<u64, Option<EntitySnapshot>>,
    /// By entity, type path to the value planned (`None`: removed).
    pub(super) components: BTreeMap<u64, BTreeMap<String, Option<Raw>>>,
    pub(super) resources: HashMap<String, Option<Raw>>,
    pub(super) time: Option<TimeState>,
}

/// Reads the world as [`Planned`] will have left it.
pub(super) struct Reader<'w> {
    pub(super) world: &'w World,
    pub(super) registry: &'w TypeRegistry,
    pub(super) ids: Ids<'w>,
}

impl Reader<'_> {
    pub(super) fn whole(&self, planned: &Planned, key: u64) -> Option<EntitySnapshot> {
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

    pub(super) fn component(&self, planned: &Planned, key: u64, type_path: &str) -> Option<Raw> {
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

    pub(super) fn resource(&self, planned: &Planned, type_path: &str) -> Option<Raw> {
        if let Some(value) = planned.resources.get(type_path) {
            return value.clone();
        }
        let registration = self.registry.get_with_type_path(type_path)?;
        resource_raw(self.world, registration, self.registry)
    }

    pub(super) fn time(&self, planned: &Planned) -> Option<TimeState> {
        planned.time.or_else(|| TimeState::of(self.world))
    }
}

pub(super) fn entity_label(key: u64, name: Option<&String>) -> String {
    let entity =
        Entity::try_from_bits(key).map_or_else(|| key.to_string(), |entity| entity.to_string());
    match name {
        Some(name) => format!("entity {entity} ({name})"),
        None => format!("entity {entity}"),
    }
}

pub(super) fn snapshot_json(held: Option<&EntitySnapshot>) -> Value {
    held.map_or(Value::Null, EntitySnapshot::json)
}

pub(super) fn raw_json(value: Option<Raw>) -> Value {
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
