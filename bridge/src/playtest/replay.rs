//! Replaying a script in an app of your own: every step is checked against the catalog first (a
//! bad step is refused before anything runs, naming it), then each step runs on a fixed clock
//! (1/60 s per frame), its `framesBefore` stepped rather than waited, long-running steps stepped
//! to their end. The report says for each step what it answered and for each expectation whether
//! it held, with the diff when it did not.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use bevy::app::App;
use bevy::time::TimeUpdateStrategy;
use bevy_mcp_generated::call::Call;
use mcp_native_transport::ProgressSink;
use mcp_vocabulary::ToolError;
use mcp_vocabulary::catalog::Catalog;
use serde_json::{Value, json};

use super::script::{Script, ScriptError, ScriptStep, check_script, read_script, served_catalog};
use crate::error::BridgeError;
use crate::reflect::world::frame;
use crate::runtime::executor::{Outcome, poll_job, run_call};
use crate::runtime::mailbox::JobCall;

/// Frames one replayed long-running step may run at most.
const MAX_STEP_FRAMES: u64 = 100_000;
/// The fixed clock of a replay: one frame is 1/60 s.
pub const REPLAY_FRAME: Duration = Duration::from_nanos(16_666_667);

/// What one replayed step did.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// It answered (an expectation that held, or any other call).
    Done(Value),
    /// An expectation that did not hold: its answer, with the actual value and the diff.
    ExpectationFailed(Value),
    /// The call failed.
    Error(ToolError),
}

/// One step of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// Its position, from 0.
    pub index: usize,
    /// `tool.action`.
    pub call: String,
    /// What happened.
    pub outcome: StepOutcome,
}

/// What a replay did, step by step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayReport {
    /// Every step, in order.
    pub steps: Vec<StepReport>,
}

impl ReplayReport {
    /// Whether every step answered and every expectation held.
    pub fn passed(&self) -> bool {
        self.steps
            .iter()
            .all(|step| matches!(step.outcome, StepOutcome::Done(_)))
    }

    /// The steps that failed.
    pub fn failures(&self) -> impl Iterator<Item = &StepReport> {
        self.steps
            .iter()
            .filter(|step| !matches!(step.outcome, StepOutcome::Done(_)))
    }
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.steps {
            match &step.outcome {
                StepOutcome::Done(value) if value.get("pass").is_some() => writeln!(
                    f,
                    "step {} {}: {}",
                    step.index,
                    step.call,
                    value["message"].as_str().unwrap_or("pass")
                )?,
                StepOutcome::Done(_) => writeln!(f, "step {} {}: ok", step.index, step.call)?,
                StepOutcome::ExpectationFailed(value) => writeln!(
                    f,
                    "step {} {}: {}; diff {}",
                    step.index,
                    step.call,
                    value["message"].as_str().unwrap_or("fail"),
                    value["diff"]
                )?,
                StepOutcome::Error(error) => writeln!(
                    f,
                    "step {} {}: ERROR {}: {}",
                    step.index, step.call, error.code, error.message
                )?,
            }
        }
        let failed = self.failures().count();
        if failed == 0 {
            write!(f, "passed: {} steps", self.steps.len())
        } else {
            write!(f, "FAILED: {failed} of {} steps", self.steps.len())
        }
    }
}

/// Replays `script` in `app` (built with the bridge plugin; a server is not needed). The app's
/// clock is switched to a fixed 1/60 s per frame first.
pub fn replay(app: &mut App, script: &Script) -> Result<ReplayReport, ScriptError> {
    if frame(app.world()) == 0 {
        // Startup builds the served catalog (with the app's own actions).
        app.update();
    }
    check_script(app.world(), script)?;
    app.insert_resource(TimeUpdateStrategy::ManualDuration(REPLAY_FRAME));
    let catalog = served_catalog(app.world());
    let mut report = ReplayReport::default();
    for (index, step) in script.steps.iter().enumerate() {
        for _ in 0..step.frames_before {
            app.update();
        }
        let call = format!("{}.{}", step.tool, step.action);
        let outcome = match job_call(catalog, step) {
            Ok(job) => run_step(app, &call, job),
            Err(error) => Err(error),
        };
        let outcome = match outcome {
            Ok(value) if step.tool == "playtest" && value["pass"] == json!(false) => {
                StepOutcome::ExpectationFailed(value)
            }
            Ok(value) => StepOutcome::Done(value),
            Err(error) => StepOutcome::Error(ToolError::from(error)),
        };
        report.steps.push(StepReport {
            index,
            call,
            outcome,
        });
    }
    Ok(report)
}

/// Reads, checks and replays a script file in `app`: the helper for a game's own `cargo test`.
pub fn replay_file(app: &mut App, path: &Path) -> Result<ReplayReport, ScriptError> {
    let script = read_script(path)?;
    replay(app, &script)
}

fn job_call(catalog: &'static Catalog, step: &ScriptStep) -> Result<JobCall, BridgeError> {
    let found = catalog.action(&step.tool, &step.action).ok_or_else(|| {
        BridgeError::InvalidParams(format!("no action {}.{}", step.tool, step.action))
    })?;
    if bevy_mcp_generated::CATALOG.tool(found.tool.name).is_some() {
        let call = Call::parse(found.tool.name, found.action.name, step.params.clone())
            .map_err(|error| BridgeError::InvalidParams(error.to_string()))?;
        Ok(JobCall::Builtin(call))
    } else {
        Ok(JobCall::Game {
            tool: found.tool.name,
            action: found.action.name,
            params: step.params.clone(),
        })
    }
}

/// Runs one step to its answer, stepping frames while it runs.
fn run_step(app: &mut App, name: &str, call: JobCall) -> Result<Value, BridgeError> {
    let mut job = match run_call(app.world_mut(), call) {
        Outcome::Done(result) => return result,
        Outcome::Running(job) => job,
    };
    let progress = ProgressSink::disabled();
    for _ in 0..MAX_STEP_FRAMES {
        app.update();
        if let Some(result) = poll_job(app.world_mut(), name, &mut job, &progress) {
            return result.map(|reply| reply.value);
        }
    }
    job.abort(app.world_mut());
    Err(BridgeError::WaitLimitReached {
        frames: MAX_STEP_FRAMES,
        last_value: Value::Null,
    })
}
