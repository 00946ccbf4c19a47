//! The transport thread: the MCP server on its own OS thread with its own tokio runtime, started
//! in the app's first frame (binding never blocks `Plugin::build`), its start reported back as
//! [`BridgeEndpoint`], and stopped when the app is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy::prelude::{Resource, World};
use mcp_native_transport::{
    AppTermsFeed, ServerBuilder, ServerConfig, ServerStats, StartVisibility,
};
use mcp_vocabulary::catalog::Catalog;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::observe::audit::AuditLog;
use crate::runtime::catalog::ServedCatalog;
use crate::runtime::mailbox::{BridgeDispatch, BridgeSignals};

/// How long the transport may take to bind before the endpoint is reported failed.
const START_TIMEOUT: Duration = Duration::from_secs(10);

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

/// What the transport needs to start, kept until the first frame.
pub(crate) struct TransportStart {
    /// Host, port, tokens, origins and limits of the MCP server.
    pub(crate) server: ServerConfig,
    /// Which tools sessions start with.
    pub(crate) start: StartVisibility,
    /// Threads of the transport's runtime.
    pub(crate) io_threads: usize,
    /// The mailbox's transport end.
    pub(crate) dispatch: BridgeDispatch,
    /// Where the gateway records execute calls.
    pub(crate) audit: Arc<AuditLog>,
    /// What `search` may match of the app.
    pub(crate) app_terms: AppTermsFeed,
}

/// The transport's start, until the first frame starts it.
#[derive(Resource)]
pub(crate) struct PendingTransport(pub(crate) Option<TransportStart>);

/// What the transport thread reports once it listens, or why it could not.
type StartReport = Result<(SocketAddr, String, ServerStats), String>;

/// The transport thread's report, until it arrives.
#[derive(Resource)]
struct TransportStarting {
    report: Mutex<std::sync::mpsc::Receiver<StartReport>>,
    since: Instant,
}

/// Starts the transport thread without waiting for it (the first frame's `Startup`).
pub(crate) fn spawn_transport(world: &mut World) {
    let Some(start) = world
        .get_resource_mut::<PendingTransport>()
        .and_then(|mut pending| pending.0.take())
    else {
        return;
    };
    world.remove_resource::<PendingTransport>();
    let catalog = world
        .get_resource::<ServedCatalog>()
        .map_or(&bevy_mcp_generated::CATALOG, |served| served.0);
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
pub(crate) fn report_transport_start(world: &mut World) {
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

/// Starts the server on its own OS thread with its own tokio runtime; the thread reports once it
/// listens (or why it cannot) on the returned channel.
fn start_transport(
    start: TransportStart,
    catalog: &'static Catalog,
) -> Result<(TransportThread, std::sync::mpsc::Receiver<StartReport>), String> {
    let TransportStart {
        server,
        start,
        io_threads,
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
                .worker_threads(io_threads.clamp(1, 16))
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
                let started = ServerBuilder::new(server, catalog)
                    .start_visibility(start)
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
