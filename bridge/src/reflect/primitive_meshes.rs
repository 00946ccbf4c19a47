//! Meshes made from Bevy's primitive shapes, for `{"new": {"Cuboid": {...}}}` handles: the shape
//! is read by reflection over its default, checked against bounds (a shape's size, and the
//! counts that set how many vertices it has), then built by Bevy's own `Mesh::from`.

use bevy::compat::primitives::{
    Annulus, Capsule2d, Capsule3d, Circle, CircularSector, CircularSegment, Cone, ConicalFrustum,
    Cuboid, Cylinder, Ellipse, Plane3d, Rectangle, RegularPolygon, Rhombus, Sphere, Tetrahedron,
    Torus, Triangle2d,
};
use bevy::mesh::Mesh;
use bevy::prelude::World;
use bevy::reflect::{PartialReflect, Reflect, TypeRegistry};
use serde_json::Value;

use crate::reflect::handle_form::PRIMITIVE_NAMES;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values::{self, ValueReader};
use crate::reflect::walk::{Step, walk};

/// Largest size a shape may have along any axis, in world units.
const MAX_EXTENT: f32 = 100_000.0;
/// Counts inside a shape (a regular polygon's sides) are within these.
const COUNTS: std::ops::RangeInclusive<u64> = 3..=1_024;

/// A mesh from `{"<Shape>": value}`, or why not.
pub(crate) fn mesh_from_json<R: ValueReader>(
    world: &World,
    registry: &TypeRegistry,
    given: &Value,
    handles: &mut R,
) -> Result<Mesh, String> {
    let shapes = || format!("one of {}", PRIMITIVE_NAMES.join(", "));
    let Some((name, value)) = given
        .as_object()
        .filter(|object| object.len() == 1)
        .and_then(|object| object.iter().next())
    else {
        return Err(format!(
            "a new mesh is one shape and its value over its default, such as {{\"Cuboid\": {{\"half_size\": [0.5, 0.5, 0.5]}}}}: {}",
            shapes()
        ));
    };
    let short = name.rsplit("::").next().unwrap_or(name);
    if !PRIMITIVE_NAMES.contains(&short) {
        return Err(format!(
            "{name} is not a shape a mesh is made from: {}",
            shapes()
        ));
    }
    let registration = registry
        .get_with_short_type_path(short)
        .or_else(|| registry.get_with_type_path(name))
        .ok_or_else(|| format!("the shape {short} is not registered for reflection in this app"))?;
    let shape = values::concrete_from_json(registration, registry, value, handles)
        .map_err(|error| error.to_string())?;
    WritePolicy::of(world)
        .check_value(world, registration, shape.as_partial_reflect())
        .map_err(|error| error.to_string())?;
    check_bounds(shape.as_partial_reflect())?;
    build(shape.as_ref()).ok_or_else(|| format!("{short} cannot be made into a mesh"))
}

/// Refuses shapes larger than [`MAX_EXTENT`] or with counts outside [`COUNTS`].
fn check_bounds(shape: &dyn PartialReflect) -> Result<(), String> {
    let mut path = String::new();
    walk(
        shape,
        &mut path,
        0,
        &mut |value: &dyn PartialReflect, at: &str, _| {
            if let Some(number) = value.try_downcast_ref::<f32>()
                && number.abs() > MAX_EXTENT
            {
                return Err(format!(
                    "{at} is {number}; shapes are at most {MAX_EXTENT} units"
                ));
            }
            let count = value
                .try_downcast_ref::<u32>()
                .map(|count| u64::from(*count))
                .or_else(|| value.try_downcast_ref::<usize>().map(|count| *count as u64));
            if let Some(count) = count
                && !COUNTS.contains(&count)
            {
                return Err(format!(
                    "{at} is {count}; it is between {} and {}",
                    COUNTS.start(),
                    COUNTS.end()
                ));
            }
            Ok(Step::Descend)
        },
    )
}

/// Bevy's mesh of a shape.
fn build(shape: &dyn Reflect) -> Option<Mesh> {
    macro_rules! shapes {
        ($($shape:ty),* $(,)?) => {
            $(if let Some(shape) = shape.downcast_ref::<$shape>() {
                return Some(Mesh::from(*shape));
            })*
        };
    }
    shapes!(
        Cuboid,
        Sphere,
        Plane3d,
        Cylinder,
        Capsule3d,
        Cone,
        ConicalFrustum,
        Torus,
        Tetrahedron,
        Circle,
        Rectangle,
        Ellipse,
        Annulus,
        Capsule2d,
        RegularPolygon,
        Rhombus,
        Triangle2d,
        CircularSector,
        CircularSegment,
    );
    None
}
