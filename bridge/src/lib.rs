//! Bevy MCP Bridge: a Bevy plugin that embeds a Model Context Protocol server in a running app, so
//! an AI agent can inspect and drive it live through one MCP tool, `bevy`.
//!
//! Add [`McpBridgePlugin`] to your app; the server listens on `http://127.0.0.1:15720/mcp` by
//! default. Calls reach the game thread through a bounded mailbox drained after `Last`
//! ([`BridgeSystems`]); every handler runs under `catch_unwind`, and the write policy
//! ([`WritePolicy`]) keeps the generic reflection actions from breaking engine invariants, so no
//! request can take the app down.
//!
//! # Reading order
//!
//! The bridge is built in layers; a module imports only from the layers below it.
//!
//! | layer | folder | holds |
//! |---|---|---|
//! | 1 | `error.rs` | `BridgeError` and the one mapping to the error a model sees |
//! | 2 | `reflect/` | the live world as a model names it: types and entities, reflect JSON values, reflect paths, JSON Schemas, the write policy, bounded hierarchy walks, resource entities, paths inside the bridge's folders |
//! | 3 | `runtime/` | how a call runs: the action model (`Action`: a handler and its footprint; [`LongJob`]), the action registry, the mailbox, the executor and its hooks, the frame budget, the schedule, the runner, the transport thread, in-process calls ([`LocalCalls`]) |
//! | 4 | `history/`, `playtest/`, `observe/`, `game/` | the journal (a hook), recording (a hook) and replay, what `system_control` reports, an app's own actions |
//! | 5 | `actions/` | one file per tool: each action's handler and footprint, bound to its record by codegen |
//! | 6 | `config.rs` | [`BridgeConfig`]: everything an app sets, in one builder |
//! | 7 | `plugin.rs` | [`McpBridgePlugin`], the group of feature plugins, each given its part of the config |
//!
//! `tests/layers.rs` checks that every module imports only from its own folder and the layers
//! below it, so no import circle runs between folders.
//!
//! It owns the plugin, the mailbox, the handlers of every generated action, the write policy and
//! the bridge's identity as an MCP server. It depends on the transport, the generated catalog and
//! the vocabulary; it must never depend on the sandbox, test harnesses or CLI crates (those live in
//! `bevy_mcp_sandbox`).
//!
//! # The guide
//!
//! How to embed, drive and trust the bridge, chapter by chapter, is in [`guide`].
//!
//! # Public surface
//!
//! What an app needs is re-exported here: the plugin and its configuration, the feature plugins,
//! the schedule and sets, in-process calls, the runner for headless apps, and the [`game`] and
//! [`playtest`] modules. Everything else is the crate's own; the `test-support` feature opens
//! `test_support`, what the bridge's own tests read.

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod actions;
mod config;
mod error;
pub mod game;
pub mod guide;
mod history;
mod observe;
pub mod playtest;
mod plugin;
mod reflect;
mod runtime;
#[cfg(feature = "test-support")]
pub mod test_support;

/// The generated catalog of every tool and action the bridge serves.
pub use bevy_mcp_generated::CATALOG;
pub use mcp_native_transport::{Limits, StartVisibility, TlsConfig, TlsTrust, Token};
pub use mcp_vocabulary::{ErrorCode, ToolError, catalog};

pub use actions::input::BridgeInputPlugin;
pub use actions::manage_resource::RemovableResource;
pub use actions::view::BridgeViewPlugin;
pub use config::BridgeConfig;
pub use history::BridgeHistoryPlugin;
pub use history::journal::JournalLimits;
#[cfg(feature = "render")]
pub use history::render_backstop::{RenderRecoveries, RenderRecovery};
pub use observe::BridgeObservePlugin;
pub use observe::doctor;
pub use observe::logs::capture_logs;
pub use observe::search_terms::BridgeSearchTermsPlugin;
pub use playtest::BridgePlaytestPlugin;
pub use plugin::{BridgeCorePlugin, McpBridgePlugin};
pub use reflect::policy::{PolicyConfig, WriteLimits, WritePolicy};
pub use runtime::budget::{BudgetClock, ManualClock, PauseBridgeWork};
pub use runtime::catalog::ServedCatalog;
pub use runtime::executor::process_mailbox;
pub use runtime::identity::bevy_identity;
pub use runtime::job::LongJob;
pub use runtime::local::{LocalCalls, PendingCall};
pub use runtime::mailbox::{BridgeSignals, FrameWaker};
pub use runtime::runner::frame_paced_runner;
pub use runtime::schedule::{BridgeLast, BridgeStartup, BridgeSystems};
pub use runtime::transport::{BridgeEndpoint, BridgeTransportPlugin, TransportStats};

/// The README's Rust snippets compile as doc tests, like the guide's.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
