//! The script format: a recorded playtest as JSON, and reading one from a file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::files::{MissingFolders, Resolved, file_in};

/// The script format's version.
pub const SCRIPT_VERSION: u32 = 1;
/// The file extension of scripts.
pub const EXTENSION: &str = ".json";

/// Steps one script holds at most: a recording stops keeping calls there, and a replay refuses
/// a script with more.
pub const MAX_STEPS: usize = 10_000;
/// Frames one step may wait before it runs (10 minutes at 60 fps): a recording keeps a longer
/// idle gap as this many frames, and a replay refuses a step that asks for more.
pub const MAX_FRAMES_BEFORE: u64 = 36_000;
/// Frames a whole script may wait over all its steps (an hour at 60 fps).
pub const MAX_TOTAL_FRAMES: u64 = 216_000;
/// Bytes of a script file at most (the recorded params are bounded at 16 MiB; the file adds
/// its layout).
pub const MAX_SCRIPT_BYTES: u64 = 32 * 1024 * 1024;

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

/// The file of the script `name` inside `dir` (with the world files' path rules), which must
/// exist.
pub fn script_path(dir: &Path, name: &str) -> Result<PathBuf, BridgeError> {
    let (relative, Resolved { path, exists, .. }) =
        file_in(dir, name, EXTENSION, MissingFolders::Refuse)?;
    if !exists {
        return Err(BridgeError::FileNotFound { file: relative });
    }
    Ok(path)
}

pub(crate) fn expectations(script: &Script) -> usize {
    script
        .steps
        .iter()
        .filter(|step| step.tool == "playtest" && step.action == "expect")
        .count()
}

/// Why a script cannot be replayed. Nothing has run when this is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file cannot be read or is not a script.
    #[error("{file}: {reason}")]
    Unreadable {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// The app has no bridge to replay through (add `McpBridgePlugin`, and run a frame).
    #[error("the app has no MCP bridge to replay through: add McpBridgePlugin")]
    NoBridge,
    /// The script is larger than any recording makes: too many steps, frames or bytes.
    #[error("{file}: {what}, over the limit of {limit}; a recording never makes one so large")]
    TooLarge {
        /// The file (or `script` for one given in memory).
        file: String,
        /// What is too large.
        what: String,
        /// The bound.
        limit: u64,
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
    let bytes = std::fs::metadata(path)
        .map_err(|error| unreadable(error.to_string()))?
        .len();
    if bytes > MAX_SCRIPT_BYTES {
        return Err(ScriptError::TooLarge {
            file: path.display().to_string(),
            what: format!("{bytes} bytes"),
            limit: MAX_SCRIPT_BYTES,
        });
    }
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

/// Refuses a script beyond the bounds a recording keeps (steps, frames per step, frames in all),
/// before anything of it runs.
pub(crate) fn check_bounds(script: &Script) -> Result<(), ScriptError> {
    let too_large = |what: String, limit: u64| ScriptError::TooLarge {
        file: "script".to_owned(),
        what,
        limit,
    };
    if script.steps.len() > MAX_STEPS {
        return Err(too_large(
            format!("{} steps", script.steps.len()),
            MAX_STEPS as u64,
        ));
    }
    let mut total: u64 = 0;
    for (index, step) in script.steps.iter().enumerate() {
        if step.frames_before > MAX_FRAMES_BEFORE {
            return Err(too_large(
                format!("step {index} waits {} frames first", step.frames_before),
                MAX_FRAMES_BEFORE,
            ));
        }
        total = total.saturating_add(step.frames_before);
    }
    if total > MAX_TOTAL_FRAMES {
        return Err(too_large(
            format!("its steps wait {total} frames in all"),
            MAX_TOTAL_FRAMES,
        ));
    }
    Ok(())
}
