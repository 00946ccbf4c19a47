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

use bevy::prelude::Resource;
use bevy_mcp_generated::params::{
    ViewListCamerasParams, ViewListWindowsParams, ViewScreenshotParams,
};

use crate::observe::doctor::Check;
use crate::runtime::action::Action;

#[cfg(feature = "render")]
use capture::connect_renderer;

/// Where `view.screenshot` saves files (from [`crate::BridgeConfig::screenshots_dir`]).
#[derive(Resource, Debug, Clone)]
// Only screenshots read it, and they need the `render` feature.
#[cfg_attr(not(feature = "render"), allow(dead_code))]
pub(crate) struct ScreenshotsDir(pub(crate) PathBuf);

/// Screenshots, cameras and windows: where screenshots are saved and, with the `render`
/// feature, the connection to the renderer.
#[derive(Debug, Clone)]
pub struct BridgeViewPlugin {
    screenshots_dir: PathBuf,
}

impl BridgeViewPlugin {
    /// Screenshots asked to be saved go to `screenshots_dir`.
    pub fn new(screenshots_dir: impl Into<PathBuf>) -> Self {
        BridgeViewPlugin {
            screenshots_dir: screenshots_dir.into(),
        }
    }
}

impl bevy::app::Plugin for BridgeViewPlugin {
    fn build(&self, app: &mut bevy::app::App) {
        app.insert_resource(ScreenshotsDir(self.screenshots_dir.clone()));
    }

    fn finish(&self, _app: &mut bevy::app::App) {
        // Every plugin is built now, so the renderer's sub-app (if any) exists.
        #[cfg(feature = "render")]
        connect_renderer(_app);
    }
}

/// The doctor's rendering check: the adapter and driver in use, or why the app cannot render.
pub(crate) fn rendering_check(world: &bevy::prelude::World) -> Check {
    #[cfg(feature = "render")]
    {
        use bevy::render::renderer::RenderAdapterInfo;
        match world.get_resource::<RenderAdapterInfo>() {
            Some(info) => Check::pass(
                "rendering",
                format!(
                    "adapter {} ({:?}, driver {} {})",
                    info.name, info.backend, info.driver, info.driver_info
                ),
            ),
            None => Check::fail(
                "rendering",
                "the app has no renderer: it runs headless, or no GPU adapter was found",
                "add Bevy's renderer (DefaultPlugins); without a GPU install a software Vulkan driver (Debian/Ubuntu: mesa-vulkan-drivers; for windows also xvfb)",
            ),
        }
    }
    #[cfg(not(feature = "render"))]
    {
        let _ = world;
        Check::fail(
            "rendering",
            "the bridge was built without its render feature: view.screenshot cannot capture",
            "bevy_mcp_bridge = { features = [\"render\"] }",
        )
    }
}

/// `view.screenshot`: waits over frames for the renderer and the capture.
#[cfg(feature = "render")]
pub(crate) const SCREENSHOT: Action<ViewScreenshotParams> = Action::run_long(capture::start);
/// `view.list_cameras`.
#[cfg(feature = "render")]
pub(crate) const LIST_CAMERAS: Action<ViewListCamerasParams> =
    Action::run(|world, _| Ok(listing::cameras(world)));
/// `view.list_windows`.
#[cfg(feature = "render")]
pub(crate) const LIST_WINDOWS: Action<ViewListWindowsParams> =
    Action::run(|world, _| Ok(listing::windows(world)));

/// `view.screenshot` without the `render` feature: nothing to capture.
#[cfg(not(feature = "render"))]
pub(crate) const SCREENSHOT: Action<ViewScreenshotParams> = Action::read(|_, _| unavailable());
/// `view.list_cameras` without the `render` feature.
#[cfg(not(feature = "render"))]
pub(crate) const LIST_CAMERAS: Action<ViewListCamerasParams> = Action::read(|_, _| unavailable());
/// `view.list_windows` without the `render` feature.
#[cfg(not(feature = "render"))]
pub(crate) const LIST_WINDOWS: Action<ViewListWindowsParams> = Action::read(|_, _| unavailable());

/// What every view action answers without the `render` feature.
#[cfg(not(feature = "render"))]
fn unavailable() -> Result<serde_json::Value, crate::error::BridgeError> {
    Err(crate::error::BridgeError::RenderingUnavailable {
        reason: "the bridge was built without its `render` feature. Build the app with \
                 `bevy_mcp_bridge = { features = [\"render\"] }` and Bevy's renderer (or run the \
                 sandbox with `--features render -- --render`)"
            .to_owned(),
    })
}
