//! Test support for the contract tests: a raw Streamable HTTP client and an MCP session helper.
//! The tests themselves live in `tests/`.

pub mod http;
pub mod mcp;
