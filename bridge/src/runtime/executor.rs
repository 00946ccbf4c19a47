//! The executor: runs calls on the game thread. An exclusive system after `Last` advances the
//! long-running jobs, then starts queued calls in arrival order while the frame's budget lasts.
//!
//! Every call takes one path: look its action up in [`Actions`], parse its params, let the
//! [`CallHooks`] see it (the journal, a recording), run the handler under `catch_unwind`, and,
//! once it succeeded, let the hooks see the answer. The executor names no part of the bridge
//! beyond that interface.
//!
//! Deadlines are the transport's alone: it cancels a call's token when the deadline passes and
//! answers `TIMEOUT` itself, so the executor only ever sees cancellation.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy::prelude::{Resource, World};
use mcp_native_transport::{ActionReply, ProgressSink};
use mcp_vocabulary::ToolError;
use mcp_vocabulary::catalog::Effect;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::error::BridgeError;
use crate::reflect::names::name_unreflected;
use crate::runtime::budget::{FrameBudget, PauseBridgeWork};
use crate::runtime::hooks::{self, AfterCall, CallHooks, CallStart};
use crate::runtime::job::{Outcome, RunningJob};
use crate::runtime::mailbox::{BridgeSignals, Job, MailboxReceiver};
use crate::runtime::registry::Actions;
use crate::runtime::retire::FreedOverFrames;
use crate::runtime::slices::{PollMark, SliceTime};

/// A long-running call in progress.
struct ActiveJob {
    name: String,
    /// It works over the whole world: calls that change the world wait while it runs.
    holds_world: bool,
    after: Vec<Box<dyn AfterCall>>,
    job: Box<dyn RunningJob>,
    cancel: CancellationToken,
    progress: ProgressSink,
    reply: oneshot::Sender<Result<ActionReply, ToolError>>,
    /// Its last poll took a slice of the frame's time for work over the whole world.
    takes_slices: bool,
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

    /// Whether a job working over the whole world is running.
    pub(crate) fn holding_world(&self) -> bool {
        self.0.iter().any(|job| job.holds_world)
    }
}

/// The session whose call is starting now, for the few handlers that act per session
/// (`playtest.record_start`/`record_stop`, `history.undo`); `None` between calls. A resource
/// that stays (a resource is an entity in Bevy 0.19: inserting one per call would add an entity).
#[derive(Resource, Debug, Clone, Default)]
pub(crate) struct CallingSession(pub Option<String>);

/// Takes the panic message out of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

fn panicked(action: String, payload: &(dyn std::any::Any + Send)) -> BridgeError {
    let error = BridgeError::HandlerPanicked {
        action,
        message: panic_message(payload),
    };
    tracing::error!(%error, "handler panicked");
    error
}

