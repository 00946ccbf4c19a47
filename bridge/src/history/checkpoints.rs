//! Named in-memory checkpoints of the world (`history.checkpoint`), held oldest first.

use std::sync::Arc;

use bevy::prelude::Resource;

use crate::error::BridgeError;
use crate::history::world_delta::Snapshot;

/// Most checkpoints held; taking one more drops the oldest (the reply names it).
pub const MAX_CHECKPOINTS: usize = 8;
/// Most serialized bytes one checkpoint may hold (about one and a half times that in memory).
pub(crate) const MAX_CHECKPOINT_BYTES: usize = 64 * 1024 * 1024;

/// The checkpoints held, oldest first.
#[derive(Resource, Debug, Default)]
pub(crate) struct Checkpoints(pub(crate) Vec<(String, Arc<Snapshot>)>);

impl Checkpoints {
    /// Their names, oldest first.
    pub(crate) fn names(&self) -> Vec<String> {
        self.0.iter().map(|(name, _)| name.clone()).collect()
    }

    /// The checkpoint called `name`.
    pub(crate) fn get(&self, name: &str) -> Result<&Arc<Snapshot>, BridgeError> {
        self.0
            .iter()
            .find(|(held, _)| held == name)
            .map(|(_, snapshot)| snapshot)
            .ok_or_else(|| BridgeError::CheckpointNotFound {
                name: name.to_owned(),
                held: self.names(),
            })
    }
}
