//! Test support: a headless sandbox driven frame by frame on the calling thread, and a sandbox
//! served over HTTP from a background thread. Used by this crate's tests, the contract tests and
//! the benchmarks.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy::MinimalPlugins;
use bevy::app::{App, PluginGroup, PluginsState, ScheduleRunnerPlugin};
use bevy::prelude::{Entity, Name, World};
use bevy::time::TimeUpdateStrategy;
use mcp_native_transport::{ActionReply, ProgressSink};
use mcp_vocabulary::ToolError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use bevy_mcp_bridge::FrameWaker;
use bevy_mcp_bridge::frame_paced_runner;
use bevy_mcp_bridge::{BridgeConfig, BridgeEndpoint, BridgeSignals, McpBridgePlugin};
use bevy_mcp_bridge::{LocalCalls, PendingCall as QueuedCall};

use crate::SandboxPlugin;

/// The session id of calls made without one ([`Harness::call`]).
pub const HARNESS_SESSION: &str = "harness";
/// Most frames a harness call runs before it gives up (a test failure, never a hang).
pub const MAX_FRAMES_PER_CALL: usize = 20_000;
/// Most frames a sandbox server runs while its transport starts (5 ms apart).
const START_FRAMES: usize = 4_000;

/// How a test sandbox is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawing {
    /// Not at all: `MinimalPlugins`, as `bevy-mcp` runs by default.
    Headless,
    /// Offscreen by the renderer, as `bevy-mcp --render` runs.
    #[cfg(feature = "render")]
    Offscreen,
}

/// Longest wait for the renderer to start (it looks for an adapter and compiles nothing yet).
const RENDERER_START: Duration = Duration::from_secs(120);

/// The sandbox app with the bridge and whatever `extend` adds, built and finished but not yet
/// updated; `Err` when the drawing asked for cannot work here (no GPU adapter), with the reason.
fn sandbox_app(
    drawing: Drawing,
    config: BridgeConfig,
    extend: impl FnOnce(&mut App),
) -> Result<App, String> {
    let mut app = App::new();
    match drawing {
        Drawing::Headless => {
            app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>());
        }
        #[cfg(feature = "render")]
        Drawing::Offscreen => {
            crate::render::probe_adapter()?;
            app.add_plugins(
                crate::render::offscreen_plugins(bevy::log::LogPlugin::default())
                    // Tests share one process: the first app's logger would be the only one.
                    .disable::<bevy::log::LogPlugin>(),
            )
            .add_plugins(crate::render::OffscreenViewPlugin);
        }
    }
    app.add_plugins(SandboxPlugin)
        .add_plugins(McpBridgePlugin::new(config));
    extend(&mut app);
    // The renderer starts on a task (it asks for an adapter): wait for it, as Bevy's runners do.
    let started = Instant::now();
    while app.plugins_state() == PluginsState::Adding {
        if started.elapsed() > RENDERER_START {
            return Err("the renderer did not start within two minutes".to_owned());
        }
        bevy::tasks::tick_global_task_pools_on_main_thread();
        std::thread::sleep(Duration::from_millis(1));
    }
    app.finish();
    app.cleanup();
    Ok(app)
}

/// The sandbox world with the bridge but no HTTP server, updated by the caller. Its calls take
/// the same way as a client's: the gateway's checks, the mailbox, the executor with the journal
/// and the frame budget (only a session's consent and tool visibility are left out).
pub struct Harness {
    /// The app; inspect `harness.app.world()` after a call.
    pub app: App,
    calls: LocalCalls,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness").finish_non_exhaustive()
    }
}

/// A call in progress on a [`Harness`].
#[derive(Debug)]
pub struct PendingCall {
    call: RefCell<QueuedCall>,
    /// Cancels the call.
    pub cancel: CancellationToken,
}

impl PendingCall {
    /// The answer, if the call has answered (taken: [`Harness::finish`] no longer sees it).
    pub fn try_answer(&self) -> Option<Result<ActionReply, ToolError>> {
        self.call.borrow_mut().try_answer()
    }
}

