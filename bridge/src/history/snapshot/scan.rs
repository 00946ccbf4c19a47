//! Checkpoints taken and compared a slice per frame.

use super::*;

/// Reads the whole world into a [`Snapshot`], a slice of entity indices at a time. Each entity is
/// held as it was in the frame its slice read it; entities spawned at indices already read are
/// not in it.
#[derive(Debug)]
pub(crate) struct SnapshotScan {
    pub(super) limit: usize,
    pub(super) next_index: u32,
    pub(super) first_frame: u64,
    pub(super) entities: BTreeMap<u64, EntitySnapshot>,
    pub(super) children: BTreeMap<u64, BTreeSet<u64>>,
    pub(super) bytes: usize,
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
    pub(super) base: Arc<Snapshot>,
    pub(super) next_index: u32,
    pub(super) seen: HashSet<u64>,
    /// Past the world's entities: the snapshot's entities after this key are left to look at.
    pub(super) missing_after: Option<Option<u64>>,
    /// The snapshot's entities looked at so far.
    pub(super) looked: u64,
}

/// Entities of a snapshot looked at per unit of a slice when only their keys are compared.
pub(super) const KEYS_PER_UNIT: usize = 32;

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
