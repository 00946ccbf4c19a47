//! Server-Sent Events: the one place frames are written, and the streaming body.
//!
//! Events of the GET stream carry ids (`id: 17`): the session's outbox keeps the last ones, so a
//! client that reconnects with `Last-Event-ID` gets what it missed (see `outbox`). A call's
//! stream carries none: it ends with its answer, and a lost one is answered again by no one, so
//! an id there would promise a resume that cannot happen.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame};
use std::future::Future as _;

use tokio::sync::{mpsc, oneshot};
use tokio::time::{Interval, MissedTickBehavior, interval_at};

/// The keep-alive comment.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// One `message` event carrying a serialized JSON-RPC message. Serialized JSON has no raw
/// newlines, so one `data:` line always suffices.
pub fn message_frame(json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + 23);
    frame.extend_from_slice(b"event: message\ndata: ");
    frame.extend_from_slice(json);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// An event with an id (the GET stream's), for the outbox to keep as it is sent.
pub fn message_frame_with_id(id: u64, json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + 44);
    frame.extend_from_slice(format!("id: {id}\n").as_bytes());
    frame.extend_from_slice(&message_frame(json));
    Bytes::from(frame)
}

/// A streaming response body: serialized JSON-RPC messages, each framed as an SSE event here.
///
/// The GET stream is one channel of notifications with keep-alive comments while idle, ending
/// when every sender is dropped. A call's stream is the message that opened it (if any), its
/// progress channel until that closes, then its one response (none when it was cancelled).
///
/// (A `tokio-stream` merge of `ReceiverStream` and `IntervalStream` would not end with the
/// channel, because the interval never ends; this poll function does, in a few lines.)
#[derive(Debug)]
pub struct SseBody {
    first: Option<Bytes>,
    frames: Option<mpsc::Receiver<Bytes>>,
    last: Option<oneshot::Receiver<Bytes>>,
    keep_alive: Option<Interval>,
    /// Whether what comes on `frames` (and `first`) is framed already (the GET stream's events,
    /// framed with their ids by the outbox).
    framed: bool,
}

impl SseBody {
    /// A body that ends when the channel's senders are dropped.
    pub fn new(frames: mpsc::Receiver<Bytes>) -> Self {
        SseBody {
            first: None,
            frames: Some(frames),
            last: None,
            keep_alive: None,
            framed: false,
        }
    }

    /// A call's stream: `first` (already taken from `progress`), the rest of `progress`, then
    /// what comes on `answer`.
    pub fn call(
        first: Option<Bytes>,
        progress: Option<mpsc::Receiver<Bytes>>,
        answer: oneshot::Receiver<Bytes>,
    ) -> Self {
        SseBody {
            first,
            frames: progress,
            last: Some(answer),
            keep_alive: None,
            framed: false,
        }
    }

    /// A stream with no events (a call cancelled before it answered).
    pub fn ended() -> Self {
        SseBody {
            first: None,
            frames: None,
            last: None,
            keep_alive: None,
            framed: false,
        }
    }

    /// A body that also sends a keep-alive comment every `period` (the GET stream).
    pub fn with_keep_alive(frames: mpsc::Receiver<Bytes>, period: Duration) -> Self {
        let mut interval = interval_at(tokio::time::Instant::now() + period, period);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        SseBody {
            keep_alive: Some(interval),
            ..SseBody::new(frames)
        }
    }

    /// The GET stream: `replayed` events first (framed, with their ids), then the framed events
    /// of `frames`, with keep-alive comments while idle.
    pub fn resumed(replayed: Bytes, frames: mpsc::Receiver<Bytes>, period: Duration) -> Self {
        SseBody {
            first: (!replayed.is_empty()).then_some(replayed),
            framed: true,
            ..SseBody::with_keep_alive(frames, period)
        }
    }

