//! The boundary to whatever executes actions: an engine bridge, or a test double.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::catalog::{ActionRecord, ToolRecord};
use crate::jsonrpc::{self, RequestKey};
pub use mcp_vocabulary::ToolError;

/// The future a [`Dispatch`] returns.
pub type DispatchFuture = Pin<Box<dyn Future<Output = Result<ActionReply, ToolError>> + Send>>;

/// What an action answered: its JSON result, and images that go beside it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionReply {
    /// The result: the text content, and `structuredContent` on versions that have it.
    pub value: Value,
    /// Images sent as MCP `image` content after the text (a successful result only).
    pub images: Vec<ImageContent>,
}

impl From<Value> for ActionReply {
    fn from(value: Value) -> Self {
        ActionReply {
            value,
            images: Vec::new(),
        }
    }
}

/// One image of a result: encoded bytes (PNG, ...) and their MIME type. The transport sends them
/// base64-encoded, as MCP `image` content.
#[derive(Clone, PartialEq, Eq)]
pub struct ImageContent {
    /// The MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// The encoded image.
    pub data: Vec<u8>,
}

impl fmt::Debug for ImageContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImageContent")
            .field("mime_type", &self.mime_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// Executes validated actions. The transport calls it once per `execute`, after every check.
///
/// The implementation should stop early when `call.cancel` is cancelled (a queued job that has
/// not started must not start). The deadline is the transport's alone: when it passes, the
/// transport cancels the token, gives the job a moment to wind down and answers `TIMEOUT`
/// itself, so a dispatcher never decides (or races) the deadline.
pub trait Dispatch: Send + Sync + 'static {
    /// Runs one action.
    fn dispatch(&self, call: DispatchCall) -> DispatchFuture;
}

/// One validated action call.
#[derive(Debug)]
pub struct DispatchCall {
    /// The tool, as the catalog records it.
    pub tool: &'static ToolRecord,
    /// The action (aliases are resolved), as the catalog records it.
    pub action: &'static ActionRecord,
    /// The validated parameters, moved from the request.
    pub params: Value,
    /// The calling session.
    pub session_id: String,
    /// The JSON-RPC id of the call, as a typed key.
    pub request: RequestKey,
    /// Where progress goes (a no-op when the caller sent no progress token).
    pub progress: ProgressSink,
    /// Cancelled when the caller cancels, the session ends or the deadline passes.
    pub cancel: CancellationToken,
}

/// The most often [`ProgressSink::report_paced`] sends a notification.
pub const PROGRESS_PACE: Duration = Duration::from_millis(100);

/// Sends `notifications/progress` for one call on its SSE stream.
///
/// Progress is strictly increasing (a lower or equal value is dropped), never sent without a
/// progress token, and never after the call finished or was cancelled.
#[derive(Clone)]
pub struct ProgressSink {
    inner: Option<Arc<ProgressInner>>,
}

struct ProgressInner {
    token: Value,
    cancel: CancellationToken,
    state: Mutex<ProgressState>,
    on_progress: Box<dyn Fn() + Send + Sync>,
}

struct ProgressState {
    last: Option<f64>,
    /// When the last notification went out.
    sent_at: Option<Instant>,
    closed: bool,
    frames: Option<mpsc::Sender<Bytes>>,
}

impl ProgressSink {
    /// A sink that drops everything (no progress token was given).
    pub fn disabled() -> Self {
        ProgressSink { inner: None }
    }

    /// A sink writing to `frames` for `token`; `on_progress` runs on every notification sent
    /// (the session uses it to refresh its idle timer).
    pub(crate) fn new(
        token: Value,
        frames: mpsc::Sender<Bytes>,
        cancel: CancellationToken,
        on_progress: Box<dyn Fn() + Send + Sync>,
    ) -> Self {
        ProgressSink {
            inner: Some(Arc::new(ProgressInner {
                token,
                cancel,
                state: Mutex::new(ProgressState {
                    last: None,
                    sent_at: None,
                    closed: false,
                    frames: Some(frames),
                }),
                on_progress,
            })),
        }
    }

