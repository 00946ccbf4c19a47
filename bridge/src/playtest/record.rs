//! Recording: while a session records (`playtest.record_start`), every call of it that succeeds
//! and changes the world (effect write or destructive), and every `playtest.expect`, is kept with
//! the frames that passed since the step before; `playtest.record_stop` writes the script.

use std::collections::HashMap;
use std::path::PathBuf;

use bevy::prelude::{Resource, World};
use bevy_mcp_generated::names::playtest;
use bevy_mcp_generated::params::PlaytestRecordStartParams;
use mcp_vocabulary::catalog::{ActionRecord, Effect};
use serde_json::{Value, json};

use super::replay::LastRuns;
use super::script::{
    EXTENSION, MAX_FRAMES_BEFORE, MAX_STEPS, MAX_TOTAL_FRAMES, SCRIPT_VERSION, Script, ScriptStep,
    expectations, read_script,
};
use crate::error::BridgeError;
use crate::reflect::files::{
    FileTarget, MissingFolders, Resolved, canonical_dir, file_in, write_atomically,
};
use crate::reflect::world::frame;
use crate::runtime::executor::CallingSession;
use crate::runtime::hooks::{AfterCall, CallHook, CallStart};

/// Sessions recording at once at most.
const MAX_RECORDINGS: usize = 16;
/// Bytes of recorded params one recording keeps at most (a call's params may be megabytes).
const MAX_RECORDED_BYTES: usize = 16 * 1024 * 1024;

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
    target: FileTarget,
    script: Script,
    last_frame: u64,
    /// Bytes of params kept so far.
    bytes: usize,
    /// Frames the steps so far wait in all.
    frames: u64,
}

/// Whether a successful call belongs in a script: it changed the world, or it is an expectation.
fn recordable(tool: &str, action: &ActionRecord) -> bool {
    if tool == playtest::TOOL {
        return action.name == playtest::EXPECT;
    }
    action.effect != Effect::Read
}

/// The recorder's place on the executor: a call of a session that records is kept once it
/// succeeded. Its params are copied only then, never for a session that does not record.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordHook;

impl CallHook for RecordHook {
    fn before(&self, world: &World, call: &CallStart<'_>) -> Option<Box<dyn AfterCall>> {
        let recording = world
            .get_resource::<Recorder>()
            .is_some_and(|recorder| recorder.recordings.contains_key(call.session));
        if !recording || !recordable(call.tool.name, call.action) {
            return None;
        }
        Some(Box::new(Pending {
            session: call.session.to_owned(),
            started: frame(world),
            tool: call.tool.name,
            action: call.action.name,
            params: call.params.clone(),
        }))
    }
}

/// A recording session's call, kept if it succeeds.
struct Pending {
    session: String,
    /// The frame the call started in.
    started: u64,
    tool: &'static str,
    action: &'static str,
    params: Value,
}

impl AfterCall for Pending {
    fn succeeded(self: Box<Self>, world: &mut World, _reply: &Value) {
        record(
            world,
            &self.session,
            self.started,
            (self.tool, self.action),
            self.params,
        );
    }
}

