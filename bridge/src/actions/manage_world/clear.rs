//! `clear`: every game entity into the holding area, a slice per frame.

use super::*;

/// A clear in progress: every plain entity, with everything below it, goes to the holding area
/// (or is despawned without a history), a slice of entity indices per frame. The journal's entry
/// holds each entity as it was just before it went.
pub(super) struct Clearing {
    pub(super) next_index: u32,
    pub(super) despawned: usize,
    /// What the journal gets: `None` without a journal, `Err` once the change outgrew it.
    pub(super) change: Option<Result<Delta, String>>,
    pub(super) tally: Tally,
    pub(super) limit: usize,
}

impl Clearing {
    pub(super) fn new(world: &World) -> Clearing {
        let limit = journal_bytes(world);
        Clearing {
            next_index: 0,
            despawned: 0,
            change: limit.map(|_| Ok(Delta::default())),
            tally: Tally::default(),
            limit: limit.unwrap_or(0),
        }
    }

    /// Holds the entity at each index (and what hangs below it) while the slice lasts; `true`
    /// once every index is done.
    pub(super) fn advance(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        let registry = names::registry(world);
        let registry = registry.read();
        // Entities held here move to archetypes made since, which count as plumbing.
        let plain = PlainIndex::of(world);
        let mut reader = EntityReader::new(&registry);
        loop {
            let entity = plain.at(world, self.next_index);
            if self.next_index >= PlainIndex::len(world) {
                return true;
            }
            if !slice.more() {
                return false;
            }
            self.next_index += 1;
            let Some(entity) = entity else {
                continue;
            };
            let tree = holding::trees(world, &[entity]);
            if let Some(Ok(delta)) = &mut self.change {
                for entity in &tree {
                    let change = EntityChange::Whole(Change {
                        before: Some(reader.read(world, *entity)),
                        after: None,
                    });
                    self.tally.add(entity.to_bits(), &change);
                    delta.entities.insert(entity.to_bits(), change);
                }
                if self.tally.bytes > self.limit {
                    let too_large = Some(Err(format!(
                        "the change takes more than {} bytes, the most the journal holds",
                        self.limit
                    )));
                    retire(std::mem::replace(&mut self.change, too_large));
                }
            }
            self.despawned += holding::remove_trees(world, &tree);
        }
    }
}

impl LongJob for Clearing {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let done = Slice::within(world, |world, slice| self.advance(world, slice));
        if !done {
            progress.report_paced(
                f64::from(self.next_index),
                Some(f64::from(world.entities().len())),
                Some("clearing"),
            );
            return None;
        }
        if let Some(change) = self.change.take() {
            report_change(world, change, Some(std::mem::take(&mut self.tally)));
        }
        Some(Ok(json!({"despawned": self.despawned})))
    }

    fn cancellable(&self) -> bool {
        // Half a world cleared is no state anyone asked for: once it began, it finishes.
        self.despawned == 0
    }
}
