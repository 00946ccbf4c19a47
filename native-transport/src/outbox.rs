//! What the server sends a session on its own (log lines, notices): numbered events for the
//! session's GET stream, the newest kept in a bounded replay buffer, so a client that loses the
//! stream and reconnects with `Last-Event-ID` gets exactly what it missed, or, when that is no
//! longer held, a notice saying how many events it lost.

use std::collections::VecDeque;

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::mpsc;

use crate::jsonrpc;
use crate::sse::message_frame_with_id;

/// Frames buffered on the live GET stream before the stream is closed (the client then resumes
/// from the replay buffer).
const LIVE_CAPACITY: usize = 64;

/// A session's numbered events.
#[derive(Debug)]
pub(crate) struct Outbox {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The id the next event gets; ids start at 1.
    next_id: u64,
    /// The newest events (id, frame), oldest first.
    held: VecDeque<(u64, Bytes)>,
    /// Most events held.
    capacity: usize,
    /// The open GET stream, if any.
    live: Option<mpsc::Sender<Bytes>>,
}

/// Why a GET stream could not open.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// The session has an open GET stream already.
    Conflict,
    /// `Last-Event-ID` names an event this session never sent.
    UnknownEvent(u64),
}

/// A GET stream just opened: the events to replay first (framed, concatenated) and the live ones.
#[derive(Debug)]
pub(crate) struct Opened {
    pub replayed: Bytes,
    pub live: mpsc::Receiver<Bytes>,
}

impl Outbox {
    /// An outbox keeping the newest `capacity` events.
    pub fn new(capacity: usize) -> Outbox {
        Outbox {
            inner: Mutex::new(Inner {
                next_id: 1,
                held: VecDeque::new(),
                capacity: capacity.max(1),
                live: None,
            }),
        }
    }

    /// Sends a JSON-RPC notification: numbered, held for a resume, and written to the open
    /// stream. A stream that cannot take it (a client reading too slowly) is closed, so the
    /// client reconnects and resumes rather than silently missing it.
    pub fn push(&self, message: &[u8]) -> u64 {
        let mut inner = self.inner.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        let frame = message_frame_with_id(id, message);
        if inner.held.len() >= inner.capacity {
            inner.held.pop_front();
        }
        inner.held.push_back((id, frame.clone()));
        let full = inner
            .live
            .as_ref()
            .is_some_and(|live| live.try_send(frame).is_err());
        if full {
            inner.live = None;
        }
        id
    }

    /// Opens the GET stream, resuming after `last_seen` when given: what was sent after it and
    /// is still held comes first; when some of it is no longer held, a notice says how much was
    /// lost.
    pub fn open(&self, last_seen: Option<u64>) -> Result<Opened, OpenError> {
        let mut inner = self.inner.lock();
        // An id this session never sent is wrong whatever else holds: say so first, so the
        // answer does not depend on whether the server has noticed an old stream is gone.
        if let Some(last_seen) = last_seen.filter(|last_seen| *last_seen >= inner.next_id) {
            return Err(OpenError::UnknownEvent(last_seen));
        }
        if inner.live.as_ref().is_some_and(|live| !live.is_closed()) {
            return Err(OpenError::Conflict);
        }
        let mut replayed = Vec::new();
        if let Some(last_seen) = last_seen {
            let oldest_held = inner.held.front().map_or(inner.next_id, |(id, _)| *id);
            let lost = oldest_held.saturating_sub(last_seen + 1);
            if lost > 0 {
                let notice = jsonrpc::to_bytes(&jsonrpc::notification(
                    "notifications/message",
                    json!({
                        "level": "warning",
                        "logger": "transport",
                        "data": {
                            "message": format!("{lost} events of this stream were sent while it was closed and are no longer held (the server keeps the last {}); what follows is everything after them", inner.capacity),
                            "lostEvents": lost,
                        },
                    }),
                ));
                replayed.extend_from_slice(&crate::sse::message_frame(&notice));
            }
            for (id, frame) in &inner.held {
                if *id > last_seen {
                    replayed.extend_from_slice(frame);
                }
            }
        }
        let (sender, live) = mpsc::channel(LIVE_CAPACITY);
        inner.live = Some(sender);
        Ok(Opened {
            replayed: Bytes::from(replayed),
            live,
        })
    }

    /// Whether a GET stream is open.
    pub fn has_open_stream(&self) -> bool {
        self.inner
            .lock()
            .live
            .as_ref()
            .is_some_and(|live| !live.is_closed())
    }

    /// Closes the GET stream (the session ended).
    pub fn close(&self) {
        self.inner.lock().live = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn a_resume_replays_exactly_what_came_after_the_last_seen_event() {
        let outbox = Outbox::new(4);
        let Ok(mut first) = outbox.open(None) else {
            panic!("opens")
        };
        assert_eq!(outbox.push(b"{\"n\":1}"), 1);
        assert_eq!(outbox.push(b"{\"n\":2}"), 2);
        let got = first
            .live
            .try_recv()
            .map(|frame| text(&frame))
            .unwrap_or_default();
        assert_eq!(got, "id: 1\nevent: message\ndata: {\"n\":1}\n\n");
        assert!(matches!(outbox.open(None), Err(OpenError::Conflict)));
        drop(first);
        outbox.push(b"{\"n\":3}");
        let Ok(resumed) = outbox.open(Some(1)) else {
            panic!("resumes")
        };
        let replayed = text(&resumed.replayed);
        assert!(
            replayed.starts_with("id: 2\n") && replayed.contains("id: 3\n"),
            "{replayed}"
        );
        assert!(!replayed.contains("id: 1\n"));
        drop(resumed);
        assert_eq!(outbox.open(Some(9)).err(), Some(OpenError::UnknownEvent(9)));
    }

    #[test]
    fn a_resume_past_the_buffer_says_how_much_was_lost() {
        let outbox = Outbox::new(2);
        for n in 1..=5 {
            outbox.push(format!("{{\"n\":{n}}}").as_bytes());
        }
        let Ok(resumed) = outbox.open(Some(1)) else {
            panic!("resumes")
        };
        let replayed = text(&resumed.replayed);
        assert!(replayed.contains("\"lostEvents\":2"), "{replayed}");
        assert!(replayed.contains("id: 4\n") && replayed.contains("id: 5\n"));
    }

    #[test]
    fn a_stream_that_cannot_keep_up_is_closed_and_resumable() {
        let outbox = Outbox::new(1000);
        let Ok(opened) = outbox.open(None) else {
            panic!("opens")
        };
        for n in 0..(LIVE_CAPACITY + 1) {
            outbox.push(format!("{{\"n\":{n}}}").as_bytes());
        }
        assert!(!outbox.has_open_stream(), "closed, not silently skipping");
        drop(opened);
        let Ok(resumed) = outbox.open(Some(LIVE_CAPACITY as u64)) else {
            panic!("resumes")
        };
        assert!(text(&resumed.replayed).starts_with(&format!("id: {}\n", LIVE_CAPACITY + 1)));
    }
}
