//! Running jobs on the game thread: instant handlers and long-running ones polled once per frame,
//! each under `catch_unwind` so no request can take the app down.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use bevy::prelude::{Resource, World};
use mcp_native_transport::{ActionReply, ImageContent, ProgressSink};
use mcp_vocabulary::ToolError;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::error::BridgeError;
use crate::history::journal::Watch;
use crate::runtime::budget::{FrameBudget, PauseBridgeWork};
use crate::runtime::mailbox::{BridgeSignals, Job, JobCall, MailboxReceiver};

/// What a handler produced.
#[allow(missing_debug_implementations)] // holds a boxed job, which has nothing useful to print
pub enum Outcome {
    /// Finished in this frame.
    Done(Result<Value, BridgeError>),
    /// Continues over the next frames.
    Running(Box<dyn LongJob>),
}

/// A job that spans frames. `poll` runs once per frame, after `Last`.
pub trait LongJob: Send + Sync {
    /// Advances by one frame; `Some` when finished.
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>>;

    /// Images that go beside the result, taken once when `poll` finished with `Ok` (screenshots).
    fn take_images(&mut self) -> Vec<ImageContent> {
        Vec::new()
    }

    /// Undoes temporary changes (time unpaused for stepping, helper entities) when the job ends
    /// early: cancelled, past its deadline, or panicked.
    fn abort(&mut self, _world: &mut World) {}
}

struct ActiveJob {
    name: String,
    origin: Origin,
    watch: Watch,
    job: Box<dyn LongJob>,
    cancel: CancellationToken,
    deadline: Instant,
    progress: ProgressSink,
    reply: oneshot::Sender<Result<ActionReply, ToolError>>,
}

/// Long-running jobs in progress.
#[derive(Resource, Default)]
pub struct ActiveJobs(Vec<ActiveJob>);

impl std::fmt::Debug for ActiveJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|job| &job.name))
            .finish()
    }
}

