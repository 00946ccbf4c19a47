//! `view.list_cameras` and `view.list_windows`: what can be captured, read straight off Bevy's
//! components.

use bevy::camera::{Camera, Camera2d, Camera3d, RenderTarget};
use bevy::math::URect;
use bevy::prelude::{Entity, GlobalTransform, With, World};
use bevy::render::renderer::RenderDevice;
use bevy::window::{PrimaryWindow, Window, WindowRef};
use serde_json::{Value, json};

use crate::reflect::names::entity_info;

/// Whether the app renders: the renderer found an adapter and made a device.
pub(super) fn renders(world: &World) -> bool {
    world.contains_resource::<RenderDevice>()
}

/// The primary window's entity, when the app has one.
pub(super) fn primary_window(world: &mut World) -> Option<Entity> {
    let mut query = world.query_filtered::<Entity, (With<Window>, With<PrimaryWindow>)>();
    query.iter(world).next()
}

/// `{x, y, width, height}` of a pixel rectangle.
pub(super) fn rect_json(rect: URect) -> Value {
    json!({"x": rect.min.x, "y": rect.min.y, "width": rect.width(), "height": rect.height()})
}

/// What a camera renders to, as results show it.
pub(super) fn target_json(world: &World, target: &RenderTarget, primary: Option<Entity>) -> Value {
    match target {
        RenderTarget::Window(WindowRef::Primary) => match primary {
            Some(window) => json!({"kind": "window", "window": entity_info(world, window)}),
            None => json!({"kind": "window", "window": null}),
        },
        RenderTarget::Window(WindowRef::Entity(window)) => {
            json!({"kind": "window", "window": entity_info(world, *window)})
        }
        RenderTarget::Image(_) => json!({"kind": "image"}),
        RenderTarget::TextureView(_) => json!({"kind": "textureView"}),
        RenderTarget::None { .. } => json!({"kind": "none"}),
    }
}

/// Every camera, by order then entity.
pub(super) fn cameras(world: &mut World) -> Value {
    let primary = primary_window(world);
    let mut query = world.query::<(
        Entity,
        &Camera,
        Option<&RenderTarget>,
        Option<&GlobalTransform>,
        bevy::ecs::query::Has<Camera2d>,
        bevy::ecs::query::Has<Camera3d>,
    )>();
    let mut found: Vec<(isize, Entity)> = query
        .iter(world)
        .map(|(entity, camera, ..)| (camera.order, entity))
        .collect();
    found.sort();
    let rows: Vec<Value> = found
        .into_iter()
        .filter_map(|(_, entity)| {
            let (_, camera, target, transform, is_2d, is_3d) = query.get(world, entity).ok()?;
            let mut row = entity_info(world, entity);
            row["kind"] = json!(match (is_2d, is_3d) {
                (true, _) => "2d",
                (_, true) => "3d",
                _ => "other",
            });
            row["order"] = json!(camera.order);
            row["active"] = json!(camera.is_active);
            row["target"] =
                target.map_or(Value::Null, |target| target_json(world, target, primary));
            if let Some(size) = camera.physical_target_size() {
                row["size"] = json!([size.x, size.y]);
            }
            if camera.viewport.is_some()
                && let Some(viewport) = camera.physical_viewport_rect()
            {
                row["viewport"] = rect_json(viewport);
            }
            if let Some(transform) = transform {
                row["translation"] = json!(transform.translation().to_array());
            }
            Some(row)
        })
        .collect();
    json!({"total": rows.len(), "cameras": rows, "rendering": renders(world)})
}

/// Every window, the primary one first.
pub(super) fn windows(world: &mut World) -> Value {
    let mut query = world.query::<(Entity, &Window, bevy::ecs::query::Has<PrimaryWindow>)>();
    let mut rows: Vec<(bool, Entity, Value)> = query
        .iter(world)
        .map(|(entity, window, primary)| {
            let mut row = entity_info(world, entity);
            row["title"] = json!(window.title);
            row["primary"] = json!(primary);
            row["physicalSize"] = json!([window.physical_width(), window.physical_height()]);
            row["logicalSize"] = json!([window.width(), window.height()]);
            row["scaleFactor"] = json!(window.scale_factor());
            row["mode"] = json!(format!("{:?}", window.mode));
            row["focused"] = json!(window.focused);
            row["visible"] = json!(window.visible);
            (!primary, entity, row)
        })
        .collect();
    rows.sort_by_key(|(not_primary, entity, _)| (*not_primary, *entity));
    let rows: Vec<Value> = rows.into_iter().map(|(_, _, row)| row).collect();
    json!({"total": rows.len(), "windows": rows, "rendering": renders(world)})
}
