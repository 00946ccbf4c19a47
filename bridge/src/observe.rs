//! What the bridge remembers about the app for `system_control`: recent log lines (captured by a
//! `tracing` layer), recent frame times, and the audit trail of execute calls. All bounded.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use bevy::app::App;
use bevy::log::BoxedLayer;
use bevy::log::tracing::field::{Field, Visit};
use bevy::log::tracing::{Event, Level, Subscriber};
use bevy::log::tracing_subscriber::Layer;
use bevy::log::tracing_subscriber::layer::Context;
use bevy::prelude::Resource;
use mcp_native_transport::{AuditEntry, AuditSink};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// Log lines kept.
pub const LOG_CAPACITY: usize = 2000;
/// Audit entries kept in memory at most.
pub const AUDIT_CAPACITY: usize = 1000;
/// Bytes of audit entries kept in memory at most (entries are also cut to a bounded summary of
/// their params by the transport).
pub const AUDIT_RING_BYTES: usize = 1024 * 1024;
/// Size at which the audit log file rotates, unless configured otherwise.
pub const AUDIT_FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Frame times sampled for `diagnostics`.
pub const FRAME_SAMPLES: usize = 120;

/// One captured log line.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
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
pub struct LogRing {
    lines: Mutex<VecDeque<LogLine>>,
    next: AtomicU64,
}

