//! Sessions: ids, idle expiry, the cap with eviction, in-flight calls and cancellation.
//!
//! # Invariants
//! 1. A session is in the store from `initialize` until DELETE, expiry, eviction or shutdown;
//!    removing it cancels its token, which cancels every call it has in flight and ends its
//!    streams.
//! 2. A call's cancellation token is a child of its session's token, which is a child of the
//!    server's: a cancel never crosses sessions, and shutdown reaches everything.
//! 3. `in_flight` never holds more than `max_in_flight_per_session` calls and `cancel_markers`
//!    never more than `max_cancel_markers` keys (oldest dropped first).
//!
//! # Deadlock safety
//! Locks here are `parking_lot` mutexes held only for map operations, never across an `.await`
//! or while another session's lock is held (eviction reads each session's state one at a time).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::Limits;
use crate::gateway::Visibility;
use crate::http_guard::Rejection;
use crate::jsonrpc::RequestKey;
use crate::logs::LogLevel;
use crate::outbox::Outbox;
use crate::tokens::Accepted;

/// One client session.
#[derive(Debug)]
pub(crate) struct Session {
    /// UUID v4, as sent in `Mcp-Session-Id`.
    pub id: String,
    /// The negotiated protocol version.
    pub version: String,
    /// The token the session initialized with (when tokens are configured): its digest, the
    /// scope it granted then, and how logs name it.
    pub token: Option<Accepted>,
    created: Instant,
    last_active: Mutex<Instant>,
    used: AtomicBool,
    /// Cancelled when the session ends; parent of every call token.
    pub cancel: CancellationToken,
    in_flight: Mutex<HashMap<RequestKey, CancellationToken>>,
    cancel_markers: Mutex<VecDeque<RequestKey>>,
    /// Events for the GET stream (log lines, notices), numbered and held for a resume.
    pub outbox: Outbox,
    /// The least level of the app's log lines the session asked for (`logging/setLevel`).
    pub log_level: Mutex<Option<LogLevel>>,
    /// The resources the session subscribed to (`resources/subscribe`).
    pub subscriptions: Mutex<std::collections::BTreeSet<String>>,
    /// Which tools this session may execute, and its consent ledger.
    pub gateway: Mutex<Visibility>,
    limits: Limits,
}

/// Why a call could not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BeginError {
    /// The session already runs its maximum of calls.
    TooManyInFlight(usize),
    /// A call with this id is already running in the session.
    DuplicateId,
}

/// Removes the call from the session's in-flight map when dropped.
#[derive(Debug)]
pub(crate) struct CallGuard {
    session: Arc<Session>,
    key: RequestKey,
    /// The call's cancellation token.
    pub cancel: CancellationToken,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.session.in_flight.lock().remove(&self.key);
        self.session.touch();
    }
}

impl Session {
    /// The digest of the session's token, when it has one.
    pub fn fingerprint(&self) -> Option<[u8; 32]> {
        self.token.as_ref().map(|token| token.fingerprint)
    }

    /// Marks the session as used and refreshes its idle timer.
    pub fn touch(&self) {
        self.used.store(true, Ordering::Relaxed);
        *self.last_active.lock() = Instant::now();
    }

    /// Refreshes the idle timer without marking the session used (progress does this).
    pub fn refresh(&self) {
        *self.last_active.lock() = Instant::now();
    }

    /// Registers a call; the returned guard unregisters it.
    pub fn begin_call(self: &Arc<Self>, key: RequestKey) -> Result<CallGuard, BeginError> {
        let mut in_flight = self.in_flight.lock();
        if in_flight.contains_key(&key) {
            return Err(BeginError::DuplicateId);
        }
        if in_flight.len() >= self.limits.max_in_flight_per_session {
            return Err(BeginError::TooManyInFlight(
                self.limits.max_in_flight_per_session,
            ));
        }
        let cancel = self.cancel.child_token();
        in_flight.insert(key.clone(), cancel.clone());
        drop(in_flight);
        // A reused id starts fresh: an old cancel must not silence the new call.
        self.cancel_markers.lock().retain(|marker| *marker != key);
        self.touch();
        Ok(CallGuard {
            session: Arc::clone(self),
            key,
            cancel,
        })
    }

