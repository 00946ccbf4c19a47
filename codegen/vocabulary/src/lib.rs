//! The vocabulary every crate of the bridge shares.
//!
//! It owns the shape of the catalog ([`catalog`]: tools, actions, parameters, categories,
//! effects, consent), the one [`ErrorCode`] type and the codes the gateway, the transport and the
//! bridge raise on any action ([`codes`]), the error object a model sees ([`ToolError`]), and the
//! builders of the `nextCall`s that replies and errors carry ([`next_call`]).
//!
//! It holds no behaviour beyond lookups and JSON shapes, and must never depend on hyper, tokio,
//! Bevy, JSON Schema validation or the generated crate: the generated tables, codegen, the
//! transport and the bridge all depend on it, never the other way round.

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod catalog;
pub mod codes;
mod error;
pub mod next_call;

pub use codes::ErrorCode;
pub use error::ToolError;
