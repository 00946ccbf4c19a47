//! Engine-agnostic pieces of the MCP server: for now the catalog record types that the generated
//! crate fills and the gateway reads. The Streamable HTTP transport and the `bevy` gateway tool
//! arrive with their own issues.

#![deny(missing_docs)]

pub mod catalog;
