//! The mailbox between the transport thread and the game thread.
//!
//! The transport's [`Dispatch`] puts a validated call (its action's records and its params, moved
//! from the request) into a bounded channel as a [`Job`]; the executor after `Last` drains it with
//! `&mut World` and answers through the job's oneshot. Calls made in-process take the same way
//! through [`BridgeDispatch::submit`]. The game thread never waits on the network: a full
//! mailbox, or a game thread that has not run a frame for 5 s, fails fast with `APP_BUSY`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bevy::prelude::Resource;
use mcp_native_transport::{ActionReply, Dispatch, DispatchCall, DispatchFuture, ProgressSink};
use mcp_vocabulary::ToolError;
use mcp_vocabulary::catalog::{ActionRecord, ToolRecord};
use parking_lot::{Condvar, Mutex};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use mcp_vocabulary::codes;

/// Jobs waiting for the game thread at most.
pub(crate) const MAILBOX_CAPACITY: usize = 64;
/// A game thread silent for longer than this is considered stalled, unless a wake-up makes it
/// run a frame within [`WAKE_GRACE`] (a reactive app idles for as long as nothing happens).
pub(crate) const STALL_AFTER: Duration = Duration::from_secs(5);
/// How often a waiting call wakes the event loop again (a no-op without one).
pub(crate) const EVENT_LOOP_NUDGE: Duration = Duration::from_millis(100);
/// How long a silent game thread has to answer a wake-up with a frame.
pub(crate) const WAKE_GRACE: Duration = Duration::from_secs(1);

/// One call for the game thread.
#[derive(Debug)]
pub(crate) struct Job {
    /// The action's tool, as the catalog records it.
    pub(crate) tool: &'static ToolRecord,
    /// The action.
    pub(crate) action: &'static ActionRecord,
    /// Its params, checked against the action's schema, moved here from the request.
    pub(crate) params: Value,
    /// Cancelled by the client, the session's end, or the transport at the call's deadline.
    pub(crate) cancel: CancellationToken,
    /// Progress for long-running actions.
    pub(crate) progress: ProgressSink,
    /// Where the answer goes.
    pub(crate) reply: oneshot::Sender<Result<ActionReply, ToolError>>,
    /// The calling session.
    pub(crate) session: String,
}

impl Job {
    /// The tool and the action.
    pub(crate) fn names(&self) -> (&'static str, &'static str) {
        (self.tool.name, self.action.name)
    }
}

/// When the game thread last ran the mailbox system, in milliseconds since `epoch`.
#[derive(Debug)]
pub struct Heartbeat {
    epoch: Instant,
    last_millis: AtomicU64,
}

impl Heartbeat {
    fn new() -> Self {
        Heartbeat {
            epoch: Instant::now(),
            last_millis: AtomicU64::new(0),
        }
    }

    /// Records a frame now.
    pub fn beat(&self) {
        let millis = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_millis.store(millis, Ordering::Relaxed);
    }

    /// How long since the last frame.
    pub fn age(&self) -> Duration {
        let now = self.epoch.elapsed();
        now.saturating_sub(Duration::from_millis(
            self.last_millis.load(Ordering::Relaxed),
        ))
    }
}

/// Wakes a sleeping frame-paced runner when a job arrives, so a call does not wait for the next
/// scheduled frame; in a windowed app, also wakes the event loop (a reactive winit app runs no
/// frame until something happens).
#[derive(Default)]
pub struct FrameWaker {
    pending: Mutex<bool>,
    condvar: Condvar,
    stop: AtomicBool,
    /// Set once, when the plugins are built: read on every call without a lock.
    event_loop: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for FrameWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameWaker")
            .field("stop", &self.stop_requested())
            .field("event_loop", &self.event_loop.get().is_some())
            .finish()
    }
}

impl FrameWaker {
    /// Wakes the runner (and the event loop, when one was registered).
    pub fn wake(&self) {
        *self.pending.lock() = true;
        self.condvar.notify_one();
        self.wake_event_loop();
    }

    /// Asks the event loop (when one was registered) for one more frame, leaving a frame-paced
    /// runner's pace alone: long-running jobs advance once per frame, and a reactive app would
    /// otherwise run none.
    pub fn wake_event_loop(&self) {
        if let Some(wake_event_loop) = self.event_loop.get() {
            wake_event_loop();
        }
    }

    /// Whether an event loop was registered (a windowed app).
    pub fn has_event_loop(&self) -> bool {
        self.event_loop.get().is_some()
    }

    /// Registers how to wake the app's event loop (winit's proxy in a windowed app); the first
    /// registration stays.
    pub fn set_event_loop_waker(&self, wake: impl Fn() + Send + Sync + 'static) {
        let _ = self.event_loop.set(Box::new(wake));
    }

    /// Asks the runner to exit (Ctrl-C).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Sleeps until `until` or until woken; returns whether it was woken.
    pub fn sleep_until(&self, until: Instant) -> bool {
        let mut pending = self.pending.lock();
        if !*pending {
            let _ = self.condvar.wait_until(&mut pending, until);
        }
        std::mem::replace(&mut *pending, false)
    }
}

/// How long a call polls for the game thread's answer before its task parks. A running app
/// answers within a frame (tens of microseconds when uncapped), while waking a parked thread
/// from the game thread took about 50 µs on the benchmark's VM (an interrupt to an idle virtual
/// CPU): a fifth of such a call. Between polls the transport's other tasks run.
const ANSWER_POLL: Duration = Duration::from_micros(100);

