//! [`McpBridgePlugin`]: the mailbox, the systems that serve it, and the transport thread.

use std::path::PathBuf;
use std::sync::Arc;

use bevy::app::{App, Last, MainScheduleOrder, Plugin, Startup};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};
use bevy::prelude::World;
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::AppTermsFeed;

use crate::actions::control_app::process_exit_request;
use crate::actions::manage_asset::AssetRoot;
use crate::actions::manage_resource::RemovableResources;
use crate::actions::manage_world::ScenesDir;
use crate::actions::view::ScreenshotsDir;
use crate::config::{BridgeConfig, limits_json};
use crate::history::journal::Journal;
use crate::observe::audit::{AuditLog, SharedAuditLog};
use crate::observe::facts::BridgeFacts;
use crate::observe::frames::{FrameTimes, record_frame_time};
use crate::observe::search_terms::{
    NameCensus, REFRESH_EVERY, SearchTermsFeed, at_most_every, note_removed_names,
    publish_search_terms,
};
use crate::playtest::{Recorder, ScriptsDir};
use crate::reflect::policy::WritePolicy;
use crate::runtime::budget::{FrameBudget, PauseBridgeWork};
use crate::runtime::catalog::ServedCatalog;
use crate::runtime::executor::{ActiveJobs, process_mailbox};
use crate::runtime::mailbox::{BridgeDispatchHandle, mailbox};
use crate::runtime::transport::{
    BridgeEndpoint, PendingTransport, TransportStart, report_transport_start, spawn_transport,
};

/// The schedule that runs after `Last`: handlers see a settled world.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BridgeLast;

/// The bridge's systems in [`BridgeLast`], in the order they run; a game can order its own
/// systems of that schedule against them.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BridgeSystems {
    /// Picks up the transport's start report and updates [`BridgeEndpoint`].
    Endpoint,
    /// Carries out a requested exit once its reply has gone out.
    Exit,
    /// Advances long-running jobs, then runs the calls that arrived.
    Calls,
}

/// Embeds the MCP server in the app.
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_mcp_bridge::{BridgeConfig, McpBridgePlugin};
///
/// App::new()
///     .add_plugins(MinimalPlugins)
///     .add_plugins(McpBridgePlugin::new(BridgeConfig::default().with_port(15720)))
///     .run();
/// ```
#[derive(Debug, Clone)]
pub struct McpBridgePlugin {
    config: BridgeConfig,
}

impl McpBridgePlugin {
    /// A bridge with this configuration.
    pub fn new(config: BridgeConfig) -> Self {
        McpBridgePlugin { config }
    }
}

impl Default for McpBridgePlugin {
    fn default() -> Self {
        McpBridgePlugin::new(BridgeConfig::default())
    }
}

impl Plugin for McpBridgePlugin {
    fn finish(&self, app: &mut App) {
        let plugins = known_plugins(app);
        if let Some(mut facts) = app.world_mut().get_resource_mut::<BridgeFacts>() {
            facts.plugins = plugins;
        }
        // The asset folder is known once every plugin is built; resolve it the way Bevy does.
        let folder = app
            .get_added_plugins::<bevy::asset::AssetPlugin>()
            .first()
            .map(|plugin| PathBuf::from(&plugin.file_path));
        if let Some(folder) = folder {
            let root = if folder.is_absolute() {
                folder
            } else {
                bevy::asset::io::file::FileAssetReader::get_base_path().join(folder)
            };
            app.insert_resource(AssetRoot(root));
        }
        // Every plugin is built now, so the renderer's sub-app (if any) exists.
        #[cfg(feature = "render")]
        crate::actions::view::connect_renderer(app);
    }

    fn build(&self, app: &mut App) {
        let (dispatch, receiver, signals) = mailbox();
        let app_terms = AppTermsFeed::new();
        let audit = Arc::new(AuditLog::new(
            self.config.audit_log_file.clone(),
            self.config.audit_log_max_bytes,
        ));
        app.insert_resource(receiver)
            .insert_resource(signals)
            .insert_resource(BridgeDispatchHandle(dispatch.clone()))
            .insert_resource(SharedAuditLog(audit.clone()))
            .insert_resource(BridgeFacts {
                token_required: !self.config.server.tokens.is_empty(),
                limits: limits_json(
                    &self.config.server.limits,
                    &self.config.policy.limits,
                    self.config.frame_budget,
                    self.config.journal,
                ),
                plugins: Vec::new(),
            })
            .insert_resource(ScenesDir(self.config.scenes_dir.clone()))
            .insert_resource(ScreenshotsDir(self.config.screenshots_dir.clone()))
            .insert_resource(ScriptsDir(self.config.scripts_dir.clone()))
            .init_resource::<Recorder>()
            .init_resource::<crate::runtime::executor::CallingSession>()
            .init_resource::<crate::actions::input::HeldByBridge>()
            .insert_resource(RemovableResources(self.config.removable_resources.clone()))
            .insert_resource(WritePolicy::new(self.config.policy.clone()))
            .init_resource::<FrameTimes>()
            .init_resource::<ActiveJobs>()
            .init_resource::<PauseBridgeWork>()
            .insert_resource(SearchTermsFeed(app_terms.clone()))
            .init_resource::<NameCensus>()
            .insert_resource(Journal::new(self.config.journal))
            .insert_resource(FrameBudget::new(
                self.config.frame_budget,
                self.config.budget_clock.clone(),
            ));
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
            )
                .chain(),
        )
        .add_systems(
            BridgeLast,
            (
                report_transport_start.in_set(BridgeSystems::Endpoint),
                process_exit_request.in_set(BridgeSystems::Exit),
                (record_frame_time, process_mailbox)
                    .chain()
                    .in_set(BridgeSystems::Calls),
                (
                    note_removed_names,
                    publish_search_terms.run_if(at_most_every(REFRESH_EVERY)),
                )
                    .chain()
                    .after(BridgeSystems::Calls),
            ),
        );
        // The catalog is complete once the app is built: the generated actions and the app's own.
        app.add_systems(Startup, publish_catalog.before(spawn_transport));
        if !self.config.serve {
            app.insert_resource(BridgeEndpoint::Disabled);
            return;
        }
        // Binding waits on the network: it happens on the transport's thread, started in the
        // first frame, and never blocks `Plugin::build`.
        app.insert_resource(BridgeEndpoint::Starting)
            .insert_resource(PendingTransport(Some(TransportStart {
                server: self.config.server.clone(),
                start: self.config.start.clone(),
                io_threads: self.config.io_threads,
                dispatch,
                audit,
                app_terms,
            })))
            .add_systems(Startup, spawn_transport);
    }
}

/// Builds the served catalog once every action is registered (the first frame's `Startup`).
fn publish_catalog(world: &mut World) {
    let catalog = world
        .get_resource::<crate::game::GameActions>()
        .map_or(&CATALOG, crate::game::GameActions::catalog);
    world.insert_resource(ServedCatalog(catalog));
}

/// The well-known plugins this app added, by type name. Bevy keeps its list of plugin names
/// private, so only plugins the bridge can name are found (every other one is missing).
fn known_plugins(app: &App) -> Vec<&'static str> {
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
    check::<McpBridgePlugin>(app, &mut found);
    found
}
