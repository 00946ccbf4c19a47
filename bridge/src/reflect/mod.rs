//! The live world and the files the bridge owns, as a model names and writes them: reflection
//! (names, values, reflect paths, JSON Schemas), the write policy every written value passes,
//! bounded walks of the hierarchy, the world's plumbing, and paths inside the bridge's folders.
//!
//! It knows nothing of calls, sessions or actions: it sits just above [`crate::error`], and every
//! other part of the bridge builds on it.

pub(crate) mod entity_text;
pub(crate) mod files;
pub(crate) mod handle_form;
pub(crate) mod handles;
pub(crate) mod hierarchy;
pub(crate) mod json;
pub(crate) mod models;
pub(crate) mod mutation;
pub(crate) mod names;
pub(crate) mod paths;
pub(crate) mod policy;
#[cfg(feature = "render")]
pub(crate) mod primitive_meshes;
pub(crate) mod schema;
pub(crate) mod states;
pub(crate) mod values;
pub(crate) mod walk;
pub(crate) mod world;
pub(crate) mod writable;
