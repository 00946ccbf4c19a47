//! The sandbox's integration tests, in one test binary. Each binary links Bevy (about 220 MB and
//! a long link on CI's two cores), so the files are modules of this crate rather than a binary
//! each. Run one file's tests with its module name as the filter:
//! `cargo test --workspace --test sandbox sequence_fuzz:: -- --nocapture`.
//!
//! A test's own reflected types say `#[reflect(no_auto_register)]` and are registered by the tests
//! that use them: Bevy registers every reflected type of the process in every app, so they would
//! otherwise show up in the apps of every other file (the fuzzers would write to them).

mod fuzzing;
mod sequences;

mod assets;
mod big_world;
mod doctor;
mod engine_fuzz;
mod engine_writes;
mod events_and_watch;
mod frame_budget;
mod game_actions;
mod handlers;
mod handles;
mod hierarchies;
mod history;
mod input;
mod lossless_history;
mod playtest;
mod plugin;
mod protection;
mod query;
mod reflect_json;
mod reflective_fuzz;
mod scripts;
mod search_terms;
mod sequence_fuzz;
mod states;
mod system_control;
mod type_schemas;
mod undo;
mod view;
mod whole_world;
mod world_files;
