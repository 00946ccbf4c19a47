//! [`McpBridgePlugin`]: the bridge as a group of feature plugins, each owning its resources and
//! its part of [`BridgeConfig`], and [`BridgeCorePlugin`], the part every other one builds on.
//!
//! | plugin | owns |
//! |---|---|
//! | [`BridgeCorePlugin`] | the mailbox, the executor and its frame budget, every built-in action bound in the action registry, the write policy, the served catalog and the gateway in-process calls share, the built-in actions' settings (scenes folder, removable resources, asset folder, the exit countdown) |
//! | [`BridgeTransportPlugin`] | the MCP server on its own thread |
//! | [`BridgeHistoryPlugin`] | the journal (a hook on the executor) |
//! | [`BridgePlaytestPlugin`] | playtest recording (a hook on the executor) and the scripts folder |
//! | [`BridgeInputPlugin`] | what the input actions hold pressed |
//! | [`BridgeViewPlugin`] | the screenshots folder and the connection to the renderer |
//! | [`BridgeObservePlugin`] | the audit trail, frame times, facts for `app_info` |
//! | [`BridgeSearchTermsPlugin`] | what `search` may match of the running app |

use std::path::PathBuf;
use std::sync::Arc;

use bevy::app::{App, Plugin, PluginGroup, PluginGroupBuilder, Startup};
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::prelude::{Resource, World};
use bevy::reflect::{ReflectDeserialize, ReflectSerialize};
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::{Gateway, ServerConfig, StartVisibility};

use crate::actions::control_app::process_exit_request;
use crate::actions::input::BridgeInputPlugin;
use crate::actions::manage_asset::AssetRoot;
use crate::actions::manage_resource::{RemovableResource, RemovableResources};
use crate::actions::manage_world::ScenesDir;
use crate::actions::view::BridgeViewPlugin;
use crate::config::{BridgeConfig, limits_json};
use crate::history::BridgeHistoryPlugin;
use crate::observe::BridgeObservePlugin;
use crate::observe::search_terms::{BridgeSearchTermsPlugin, SearchTermsFeed, WorldFilesDir};
use crate::playtest::BridgePlaytestPlugin;
use crate::reflect::policy::{PolicyConfig, WritePolicy};
use crate::runtime::allocator::{FastBins, settle_fast_bins};
use crate::runtime::budget::{BudgetClock, FrameBudget, PauseBridgeWork};
use crate::runtime::catalog::ServedCatalog;
use crate::runtime::executor::{ActiveJobs, CallingSession, process_mailbox};
use crate::runtime::hooks::CallHooks;
use crate::runtime::housekeeping::{HousekeepingStarted, begin_housekeeping, count_housekeeping};
use crate::runtime::local::LocalCalls;
use crate::runtime::mailbox::{BridgeDispatchHandle, mailbox};
use crate::runtime::registry::{ActionRegistry, freeze_actions};
use crate::runtime::retire::FreedOverFrames;
use crate::runtime::runner::UpdateTimes;
use crate::runtime::schedule::{self, BridgeLast, BridgeStartup, BridgeSystems};
use crate::runtime::slices::SliceTime;
use crate::runtime::transport::{BridgeEndpoint, BridgeTransportPlugin};

/// Embeds the MCP server in the app: every feature plugin of the bridge, configured from one
/// [`BridgeConfig`].
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
#[derive(Debug, Clone, Default)]
pub struct McpBridgePlugin {
    config: BridgeConfig,
}

impl McpBridgePlugin {
    /// A bridge with this configuration.
    pub fn new(config: BridgeConfig) -> Self {
        McpBridgePlugin { config }
    }
}

impl PluginGroup for McpBridgePlugin {
    fn build(self) -> PluginGroupBuilder {
        let mut config = self.config;
        config.server = config.served();
        let limits = limits_json(
            &config.server.limits,
            &config.policy.limits,
            config.frame_budget,
            config.journal,
        );
        let group = PluginGroupBuilder::start::<Self>()
            .add(BridgeCorePlugin {
                server: config.server.clone(),
                start: config.start.clone(),
                policy: config.policy.clone(),
                frame_budget: config.frame_budget,
                budget_clock: config.budget_clock.clone(),
                scenes_dir: config.scenes_dir.clone(),
                removable_resources: config.removable_resources.clone(),
                tune_allocator: config.tune_allocator,
            })
            .add(BridgeObservePlugin::new(
                config.audit_log_file.clone(),
                config.audit_log_max_bytes,
                config.server.tokens_required(),
                limits,
                std::any::type_name::<McpBridgePlugin>(),
            ))
            .add(BridgeSearchTermsPlugin)
            .add(BridgeHistoryPlugin::new(config.journal))
            .add(BridgePlaytestPlugin::new(config.scripts_dir.clone()))
            .add(BridgeInputPlugin)
            .add(BridgeViewPlugin::new(config.screenshots_dir.clone()))
            .add(BridgeTransportPlugin::new(config.server, config.io_threads));
        if config.serve {
            group
        } else {
            group.disable::<BridgeTransportPlugin>()
        }
    }
}