    /// Cancels the in-flight call with this id, if any; returns whether one was cancelled.
    /// Unknown and finished ids are ignored, as the protocol asks.
    pub fn cancel_call(&self, key: &RequestKey) -> bool {
        let Some(token) = self.in_flight.lock().get(key).cloned() else {
            return false;
        };
        token.cancel();
        let mut markers = self.cancel_markers.lock();
        if !markers.contains(key) {
            if markers.len() >= self.limits.max_cancel_markers {
                markers.pop_front();
            }
            markers.push_back(key.clone());
        }
        true
    }

    /// Whether a cancel for this id was received (and is still remembered).
    pub fn was_cancelled(&self, key: &RequestKey) -> bool {
        self.cancel_markers.lock().contains(key)
    }

    /// How many cancel markers the session holds.
    #[cfg(test)]
    pub fn cancel_marker_count(&self) -> usize {
        self.cancel_markers.lock().len()
    }

    /// How many calls are running.
    pub fn in_flight_count(&self) -> usize {
        self.in_flight.lock().len()
    }

    fn has_open_stream(&self) -> bool {
        self.outbox.has_open_stream()
    }

    fn idle_since(&self) -> Instant {
        *self.last_active.lock()
    }

    /// Ends the session: cancels its calls and closes its GET stream.
    fn end(&self) {
        self.cancel.cancel();
        self.outbox.close();
    }
}

/// Every live session.
#[derive(Debug)]
pub(crate) struct SessionStore {
    sessions: DashMap<String, Arc<Session>>,
    limits: Limits,
    root: CancellationToken,
    /// Serializes creation so the cap cannot be overshot by concurrent initializes.
    creating: Mutex<()>,
    changed: Notify,
    /// Sessions ended because their token was removed or its scope changed, newest last, so
    /// their next request is told why (401) rather than that they are unknown.
    revoked: Mutex<VecDeque<String>>,
}

/// Revoked session ids remembered at most.
const MAX_REVOKED: usize = 1024;

/// A session to put in the store: a new one, or one kept from an earlier run.
#[derive(Debug)]
pub(crate) struct Restored {
    pub id: String,
    pub version: String,
    pub token: Option<Accepted>,
    pub visibility: Visibility,
    pub used: bool,
    pub created: Instant,
}

/// What the session file keeps of a live session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Kept {
    pub id: String,
    pub version: String,
    pub token_fingerprint: Option<[u8; 32]>,
    pub disabled: Vec<String>,
    pub used: bool,
    pub idle: Duration,
}

impl SessionStore {
    pub fn new(limits: Limits, root: CancellationToken) -> Self {
        SessionStore {
            sessions: DashMap::new(),
            limits,
            root,
            creating: Mutex::new(()),
            changed: Notify::new(),
            revoked: Mutex::new(VecDeque::new()),
        }
    }

    /// Creates a session, evicting one when at the cap.
    pub fn create(
        &self,
        version: &str,
        token: Option<Accepted>,
        visibility: Visibility,
    ) -> Result<Arc<Session>, Rejection> {
        let _creating = self.creating.lock();
        if self.sessions.len() >= self.limits.max_sessions {
            let victim = self
                .eviction_candidate(token.as_ref().map(|token| token.fingerprint))
                .ok_or(Rejection::TooManySessions)?;
            if self.remove(&victim) {
                tracing::info!(session = %short(&victim), "session evicted at the session cap");
            }
        }
        let session = self.insert(Restored {
            id: uuid::Uuid::new_v4().to_string(),
            version: version.to_owned(),
            token,
            visibility,
            used: false,
            created: Instant::now(),
        });
        Ok(session)
    }

    /// Takes back sessions kept from an earlier run of the app (see `session_file`), up to the
    /// cap. They are past their eviction grace: a client that never comes back for its session
    /// makes room first.
    pub fn restore(&self, sessions: Vec<Restored>) -> usize {
        let _creating = self.creating.lock();
        let mut restored = 0;
        for session in sessions {
            if self.sessions.len() >= self.limits.max_sessions {
                break;
            }
            if !self.sessions.contains_key(&session.id) {
                self.insert(session);
                restored += 1;
            }
        }
        restored
    }

