//! [`McpBridgePlugin`]: the mailbox, the systems that serve it, and the transport thread.

use std::any::TypeId;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy::app::{App, AppExit, Last, MainScheduleOrder, Plugin, Startup};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};
use bevy::prelude::{Resource, World};
use bevy::reflect::TypeRegistry;
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::{
    AppTermsFeed, Limits, ServerBuilder, ServerConfig, ServerStats, StartVisibility, Token,
    TransportError,
};
use mcp_vocabulary::catalog::Catalog;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::budget::{BudgetClock, FrameBudget, PauseBridgeWork};
use crate::handlers::control_app::PendingExit;
use crate::handlers::manage_asset::AssetRoot;
use crate::handlers::manage_world::ScenesDir;
use crate::handlers::view::ScreenshotsDir;
use crate::jobs::{ActiveJobs, process_mailbox};
use crate::journal::{Journal, JournalLimits};
use crate::mailbox::{BridgeDispatch, BridgeSignals, mailbox};
use crate::observe::{AuditLog, BridgeFacts, FrameTimes, SharedAuditLog, limits_json};
use crate::policy::{PolicyConfig, WriteLimits, WritePolicy};
use crate::script::{Recorder, ScriptsDir};
use crate::search_terms::{
    NameCensus, REFRESH_EVERY, SearchTermsFeed, at_most_every, note_removed_names,
    publish_search_terms,
};

/// How long the transport may take to bind before the endpoint is reported failed.
const START_TIMEOUT: Duration = Duration::from_secs(10);

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

/// How the bridge is set up. Build it with the `with_*` methods.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// Host, port, tokens, origins and limits of the MCP server.
    pub server: ServerConfig,
    /// Which tools sessions start with.
    pub start: StartVisibility,
    /// Where world files are saved and loaded (world tools). Default `scenes`.
    pub scenes_dir: PathBuf,
    /// Where `view.screenshot` saves PNG files when asked to. Default `screenshots`.
    pub screenshots_dir: PathBuf,
    /// Where playtest scripts are recorded and read. Default `scripts`.
    pub scripts_dir: PathBuf,
    /// Whether to start the HTTP server (tests can drive the mailbox directly). Default true.
    pub serve: bool,
    /// Also append every audit entry to this file as JSON lines. Default none.
    pub audit_log_file: Option<PathBuf>,
    /// The audit log file rotates (to `<file>.1`) when it would pass this size. Default 16 MiB.
    pub audit_log_max_bytes: u64,
    /// Resources `manage_resource.remove` may remove. Default none.
    pub removable_resources: Vec<RemovableResource>,
    /// What the generic reflection actions may change, and the bounds on written values.
    pub policy: PolicyConfig,
    /// The bridge's share of each frame: calls start while it lasts, the rest wait for the next
    /// frame. Default 2 ms.
    pub frame_budget: Duration,
    /// Where the frame budget reads time (tests use a [`crate::ManualClock`]). Default the real
    /// clock.
    pub budget_clock: BudgetClock,
    /// Bounds on the journal `history.undo` takes changes back from. Default 256 entries, 16 MiB.
    pub journal: JournalLimits,
    /// Threads of the transport's runtime (HTTP, sessions, the gateway). Default 1: a second
    /// one raises throughput for many clients at once, but each answer then wakes both (four
    /// context switches per call instead of under two, measured), and the game pays for them.
    pub io_threads: usize,
}

/// A resource type the app declared safe to remove: every system that uses it copes with its
/// absence (`Option<Res<T>>`). Bevy stops the app when a system's `Res<T>` is missing, and it does
/// not expose which systems read what, so the app has to say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemovableResource {
    /// The resource's type.
    pub type_id: TypeId,
    /// Its Rust type name, for messages.
    pub type_name: &'static str,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            server: ServerConfig {
                identity: crate::identity::bevy_identity(),
                ..ServerConfig::default()
            },
            start: StartVisibility::default(),
            scenes_dir: PathBuf::from("scenes"),
            screenshots_dir: PathBuf::from("screenshots"),
            scripts_dir: PathBuf::from("scripts"),
            serve: true,
            audit_log_file: None,
            audit_log_max_bytes: crate::observe::AUDIT_FILE_MAX_BYTES,
            removable_resources: Vec::new(),
            policy: PolicyConfig::default(),
            frame_budget: crate::budget::DEFAULT_FRAME_BUDGET,
            budget_clock: BudgetClock::Real,
            journal: JournalLimits::default(),
            io_threads: 1,
        }
    }
}

