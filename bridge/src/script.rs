//! Playtest scripts: a session's calls recorded into a JSON file, and replayed deterministically.
//!
//! While a session records (`playtest.record_start`), every call of it that succeeds and changes
//! the world (effect write or destructive), and every `playtest.expect`, is kept with the frames
//! that passed since the step before. `playtest.record_stop` writes them as a [`Script`].
//!
//! [`replay`] runs a script in an app of your own: every step is checked against the catalog
//! first (a bad step is refused before anything runs, naming it), then each step runs on a fixed
//! clock (1/60 s per frame), its `framesBefore` stepped rather than waited, long-running steps
//! stepped to their end. The report says for each step what it answered and for each
//! expectation whether it held, with the diff when it did not.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::app::App;
use bevy::prelude::{Resource, World};
use bevy::time::TimeUpdateStrategy;
use bevy_mcp_generated::call::Call;
use bevy_mcp_generated::params::PlaytestRecordStartParams;
use mcp_native_transport::ProgressSink;
use mcp_vocabulary::ToolError;
use mcp_vocabulary::catalog::{Catalog, Effect};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::handlers::inspect::frame;
use crate::jobs::{CallingSession, Outcome, poll_job, run_call};
use crate::mailbox::JobCall;
use crate::paths::{MissingFolders, Resolved, canonical_dir, file_in, write_atomically};
use crate::plugin::ServedCatalog;

/// The script format's version.
pub const SCRIPT_VERSION: u32 = 1;
/// The file extension of scripts.
pub const EXTENSION: &str = ".json";
/// Sessions recording at once at most.
const MAX_RECORDINGS: usize = 16;
/// Steps one recording keeps at most; later calls are not recorded (the file says so).
const MAX_STEPS: usize = 10_000;
/// Bytes of recorded params one recording keeps at most (a call's params may be megabytes).
const MAX_RECORDED_BYTES: usize = 16 * 1024 * 1024;
/// Frames one replayed long-running step may run at most.
const MAX_STEP_FRAMES: u64 = 100_000;
/// The fixed clock of a replay: one frame is 1/60 s.
pub const REPLAY_FRAME: Duration = Duration::from_nanos(16_666_667);

/// A recorded playtest.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// [`SCRIPT_VERSION`].
    pub version: u32,
    /// The calls, in order.
    pub steps: Vec<ScriptStep>,
    /// True when the recording reached its step limit and later calls were not kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One recorded call.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptStep {
    /// Frames to run before this step.
    #[serde(default)]
    pub frames_before: u64,
    /// The tool.
    pub tool: String,
    /// The action.
    pub action: String,
    /// Its params, as the call sent them.
    #[serde(default = "empty_object")]
    pub params: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Where scripts are written and read (from [`crate::BridgeConfig::scripts_dir`]).
#[derive(Resource, Debug, Clone)]
pub struct ScriptsDir(pub PathBuf);

/// The recordings in progress, by session.
#[derive(Resource, Debug, Default)]
pub struct Recorder {
    recordings: HashMap<String, Recording>,
}

#[derive(Debug)]
struct Recording {
    file: String,
    path: PathBuf,
    script: Script,
    last_frame: u64,
    /// Bytes of params kept so far.
    bytes: usize,
}

fn served_catalog(world: &World) -> &'static Catalog {
    world
        .get_resource::<ServedCatalog>()
        .map_or(&bevy_mcp_generated::CATALOG, |served| served.0)
}

/// Whether a successful call belongs in a script: it changed the world, or it is an expectation.
fn recordable(world: &World, tool: &str, action: &str) -> bool {
    if tool == "playtest" {
        return action == "expect";
    }
    served_catalog(world)
        .action(tool, action)
        .is_some_and(|found| found.action.effect != Effect::Read)
}

/// Keeps a call that succeeded in its session's recording, if the session records. `started` is
/// the frame the call started in: the frames before it are counted from the end of the step
/// before, so a replay steps the same gaps and then runs the call.
pub fn record(
    world: &mut World,
    session: &str,
    started: u64,
    (tool, action): (&str, &str),
    params: &Value,
) {
    let recording_here = world
        .get_resource::<Recorder>()
        .is_some_and(|recorder| recorder.recordings.contains_key(session));
    if !recording_here || !recordable(world, tool, action) {
        return;
    }
    let now = frame(world);
    let Some(mut recorder) = world.get_resource_mut::<Recorder>() else {
        return;
    };
    let Some(recording) = recorder.recordings.get_mut(session) else {
        return;
    };
    let bytes = params.to_string().len();
    if recording.script.steps.len() >= MAX_STEPS
        || recording.bytes.saturating_add(bytes) > MAX_RECORDED_BYTES
    {
        recording.script.truncated = true;
        return;
    }
    recording.bytes += bytes;
    recording.script.steps.push(ScriptStep {
        frames_before: started.saturating_sub(recording.last_frame),
        tool: tool.to_owned(),
        action: action.to_owned(),
        params: params.clone(),
    });
    recording.last_frame = now;
}

