//! Where the parts of the bridge that watch calls attach to the executor: the journal holds what
//! a call may change before it runs and keeps the difference after; a playtest recording keeps
//! its session's calls. The executor knows only this interface, never the parts.

use std::sync::Arc;

use bevy::prelude::{Resource, World};
use mcp_vocabulary::catalog::{ActionRecord, ToolRecord};
use serde_json::Value;

use crate::runtime::action::Footprint;
use crate::runtime::registry::Invocation;

/// A call about to run on the game thread, as a hook sees it.
pub(crate) struct CallStart<'a> {
    /// The calling session.
    pub session: &'a str,
    /// The action's tool.
    pub tool: &'static ToolRecord,
    /// The action.
    pub action: &'static ActionRecord,
    /// The params as the caller sent them (checked against the action's schema).
    pub params: &'a Value,
    pub(crate) invocation: &'a dyn Invocation,
}

impl std::fmt::Debug for CallStart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallStart")
            .field("session", &self.session)
            .field("action", &self.name())
            .finish()
    }
}

impl CallStart<'_> {
    /// `tool.action`.
    pub(crate) fn name(&self) -> String {
        format!("{}.{}", self.tool.name, self.action.name)
    }

    /// What the call may change, as its action declares it.
    pub(crate) fn footprint(&self, world: &World) -> Footprint {
        self.invocation.footprint(world)
    }
}

/// Something that sees every call start on the game thread.
pub(crate) trait CallHook: Send + Sync + 'static {
    /// Runs before the call's handler; what it returns runs if the call succeeds.
    fn before(&self, world: &World, call: &CallStart<'_>) -> Option<Box<dyn AfterCall>>;
}

/// What a hook does once its call succeeded (at once, or when a long-running call finishes).
pub(crate) trait AfterCall: Send + Sync {
    /// The call succeeded with `reply`.
    fn succeeded(self: Box<Self>, world: &mut World, reply: &Value);
}

/// The hooks on the executor, in the order they were added (shared: the executor takes them
/// for every call without copying the list).
#[derive(Resource, Default, Clone)]
pub(crate) struct CallHooks(Arc<Vec<Arc<dyn CallHook>>>);

impl std::fmt::Debug for CallHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHooks")
            .field("hooks", &self.0.len())
            .finish()
    }
}

impl CallHooks {
    /// Adds a hook.
    pub(crate) fn add(&mut self, hook: impl CallHook) {
        Arc::make_mut(&mut self.0).push(Arc::new(hook));
    }

    /// Runs every hook's `before`, each under `catch_unwind`: a hook never takes a call down.
    pub(crate) fn before(&self, world: &World, call: &CallStart<'_>) -> Vec<Box<dyn AfterCall>> {
        self.0
            .iter()
            .filter_map(|hook| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook.before(world, call)))
                    .unwrap_or_else(|_| {
                        tracing::error!(call = %call.name(), "a call hook panicked before the call; it sees nothing of it");
                        None
                    })
            })
            .collect()
    }
}

/// Runs what the hooks wanted after a successful call, each under `catch_unwind`.
pub(crate) fn succeeded(after: Vec<Box<dyn AfterCall>>, world: &mut World, reply: &Value) {
    for hook in after {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hook.succeeded(world, reply);
        }));
        if caught.is_err() {
            tracing::error!("a call hook panicked after the call; the call's answer stands");
        }
    }
}
