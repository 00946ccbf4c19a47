//! What changed in the world and how to take it back: the journal of every change a call makes
//! ([`journal`], attached to the executor as a hook), the world as values ([`snapshot`]: each
//! entity serialized once, whole-world snapshots read a slice at a time) and what differs
//! ([`world_delta`]: differences, and making the world match one side). The `history` actions
//! build on them.

pub(crate) mod checkpoints;
pub(crate) mod holding;
pub(crate) mod journal;
mod release;
#[cfg(feature = "render")]
pub(crate) mod render_backstop;
pub(crate) mod snapshot;
pub(crate) mod world_delta;

use bevy::app::{App, Plugin};
use bevy::ecs::schedule::IntoScheduleConfigs;

use crate::runtime::hooks::CallHooks;
use crate::runtime::schedule::{BridgeLast, BridgeSystems};
use holding::HoldingArea;
use journal::{Journal, JournalHook, JournalLimits};

/// The journal: holds what every call may change, so `history.undo` and `redo` can take it back;
/// and the holding area, where entities the bridge removes wait until nothing can bring them
/// back.
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
        app.insert_resource(HoldingArea::new(self.limits.max_held_entities));
        app.init_resource::<journal::ReportedChange>();
        app.add_systems(
            BridgeLast,
            release::release_unnamed.in_set(BridgeSystems::Housekeeping),
        );
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
