//! Recent log lines of the app, captured by a `tracing` layer into a bounded ring, for
//! `system_control.get_logs`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::SystemTime;

use bevy::app::App;
use bevy::log::BoxedLayer;
use bevy::log::tracing::field::{Field, Visit};
use bevy::log::tracing::{Event, Level, Subscriber};
use bevy::log::tracing_subscriber::Layer;
use bevy::log::tracing_subscriber::layer::Context;
use mcp_native_transport::{LogFeed, LogLevel, LogRecord};
use parking_lot::Mutex;

/// Log lines kept.
pub(crate) const LOG_CAPACITY: usize = 2000;

/// One captured log line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogLine {
    /// Increasing sequence number; cursors refer to it.
    pub seq: u64,
    /// Seconds since the Unix epoch.
    pub time: f64,
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: &'static str,
    /// The module or target that logged.
    pub target: String,
    /// The message and its fields.
    pub message: String,
}

/// The ring of recent log lines.
#[derive(Debug, Default)]
pub(crate) struct LogRing {
    lines: Mutex<VecDeque<LogLine>>,
    next: AtomicU64,
}

/// The MCP servers' log feeds: sessions that asked for log lines (`logging/setLevel`) get the
/// captured ones from there. Each is kept while its app holds the handle [`attach_log_feed`]
/// returned (a feed has no listener until its server starts, so that cannot tell).
static FEEDS: Mutex<Vec<(Weak<()>, LogFeed)>> = Mutex::new(Vec::new());

/// Sends every captured line to `feed` as well, as long as the returned handle lives.
pub(crate) fn attach_log_feed(feed: LogFeed) -> Arc<()> {
    let handle = Arc::new(());
    FEEDS.lock().push((Arc::downgrade(&handle), feed));
    handle
}

impl LogRing {
    /// Appends a line, dropping the oldest at capacity.
    pub(crate) fn push(&self, level: &'static str, target: &str, message: String) {
        {
            let mut feeds = FEEDS.lock();
            // A feed whose app is gone is dropped here, so feeds never pile up.
            feeds.retain(|(app, _)| app.strong_count() > 0);
            for (_, feed) in feeds.iter() {
                feed.publish(LogRecord {
                    level: LogLevel::from_tracing(level),
                    logger: target.to_owned(),
                    message: message.clone(),
                });
            }
        }
        let seq = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let time = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|since| since.as_secs_f64())
            .unwrap_or(0.0);
        let mut lines = self.lines.lock();
        if lines.len() >= LOG_CAPACITY {
            lines.pop_front();
        }
        lines.push_back(LogLine {
            seq,
            time,
            level,
            target: target.to_owned(),
            message,
        });
    }

    /// A copy of the lines held, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<LogLine> {
        self.lines.lock().iter().cloned().collect()
    }

    /// The sequence number of the newest line ever logged (0 when none).
    pub(crate) fn cursor(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

static LOGS: OnceLock<Arc<LogRing>> = OnceLock::new();

/// The process-wide log ring, once capture is installed.
pub(crate) fn log_ring() -> Option<Arc<LogRing>> {
    LOGS.get().cloned()
}

/// A `LogPlugin::custom_layer` that feeds `system_control.get_logs`:
///
/// ```no_run
/// # use bevy::prelude::*;
/// App::new().add_plugins(bevy::log::LogPlugin {
///     custom_layer: bevy_mcp_bridge::capture_logs,
///     ..default()
/// });
/// ```
pub fn capture_logs(_app: &mut App) -> Option<BoxedLayer> {
    let ring = LOGS.get_or_init(|| Arc::new(LogRing::default())).clone();
    Some(Box::new(CaptureLayer(ring)))
}

struct CaptureLayer(Arc<LogRing>);

impl<S: Subscriber> Layer<S> for CaptureLayer {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let metadata = event.metadata();
        let mut visitor = MessageVisitor::default();
        event.record(&mut visitor);
        self.0.push(
            level_name(*metadata.level()),
            metadata.target(),
            visitor.finish(),
        );
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        _ => "trace",
    }
}

/// Severity rank: lower is more severe.
pub(crate) fn level_rank(level: &str) -> u8 {
    match level {
        "error" => 1,
        "warn" => 2,
        "info" => 3,
        "debug" => 4,
        _ => 5,
    }
}

#[derive(Default)]
struct MessageVisitor {
    message: String,
    fields: String,
}

impl MessageVisitor {
    fn finish(self) -> String {
        if self.fields.is_empty() {
            self.message
        } else {
            format!("{}{}", self.message, self.fields)
        }
    }
}

impl Visit for MessageVisitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_ring_is_bounded_and_numbered() {
        let ring = LogRing::default();
        for index in 0..(LOG_CAPACITY + 10) {
            ring.push("info", "test", format!("line {index}"));
        }
        let lines = ring.snapshot();
        assert_eq!(lines.len(), LOG_CAPACITY);
        assert_eq!(lines[0].seq, 11);
        assert_eq!(ring.cursor(), (LOG_CAPACITY + 10) as u64);
    }
}