    fn insert(&self, restored: Restored) -> Arc<Session> {
        let session = Arc::new(Session {
            id: restored.id,
            version: restored.version,
            token: restored.token,
            created: restored.created,
            last_active: Mutex::new(Instant::now()),
            used: AtomicBool::new(restored.used),
            cancel: self.root.child_token(),
            in_flight: Mutex::new(HashMap::new()),
            cancel_markers: Mutex::new(VecDeque::new()),
            outbox: Outbox::new(self.limits.replay_events),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(std::collections::BTreeSet::new()),
            gateway: Mutex::new(restored.visibility),
            limits: self.limits.clone(),
        });
        self.sessions
            .insert(session.id.clone(), Arc::clone(&session));
        self.changed.notify_one();
        session
    }

    /// What each live session is, for the session file: id, version, token, visibility, whether
    /// it was used, and how long ago it was last active.
    pub fn snapshot(&self) -> Vec<Kept> {
        let now = Instant::now();
        self.sessions
            .iter()
            .map(|entry| {
                let session = entry.value();
                Kept {
                    id: session.id.clone(),
                    version: session.version.clone(),
                    token_fingerprint: session.fingerprint(),
                    disabled: session.gateway.lock().disabled_tools(),
                    used: session.used.load(Ordering::Relaxed),
                    idle: now.saturating_duration_since(session.idle_since()),
                }
            })
            .collect()
    }

    /// Notified whenever a session is created or removed.
    pub fn changed(&self) -> &Notify {
        &self.changed
    }

    /// Among the sessions of the same token (one token's clients never push out another's) that
    /// are older than the eviction grace and have no open stream and no call in flight: the
    /// oldest never-used one, else the least recently active one.
    fn eviction_candidate(&self, token_fingerprint: Option<[u8; 32]>) -> Option<String> {
        let now = Instant::now();
        let grace = self.limits.session_eviction_grace;
        let evictable: Vec<Arc<Session>> = self
            .sessions
            .iter()
            .map(|entry| Arc::clone(entry.value()))
            .filter(|session| {
                session.fingerprint() == token_fingerprint
                    && now.saturating_duration_since(session.created) >= grace
                    && !session.has_open_stream()
                    && session.in_flight_count() == 0
            })
            .collect();
        let never_used = evictable
            .iter()
            .filter(|session| !session.used.load(Ordering::Relaxed))
            .min_by_key(|session| session.created);
        never_used
            .or_else(|| evictable.iter().min_by_key(|session| session.idle_since()))
            .map(|session| session.id.clone())
    }

    /// The live session with this id; an expired one is removed and not returned.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let session = self
            .sessions
            .get(id)
            .map(|entry| Arc::clone(entry.value()))?;
        if self.is_expired(&session, Instant::now()) {
            self.remove(id);
            return None;
        }
        Some(session)
    }

    /// Removes and ends a session; returns whether it existed.
    pub fn remove(&self, id: &str) -> bool {
        match self.sessions.remove(id) {
            Some((_, session)) => {
                session.end();
                self.changed.notify_one();
                true
            }
            None => false,
        }
    }

    /// Ends every session whose token `keep` refuses, and remembers their ids; returns how many.
    pub fn revoke_unless(&self, keep: impl Fn(&Accepted) -> bool) -> usize {
        let ended: Vec<String> = self
            .sessions
            .iter()
            .filter(|entry| {
                entry
                    .value()
                    .token
                    .as_ref()
                    .is_some_and(|token| !keep(token))
            })
            .map(|entry| entry.key().clone())
            .collect();
        for id in &ended {
            tracing::info!(session = %short(id), "session ended: its token was removed or its scope changed");
            self.remove(id);
            let mut revoked = self.revoked.lock();
            if revoked.len() >= MAX_REVOKED {
                revoked.pop_front();
            }
            revoked.push_back(id.clone());
        }
        ended.len()
    }

    /// Whether the session `id` was ended because its token was revoked.
    pub fn was_revoked(&self, id: &str) -> bool {
        self.revoked.lock().iter().any(|revoked| revoked == id)
    }

    /// Removes every expired session; returns how many.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let expired: Vec<String> = self
            .sessions
            .iter()
            .filter(|entry| self.is_expired(entry.value(), now))
            .map(|entry| entry.key().clone())
            .collect();
        for id in &expired {
            tracing::info!(session = %short(id), "session expired");
            self.remove(id);
        }
        expired.len()
    }

    /// Ends every session (shutdown).
    pub fn clear(&self) {
        let ids: Vec<String> = self
            .sessions
            .iter()
            .map(|entry| entry.key().clone())
            .collect();
        for id in ids {
            self.remove(&id);
        }
    }

    /// Calls `visit` with every live session.
    pub fn each(&self, mut visit: impl FnMut(&Arc<Session>)) {
        for entry in &self.sessions {
            visit(entry.value());
        }
    }

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// How many calls run now, over every session.
    pub fn calls_in_flight(&self) -> usize {
        self.sessions
            .iter()
            .map(|entry| entry.value().in_flight_count())
            .sum()
    }

    fn is_expired(&self, session: &Session, now: Instant) -> bool {
        session.in_flight_count() == 0
            && now.saturating_duration_since(session.idle_since())
                > self.limits.session_idle_timeout
    }
}

