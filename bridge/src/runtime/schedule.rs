//! Where the bridge's systems run: the [`BridgeLast`] schedule after `Last` (handlers see a
//! settled world), its [`BridgeSystems`] sets, and the [`BridgeStartup`] sets that build the
//! catalog before the transport starts.

use bevy::app::{App, Last, MainScheduleOrder, Startup};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};

/// The schedule that runs after `Last`: handlers see a settled world.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BridgeLast;

/// The bridge's systems in [`BridgeLast`], in the order they run; a game can order its own
/// systems of that schedule against them.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BridgeSystems {
    /// Picks up the transport's start report and updates `BridgeEndpoint`.
    Endpoint,
    /// Carries out a requested exit once its reply has gone out.
    Exit,
    /// Advances long-running jobs, then runs the calls that arrived.
    Calls,
    /// Work the bridge does for itself after the calls, a slice per frame (releasing entities
    /// the history holds that nothing names any more, refreshing search's terms of the world);
    /// its time counts as the bridge's in the frame.
    Housekeeping,
}

/// The bridge's systems in the first frame's `Startup`, in order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BridgeStartup {
    /// Builds the served catalog (every action is registered by now), freezes the action
    /// registry and builds the gateway.
    Catalog,
    /// Starts the transport thread with that gateway.
    Transport,
}

/// Adds [`BridgeLast`] after `Last` and orders the bridge's sets.
pub(crate) fn init(app: &mut App) {
    app.init_schedule(BridgeLast);
    if let Some(mut order) = app.world_mut().get_resource_mut::<MainScheduleOrder>() {
        order.insert_after(Last, BridgeLast);
    } else {
        // Without the main schedule (a bare App), run the bridge schedule from `Last` itself.
        app.add_schedule(Schedule::new(Last));
    }
    app.configure_sets(
        BridgeLast,
        (
            BridgeSystems::Endpoint,
            BridgeSystems::Exit,
            BridgeSystems::Calls,
            BridgeSystems::Housekeeping,
        )
            .chain(),
    )
    .configure_sets(
        Startup,
        (BridgeStartup::Catalog, BridgeStartup::Transport).chain(),
    );
}
