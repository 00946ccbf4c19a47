//! The engine types a generic write may change, and the bounds on their fields.
//!
//! Bevy's own types feed the renderer, the text rasterizer, the sprite slicer and UI layout, which
//! trust their values: a zero texture size is a wgpu validation error that quits the app, a huge
//! font size freezes or panics the rasterizer. So engine-owned types are closed to the generic
//! actions unless they are listed here, and every listed field carries the bound the bridge checks
//! before anything changes. The same table annotates the type's JSON Schema in
//! `inspect.describe_type`, so a model sees a bound before it writes.
//!
//! A field without a rule in a type whose other fields are [`Others::Kept`] keeps its value: a
//! mutation may not reach it, and a whole value (insert, spawn) must carry it unchanged (the
//! current value where there is one, else the type's default, which is what a field left out of a
//! spawn gets).

use bevy::prelude::World;
use bevy::reflect::{PartialReflect, ReflectPath, ReflectRef, TypeRegistry};
use serde_json::{Map, Value, json};

use crate::reflect::walk::{Step, walk};

mod check;
mod rules;
mod schema;

pub(crate) use check::*;
use rules::*;
use schema::*;

/// Whether a type of this path belongs to one of Bevy's crates.
pub(crate) fn is_engine_type(type_path: &str) -> bool {
    type_path
        .split_once("::")
        .is_some_and(|(krate, _)| is_engine_crate(krate))
}

/// Bevy's own crates (0.19's and 0.20's, `bevy_internal`'s): types from them are the engine's,
/// not the game's.
pub(crate) const ENGINE_CRATES: [&str; 57] = [
    "bevy_a11y",
    "bevy_animation",
    "bevy_anti_alias",
    "bevy_app",
    "bevy_asset",
    "bevy_audio",
    "bevy_camera",
    "bevy_camera_controller",
    "bevy_clipboard",
    "bevy_color",
    "bevy_core_pipeline",
    "bevy_curve",
    "bevy_derive",
    "bevy_dev_tools",
    "bevy_diagnostic",
    "bevy_ecs",
    "bevy_extract",
    "bevy_feathers",
    "bevy_gilrs",
    "bevy_gizmos",
    "bevy_gizmos_render",
    "bevy_gltf",
    "bevy_image",
    "bevy_input",
    "bevy_input_focus",
    "bevy_light",
    "bevy_log",
    "bevy_material",
    "bevy_math",
    "bevy_mesh",
    "bevy_pbr",
    "bevy_picking",
    "bevy_platform",
    "bevy_post_process",
    "bevy_ptr",
    "bevy_reflect",
    "bevy_remote",
    "bevy_render",
    "bevy_scene",
    "bevy_shader",
    "bevy_shape",
    "bevy_solari",
    "bevy_sprite",
    "bevy_sprite_render",
    "bevy_state",
    "bevy_tasks",
    "bevy_text",
    "bevy_time",
    "bevy_transform",
    "bevy_ui",
    "bevy_ui_render",
    "bevy_ui_widgets",
    "bevy_utils",
    "bevy_window",
    "bevy_winit",
    "bevy_world_serialization",
    "bevy",
];

/// Whether a crate is one of Bevy's own.
pub(crate) fn is_engine_crate(name: &str) -> bool {
    ENGINE_CRATES.contains(&name)
}

/// An engine type the generic actions may write.
#[derive(Debug)]
pub(crate) struct WritableType {
    /// Its type path; for a generic type, the path up to and including `<`.
    pub type_path: &'static str,
    /// A bound on every number anywhere in the value, beside the field rules.
    pub numbers: Option<Span>,
    /// Rules for named top-level fields (`"0"` for a newtype's field).
    pub fields: &'static [FieldRule],
    /// What fields without a rule may do.
    pub others: Others,
}

/// What fields without a rule may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Others {
    /// Change freely (within [`WritableType::numbers`] and the value checks).
    Open,
    /// Keep their value.
    Kept,
}

/// A rule for one top-level field.
#[derive(Debug)]
pub(crate) struct FieldRule {
    /// The field's name (or index, for a tuple struct).
    pub field: &'static str,
    /// What it may hold.
    pub bound: Bound,
}

/// An inclusive range of numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Span {
    /// The smallest allowed.
    pub min: f64,
    /// The largest allowed.
    pub max: f64,
}

