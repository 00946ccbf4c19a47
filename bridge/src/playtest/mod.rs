//! Playtests: a session's calls recorded into a JSON script ([`record`](mod@record)), the script
//! replayed deterministically in an app of one's own ([`replay()`]) or in the running app by an
//! agent (`playtest.run`), with a report a CI system reads ([`ReplayReport::to_junit`]).

pub mod record;
pub mod replay;
pub(crate) mod run;
pub mod script;

use std::path::PathBuf;

use bevy::app::{App, Plugin};

use crate::runtime::hooks::CallHooks;
use record::RecordHook;

pub use record::{Recorder, ScriptsDir};
pub use replay::{ReplayReport, StepOutcome, StepReport, replay, replay_file};
pub use script::{Script, ScriptError, ScriptStep, read_script, script_path};

/// Playtest recording: a session's calls kept while it records, written to the scripts folder.
#[derive(Debug, Clone)]
pub struct BridgePlaytestPlugin {
    scripts_dir: PathBuf,
}

impl BridgePlaytestPlugin {
    /// Scripts are written to and read from `scripts_dir`.
    pub fn new(scripts_dir: impl Into<PathBuf>) -> Self {
        BridgePlaytestPlugin {
            scripts_dir: scripts_dir.into(),
        }
    }
}

impl Plugin for BridgePlaytestPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ScriptsDir(self.scripts_dir.clone()))
            .init_resource::<Recorder>();
        app.world_mut()
            .get_resource_or_init::<CallHooks>()
            .add(RecordHook);
    }
}