/// The part of the bridge every other plugin builds on: calls reach the game thread through the
/// mailbox, the executor runs them (after `Last`, under the frame budget) through the action
/// registry, which binds every built-in action here.
#[derive(Debug, Clone)]
pub struct BridgeCorePlugin {
    server: ServerConfig,
    start: StartVisibility,
    policy: PolicyConfig,
    frame_budget: std::time::Duration,
    budget_clock: BudgetClock,
    scenes_dir: PathBuf,
    removable_resources: Vec<RemovableResource>,
    tune_allocator: bool,
}

impl Plugin for BridgeCorePlugin {
    fn build(&self, app: &mut App) {
        schedule::init(app);
        let fast_bins = settle_fast_bins(self.tune_allocator);
        if fast_bins == FastBins::TurnedOff {
            tracing::info!(
                "glibc's fast bins are off: freeing a whole world's values costs the slices that \
                 free them, not one frame (BridgeConfig::with_allocator_tuning)"
            );
        }
        let (dispatch, receiver, signals) = mailbox();
        app.insert_resource(receiver)
            .insert_resource(signals)
            .insert_resource(BridgeDispatchHandle(dispatch))
            .insert_resource(GatewaySettings {
                server: self.server.clone(),
                start: self.start.clone(),
            })
            .init_resource::<CallingSession>()
            .init_resource::<ActiveJobs>()
            .init_resource::<SliceTime>()
            .init_resource::<HousekeepingStarted>()
            .init_resource::<FreedOverFrames>()
            .init_resource::<UpdateTimes>()
            .init_resource::<PauseBridgeWork>()
            .init_resource::<CallHooks>()
            .insert_resource(FrameBudget::new(
                self.frame_budget,
                self.budget_clock.clone(),
            ))
            .insert_resource(WritePolicy::new(self.policy.clone()))
            .insert_resource(ScenesDir(self.scenes_dir.clone()))
            .insert_resource(WorldFilesDir {
                dir: self.scenes_dir.clone(),
                extension: crate::actions::manage_world::EXTENSION,
            })
            .insert_resource(fast_bins)
            .insert_resource(RemovableResources(self.removable_resources.clone()))
            .add_systems(
                BridgeLast,
                (
                    process_exit_request.in_set(BridgeSystems::Exit),
                    process_mailbox.in_set(BridgeSystems::Calls),
                    // The bridge's work after the calls is the bridge's time too.
                    begin_housekeeping
                        .after(BridgeSystems::Calls)
                        .before(BridgeSystems::Housekeeping),
                    count_housekeeping.after(BridgeSystems::Housekeeping),
                ),
            )
            // The catalog is complete once the app is built: the generated actions and the
            // app's own.
            .add_systems(
                Startup,
                (crate::game::publish_catalog, freeze_actions, build_gateway)
                    .chain()
                    .in_set(BridgeStartup::Catalog),
            );
        // Without the transport plugin (or before it is built) there is no server.
        if !app.world().contains_resource::<BridgeEndpoint>() {
            app.insert_resource(BridgeEndpoint::Disabled);
        }
        crate::actions::bind_all(&mut app.world_mut().get_resource_or_init::<ActionRegistry>());
        app.init_resource::<crate::reflect::handles::KeptByHistory>();
        // What world files carry of the assets the bridge made.
        app.register_type::<crate::actions::world_file_assets::WorldFileAssets>();
        // A range of floats (a camera viewport's depth) reads and writes as `{start, end}`:
        // Bevy reflects it as an opaque value without a serialized form.
        app.register_type::<std::ops::Range<f32>>()
            .register_type_data::<std::ops::Range<f32>, ReflectSerialize>()
            .register_type_data::<std::ops::Range<f32>, ReflectDeserialize>();
    }

    fn finish(&self, app: &mut App) {
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
    }
}

/// What the gateway is built from, until the first frame builds it.
#[derive(Resource)]
struct GatewaySettings {
    server: ServerConfig,
    start: StartVisibility,
}

/// Builds the gateway the server and in-process calls share, once the catalog is served.
fn build_gateway(world: &mut World) {
    let Some(settings) = world.remove_resource::<GatewaySettings>() else {
        return;
    };
    let Some(dispatch) = world
        .get_resource::<BridgeDispatchHandle>()
        .map(|handle| handle.0.clone())
    else {
        return;
    };
    let catalog = world
        .get_resource::<ServedCatalog>()
        .map_or(&CATALOG, |served| served.0);
    let gateway = match Gateway::new(catalog, &settings.start, &settings.server) {
        Ok(gateway) => gateway,
        Err(error) => {
            tracing::error!(%error, "the MCP gateway cannot be built; no call can run");
            return;
        }
    };
    let gateway = match world.get_resource::<SearchTermsFeed>() {
        Some(feed) => gateway.with_app_terms(feed.0.clone()),
        None => gateway,
    };
    world.insert_resource(LocalCalls::new(Arc::new(gateway), dispatch));
}
