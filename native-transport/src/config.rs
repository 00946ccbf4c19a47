//! Server configuration, the bind policy and capability tokens.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::TransportError;
use crate::identity::Identity;
use crate::tls::TlsConfig;
use crate::tokens::Token;

/// The port the bridge listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 15720;

/// Everything the server needs to know before it binds.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Host to bind. Empty or `localhost` means `127.0.0.1`. Default `127.0.0.1`.
    pub host: String,
    /// Port to bind; 0 picks a free one. Default [`DEFAULT_PORT`].
    pub port: u16,
    /// Accepted capability tokens; with these and `tokens_file` both empty no token is
    /// required (loopback only).
    pub tokens: Vec<Token>,
    /// A tokens file (`TOKEN [SCOPE [LABEL]]` per line, mode 0600), read at start and again
    /// whenever it changes while the server runs. Default none.
    pub tokens_file: Option<PathBuf>,
    /// Serve HTTPS with this certificate. Default none (plain HTTP).
    pub tls: Option<TlsConfig>,
    /// Origins allowed besides the loopback ones, e.g. `https://editor.example.com`. Default none.
    pub allowed_origins: Vec<String>,
    /// Bounds on sizes, counts and times.
    pub limits: Limits,
    /// What the server presents itself as (tool name and texts, server name, ...).
    pub identity: Identity,
    /// Check every action result against its record's output schema (a violation becomes
    /// `OUTPUT_SCHEMA_VIOLATION`). Default: on in debug builds, off in release builds.
    pub check_output_schemas: bool,
    /// Where the session table is kept across restarts of the app (mode 0600), so a client's
    /// next call after a restart just works. Default none (sessions end with the process).
    /// Used on a loopback bind, and beyond loopback only with `keep_sessions_beyond_loopback`.
    pub session_file: Option<PathBuf>,
    /// Keep sessions across restarts on a non-loopback bind too. Default off: on a shared
    /// network a restart is a natural moment for every client to start over.
    pub keep_sessions_beyond_loopback: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: "127.0.0.1".to_owned(),
            port: DEFAULT_PORT,
            tokens: Vec::new(),
            tokens_file: None,
            tls: None,
            allowed_origins: Vec::new(),
            limits: Limits::default(),
            identity: Identity::default(),
            check_output_schemas: cfg!(debug_assertions),
            session_file: None,
            keep_sessions_beyond_loopback: false,
        }
    }
}

impl ServerConfig {
    /// Sets the host to bind.
    pub fn host(&mut self, host: impl Into<String>) -> &mut Self {
        self.host = host.into();
        self
    }

    /// Sets the port to bind (0 for any free port).
    pub fn port(&mut self, port: u16) -> &mut Self {
        self.port = port;
        self
    }

    /// Adds an accepted capability token.
    pub fn token(&mut self, token: Token) -> &mut Self {
        self.tokens.push(token);
        self
    }

    /// Whether requests must present a token (tokens are configured, or a tokens file is).
    pub fn tokens_required(&self) -> bool {
        !self.tokens.is_empty() || self.tokens_file.is_some()
    }

    /// Allows one more browser origin (exact match, e.g. `https://tools.example.com:8443`).
    pub fn allow_origin(&mut self, origin: impl Into<String>) -> &mut Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The session file to use on a server bound to `address`, after the loopback rule.
    pub(crate) fn session_file_for(&self, address: SocketAddr) -> Option<&Path> {
        let allowed = address.ip().is_loopback() || self.keep_sessions_beyond_loopback;
        self.session_file.as_deref().filter(|_| allowed)
    }

    /// The address to bind after the bind policy: empty or `localhost` become `127.0.0.1`, and
    /// a non-loopback address without a token is refused.
    pub fn bind_address(&self) -> Result<SocketAddr, TransportError> {
        let ip = resolve_host(&self.host)?;
        if !ip.is_loopback() && !self.tokens_required() {
            return Err(TransportError::TokenRequired {
                host: self.host.clone(),
                help: self.identity.token_help.clone(),
            });
        }
        Ok(SocketAddr::new(ip, self.port))
    }
}

/// Parses the configured host: an IP address, or empty/`localhost` for `127.0.0.1`.
fn resolve_host(host: &str) -> Result<IpAddr, TransportError> {
    let trimmed = host.trim().trim_start_matches('[').trim_end_matches(']');
    if trimmed.is_empty() || trimmed.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    trimmed.parse().map_err(|_| TransportError::InvalidHost {
        host: host.to_owned(),
    })
}

