//! A game action as the executor runs it: its handler system bound into the one action registry
//! ([`Binding`]), its params parsed from the call, and what it changes derived from its spec.

use std::marker::PhantomData;
use std::sync::Arc;

use bevy::ecs::system::{In, System};
use bevy::prelude::World;
use mcp_vocabulary::{ToolError, codes};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::spec::GameUndo;
use crate::error::BridgeError;
use crate::reflect::names::{registry, resolve_type};
use crate::runtime::action::{Footprint, Parts};
use crate::runtime::job::Outcome;
use crate::runtime::registry::{Binding, Invocation, parse_params};

/// A handler system and whether it was initialized on the world yet.
struct Handler<S> {
    system: S,
    initialized: bool,
}

/// A registered game action: its handler, and how a successful run becomes an answer (a value
/// now, or a job that goes on over frames).
pub(super) struct GameBinding<P, X, S> {
    handler: Arc<Mutex<Handler<S>>>,
    finish: fn(X) -> Outcome,
    undo: Option<GameUndo>,
    params: PhantomData<fn(P)>,
}

impl<P, X, S> GameBinding<P, X, S> {
    /// Binds `system`; `finish` turns its output into the call's outcome.
    pub(super) fn new(system: S, finish: fn(X) -> Outcome, undo: Option<GameUndo>) -> Self {
        GameBinding {
            handler: Arc::new(Mutex::new(Handler {
                system,
                initialized: false,
            })),
            finish,
            undo,
            params: PhantomData,
        }
    }
}

impl<P, X, S> Binding for GameBinding<P, X, S>
where
    P: DeserializeOwned + Send + 'static,
    X: 'static,
    S: System<In = In<P>, Out = Result<X, ToolError>>,
{
    fn parse(&self, params: &Value) -> Result<Box<dyn Invocation>, BridgeError> {
        let params = parse_params(params)?;
        Ok(Box::new(GameCall {
            handler: Arc::clone(&self.handler),
            finish: self.finish,
            undo: self.undo,
            params,
        }))
    }
}

/// One call of a game action.
struct GameCall<P, X, S> {
    handler: Arc<Mutex<Handler<S>>>,
    finish: fn(X) -> Outcome,
    undo: Option<GameUndo>,
    params: P,
}

impl<P, X, S> Invocation for GameCall<P, X, S>
where
    P: Send + 'static,
    X: 'static,
    S: System<In = In<P>, Out = Result<X, ToolError>>,
{
    fn footprint(&self, world: &World) -> Footprint {
        footprint(world, self.undo)
    }

    fn run(self: Box<Self>, world: &mut World) -> Outcome {
        let GameCall {
            handler,
            finish,
            params,
            ..
        } = *self;
        // One call at a time runs the system (all on the game thread); a panic unlocks it.
        let mut handler = handler.lock();
        if !handler.initialized {
            handler.system.initialize(world);
            handler.initialized = true;
        }
        match handler.system.run(params, world) {
            Ok(Ok(output)) => finish(output),
            Ok(Err(error)) => Outcome::Done(Err(BridgeError::Action(error))),
            Err(error) => Outcome::Done(Err(BridgeError::Action(ToolError::new(
                codes::APP_BUSY,
                format!("the action's system could not run now: {error}"),
            )))),
        }
    }
}

/// What a game action may change, as its spec declares it: the journal takes back only what it
/// was told of, and lists an undeclared action as not undoable rather than undoing it wrongly.
fn footprint(world: &World, undo: Option<GameUndo>) -> Footprint {
    match undo {
        None => Footprint::not_undoable(
            "the game's handler does not declare what it changes (ActionSpec::undoable)",
        ),
        Some(GameUndo::World) => Footprint::World,
        Some(GameUndo::Spawns(keys)) => Footprint::makes(keys),
        Some(GameUndo::Resources(given)) => {
            let registry = registry(world);
            let registry = registry.read();
            let mut resources = Vec::new();
            for given in given {
                match resolve_type(&registry, given) {
                    Ok(registration) => {
                        resources.push(registration.type_info().type_path().to_owned());
                    }
                    // A declared resource the journal cannot read: never undone wrongly.
                    Err(error) => {
                        return Footprint::NotUndoable(
                            format!(
                                "the resource {given} it declares is not a registered reflected type ({error})"
                            )
                            .into(),
                        );
                    }
                }
            }
            Footprint::Parts(Parts {
                resources,
                ..Parts::default()
            })
        }
    }
}
