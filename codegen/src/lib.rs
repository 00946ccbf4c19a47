//! Codegen for the Bevy MCP bridge: canonical records in, the `generated` crate out.
//!
//! `cargo run -p bevy_mcp_codegen` validates `codegen/records/*.json` and writes the generated
//! files (only those that changed, each atomically); `-- --check` writes nothing and fails,
//! naming every stale, missing or stray file, when the generated crate does not match the records.
//!
//! It owns the record format and its rules; it reads the vocabulary (`mcp_vocabulary`) for the
//! names records may use. It must never depend on the transport, the bridge, Bevy or the
//! generated crate it writes.

#![deny(missing_docs)]

pub mod emit;
pub mod rust_types;
pub mod usage;

pub use mcp_record_rules::{phrasebook, problem, records, schema, validate};

mod run;

pub use emit::Outputs;
pub use problem::{Problem, Problems};
pub use run::{CodegenError, Drift, check, generate, generate_leaving_out, write};

/// Where the records live, relative to the workspace root.
pub const RECORDS_DIR: &str = "codegen/records";
/// Where the prompt records live, relative to the workspace root.
pub const PROMPTS_DIR: &str = "codegen/prompts";
/// Where the phrasebook (how people say what the records name) lives, relative to the workspace
/// root.
pub const PHRASEBOOK_DIR: &str = "native-transport/search/phrasebook";
/// Where the labelled phrasings (`search-*.json`) live, relative to the workspace root: search
/// learns from every part of them but the held-out one.
pub const LABELLED_DIR: &str = "native-transport/search/labelled";