/// Keeps a call that succeeded in its session's recording, if the session records. `started` is
/// the frame the call started in: the frames before it are counted from the end of the step
/// before, so a replay steps the same gaps and then runs the call.
fn record(
    world: &mut World,
    session: &str,
    started: u64,
    (tool, action): (&str, &str),
    params: Value,
) {
    let now = frame(world);
    let Some(mut recorder) = world.get_resource_mut::<Recorder>() else {
        return;
    };
    let Some(recording) = recorder.recordings.get_mut(session) else {
        return;
    };
    let bytes = params.to_string().len();
    // A longer idle gap is kept as the longest wait a replay takes.
    let frames_before = started
        .saturating_sub(recording.last_frame)
        .min(MAX_FRAMES_BEFORE);
    if recording.script.steps.len() >= MAX_STEPS
        || recording.bytes.saturating_add(bytes) > MAX_RECORDED_BYTES
        || recording.frames.saturating_add(frames_before) > MAX_TOTAL_FRAMES
    {
        recording.script.truncated = true;
        return;
    }
    recording.bytes += bytes;
    recording.frames += frames_before;
    recording.script.steps.push(ScriptStep {
        frames_before,
        tool: tool.to_owned(),
        action: action.to_owned(),
        params,
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

pub(crate) fn scripts_dir(world: &World) -> PathBuf {
    world
        .get_resource::<ScriptsDir>()
        .map_or_else(|| PathBuf::from("scripts"), |dir| dir.0.clone())
}

/// `playtest.record_start`.
pub fn start_recording(
    world: &mut World,
    params: &PlaytestRecordStartParams,
) -> Result<Value, BridgeError> {
    let session = calling_session(world)?;
    let (file, Resolved { exists, target, .. }) = file_in(
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
            target,
            script: Script {
                version: SCRIPT_VERSION,
                steps: Vec::new(),
                truncated: false,
            },
            last_frame: now,
            bytes: 0,
            frames: 0,
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
    write_atomically(&recording.target, text.as_bytes())?;
    Ok(json!({
        "file": recording.file,
        "steps": recording.script.steps.len(),
        "expectations": expectations(&recording.script),
        "bytes": text.len(),
    }))
}

/// `playtest.list_scripts`.
pub fn list_scripts(world: &World) -> Result<Value, BridgeError> {
    let root = canonical_dir(&scripts_dir(world))?;
    let scripts: Vec<Value> = crate::reflect::files::files_ending_with(&root, EXTENSION)
        .into_iter()
        .map(|(file, bytes)| {
            let mut row = match read_script(&root.join(&file)) {
                Ok(script) => json!({
                    "file": file,
                    "steps": script.steps.len(),
                    "expectations": expectations(&script),
                    "bytes": bytes,
                }),
                Err(error) => json!({"file": file, "bytes": bytes, "error": error.to_string()}),
            };
            if let Some(last) = world
                .get_resource::<LastRuns>()
                .and_then(|runs| runs.of(&file))
            {
                row["lastRun"] = last.clone();
            }
            row
        })
        .collect();
    Ok(json!({"total": scripts.len(), "scripts": scripts}))
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
                target: FileTarget {
                    root: PathBuf::from("."),
                    relative: "t.json".to_owned(),
                },
                script: Script {
                    version: SCRIPT_VERSION,
                    steps: Vec::new(),
                    truncated: false,
                },
                last_frame: 0,
                bytes: 0,
                frames: 0,
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
    fn only_changes_and_expectations_are_recordable() {
        let action = |tool: &str, action: &str| {
            bevy_mcp_generated::CATALOG
                .action(tool, action)
                .map(|found| found.action)
                .unwrap_or_else(|| panic!("{tool}.{action} is in the catalog"))
        };
        assert!(!recordable("inspect", action("inspect", "get_entity")));
        assert!(!recordable("playtest", action("playtest", "list_scripts")));
        assert!(recordable(
            "control_entity",
            action("control_entity", "despawn")
        ));
        assert!(recordable("playtest", action("playtest", "expect")));
    }

    #[test]
    fn only_the_recording_sessions_calls_are_kept() {
        let mut world = recording_world();
        let params = json!({"entity": "Player"});
        record(
            &mut world,
            "other",
            0,
            ("control_entity", "despawn"),
            params.clone(),
        );
        assert_eq!(recorded(&world), (0, false));
        record(&mut world, "s", 0, ("control_entity", "despawn"), params);
        assert_eq!(recorded(&world), (1, false));
    }

    #[test]
    fn a_recording_is_bounded_in_bytes() {
        let mut world = recording_world();
        let big = json!({"name": "x".repeat(1024 * 1024)});
        for _ in 0..20 {
            record(&mut world, "s", 0, ("control_entity", "spawn"), big.clone());
        }
        let (steps, truncated) = recorded(&world);
        assert!(truncated);
        assert!((15..20).contains(&steps), "{steps} steps of 1 MiB kept");
    }
}
