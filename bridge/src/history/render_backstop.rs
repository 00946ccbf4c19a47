//! The backstop for writes no bound foresaw: when rendering fails right after bridge writes, the
//! writes are taken back and rendering goes on, instead of Bevy's default of quitting the app.
//!
//! Bevy 0.19 calls one [`RenderErrorHandler`] when wgpu reports an error (validation, out of
//! memory). The bridge puts its own in front of the app's: it looks for journal entries of the
//! last [`RECENT_FRAMES`] frames that are still in the world, takes them back newest first (the
//! journal holds their before-values), marks them `rolledBack`, logs what happened and lets
//! rendering continue. With no recent bridge write to blame it hands the error to the handler
//! the app had (its own, or Bevy's default, which quits with an error).

use bevy::app::App;
use bevy::log::error;
use bevy::prelude::{Resource, World};
use bevy::render::error_handler::{RenderError, RenderErrorHandler, RenderErrorPolicy};

use crate::history::journal::{EntryState, Journal};
use crate::history::world_delta::{self, Side};
use crate::reflect::world::frame;

/// Writes this many frames old or newer are blamed for a render error: wgpu reports an error a
/// frame or two after the write that caused it reached the renderer.
pub const RECENT_FRAMES: u64 = 8;

/// What the backstop did, newest last (at most 32 kept).
#[derive(Resource, Debug, Default, Clone)]
pub struct RenderRecoveries {
    /// Each render error that followed bridge writes, and the journal entries taken back.
    pub recoveries: Vec<RenderRecovery>,
    /// Render errors with no recent bridge write to blame (the app then quits, as Bevy does).
    pub unexplained: u64,
}

/// One render error the bridge recovered from.
#[derive(Debug, Clone)]
pub struct RenderRecovery {
    /// The frame the error was handled in.
    pub frame: u64,
    /// wgpu's kind of error and its description.
    pub error: String,
    /// The journal entries taken back, newest first: `(id, tool.action)`.
    pub rolled_back: Vec<(u64, String)>,
}

/// Recoveries kept for `control_app.get_state` and tests.
const MAX_RECOVERIES: usize = 32;

/// The handler the app had before the bridge's (its own, or Bevy's default that quits): it
/// handles every error the bridge cannot blame on its writes.
#[derive(Resource)]
struct AppRenderErrorHandler(RenderErrorHandlerFn);

type RenderErrorHandlerFn =
    for<'a> fn(&'a RenderError, &'a mut World, &'a mut World) -> RenderErrorPolicy;

/// Puts the bridge's handler in front of the app's. Runs when the app is finished, after the
/// render plugin set its default and the app's plugins set their own. (A handler the app inserts
/// later, in a system, replaces the backstop.)
pub(crate) fn install(app: &mut App) {
    app.init_resource::<RenderRecoveries>();
    let world = app.world_mut();
    let Some(mut handler) = world.get_resource_mut::<RenderErrorHandler>() else {
        return; // No renderer.
    };
    let previous = std::mem::replace(&mut handler.0, take_back_recent_writes);
    world.insert_resource(AppRenderErrorHandler(previous));
}

fn take_back_recent_writes(
    error: &RenderError,
    main_world: &mut World,
    render_world: &mut World,
) -> RenderErrorPolicy {
    let what = format!("{:?}: {}", error.ty, error.description);
    let rolled_back = roll_back_recent(main_world);
    if rolled_back.is_empty() {
        if let Some(mut recoveries) = main_world.get_resource_mut::<RenderRecoveries>() {
            recoveries.unexplained += 1;
        }
        let previous = main_world
            .get_resource::<AppRenderErrorHandler>()
            .map_or_else(|| RenderErrorHandler::default().0, |previous| previous.0);
        return previous(error, main_world, render_world);
    }
    let taken: Vec<String> = rolled_back
        .iter()
        .map(|(id, action)| format!("#{id} {action}"))
        .collect();
    error!(
        "rendering failed ({what}) right after bridge writes; the bridge took back {} so the app keeps running (history.list shows them as rolledBack)",
        taken.join(", ")
    );
    let now = frame(main_world);
    if let Some(mut recoveries) = main_world.get_resource_mut::<RenderRecoveries>() {
        recoveries.recoveries.push(RenderRecovery {
            frame: now,
            error: what,
            rolled_back,
        });
        let excess = recoveries.recoveries.len().saturating_sub(MAX_RECOVERIES);
        recoveries.recoveries.drain(..excess);
    }
    RenderErrorPolicy::Ignore
}

/// Takes back, newest first, every journal entry of the last [`RECENT_FRAMES`] frames whose
/// change is still in the world; returns the entries taken back.
fn roll_back_recent(world: &mut World) -> Vec<(u64, String)> {
    let since = frame(world).saturating_sub(RECENT_FRAMES);
    let taken = world.try_resource_scope(|world, mut journal: bevy::prelude::Mut<Journal>| {
        let recent: Vec<u64> = journal
            .entries()
            .rev()
            .take_while(|entry| entry.frame >= since)
            .filter(|entry| entry.state == EntryState::Done && entry.change.is_ok())
            .map(|entry| entry.id)
            .collect();
        let mut taken = Vec::new();
        for id in recent {
            let Some(entry) = journal.get(id) else {
                continue;
            };
            let Ok(delta) = &entry.change else {
                continue;
            };
            match world_delta::apply(world, std::sync::Arc::clone(delta), Side::Before) {
                Ok(_) => {
                    taken.push((id, entry.action.clone()));
                    journal.set_state(id, EntryState::RolledBack);
                }
                Err(failure) => {
                    error!("the bridge could not take back journal entry #{id} after a render error: {failure}");
                }
            }
        }
        taken
    });
    taken.unwrap_or_default()
}
