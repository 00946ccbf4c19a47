//! Bevy MCP Bridge: a Bevy plugin that embeds a Model Context Protocol server in a running app, so
//! an AI agent can inspect and drive it live through one MCP tool, `bevy`.
//!
//! Add [`McpBridgePlugin`] to your app; the server listens on `http://127.0.0.1:15720/mcp` by
//! default. Calls reach the game thread through a bounded mailbox drained after `Last`
//! ([`BridgeSystems`]); every handler runs under `catch_unwind`, and the write policy
//! ([`policy`]) keeps the generic reflection actions from breaking engine invariants, so no
//! request can take the app down.
//!
//! It owns the plugin, the mailbox, the handlers of every generated action, the write policy and
//! the bridge's identity as an MCP server. It depends on the transport, the generated catalog and
//! the vocabulary; it must never depend on the sandbox, test harnesses or CLI crates (those live in
//! `bevy_mcp_sandbox`).

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod budget;
pub mod error;
#[cfg(feature = "render")]
pub mod event_loop;
pub mod game;
pub mod handlers;
pub mod hierarchy;
pub mod identity;
pub mod jobs;
pub mod journal;
pub mod mailbox;
pub mod observe;
pub mod paths;
pub mod plugin;
pub mod policy;
pub mod reflect_json;
pub mod reflect_paths;
pub mod reflection;
pub mod runner;
pub mod script;
pub mod search_terms;
pub mod type_schema;
pub mod world_delta;

/// The generated catalog of every tool and action the bridge serves.
pub use bevy_mcp_generated::CATALOG;
pub use budget::{BudgetClock, ManualClock, PauseBridgeWork};
pub use identity::bevy_identity;
pub use journal::JournalLimits;
pub use mailbox::BridgeSignals;
pub use mcp_native_transport::{Limits, StartVisibility, Token};
pub use mcp_vocabulary::{ErrorCode, ToolError, catalog};
pub use plugin::{
    BridgeConfig, BridgeDispatchHandle, BridgeEndpoint, BridgeLast, BridgeSystems, McpBridgePlugin,
    RemovableResource, ServedCatalog, TransportStats,
};
pub use policy::{PolicyConfig, WriteLimits, WritePolicy};

/// The README's Rust snippets compile as doc tests, so the embedding example cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
