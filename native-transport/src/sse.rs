//! Server-Sent Events: the one place frames are written, and the streaming body.
//!
//! No event ids are sent: ids invite clients to resume with `Last-Event-ID`, and without a
//! replay buffer behind them a resume would silently lose messages.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::sync::mpsc;
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

/// A streaming response body fed by a channel of serialized JSON-RPC messages, each framed as an
/// SSE event here; optionally sends keep-alive comments while idle. The stream ends when every
/// sender is dropped.
///
/// (A `tokio-stream` merge of `ReceiverStream` and `IntervalStream` would not end with the
/// channel, because the interval never ends; this poll function does, in a few lines.)
#[derive(Debug)]
pub struct SseBody {
    frames: mpsc::Receiver<Bytes>,
    keep_alive: Option<Interval>,
}

impl SseBody {
    /// A body that ends when the call's sender is dropped.
    pub fn new(frames: mpsc::Receiver<Bytes>) -> Self {
        SseBody {
            frames,
            keep_alive: None,
        }
    }

    /// A body that also sends a keep-alive comment every `period` (the GET stream).
    pub fn with_keep_alive(frames: mpsc::Receiver<Bytes>, period: Duration) -> Self {
        let mut interval = interval_at(tokio::time::Instant::now() + period, period);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        SseBody {
            frames,
            keep_alive: Some(interval),
        }
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.frames.poll_recv(cx) {
            Poll::Ready(Some(message)) => {
                if let Some(interval) = &mut self.keep_alive {
                    interval.reset();
                }
                return Poll::Ready(Some(Ok(Frame::data(message_frame(&message)))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if let Some(interval) = &mut self.keep_alive
            && interval.poll_tick(cx).is_ready()
        {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))));
        }
        Poll::Pending
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
}
