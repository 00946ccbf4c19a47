//! Bevy MCP Bridge: a Bevy plugin that embeds a Model Context Protocol server in a running app, so
//! an AI agent can inspect and drive it live through one MCP tool, `bevy`.
//!
//! Add [`McpBridgePlugin`] to your app; the server listens on `http://127.0.0.1:15720/mcp` by
//! default. Calls reach the game thread through a bounded mailbox drained after `Last`
//! ([`BridgeSystems`]); every handler runs under `catch_unwind`, and the write policy
//! ([`reflect::policy`]) keeps the generic reflection actions from breaking engine invariants, so
//! no request can take the app down.
//!
//! It owns the plugin, the mailbox, the handlers of every generated action, the write policy and
//! the bridge's identity as an MCP server. It depends on the transport, the generated catalog and
//! the vocabulary; it must never depend on the sandbox, test harnesses or CLI crates (those live in
//! `bevy_mcp_sandbox`).

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod actions;
pub mod config;
pub mod error;
pub mod game;
pub mod history;
pub mod observe;
pub mod playtest;
pub mod plugin;
pub mod reflect;
pub mod runtime;

pub use actions::manage_resource::RemovableResource;
/// The generated catalog of every tool and action the bridge serves.
pub use bevy_mcp_generated::CATALOG;
pub use config::BridgeConfig;
pub use history::journal::JournalLimits;
pub use mcp_native_transport::{Limits, StartVisibility, Token};
pub use mcp_vocabulary::{ErrorCode, ToolError, catalog};
pub use plugin::{BridgeCorePlugin, McpBridgePlugin};
pub use reflect::policy::{PolicyConfig, WriteLimits, WritePolicy};
pub use runtime::budget::{BudgetClock, ManualClock, PauseBridgeWork};
pub use runtime::catalog::ServedCatalog;
pub use runtime::identity::bevy_identity;
pub use runtime::mailbox::{BridgeDispatchHandle, BridgeSignals};
pub use runtime::schedule::{BridgeLast, BridgeStartup, BridgeSystems};
pub use runtime::transport::{BridgeEndpoint, TransportStats};

/// The README's Rust snippets compile as doc tests, so the embedding example cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
