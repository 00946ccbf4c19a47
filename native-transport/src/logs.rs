//! The app's log lines, for the sessions that asked for them (`logging/setLevel`): each line
//! at or above a session's level goes to its GET stream as `notifications/message`.
//!
//! The app publishes on a [`LogFeed`] (a bounded broadcast: publishing never blocks the app);
//! one task (`log_forwarding`) forwards to the sessions' outboxes, which hold what a slow or
//! disconnected client has not read yet (bounded too).

use tokio::sync::broadcast;

/// Lines the feed buffers for the forwarding task before the oldest are dropped (and counted).
const FEED_CAPACITY: usize = 1024;

/// A log level, as MCP names them (RFC 5424), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Debugging detail (`debug` and `trace` lines).
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// Critical.
    Critical,
    /// Action must be taken.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
    }

    /// The level of a `tracing` level name (`error`, `warn`, `info`, `debug`, `trace`).
    pub fn from_tracing(name: &str) -> LogLevel {
        match name {
            "error" | "ERROR" => LogLevel::Error,
            "warn" | "WARN" => LogLevel::Warning,
            "info" | "INFO" => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

/// One log line of the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// How severe.
    pub level: LogLevel,
    /// Who logged (the module or target).
    pub logger: String,
    /// The message and its fields.
    pub message: String,
}

/// Where the app publishes its log lines for the server to forward. Cloning shares the feed.
#[derive(Clone, Debug)]
pub struct LogFeed {
    sender: broadcast::Sender<LogRecord>,
}

impl Default for LogFeed {
    fn default() -> Self {
        LogFeed::new()
    }
}

impl LogFeed {
    /// A feed nobody listens to yet.
    pub fn new() -> LogFeed {
        LogFeed {
            sender: broadcast::channel(FEED_CAPACITY).0,
        }
    }

    /// Publishes a line; never blocks (with no server listening it goes nowhere).
    pub fn publish(&self, record: LogRecord) {
        let _ = self.sender.send(record);
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<LogRecord> {
        self.sender.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_named() {
        assert!(LogLevel::Warning > LogLevel::Info);
        assert_eq!(LogLevel::parse("notice"), Some(LogLevel::Notice));
        assert_eq!(LogLevel::parse("verbose"), None);
        assert_eq!(LogLevel::from_tracing("warn"), LogLevel::Warning);
        assert_eq!(LogLevel::from_tracing("trace"), LogLevel::Debug);
    }
}
