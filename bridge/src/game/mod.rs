//! Game-defined actions: an app adds its own tools and actions to the catalog while it is built,
//! with the same contract as the built-in ones.
//!
//! A handler is a Bevy system that takes its typed parameters as `In<P>` and returns
//! `Result<R, ToolError>`; any `SystemParam` is usable. `P` and `R` derive their JSON Schemas with
//! `schemars` (descriptions come from doc comments, bounds from `#[schemars(range(..))]` and
//! `#[schemars(length(..))]`): a well-kept derive that reads what the author already writes,
//! where Bevy reflection carries no descriptions or bounds.
//!
//! Every registration goes through the rules codegen applies to the records (descriptions and
//! bounds on every property, `additionalProperties: false`, examples valid against the schema,
//! unique names and aliases, ...) and may not shadow a built-in tool, action or alias. A bad
//! registration stops the app while it is built, with a message naming the action and the JSON
//! pointer; nothing is checked at request time that could have been checked then.
//!
//! A game's actions run exactly as the built-in ones do: bound into the one action registry
//! of the bridge, validated by the same gateway, watched by the same journal,
//! and long-running ones implement the same [`LongJob`] trait as the bridge's own.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_mcp_bridge::game::{ActionSpec, McpAppExt, ToolSpec};
//! use bevy_mcp_bridge::{BridgeConfig, McpBridgePlugin, ToolError};
//! use bevy_mcp_bridge::catalog::Category;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// How much gold to give.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct GiveGold {
//!     /// Coins to add to the purse.
//!     #[schemars(range(min = 1, max = 1000))]
//!     amount: u32,
//! }
//!
//! /// The purse after the gift.
//! #[derive(Serialize, JsonSchema)]
//! struct Purse {
//!     /// Coins now in the purse.
//!     gold: u32,
//! }
//!
//! #[derive(Resource, Default)]
//! struct Gold(u32);
//!
//! fn give_gold(In(gift): In<GiveGold>, mut gold: ResMut<Gold>) -> Result<Purse, ToolError> {
//!     gold.0 = gold.0.saturating_add(gift.amount);
//!     Ok(Purse { gold: gold.0 })
//! }
//!
//! App::new()
//!     .add_plugins(MinimalPlugins)
//!     .add_plugins(McpBridgePlugin::new(BridgeConfig::default()))
//!     .init_resource::<Gold>()
//!     .add_mcp_tool(ToolSpec::new("game", Category::Gameplay, "The game's own actions."))
//!     .add_mcp_action(
//!         ActionSpec::new("game", "give_gold", "Give the player gold.")
//!             .with_when("To reward the player.", "To take gold away.")
//!             .with_topics(&["gold", "money", "reward"])
//!             .with_example("Ten coins", serde_json::json!({"amount": 10}), "The purse grows by 10."),
//!         give_gold,
//!     )
//!     .run();
//! ```

mod binding;
mod records;
mod spec;

use bevy::app::App;
use bevy::ecs::system::{In, IntoSystem};
use mcp_vocabulary::ToolError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::runtime::job::{Outcome, into_json};
use crate::runtime::registry::{ActionRegistry, Binding};
use binding::GameBinding;

pub use crate::runtime::job::LongJob;
pub(crate) use records::GameActions;
pub(crate) use records::publish_catalog;
pub use spec::{ActionSpec, GameUndo, ToolSpec};

/// Adds game-defined tools and actions to an app (see the [module docs](self)).
pub trait McpAppExt {
    /// Declares a tool of the app's own; its actions are added with [`McpAppExt::add_mcp_action`].
    fn add_mcp_tool(&mut self, tool: ToolSpec) -> &mut Self;

    /// Adds an action whose handler runs within one frame.
    ///
    /// # Panics
    ///
    /// When the registration breaks a rule of the records (the message names the action and the
    /// JSON pointer): the app does not start with a bad catalog.
    fn add_mcp_action<P, R, M>(
        &mut self,
        spec: ActionSpec,
        handler: impl IntoSystem<In<P>, Result<R, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + Send + 'static;

    /// Adds an action that spans frames: `start` runs once and returns the [`LongJob`] polled
    /// each frame.
    ///
    /// # Panics
    ///
    /// As [`McpAppExt::add_mcp_action`].
    fn add_mcp_long_action<P, J, M>(
        &mut self,
        spec: ActionSpec,
        start: impl IntoSystem<In<P>, Result<J, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        J: LongJob,
        J::Output: JsonSchema;
}

impl McpAppExt for App {
    fn add_mcp_tool(&mut self, tool: ToolSpec) -> &mut Self {
        let mut actions = self.world_mut().get_resource_or_init::<GameActions>();
        actions
            .declare_tool(tool)
            .unwrap_or_else(|message| panic!("{message}"));
        self
    }

    fn add_mcp_action<P, R, M>(
        &mut self,
        spec: ActionSpec,
        handler: impl IntoSystem<In<P>, Result<R, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + Send + 'static,
    {
        let binding = GameBinding::<P, R, _>::new(
            IntoSystem::into_system(handler),
            |output| Outcome::Done(into_json(output)),
            spec.undo,
        );
        register::<P, R>(self, spec, false, Box::new(binding));
        self
    }

    fn add_mcp_long_action<P, J, M>(
        &mut self,
        spec: ActionSpec,
        start: impl IntoSystem<In<P>, Result<J, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        J: LongJob,
        J::Output: JsonSchema,
    {
        let binding = GameBinding::<P, J, _>::new(
            IntoSystem::into_system(start),
            Outcome::running,
            spec.undo,
        );
        register::<P, J::Output>(self, spec, true, Box::new(binding));
        self
    }
}

/// Checks the action's record with every rule, then binds it into the action registry.
fn register<P: JsonSchema, R: JsonSchema>(
    app: &mut App,
    spec: ActionSpec,
    long_running: bool,
    binding: Box<dyn Binding>,
) {
    let qualified = spec.qualified();
    let record = records::action_record::<P, R>(&spec, long_running);
    let mut actions = app.world_mut().get_resource_or_init::<GameActions>();
    if let Err(message) = actions.add(&spec, record) {
        panic!("bevy_mcp_bridge: the app's action {qualified} cannot be registered:\n{message}");
    }
    app.world_mut()
        .get_resource_or_init::<ActionRegistry>()
        .add(spec.tool, spec.name, binding);
}