/// The exclusive system after `Last`: advances long-running jobs, then starts queued calls in
/// arrival order while the frame's budget lasts (`BridgeConfig::with_frame_budget`); the rest
/// wait for the next frame. An app may also run it at once to start calls it queued itself
/// (`bevy-mcp --world` loads its file so, before the first frame's systems run).
pub fn process_mailbox(world: &mut World) {
    if let Some(signals) = world.get_resource::<BridgeSignals>() {
        signals.heartbeat.beat();
    }
    SliceTime::new_frame(world);
    take_arrivals(world);
    let abandoned = world
        .get_resource_mut::<FrameBudget>()
        .map(|mut budget| budget.drop_cancelled())
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
    FreedOverFrames::free_some(world);
    let actions = world.get_resource::<Actions>().cloned();
    // The budget is borrowed only between calls: a handler (diagnostics) may read it.
    loop {
        // While a job works over the whole world, calls that change it, and other such jobs,
        // wait: the job reads or leaves one world, not a mix of it and other calls' changes.
        let world_held = world
            .get_resource::<ActiveJobs>()
            .is_some_and(ActiveJobs::holding_world);
        let held = |job: &Job| {
            world_held
                && (job.action.effect != Effect::Read
                    || actions.as_ref().is_some_and(|actions| {
                        actions
                            .get(job.tool.name, job.action.name)
                            .is_some_and(|binding| binding.whole_world())
                    }))
        };
        let next = world
            .get_resource_mut::<FrameBudget>()
            .and_then(|mut budget| budget.next(&mut work, held).map(|job| (job, budget.mark())));
        let Some((job, mark)) = next else {
            break;
        };
        let action = job.names();
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

fn set_calling_session(world: &mut World, session: Option<String>) {
    if let Some(mut calling) = world.get_resource_mut::<CallingSession>() {
        calling.0 = session;
    }
}

/// Starts one call: parse, hooks, handler.
fn start_job(world: &mut World, job: Job) {
    let Job {
        tool,
        action,
        params,
        cancel,
        progress,
        reply,
        session,
    } = job;
    let name = format!("{}.{}", tool.name, action.name);
    if cancel.is_cancelled() {
        // A queued job that was cancelled (or reached its deadline) before it started never runs.
        let _ = reply.send(Err(BridgeError::Cancelled.into()));
        return;
    }
    let binding = world
        .get_resource::<Actions>()
        .and_then(|actions| actions.get(tool.name, action.name))
        .map(|binding| (binding.parse(&params), binding.whole_world()));
    let (parsed, holds_world) = match binding {
        Some((parsed, whole_world)) => (parsed, whole_world),
        None => (
            Err(BridgeError::InvalidParams(format!(
                "{name} is not an action of this app"
            ))),
            false,
        ),
    };
    let invocation = match parsed {
        Ok(invocation) => invocation,
        Err(error) => {
            let _ = reply.send(Err(error.into()));
            return;
        }
    };
    let hooks = world
        .get_resource::<CallHooks>()
        .cloned()
        .unwrap_or_default();
    let start = CallStart {
        session: &session,
        tool,
        action,
        params: &params,
        invocation: invocation.as_ref(),
    };
    let after = hooks.before(world, &start);
    drop(params);
    set_calling_session(world, Some(session));
    let outcome = catch_unwind(AssertUnwindSafe(|| invocation.run(world)))
        .unwrap_or_else(|payload| Outcome::Done(Err(panicked(name.clone(), payload.as_ref()))));
    set_calling_session(world, None);
    match outcome {
        Outcome::Done(result) => {
            if let Ok(value) = &result {
                hooks::succeeded(after, world, value);
            }
            let result = result.map_err(|error| name_unreflected(world, error));
            let _ = reply.send(result.map(ActionReply::from).map_err(ToolError::from));
        }
        Outcome::Running(job) => {
            if let Some(mut active) = world.get_resource_mut::<ActiveJobs>() {
                active.0.push(ActiveJob {
                    name,
                    holds_world,
                    after,
                    job,
                    cancel,
                    progress,
                    reply,
                    takes_slices: true,
                });
            }
        }
    }
}

/// Advances a long-running job by one frame, turning a panic into `HANDLER_PANICKED` (after
/// letting the job undo what it holds).
fn poll_job(
    world: &mut World,
    name: &str,
    job: &mut Box<dyn RunningJob>,
    progress: &ProgressSink,
) -> Option<Result<ActionReply, ToolError>> {
    let polled = catch_unwind(AssertUnwindSafe(|| job.poll(world, progress)));
    match polled {
        Ok(None) => None,
        Ok(Some(result)) => Some(result.map(|value| ActionReply {
            value,
            images: job.take_images(),
        })),
        Err(payload) => {
            let _ = catch_unwind(AssertUnwindSafe(|| job.abort(world)));
            Some(Err(panicked(name.to_owned(), payload.as_ref()).into()))
        }
    }
}

fn poll_active_jobs(world: &mut World) {
    let Some(mut active) = world.get_resource_mut::<ActiveJobs>() else {
        return;
    };
    let jobs = std::mem::take(&mut active.0);
    let mut still_running = Vec::with_capacity(jobs.len());
    // Jobs that take slices and found the frame's time for them spent wait for the next frame,
    // where they go first: many at once share the frames in turn instead of each adding its
    // least share to every frame.
    let mut waiting = Vec::new();
    for mut active in jobs {
        // A job that must not stop half way (a restore changing the world) finishes; its
        // answer then goes nowhere.
        if active.cancel.is_cancelled() && active.job.cancellable() {
            let _ = catch_unwind(AssertUnwindSafe(|| active.job.abort(world)));
            let _ = active.reply.send(Err(BridgeError::Cancelled.into()));
            active.job.free(world);
            continue;
        }
        if active.takes_slices && SliceTime::spent(world) {
            waiting.push(active);
            continue;
        }
        let mark = PollMark::before(world);
        let polled = poll_job(world, &active.name, &mut active.job, &active.progress);
        if let Some(mark) = mark {
            active.takes_slices = mark.count_poll(world);
        }
        match polled {
            None => still_running.push(active),
            Some(result) => {
                if let Ok(reply) = &result {
                    hooks::succeeded(std::mem::take(&mut active.after), world, &reply.value);
                }
                let _ = active.reply.send(result);
                // A job over the whole world holds what it read: freed where it says.
                active.job.free(world);
            }
        }
    }
    if let Some(mut active) = world.get_resource_mut::<ActiveJobs>() {
        // Jobs started while polling (none today) are kept after the ones that were running.
        waiting.append(&mut still_running);
        waiting.append(&mut active.0);
        active.0 = waiting;
    }
}