/// What a field may hold.
#[derive(Debug)]
pub(crate) enum Bound {
    /// Anything its type holds (finite numbers, bounded strings: the value checks).
    Any,
    /// Every number inside it lies in the span.
    Within(Span),
    /// It is one of these numbers.
    OneOf(&'static [f64]),
    /// It keeps its value.
    Kept,
    /// A rule on the whole value (it may look at other fields), and the sentence a model reads.
    Rule {
        /// What is allowed, for the schema and the refusal.
        says: &'static str,
        /// Checks the new whole value; the message says what is wrong.
        check: fn(&Written<'_>) -> Result<(), String>,
    },
}

/// A whole value about to be written, with what the rules may look at.
pub(crate) struct Written<'a> {
    /// The new value of the whole type.
    pub new: &'a dyn PartialReflect,
    /// The value it replaces, when there is one.
    pub before: Option<&'a dyn PartialReflect>,
    /// The world, when the value is for it (not for a file).
    pub world: Option<&'a World>,
}

const fn span(min: f64, max: f64) -> Span {
    Span { min, max }
}

const fn rule(field: &'static str, bound: Bound) -> FieldRule {
    FieldRule { field, bound }
}

/// Shadow map sizes: powers of two a GPU renders without strain (wgpu allows up to 8192, but a
/// point light holds six maps: 8192 would take 1.6 GB).
const SHADOW_MAP_SIZES: &[f64] = &[256.0, 512.0, 1024.0, 2048.0, 4096.0];
/// Light intensity (lumens, lux): from darkness to direct sunlight, with room.
const LIGHT_POWER: Span = span(0.0, 1.0e9);
/// Light range and radius, in world units.
const LIGHT_REACH: Span = span(0.0, 1.0e6);
/// Positions and offsets of UI nodes, in logical pixels (or percent).
const LAYOUT: Span = span(-16_384.0, 16_384.0);
/// Sizes of UI nodes, in logical pixels (or percent): never negative.
const SIZE: Span = span(0.0, 16_384.0);
/// Most tiles one sprite may be cut into (Bevy draws each as a quad every frame).
pub(crate) const MAX_SPRITE_TILES: f64 = 10_000.0;
/// The smallest tile stretch: below it a sprite is cut into ever more tiles.
const MIN_STRETCH: f64 = 0.05;

/// An ambient light (the component and the resource).
const AMBIENT_FIELDS: &[FieldRule] = &[
    rule("color", Bound::Any),
    rule("brightness", Bound::Within(LIGHT_POWER)),
];
/// A shadow map resource (point and directional).
const SHADOW_MAP_FIELDS: &[FieldRule] = &[rule("size", Bound::OneOf(SHADOW_MAP_SIZES))];

/// The writable engine types. Read from Bevy 0.19's crates: each bound keeps a value inside what
/// the renderer, the rasterizer and layout accept.
pub(crate) const WRITABLE: &[WritableType] = &[
    WritableType {
        type_path: "bevy_ecs::name::Name",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_transform::components::transform::Transform",
        numbers: Some(span(-1.0e9, 1.0e9)),
        // A zero scale or a rotation that is not a unit quaternion makes a NaN direction, which
        // panics Bevy's camera and light code (`Dir3::new_unchecked`).
        fields: &[
            rule(
                "scale",
                Bound::Rule {
                    says: "every scale component with a magnitude within 0.0001..1000000 (negative mirrors)",
                    check: transform_scale,
                },
            ),
            rule(
                "rotation",
                Bound::Rule {
                    says: "a unit quaternion [x, y, z, w] (length within 0.99..1.01); send all four together",
                    check: transform_rotation,
                },
            ),
        ],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_camera::visibility::Visibility",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_sprite::sprite::Sprite",
        numbers: None,
        fields: &[
            rule("image", Bound::Any),
            rule("color", Bound::Any),
            rule("flip_x", Bound::Any),
            rule("flip_y", Bound::Any),
            rule("custom_size", Bound::Within(span(0.0, 4096.0))),
            rule("rect", Bound::Within(span(0.0, 16_384.0))),
            rule(
                "image_mode",
                Bound::Rule {
                    says: "Auto, Scale, Sliced or Tiled; tile stretch values at least 0.05, slice borders and max_corner_scale within 0..4096, and at most 10000 tiles (counted from the image's size and custom_size)",
                    check: sprite_tiles,
                },
            ),
        ],
        others: Others::Kept,
    },
    // What a mesh entity draws: handles, which the bridge gives only to assets that exist (or
    // load) and are of the right type.
    WritableType {
        type_path: "bevy_mesh::components::Mesh3d",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_mesh::components::Mesh2d",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    // A model: Bevy spawns the world asset (a glTF file's `#Scene0`) as the entity's children, and
    // again whenever the handle changes; the bridge takes them away with the component.
    WritableType {
        type_path: "bevy_world_serialization::components::WorldAssetRoot",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_pbr::mesh_material::MeshMaterial3d<",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_sprite_render::mesh2d::material::MeshMaterial2d<",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    // Materials: what the shaders loop over is bounded (parallax layers and steps); colours,
    // textures (handles), roughness and the rest are free.
    WritableType {
        type_path: "bevy_pbr::pbr_material::StandardMaterial",
        numbers: None,
        fields: &[
            rule("max_parallax_layer_count", Bound::Within(span(1.0, 64.0))),
            rule("parallax_depth_scale", Bound::Within(span(0.0, 1.0))),
            rule("parallax_mapping_method", Bound::Kept),
            rule("depth_bias", Bound::Within(span(-1.0e4, 1.0e4))),
            rule("lightmap_exposure", Bound::Within(span(0.0, 1.0e6))),
            rule("deferred_lighting_pass_id", Bound::Kept),
        ],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_sprite_render::mesh2d::color_material::ColorMaterial",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_sprite::text2d::Text2d",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_ui::widget::text::Text",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_text::text::TextSpan",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_text::text::TextColor",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_text::text::TextFont",
        numbers: None,
        fields: &[
            rule(
                "font_size",
                Bound::Rule {
                    says: "Px within 1..256, Rem within 0.1..16, Vw, Vh, VMin or VMax within 0.1..20 (percent of the viewport)",
                    check: font_size,
                },
            ),
            rule("font", Bound::Any),
            rule("font_smoothing", Bound::Any),
        ],
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_ui::ui_node::BackgroundColor",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_ui::ui_node::BorderColor",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_ui::ui_node::Node",
        numbers: Some(LAYOUT),
        // Sizes, gaps, borders and padding are never negative: a negative node size panics UI
        // layout (a border radius clamped to a negative bound). Positions and margins may be.
        fields: &[
            rule("width", Bound::Within(SIZE)),
            rule("height", Bound::Within(SIZE)),
            rule("min_width", Bound::Within(SIZE)),
            rule("min_height", Bound::Within(SIZE)),
            rule("max_width", Bound::Within(SIZE)),
            rule("max_height", Bound::Within(SIZE)),
            rule("aspect_ratio", Bound::Within(span(0.01, 100.0))),
            rule("padding", Bound::Within(SIZE)),
            rule("border", Bound::Within(SIZE)),
            rule("border_radius", Bound::Within(SIZE)),
            rule("flex_grow", Bound::Within(SIZE)),
            rule("flex_shrink", Bound::Within(SIZE)),
            rule("flex_basis", Bound::Within(SIZE)),
            rule("row_gap", Bound::Within(SIZE)),
            rule("column_gap", Bound::Within(SIZE)),
            rule("overflow_clip_margin", Bound::Within(SIZE)),
            rule("grid_row", Bound::Kept),
            rule("grid_column", Bound::Kept),
            rule("grid_template_rows", Bound::Kept),
            rule("grid_template_columns", Bound::Kept),
            rule("grid_auto_rows", Bound::Kept),
            rule("grid_auto_columns", Bound::Kept),
        ],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_ui::UiScale",
        numbers: Some(span(0.1, 10.0)),
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_camera::camera::Camera",
        numbers: None,
        fields: &[
            rule("is_active", Bound::Any),
            rule("order", Bound::Within(span(-1000.0, 1000.0))),
            rule("clear_color", Bound::Any),
            rule(
                "viewport",
                Bound::Rule {
                    says: "null, or a rectangle inside the camera's render target: physical_size at least 1x1, physical_position + physical_size within the target's size, depth {start, end} with 0 <= start <= end <= 1",
                    check: camera_viewport,
                },
            ),
        ],
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_camera::projection::Projection",
        numbers: None,
        // An enum: the rule is on the whole value.
        fields: &[rule(
            "",
            Bound::Rule {
                says: "Perspective (fov within 0.01..3.1 radians, aspect_ratio within 0.01..100, 0 < near < far <= 1e7) or Orthographic (scale within 0.0001..10000, near < far, scaling sizes within 0.01..100000, viewport_origin within -10..10); Custom cannot be written",
                check: projection,
            },
        )],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_camera::clear_color::ClearColor",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
    WritableType {
        type_path: "bevy_light::point_light::PointLight",
        numbers: None,
        fields: &[
            rule("color", Bound::Any),
            rule("intensity", Bound::Within(LIGHT_POWER)),
            rule("range", Bound::Within(LIGHT_REACH)),
            rule("radius", Bound::Within(LIGHT_REACH)),
            rule("shadow_maps_enabled", Bound::Any),
        ],
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::spot_light::SpotLight",
        numbers: None,
        fields: &[
            rule("color", Bound::Any),
            rule("intensity", Bound::Within(LIGHT_POWER)),
            rule("range", Bound::Within(LIGHT_REACH)),
            rule("radius", Bound::Within(LIGHT_REACH)),
            rule("shadow_maps_enabled", Bound::Any),
            rule(
                "outer_angle",
                Bound::Within(span(0.0, std::f64::consts::FRAC_PI_2)),
            ),
            rule(
                "inner_angle",
                Bound::Within(span(0.0, std::f64::consts::FRAC_PI_2)),
            ),
        ],
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::directional_light::DirectionalLight",
        numbers: None,
        fields: &[
            rule("color", Bound::Any),
            rule("illuminance", Bound::Within(LIGHT_POWER)),
            rule(
                "shadow_maps_enabled",
                Bound::Rule {
                    says: "unchanged, or false on a new light: the bridge writes after Bevy's PostUpdate light systems, and a directional light whose shadows turn on there has no shadow cascades yet, which panics the renderer; the game turns a sun's shadows on",
                    check: directional_shadows,
                },
            ),
        ],
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::ambient_light::AmbientLight",
        numbers: None,
        fields: AMBIENT_FIELDS,
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::ambient_light::GlobalAmbientLight",
        numbers: None,
        fields: AMBIENT_FIELDS,
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::point_light::PointLightShadowMap",
        numbers: None,
        fields: SHADOW_MAP_FIELDS,
        others: Others::Kept,
    },
    WritableType {
        type_path: "bevy_light::directional_light::DirectionalLightShadowMap",
        numbers: None,
        fields: SHADOW_MAP_FIELDS,
        others: Others::Kept,
    },
    WritableType {
        // A state machine's next state: the transition runs its OnExit/OnEnter systems.
        type_path: "bevy_state::state::resources::NextState<",
        numbers: None,
        fields: &[],
        others: Others::Open,
    },
];

/// Where a writable engine component may be added, beyond its field bounds: Bevy builds some
/// kinds of entity only through their own bundles, and some components panic its renderer when
/// they share an entity.
#[derive(Debug)]
pub(crate) enum Placement {
    /// Only onto an entity that already has it (replacing it): the game makes such entities.
    WhereItIs(&'static str),
    /// Not onto an entity with any of these (or together with one in a spawn).
    NotWith(&'static [&'static str], &'static str),
}

const CAMERA: &str = "bevy_camera::camera::Camera";
const POINT_LIGHT: &str = "bevy_light::point_light::PointLight";
const SPOT_LIGHT: &str = "bevy_light::spot_light::SpotLight";
const DIRECTIONAL_LIGHT: &str = "bevy_light::directional_light::DirectionalLight";
/// Bevy's renderer keys a light's views by its entity: a light on a camera's entity, or two kinds
/// of light on one entity, panics it.
const LIGHT_ALONE: &str = "Bevy's renderer panics when a light shares its entity with a camera or another kind of light; spawn the light on an entity of its own";

/// Placement rules, by type path.
const PLACEMENTS: &[(&str, Placement)] = &[
    (
        CAMERA,
        Placement::WhereItIs(
            "a camera is made by the game with Camera2d or Camera3d; change an existing camera's fields instead",
        ),
    ),
    (
        POINT_LIGHT,
        Placement::NotWith(&[CAMERA, SPOT_LIGHT, DIRECTIONAL_LIGHT], LIGHT_ALONE),
    ),
    (
        SPOT_LIGHT,
        Placement::NotWith(&[CAMERA, POINT_LIGHT, DIRECTIONAL_LIGHT], LIGHT_ALONE),
    ),
    (
        DIRECTIONAL_LIGHT,
        Placement::NotWith(&[CAMERA, POINT_LIGHT, SPOT_LIGHT], LIGHT_ALONE),
    ),
];

/// Why a component of `type_path` may not be added where the entity (with what the same call
/// adds) holds the components `has` says it holds; `None` when it may.
pub(crate) fn placement_refusal(type_path: &str, has: &dyn Fn(&str) -> bool) -> Option<String> {
    let (_, placement) = PLACEMENTS.iter().find(|(path, _)| *path == type_path)?;
    match placement {
        Placement::WhereItIs(why) => (!has(type_path))
            .then(|| format!("it can only replace the one an entity already has: {why}")),
        Placement::NotWith(others, why) => others
            .iter()
            .find(|other| has(other))
            .map(|other| format!("it cannot share an entity with {other}: {why}")),
    }
}

/// Whether a component of this path is placed by a rule that looks at what the entity already
/// holds (as opposed to what a spawn adds together with it).
pub(crate) fn placed_where_it_is(type_path: &str) -> bool {
    PLACEMENTS
        .iter()
        .any(|(path, placement)| *path == type_path && matches!(placement, Placement::WhereItIs(_)))
}

/// The entry for this type path, if the type is writable.
pub(crate) fn writable(type_path: &str) -> Option<&'static WritableType> {
    WRITABLE.iter().find(|entry| {
        if entry.type_path.ends_with('<') {
            type_path.starts_with(entry.type_path)
        } else {
            type_path == entry.type_path
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec3;
    use bevy::prelude::{Name, Transform};
    use bevy::reflect::GetTypeRegistration;

    #[test]
    fn engine_types_are_those_of_bevys_crates() {
        assert!(is_engine_type(
            "bevy_transform::components::transform::Transform"
        ));
        assert!(is_engine_type("bevy_ui::ui_node::Node"));
        assert!(!is_engine_type("bevy_mcp_sandbox::Team"));
        assert!(!is_engine_type("bevy_rapier3d::dynamics::RigidBody"));
        assert!(!is_engine_type("my_game::Player"));
        assert!(writable("bevy_state::state::resources::NextState<my_game::Phase>").is_some());
        assert!(writable("bevy_camera::components::Camera3d").is_none());
    }

    #[test]
    fn bounds_refuse_out_of_range_numbers_and_kept_fields() {
        let transform = writable(Transform::get_type_registration().type_info().type_path())
            .unwrap_or_else(|| panic!("Transform is writable"));
        let far = Transform::from_translation(Vec3::new(0.0, 2.0e9, 0.0));
        let written = Written {
            new: &far,
            before: None,
            world: None,
        };
        let refused = transform.check(&written, None, None);
        assert!(
            refused
                .as_ref()
                .is_err_and(|message| message.contains("at .translation.y")),
            "{refused:?}"
        );
        let near = Transform::from_xyz(1.0, 2.0, 3.0);
        let written = Written {
            new: &near,
            before: None,
            world: None,
        };
        assert!(transform.check(&written, None, None).is_ok());
        let name = writable("bevy_ecs::name::Name").unwrap_or_else(|| panic!("Name is writable"));
        let written = Written {
            new: &Name::new("x"),
            before: None,
            world: None,
        };
        assert!(name.check(&written, None, None).is_ok());
    }

    #[test]
    fn paths_reach_their_top_field() {
        assert_eq!(top_field(".font_size.Px"), "font_size");
        assert_eq!(top_field(".0"), "0");
        assert_eq!(top_field("custom_size[0]"), "custom_size");
        assert_eq!(top_field(""), "");
        let node = writable("bevy_ui::ui_node::Node").unwrap_or_else(|| panic!("Node"));
        assert!(node.check_path(".width").is_ok());
        assert!(
            node.check_path(".grid_template_rows[0]")
                .is_err_and(|message| message.contains("grid_template_rows"))
        );
    }

    #[test]
    fn the_schema_shows_number_bounds_without_touching_shared_definitions() {
        let mut schema = json!({
            "$ref": "#/$defs/T",
            "$defs": {
                "T": {"type": "object", "properties": {
                    "a": {"$ref": "#/$defs/V"},
                    "b": {"type": "number"},
                }},
                "V": {"type": "object", "properties": {"x": {"type": "number"}}},
            }
        });
        const FIELDS: &[FieldRule] = &[
            rule("a", Bound::Within(span(0.0, 5.0))),
            rule("b", Bound::Kept),
        ];
        let entry = WritableType {
            type_path: "t",
            numbers: None,
            fields: FIELDS,
            others: Others::Open,
        };
        entry.annotate(&mut schema);
        assert_eq!(
            schema.pointer("/$defs/T/properties/a/properties/x/maximum"),
            Some(&json!(5.0))
        );
        assert_eq!(schema.pointer("/$defs/V/properties/x/maximum"), None);
        assert_eq!(
            schema.pointer("/$defs/T/properties/b/readOnly"),
            Some(&json!(true))
        );
    }
}