impl Harness {
    /// The sandbox after its first frame (the demo world is spawned).
    pub fn new() -> Harness {
        Harness::with_app(|_| {})
    }

    /// The sandbox with whatever `extend` adds to its app (actions of a test's own), after its
    /// first frame.
    pub fn with_app(extend: impl FnOnce(&mut App)) -> Harness {
        Harness::drawn(Drawing::Headless, extend)
            .unwrap_or_else(|reason| panic!("the headless sandbox builds: {reason}"))
    }

    /// The sandbox on a fixed clock (1/60 s per frame, so one fixed step per frame) with its
    /// player standing still: input held for N frames moves it by an exact distance.
    pub fn stepped() -> Harness {
        Harness::stepped_with(|_| {})
    }

    /// [`Harness::stepped`] with whatever `extend` adds to the app.
    pub fn stepped_with(extend: impl FnOnce(&mut App)) -> Harness {
        let mut harness = Harness::with_app(|app| {
            app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                1.0 / crate::FIXED_HZ,
            )));
            extend(app);
        });
        let player = harness.entity("Player");
        if let Some(mut velocity) = harness.world().get_mut::<crate::Velocity>(player) {
            velocity.linear = bevy::math::Vec3::ZERO;
        }
        harness
    }

    /// The sandbox drawn offscreen, after its first frame; `Err` (why) when this machine has no
    /// GPU adapter, software or not.
    #[cfg(feature = "render")]
    pub fn rendering() -> Result<Harness, String> {
        Harness::drawn(Drawing::Offscreen, |_| {})
    }

    /// The sandbox drawn offscreen with what real games put on screen
    /// ([`crate::render::EngineShowcasePlugin`]: sprites, text, UI, a lit 3D scene), its bridge
    /// configured by `configure`, after its first frame; `Err` (why) without a GPU adapter.
    #[cfg(feature = "render")]
    pub fn showcase(
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig,
    ) -> Result<Harness, String> {
        let config = configure(crate::bridge_config().without_server());
        Harness::built(Drawing::Offscreen, config, |app| {
            app.add_plugins(crate::render::EngineShowcasePlugin);
        })
    }

    /// The sandbox with its bridge configured by `configure` and its app extended by `extend`,
    /// after its first frame.
    pub fn configured(
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig,
        extend: impl FnOnce(&mut App),
    ) -> Harness {
        let config = configure(crate::bridge_config().without_server());
        Harness::built(Drawing::Headless, config, extend)
            .unwrap_or_else(|reason| panic!("the headless sandbox builds: {reason}"))
    }

    /// The sandbox with its world files and scripts kept in `dir` and game time paused directly
    /// (not through the bridge, so the journal starts empty and the game moves nothing by
    /// itself), after two frames.
    pub fn paused_in(dir: &std::path::Path) -> Harness {
        Harness::paused_in_with(dir, |_| {})
    }

    /// [`Harness::paused_in`], with `extend` adding to the app first.
    pub fn paused_in_with(dir: &std::path::Path, extend: impl FnOnce(&mut App)) -> Harness {
        let mut harness = Harness::configured(
            |config| {
                config
                    .with_scenes_dir(dir.join("scenes"))
                    .with_scripts_dir(dir.join("scripts"))
            },
            extend,
        );
        harness
            .world()
            .resource_mut::<bevy::time::Time<bevy::time::Virtual>>()
            .pause();
        harness.run_frames(2);
        harness
    }

    fn drawn(drawing: Drawing, extend: impl FnOnce(&mut App)) -> Result<Harness, String> {
        Harness::built(drawing, crate::bridge_config().without_server(), extend)
    }

    fn built(
        drawing: Drawing,
        config: BridgeConfig,
        extend: impl FnOnce(&mut App),
    ) -> Result<Harness, String> {
        let mut app = sandbox_app(drawing, config, extend)?;
        // The first frame builds the catalog and the gateway.
        app.update();
        let calls = app
            .world()
            .get_resource::<LocalCalls>()
            .cloned()
            .unwrap_or_else(|| panic!("the bridge builds its gateway in the first frame"));
        Ok(Harness { app, calls })
    }

    /// The world.
    pub fn world(&mut self) -> &mut World {
        self.app.world_mut()
    }

    /// Spawns `count` entities named `Crate 0`, `Crate 1`, ... and nothing else: a big world.
    pub fn spawn_crates(&mut self, count: usize) -> Vec<Entity> {
        (0..count)
            .map(|index| {
                self.app
                    .world_mut()
                    .spawn(Name::new(format!("Crate {index}")))
                    .id()
            })
            .collect()
    }

    /// The entity with this unique Name.
    pub fn entity(&mut self, name: &str) -> Entity {
        let mut query = self.app.world_mut().query::<(Entity, &Name)>();
        let found: Vec<Entity> = query
            .iter(self.app.world())
            .filter(|(_, own)| own.as_str() == name)
            .map(|(entity, _)| entity)
            .collect();
        assert_eq!(found.len(), 1, "exactly one entity is named {name}");
        found[0]
    }

    /// Starts a call through the bridge's pipeline (the gateway's checks, the mailbox); it runs
    /// in the frames the caller runs next.
    pub fn start(
        &mut self,
        tool: &str,
        action: &str,
        params: Value,
        progress: ProgressSink,
    ) -> PendingCall {
        self.start_as(HARNESS_SESSION, tool, action, params, progress)
    }

    /// [`Harness::start`] as session `session`.
    pub fn start_as(
        &mut self,
        session: &str,
        tool: &str,
        action: &str,
        params: Value,
        progress: ProgressSink,
    ) -> PendingCall {
        let call = self.calls.start(session, tool, action, params, progress);
        PendingCall {
            cancel: call.cancel_token(),
            call: RefCell::new(call),
        }
    }

    /// Runs frames until the call answers; its JSON result.
    pub fn finish(&mut self, pending: &PendingCall) -> Result<Value, ToolError> {
        self.finish_reply(pending).map(|reply| reply.value)
    }

    /// Runs frames until the call answers; its result with the images it attached.
    pub fn finish_reply(&mut self, pending: &PendingCall) -> Result<ActionReply, ToolError> {
        for _ in 0..MAX_FRAMES_PER_CALL {
            if let Some(answer) = pending.try_answer() {
                return answer;
            }
            self.app.update();
        }
        panic!("no answer within {MAX_FRAMES_PER_CALL} frames");
    }

    /// Runs one call to its answer.
    pub fn call(&mut self, tool: &str, action: &str, params: Value) -> Result<Value, ToolError> {
        let pending = self.start(tool, action, params, ProgressSink::disabled());
        self.finish(&pending)
    }

    /// Runs one call to its answer as session `session` (calls without it are the session
    /// [`HARNESS_SESSION`]'s).
    pub fn call_as(
        &mut self,
        session: &str,
        tool: &str,
        action: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        let pending = self.start_as(session, tool, action, params, ProgressSink::disabled());
        self.finish(&pending)
    }

    /// Runs one call to its answer, with the images it attached.
    pub fn call_reply(
        &mut self,
        tool: &str,
        action: &str,
        params: Value,
    ) -> Result<ActionReply, ToolError> {
        let pending = self.start(tool, action, params, ProgressSink::disabled());
        self.finish_reply(&pending)
    }

    /// Runs `frames` frames.
    pub fn run_frames(&mut self, frames: usize) {
        for _ in 0..frames {
            self.app.update();
        }
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

/// The sandbox served over HTTP from a background thread, frame-paced like the binary.
/// Dropping it stops the app and the server.
pub struct SandboxServer {
    /// Where it listens.
    pub address: SocketAddr,
    waker: Arc<FrameWaker>,
    join: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SandboxServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxServer")
            .field("address", &self.address)
            .finish()
    }
}

