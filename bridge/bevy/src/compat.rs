//! What differs between Bevy 0.19 and 0.20, behind one signature each.
//!
//! Code elsewhere never asks which version it is built on; it calls these. Each item is written
//! once per version, side by side, so a reader sees the whole difference in one place.

use crate::ecs::component::{ComponentId, ComponentInfo};
use crate::ecs::world::World;
use crate::reflect::{PartialReflect, ReflectCloneError};

/// The Bevy version this build is on.
#[cfg(feature = "bevy_0_19")]
pub const BEVY_VERSION: &str = "0.19.1";
/// The Bevy version this build is on.
#[cfg(feature = "bevy_0_20")]
pub const BEVY_VERSION: &str = "0.20.1";

/// The cargo feature that chose this version (for a build started from a test).
#[cfg(feature = "bevy_0_19")]
pub const VERSION_FEATURE: &str = "bevy_0_19";
/// The cargo feature that chose this version (for a build started from a test).
#[cfg(feature = "bevy_0_20")]
pub const VERSION_FEATURE: &str = "bevy_0_20";

/// Bevy's geometric primitives (`Cuboid`, `Sphere`, `Rectangle`, ...): `bevy::math::primitives`
/// in 0.19, the `bevy_shape` crate in 0.20.
#[cfg(feature = "bevy_0_19")]
pub use crate::math::primitives;
/// Bevy's geometric primitives (`Cuboid`, `Sphere`, `Rectangle`, ...): `bevy::math::primitives`
/// in 0.19, the `bevy_shape` crate in 0.20.
#[cfg(feature = "bevy_0_20")]
pub use crate::shape as primitives;

/// Bounding volumes and their intersection tests (`Aabb2d`, `BoundingCircle`, ...):
/// `bevy::math::bounding` in 0.19, the `bevy_shape` crate in 0.20.
#[cfg(feature = "bevy_0_19")]
pub use crate::math::bounding;
/// Bounding volumes and their intersection tests (`Aabb2d`, `BoundingCircle`, ...):
/// `bevy::math::bounding` in 0.19, the `bevy_shape` crate in 0.20.
#[cfg(feature = "bevy_0_20")]
pub use crate::shape as bounding;

/// Every component type the world knows, with its id (0.20's `ComponentInfo` no longer holds it).
pub fn registered_components(
    world: &World,
) -> impl Iterator<Item = (ComponentId, &ComponentInfo)> + '_ {
    #[cfg(feature = "bevy_0_19")]
    return world
        .components()
        .iter_registered()
        .map(|info| (info.id(), info));
    #[cfg(feature = "bevy_0_20")]
    return world.components().iter_registered();
}

/// A dynamic copy of a reflected value. Bevy 0.19 cannot fail here (it panics on a value it
/// cannot copy, which the bridge's handlers catch); 0.20 says so.
pub fn to_dynamic(
    value: &dyn PartialReflect,
) -> Result<Box<dyn PartialReflect>, ReflectCloneError> {
    #[cfg(feature = "bevy_0_19")]
    return Ok(value.to_dynamic());
    #[cfg(feature = "bevy_0_20")]
    return value.to_dynamic();
}

/// A UI node's inherited clipping (an ancestor's overflow): one rect in the UI's physical pixels
/// in 0.19, rects in each clipping node's own space in 0.20.
#[cfg(feature = "bevy_ui")]
pub mod ui_clip {
    use crate::math::{Rect, Vec2};
    use crate::ui::CalculatedClip;

    /// Whether `point` (physical pixels of the UI) is left visible by the clip.
    pub fn keeps_point(clip: &CalculatedClip, point: Vec2) -> bool {
        #[cfg(feature = "bevy_0_19")]
        return clip.clip.contains(point);
        #[cfg(feature = "bevy_0_20")]
        return clip.contains_point(point);
    }

    /// Whether the clip hides all of `rect` (physical pixels of the UI). On 0.20 the clip's
    /// rects may be turned, so a rect counts as seen when its centre or a corner is kept.
    pub fn hides_rect(clip: &CalculatedClip, rect: Rect) -> bool {
        #[cfg(feature = "bevy_0_19")]
        return clip.clip.intersect(rect).is_empty();
        #[cfg(feature = "bevy_0_20")]
        return clip.is_fully_clipped()
            || ![
                rect.center(),
                rect.min,
                rect.max,
                Vec2::new(rect.min.x, rect.max.y),
                Vec2::new(rect.max.x, rect.min.y),
            ]
            .into_iter()
            .any(|point| clip.contains_point(point));
    }
}

/// What makes a UI node a button, and its hover and press state. 0.19 has one `Button` marker
/// and `Interaction`; 0.20 deprecates both (its `Button` alias cannot be named outside Bevy) for
/// `ui_widgets::Button`, picking's `Hovered` and `ui::Pressed`, which are read by reflection here
/// so the bridge needs none of those crates built in.
#[cfg(feature = "bevy_ui")]
pub mod ui_button {
    #![allow(deprecated)]

    use crate::ecs::entity::Entity;
    use crate::ecs::world::World;

    /// Whether `node` is a button.
    pub fn is_button(world: &World, node: Entity) -> bool {
        #[cfg(feature = "bevy_0_19")]
        return world.get::<crate::ui::widget::Button>(node).is_some();
        #[cfg(feature = "bevy_0_20")]
        return [
            "bevy_ui::widget::button::DeprecatedButton",
            "bevy_ui_widgets::button::Button",
        ]
        .into_iter()
        .any(|type_path| reflected(world, node, type_path).is_some());
    }

    /// `None`, `Hovered` or `Pressed`, for a node that keeps such a state.
    pub fn interaction(world: &World, node: Entity) -> Option<&'static str> {
        use crate::ui::Interaction;
        if let Some(interaction) = world.get::<Interaction>(node) {
            return Some(match interaction {
                Interaction::Pressed => "Pressed",
                Interaction::Hovered => "Hovered",
                Interaction::None => "None",
            });
        }
        #[cfg(feature = "bevy_0_20")]
        {
            if world.get::<crate::ui::Pressed>(node).is_some() {
                return Some("Pressed");
            }
            let hovered = reflected(world, node, "bevy_picking::hover::Hovered")?;
            let hovered = hovered
                .reflect_ref()
                .as_tuple_struct()
                .ok()
                .and_then(|tuple| tuple.field(0))
                .and_then(|field| field.try_downcast_ref::<bool>())
                .copied()
                .unwrap_or(false);
            return Some(if hovered { "Hovered" } else { "None" });
        }
        #[cfg(feature = "bevy_0_19")]
        None
    }

    /// The value of `node`'s component of this type path, when it has one and it is reflected.
    #[cfg(feature = "bevy_0_20")]
    fn reflected<'w>(
        world: &'w World,
        node: Entity,
        type_path: &str,
    ) -> Option<&'w dyn crate::reflect::Reflect> {
        use crate::ecs::reflect::{AppTypeRegistry, ReflectComponent};
        let registry = world.get_resource::<AppTypeRegistry>()?.read();
        let registration = registry.get_with_type_path(type_path)?;
        let component = registration.data::<ReflectComponent>()?.clone();
        drop(registry);
        component.reflect(world.get_entity(node).ok()?)
    }
}
