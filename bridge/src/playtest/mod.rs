//! Playtests: a session's calls recorded into a JSON script ([`record`]), and the script
//! replayed deterministically in an app of one's own ([`replay`]).

pub mod record;
pub mod replay;
pub mod script;

pub use record::{Recorder, ScriptsDir};
pub use replay::{ReplayReport, StepOutcome, StepReport, replay, replay_file};
pub use script::{Script, ScriptError, ScriptStep, check_script, read_script, script_path};