    fn event(&self, message: Bytes) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let frame = if self.framed {
            message
        } else {
            message_frame(&message)
        };
        Poll::Ready(Some(Ok(Frame::data(frame))))
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(first) = self.first.take() {
            return self.event(first);
        }
        if let Some(frames) = &mut self.frames {
            match frames.poll_recv(cx) {
                Poll::Ready(Some(message)) => {
                    if let Some(interval) = &mut self.keep_alive {
                        interval.reset();
                    }
                    return self.event(message);
                }
                Poll::Ready(None) => self.frames = None,
                Poll::Pending => {
                    if let Some(interval) = &mut self.keep_alive
                        && interval.poll_tick(cx).is_ready()
                    {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))));
                    }
                    return Poll::Pending;
                }
            }
        }
        // The response is sent only after the progress channel closed.
        let Some(last) = &mut self.last else {
            return Poll::Ready(None);
        };
        match Pin::new(last).poll(cx) {
            Poll::Ready(answer) => {
                self.last = None;
                match answer {
                    Ok(message) => self.event(message),
                    Err(_) => Poll::Ready(None),
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use serde_json::json;

    #[test]
    fn frames_are_exact() {
        // Keys in sorted order, so the bytes do not depend on serde_json's map ordering.
        let json = crate::jsonrpc::to_bytes(
            &json!({"id": 1, "jsonrpc": "2.0", "result": {"text": "a\nb"}}),
        );
        let frame = message_frame(&json);
        assert_eq!(
            &frame[..],
            b"event: message\ndata: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"a\\nb\"}}\n\n".as_slice()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn keep_alive_while_idle_and_end_when_senders_drop() {
        let (sender, receiver) = mpsc::channel(4);
        let mut body = SseBody::with_keep_alive(receiver, Duration::from_secs(15));
        let first = body
            .frame()
            .await
            .and_then(Result::ok)
            .and_then(|frame| frame.into_data().ok());
        assert_eq!(first.as_deref(), Some(KEEP_ALIVE));
        // Messages go in as JSON; the body frames them.
        let _ = sender.send(Bytes::from_static(b"{}")).await;
        let second = body
            .frame()
            .await
            .and_then(Result::ok)
            .and_then(|frame| frame.into_data().ok());
        assert_eq!(
            second.as_deref(),
            Some(b"event: message\ndata: {}\n\n".as_slice())
        );
        drop(sender);
        assert!(body.frame().await.is_none());
    }

    async fn data(body: &mut SseBody) -> Option<Bytes> {
        body.frame()
            .await
            .and_then(Result::ok)
            .and_then(|frame| frame.into_data().ok())
    }

    #[tokio::test]
    async fn a_call_stream_sends_progress_then_its_answer() {
        let (progress, progress_receiver) = mpsc::channel(4);
        let (answer, answer_receiver) = oneshot::channel();
        let mut body = SseBody::call(
            Some(Bytes::from_static(b"1")),
            Some(progress_receiver),
            answer_receiver,
        );
        let _ = progress.send(Bytes::from_static(b"2")).await;
        let _ = answer.send(Bytes::from_static(b"3"));
        assert_eq!(
            data(&mut body).await.as_deref(),
            Some(b"event: message\ndata: 1\n\n".as_slice())
        );
        assert_eq!(
            data(&mut body).await.as_deref(),
            Some(b"event: message\ndata: 2\n\n".as_slice())
        );
        // The answer waits until the progress channel is closed.
        drop(progress);
        assert_eq!(
            data(&mut body).await.as_deref(),
            Some(b"event: message\ndata: 3\n\n".as_slice())
        );
        assert!(body.frame().await.is_none());
    }

    #[tokio::test]
    async fn a_cancelled_call_stream_ends_without_an_answer() {
        let (progress, progress_receiver) = mpsc::channel(4);
        let (answer, answer_receiver) = oneshot::channel::<Bytes>();
        let mut body = SseBody::call(None, Some(progress_receiver), answer_receiver);
        let _ = progress.send(Bytes::from_static(b"1")).await;
        drop(progress);
        drop(answer);
        assert_eq!(
            data(&mut body).await.as_deref(),
            Some(b"event: message\ndata: 1\n\n".as_slice())
        );
        assert!(body.frame().await.is_none());
        assert!(SseBody::ended().frame().await.is_none());
    }
}
