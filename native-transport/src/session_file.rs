//! Sessions kept across restarts of the app.
//!
//! The server lives in the app, so restarting the app (`cargo run` after each code change) used
//! to end every session, and SDK clients, which keep their session id, got 404 on every later
//! call. The session table is kept in a small file (mode 0600) that the next start of the same
//! app on the same port reads: each session's id, protocol version, the SHA-256 digest of the
//! token it is bound to, the tools it disabled, whether it was used, and when it was last active
//! (to the minute). Nothing else: no token, no consent grant, no call. Entries past the idle
//! timeout, bound to a token no longer configured, or beyond the session cap are not taken back.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::catalog::Scope;
use crate::config::Limits;
use crate::gateway::Gateway;
use crate::jsonrpc;
use crate::private_file::write_private;
use crate::service::Shared;
use crate::session::{Kept, Restored};
use crate::tokens::TokenTable;

/// The file's format version; another version is ignored.
const FORMAT: u32 = 1;
/// A larger file is not read (512 sessions take about 100 KiB).
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// How often the table is compared with the file, besides at every new or ended session (a
/// `configure` that disables tools is kept within this).
const REFRESH: Duration = Duration::from_secs(2);
/// Last-active times are kept to the minute, so a busy session does not rewrite the file at
/// every request.
const ACTIVE_GRAIN_SECONDS: u64 = 60;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionFile {
    format: u32,
    sessions: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    id: String,
    protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    disabled_tools: Vec<String>,
    #[serde(default)]
    used: bool,
    last_active_unix: u64,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The file's bytes for these sessions, stable for an unchanged table (sorted by id, times to
/// the minute).
pub(crate) fn encode(mut kept: Vec<Kept>, now_unix: u64) -> Vec<u8> {
    kept.sort_by(|a, b| a.id.cmp(&b.id));
    let sessions = kept
        .into_iter()
        .map(|session| {
            let last_active = now_unix.saturating_sub(session.idle.as_secs());
            Entry {
                id: session.id,
                protocol_version: session.version,
                token_sha256: session.token_fingerprint.map(|digest| hex(&digest)),
                disabled_tools: session.disabled,
                used: session.used,
                last_active_unix: last_active - last_active % ACTIVE_GRAIN_SECONDS,
            }
        })
        .collect();
    let file = SessionFile {
        format: FORMAT,
        sessions,
    };
    serde_json::to_vec_pretty(&file).unwrap_or_default()
}

/// The sessions of the file that may be taken back now, most recently active first, at most
/// `max`. A missing file is no session; an unreadable or malformed one is logged and ignored.
pub(crate) fn read(
    path: &Path,
    gateway: &Gateway,
    tokens: &TokenTable,
    limits: &Limits,
) -> Vec<Restored> {
    let text = match read_bounded(path) {
        Ok(Some(text)) => text,
        Ok(None) => return Vec::new(),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "the session file could not be read; starting without kept sessions");
            return Vec::new();
        }
    };
    let file: SessionFile = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "the session file is malformed; starting without kept sessions");
            return Vec::new();
        }
    };
    if file.format != FORMAT {
        return Vec::new();
    }
    let now = unix_now();
    let mut entries: Vec<Entry> = file
        .sessions
        .into_iter()
        .filter(|entry| {
            uuid::Uuid::parse_str(&entry.id).is_ok()
                && jsonrpc::is_supported(&entry.protocol_version)
                && now.saturating_sub(entry.last_active_unix)
                    <= limits.session_idle_timeout.as_secs()
                && match entry.token_sha256.as_deref().map(unhex) {
                    None => !tokens.required(),
                    Some(Some(digest)) => tokens.by_fingerprint(&digest).is_some(),
                    Some(None) => false,
                }
        })
        .collect();
    entries.sort_by_key(|entry| std::cmp::Reverse(entry.last_active_unix));
    entries.truncate(limits.max_sessions);
    // Taken back past their eviction grace: a client that never returns makes room first.
    let created = Instant::now()
        .checked_sub(limits.session_eviction_grace)
        .unwrap_or_else(Instant::now);
    entries
        .into_iter()
        .map(|entry| {
            // The scope is the token's now (a restart is when a changed scope applies).
            let token = entry
                .token_sha256
                .as_deref()
                .and_then(unhex)
                .and_then(|digest| tokens.by_fingerprint(&digest));
            let scope = token.as_ref().map_or(Scope::Admin, |token| token.scope);
            Restored {
                visibility: gateway.restored_session_state(&entry.disabled_tools, scope),
                token,
                id: entry.id,
                version: entry.protocol_version,
                used: entry.used,
                created,
            }
        })
        .collect()
}

