//! The contract tests over real HTTP, in one test binary. Each binary links Bevy with the renderer
//! (about 220 MB and a long link on CI's two cores), so the files are modules of this crate rather
//! than a binary each. Run one file's tests with its module name as the filter:
//! `cargo test --workspace --test contract world_search:: -- --nocapture`.
//!
//! A test's own reflected types say `#[reflect(no_auto_register)]` and are registered by the tests
//! that use them: Bevy registers every reflected type of the process in every app, so they would
//! otherwise show up in the apps of every other file (the fuzzers would write to them).
//!
//! Two files stay binaries of their own, for what they do to the process: `log_stream.rs`
//! installs the process's logger, and `restarts_and_crowds.rs` holds some 600 sockets.

mod clients;
mod support;

mod bounds;
mod bridge_e2e;
mod dispatch_guard;
mod game_actions;
mod gateway;
mod generated_catalog;
mod lan_access;
mod mcp_methods;
mod playtests;
mod python_sdk;
mod restart_continuity;
mod soak;
mod transport;
mod unreflected_games;
mod view;
mod window;
mod world_search;
