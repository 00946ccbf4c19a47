//! Where the mouse cursor goes for `input.move_mouse`, `input.drag` and `input.click {at}`, and
//! how input messages reach the app the way winit delivers them.
//!
//! The cursor lives on a `Window`: a position is a window and a point in its logical pixels,
//! given directly, as a world position seen through a camera that renders to the window, or as an
//! entity to aim at (a UI node's centre, a world entity's position). A target the player could
//! not point at (hidden, clipped, zero-size, off-screen) is refused before anything is pressed.
//! Positions need the `render` feature (windows and cameras); relative motion (`MouseMotion`,
//! what mouse-look reads) needs neither and works headless.
//!
//! winit writes every input message twice: as itself (`KeyboardInput`, `CursorMoved` ...) and
//! inside the `WindowEvent` stream that picking reads. [`write_input`] does the same, so every
//! reader sees the bridge's input as it sees a real device's.

use bevy::math::Vec2;
use bevy::prelude::{Entity, World};
use bevy_mcp_generated::params::{EntityRef, PointerSpace, ScreenPoint};
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::names::entity_info;

/// How the points of a call are read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Space {
    /// A window's logical pixels, origin top left, y down.
    Window,
    /// World positions, through a camera.
    World,
}

impl From<PointerSpace> for Space {
    fn from(space: PointerSpace) -> Space {
        match space {
            PointerSpace::Window => Space::Window,
            PointerSpace::World => Space::World,
        }
    }
}

/// What a call says about where its points are.
#[derive(Clone, Copy, Debug)]
// Read only where windows exist; without them every position is refused before.
#[cfg_attr(not(feature = "render"), allow(dead_code))]
pub(super) struct Placement<'a> {
    pub space: Space,
    pub camera: Option<&'a EntityRef>,
    pub window: Option<&'a EntityRef>,
}

/// A cursor position: a window and a point in its logical pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct CursorAt {
    pub window: Entity,
    pub position: Vec2,
    /// The entity aimed at, when the point was given as one.
    pub target: Option<Entity>,
}

impl CursorAt {
    /// Writes where the cursor went into a call's answer: `position` (`{x, y}`), `window`, and
    /// the `target` entity when it aimed at one.
    pub(super) fn describe(&self, world: &World, answer: &mut Value) {
        answer["position"] = json!({"x": self.position.x, "y": self.position.y});
        answer["window"] = entity_info(world, self.window);
        if let Some(target) = self.target {
            answer["target"] = entity_info(world, target);
        }
    }
}

/// The cursor position of an optional `at` point, checked before anything is pressed.
pub(super) fn resolve_at(
    world: &mut World,
    at: Option<&ScreenPoint>,
    placement: &Placement,
) -> Result<Option<CursorAt>, BridgeError> {
    match at {
        Some(point) => Ok(resolve(world, std::slice::from_ref(point), placement)?
            .first()
            .copied()),
        None => Ok(None),
    }
}

#[cfg(feature = "render")]
pub(super) use windowed::{cursors, input_window, place, resolve, write_input};

#[cfg(not(feature = "render"))]
pub(super) use headless::{cursors, input_window, place, resolve, write_input};

#[cfg(feature = "render")]
mod windowed {
    use bevy::camera::{Camera, NormalizedRenderTarget, RenderTarget};
    use bevy::ecs::entity::ContainsEntity as _;
    use bevy::ecs::message::Message;
    use bevy::input::mouse::MouseMotion;
    use bevy::math::{Vec2, Vec3};
    use bevy::prelude::{Entity, GlobalTransform, InheritedVisibility, With, World};
    use bevy::ui::ComputedNode;
    use bevy::window::{CursorMoved, PrimaryWindow, Window, WindowEvent};
    use bevy_mcp_generated::params::{EntityRef, ScreenPoint, ScreenPointPosition};
    use serde_json::{Value, json};

    use super::{CursorAt, Placement, Space};
    use crate::error::BridgeError;
    use crate::observe::ui_nodes;
    use crate::reflect::names::{entity_info, resolve_entity};

