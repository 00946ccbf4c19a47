//! Where a UI node is on screen and whether a player can see it, for `inspect.ui_tree` and for
//! pointer actions aimed at a node.
//!
//! Bevy lays UI out in physical pixels of its camera's viewport (`ComputedNode`'s size,
//! `UiGlobalTransform`'s centre); the cursor and the answers use logical pixels of the window the
//! camera draws to. A node is visible when it is not hidden, has a size, and some of it lies inside
//! both its clip rect (an ancestor's overflow) and the viewport.

use bevy::camera::{Camera, NormalizedRenderTarget, RenderTarget};
use bevy::compat::ui_clip;
use bevy::ecs::entity::ContainsEntity as _;
use bevy::math::{Rect, Vec2};
use bevy::prelude::{Entity, InheritedVisibility, With, World};
use bevy::ui::{CalculatedClip, ComputedNode, ComputedUiTargetCamera, UiGlobalTransform};
use bevy::window::{PrimaryWindow, Window};
use serde_json::{Value, json};

/// A UI node's place on screen.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OnScreen {
    /// The window its camera draws to; `None` for a camera that draws to an image.
    pub window: Option<Entity>,
    /// Its rect, in logical pixels of the window (or image) its camera draws to.
    pub rect: Rect,
    /// Why a player cannot see any of it, if so.
    pub not_visible: Option<&'static str>,
    /// Why a cursor at its centre would not reach it (hidden, clipped there, off-screen), if so.
    pub centre_unreachable: Option<&'static str>,
}

impl OnScreen {
    /// `{x, y, width, height}` in logical pixels.
    pub(crate) fn rect_json(&self) -> Value {
        json!({
            "x": self.rect.min.x,
            "y": self.rect.min.y,
            "width": self.rect.width(),
            "height": self.rect.height(),
        })
    }
}

/// The primary window, which a camera's default render target names.
pub(crate) fn primary_window(world: &World) -> Option<Entity> {
    let mut query = world.try_query_filtered::<Entity, (With<Window>, With<PrimaryWindow>)>()?;
    query.iter(world).next()
}

/// Where `node` is on screen, or why it is nowhere (no size, no camera).
pub(crate) fn on_screen(
    world: &World,
    node: Entity,
    primary: Option<Entity>,
) -> Result<OnScreen, String> {
    let size = world
        .get::<ComputedNode>(node)
        .map(ComputedNode::size)
        .ok_or_else(|| "it is not a UI node".to_owned())?;
    if size.x <= 0.0 || size.y <= 0.0 {
        return Err(format!(
            "it has no size on screen ({} x {} pixels: Display::None, or laid out empty)",
            size.x, size.y
        ));
    }
    let camera = world
        .get::<ComputedUiTargetCamera>(node)
        .and_then(ComputedUiTargetCamera::get)
        .ok_or_else(|| "no camera draws it (its UI has no target camera yet)".to_owned())?;
    let (Some(camera_info), Some(target)) = (
        world.get::<Camera>(camera),
        world.get::<RenderTarget>(camera),
    ) else {
        return Err(format!("its camera {camera} is gone"));
    };
    let Some(viewport) = camera_info.physical_viewport_rect() else {
        return Err(format!("its camera {camera} has no size yet"));
    };
    let window = match target.normalize(primary) {
        Some(NormalizedRenderTarget::Window(window)) => Some(window.entity()),
        _ => None,
    };
    let centre = world
        .get::<UiGlobalTransform>(node)
        .map(|transform| transform.affine().translation)
        .unwrap_or_default();
    let physical = Rect::from_center_size(centre, size);
    let view = Rect::from_corners(Vec2::ZERO, viewport.size().as_vec2());
    let clip = world.get::<CalculatedClip>(node);
    let hidden = world
        .get::<InheritedVisibility>(node)
        .is_some_and(|visibility| !visibility.get());
    let not_visible = if hidden {
        Some(HIDDEN)
    } else if clip.is_some_and(|clip| ui_clip::hides_rect(clip, physical)) {
        Some(CLIPPED)
    } else if view.intersect(physical).is_empty() {
        Some(OFF_SCREEN)
    } else {
        None
    };
    let centre_unreachable = not_visible.or_else(|| {
        if clip.is_some_and(|clip| !ui_clip::keeps_point(clip, centre)) {
            Some(CENTRE_CLIPPED)
        } else if !view.contains(centre) {
            Some(CENTRE_OFF_SCREEN)
        } else {
            None
        }
    });
    let scale = camera_info.target_scaling_factor().unwrap_or(1.0);
    let offset = viewport.min.as_vec2();
    Ok(OnScreen {
        window,
        rect: Rect::from_corners(
            (physical.min + offset) / scale,
            (physical.max + offset) / scale,
        ),
        not_visible,
        centre_unreachable,
    })
}

const HIDDEN: &str = "it is hidden (its Visibility, or an ancestor's, is Hidden)";
const CLIPPED: &str = "it is clipped away by an ancestor's overflow";
const OFF_SCREEN: &str = "it is outside its camera's viewport";
const CENTRE_CLIPPED: &str =
    "its centre is clipped away by an ancestor's overflow (scroll it into view)";
const CENTRE_OFF_SCREEN: &str = "its centre is outside its camera's viewport";
