//! What changed in the world and how to take it back: the journal of every change a call makes
//! ([`journal`], attached to the executor as a hook), and the world as values ([`world_delta`]:
//! snapshots, differences, and making the world match one side). The `history` actions build on
//! both.

pub(crate) mod journal;
#[cfg(feature = "render")]
pub(crate) mod render_backstop;
pub(crate) mod world_delta;

use bevy::app::{App, Plugin};

use crate::runtime::hooks::CallHooks;
use journal::{Journal, JournalHook, JournalLimits};

/// The journal: holds what every call may change, so `history.undo` and `redo` can take it back.
#[derive(Debug, Clone, Copy, Default)]
pub struct BridgeHistoryPlugin {
    limits: JournalLimits,
}

impl BridgeHistoryPlugin {
    /// A journal within `limits`.
    pub fn new(limits: JournalLimits) -> Self {
        BridgeHistoryPlugin { limits }
    }
}

impl Plugin for BridgeHistoryPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(Journal::new(self.limits));
        app.world_mut()
            .get_resource_or_init::<CallHooks>()
            .add(JournalHook);
    }

    fn finish(&self, app: &mut App) {
        #[cfg(feature = "render")]
        render_backstop::install(app);
        #[cfg(not(feature = "render"))]
        let _ = app;
    }
}