    /// Writes an input message as itself and, when the app has windows, inside `WindowEvent`.
    pub(crate) fn write_input<M: Message + Clone + Into<WindowEvent>>(
        world: &mut World,
        message: M,
    ) {
        if world.contains_resource::<bevy::ecs::message::Messages<WindowEvent>>() {
            world.write_message::<WindowEvent>(message.clone().into());
        }
        world.write_message(message);
    }

    /// The window keyboard and button messages name: the primary one, else a placeholder.
    pub(crate) fn input_window(world: &mut World) -> Entity {
        primary(world).unwrap_or(Entity::PLACEHOLDER)
    }

    fn primary(world: &mut World) -> Option<Entity> {
        let mut query = world.query_filtered::<Entity, (With<Window>, With<PrimaryWindow>)>();
        query.iter(world).next()
    }

    /// The cursor positions of `points` as `placement` reads them; all checked before any is used.
    pub(crate) fn resolve(
        world: &mut World,
        points: &[ScreenPoint],
        placement: &Placement,
    ) -> Result<Vec<CursorAt>, BridgeError> {
        points
            .iter()
            .enumerate()
            .map(|(index, point)| match point {
                ScreenPoint::Position(position) => {
                    resolve_position(world, index, position, placement)
                }
                ScreenPoint::Entity(target) => {
                    aim_at(world, &target.entity, placement).map_err(|error| BridgeError::At {
                        place: format!("point {index}"),
                        error: Box::new(error),
                    })
                }
            })
            .collect()
    }

    /// The cursor position of one `{x, y(, z)}` point.
    fn resolve_position(
        world: &mut World,
        index: usize,
        point: &ScreenPointPosition,
        placement: &Placement,
    ) -> Result<CursorAt, BridgeError> {
        let window = placement_window(world, placement)?;
        let through = match placement.space {
            Space::Window => None,
            Space::World => Some(camera_for(world, placement.camera, window)?),
        };
        let window = match (window, &through) {
            (_, Some(camera)) => camera.window,
            (Some(window), None) => window,
            (None, None) => primary(world).ok_or_else(no_window)?,
        };
        let Some(size) = world
            .get::<Window>(window)
            .map(|window| Vec2::new(window.width(), window.height()))
        else {
            return Err(no_window());
        };
        let position = match &through {
            None => Vec2::new(point.x as f32, point.y as f32),
            Some(camera) => {
                let target = Vec3::new(
                    point.x as f32,
                    point.y as f32,
                    point.z.unwrap_or(0.0) as f32,
                );
                camera
                    .to_window(world, target)
                    .map_err(|error| BridgeError::At {
                        place: format!("point {index}"),
                        error: Box::new(error),
                    })?
            }
        };
        let inside =
            position.x >= 0.0 && position.y >= 0.0 && position.x < size.x && position.y < size.y;
        if !inside {
            return Err(BridgeError::InvalidParams(format!(
                "point {index} is at ({}, {}), outside the window's {} x {} logical \
                 pixels; a cursor outside the window is seen by nothing",
                position.x, position.y, size.x, size.y
            )));
        }
        Ok(CursorAt {
            window,
            position,
            target: None,
        })
    }

