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
