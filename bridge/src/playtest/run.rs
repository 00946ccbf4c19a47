//! `playtest.run`: a script replayed inside the running app, as one long-running call. It takes
//! the same path as [`replay`](super::replay()) — every step planned by the gateway before
//! anything runs, then each step submitted as an in-process call on a fixed clock (1/60 s per
//! frame) — but the app keeps running its own frames: the run advances one frame at a time.
//!
//! With `restore` (the default) a checkpoint is taken first and restored at the end, so the app
//! is as it was before the run; a script with a destructive step runs only so. The last result
//! of every script is kept for `playtest.list_scripts`.

use bevy::prelude::World;
use bevy::time::TimeUpdateStrategy;
use mcp_native_transport::ProgressSink;
use mcp_native_transport::gateway::ExecutePlan;
use mcp_vocabulary::ToolError;
use mcp_vocabulary::catalog::Effect;
use serde_json::{Value, json};

use super::record::scripts_dir;
use super::replay::{
    LastRuns, MAX_STEP_FRAMES, REPLAY_FRAME, REPLAY_SESSION, ReplayReport, StepOutcome, StepReport,
    check_steps,
};
use super::script::{EXTENSION, check_bounds, read_script, script_path};
use crate::error::BridgeError;
use crate::reflect::world::frame;
use crate::runtime::job::LongJob;
use crate::runtime::local::{LocalCalls, PendingCall};

/// The checkpoint a restoring run takes first.
const BEFORE_RUN: &str = "playtest-before-run";

/// Where a run is.
enum Stage {
    /// Taking the checkpoint (restoring runs).
    Checkpoint(PendingCall),
    /// Waiting the frames before step `index`.
    Waiting { index: usize, left: u64 },
    /// Step `index` is running, for `frames` frames so far.
    Running {
        index: usize,
        call: PendingCall,
        frames: u64,
    },
    /// Restoring the checkpoint.
    Restore(PendingCall),
    /// Every step ran (and nothing is restored): answers at the next poll.
    Finished,
}

/// A script run in progress.
pub(crate) struct ScriptRun {
    file: String,
    calls: LocalCalls,
    plans: Vec<Option<ExecutePlan>>,
    /// Each step's `tool.action`.
    names: Vec<String>,
    frames_before: Vec<u64>,
    restore: bool,
    clock_before: Option<TimeUpdateStrategy>,
    stage: Stage,
    report: ReplayReport,
    started_frame: u64,
}

/// Starts running the script `name` from the scripts folder.
pub(crate) fn start_run(
    world: &mut World,
    name: &str,
    restore: bool,
) -> Result<ScriptRun, BridgeError> {
    let path = script_path(&scripts_dir(world), name).map_err(|error| match error {
        BridgeError::FileNotFound { file } => BridgeError::ScriptNotFound { file },
        other => other,
    })?;
    // As playtest.list_scripts names it.
    let file = if name.ends_with(EXTENSION) {
        name.to_owned()
    } else {
        format!("{name}{EXTENSION}")
    };
    let refused = |reason: String| BridgeError::ScriptNotRunnable {
        file: file.clone(),
        reason,
    };
    let script = read_script(&path).map_err(|error| refused(error.to_string()))?;
    check_bounds(&script).map_err(|error| refused(error.to_string()))?;
    let calls = world
        .get_resource::<LocalCalls>()
        .cloned()
        .ok_or_else(|| refused("the bridge has not started its gateway yet".to_owned()))?;
    let plans = check_steps(&calls, &script).map_err(|error| refused(error.to_string()))?;
    if !restore
        && let Some((index, plan)) = plans
            .iter()
            .enumerate()
            .find(|(_, plan)| plan.action.effect == Effect::Destructive)
    {
        return Err(refused(format!(
            "step {index} ({}.{}) is destructive: run it with restore: true (the app comes back \
             as it was afterwards), or replay it in a test app with --replay",
            plan.tool.name, plan.action.name
        )));
    }
    let clock_before = world.remove_resource::<TimeUpdateStrategy>();
    world.insert_resource(TimeUpdateStrategy::ManualDuration(REPLAY_FRAME));
    let frames_before = script.steps.iter().map(|step| step.frames_before).collect();
    let names = plans
        .iter()
        .map(|plan| format!("{}.{}", plan.tool.name, plan.action.name))
        .collect();
    let stage = if restore {
        Stage::Checkpoint(submit(
            &calls,
            "history",
            "checkpoint",
            json!({"name": BEFORE_RUN, "overwrite": true}),
        )?)
    } else {
        Stage::Waiting {
            index: 0,
            left: script.steps.first().map_or(0, |step| step.frames_before),
        }
    };
    Ok(ScriptRun {
        file,
        calls,
        plans: plans.into_iter().map(Some).collect(),
        names,
        frames_before,
        restore,
        clock_before,
        stage,
        report: ReplayReport::default(),
        started_frame: frame(world),
    })
}

/// An in-process call of the bridge's own, planned and submitted.
fn submit(
    calls: &LocalCalls,
    tool: &str,
    action: &str,
    params: Value,
) -> Result<PendingCall, BridgeError> {
    let plan = calls
        .gateway()
        .plan(tool, action, params)
        .map_err(|error| BridgeError::ScriptNotRunnable {
            file: format!("{tool}.{action}"),
            reason: error.message,
        })?;
    Ok(calls.submit(REPLAY_SESSION, plan, ProgressSink::disabled()))
}