    /// The cursor position that points at `given`: a UI node's centre, or a world entity's
    /// position through the camera `placement` names (or the highest-order one of the window).
    fn aim_at(
        world: &mut World,
        given: &EntityRef,
        placement: &Placement,
    ) -> Result<CursorAt, BridgeError> {
        let entity = resolve_entity(world, given)?;
        let refuse = |ui: bool, reason: String| BridgeError::NotPointable {
            entity: entity.to_string(),
            reason,
            ui,
        };
        let ui = world.get::<ComputedNode>(entity).is_some();
        if world
            .get::<InheritedVisibility>(entity)
            .is_some_and(|visibility| !visibility.get())
        {
            return Err(refuse(
                ui,
                "it is hidden (its Visibility, or an ancestor's, is Hidden)".to_owned(),
            ));
        }
        if ui {
            let primary = primary(world);
            let node = ui_nodes::on_screen(world, entity, primary)
                .map_err(|reason| refuse(true, reason))?;
            if let Some(reason) = node.centre_unreachable {
                return Err(refuse(true, reason.to_owned()));
            }
            let Some(window) = node.window else {
                return Err(refuse(
                    true,
                    "its camera draws to an image or texture, not a window: no cursor reaches it"
                        .to_owned(),
                ));
            };
            return Ok(CursorAt {
                window,
                position: node.rect.center(),
                target: Some(entity),
            });
        }
        let Some(at) = world
            .get::<GlobalTransform>(entity)
            .map(GlobalTransform::translation)
        else {
            return Err(refuse(
                false,
                "it is neither a UI node nor placed in the world (no GlobalTransform)".to_owned(),
            ));
        };
        let window = placement_window(world, placement)?;
        let lens = camera_for(world, placement.camera, window)?;
        let position = lens
            .to_window(world, at)
            .map_err(|error| refuse(false, error.to_string()))?;
        let size = world
            .get::<Window>(lens.window)
            .map(|window| Vec2::new(window.width(), window.height()))
            .ok_or_else(no_window)?;
        if position.x < 0.0 || position.y < 0.0 || position.x >= size.x || position.y >= size.y {
            return Err(refuse(
                false,
                format!(
                    "camera {} shows it at ({}, {}), outside the window's {} x {} logical pixels",
                    lens.camera, position.x, position.y, size.x, size.y
                ),
            ));
        }
        Ok(CursorAt {
            window: lens.window,
            position,
            target: Some(entity),
        })
    }

    /// The window `placement` names, checked to be one.
    fn placement_window(
        world: &mut World,
        placement: &Placement,
    ) -> Result<Option<Entity>, BridgeError> {
        let Some(given) = placement.window else {
            return Ok(None);
        };
        let window = resolve_entity(world, given)?;
        if world.get::<Window>(window).is_none() {
            return Err(BridgeError::InvalidParams(format!(
                "{window} is not a window; view.list_windows lists the windows"
            )));
        }
        Ok(Some(window))
    }

    /// A camera that renders to a window, to read world points through.
    struct Lens {
        camera: Entity,
        window: Entity,
    }

    impl Lens {
        fn to_window(&self, world: &World, target: Vec3) -> Result<Vec2, BridgeError> {
            let (Some(camera), Some(transform)) = (
                world.get::<Camera>(self.camera),
                world.get::<GlobalTransform>(self.camera),
            ) else {
                return Err(BridgeError::InvalidParams(format!(
                    "{} is not a camera with a transform",
                    self.camera
                )));
            };
            let in_viewport = camera
                .world_to_viewport(transform, target)
                .map_err(|error| {
                    BridgeError::InvalidParams(format!(
                        "the world position ({}, {}, {}) is not on screen through camera {}: \
                         {error}; move the camera (control_entity.set_transform) or pick a \
                         point in view",
                        target.x, target.y, target.z, self.camera
                    ))
                })?;
            let offset = camera
                .logical_viewport_rect()
                .map(|rect| rect.min)
                .unwrap_or_default();
            Ok(in_viewport + offset)
        }
    }

    /// `given`, or the highest-order active camera rendering to `window` (or to any window).
    fn camera_for(
        world: &mut World,
        given: Option<&EntityRef>,
        window: Option<Entity>,
    ) -> Result<Lens, BridgeError> {
        let primary = primary(world);
        let window_of = |target: &RenderTarget| match target.normalize(primary) {
            Some(NormalizedRenderTarget::Window(window)) => Some(window.entity()),
            _ => None,
        };
        if let Some(given) = given {
            let camera = resolve_entity(world, given)?;
            if world.get::<Camera>(camera).is_none() {
                return Err(BridgeError::InvalidParams(format!(
                    "{camera} is not a camera; view.list_cameras lists the cameras"
                )));
            }
            let Some(target) = world.get::<RenderTarget>(camera).and_then(window_of) else {
                return Err(BridgeError::InvalidParams(format!(
                    "camera {camera} does not render to a window, so no cursor can point \
                     through it; view.list_cameras shows what each camera renders to"
                )));
            };
            if window.is_some_and(|window| window != target) {
                return Err(BridgeError::InvalidParams(format!(
                    "camera {camera} renders to window {target}, not to the window given"
                )));
            }
            return Ok(Lens {
                camera,
                window: target,
            });
        }
        let mut query = world.query::<(Entity, &Camera, &RenderTarget)>();
        query
            .iter(world)
            .filter(|(_, camera, _)| camera.is_active)
            .filter_map(|(entity, camera, target)| {
                let target = window_of(target)?;
                window.is_none_or(|window| window == target).then_some((
                    camera.order,
                    entity,
                    target,
                ))
            })
            .max_by_key(|(order, entity, _)| (*order, *entity))
            .map(|(_, camera, window)| Lens { camera, window })
            .ok_or_else(|| BridgeError::InputUnavailable {
                reason: "no active camera renders to a window, so world positions cannot \
                             be placed under the cursor; use space window"
                    .to_owned(),
            })
    }

