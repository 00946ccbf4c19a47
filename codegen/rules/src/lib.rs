//! The record format and its rules: what codegen checks before it writes the catalog, and what
//! the bridge checks, with the same code, when a game registers its own actions while it starts.
//!
//! It reads records (`codegen/records/*.json`, or a game's actions as the same JSON), validates
//! them (names, schemas, examples, aliases, scopes, the phrasebook) and reports every problem with
//! its file and JSON pointer. It writes nothing and must never depend on the transport, the
//! bridge, Bevy or the generated crate.

#![deny(missing_docs)]

pub mod phrasebook;
pub mod problem;
pub mod records;
pub mod schema;
pub mod validate;

pub use problem::{Problem, Problems};
