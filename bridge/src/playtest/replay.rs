//! Replaying a script in an app of your own: every step is checked by the gateway first (a bad
//! step is refused before anything runs, naming it), then each step runs through the same
//! pipeline as a client's call, on a fixed clock (1/60 s per frame), its `framesBefore` stepped
//! rather than waited, long-running steps stepped to their end. The report says for each step what it answered and for each expectation whether
//! it held, with the diff when it did not.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use bevy::app::App;
use bevy::prelude::Resource;
use bevy::time::TimeUpdateStrategy;
use mcp_native_transport::ProgressSink;
use mcp_native_transport::gateway::ExecutePlan;
use mcp_vocabulary::ToolError;
use serde_json::{Value, json};

use super::script::{Script, ScriptError, check_bounds, read_script};
use crate::error::BridgeError;
use crate::reflect::world::frame;
use crate::runtime::executor::process_mailbox;
use crate::runtime::local::{LocalCalls, PendingCall};

/// Frames one replayed long-running step may run at most.
pub(crate) const MAX_STEP_FRAMES: u64 = 100_000;
/// The fixed clock of a replay: one frame is 1/60 s.
pub const REPLAY_FRAME: Duration = Duration::from_nanos(16_666_667);

/// The last result of each script run in this app, by file.
#[derive(Resource, Default, Debug)]
pub(crate) struct LastRuns(HashMap<String, Value>);

impl LastRuns {
    /// The last result of `file`, if it was run.
    pub(crate) fn of(&self, file: &str) -> Option<&Value> {
        self.0.get(file)
    }

    /// Keeps `summary` as the last result of `file`.
    pub(crate) fn keep(&mut self, file: String, summary: Value) {
        self.0.insert(file, summary);
    }
}

/// What one replayed step did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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

    /// `{steps, failures}`: how many steps ran, and each failed one with its expectation's
    /// actual value and diff, or its error.
    pub fn to_json(&self) -> Value {
        let failures: Vec<Value> = self
            .failures()
            .map(|step| match &step.outcome {
                StepOutcome::ExpectationFailed(found) => json!({
                    "step": step.index,
                    "call": step.call,
                    "message": found["message"],
                    "actual": found["actual"],
                    "expected": found["expected"],
                    "diff": found["diff"],
                }),
                StepOutcome::Error(error) => json!({
                    "step": step.index,
                    "call": step.call,
                    "error": {"code": error.code.to_string(), "message": error.message},
                }),
                StepOutcome::Done(_) => Value::Null,
            })
            .collect();
        json!({"steps": self.steps.len(), "failures": failures})
    }

    /// The report as a JUnit XML document, the script one test case (`name`) that fails with
    /// each failed step, so CI systems show a playtest like a unit test.
    pub fn to_junit(&self, name: &str) -> String {
        let failures: Vec<String> = self
            .failures()
            .map(|step| match &step.outcome {
                StepOutcome::ExpectationFailed(found) => format!(
                    "step {} {}: {}; actual {}; diff {}",
                    step.index,
                    step.call,
                    found["message"]
                        .as_str()
                        .unwrap_or("an expectation did not hold"),
                    found["actual"],
                    found["diff"]
                ),
                StepOutcome::Error(error) => format!(
                    "step {} {}: {}: {}",
                    step.index, step.call, error.code, error.message
                ),
                StepOutcome::Done(_) => String::new(),
            })
            .collect();
        let name = xml_escape(name);
        let case = if failures.is_empty() {
            format!("    <testcase classname=\"playtest\" name=\"{name}\"/>\n")
        } else {
            let first = xml_escape(&failures[0]);
            let all = xml_escape(&failures.join("\n"));
            format!(
                "    <testcase classname=\"playtest\" name=\"{name}\">\n      <failure message=\"{first}\" type=\"playtest\">{all}</failure>\n    </testcase>\n"
            )
        };
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"1\" failures=\"{failed}\">\n  <testsuite name=\"playtests\" tests=\"1\" failures=\"{failed}\">\n{case}  </testsuite>\n</testsuites>\n",
            failed = usize::from(!failures.is_empty()),
        )
    }
}

/// `text` with XML's five special characters escaped, and control characters XML 1.0 cannot hold
/// dropped.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(character),
            other if other.is_control() => {}
            other => out.push(other),
        }
    }
    out
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

/// The session replayed calls run as.
pub const REPLAY_SESSION: &str = "replay";

/// Replays `script` in `app` (built with the bridge plugin; a server is not needed). Every step
/// is checked first; then the app's clock is switched to a fixed 1/60 s per frame, and each step
/// goes through the same pipeline as a client's call (the gateway's checks, the mailbox, the
/// executor with the journal and the frame budget), started between frames.
pub fn replay(app: &mut App, script: &Script) -> Result<ReplayReport, ScriptError> {
    if frame(app.world()) == 0 {
        // Startup builds the served catalog (with the app's own actions) and the gateway.
        app.update();
    }
    let calls = app
        .world()
        .get_resource::<LocalCalls>()
        .cloned()
        .ok_or(ScriptError::NoBridge)?;
    check_bounds(script)?;
    let plans = check_steps(&calls, script)?;
    app.insert_resource(TimeUpdateStrategy::ManualDuration(REPLAY_FRAME));
    let mut report = ReplayReport::default();
    for (index, (step, plan)) in script.steps.iter().zip(plans).enumerate() {
        for _ in 0..step.frames_before {
            app.update();
        }
        let call = format!("{}.{}", plan.tool.name, plan.action.name);
        let mut pending = calls.submit(REPLAY_SESSION, plan, ProgressSink::disabled());
        // The step starts now, between frames: the executor takes it from the mailbox.
        process_mailbox(app.world_mut());
        let outcome = match answer(app, &mut pending) {
            Ok(value) if step.tool == "playtest" && value["pass"] == json!(false) => {
                StepOutcome::ExpectationFailed(value)
            }
            Ok(value) => StepOutcome::Done(value),
            Err(error) => StepOutcome::Error(error),
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

/// Every step planned by the gateway, as a client's call would be; the first refused step is
/// the error, and nothing has run.
pub(crate) fn check_steps(
    calls: &LocalCalls,
    script: &Script,
) -> Result<Vec<ExecutePlan>, ScriptError> {
    script
        .steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            calls
                .gateway()
                .plan(&step.tool, &step.action, step.params.clone())
                .map_err(|error| ScriptError::BadStep {
                    index,
                    tool: step.tool.clone(),
                    action: step.action.clone(),
                    reason: error.message,
                })
        })
        .collect()
}

/// Runs frames until the step answers; a long-running step gets [`MAX_STEP_FRAMES`] at most.
fn answer(app: &mut App, pending: &mut PendingCall) -> Result<Value, ToolError> {
    for _ in 0..MAX_STEP_FRAMES {
        if let Some(answer) = pending.try_answer() {
            return answer.map(|reply| reply.value);
        }
        app.update();
    }
    // Cancelled, the job lets go of what it holds in the next frame.
    pending.cancel();
    app.update();
    Err(BridgeError::WaitLimitReached {
        frames: MAX_STEP_FRAMES,
        last_value: Value::Null,
    }
    .into())
}
