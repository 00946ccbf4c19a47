//! [`BridgeConfig`]: everything an app can set about the bridge, in one builder. The plugin hands
//! each part to the part of the bridge that owns it.

use std::any::TypeId;
use std::path::PathBuf;
use std::time::Duration;

use bevy::prelude::Resource;
use mcp_native_transport::{
    Limits, ServerConfig, StartVisibility, TlsConfig, Token, TransportError,
};
use serde_json::{Value, json};

use crate::actions::manage_resource::RemovableResource;
use crate::history::journal::JournalLimits;
use crate::reflect::policy::{PolicyConfig, WriteLimits};
use crate::runtime::budget::BudgetClock;

/// How the bridge is set up. Build it with the `with_*` methods.
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    /// Keep the session table across restarts of the app, so a connected client's next call
    /// after `cargo run` just works: in `server.session_file` when set, else beside the
    /// executable (`.<name>-mcp-sessions-<port>.json`). Loopback only unless
    /// `server.keep_sessions_beyond_loopback`; never with port 0. Default true.
    pub keep_sessions: bool,
    /// Turn glibc's fast bins off when the plugin is built (Linux with glibc), so freeing a
    /// whole world's values never lands in one frame (see `runtime::allocator`). It changes the
    /// whole process's allocator, so it is the app's choice: default false. Left alone when
    /// `GLIBC_TUNABLES` sets `mxfast`.
    pub tune_allocator: bool,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            server: ServerConfig {
                identity: crate::runtime::identity::bevy_identity(),
                ..ServerConfig::default()
            },
            start: StartVisibility::default(),
            scenes_dir: PathBuf::from("scenes"),
            screenshots_dir: PathBuf::from("screenshots"),
            scripts_dir: PathBuf::from("scripts"),
            serve: true,
            audit_log_file: None,
            audit_log_max_bytes: crate::observe::audit::AUDIT_FILE_MAX_BYTES,
            removable_resources: Vec::new(),
            policy: PolicyConfig::default(),
            frame_budget: crate::runtime::budget::DEFAULT_FRAME_BUDGET,
            budget_clock: BudgetClock::Real,
            journal: JournalLimits::default(),
            io_threads: 1,
            keep_sessions: true,
            tune_allocator: false,
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

    /// Keeps sessions across restarts in this file instead of the one beside the executable.
    #[must_use]
    pub fn with_session_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.server.session_file = Some(path.into());
        self.keep_sessions = true;
        self
    }

    /// Whether sessions survive a restart of the app (default true, on loopback).
    #[must_use]
    pub fn with_keep_sessions(mut self, keep: bool) -> Self {
        self.keep_sessions = keep;
        self
    }

    /// The server's configuration as served: with the session file the bridge keeps, if any.
    pub(crate) fn served(&self) -> ServerConfig {
        let mut server = self.server.clone();
        if !self.keep_sessions || server.port == 0 {
            server.session_file = None;
        } else if server.session_file.is_none() {
            server.session_file = default_session_file(server.port);
        }
        server
    }

    /// Requires this capability token.
    #[must_use]
    pub fn with_token(mut self, token: Token) -> Self {
        self.server.token(token);
        self
    }

    /// Requires a token of this tokens file (`TOKEN [SCOPE [LABEL]]` per line, mode 0600),
    /// which the running app reads again whenever it changes. Fails now when the file cannot be
    /// used (missing, open to other users, a malformed line).
    pub fn with_token_file(mut self, path: &std::path::Path) -> Result<Self, TransportError> {
        mcp_native_transport::tokens::read_tokens(path)?;
        self.server.tokens_file = Some(path.to_owned());
        Ok(self)
    }

    /// Serves HTTPS (see [`TlsConfig`]): with a certificate from PEM files, or one made for this
    /// machine by a local CA kept in a directory.
    #[must_use]
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.server.tls = Some(tls);
        self
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

    /// Whether to turn glibc's fast bins off (default false; see [`BridgeConfig::tune_allocator`]).
    #[must_use]
    pub fn with_allocator_tuning(mut self, tune: bool) -> Self {
        self.tune_allocator = tune;
        self
    }

    /// Installs the mailbox and handlers without starting the HTTP server.
    #[must_use]
    pub fn without_server(mut self) -> Self {
        self.serve = false;
        self
    }
}

/// `.<executable>-mcp-sessions-<port>.json` beside the executable (`target/debug/` under cargo):
/// the same app on the same port finds it again, and `cargo clean` removes it.
fn default_session_file(port: u16) -> Option<PathBuf> {
    let executable = std::env::current_exe().ok()?;
    let name = executable.file_stem()?.to_string_lossy().into_owned();
    let dir = executable.parent()?;
    Some(dir.join(format!(".{name}-mcp-sessions-{port}.json")))
}

/// The limits as JSON: the server's, and the bounds on written values.
pub(crate) fn limits_json(
    limits: &mcp_native_transport::Limits,
    writes: &crate::reflect::policy::WriteLimits,
    frame_budget: std::time::Duration,
    journal: crate::history::journal::JournalLimits,
) -> Value {
    json!({
        "maxBodyBytes": limits.max_body_bytes,
        "maxSessions": limits.max_sessions,
        "sessionIdleTimeoutSeconds": limits.session_idle_timeout.as_secs(),
        "maxInFlightPerSession": limits.max_in_flight_per_session,
        "headerReadTimeoutSeconds": limits.header_read_timeout.as_secs(),
        "bodyReadTimeoutSeconds": limits.body_read_timeout.as_secs(),
        "maxHeaderBytes": limits.max_header_bytes,
        "maxConnections": limits.max_connections,
        "maxBatchEntries": limits.max_batch_entries,
        "defaultCallTimeoutMs": limits.default_call_timeout.as_millis() as u64,
        "maxCallTimeoutMs": limits.max_call_timeout.as_millis() as u64,
        "maxResultBytes": mcp_native_transport::gateway::HARD_MAX_BYTES,
        "listRowCap": mcp_native_transport::gateway::ROW_CAP,
        "stringCap": mcp_native_transport::gateway::STRING_CAP,
        "maxNameChars": writes.max_name_chars,
        "maxStringBytes": writes.max_string_bytes,
        "maxDuplicateBytes": writes.max_duplicate_bytes,
        "maxHeldAssets": writes.max_held_assets,
        "maxMadeAssets": writes.max_made_assets,
        "maxHierarchyDepth": writes.max_hierarchy_depth,
        "maxHeldEntities": journal.max_held_entities,
        "frameBudgetMs": frame_budget.as_secs_f64() * 1000.0,
        "journalEntries": journal.max_entries,
        "journalBytes": journal.max_bytes,
        "journalWorldEntities": journal.max_world_entities,
        "checkpoints": crate::history::checkpoints::MAX_CHECKPOINTS,
        "checkpointBytes": crate::history::checkpoints::MAX_CHECKPOINT_BYTES,
    })
}
