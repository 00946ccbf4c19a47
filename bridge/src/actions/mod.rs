//! Action handlers: one module per tool, matched exhaustively on the generated `Call`, and a
//! module of their own for the larger actions (`query`, `entity_lifecycle`).

pub mod control_app;
pub mod control_entity;
pub mod history;
pub mod input;
pub mod inspect;
pub mod manage_asset;
pub mod manage_events;
pub mod manage_resource;
pub mod manage_world;
pub mod playtest;
pub mod state;
pub mod system_control;
pub mod view;
pub mod watch;

use bevy::prelude::World;
use bevy_mcp_generated::Call;
use bevy_mcp_generated::call::InspectCall;

use crate::error::BridgeError;
use crate::runtime::executor::Outcome;

/// A JSON object of `fields`, moved in: `json!` serializes each value it is given into a copy,
/// which for a page of rows or a map of components costs as much as building it.
pub(crate) fn object<const N: usize>(fields: [(&str, serde_json::Value); N]) -> serde_json::Value {
    serde_json::Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// Runs one call on the game thread.
pub fn run(world: &mut World, call: Call) -> Outcome {
    match call {
        Call::Inspect(InspectCall::Query(params)) => inspect::query::start(world, params),
        Call::Inspect(call) => Outcome::Done(inspect::run(world, call)),
        Call::ControlEntity(call) => Outcome::Done(control_entity::run(world, call)),
        Call::ControlApp(call) => control_app::run(world, call),
        Call::ManageAsset(call) => manage_asset::run(world, call),
        Call::ManageEvents(call) => Outcome::Done(manage_events::run(world, call)),
        Call::Watch(call) => watch::run(world, call),
        Call::ManageWorld(call) => Outcome::Done(manage_world::run(world, call)),
        Call::ManageResource(call) => Outcome::Done(manage_resource::run(world, call)),
        Call::SystemControl(call) => Outcome::Done(system_control::run(world, call)),
        Call::State(call) => state::run(world, call),
        Call::View(call) => view::run(world, call),
        Call::Input(call) => input::run(world, call),
        Call::Playtest(call) => Outcome::Done(playtest::run(world, call)),
        Call::History(call) => Outcome::Done(history::run(world, call)),
        // The gateway runs manage_tools itself, per session; it never reaches the game thread.
        Call::ManageTools(_) => Outcome::Done(Err(BridgeError::InvalidParams(
            "manage_tools runs through the configure operation, not on the game thread".to_owned(),
        ))),
    }
}
