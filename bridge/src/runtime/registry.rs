//! One registry of every action the bridge runs: the generated ones, each bound to its handler
//! by codegen (`actions/bindings.rs`), and the app's own ([`crate::game`]), through the same
//! [`Binding`] trait. While the app is built it is an [`ActionRegistry`]; the first frame freezes
//! it into [`Actions`], which the executor reads for every call.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::prelude::{Resource, World};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::BridgeError;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::Outcome;

/// How one action's calls are parsed and run: a built-in [`Action`], or a game's registered
/// system.
pub(crate) trait Binding: Send + Sync + 'static {
    /// Parses a call's params, which the gateway checked against the action's schema.
    fn parse(&self, params: &Value) -> Result<Box<dyn Invocation>, BridgeError>;

    /// Whether its calls work over the whole world over several frames ([`Action::over_whole_world`]).
    fn whole_world(&self) -> bool {
        false
    }

    /// Whether the action says what it changes; `None` when the binding derives it (a game's
    /// actions declare it through their spec). Checked against the records in a test.
    #[cfg(test)]
    fn declares_footprint(&self) -> Option<bool> {
        None
    }
}

/// One call of an action with its params parsed: what it may change, and running it.
pub(crate) trait Invocation: Send {
    /// What the call may change, read before it runs.
    fn footprint(&self, world: &World) -> Footprint;

    /// Runs the handler.
    fn run(self: Box<Self>, world: &mut World) -> Outcome;
}

impl<P: DeserializeOwned + Send + 'static> Binding for Action<P> {
    fn parse(&self, params: &Value) -> Result<Box<dyn Invocation>, BridgeError> {
        Ok(Box::new(Parsed {
            action: *self,
            params: parse_params(params)?,
        }))
    }

    fn whole_world(&self) -> bool {
        self.whole_world
    }

    #[cfg(test)]
    fn declares_footprint(&self) -> Option<bool> {
        Some(self.footprint.is_some())
    }
}

/// A call's typed params, parsed from the borrowed tree: the params travel by move from the
/// request and are never copied whole.
pub(crate) fn parse_params<P: DeserializeOwned>(params: &Value) -> Result<P, BridgeError> {
    P::deserialize(params).map_err(|error| {
        BridgeError::InvalidParams(format!("the parameters do not fit the action: {error}"))
    })
}

/// A call of a built-in action.
struct Parsed<P> {
    action: Action<P>,
    params: P,
}

impl<P: Send> Invocation for Parsed<P> {
    fn footprint(&self, world: &World) -> Footprint {
        self.action
            .footprint
            .map_or(Footprint::Nothing, |footprint| {
                footprint(world, &self.params)
            })
    }

    fn run(self: Box<Self>, world: &mut World) -> Outcome {
        self.action.run_handler(world, self.params)
    }
}

/// The tool and action names of a binding.
type ActionKey = (&'static str, &'static str);

/// The actions being registered while the app is built: the bridge's own first, then the app's.
#[derive(Resource, Default)]
pub(crate) struct ActionRegistry {
    bindings: HashMap<ActionKey, Box<dyn Binding>>,
}

impl std::fmt::Debug for ActionRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionRegistry")
            .field("actions", &self.bindings.len())
            .finish()
    }
}

impl ActionRegistry {
    /// Binds a built-in action to its handler (what `actions/bindings.rs` calls for every record).
    pub(crate) fn bind<P: DeserializeOwned + Send + 'static>(
        &mut self,
        tool: &'static str,
        action: &'static str,
        binding: Action<P>,
    ) {
        self.add(tool, action, Box::new(binding));
    }

    /// Adds the binding of `tool.action`, replacing one of the same name.
    pub(crate) fn add(
        &mut self,
        tool: &'static str,
        action: &'static str,
        binding: Box<dyn Binding>,
    ) {
        self.bindings.insert((tool, action), binding);
    }

    /// The bindings registered, frozen for the executor.
    pub(crate) fn freeze(self) -> Actions {
        Actions(Arc::new(self.bindings))
    }

    /// Every registered `(tool, action)` with whether it declares a footprint.
    #[cfg(test)]
    pub(crate) fn footprints(&self) -> impl Iterator<Item = (ActionKey, Option<bool>)> + '_ {
        self.bindings
            .iter()
            .map(|(key, binding)| (*key, binding.declares_footprint()))
    }
}

/// Every action the bridge runs, frozen when the app's first frame starts.
#[derive(Resource, Clone)]
pub(crate) struct Actions(Arc<HashMap<ActionKey, Box<dyn Binding>>>);

impl std::fmt::Debug for Actions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Actions")
            .field("actions", &self.0.len())
            .finish()
    }
}

impl Actions {
    /// The binding of `tool.action`.
    pub(crate) fn get(&self, tool: &'static str, action: &'static str) -> Option<&dyn Binding> {
        self.0.get(&(tool, action)).map(Box::as_ref)
    }
}

/// Freezes the registry once every plugin has registered its actions (the first frame's
/// `Startup`).
pub(crate) fn freeze_actions(world: &mut World) {
    if let Some(registry) = world.remove_resource::<ActionRegistry>() {
        world.insert_resource(registry.freeze());
    }
}
