//! Named in-memory checkpoints of the world (`history.checkpoint`), held oldest first.

use std::sync::Arc;
use std::time::Instant;

use bevy::prelude::Resource;

use crate::error::BridgeError;
use crate::history::world_delta::Snapshot;

/// Most checkpoints held; taking one more drops the oldest (the reply names it).
pub const MAX_CHECKPOINTS: usize = 8;
/// Most serialized bytes one checkpoint may hold (about one and a half times that in memory).
pub(crate) const MAX_CHECKPOINT_BYTES: usize = 64 * 1024 * 1024;

/// One checkpoint held.
#[derive(Debug)]
pub(crate) struct HeldCheckpoint {
    /// Its name.
    pub name: String,
    /// The world as it was read.
    pub snapshot: Arc<Snapshot>,
    /// When it was kept.
    pub taken: Instant,
}

/// The checkpoints held, oldest first.
#[derive(Resource, Debug, Default)]
pub(crate) struct Checkpoints(pub(crate) Vec<HeldCheckpoint>);

impl Checkpoints {
    /// Their names, oldest first.
    pub(crate) fn names(&self) -> Vec<String> {
        self.0.iter().map(|held| held.name.clone()).collect()
    }

    /// Whether one is called `name`.
    pub(crate) fn holds(&self, name: &str) -> bool {
        self.0.iter().any(|held| held.name == name)
    }

    /// The checkpoint called `name`.
    pub(crate) fn get(&self, name: &str) -> Result<&Arc<Snapshot>, BridgeError> {
        self.0
            .iter()
            .find(|held| held.name == name)
            .map(|held| &held.snapshot)
            .ok_or_else(|| BridgeError::CheckpointNotFound {
                name: name.to_owned(),
                held: self.names(),
            })
    }

    /// The snapshots held, oldest first.
    pub(crate) fn snapshots(&self) -> impl Iterator<Item = &Arc<Snapshot>> {
        self.0.iter().map(|held| &held.snapshot)
    }

    /// The snapshots held, to follow entities that came back under new ids.
    pub(crate) fn snapshots_mut(&mut self) -> impl Iterator<Item = &mut Arc<Snapshot>> {
        self.0.iter_mut().map(|held| &mut held.snapshot)
    }

    /// Keeps `snapshot` as `name`, replacing one of that name and dropping the oldest past
    /// [`MAX_CHECKPOINTS`]. Returns what was let go (to free over frames) and the name of the
    /// oldest if it was dropped.
    pub(crate) fn keep(
        &mut self,
        name: String,
        snapshot: Snapshot,
    ) -> (Vec<Arc<Snapshot>>, Option<String>) {
        let mut let_go = Vec::new();
        if let Some(index) = self.0.iter().position(|held| held.name == name) {
            let_go.push(self.0.remove(index).snapshot);
        }
        self.0.push(HeldCheckpoint {
            name,
            snapshot: Arc::new(snapshot),
            taken: Instant::now(),
        });
        let dropped = (self.0.len() > MAX_CHECKPOINTS).then(|| {
            let oldest = self.0.remove(0);
            let_go.push(oldest.snapshot);
            oldest.name
        });
        (let_go, dropped)
    }
}