impl SandboxServer {
    /// Starts the sandbox on an ephemeral loopback port; `configure` adjusts the bridge config.
    pub fn start(
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
    ) -> SandboxServer {
        SandboxServer::drawn(Drawing::Headless, fps, configure)
            .unwrap_or_else(|reason| panic!("the sandbox server did not start: {reason}"))
    }

    /// Starts the sandbox with what `extend` adds to the app (a game's own components and
    /// systems) on an ephemeral loopback port.
    pub fn with_app(
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
        extend: impl FnOnce(&mut App) + Send + 'static,
    ) -> SandboxServer {
        SandboxServer::drawn_with(Drawing::Headless, fps, configure, extend)
            .unwrap_or_else(|reason| panic!("the sandbox server did not start: {reason}"))
    }

    /// Starts the sandbox drawn offscreen, as `bevy-mcp --render`; `Err` (why) when this machine
    /// has no GPU adapter, software or not.
    #[cfg(feature = "render")]
    pub fn rendering(
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
    ) -> Result<SandboxServer, String> {
        SandboxServer::drawn(Drawing::Offscreen, fps, configure)
    }

    /// [`SandboxServer::rendering`] with what `extend` adds to the app (the engine showcase).
    #[cfg(feature = "render")]
    pub fn rendering_with(
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
        extend: impl FnOnce(&mut App) + Send + 'static,
    ) -> Result<SandboxServer, String> {
        SandboxServer::drawn_with(Drawing::Offscreen, fps, configure, extend)
    }