impl ActiveJobs {
    /// How many jobs are running.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no job is running.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Takes the panic message out of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The exclusive system after `Last`: advances long-running jobs, then starts queued calls in
/// arrival order while the frame's budget lasts ([`FrameBudget`]); the rest wait for the next
/// frame.
pub fn process_mailbox(world: &mut World) {
    if let Some(signals) = world.get_resource::<BridgeSignals>() {
        signals.heartbeat.beat();
    }
    take_arrivals(world);
    let abandoned = world
        .get_resource_mut::<FrameBudget>()
        .map(|mut budget| budget.drop_abandoned())
        .unwrap_or_default();
    for job in abandoned {
        let _ = job.reply.send(Err(BridgeError::Cancelled.into()));
    }
    if world
        .get_resource::<PauseBridgeWork>()
        .is_some_and(|pause| pause.0)
    {
        if let Some(mut budget) = world.get_resource_mut::<FrameBudget>() {
            budget.paused();
        }
        return;
    }
    let Some(mut work) = world.get_resource::<FrameBudget>().map(FrameBudget::begin) else {
        return;
    };
    poll_active_jobs(world);
    // The budget is borrowed only between calls: a handler (diagnostics) may read it.
    loop {
        let next = world
            .get_resource_mut::<FrameBudget>()
            .and_then(|mut budget| budget.next(&mut work).map(|job| (job, budget.mark())));
        let Some((job, mark)) = next else {
            break;
        };
        let action = job.call.names();
        start_job(world, job);
        if let Some(mut budget) = world.get_resource_mut::<FrameBudget>() {
            budget.call_ran(action, mark);
        }
    }
    let waiting = world
        .get_resource_mut::<FrameBudget>()
        .is_some_and(|mut budget| {
            budget.end(work);
            budget.waiting() > 0
        });
    let running = world
        .get_resource::<ActiveJobs>()
        .is_some_and(|active| !active.is_empty());
    if (running || waiting)
        && let Some(signals) = world.get_resource::<BridgeSignals>()
    {
        // The next frame has work: a reactive app must not sleep until its next event.
        signals.waker.wake_event_loop();
    }
}

/// Moves calls from the mailbox into the budget's waiting line, as far as it has room (the
/// mailbox's own bound then pushes back on senders).
fn take_arrivals(world: &mut World) {
    let room = world
        .get_resource::<FrameBudget>()
        .map_or(0, FrameBudget::room);
    let mut arrived = Vec::new();
    if let Some(mut receiver) = world.get_resource_mut::<MailboxReceiver>() {
        while arrived.len() < room {
            let Ok(job) = receiver.0.try_recv() else {
                break;
            };
            arrived.push(job);
        }
    }
    if let Some(mut budget) = world.get_resource_mut::<FrameBudget>() {
        for job in arrived {
            budget.arrive(job);
        }
    }
}

/// Who asked for a call and with what, for a playtest recording of the session.
struct Origin {
    session: String,
    /// The frame the call started in.
    started: u64,
    tool: &'static str,
    action: &'static str,
    params: Value,
}

impl Origin {
    /// Records the call into its session's playtest script (when one is being recorded).
    fn finished(&self, world: &mut World) {
        crate::playtest::record::record(
            world,
            &self.session,
            self.started,
            (self.tool, self.action),
            &self.params,
        );
    }
}

/// The session whose call is starting now, for the few handlers that act per session
/// (`playtest.record_start`/`record_stop`); `None` between calls. A resource that stays (a
/// resource is an entity in Bevy 0.19: inserting one per call would add an entity).
#[derive(Resource, Debug, Clone, Default)]
pub struct CallingSession(pub Option<String>);

fn set_calling_session(world: &mut World, session: Option<String>) {
    if let Some(mut calling) = world.get_resource_mut::<CallingSession>() {
        calling.0 = session;
    }
}

/// Starts `call` on the game thread, turning a panic into `HANDLER_PANICKED`.
pub fn run_call(world: &mut World, call: JobCall) -> Outcome {
    let name = call.name();
    let outcome = catch_unwind(AssertUnwindSafe(|| match call {
        JobCall::Builtin(call) => crate::actions::run(world, call),
        JobCall::Game {
            tool,
            action,
            params,
        } => crate::game::start(world, tool, action, params),
    }));
    outcome.unwrap_or_else(|payload| {
        let error = BridgeError::HandlerPanicked {
            action: name,
            message: panic_message(payload.as_ref()),
        };
        tracing::error!(%error, "handler panicked");
        Outcome::Done(Err(error))
    })
}

/// Advances a long-running job by one frame, turning a panic into `HANDLER_PANICKED` (after
/// letting the job undo what it holds).
pub fn poll_job(
    world: &mut World,
    name: &str,
    job: &mut Box<dyn LongJob>,
    progress: &ProgressSink,
) -> Option<Result<ActionReply, BridgeError>> {
    let polled = catch_unwind(AssertUnwindSafe(|| job.poll(world, progress)));
    match polled {
        Ok(None) => None,
        Ok(Some(result)) => Some(result.map(|value| ActionReply {
            value,
            images: job.take_images(),
        })),
        Err(payload) => {
            let _ = catch_unwind(AssertUnwindSafe(|| job.abort(world)));
            let error = BridgeError::HandlerPanicked {
                action: name.to_owned(),
                message: panic_message(payload.as_ref()),
            };
            tracing::error!(%error, "long-running handler panicked");
            Some(Err(error))
        }
    }
}

fn start_job(world: &mut World, job: Job) {
    let Job {
        call,
        cancel,
        progress,
        deadline,
        reply,
        session,
        params,
    } = job;
    let name = call.name();
    if cancel.is_cancelled() || Instant::now() >= deadline {
        // A queued job that was cancelled (or timed out) before it started never runs.
        let _ = reply.send(Err(BridgeError::Cancelled.into()));
        return;
    }
    let (tool, action) = call.names();
    let origin = Origin {
        session,
        started: crate::reflect::world::frame(world),
        tool,
        action,
        params,
    };
    set_calling_session(world, Some(origin.session.clone()));
    // Journaling never takes a call down: values it cannot read make the call not undoable.
    let watch = catch_unwind(AssertUnwindSafe(|| Watch::before(world, &call)))
        .unwrap_or_else(|_| Watch::unreadable(&call));
    let outcome = run_call(world, call);
    set_calling_session(world, None);
    match outcome {
        Outcome::Done(result) => {
            if let Ok(value) = &result {
                origin.finished(world);
                watch.after_caught(world, &origin.session, Some(value));
            }
            let _ = reply.send(result.map(ActionReply::from).map_err(ToolError::from));
        }
        Outcome::Running(job) => {
            if let Some(mut active) = world.get_resource_mut::<ActiveJobs>() {
                active.0.push(ActiveJob {
                    name,
                    origin,
                    watch,
                    job,
                    cancel,
                    deadline,
                    progress,
                    reply,
                });
            }
        }
    }
}

fn poll_active_jobs(world: &mut World) {
    let Some(mut active) = world.get_resource_mut::<ActiveJobs>() else {
        return;
    };
    let jobs = std::mem::take(&mut active.0);
    let mut still_running = Vec::with_capacity(jobs.len());
    for mut active in jobs {
        if active.cancel.is_cancelled() || Instant::now() >= active.deadline {
            let _ = catch_unwind(AssertUnwindSafe(|| active.job.abort(world)));
            let _ = active.reply.send(Err(BridgeError::Cancelled.into()));
            continue;
        }
        match poll_job(world, &active.name, &mut active.job, &active.progress) {
            None => still_running.push(active),
            Some(result) => {
                if let Ok(reply) = &result {
                    active.origin.finished(world);
                    active
                        .watch
                        .after_caught(world, &active.origin.session, Some(&reply.value));
                }
                let _ = active.reply.send(result.map_err(ToolError::from));
            }
        }
    }
    if let Some(mut active) = world.get_resource_mut::<ActiveJobs>() {
        // Jobs started while polling (none today) are kept after the ones that were running.
        still_running.append(&mut active.0);
        active.0 = still_running;
    }
}
