//! Test support for the contract tests: a raw Streamable HTTP client, an MCP session helper, and
//! the load generator behind the `mcp-load` binary.
//! The tests themselves live in `tests/`.
//!
//! It may depend on every crate of the workspace (it tests them from outside); no product crate
//! may depend on it.

pub mod bench;
pub mod http;
pub mod load;
pub mod mcp;
pub mod search_recall;
pub mod synthetic;
