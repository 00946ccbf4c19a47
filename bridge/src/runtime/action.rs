//! What a built-in action is to the bridge: its handler, and what a call of it may change (its
//! footprint), declared side by side in the action's file under `actions/`.
//!
//! ```ignore
//! pub(crate) const MUTATE_COMPONENT: Action<ControlEntityMutateComponentParams> =
//!     Action::run(mutate_component).touching(|world, params| {
//!         Footprint::entity(world, &params.entity, Focus::named(world, [params.component.as_str()]))
//!     });
//! ```
//!
//! The record (`codegen/records`) says whether an action reads or changes the world; the
//! registry checks at start-up that every action that changes it declares its footprint and no
//! read does, so the journal never treats a new write as touching nothing.

use std::borrow::Cow;

use bevy::prelude::{Entity, World};
use bevy::reflect::TypePath;
use bevy_mcp_generated::params::EntityRef as EntityParam;
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::hierarchy;
use crate::reflect::names::{registry, resolve_component, resolve_entity, resolve_type};
use crate::runtime::job::Outcome;

/// A built-in action: its handler and, for an action that changes the world, its footprint.
pub(crate) struct Action<P> {
    pub(crate) handler: Handler<P>,
    pub(crate) footprint: Option<fn(&World, &P) -> Footprint>,
    /// Whether its calls read or change the whole world over several frames: while one runs,
    /// calls that change the world (and other such calls) wait for it.
    pub(crate) whole_world: bool,
}

// Derived `Clone`/`Copy` would ask the same of `P`; the fields are function pointers.
impl<P> Clone for Action<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Action<P> {}

impl<P> std::fmt::Debug for Action<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.handler {
            Handler::Read(_) => "read",
            Handler::Run(_) => "run",
            Handler::RunLong(_) => "run_long",
        };
        f.debug_struct("Action")
            .field("handler", &kind)
            .field("footprint", &self.footprint.is_some())
            .field("whole_world", &self.whole_world)
            .finish()
    }
}

/// How a handler uses the world.
pub(crate) enum Handler<P> {
    /// Reads it and answers in this frame.
    Read(fn(&World, P) -> Result<Value, BridgeError>),
    /// Uses it mutably and answers in this frame.
    Run(fn(&mut World, P) -> Result<Value, BridgeError>),
    /// Uses it mutably and may go on over the next frames.
    RunLong(fn(&mut World, P) -> Outcome),
}

impl<P> Clone for Handler<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Handler<P> {}

impl<P> Action<P> {
    /// An action that reads the world and answers at once.
    pub(crate) const fn read(handler: fn(&World, P) -> Result<Value, BridgeError>) -> Self {
        Action {
            handler: Handler::Read(handler),
            footprint: None,
            whole_world: false,
        }
    }

    /// An action that needs the world mutably and answers at once. One that changes the world
    /// says what with [`Action::touching`]; a read that only needs `&mut World` (a query's
    /// state) declares nothing.
    pub(crate) const fn run(handler: fn(&mut World, P) -> Result<Value, BridgeError>) -> Self {
        Action {
            handler: Handler::Run(handler),
            footprint: None,
            whole_world: false,
        }
    }

    /// An action whose handler may start a [`crate::runtime::job::LongJob`] that goes on over
    /// the next frames.
    pub(crate) const fn run_long(handler: fn(&mut World, P) -> Outcome) -> Self {
        Action {
            handler: Handler::RunLong(handler),
            footprint: None,
            whole_world: false,
        }
    }

    /// What a call may change, decided from its params before it runs: the journal holds it, so
    /// `history.undo` can take the change back.
    #[must_use]
    pub(crate) const fn touching(mut self, footprint: fn(&World, &P) -> Footprint) -> Self {
        self.footprint = Some(footprint);
        self
    }

    /// Its calls work over the whole world, a slice per frame: while one runs, calls that change
    /// the world wait for it, so it reads or leaves one world, not a mix.
    #[must_use]
    pub(crate) const fn over_whole_world(mut self) -> Self {
        self.whole_world = true;
        self
    }

    /// Runs the handler.
    pub(crate) fn run_handler(self, world: &mut World, params: P) -> Outcome {
        match self.handler {
            Handler::Read(handler) => Outcome::Done(handler(world, params)),
            Handler::Run(handler) => Outcome::Done(handler(world, params)),
            Handler::RunLong(handler) => handler(world, params),
        }
    }
}