/// Bounds on what one client can make the server hold or do. All are configurable.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest accepted request body. Default 4 MiB.
    pub max_body_bytes: usize,
    /// Most sessions at once (each holds about 1 KiB). At the cap a new session evicts an idle
    /// one of the same token older than `session_eviction_grace`: the oldest never-used one,
    /// else the least recently active. Default 512.
    pub max_sessions: usize,
    /// How long a new session is safe from eviction, so clients that connect together never
    /// push each other out. Default 60 s.
    pub session_eviction_grace: Duration,
    /// A session unused for this long is removed. Default 30 minutes.
    pub session_idle_timeout: Duration,
    /// Most calls running at once in one session. Default 8.
    pub max_in_flight_per_session: usize,
    /// Cancelled request ids remembered per session, oldest forgotten first. Default 64.
    pub max_cancel_markers: usize,
    /// Time allowed to send the request headers. Default 10 s.
    pub header_read_timeout: Duration,
    /// Time allowed to send the request body once the headers are in; a body stalled past it is
    /// answered 408 and the connection closed. Default 10 s.
    pub body_read_timeout: Duration,
    /// Most messages in one JSON-RPC batch (2025-03-26 sessions). Default 32.
    pub max_batch_entries: usize,
    /// Largest request head (request line and headers). Default 16 KiB.
    pub max_header_bytes: usize,
    /// Most open connections at once. At the cap a new connection closes one that has not sent a
    /// whole request (oldest first), else one idle between requests; when every connection is
    /// serving a request the new one is closed. Default 256.
    pub max_connections: usize,
    /// Deadline of an execute without `options.timeoutMs`. Default 30 s.
    pub default_call_timeout: Duration,
    /// Longest deadline a caller may ask for. Default 600 s.
    pub max_call_timeout: Duration,
    /// Wrong tokens one address may send before its next tokens are checked only after a
    /// delay (see `wrong_token_delay`). Default 5.
    pub wrong_token_free_attempts: u32,
    /// The delay after the first wrong token past the free ones; it doubles with each further
    /// one, up to `wrong_token_max_delay`. Default 250 ms.
    pub wrong_token_delay: Duration,
    /// The longest delay before an address's token is checked. Default 5 s.
    pub wrong_token_max_delay: Duration,
    /// How often the tokens file is looked at for changes. Default 1 s.
    pub tokens_file_poll: Duration,
    /// How often subscribed resources are read again to see whether they changed (each distinct
    /// resource once, whatever the number of subscribers). Default 1 s.
    pub subscription_poll: Duration,
    /// Most resources one session may subscribe to. Default 16.
    pub max_subscriptions_per_session: usize,
    /// Events of a session's GET stream kept for a client that reconnects with
    /// `Last-Event-ID`. Default 256.
    pub replay_events: usize,
    /// Interval of keep-alive comments on the GET notification stream. Default 15 s.
    pub keep_alive_interval: Duration,
    /// An execute whose answer comes within this time, before any progress, is answered as one
    /// `application/json` body; a slower one (or one that reports progress first) opens an SSE
    /// stream, as the spec allows either. Default 250 ms.
    pub json_reply_window: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 512,
            session_eviction_grace: Duration::from_secs(60),
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_in_flight_per_session: 8,
            max_cancel_markers: 64,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            max_batch_entries: 32,
            max_header_bytes: 16 * 1024,
            max_connections: 256,
            default_call_timeout: Duration::from_secs(30),
            max_call_timeout: Duration::from_secs(600),
            wrong_token_free_attempts: 5,
            wrong_token_delay: Duration::from_millis(250),
            wrong_token_max_delay: Duration::from_secs(5),
            tokens_file_poll: Duration::from_secs(1),
            replay_events: 256,
            subscription_poll: Duration::from_secs(1),
            max_subscriptions_per_session: 16,
            keep_alive_interval: Duration::from_secs(15),
            json_reply_window: Duration::from_millis(250),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_policy() {
        let mut config = ServerConfig::default();
        for (host, expected) in [
            ("", "127.0.0.1"),
            ("localhost", "127.0.0.1"),
            ("::1", "::1"),
            ("[::1]", "::1"),
        ] {
            config.host(host);
            let address = config
                .bind_address()
                .map(|address| address.ip().to_string());
            assert_eq!(address.ok().as_deref(), Some(expected), "{host}");
        }
        config.host("0.0.0.0");
        let refused = config.bind_address();
        let message = refused
            .as_ref()
            .map_err(ToString::to_string)
            .err()
            .unwrap_or_default();
        assert!(matches!(refused, Err(TransportError::TokenRequired { .. })));
        assert!(
            message.contains(&config.identity.token_help),
            "the operator is told what to do: {message}"
        );
        config.token(
            crate::tokens::Token::new("0123456789abcdef0123")
                .unwrap_or_else(|error| panic!("{error}")),
        );
        assert!(
            config
                .bind_address()
                .is_ok_and(|address| address.ip().is_unspecified())
        );
        config.host("not-an-ip");
        assert!(matches!(
            config.bind_address(),
            Err(TransportError::InvalidHost { .. })
        ));
    }
}