fn calling_session(world: &World) -> Result<String, BridgeError> {
    world
        .get_resource::<CallingSession>()
        .and_then(|session| session.0.clone())
        .ok_or_else(|| {
            BridgeError::InvalidParams(
                "recording needs a session: call it through the MCP server".to_owned(),
            )
        })
}

fn scripts_dir(world: &World) -> PathBuf {
    world
        .get_resource::<ScriptsDir>()
        .map_or_else(|| PathBuf::from("scripts"), |dir| dir.0.clone())
}

/// The file of the script `name` inside `dir` (with the world files' path rules), which must
/// exist.
pub fn script_path(dir: &Path, name: &str) -> Result<PathBuf, BridgeError> {
    let (relative, Resolved { path, exists }) =
        file_in(dir, name, EXTENSION, MissingFolders::Refuse)?;
    if !exists {
        return Err(BridgeError::FileNotFound { file: relative });
    }
    Ok(path)
}

/// `playtest.record_start`.
pub fn start_recording(
    world: &mut World,
    params: &PlaytestRecordStartParams,
) -> Result<Value, BridgeError> {
    let session = calling_session(world)?;
    let (file, Resolved { path, exists }) = file_in(
        &scripts_dir(world),
        &params.name,
        EXTENSION,
        MissingFolders::Create,
    )?;
    if exists && !params.overwrite {
        return Err(BridgeError::FileExists { file });
    }
    let now = frame(world);
    let mut recorder = world.get_resource_or_insert_with(Recorder::default);
    if let Some(recording) = recorder.recordings.get(&session) {
        return Err(BridgeError::InvalidParams(format!(
            "this session is already recording {}; stop it with playtest.record_stop first",
            recording.file
        )));
    }
    if recorder.recordings.len() >= MAX_RECORDINGS {
        return Err(BridgeError::LimitExceeded {
            what: "sessions recording at once".to_owned(),
            limit: MAX_RECORDINGS as u64,
            unit: "recordings",
            advice: "stop a recording with playtest.record_stop in its session",
        });
    }
    recorder.recordings.insert(
        session,
        Recording {
            file: file.clone(),
            path,
            script: Script {
                version: SCRIPT_VERSION,
                steps: Vec::new(),
                truncated: false,
            },
            last_frame: now,
            bytes: 0,
        },
    );
    Ok(json!({"recording": file, "frame": now}))
}

/// `playtest.record_stop`.
pub fn stop_recording(world: &mut World) -> Result<Value, BridgeError> {
    let session = calling_session(world)?;
    let recording = world
        .get_resource_mut::<Recorder>()
        .and_then(|mut recorder| recorder.recordings.remove(&session))
        .ok_or_else(|| {
            BridgeError::InvalidParams(
                "this session is not recording; start with playtest.record_start".to_owned(),
            )
        })?;
    let text =
        serde_json::to_string_pretty(&recording.script).map_err(|error| BridgeError::Io {
            file: recording.file.clone(),
            reason: error.to_string(),
        })?;
    write_atomically(&recording.path, text.as_bytes())?;
    Ok(json!({
        "file": recording.file,
        "steps": recording.script.steps.len(),
        "expectations": expectations(&recording.script),
        "bytes": text.len(),
    }))
}

fn expectations(script: &Script) -> usize {
    script
        .steps
        .iter()
        .filter(|step| step.tool == "playtest" && step.action == "expect")
        .count()
}

/// `playtest.list_scripts`.
pub fn list_scripts(world: &World) -> Result<Value, BridgeError> {
    let root = canonical_dir(&scripts_dir(world))?;
    let scripts: Vec<Value> = crate::paths::files_ending_with(&root, EXTENSION)
        .into_iter()
        .map(|(file, bytes)| match read_script(&root.join(&file)) {
            Ok(script) => json!({
                "file": file,
                "steps": script.steps.len(),
                "expectations": expectations(&script),
                "bytes": bytes,
            }),
            Err(error) => json!({"file": file, "bytes": bytes, "error": error.to_string()}),
        })
        .collect();
    Ok(json!({"total": scripts.len(), "scripts": scripts}))
}

