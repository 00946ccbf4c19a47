//! The transport thread: the MCP server on its own OS thread with its own tokio runtime, started
//! in the app's first frame (binding never blocks `Plugin::build`), its start reported back as
//! [`BridgeEndpoint`], and stopped when the app is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy::app::{App, Plugin, Startup};
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::prelude::{Resource, World};
use mcp_native_transport::{
    AuditSink, Gateway, LogFeed, ServerBuilder, ServerConfig, ServerStats, TlsTrust,
};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::runtime::background::wait_for_a_free_core;
use crate::runtime::local::LocalCalls;
use crate::runtime::mailbox::{BridgeDispatch, BridgeDispatchHandle, BridgeSignals};
use crate::runtime::schedule::{BridgeLast, BridgeStartup, BridgeSystems};

/// How long the transport may take to bind before the endpoint is reported failed.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the bridge is reachable, or why it is not. `Starting` until the transport, started in
/// the app's first frame, reports (usually within milliseconds).
#[derive(Resource, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BridgeEndpoint {
    /// The transport thread is binding.
    Starting,
    /// Serving MCP.
    Listening {
        /// The bound address.
        address: SocketAddr,
        /// The endpoint URL (`https://` with TLS).
        url: String,
        /// What clients trust, when the server speaks HTTPS.
        tls: Option<TlsTrust>,
    },
    /// Started without a server.
    Disabled,
    /// The server could not start; the app runs without it.
    Failed(String),
}

/// Live counts of the MCP server (sessions, calls in flight), when it runs.
#[derive(Resource, Debug, Clone)]
pub struct TransportStats(pub ServerStats);

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

/// The MCP server on its own thread: started in the app's first frame with the gateway that
/// the app's in-process calls share, and reported as [`BridgeEndpoint`].
#[derive(Debug, Clone)]
pub struct BridgeTransportPlugin {
    server: ServerConfig,
    io_threads: usize,
}

impl BridgeTransportPlugin {
    /// The server of `server` on `io_threads` threads (1 to 16).
    pub fn new(server: ServerConfig, io_threads: usize) -> Self {
        BridgeTransportPlugin { server, io_threads }
    }
}

impl Plugin for BridgeTransportPlugin {
    fn build(&self, app: &mut App) {
        // Binding waits on the network: it happens on the transport's thread, started in the
        // first frame, and never blocks `Plugin::build`.
        app.insert_resource(BridgeEndpoint::Starting)
            .insert_resource(PendingTransport(Some(self.clone())))
            .add_systems(Startup, spawn_transport.in_set(BridgeStartup::Transport))
            .add_systems(
                BridgeLast,
                report_transport_start.in_set(BridgeSystems::Endpoint),
            );
    }
}

/// Where the transport records every `execute` (the observe plugin's audit trail), if anywhere.
#[derive(Resource, Clone)]
pub(crate) struct TransportAudit(pub Arc<dyn AuditSink>);

impl std::fmt::Debug for TransportAudit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TransportAudit")
    }
}

/// Where the app's captured log lines go for the transport (the observe plugin's), if anywhere,
/// and the handle that keeps the feed attached to the capture while the app lives.
#[derive(Resource, Clone, Debug)]
pub(crate) struct TransportLogFeed(
    pub LogFeed,
    #[expect(
        dead_code,
        reason = "held, not read: while it lives the feed stays attached"
    )]
    pub Arc<()>,
);

/// The transport's settings, until the first frame starts it.
#[derive(Resource)]
struct PendingTransport(Option<BridgeTransportPlugin>);

/// What the transport thread reports once it listens (address, URL, TLS trust, live counts),
/// or why it could not.
type StartReport = Result<(SocketAddr, String, Option<TlsTrust>, ServerStats), String>;

/// The transport thread's report, until it arrives.
#[derive(Resource)]
struct TransportStarting {
    report: Mutex<std::sync::mpsc::Receiver<StartReport>>,
    since: Instant,
}

/// Starts the transport thread without waiting for it (the first frame's `Startup`, once the
/// gateway is built).
fn spawn_transport(world: &mut World) {
    let Some(settings) = world
        .remove_resource::<PendingTransport>()
        .and_then(|mut pending| pending.0.take())
    else {
        return;
    };
    let Some(gateway) = world
        .get_resource::<LocalCalls>()
        .map(LocalCalls::shared_gateway)
    else {
        let reason = "the gateway could not be built (see the log)".to_owned();
        set_endpoint(world, BridgeEndpoint::Failed(reason), None);
        return;
    };
    let Some(dispatch) = world
        .get_resource::<BridgeDispatchHandle>()
        .map(|handle| handle.0.clone())
    else {
        let reason = "the bridge's mailbox is missing".to_owned();
        set_endpoint(world, BridgeEndpoint::Failed(reason), None);
        return;
    };
    let audit = world
        .get_resource::<TransportAudit>()
        .map(|audit| Arc::clone(&audit.0));
    let logs = world
        .get_resource::<TransportLogFeed>()
        .map(|feed| feed.0.clone());
    match start_transport(settings, gateway, dispatch, audit, logs) {
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
        Ok(Ok((address, url, tls, stats))) => (
            BridgeEndpoint::Listening { address, url, tls },
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

/// Starts the server on its own OS thread with its own tokio runtime; the thread reports once it
/// listens (or why it cannot) on the returned channel.
fn start_transport(
    settings: BridgeTransportPlugin,
    gateway: Arc<Gateway>,
    dispatch: BridgeDispatch,
    audit: Option<Arc<dyn AuditSink>>,
    logs: Option<LogFeed>,
) -> Result<(TransportThread, std::sync::mpsc::Receiver<StartReport>), String> {
    let BridgeTransportPlugin { server, io_threads } = settings;
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
            // The game thread wakes the transport's threads as it answers: they wait for a
            // free core rather than take the game thread's mid-update.
            wait_for_a_free_core();
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(io_threads.clamp(1, 16))
                .thread_name("bevy-mcp-io")
                .on_thread_start(|| {
                    wait_for_a_free_core();
                })
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
                let mut builder = ServerBuilder::new(server, gateway.catalog());
                builder.gateway(gateway);
                if let Some(audit) = audit {
                    builder.audit_sink(audit);
                }
                if let Some(logs) = logs {
                    builder.log_feed(logs);
                }
                let started = builder.start(Arc::new(dispatch)).await;
                match started {
                    Ok(handle) => {
                        report(Ok((
                            handle.local_addr(),
                            handle.url(),
                            handle.tls_trust().cloned(),
                            handle.stats(),
                        )));
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
