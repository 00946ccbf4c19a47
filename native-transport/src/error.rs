//! The transport's own errors: what can stop the server from starting or running.

use std::path::PathBuf;

/// Why the server could not start (or a token could not be read or made).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// A non-loopback bind without a capability token.
    #[error(
        "refusing to listen on {host} without a capability token: anyone on the network could drive the app. \
         {help} (or bind 127.0.0.1 for local use only)"
    )]
    TokenRequired {
        /// The host that was asked for.
        host: String,
        /// How to give one (from the product's identity: its flags and variables).
        help: String,
    },
    /// The host is not an IP address (or `localhost`).
    #[error(
        "cannot bind host {host:?}: give an IP address such as 127.0.0.1, ::1 or 0.0.0.0, or localhost"
    )]
    InvalidHost {
        /// The host that was asked for.
        host: String,
    },
    /// A token too short to be safe.
    #[error("the capability token is too short: use at least {min} characters of random text")]
    WeakToken {
        /// The minimum length.
        min: usize,
    },
    /// A token file could not be read or written.
    #[error("token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A tokens file line that cannot be used (the whole file is then refused).
    #[error("tokens file {path}, line {line}: {reason}")]
    TokensFileLine {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// What is wrong with it and how to write it.
        reason: String,
    },
    /// A tokens file other users can read or write.
    #[error(
        "tokens file {path} is open to other users (mode {mode:o}): anyone on this machine could read the tokens. \
         Run `chmod 600 {path}` and start again"
    )]
    TokensFileExposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// TLS could not be set up (a certificate or key that cannot be read or used).
    #[error("TLS: {0}")]
    Tls(String),
    /// Binding the socket failed (port in use, no permission).
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: std::net::SocketAddr,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The gateway could not be built from the catalog (a schema that does not compile).
    #[error("the catalog is not usable: {0}")]
    Catalog(String),
}