/// Why a script cannot be replayed. Nothing has run when this is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScriptError {
    /// The file cannot be read or is not a script.
    #[error("{file}: {reason}")]
    Unreadable {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// A step names no action of the app, or its params do not fit the action.
    #[error("step {index} ({tool}.{action}): {reason}")]
    BadStep {
        /// The step's position, from 0.
        index: usize,
        /// Its tool.
        tool: String,
        /// Its action.
        action: String,
        /// What is wrong.
        reason: String,
    },
}

/// Reads a script file (not yet checked against an app's catalog).
pub fn read_script(path: &Path) -> Result<Script, ScriptError> {
    let unreadable = |reason: String| ScriptError::Unreadable {
        file: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|error| unreadable(error.to_string()))?;
    let script: Script = serde_json::from_str(&text)
        .map_err(|error| unreadable(format!("not a script: {error}")))?;
    if script.version != SCRIPT_VERSION {
        return Err(unreadable(format!(
            "version {} is not {SCRIPT_VERSION}, the version this bridge replays",
            script.version
        )));
    }
    Ok(script)
}

/// Checks every step against the app's catalog: the action exists and its params fit its
/// schema. The first problem is returned, naming the step.
pub fn check_script(world: &World, script: &Script) -> Result<(), ScriptError> {
    let catalog = served_catalog(world);
    // One validator per action, however many steps use it.
    let mut validators: HashMap<(&str, &str), jsonschema::Validator> = HashMap::new();
    for (index, step) in script.steps.iter().enumerate() {
        let bad = |reason: String| ScriptError::BadStep {
            index,
            tool: step.tool.clone(),
            action: step.action.clone(),
            reason,
        };
        let Some(found) = catalog.action(&step.tool, &step.action) else {
            return Err(bad("the app has no such action".to_owned()));
        };
        let validator = match validators.entry((found.tool.name, found.action.name)) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(slot) => {
                let schema: Value = serde_json::from_str(found.action.input_schema)
                    .map_err(|error| bad(format!("its schema cannot be read: {error}")))?;
                slot.insert(
                    jsonschema::draft202012::new(&schema)
                        .map_err(|error| bad(format!("its schema cannot be compiled: {error}")))?,
                )
            }
        };
        if let Some(violation) = validator.iter_errors(&step.params).next() {
            return Err(bad(format!(
                "params break the schema at {:?}: {violation}",
                violation.instance_path().to_string()
            )));
        }
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn recording_world() -> World {
        let mut world = World::new();
        let mut recorder = Recorder::default();
        recorder.recordings.insert(
            "s".to_owned(),
            Recording {
                file: "t.json".to_owned(),
                path: PathBuf::from("t.json"),
                script: Script {
                    version: SCRIPT_VERSION,
                    steps: Vec::new(),
                    truncated: false,
                },
                last_frame: 0,
                bytes: 0,
            },
        );
        world.insert_resource(recorder);
        world
    }

    fn recorded(world: &World) -> (usize, bool) {
        world
            .get_resource::<Recorder>()
            .and_then(|recorder| recorder.recordings.get("s"))
            .map_or((0, false), |recording| {
                (recording.script.steps.len(), recording.script.truncated)
            })
    }

    #[test]
    fn only_changes_and_expectations_of_the_recording_session_are_kept() {
        let mut world = recording_world();
        let params = json!({"entity": "Player"});
        record(&mut world, "s", 0, ("inspect", "get_entity"), &params);
        record(
            &mut world,
            "other",
            0,
            ("control_entity", "despawn"),
            &params,
        );
        record(&mut world, "s", 0, ("playtest", "list_scripts"), &params);
        assert_eq!(recorded(&world), (0, false));
        record(&mut world, "s", 0, ("control_entity", "despawn"), &params);
        record(&mut world, "s", 0, ("playtest", "expect"), &params);
        assert_eq!(recorded(&world), (2, false));
    }

    #[test]
    fn a_recording_is_bounded_in_bytes() {
        let mut world = recording_world();
        let big = json!({"name": "x".repeat(1024 * 1024)});
        for _ in 0..20 {
            record(&mut world, "s", 0, ("control_entity", "spawn"), &big);
        }
        let (steps, truncated) = recorded(&world);
        assert!(truncated);
        assert!((15..20).contains(&steps), "{steps} steps of 1 MiB kept");
    }
}