    /// A sink that records what it would send, for tests of dispatchers.
    pub fn recording(token: Value) -> (Self, mpsc::Receiver<Bytes>) {
        let (sender, receiver) = mpsc::channel(1024);
        (
            ProgressSink::new(token, sender, CancellationToken::new(), Box::new(|| {})),
            receiver,
        )
    }

    /// Whether the caller asked for progress.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Reports progress; returns whether a notification was sent.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.send(progress, total, message, Duration::ZERO)
    }

    /// Reports progress at most once per [`PROGRESS_PACE`]: for work that advances every frame
    /// (sixty notifications a second, over many calls at once, cost the machine more than the
    /// client gains from them). The first report always goes out.
    pub fn report_paced(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.send(progress, total, message, PROGRESS_PACE)
    }

    fn send(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        pace: Duration,
    ) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        if inner.cancel.is_cancelled() || !progress.is_finite() {
            return false;
        }
        let mut state = inner.state.lock();
        if state.closed || state.last.is_some_and(|last| progress <= last) {
            return false;
        }
        if state.sent_at.is_some_and(|sent| sent.elapsed() < pace) {
            return false;
        }
        let mut params = Map::new();
        params.insert("progressToken".to_owned(), inner.token.clone());
        params.insert("progress".to_owned(), json!(progress));
        if let Some(total) = total.filter(|total| total.is_finite()) {
            params.insert("total".to_owned(), json!(total));
        }
        if let Some(message) = message {
            params.insert("message".to_owned(), json!(message));
        }
        let frame = jsonrpc::to_bytes(&jsonrpc::notification(
            "notifications/progress",
            Value::Object(params),
        ));
        // A full stream (a slow reader) drops this update; a later one supersedes it.
        let sent = state
            .frames
            .as_ref()
            .is_some_and(|frames| frames.try_send(frame).is_ok());
        if sent {
            state.last = Some(progress);
            state.sent_at = Some(Instant::now());
            (inner.on_progress)();
        }
        sent
    }

    /// Stops all further progress and hands back the stream for the final response.
    pub(crate) fn close(&self) -> Option<mpsc::Sender<Bytes>> {
        let inner = self.inner.as_ref()?;
        let mut state = inner.state.lock();
        state.closed = true;
        state.frames.take()
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressSink")
            .field("enabled", &self.is_enabled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages a sink sent, parsed (they go out as JSON; the SSE body frames them).
    fn frames(receiver: &mut mpsc::Receiver<Bytes>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(message) = receiver.try_recv() {
            out.push(serde_json::from_slice(&message).unwrap_or(Value::Null));
        }
        out
    }

    #[test]
    fn progress_is_strictly_increasing_and_type_preserving() {
        let (sink, mut receiver) = ProgressSink::recording(json!(7));
        assert!(sink.report(1.0, Some(3.0), None));
        assert!(
            !sink.report(1.0, Some(3.0), None),
            "equal progress is dropped"
        );
        assert!(!sink.report(0.5, None, None), "lower progress is dropped");
        assert!(sink.report(2.0, Some(3.0), Some("halfway")));
        let sent = frames(&mut receiver);
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0]["params"]["progressToken"], json!(7));
        assert_eq!(sent[1]["params"]["message"], json!("halfway"));
    }

    #[test]
    fn paced_progress_goes_out_first_then_waits_for_its_pace() {
        let (sink, mut receiver) = ProgressSink::recording(json!("p"));
        // A pace no clock reaches: only the first report may go out.
        assert!(sink.send(1.0, None, None, Duration::MAX));
        assert!(!sink.send(2.0, None, None, Duration::MAX));
        // An unpaced report is not held back by the pace.
        assert!(sink.report(3.0, None, None));
        let sent = frames(&mut receiver);
        let values: Vec<&Value> = sent
            .iter()
            .map(|sent| &sent["params"]["progress"])
            .collect();
        assert_eq!(values, [&json!(1.0), &json!(3.0)]);
    }

    #[test]
    fn nothing_after_close() {
        let (sink, mut receiver) = ProgressSink::recording(json!("p"));
        assert!(sink.report(1.0, None, None));
        let stream = sink.close();
        assert!(stream.is_some());
        assert!(!sink.report(2.0, None, None));
        assert_eq!(frames(&mut receiver).len(), 1);
        assert!(!ProgressSink::disabled().report(1.0, None, None));
    }
}