impl BridgeConfig {
    /// Host to bind (default `127.0.0.1`; a non-loopback host needs a token).
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.server.host(host);
        self
    }

    /// Port to bind (default 15720; 0 picks a free port).
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.server.port(port);
        self
    }

    /// Requires this capability token.
    #[must_use]
    pub fn with_token(mut self, token: Token) -> Self {
        self.server.token(token);
        self
    }

    /// Requires the token stored in this file (first line).
    pub fn with_token_file(self, path: &std::path::Path) -> Result<Self, TransportError> {
        Ok(self.with_token(Token::from_file(path)?))
    }

    /// Allows one more browser origin (token-protected servers only).
    #[must_use]
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.server.allow_origin(origin);
        self
    }

    /// Replaces the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.server.limits = limits;
        self
    }

    /// Sets the tools sessions start with.
    #[must_use]
    pub fn with_start_visibility(mut self, start: StartVisibility) -> Self {
        self.start = start;
        self
    }

    /// Sets the scenes directory.
    #[must_use]
    pub fn with_scenes_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scenes_dir = dir.into();
        self
    }

    /// Sets the screenshots directory.
    #[must_use]
    pub fn with_screenshots_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.screenshots_dir = dir.into();
        self
    }

    /// Sets the playtest scripts directory.
    #[must_use]
    pub fn with_scripts_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scripts_dir = dir.into();
        self
    }

    /// Appends every audit entry (one per execute) to this file as JSON lines.
    #[must_use]
    pub fn with_audit_log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit_log_file = Some(path.into());
        self
    }

    /// Lets `manage_resource.remove` remove `R`. Declare only resources whose systems all take
    /// `Option<Res<R>>` or `Option<ResMut<R>>`: a plain `Res<R>` stops the app when `R` is gone.
    #[must_use]
    pub fn with_removable_resource<R: Resource>(mut self) -> Self {
        let removable = RemovableResource {
            type_id: TypeId::of::<R>(),
            type_name: std::any::type_name::<R>(),
        };
        if !self.removable_resources.contains(&removable) {
            self.removable_resources.push(removable);
        }
        self
    }

    /// Rotates the audit log file (to `<file>.1`) when it would pass `max_bytes`.
    #[must_use]
    pub fn with_audit_log_rotation(mut self, max_bytes: u64) -> Self {
        self.audit_log_max_bytes = max_bytes;
        self
    }

    /// Protects `T` from the generic actions (insert, mutate, remove, trigger, write), for a type
    /// whose invariants the bridge cannot check; `reason` is what a model is told.
    #[must_use]
    pub fn with_protected_type<T: 'static>(mut self, reason: impl Into<String>) -> Self {
        self.policy.protect::<T>(reason);
        self
    }

    /// Opens `T`, protected by a built-in rule, to the generic actions. Value checks still apply,
    /// and a relation still refuses loops.
    #[must_use]
    pub fn with_open_type<T: 'static>(mut self) -> Self {
        self.policy.open::<T>();
        self
    }

    /// Lets written values of `T` hold non-finite floats (NaN, ±inf), refused by default.
    #[must_use]
    pub fn with_non_finite_floats<T: 'static>(mut self) -> Self {
        self.policy.allow_non_finite::<T>();
        self
    }

    /// Replaces the bounds on written values (names, strings, duplicates, held assets).
    #[must_use]
    pub fn with_write_limits(mut self, limits: WriteLimits) -> Self {
        self.policy.limits = limits;
        self
    }

    /// Sets the bounds on the journal of changes ([`BridgeConfig::journal`]).
    #[must_use]
    pub fn with_journal_limits(mut self, limits: JournalLimits) -> Self {
        self.journal = limits;
        self
    }

    /// Sets the transport's threads ([`BridgeConfig::io_threads`]; 1 to 16).
    #[must_use]
    pub fn with_io_threads(mut self, threads: usize) -> Self {
        self.io_threads = threads.clamp(1, 16);
        self
    }

    /// Sets the bridge's share of each frame ([`BridgeConfig::frame_budget`]).
    #[must_use]
    pub fn with_frame_budget(mut self, per_frame: Duration) -> Self {
        self.frame_budget = per_frame;
        self
    }

    /// Sets where the frame budget reads time.
    #[must_use]
    pub fn with_budget_clock(mut self, clock: BudgetClock) -> Self {
        self.budget_clock = clock;
        self
    }

    /// Installs the mailbox and handlers without starting the HTTP server.
    #[must_use]
    pub fn without_server(mut self) -> Self {
        self.serve = false;
        self
    }
}

