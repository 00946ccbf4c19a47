//! Entities brought back under new ids: the map from old ids to new that later steps follow.

use super::*;

/// Ids of entities that came back after a despawn (by `restore`, `undo` or `redo`): a
/// despawned entity returns under a new id, and every held difference and checkpoint that names
/// the old one means the new one.
#[derive(Resource, Debug, Clone, Default)]
pub(crate) struct RespawnedIds {
    pub(super) new_of_old: HashMap<u64, u64>,
    pub(super) order: VecDeque<u64>,
}

/// Most renames kept; older ones are forgotten (the entries naming them are long gone).
pub(super) const MAX_RENAMES: usize = 65_536;

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

    pub(super) fn record(&mut self, old: u64, new: u64) {
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
pub(super) struct Ids<'w>(Cow<'w, RespawnedIds>);

impl Ids<'_> {
    pub(super) fn of(world: &World) -> Ids<'_> {
        Ids(world
            .get_resource::<RespawnedIds>()
            .map_or_else(|| Cow::Owned(RespawnedIds::default()), Cow::Borrowed))
    }

    /// A copy, for a caller that changes the world while it reads them.
    pub(super) fn owned(world: &World) -> Ids<'static> {
        Ids(Cow::Owned(
            world
                .get_resource::<RespawnedIds>()
                .cloned()
                .unwrap_or_default(),
        ))
    }

    pub(super) fn current(&self, bits: u64) -> u64 {
        self.0.current(bits)
    }

    /// The entity held as `bits`, if it is in the world now (not held out of sight).
    pub(super) fn live(&self, world: &World, bits: u64) -> Option<Entity> {
        Entity::try_from_bits(self.current(bits)).filter(|entity| is_present(world, *entity))
    }

    /// The entity held as `bits`, if the holding area holds it.
    pub(super) fn held(&self, world: &World, bits: u64) -> Option<Entity> {
        Entity::try_from_bits(self.current(bits)).filter(|entity| holding::is_held(world, *entity))
    }

    /// A held value as it reads now: a parent that came back under a new id is renamed.
    pub(super) fn value(&self, type_path: &str, value: &Raw) -> Raw {
        match value.as_u64() {
            Some(bits) if type_path == CHILD_OF && self.current(bits) != bits => {
                Raw::of(&json!(self.current(bits)))
            }
            _ => value.clone(),
        }
    }

    pub(super) fn snapshot(&self, held: &EntitySnapshot) -> EntitySnapshot {
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
