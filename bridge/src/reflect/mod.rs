//! The live world and the files the bridge owns, as a model names and writes them: reflection
//! (names, values, reflect paths, JSON Schemas), the write policy every written value passes,
//! bounded walks of the hierarchy, the world's plumbing, and paths inside the bridge's folders.
//!
//! It knows nothing of calls, sessions or actions: it sits just above [`crate::error`], and every
//! other part of the bridge builds on it.

pub mod files;
pub mod hierarchy;
pub mod json;
pub mod names;
pub mod paths;
pub mod policy;
pub mod schema;
pub mod values;
pub mod world;