    fn no_window() -> BridgeError {
        BridgeError::InputUnavailable {
            reason: "the app has no window, so there is no cursor to place (headless apps have \
                     none); move the mouse with by (relative motion) instead"
                .to_owned(),
        }
    }

    /// Puts the cursor at `at` as winit does when the mouse moves: the window's cursor
    /// position, then `CursorMoved` and `MouseMotion`.
    pub(crate) fn place(world: &mut World, at: CursorAt) {
        let Some(mut window) = world.get_mut::<Window>(at.window) else {
            return;
        };
        let before = window.cursor_position();
        window.set_cursor_position(Some(at.position));
        let delta = before.map(|before| at.position - before);
        write_input(
            world,
            CursorMoved {
                window: at.window,
                position: at.position,
                delta,
            },
        );
        if let Some(delta) = delta.filter(|delta| *delta != Vec2::ZERO) {
            write_input(world, MouseMotion { delta });
        }
    }

    /// Where the cursor is in each window that has it.
    pub(crate) fn cursors(world: &mut World) -> Vec<Value> {
        let mut query = world.query::<(Entity, &Window)>();
        let found: Vec<(Entity, Vec2)> = query
            .iter(world)
            .filter_map(|(entity, window)| Some((entity, window.cursor_position()?)))
            .collect();
        found
            .into_iter()
            .map(|(window, position)| {
                json!({
                    "window": entity_info(world, window),
                    "position": {"x": position.x, "y": position.y},
                })
            })
            .collect()
    }
}

#[cfg(not(feature = "render"))]
mod headless {
    use bevy::ecs::message::Message;
    use bevy::prelude::{Entity, World};
    use bevy_mcp_generated::params::ScreenPoint;
    use serde_json::Value;

    use super::{CursorAt, Placement};
    use crate::error::BridgeError;

    /// Writes an input message (there is no `WindowEvent` stream without windows).
    pub(crate) fn write_input<M: Message>(world: &mut World, message: M) {
        world.write_message(message);
    }

    /// Without windows, input messages name a placeholder window.
    pub(crate) fn input_window(_world: &mut World) -> Entity {
        Entity::PLACEHOLDER
    }

    /// Without windows there is no cursor to place.
    pub(crate) fn resolve(
        _world: &mut World,
        _points: &[ScreenPoint],
        _placement: &Placement,
    ) -> Result<Vec<CursorAt>, BridgeError> {
        Err(BridgeError::InputUnavailable {
            reason: "cursor positions need a window: the bridge was built without its `render` \
                     feature; move the mouse with by (relative motion) instead"
                .to_owned(),
        })
    }

    /// Never called: no position resolves without windows.
    pub(crate) fn place(_world: &mut World, _at: CursorAt) {}

    /// No windows, no cursors.
    pub(crate) fn cursors(_world: &mut World) -> Vec<Value> {
        Vec::new()
    }
}

/// The motion of `total` spread over `frames` equal parts.
pub(super) fn spread(total: Vec2, frames: u64) -> Vec<Vec2> {
    let frames = frames.max(1);
    vec![total / frames as f32; frames as usize]
}
