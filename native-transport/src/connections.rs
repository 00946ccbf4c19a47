//! Open connections, what each is doing, and which one gives way when the cap is reached.
//!
//! A connection that sends its headers and never its body holds a slot until the body deadline
//! passes; a few hundred of them would lock every new client out. At the cap, the connection
//! that matters least is closed to let the new one in: first one that has not sent a whole
//! request (oldest first), then one idle between requests (longest idle first). A connection
//! serving a request, an SSE stream included, is never closed for another.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::body::{Body, Frame, SizeHint};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

/// What a connection is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Accepted; no request yet.
    Fresh = 0,
    /// A request's headers are in, its body is not.
    Reading = 1,
    /// A whole request is in; its response is being written (or streamed).
    Serving = 2,
    /// Between requests (keep-alive).
    Idle = 3,
}

impl Phase {
    fn from_u8(value: u8) -> Phase {
        match value {
            0 => Phase::Fresh,
            1 => Phase::Reading,
            2 => Phase::Serving,
            _ => Phase::Idle,
        }
    }
}

/// One open connection.
#[derive(Debug)]
pub(crate) struct Connection {
    id: u64,
    phase: AtomicU8,
    since: Mutex<Instant>,
    /// Cancelled to close the connection (to make room for another, or at shutdown).
    pub close: CancellationToken,
}

impl Connection {
    fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        *self.since.lock() = Instant::now();
    }

    fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    /// The headers of a request arrived.
    pub fn request_started(&self) {
        self.set(Phase::Reading);
    }

    /// The whole request (its body too) arrived.
    pub fn request_read(&self) {
        self.set(Phase::Serving);
    }

    /// The response was written whole (or its stream ended).
    fn response_done(&self) {
        self.set(Phase::Idle);
    }

    /// How readily this connection gives way: lower first; `None` never.
    fn eviction_rank(&self) -> Option<(u8, Instant)> {
        let since = *self.since.lock();
        match self.phase() {
            Phase::Fresh | Phase::Reading => Some((0, since)),
            Phase::Idle => Some((1, since)),
            Phase::Serving => None,
        }
    }
}

/// Every open connection, bounded by the cap.
#[derive(Debug)]
pub(crate) struct Connections {
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
    max: usize,
}

impl Connections {
    /// A table for at most `max` connections.
    pub fn new(max: usize) -> Self {
        Connections {
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            max: max.max(1),
        }
    }

    /// Registers a new connection. At the cap, the connection that matters least is closed to
    /// make room; `None` when every open connection is serving a request.
    pub fn admit(&self) -> Option<Arc<Connection>> {
        let mut open = self.open.lock();
        if open.len() >= self.max {
            let victim = open
                .values()
                .filter_map(|connection| {
                    connection.eviction_rank().map(|rank| (rank, connection.id))
                })
                .min()
                .map(|(_, id)| id)?;
            if let Some(connection) = open.remove(&victim) {
                tracing::debug!(
                    phase = ?connection.phase(),
                    "closed a connection to make room at the connection cap"
                );
                connection.close.cancel();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            id,
            phase: AtomicU8::new(Phase::Fresh as u8),
            since: Mutex::new(Instant::now()),
            close: CancellationToken::new(),
        });
        open.insert(id, Arc::clone(&connection));
        Some(connection)
    }

    /// Forgets a closed connection.
    pub fn release(&self, connection: &Connection) {
        self.open.lock().remove(&connection.id);
    }

    /// How many connections are open.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }
}

/// A response body that marks its connection idle when it is finished or dropped.
#[derive(Debug)]
pub(crate) struct TrackedBody<B> {
    inner: B,
    connection: Arc<Connection>,
}

impl<B> TrackedBody<B> {
    /// Wraps the body of a response sent on `connection`.
    pub fn new(inner: B, connection: Arc<Connection>) -> Self {
        TrackedBody { inner, connection }
    }
}

impl<B> Drop for TrackedBody<B> {
    fn drop(&mut self) {
        self.connection.response_done();
    }
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(table: &Connections) -> Arc<Connection> {
        table
            .admit()
            .unwrap_or_else(|| panic!("a connection should be admitted"))
    }

    #[test]
    fn at_the_cap_an_incomplete_request_gives_way_before_an_idle_one() {
        let table = Connections::new(3);
        let idle = admit(&table);
        idle.request_started();
        idle.request_read();
        idle.response_done();
        let serving = admit(&table);
        serving.request_started();
        serving.request_read();
        let stalled = admit(&table);
        stalled.request_started();

        let fourth = admit(&table);
        assert!(
            stalled.close.is_cancelled(),
            "the stalled request goes first"
        );
        assert!(!idle.close.is_cancelled() && !serving.close.is_cancelled());
        assert_eq!(table.len(), 3);

        fourth.request_started();
        fourth.request_read();
        let _fifth = admit(&table);
        assert!(idle.close.is_cancelled(), "then the idle keep-alive one");
        assert!(!serving.close.is_cancelled(), "never one that is serving");
    }

    #[test]
    fn oldest_incomplete_first_and_none_when_all_serve() {
        let table = Connections::new(2);
        let first = admit(&table);
        let second = admit(&table);
        let _third = admit(&table);
        assert!(first.close.is_cancelled() && !second.close.is_cancelled());

        let table = Connections::new(1);
        let busy = admit(&table);
        busy.request_started();
        busy.request_read();
        assert!(table.admit().is_none(), "every connection is serving");
        table.release(&busy);
        assert!(table.admit().is_some(), "a released slot is free again");
    }
}