/// What a call may change in the world, so the journal can hold it before the call runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Footprint {
    /// Nothing the journal holds.
    Nothing,
    /// A change that cannot be taken back, and why (what `history.list` says).
    NotUndoable(Cow<'static, str>),
    /// These parts of the world.
    Parts(Parts),
    /// Anything in the world: it is held whole before and after (while the world is small
    /// enough to read in one frame; see `JournalLimits::max_world_entities`).
    World,
    /// The call works over the whole world a slice per frame and reports what it changed itself
    /// when it finishes (`history::journal::report_change`).
    Reported,
}

/// The parts of the world a call may change.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parts {
    /// Entities, each with what of it the call may change.
    pub entities: Vec<(Entity, Focus)>,
    /// Resources, by type path.
    pub resources: Vec<String>,
    /// Whether it changes game time (pause, speed).
    pub time: bool,
    /// The keys of the reply that name the entities the call makes (an entity row, or an array
    /// of them); each is held with its descendants.
    pub made: &'static [&'static str],
}

/// What of an entity a call may change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Focus {
    /// Everything: all its reflected components (it may be despawned).
    Whole,
    /// These components (type paths), and any it gains; others it loses make the call not
    /// undoable.
    Components(Vec<String>),
}

impl Focus {
    /// The components a call names (short or full type paths), as registered; names that do
    /// not resolve make the call fail, so they hold nothing.
    pub(crate) fn named<'a>(world: &World, given: impl IntoIterator<Item = &'a str>) -> Focus {
        let registry = registry(world);
        let registry = registry.read();
        Focus::Components(
            given
                .into_iter()
                .filter_map(|given| resolve_component(&registry, given).ok())
                .map(|(registration, _)| registration.type_info().type_path().to_owned())
                .collect(),
        )
    }

    /// The component of type `T` (a built-in action that changes one, as `set_transform` does).
    pub(crate) fn component<T: TypePath>() -> Focus {
        Focus::Components(vec![T::type_path().to_owned()])
    }
}

impl Footprint {
    /// A change that cannot be taken back, with why.
    pub(crate) const fn not_undoable(reason: &'static str) -> Footprint {
        Footprint::NotUndoable(Cow::Borrowed(reason))
    }

    /// Game time (paused, speed).
    pub(crate) fn time() -> Footprint {
        Footprint::Parts(Parts {
            time: true,
            ..Parts::default()
        })
    }

    /// The entities the call makes, named in its reply under `keys`.
    pub(crate) fn makes(keys: &'static [&'static str]) -> Footprint {
        Footprint::Parts(Parts {
            made: keys,
            ..Parts::default()
        })
    }

    /// One entity, with what of it the call may change.
    pub(crate) fn entity(world: &World, entity: &EntityParam, focus: Focus) -> Footprint {
        Footprint::entities(world, entity, focus, false)
    }

    /// One entity with everything below it: `focus` for the entity itself, its descendants whole.
    pub(crate) fn tree(world: &World, entity: &EntityParam, focus: Focus) -> Footprint {
        Footprint::entities(world, entity, focus, true)
    }

    /// One resource, by the name the call gives.
    pub(crate) fn resource(world: &World, given: &str) -> Footprint {
        let registry = registry(world);
        let registry = registry.read();
        let resources = resolve_type(&registry, given)
            .map(|registration| vec![registration.type_info().type_path().to_owned()])
            .unwrap_or_default();
        Footprint::Parts(Parts {
            resources,
            ..Parts::default()
        })
    }

    fn entities(world: &World, entity: &EntityParam, focus: Focus, below: bool) -> Footprint {
        // An entity that does not resolve makes the call fail too: nothing to hold.
        let Ok(entity) = resolve_entity(world, entity) else {
            return Footprint::Parts(Parts::default());
        };
        let mut entities = vec![(entity, focus)];
        if below {
            entities.extend(
                hierarchy::descendants(world, entity)
                    .entities
                    .into_iter()
                    .map(|descendant| (descendant, Focus::Whole)),
            );
        }
        Footprint::Parts(Parts {
            entities,
            ..Parts::default()
        })
    }
}