/// The first 8 characters of a session id, for logs.
pub(crate) fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(max_sessions: usize) -> SessionStore {
        let limits = Limits {
            max_sessions,
            max_in_flight_per_session: 2,
            max_cancel_markers: 3,
            session_eviction_grace: Duration::ZERO,
            ..Limits::default()
        };
        SessionStore::new(limits, CancellationToken::new())
    }

    fn create(store: &SessionStore) -> Arc<Session> {
        store
            .create("2025-11-25", None, Visibility::default())
            .unwrap_or_else(|rejection| panic!("{rejection:?}"))
    }

    #[test]
    fn ids_are_uuid_v4() {
        let store = store(4);
        let session = create(&store);
        let parsed = uuid::Uuid::parse_str(&session.id).map(|id| id.get_version_num());
        assert_eq!(parsed.ok(), Some(4));
        assert!(store.get(&session.id).is_some());
        assert!(store.remove(&session.id));
        assert!(store.get(&session.id).is_none());
        assert!(session.cancel.is_cancelled(), "removal cancels the session");
    }

    #[test]
    fn evicts_never_used_first_then_least_recently_active_idle() {
        let store = store(2);
        let used = create(&store);
        used.touch();
        let fresh = create(&store);
        let third = create(&store);
        assert!(
            store.get(&fresh.id).is_none(),
            "the never-used session goes first"
        );
        assert!(store.get(&used.id).is_some());
        third.touch();
        std::thread::sleep(Duration::from_millis(2));
        used.touch();
        let _fourth = create(&store);
        assert!(
            store.get(&third.id).is_none(),
            "then the least recently active"
        );
        assert!(store.get(&used.id).is_some());
    }

    #[test]
    fn new_sessions_are_safe_during_the_grace() {
        let limits = Limits {
            max_sessions: 2,
            session_eviction_grace: Duration::from_secs(3600),
            ..Limits::default()
        };
        let store = SessionStore::new(limits, CancellationToken::new());
        let old = store.restore(vec![Restored {
            id: uuid::Uuid::new_v4().to_string(),
            version: "2025-11-25".to_owned(),
            token: None,
            visibility: Visibility::default(),
            used: true,
            created: Instant::now()
                .checked_sub(Duration::from_secs(7200))
                .unwrap_or_else(Instant::now),
        }]);
        assert_eq!(old, 1);
        let young = create(&store);
        let newest = create(&store);
        assert!(store.get(&young.id).is_some(), "a young session stays");
        assert!(store.get(&newest.id).is_some());
        assert_eq!(store.len(), 2, "the session past its grace made room");
        assert_eq!(
            store
                .create("2025-11-25", None, Visibility::default())
                .map(|session| session.id.clone()),
            Err(Rejection::TooManySessions),
            "two young sessions: none may go"
        );
    }

    #[test]
    fn one_tokens_sessions_never_evict_anothers() {
        let store = store(2);
        let token = |byte| Accepted {
            fingerprint: [byte; 32],
            scope: mcp_vocabulary::catalog::Scope::Admin,
            id: std::sync::Arc::from("t"),
        };
        let (alice, bob) = (1, 2);
        let create_for =
            |owner| store.create("2025-11-25", Some(token(owner)), Visibility::default());
        let first = create_for(alice).unwrap_or_else(|error| panic!("{error:?}"));
        let second = create_for(alice).unwrap_or_else(|error| panic!("{error:?}"));
        assert_eq!(
            create_for(bob).map(|session| session.id.clone()),
            Err(Rejection::TooManySessions),
            "bob may not push alice's idle sessions out"
        );
        assert!(store.get(&first.id).is_some() && store.get(&second.id).is_some());
        // Alice's own new session does replace her oldest never-used one.
        let third = create_for(alice).unwrap_or_else(|error| panic!("{error:?}"));
        assert!(store.get(&first.id).is_none());
        assert!(store.get(&third.id).is_some());
    }

    #[test]
    fn refuses_when_nothing_can_be_evicted() {
        let store = store(1);
        let busy = create(&store);
        let _stream = busy.outbox.open(None);
        let _call = busy.begin_call(RequestKey::Number(1));
        assert_eq!(
            store
                .create("2025-11-25", None, Visibility::default())
                .map(|session| session.id.clone()),
            Err(Rejection::TooManySessions)
        );
    }

    #[test]
    fn in_flight_cap_and_duplicate_ids() {
        let store = store(1);
        let session = create(&store);
        let first = session.begin_call(RequestKey::Number(1));
        assert!(first.is_ok());
        assert_eq!(
            session.begin_call(RequestKey::Number(1)).err(),
            Some(BeginError::DuplicateId)
        );
        let second = session.begin_call(RequestKey::Text("1".into()));
        assert!(
            second.is_ok(),
            "string \"1\" is another request than number 1"
        );
        assert_eq!(
            session.begin_call(RequestKey::Number(3)).err(),
            Some(BeginError::TooManyInFlight(2))
        );
        drop(first);
        assert!(session.begin_call(RequestKey::Number(3)).is_ok());
    }

    #[test]
    fn cancel_is_per_key_and_markers_are_bounded() {
        let store = store(1);
        let session = create(&store);
        assert!(
            !session.cancel_call(&RequestKey::Number(9)),
            "unknown ids are ignored"
        );
        for round in 0..10 {
            let number = session
                .begin_call(RequestKey::Number(round))
                .unwrap_or_else(|error| panic!("{error:?}"));
            let text = session
                .begin_call(RequestKey::Text(round.to_string()))
                .unwrap_or_else(|error| panic!("{error:?}"));
            assert!(session.cancel_call(&RequestKey::Number(round)));
            assert!(number.cancel.is_cancelled());
            assert!(!text.cancel.is_cancelled(), "the string id is untouched");
            assert!(session.cancel_marker_count() <= 3);
        }
        assert!(session.was_cancelled(&RequestKey::Number(9)));
        assert!(
            !session.was_cancelled(&RequestKey::Number(0)),
            "the oldest markers are forgotten"
        );
    }

    #[test]
    fn one_get_stream_at_a_time() {
        let store = store(1);
        let session = create(&store);
        let first = session.outbox.open(None);
        assert!(first.is_ok());
        assert!(session.outbox.open(None).is_err());
        drop(first);
        assert!(
            session.outbox.open(None).is_ok(),
            "a closed stream frees the slot"
        );
    }

    #[test]
    fn sweeps_idle_sessions_but_not_busy_ones() {
        let limits = Limits {
            session_idle_timeout: Duration::ZERO,
            ..Limits::default()
        };
        let store = SessionStore::new(limits, CancellationToken::new());
        let idle = create(&store);
        let busy = create(&store);
        let _call = busy.begin_call(RequestKey::Number(1));
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(store.sweep(), 1);
        assert!(store.get(&idle.id).is_none());
        assert!(store.get(&busy.id).is_some());
    }
}