/// The answer on `answer`, polled for [`ANSWER_POLL`] (unless another call is polling) and then
/// awaited; `None` when the app dropped the call.
async fn poll_then_await<T>(mut answer: oneshot::Receiver<T>, polling: &AtomicBool) -> Option<T> {
    /// Clears the flag however polling ends (the call's future may be dropped).
    struct Polling<'a>(&'a AtomicBool);
    impl Drop for Polling<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }
    if !polling.swap(true, Ordering::AcqRel) {
        let poller = Polling(polling);
        let until = Instant::now() + ANSWER_POLL;
        let mut polled = None;
        while polled.is_none() && Instant::now() < until {
            match answer.try_recv() {
                Ok(answered) => polled = Some(Some(answered)),
                Err(oneshot::error::TryRecvError::Closed) => polled = Some(None),
                Err(oneshot::error::TryRecvError::Empty) => tokio::task::yield_now().await,
            }
        }
        drop(poller);
        if let Some(polled) = polled {
            return polled;
        }
    }
    answer.await.ok()
}

/// The game-thread end of the mailbox.
#[derive(Resource, Debug)]
pub(crate) struct MailboxReceiver(pub(crate) mpsc::Receiver<Job>);

/// Shared state both ends read: the heartbeat and the waker.
#[derive(Resource, Debug, Clone)]
pub struct BridgeSignals {
    /// The game thread's heartbeat.
    pub heartbeat: Arc<Heartbeat>,
    /// The runner's waker.
    pub waker: Arc<FrameWaker>,
}

/// The transport end: implements [`Dispatch`] by queueing jobs for the game thread.
#[derive(Debug, Clone)]
pub(crate) struct BridgeDispatch {
    sender: mpsc::Sender<Job>,
    signals: BridgeSignals,
    /// Whether a call is polling for its answer ([`poll_then_await`]): one poller keeps the
    /// transport's thread awake for every call waiting in the same frame; more would only burn it.
    polling: Arc<AtomicBool>,
}

/// Creates both ends of a mailbox.
pub(crate) fn mailbox() -> (BridgeDispatch, MailboxReceiver, BridgeSignals) {
    let (sender, receiver) = mpsc::channel(MAILBOX_CAPACITY);
    let signals = BridgeSignals {
        heartbeat: Arc::new(Heartbeat::new()),
        waker: Arc::new(FrameWaker::default()),
    };
    (
        BridgeDispatch {
            polling: Arc::new(AtomicBool::new(false)),
            sender,
            signals: signals.clone(),
        },
        MailboxReceiver(receiver),
        signals,
    )
}

fn app_busy(message: String) -> ToolError {
    ToolError::new(codes::APP_BUSY, message)
        .hint("Retry in a few seconds; describe, search and configure keep working meanwhile.")
}

impl BridgeDispatch {
    /// The game thread's waker (the transport wakes the app when it has started listening).
    pub(crate) fn waker(&self) -> Arc<FrameWaker> {
        Arc::clone(&self.signals.waker)
    }

    /// Queues a call for the game thread and returns where its answer will come, without
    /// waiting: the transport awaits it, and code inside the app (tests, replays) runs frames
    /// until it comes. `APP_BUSY` when the mailbox is full.
    pub(crate) fn submit(&self, call: DispatchCall) -> Result<Answer, ToolError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            tool: call.tool,
            action: call.action,
            params: call.params,
            cancel: call.cancel,
            progress: call.progress,
            reply,
            session: call.session_id,
        };
        match self.sender.try_send(job) {
            Ok(()) => {
                self.signals.waker.wake();
                Ok(answer)
            }
            Err(mpsc::error::TrySendError::Full(_)) => Err(app_busy(format!(
                "{MAILBOX_CAPACITY} calls are already waiting for the game thread"
            ))),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                Err(ToolError::new(codes::APP_GONE, "the app is shutting down"))
            }
        }
    }
}

/// Where a queued call's answer comes.
pub(crate) type Answer = oneshot::Receiver<Result<ActionReply, ToolError>>;

impl Dispatch for BridgeDispatch {
    fn dispatch(&self, call: DispatchCall) -> DispatchFuture {
        let this = self.clone();
        Box::pin(async move {
            if this.signals.heartbeat.age() > STALL_AFTER {
                // An idle reactive app runs no frames: wake it and give it a moment to beat.
                this.signals.waker.wake();
                let waited = Instant::now();
                while this.signals.heartbeat.age() > STALL_AFTER && waited.elapsed() < WAKE_GRACE {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
            let age = this.signals.heartbeat.age();
            if age > STALL_AFTER {
                return Err(app_busy(format!(
                    "the game thread has not run a frame for {} s (paused in a debugger, loading, or stalled)",
                    age.as_secs()
                )));
            }
            let answer = this.submit(call)?;
            let gone = || {
                Err(ToolError::new(
                    codes::APP_GONE,
                    "the app dropped the call (it is shutting down)",
                ))
            };
            if !this.signals.waker.has_event_loop() {
                // A frame-paced or uncapped runner needs no nudging (and a timer per call costs
                // about a millisecond of latency).
                return match poll_then_await(answer, &this.polling).await {
                    Some(answered) => answered,
                    None => gone(),
                };
            }
            // A reactive event loop runs a frame per wake-up; one that came at an awkward moment
            // (winit still starting, say) must not leave the call waiting for user input.
            let mut answer = answer;
            let mut nudge = tokio::time::interval(EVENT_LOOP_NUDGE);
            nudge.tick().await;
            loop {
                tokio::select! {
                    biased;
                    answered = &mut answer => return answered.unwrap_or_else(|_| gone()),
                    _ = nudge.tick() => this.signals.waker.wake_event_loop(),
                }
            }
        })
    }
}

/// The transport end of the mailbox, for tests and embedders that drive calls themselves.
#[derive(Resource, Debug, Clone)]
pub(crate) struct BridgeDispatchHandle(pub BridgeDispatch);
