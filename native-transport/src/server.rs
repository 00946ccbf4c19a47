//! Binding, accepting connections, and shutting down.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyper::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::app_terms::AppTermsFeed;
use crate::audit::AuditSink;
use crate::catalog::Catalog;
use crate::config::ServerConfig;
use crate::connections::{Connections, TrackedBody};
use crate::dispatch::Dispatch;
use crate::error::TransportError;
use crate::gateway::{Gateway, StartVisibility};
use crate::log_forwarding;
use crate::logs::LogFeed;
use crate::service::{self, Peer, Shared};
use crate::session::SessionStore;
use crate::session_file;
use crate::subscriptions;
use crate::tls::{Tls, TlsTrust};
use crate::tokens::{Reload, Throttle, ThrottleSettings, TokenTable};

/// How long shutdown waits for open connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Builds and starts the MCP server.
#[derive(Debug)]
pub struct ServerBuilder {
    config: ServerConfig,
    catalog: &'static Catalog,
    start: StartVisibility,
    audit: Option<Arc<dyn AuditSink>>,
    app_terms: Option<AppTermsFeed>,
    gateway: Option<Arc<Gateway>>,
    logs: Option<LogFeed>,
}

impl std::fmt::Debug for dyn AuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditSink")
    }
}

impl ServerBuilder {
    /// A server for `catalog` with `config`.
    pub fn new(config: ServerConfig, catalog: &'static Catalog) -> Self {
        ServerBuilder {
            config,
            catalog,
            start: StartVisibility::default(),
            audit: None,
            app_terms: None,
            gateway: None,
            logs: None,
        }
    }

    /// Serves through this gateway instead of building one: the app then shares it with calls
    /// it makes in-process ([`Gateway::plan`]), so both go through the same checks. Its catalog,
    /// start visibility and app terms are the gateway's own; the builder's are not used.
    pub fn gateway(&mut self, gateway: Arc<Gateway>) -> &mut Self {
        self.gateway = Some(gateway);
        self
    }

    /// Where the app publishes its types and entity names, so `search` knows the game.
    pub fn app_terms(&mut self, feed: AppTermsFeed) -> &mut Self {
        self.app_terms = Some(feed);
        self
    }

    /// Where the app publishes its log lines, for sessions that ask with `logging/setLevel`.
    pub fn log_feed(&mut self, feed: LogFeed) -> &mut Self {
        self.logs = Some(feed);
        self
    }

    /// Where to record every `execute` (none by default).
    pub fn audit_sink(&mut self, sink: Arc<dyn AuditSink>) -> &mut Self {
        self.audit = Some(sink);
        self
    }

    /// Which tools sessions start with.
    pub fn start_visibility(&mut self, start: StartVisibility) -> &mut Self {
        self.start = start;
        self
    }

