//! The audit trail of execute calls: a ring bounded in entries and bytes, and optionally a
//! JSON-lines file that rotates at a size, written by a thread of its own.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::prelude::Resource;
use mcp_native_transport::{AuditEntry, AuditSink};
use parking_lot::Mutex;
use serde_json::Value;

use crate::runtime::background::spawn_background;

/// Audit entries kept in memory at most.
pub(crate) const AUDIT_CAPACITY: usize = 1000;
/// Bytes of audit entries kept in memory at most (entries are also cut to a bounded summary of
/// their params by the transport).
pub(crate) const AUDIT_RING_BYTES: usize = 1024 * 1024;
/// Size at which the audit log file rotates, unless configured otherwise.
pub(crate) const AUDIT_FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The audit trail: a ring bounded in entries and bytes, and optionally a JSON-lines file that
/// rotates at a size (the full file becomes `<file>.1`, replacing the one before). The file is
/// written by a thread of its own: recording never does file I/O on the transport's workers.
#[derive(Debug, Default)]
pub(crate) struct AuditLog {
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

#[derive(Debug)]
struct AuditFile {
    path: PathBuf,
    queue: Mutex<Option<std::sync::mpsc::SyncSender<String>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    dropped: AtomicU64,
}

impl AuditFile {
    fn start(path: PathBuf, max_bytes: u64) -> AuditFile {
        let (queue, lines) = std::sync::mpsc::sync_channel(AUDIT_FILE_QUEUE);
        let target = path.clone();
        let writer = spawn_background("bevy-mcp-audit", move || {
            write_lines(&target, max_bytes, &lines)
        })
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
            .is_some_and(|queue| queue.try_send(line).is_ok());
        if !queued && self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(path = %self.path.display(), "the audit log file falls behind; lines are dropped");
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
fn write_lines(path: &std::path::Path, max_bytes: u64, lines: &std::sync::mpsc::Receiver<String>) {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    let mut file = None;
    let mut size = std::fs::metadata(path).map_or(0, |metadata| metadata.len());
    while let Ok(line) = lines.recv() {
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
    pub(crate) fn new(file: Option<PathBuf>, file_max_bytes: u64) -> Self {
        AuditLog {
            ring: Mutex::new(AuditRing::default()),
            file: file.map(|path| AuditFile::start(path, file_max_bytes.max(1))),
        }
    }

    /// The entries held, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<Value> {
        self.ring
            .lock()
            .entries
            .iter()
            .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
            .collect()
    }

    /// The bytes the ring holds (serialized entries).
    #[cfg(test)]
    fn ring_bytes(&self) -> usize {
        self.ring.lock().bytes
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
pub(crate) struct SharedAuditLog(pub Arc<AuditLog>);

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use serde_json::json;

    use super::*;

    fn entry(params: Value) -> AuditEntry {
        AuditEntry {
            at: SystemTime::now(),
            session: "abcdefgh".to_owned(),
            token: None,
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
        assert!(log.ring_bytes() <= AUDIT_RING_BYTES, "{}", log.ring_bytes());
        let kept = log.snapshot();
        assert!(kept.len() < 500 && !kept.is_empty());
        assert_eq!(
            kept.last().map(|entry| entry["params"]["index"].clone()),
            Some(json!(499))
        );
        // Dropping the log closes its file once every queued line is written.
        drop(log);
        let size = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
        assert!(size(&path) <= 64 * 1024, "{}", size(&path));
        let rotated = dir.path().join("audit.jsonl.1");
        assert!(size(&rotated) > 0 && size(&rotated) <= 64 * 1024);
    }
}
