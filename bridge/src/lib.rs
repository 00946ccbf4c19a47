//! Bevy MCP Bridge: a Bevy plugin that embeds a Model Context Protocol server in a running app.
//!
//! The plugin itself arrives with the bridge issue; for now this crate re-exports the generated
//! catalog so the sandbox binary can report what it will serve.

/// The generated catalog of every tool and action the bridge serves.
pub use bevy_mcp_generated::CATALOG;
