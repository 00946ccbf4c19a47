//! The hierarchy a planned write would leave: no parent loop, no chain deeper than the bound.

use super::*;

/// Most hierarchy problems one refusal lists.
pub(super) const MAX_REPORTED: usize = 8;

/// Planned entities looked at per unit of a slice, for their parents.
pub(super) const PARENTS_PER_UNIT: usize = 16;

/// Where the world, as planned steps will have left it, would hold a parent loop, a child under
/// an entity not in the world, or a hierarchy more than `limit` levels deep: undo, redo and
/// restore are ordinary writes, and no ordinary write may make any of them. Checked a slice at a
/// time (the first few problems found are kept): first the planned entities that get a parent
/// are found (entities planned without one are roots the steps leave as they are), then each
/// of those is checked.
#[derive(Debug)]
pub(crate) struct HierarchyCheck {
    pub(super) limit: usize,
    /// Which of the planned world's runs of keys is being read, and the last key read of it.
    pub(super) run: usize,
    pub(super) after: Option<u64>,
    /// The planned entities that get a parent, once found, and how many are checked.
    pub(super) children: Vec<u64>,
    pub(super) found: bool,
    pub(super) next: usize,
    /// Levels (entities from the root down) of every entity walked, each walked once.
    pub(super) levels: HashMap<u64, usize>,
    pub(super) conflicts: Vec<Conflict>,
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

pub(super) fn range_after<V>(
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
pub(super) fn parent_in(held: &EntitySnapshot) -> Option<u64> {
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
    pub(super) fn parent_of(planned: &impl PlannedWorld, world: &World, bits: u64) -> Option<u64> {
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
    pub(super) fn check(&mut self, planned: &impl PlannedWorld, world: &World, key: u64) {
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
pub(super) fn present(planned: &impl PlannedWorld, world: &World, bits: u64) -> bool {
    match planned.whole(bits) {
        Some(planned) => planned.is_some(),
        None => Entity::try_from_bits(bits).is_some_and(|entity| is_present(world, entity)),
    }
}