    /// Binds and starts serving on the current tokio runtime. Fails before binding when the bind
    /// policy refuses the address. Takes `&self`, like hyper's `serve_connection`, so setters
    /// chain into it: `ServerBuilder::new(config, catalog).audit_sink(sink).start(dispatch)`.
    pub async fn start(&self, dispatch: Arc<dyn Dispatch>) -> Result<ServerHandle, TransportError> {
        let address = self.config.bind_address()?;
        let tokens = TokenTable::new(self.config.tokens.clone(), self.config.tokens_file.clone())?;
        let tls = match &self.config.tls {
            Some(config) => Some(Tls::prepare(config, address)?),
            None => None,
        };
        if tls.is_none() && !address.ip().is_loopback() {
            tracing::warn!(%address, "serving plain HTTP beyond loopback: capability tokens cross the network in clear text, readable by anyone on the same network; serve HTTPS (TLS) where the network is not your own");
        }
        let gateway = match &self.gateway {
            Some(gateway) => Arc::clone(gateway),
            None => {
                let mut gateway = Gateway::new(self.catalog, &self.start, &self.config)?;
                if let Some(feed) = &self.app_terms {
                    gateway = gateway.with_app_terms(feed.clone());
                }
                Arc::new(gateway)
            }
        };
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| TransportError::Bind { address, source })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| TransportError::Bind { address, source })?;
        let root = CancellationToken::new();
        let limits = &self.config.limits;
        let throttle = Throttle::new(ThrottleSettings {
            free_attempts: limits.wrong_token_free_attempts,
            first_delay: limits.wrong_token_delay,
            max_delay: limits.wrong_token_max_delay,
        });
        let shared = Arc::new(Shared {
            tokens,
            throttle,
            loopback: local_addr.ip().is_loopback(),
            sessions: SessionStore::new(self.config.limits.clone(), root.clone()),
            config: self.config.clone(),
            gateway,
            dispatch,
            calls: TaskTracker::new(),
            root: root.clone(),
            audit: self.audit.clone(),
        });
        let session_file = shared
            .config
            .session_file_for(local_addr)
            .map(Path::to_owned);
        let mut session_keeper = None;
        if let Some(path) = &session_file {
            let kept =
                session_file::read(path, &shared.gateway, &shared.tokens, &shared.config.limits);
            let restored = shared.sessions.restore(kept);
            if restored > 0 {
                tracing::info!(restored, path = %path.display(), "sessions of the last run taken back");
            }
            let keeper = session_file::Keeper::new(path.clone());
            tokio::spawn(Arc::clone(&keeper).keep(Arc::clone(&shared)));
            session_keeper = Some(keeper);
        }
        tokio::spawn(sweep_sessions(Arc::clone(&shared)));
        if shared.tokens.file().is_some() {
            tokio::spawn(watch_tokens_file(Arc::clone(&shared)));
        }
        tokio::spawn(subscriptions::watch(Arc::clone(&shared)));
        if let Some(feed) = &self.logs {
            tokio::spawn(log_forwarding::forward(
                Arc::clone(&shared),
                feed.subscribe(),
            ));
        }
        let trust = tls.as_ref().map(|tls| tls.trust.clone());
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared), tls));
        tracing::info!(%local_addr, token = shared.tokens.required(), tls = trust.is_some(), "MCP server listening on /mcp");
        Ok(ServerHandle {
            local_addr,
            shared,
            accept,
            session_keeper,
            trust,
        })
    }
}

/// A running server.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
    session_keeper: Option<Arc<session_file::Keeper>>,
    trust: Option<TlsTrust>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("sessions", &self.sessions.len())
            .finish()
    }
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:15720/mcp` (`https://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.trust.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}/mcp", self.local_addr)
    }

    /// What a client of this HTTPS server trusts (the CA file and its fingerprint); `None`
    /// for plain HTTP.
    pub fn tls_trust(&self) -> Option<&TlsTrust> {
        self.trust.as_ref()
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Live counts of this server, readable from any thread (also after `shutdown` took the handle).
    pub fn stats(&self) -> ServerStats {
        ServerStats(Arc::clone(&self.shared))
    }

    /// A token cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shared.root.clone()
    }

    /// Stops accepting, cancels every call, ends every session and stream, and waits (up to a
    /// few seconds) for connections to close. With a session file, the sessions are kept in it
    /// first, so the next start takes them back.
    pub async fn shutdown(self) {
        self.shared.root.cancel();
        if let Some(keeper) = &self.session_keeper {
            keeper.save(&self.shared).await;
        }
        self.shared.sessions.clear();
        self.shared.calls.close();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.shared.calls.wait()).await;
        if let Err(error) = self.accept.await {
            tracing::warn!(%error, "the accept loop ended abnormally");
        }
    }
}

/// Live counts of a running server.
#[derive(Clone)]
pub struct ServerStats(Arc<Shared>);

impl std::fmt::Debug for ServerStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerStats")
            .field("sessions", &self.sessions())
            .finish()
    }
}