impl LogRing {
    /// Appends a line, dropping the oldest at capacity.
    pub fn push(&self, level: &'static str, target: &str, message: String) {
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
    pub fn snapshot(&self) -> Vec<LogLine> {
        self.lines.lock().iter().cloned().collect()
    }

    /// The sequence number of the newest line ever logged (0 when none).
    pub fn cursor(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

static LOGS: OnceLock<Arc<LogRing>> = OnceLock::new();

/// The process-wide log ring, once capture is installed.
pub fn log_ring() -> Option<Arc<LogRing>> {
    LOGS.get().cloned()
}

/// A `LogPlugin::custom_layer` that feeds `system_control.get_logs`:
///
/// ```no_run
/// # use bevy::prelude::*;
/// App::new().add_plugins(bevy::log::LogPlugin {
///     custom_layer: bevy_mcp_bridge::observe::capture_logs,
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
pub fn level_rank(level: &str) -> u8 {
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

/// Recent real frame times, for `diagnostics`.
#[derive(Resource, Debug, Default)]
pub struct FrameTimes(pub VecDeque<f64>);

impl FrameTimes {
    /// Records one frame's duration in milliseconds.
    pub fn record(&mut self, millis: f64) {
        if self.0.len() >= FRAME_SAMPLES {
            self.0.pop_front();
        }
        self.0.push_back(millis);
    }
}

/// The audit trail: a ring bounded in entries and bytes, and optionally a JSON-lines file that
/// rotates at a size (the full file becomes `<file>.1`, replacing the one before). The file is
/// written by a thread of its own: recording never does file I/O on the transport's workers.
#[derive(Debug, Default)]
pub struct AuditLog {
    ring: Mutex<AuditRing>,
    file: Option<AuditFile>,
}

#[derive(Debug, Default)]
struct AuditRing {
    /// Entries as lines of JSON (parsed again only when someone reads the trail).
    entries: VecDeque<String>,
    bytes: usize,
}

/// Lines waiting for the file writer at most; beyond it lines are dropped (and counted).
const AUDIT_FILE_QUEUE: usize = 1024;

enum FileWrite {
    Line(String),
    Flush(std::sync::mpsc::SyncSender<()>),
}

#[derive(Debug)]
struct AuditFile {
    path: PathBuf,
    queue: Mutex<Option<std::sync::mpsc::SyncSender<FileWrite>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    dropped: AtomicU64,
}

impl std::fmt::Debug for FileWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileWrite")
    }
}

impl AuditFile {
    fn start(path: PathBuf, max_bytes: u64) -> AuditFile {
        let (queue, lines) = std::sync::mpsc::sync_channel(AUDIT_FILE_QUEUE);
        let target = path.clone();
        let writer = std::thread::Builder::new()
            .name("bevy-mcp-audit".to_owned())
            .spawn(move || write_lines(&target, max_bytes, &lines))
            .map_err(|error| tracing::warn!(%error, "the audit log file has no writer"))
            .ok();
        AuditFile {
            path,
            queue: Mutex::new(writer.is_some().then_some(queue)),
            writer: Mutex::new(writer),
            dropped: AtomicU64::new(0),
        }
    }

    fn append(&self, line: String) {
        let queued = self
            .queue
            .lock()
            .as_ref()
            .is_some_and(|queue| queue.try_send(FileWrite::Line(line)).is_ok());
        if !queued && self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(path = %self.path.display(), "the audit log file falls behind; lines are dropped");
        }
    }

    /// Waits (a few seconds at most) until every line queued so far is written.
    fn flush(&self) {
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        let sent = self
            .queue
            .lock()
            .as_ref()
            .is_some_and(|queue| queue.send(FileWrite::Flush(done)).is_ok());
        if sent {
            let _ = wait.recv_timeout(std::time::Duration::from_secs(5));
        }
    }
}

impl Drop for AuditFile {
    fn drop(&mut self) {
        // Closing the queue ends the writer once it has written what is queued.
        self.queue.lock().take();
        if let Some(writer) = self.writer.lock().take()
            && writer.join().is_err()
        {
            tracing::warn!("the audit log writer panicked");
        }
    }
}

/// The writer thread: appends lines, rotating first when a line would pass `max_bytes`.
fn write_lines(
    path: &std::path::Path,
    max_bytes: u64,
    lines: &std::sync::mpsc::Receiver<FileWrite>,
) {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    let mut file = None;
    let mut size = std::fs::metadata(path).map_or(0, |metadata| metadata.len());
    while let Ok(write) = lines.recv() {
        let line = match write {
            FileWrite::Line(line) => line,
            FileWrite::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let written = (|| -> std::io::Result<()> {
            if size > 0 && size + line.len() as u64 + 1 > max_bytes {
                file = None;
                let mut rotated = path.as_os_str().to_owned();
                rotated.push(".1");
                std::fs::rename(path, rotated)?;
                size = 0;
            }
            if file.is_none() {
                file = Some(open()?);
            }
            if let Some(file) = file.as_mut() {
                writeln!(file, "{line}")?;
            }
            size += line.len() as u64 + 1;
            Ok(())
        })();
        if let Err(error) = written {
            file = None;
            tracing::warn!(%error, path = %path.display(), "could not append to the audit log file");
        }
    }
}

impl AuditLog {
    /// An audit log that also appends to `file` when given, rotating it at `file_max_bytes`.
    pub fn new(file: Option<PathBuf>, file_max_bytes: u64) -> Self {
        AuditLog {
            ring: Mutex::new(AuditRing::default()),
            file: file.map(|path| AuditFile::start(path, file_max_bytes.max(1))),
        }
    }

    /// The entries held, oldest first.
    pub fn snapshot(&self) -> Vec<Value> {
        self.ring
            .lock()
            .entries
            .iter()
            .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
            .collect()
    }

    /// The bytes the ring holds (serialized entries).
    pub fn ring_bytes(&self) -> usize {
        self.ring.lock().bytes
    }

    /// Waits until the file has every entry recorded so far (for tests and shutdown).
    pub fn flush(&self) {
        if let Some(file) = &self.file {
            file.flush();
        }
    }
}

impl AuditSink for AuditLog {
    fn record(&self, entry: AuditEntry) {
        let line = entry.to_line();
        if let Some(file) = &self.file {
            file.append(line.clone());
        }
        let mut ring = self.ring.lock();
        ring.bytes += line.len();
        ring.entries.push_back(line);
        while ring.entries.len() > AUDIT_CAPACITY || ring.bytes > AUDIT_RING_BYTES {
            let Some(oldest) = ring.entries.pop_front() else {
                break;
            };
            ring.bytes -= oldest.len();
        }
    }
}

/// The audit log as a resource, shared with the transport's sink.
#[derive(Resource, Debug, Clone)]
pub struct SharedAuditLog(pub Arc<AuditLog>);

/// Facts about the bridge for `system_control.app_info`.
#[derive(Resource, Debug, Clone)]
pub struct BridgeFacts {
    /// Whether a capability token is required.
    pub token_required: bool,
    /// The server limits, as JSON.
    pub limits: Value,
    /// The well-known plugins the app added (filled in when the app finishes building).
    pub plugins: Vec<&'static str>,
}

/// The limits as JSON: the server's, and the bounds on written values.
pub fn limits_json(
    limits: &mcp_native_transport::Limits,
    writes: &crate::policy::WriteLimits,
    frame_budget: std::time::Duration,
    journal: crate::journal::JournalLimits,
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
        "frameBudgetMs": frame_budget.as_secs_f64() * 1000.0,
        "journalEntries": journal.max_entries,
        "journalBytes": journal.max_bytes,
        "checkpoints": crate::handlers::history::MAX_CHECKPOINTS,
        "checkpointBytes": crate::handlers::history::MAX_CHECKPOINT_BYTES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(params: Value) -> AuditEntry {
        AuditEntry {
            at: SystemTime::now(),
            session: "abcdefgh".to_owned(),
            action: "inspect.get_entity".to_owned(),
            effect: "read".to_owned(),
            outcome: "ok".to_owned(),
            duration: std::time::Duration::from_millis(1),
            params,
        }
    }

    #[test]
    fn the_audit_ring_is_bounded_in_bytes_and_the_file_rotates() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::new(Some(path.clone()), 64 * 1024);
        // Each entry carries about 10 KB of params (more than the transport keeps, on purpose).
        for index in 0..500 {
            log.record(entry(json!({"index": index, "blob": "b".repeat(10_000)})));
        }
        log.flush();
        assert!(log.ring_bytes() <= AUDIT_RING_BYTES, "{}", log.ring_bytes());
        let kept = log.snapshot();
        assert!(kept.len() < 500 && !kept.is_empty());
        assert_eq!(
            kept.last().map(|entry| entry["params"]["index"].clone()),
            Some(json!(499))
        );
        let size = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
        assert!(size(&path) <= 64 * 1024, "{}", size(&path));
        let rotated = dir.path().join("audit.jsonl.1");
        assert!(size(&rotated) > 0 && size(&rotated) <= 64 * 1024);
    }

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

    #[test]
    fn frame_times_keep_the_last_samples() {
        let mut times = FrameTimes::default();
        for index in 0..(FRAME_SAMPLES + 5) {
            times.record(index as f64);
        }
        assert_eq!(times.0.len(), FRAME_SAMPLES);
        assert_eq!(times.0.front().copied(), Some(5.0));
    }
}