/// Where the bridge is reachable, or why it is not. `Starting` until the transport, started in
/// the app's first frame, reports (usually within milliseconds).
#[derive(Resource, Debug, Clone, PartialEq, Eq)]
pub enum BridgeEndpoint {
    /// The transport thread is binding.
    Starting,
    /// Serving MCP.
    Listening {
        /// The bound address.
        address: SocketAddr,
        /// The endpoint URL.
        url: String,
    },
    /// Started without a server.
    Disabled,
    /// The server could not start; the app runs without it.
    Failed(String),
}

/// The resources `manage_resource.remove` may remove (from [`BridgeConfig::with_removable_resource`]).
#[derive(Resource, Debug, Clone, Default)]
pub struct RemovableResources(pub Vec<RemovableResource>);

impl RemovableResources {
    /// Whether the app declared this type removable.
    pub fn allows(&self, type_id: TypeId) -> bool {
        self.0.iter().any(|removable| removable.type_id == type_id)
    }

    /// The declared types' paths (their registered type path, else their Rust name), sorted.
    pub fn type_paths(&self, registry: &TypeRegistry) -> Vec<String> {
        let mut paths: Vec<String> = self
            .0
            .iter()
            .map(|resource| {
                registry
                    .get(resource.type_id)
                    .map_or(resource.type_name, |registration| {
                        registration.type_info().type_path()
                    })
                    .to_owned()
            })
            .collect();
        paths.sort();
        paths
    }
}

/// Live counts of the MCP server (sessions, calls in flight), when it runs.
#[derive(Resource, Debug, Clone)]
pub struct TransportStats(pub ServerStats);

/// The transport end of the mailbox, for tests and embedders that drive calls themselves.
#[derive(Resource, Debug, Clone)]
pub struct BridgeDispatchHandle(pub BridgeDispatch);

/// Owns the transport thread; dropping it (with the app) shuts the server down.
#[derive(Resource)]
struct TransportThread {
    stop: CancellationToken,
    join: Option<JoinHandle<()>>,
}

impl Drop for TransportThread {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(join) = self.join.take()
            && join.join().is_err()
        {
            tracing::warn!("the MCP transport thread panicked while stopping");
        }
    }
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
        crate::handlers::view::connect_renderer(app);
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
            .init_resource::<crate::jobs::CallingSession>()
            .init_resource::<crate::handlers::input::HeldByBridge>()
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
                process_mailbox.in_set(BridgeSystems::Calls),
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
                config: self.config.clone(),
                dispatch,
                audit,
                app_terms,
            })))
            .add_systems(Startup, spawn_transport);
    }
}