impl ServerStats {
    /// Sessions open now.
    pub fn sessions(&self) -> usize {
        self.0.sessions.len()
    }

    /// Calls running now, over every session.
    pub fn calls_in_flight(&self) -> usize {
        self.0.sessions.calls_in_flight()
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, tls: Option<Tls>) {
    let limits = shared.config.limits.clone();
    let connections = Arc::new(Connections::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .keep_alive(true);
    loop {
        let accepted = tokio::select! {
            () = shared.root.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Per-connection failures (reset before accept) are routine; anything else (out of
                // file descriptors) gets a pause so the loop does not spin.
                if !is_connection_error(&error) {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let Some(connection) = connections.admit() else {
            tracing::warn!(%peer, max = limits.max_connections, "connection refused: every open connection is serving a request");
            continue;
        };
        // Without TCP_NODELAY, small SSE writes wait ~40 ms on Nagle and delayed ACKs.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let shared_for_conn = Arc::clone(&shared);
        let for_service = Arc::clone(&connection);
        let service = service_fn(move |mut request: Request<Incoming>| {
            let shared = Arc::clone(&shared_for_conn);
            let connection = Arc::clone(&for_service);
            async move {
                connection.request_started();
                request.extensions_mut().insert(Arc::clone(&connection));
                request.extensions_mut().insert(Peer(peer.ip()));
                let response = service::handle(shared, request).await?;
                Ok::<_, Infallible>(response.map(|body| TrackedBody::new(body, connection)))
            }
        });
        let http = http.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        let connections = Arc::clone(&connections);
        tokio::spawn(async move {
            let served = async {
                // The TLS handshake runs here, off the accept loop: a slow one delays no one.
                let ended = match tls {
                    None => {
                        let connection = http.serve_connection(TokioIo::new(stream), service);
                        watcher.watch(connection).await
                    }
                    Some(tls) => match tls.accept(stream).await {
                        Ok(stream) => {
                            let connection = http.serve_connection(TokioIo::new(stream), service);
                            watcher.watch(connection).await
                        }
                        Err(reason) => {
                            tracing::debug!(%peer, %reason, "TLS connection not served");
                            Ok(())
                        }
                    },
                };
                if let Err(error) = ended {
                    tracing::debug!(%error, %peer, "connection ended with an error");
                }
            };
            tokio::select! {
                () = served => {}
                // Dropping the connection closes its socket.
                () = connection.close.cancelled() => {}
            }
            connections.release(&connection);
        });
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not close within the shutdown grace period");
    }
}

/// Reads the tokens file again whenever it changes: a new token works at once, a removed one's
/// sessions end (their next request is answered 401), and an unusable file keeps the tokens in
/// use and says why, once.
async fn watch_tokens_file(shared: Arc<Shared>) {
    let mut interval = tokio::time::interval(shared.config.limits.tokens_file_poll);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shared.root.cancelled() => break,
            _ = interval.tick() => {}
        }
        let path = shared.tokens.file().map(|path| path.display().to_string());
        match shared.tokens.reload() {
            Reload::Unchanged => {}
            Reload::Applied { tokens } => {
                let ended = shared
                    .sessions
                    .revoke_unless(|token| shared.tokens.still_grants(token));
                let [read, write, admin] = shared.tokens.counts();
                tracing::info!(
                    path,
                    tokens,
                    read,
                    write,
                    admin,
                    sessions_ended = ended,
                    "tokens file read again"
                );
            }
            Reload::Refused(reason) => {
                tracing::warn!(path, %reason, "tokens file not applied; the tokens in use stay");
            }
        }
    }
}

fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

async fn sweep_sessions(shared: Arc<Shared>) {
    let idle = shared.config.limits.session_idle_timeout;
    let period = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
    let mut interval = tokio::time::interval(period);
    loop {
        tokio::select! {
            () = shared.root.cancelled() => break,
            _ = interval.tick() => {
                shared.sessions.sweep();
            }
        }
    }
}
