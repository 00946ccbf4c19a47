//! `view`: screenshots, cameras and windows.
//!
//! With the `render` feature the actions read Bevy's cameras and windows and capture through
//! Bevy's own `Screenshot`; without it, or in an app that does not render, they answer
//! `RENDERING_UNAVAILABLE` saying what to do. An image is never faked.

#[cfg(feature = "render")]
mod capture;
#[cfg(feature = "render")]
mod listing;
#[cfg(feature = "render")]
mod picture;

use std::path::PathBuf;

use bevy::prelude::{Resource, World};
use bevy_mcp_generated::call::ViewCall;

use crate::runtime::executor::Outcome;

#[cfg(feature = "render")]
pub use capture::{RenderReadiness, connect_renderer};

/// Where `view.screenshot` saves files (from [`crate::BridgeConfig::screenshots_dir`]).
#[derive(Resource, Debug, Clone)]
pub struct ScreenshotsDir(pub PathBuf);

/// Runs one `view` call.
#[cfg(feature = "render")]
pub fn run(world: &mut World, call: ViewCall) -> Outcome {
    match call {
        ViewCall::Screenshot(params) => capture::start(world, params),
        ViewCall::ListCameras(_) => Outcome::Done(Ok(listing::cameras(world))),
        ViewCall::ListWindows(_) => Outcome::Done(Ok(listing::windows(world))),
    }
}

/// Runs one `view` call: without the `render` feature there is nothing to read or capture.
#[cfg(not(feature = "render"))]
pub fn run(_world: &mut World, _call: ViewCall) -> Outcome {
    Outcome::Done(Err(crate::error::BridgeError::RenderingUnavailable {
        reason: "the bridge was built without its `render` feature. Build the app with \
                 `bevy_mcp_bridge = { features = [\"render\"] }` and Bevy's renderer (or run the \
                 sandbox with `--features render -- --render`)"
            .to_owned(),
    }))
}
