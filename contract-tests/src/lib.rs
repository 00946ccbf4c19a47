//! Test support for the contract tests: a raw Streamable HTTP client, an MCP session helper, and
//! the load generator behind the `mcp-load` binary.
//! The tests themselves live in `tests/`.

pub mod bench;
pub mod http;
pub mod load;
pub mod mcp;
pub mod synthetic;