impl ScriptRun {
    /// Moves on to step `index` (or to the end).
    fn next_step(&mut self, index: usize) -> Stage {
        match self.frames_before.get(index) {
            Some(left) => Stage::Waiting { index, left: *left },
            None => self.finishing(),
        }
    }

    fn finishing(&mut self) -> Stage {
        if self.restore {
            match submit(
                &self.calls,
                "history",
                "restore",
                json!({"name": BEFORE_RUN}),
            ) {
                Ok(call) => return Stage::Restore(call),
                Err(error) => self.report.steps.push(StepReport {
                    index: self.frames_before.len(),
                    call: "history.restore".to_owned(),
                    outcome: StepOutcome::Error(error.into()),
                }),
            }
        }
        Stage::Finished
    }

    fn put_clock_back(&mut self, world: &mut World) {
        match self.clock_before.take() {
            Some(clock) => world.insert_resource(clock),
            None => {
                world.remove_resource::<TimeUpdateStrategy>();
            }
        }
    }

    fn answer(&mut self, world: &mut World, restored: bool) -> Value {
        self.put_clock_back(world);
        let report = self.report.to_json();
        let summary = json!({
            "passed": self.report.passed(),
            "failed": self.report.failures().count(),
            "steps": self.report.steps.len(),
            "frame": frame(world),
        });
        world
            .get_resource_or_init::<LastRuns>()
            .keep(self.file.clone(), summary);
        json!({
            "script": self.file,
            "passed": self.report.passed(),
            "steps": report["steps"],
            "failures": report["failures"],
            "frames": frame(world).saturating_sub(self.started_frame),
            "restored": restored,
        })
    }
}

impl LongJob for ScriptRun {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let total = self.frames_before.len();
        let stage = std::mem::replace(&mut self.stage, Stage::Finished);
        self.stage = match stage {
            Stage::Checkpoint(mut call) => match call.try_answer() {
                None => Stage::Checkpoint(call),
                Some(Ok(_)) => self.next_step(0),
                Some(Err(error)) => {
                    self.put_clock_back(world);
                    return Some(Err(BridgeError::ScriptNotRunnable {
                        file: self.file.clone(),
                        reason: format!("the checkpoint before the run failed: {}", error.message),
                    }));
                }
            },
            Stage::Finished => return Some(Ok(self.answer(world, false))),
            Stage::Waiting { index, left } if left > 0 => Stage::Waiting {
                index,
                left: left - 1,
            },
            Stage::Waiting { index, .. } => {
                match self.plans.get_mut(index).and_then(Option::take) {
                    Some(plan) => {
                        progress.report(
                            index as f64,
                            Some(total as f64),
                            Some(&format!(
                                "step {index}: {}.{}",
                                plan.tool.name, plan.action.name
                            )),
                        );
                        let call =
                            self.calls
                                .submit(REPLAY_SESSION, plan, ProgressSink::disabled());
                        Stage::Running {
                            index,
                            call,
                            frames: 0,
                        }
                    }
                    None => self.next_step(index + 1),
                }
            }
            Stage::Running {
                index,
                mut call,
                frames,
            } => match call.try_answer() {
                None if frames < MAX_STEP_FRAMES => Stage::Running {
                    index,
                    call,
                    frames: frames + 1,
                },
                None => {
                    call.cancel();
                    self.record(
                        index,
                        Err(BridgeError::WaitLimitReached {
                            frames: MAX_STEP_FRAMES,
                            last_value: Value::Null,
                        }
                        .into()),
                    );
                    self.next_step(index + 1)
                }
                Some(answer) => {
                    self.record(index, answer.map(|reply| reply.value));
                    self.next_step(index + 1)
                }
            },
            Stage::Restore(mut call) => match call.try_answer() {
                None => Stage::Restore(call),
                Some(answer) => {
                    let restored = answer.is_ok();
                    if let Err(error) = answer {
                        self.report.steps.push(StepReport {
                            index: total,
                            call: "history.restore".to_owned(),
                            outcome: StepOutcome::Error(error),
                        });
                    }
                    return Some(Ok(self.answer(world, restored)));
                }
            },
        };
        None
    }

    fn abort(&mut self, world: &mut World) {
        match &self.stage {
            Stage::Running { call, .. } | Stage::Checkpoint(call) | Stage::Restore(call) => {
                call.cancel();
            }
            Stage::Waiting { .. } | Stage::Finished => {}
        }
        self.put_clock_back(world);
    }
}

impl ScriptRun {
    fn record(&mut self, index: usize, answer: Result<Value, ToolError>) {
        let call = self.names.get(index).cloned().unwrap_or_default();
        let outcome = match answer {
            Ok(value) if call.starts_with("playtest.") && value["pass"] == json!(false) => {
                StepOutcome::ExpectationFailed(value)
            }
            Ok(value) => StepOutcome::Done(value),
            Err(error) => StepOutcome::Error(error),
        };
        self.report.steps.push(StepReport {
            index,
            call,
            outcome,
        });
    }
}
