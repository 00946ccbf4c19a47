//! What the bridge's own tests read beyond the public API (the `test-support` feature): the
//! settings and state of built-in actions, their bounds, and the reflection helpers the tests
//! compare against Bevy's own. Not for apps: nothing here is a stable interface.

pub use crate::actions::control_app::PendingExit;
pub use crate::actions::manage_asset::{AssetRoot, HeldAssets};
pub use crate::actions::manage_world::ScenesDir;
pub use crate::history::checkpoints::MAX_CHECKPOINTS;
pub use crate::observe::search_terms::{MAX_ENTITY_NAMES, SearchTermsFeed};
pub use crate::playtest::ScriptsDir;
pub use crate::reflect::handles::{KeptByHistory, MadeAssets};
pub use crate::reflect::json::reflect_to_json;
pub use crate::reflect::schema::type_schema;
pub use crate::reflect::values::{reflected_components, to_json, write_json};
pub use crate::runtime::executor::ActiveJobs;
pub use crate::runtime::slices::MAX_UNITS as SLICE_UNITS;

/// The type paths of the writable engine types (a generic one ends in `<`).
pub fn writable_engine_types() -> Vec<&'static str> {
    crate::reflect::writable::WRITABLE
        .iter()
        .map(|entry| entry.type_path)
        .collect()
}

/// Whether a type of this path belongs to one of Bevy's crates (the write policy's test).
pub fn is_engine_type(type_path: &str) -> bool {
    crate::reflect::writable::is_engine_type(type_path)
}

/// Whether an asset handle is anywhere inside `value`.
pub fn holds_handle(
    value: &dyn bevy::reflect::PartialReflect,
    registry: &bevy::reflect::TypeRegistry,
) -> bool {
    let mut path = String::new();
    let mut look = |value: &dyn bevy::reflect::PartialReflect,
                    _: &str,
                    _: usize|
     -> Result<crate::reflect::walk::Step, ()> {
        let is_handle = value
            .get_represented_type_info()
            .and_then(|info| registry.get(info.type_id()))
            .is_some_and(crate::reflect::handle_form::is_handle_type);
        if is_handle {
            Err(())
        } else {
            Ok(crate::reflect::walk::Step::Descend)
        }
    };
    crate::reflect::walk::walk(value, &mut path, 0, &mut look).is_err()
}