    fn drawn(
        drawing: Drawing,
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
    ) -> Result<SandboxServer, String> {
        SandboxServer::drawn_with(drawing, fps, configure, |_| {})
    }

    fn drawn_with(
        drawing: Drawing,
        fps: f64,
        configure: impl FnOnce(BridgeConfig) -> BridgeConfig + Send + 'static,
        extend: impl FnOnce(&mut App) + Send + 'static,
    ) -> Result<SandboxServer, String> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let join = std::thread::Builder::new()
            .name("sandbox".to_owned())
            .spawn(move || {
                let config = configure(crate::bridge_config().with_port(0));
                let mut app = match sandbox_app(drawing, config, extend) {
                    Ok(app) => app,
                    Err(reason) => {
                        let _ = sender.send((Err(reason), None));
                        return;
                    }
                };
                // The transport starts in the first frame and reports within a few frames.
                let mut address = Err("the transport did not report".to_owned());
                for _ in 0..START_FRAMES {
                    app.update();
                    match app.world().get_resource::<BridgeEndpoint>() {
                        Some(BridgeEndpoint::Starting) => {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Some(BridgeEndpoint::Listening { address: bound, .. }) => {
                            address = Ok(*bound);
                            break;
                        }
                        other => {
                            address = Err(format!("{other:?}"));
                            break;
                        }
                    }
                }
                let waker = app
                    .world()
                    .get_resource::<BridgeSignals>()
                    .map(|signals| signals.waker.clone());
                let started = address.is_ok();
                let _ = sender.send((address, waker));
                if started {
                    app.set_runner(frame_paced_runner(fps));
                    app.run();
                }
            })
            .unwrap_or_else(|error| panic!("spawn the sandbox thread: {error}"));
        let (address, waker) = receiver
            .recv_timeout(RENDERER_START + Duration::from_secs(30))
            .map_err(|error| format!("the sandbox did not start: {error}"))?;
        match address {
            Ok(address) => Ok(SandboxServer {
                address,
                waker: waker.unwrap_or_default(),
                join: Some(join),
            }),
            Err(reason) => {
                let _ = join.join();
                Err(reason)
            }
        }
    }
}

impl Drop for SandboxServer {
    fn drop(&mut self) {
        self.waker.request_stop();
        if let Some(join) = self.join.take() {
            let _ = join.join();
        }
    }
}
