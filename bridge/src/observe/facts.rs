//! Facts about the bridge that `system_control.app_info` reports: whether a token is required,
//! the limits in force, the plugins the app added.

use bevy::app::{App, Plugin};
use bevy::prelude::Resource;
use serde_json::Value;

/// Facts about the bridge for `system_control.app_info`.
#[derive(Resource, Debug, Clone)]
pub(crate) struct BridgeFacts {
    /// Whether a capability token is required.
    pub token_required: bool,
    /// The server limits, as JSON.
    pub limits: Value,
    /// The well-known plugins the app added (filled in when the app finishes building).
    pub plugins: Vec<&'static str>,
}

/// The well-known plugins this app added, by type name, and `bridge` (the bridge's own plugin
/// group). Bevy keeps its list of plugin names private, so only plugins the bridge can name are
/// found (every other one is missing).
pub(crate) fn known_plugins(app: &App, bridge: &'static str) -> Vec<&'static str> {
    fn check<P: Plugin>(app: &App, found: &mut Vec<&'static str>) {
        if app.is_plugin_added::<P>() {
            found.push(std::any::type_name::<P>());
        }
    }
    let mut found = Vec::new();
    check::<bevy::app::PanicHandlerPlugin>(app, &mut found);
    check::<bevy::app::TaskPoolPlugin>(app, &mut found);
    check::<bevy::app::ScheduleRunnerPlugin>(app, &mut found);
    check::<bevy::app::TerminalCtrlCHandlerPlugin>(app, &mut found);
    check::<bevy::log::LogPlugin>(app, &mut found);
    check::<bevy::diagnostic::FrameCountPlugin>(app, &mut found);
    check::<bevy::diagnostic::DiagnosticsPlugin>(app, &mut found);
    check::<bevy::diagnostic::FrameTimeDiagnosticsPlugin>(app, &mut found);
    check::<bevy::diagnostic::EntityCountDiagnosticsPlugin>(app, &mut found);
    check::<bevy::diagnostic::LogDiagnosticsPlugin>(app, &mut found);
    check::<bevy::time::TimePlugin>(app, &mut found);
    check::<bevy::transform::TransformPlugin>(app, &mut found);
    check::<bevy::asset::AssetPlugin>(app, &mut found);
    check::<bevy::state::app::StatesPlugin>(app, &mut found);
    check::<bevy::world_serialization::WorldSerializationPlugin>(app, &mut found);
    found.push(bridge);
    found
}