fn read_bounded(path: &Path) -> std::io::Result<Option<String>> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    std::fs::read_to_string(path).map(Some)
}

/// Writes the file whole (a temporary file renamed over it), readable by its owner only.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    write_private(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
}

/// The session file of a running server: its path, and whether shutdown has written it for the
/// last time. Every write takes the snapshot and writes it under one lock, so a write the keeper
/// started before shutdown can never land after shutdown's, with the sessions already ended.
#[derive(Debug)]
pub(crate) struct Keeper {
    path: PathBuf,
    state: Mutex<KeeperState>,
}

#[derive(Debug, Default)]
struct KeeperState {
    closed: bool,
    written: Vec<u8>,
}

impl Keeper {
    /// The keeper of the file at `path`.
    pub fn new(path: PathBuf) -> Arc<Keeper> {
        Arc::new(Keeper {
            path,
            state: Mutex::new(KeeperState::default()),
        })
    }

    /// Writes the table when it changed, unless shutdown wrote it last; `closing` makes this
    /// the last write.
    fn write_table(&self, shared: &Shared, closing: bool) -> std::io::Result<()> {
        let mut state = self.state.lock();
        if state.closed {
            return Ok(());
        }
        state.closed = closing;
        let bytes = encode(shared.sessions.snapshot(), unix_now());
        if bytes != state.written {
            write(&self.path, &bytes)?;
            state.written = bytes;
        }
        Ok(())
    }

    /// Writes the table a last time (at shutdown, before the sessions end).
    pub async fn save(self: &Arc<Self>, shared: &Arc<Shared>) {
        let (keeper, shared) = (Arc::clone(self), Arc::clone(shared));
        match tokio::task::spawn_blocking(move || keeper.write_table(&shared, true)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "the session file could not be written"),
            Err(error) => tracing::warn!(%error, "the session file writer stopped"),
        }
    }

    /// Keeps the file in step with the table until shutdown: after every new or ended session,
    /// and every few seconds when something else changed (visibility, last activity).
    pub async fn keep(self: Arc<Self>, shared: Arc<Shared>) {
        loop {
            tokio::select! {
                biased;
                () = shared.root.cancelled() => break,
                () = shared.sessions.changed().notified() => {}
                () = tokio::time::sleep(REFRESH) => {}
            }
            let (keeper, table) = (Arc::clone(&self), Arc::clone(&shared));
            match tokio::task::spawn_blocking(move || keeper.write_table(&table, false)).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(path = %self.path.display(), %error, "the session file could not be written; sessions will not survive a restart");
                    tokio::time::sleep(REFRESH * 15).await;
                }
                Err(_) => break,
            }
        }
    }
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (index, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(id: &str, idle_seconds: u64, token: Option<[u8; 32]>) -> Kept {
        Kept {
            id: id.to_owned(),
            version: "2025-06-18".to_owned(),
            token_fingerprint: token,
            disabled: vec!["view".to_owned()],
            used: true,
            idle: Duration::from_secs(idle_seconds),
        }
    }

    #[test]
    fn digests_round_trip_through_hex() {
        let digest: [u8; 32] = std::array::from_fn(|index| (index * 7) as u8);
        assert_eq!(unhex(&hex(&digest)), Some(digest));
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex(&"g".repeat(64)), None);
    }

    #[test]
    fn encoding_is_stable_within_the_minute_and_sorted() {
        let a = uuid::Uuid::new_v4().to_string();
        let b = uuid::Uuid::new_v4().to_string();
        // 1,800,000,000 is a whole minute; 30 s into it.
        let now = 1_800_000_030;
        let first = encode(vec![kept(&b, 0, None), kept(&a, 10, None)], now);
        let second = encode(vec![kept(&a, 5, None), kept(&b, 20, None)], now + 10);
        assert_eq!(
            first, second,
            "idle times within the same minute write the same bytes"
        );
        let file: SessionFile =
            serde_json::from_slice(&first).unwrap_or_else(|error| panic!("{error}"));
        let ids: Vec<&str> = file
            .sessions
            .iter()
            .map(|entry| entry.id.as_str())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private_and_replaced_whole() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let path = dir.path().join("nested/sessions.json");
        write(&path, b"{}").unwrap_or_else(|error| panic!("{error}"));
        write(&path, b"{\"format\":1}").unwrap_or_else(|error| panic!("{error}"));
        let mode = std::fs::metadata(&path)
            .map(|metadata| metadata.permissions().mode() & 0o777)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("{\"format\":1}")
        );
        assert!(!dir.path().join("nested/sessions.json.tmp").exists());
    }
}