/// The catalog the bridge serves: the generated actions, then the app's own ([`crate::game`]).
#[derive(Resource, Debug, Clone, Copy)]
pub struct ServedCatalog(pub &'static Catalog);

/// Builds the served catalog once every action is registered (the first frame's `Startup`).
fn publish_catalog(world: &mut World) {
    let catalog = world
        .get_resource::<crate::game::GameActions>()
        .map_or(&CATALOG, crate::game::GameActions::catalog);
    world.insert_resource(ServedCatalog(catalog));
}

/// What the transport needs to start, kept until the first frame.
struct TransportStart {
    config: BridgeConfig,
    dispatch: BridgeDispatch,
    audit: Arc<AuditLog>,
    app_terms: AppTermsFeed,
}

#[derive(Resource)]
struct PendingTransport(Option<TransportStart>);

/// What the transport thread reports once it listens, or why it could not.
type StartReport = Result<(SocketAddr, String, ServerStats), String>;

/// The transport thread's report, until it arrives.
#[derive(Resource)]
struct TransportStarting {
    report: Mutex<std::sync::mpsc::Receiver<StartReport>>,
    since: Instant,
}

/// Starts the transport thread without waiting for it (the first frame's `Startup`).
fn spawn_transport(world: &mut World) {
    let Some(start) = world
        .get_resource_mut::<PendingTransport>()
        .and_then(|mut pending| pending.0.take())
    else {
        return;
    };
    world.remove_resource::<PendingTransport>();
    let catalog = world
        .get_resource::<ServedCatalog>()
        .map_or(&CATALOG, |served| served.0);
    match start_transport(start, catalog) {
        Ok((thread, report)) => {
            world.insert_resource(thread);
            world.insert_resource(TransportStarting {
                report: Mutex::new(report),
                since: Instant::now(),
            });
        }
        Err(reason) => set_endpoint(world, BridgeEndpoint::Failed(reason), None),
    }
}

/// Turns the transport's start report into [`BridgeEndpoint`] (and [`TransportStats`]).
fn report_transport_start(world: &mut World) {
    let Some(starting) = world.get_resource::<TransportStarting>() else {
        return;
    };
    let received = starting.report.lock().try_recv();
    let waited = starting.since.elapsed();
    let (endpoint, stats) = match received {
        Ok(Ok((address, url, stats))) => (
            BridgeEndpoint::Listening { address, url },
            Some(TransportStats(stats)),
        ),
        Ok(Err(reason)) => (BridgeEndpoint::Failed(reason), None),
        Err(std::sync::mpsc::TryRecvError::Disconnected) => (
            BridgeEndpoint::Failed("the transport thread ended before it listened".to_owned()),
            None,
        ),
        Err(std::sync::mpsc::TryRecvError::Empty) if waited > START_TIMEOUT => (
            BridgeEndpoint::Failed("the transport did not start in time".to_owned()),
            None,
        ),
        Err(std::sync::mpsc::TryRecvError::Empty) => {
            // A reactive event loop would otherwise stop running frames before the report comes.
            if let Some(signals) = world.get_resource::<BridgeSignals>() {
                signals.waker.wake_event_loop();
            }
            return;
        }
    };
    world.remove_resource::<TransportStarting>();
    set_endpoint(world, endpoint, stats);
}

fn set_endpoint(world: &mut World, endpoint: BridgeEndpoint, stats: Option<TransportStats>) {
    match &endpoint {
        BridgeEndpoint::Listening { url, .. } => tracing::info!(%url, "MCP bridge listening"),
        BridgeEndpoint::Failed(reason) => {
            tracing::error!(%reason, "the MCP bridge did not start; the app runs without it")
        }
        BridgeEndpoint::Starting | BridgeEndpoint::Disabled => {}
    }
    if let Some(stats) = stats {
        world.insert_resource(stats);
    }
    world.insert_resource(endpoint);
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

/// Starts the server on its own OS thread with its own tokio runtime; the thread reports once it
/// listens (or why it cannot) on the returned channel.
fn start_transport(
    start: TransportStart,
    catalog: &'static Catalog,
) -> Result<(TransportThread, std::sync::mpsc::Receiver<StartReport>), String> {
    let TransportStart {
        config,
        dispatch,
        audit,
        app_terms,
    } = start;
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    // The start is reported in a frame: an app that runs frames only on events (reactive winit)
    // is woken for it.
    let waker = dispatch.waker();
    let report = move |report: StartReport| {
        let _ = started_tx.send(report);
        waker.wake();
    };
    let stop = CancellationToken::new();
    let stop_for_thread = stop.clone();
    let join = std::thread::Builder::new()
        .name("bevy-mcp-transport".to_owned())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(config.io_threads.clamp(1, 16))
                .thread_name("bevy-mcp-io")
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    report(Err(format!("cannot start the tokio runtime: {error}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let started = ServerBuilder::new(config.server, catalog)
                    .start_visibility(config.start)
                    .audit_sink(audit)
                    .app_terms(app_terms)
                    .start(Arc::new(dispatch))
                    .await;
                match started {
                    Ok(handle) => {
                        report(Ok((handle.local_addr(), handle.url(), handle.stats())));
                        stop_for_thread.cancelled().await;
                        handle.shutdown().await;
                    }
                    Err(error) => report(Err(error.to_string())),
                }
            });
        })
        .map_err(|error| format!("cannot spawn the transport thread: {error}"))?;
    Ok((
        TransportThread {
            stop,
            join: Some(join),
        },
        started_rx,
    ))
}

/// Writes `AppExit` once a requested exit's countdown ends, so the exit reply goes out first.
fn process_exit_request(world: &mut World) {
    let Some(mut pending) = world.get_resource_mut::<PendingExit>() else {
        return;
    };
    if pending.frames_left > 0 {
        pending.frames_left -= 1;
        return;
    }
    let code = pending.code;
    world.remove_resource::<PendingExit>();
    world.write_message(AppExit::from_code(code));
}
