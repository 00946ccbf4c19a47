//! The job contract: what a handler answers ([`Outcome`]) and the one trait for work that spans
//! frames ([`LongJob`]), used by the built-in actions and by a game's own alike.

use std::any::Any;

use bevy::prelude::World;
use mcp_native_transport::{ImageContent, ProgressSink};
use mcp_vocabulary::ToolError;
use serde::Serialize;
use serde_json::Value;

use crate::error::BridgeError;
use crate::runtime::retire::retire;

/// What a handler produced.
#[allow(missing_debug_implementations)] // holds a boxed job, which has nothing useful to print
pub(crate) enum Outcome {
    /// Finished in this frame.
    Done(Result<Value, BridgeError>),
    /// Continues over the next frames.
    Running(Box<dyn RunningJob>),
}

impl Outcome {
    /// A job that goes on over the next frames.
    pub(crate) fn running(job: impl LongJob) -> Outcome {
        Outcome::Running(Box::new(job))
    }

    /// `job` when it started, else the error that kept it from starting.
    pub(crate) fn started<J: LongJob>(job: Result<J, BridgeError>) -> Outcome {
        match job {
            Ok(job) => Outcome::running(job),
            Err(error) => Outcome::Done(Err(error)),
        }
    }
}

impl Outcome {
    /// Runs a job's first frame now: one that finishes in it (a small world) answers at once,
    /// a bigger one goes on over the next frames.
    pub(crate) fn first_frame<J>(world: &mut World, mut job: J) -> Outcome
    where
        J: LongJob<Output = Value, Error = BridgeError>,
    {
        match job.poll(world, &ProgressSink::disabled()) {
            Some(result) => Outcome::Done(result),
            None => Outcome::running(job),
        }
    }
}

impl From<Result<Value, BridgeError>> for Outcome {
    fn from(result: Result<Value, BridgeError>) -> Self {
        Outcome::Done(result)
    }
}

/// Work that spans frames, as `control_app.step_frames`, the watches and a game's own long
/// actions do: polled once per frame after `Last`, with progress. Cancellation, the call's
/// deadline, the session's end and a panic call [`LongJob::abort`].
pub trait LongJob: Send + Sync + 'static {
    /// The result.
    type Output: Serialize + 'static;
    /// What a failure is: the bridge's own error, or a [`ToolError`] of the game's.
    type Error: Into<ToolError>;

    /// Advances by one frame; `Some` when finished.
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Self::Output, Self::Error>>;

    /// Images that go beside the result, taken once when `poll` finished with `Ok` (screenshots).
    fn take_images(&mut self) -> Vec<ImageContent> {
        Vec::new()
    }

    /// Undoes temporary changes (time unpaused for stepping, keys held, helper entities) when the
    /// job ends early: cancelled, past its deadline, or after a panic.
    fn abort(&mut self, _world: &mut World) {}

    /// Whether a cancel (or the deadline) may stop it now. A job that has begun a change that
    /// must not be left half made (a restore) says no: it finishes, its answer is dropped, and
    /// what it changed is journaled as usual.
    fn cancellable(&self) -> bool {
        true
    }

    /// Lets go of what the job holds once it ended (answered, failed or cancelled). By default
    /// it is dropped on the bridge's freeing thread; a job holding many small values the game
    /// thread made hands them to the game thread to free a slice per frame instead (freed
    /// elsewhere, they leave the game thread's next big allocation a merge of milliseconds).
    fn free(self, _world: &mut World)
    where
        Self: Sized,
    {
        retire(self);
    }
}

/// A [`LongJob`] as the executor runs it, whatever its output and error types.
pub(crate) trait RunningJob: Send + Sync {
    /// Advances by one frame; `Some` when finished, the output as JSON.
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, ToolError>>;

    /// See [`LongJob::take_images`].
    fn take_images(&mut self) -> Vec<ImageContent>;

    /// See [`LongJob::abort`].
    fn abort(&mut self, world: &mut World);

    /// See [`LongJob::cancellable`].
    fn cancellable(&self) -> bool;

    /// See [`LongJob::free`].
    fn free(self: Box<Self>, world: &mut World);
}

impl<J: LongJob> RunningJob for J {
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, ToolError>> {
        let polled = LongJob::poll(self, world, progress)?;
        Some(match polled {
            Ok(output) => into_json(output).map_err(ToolError::from),
            Err(error) => Err(error.into()),
        })
    }

    fn take_images(&mut self) -> Vec<ImageContent> {
        LongJob::take_images(self)
    }

    fn abort(&mut self, world: &mut World) {
        LongJob::abort(self, world);
    }

    fn cancellable(&self) -> bool {
        LongJob::cancellable(self)
    }

    fn free(self: Box<Self>, world: &mut World) {
        LongJob::free(*self, world);
    }
}

/// A result as JSON: moved when it already is JSON (the bridge's own jobs answer `Value`),
/// serialized otherwise (a game's typed output), so a page of rows is never copied.
pub(crate) fn into_json<T: Serialize + 'static>(output: T) -> Result<Value, BridgeError> {
    let mut slot = Some(output);
    if let Some(json) = (&mut slot as &mut dyn Any).downcast_mut::<Option<Value>>() {
        return Ok(json.take().unwrap_or(Value::Null));
    }
    to_value(&slot)
}

/// A handler's typed result as JSON.
pub(crate) fn to_value(value: &impl Serialize) -> Result<Value, BridgeError> {
    serde_json::to_value(value).map_err(|error| BridgeError::NotSerializable {
        type_path: std::any::type_name_of_val(value).to_owned(),
        reason: error.to_string(),
    })
}
