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

impl WritableType {
    fn rule_for(&self, field: &str) -> Option<&'static FieldRule> {
        self.fields.iter().find(|rule| rule.field == field)
    }

    /// Whether a write may reach this top-level field.
    fn field_writable(&self, field: &str) -> bool {
        match self.rule_for(field) {
            Some(rule) => !matches!(rule.bound, Bound::Kept),
            None => self.others == Others::Open,
        }
    }

    /// The top-level fields a write may reach, for messages.
    fn writable_fields(&self) -> Vec<&'static str> {
        self.fields
            .iter()
            .filter(|rule| !matches!(rule.bound, Bound::Kept) && !rule.field.is_empty())
            .map(|rule| rule.field)
            .collect()
    }

    /// Refuses a mutation at `path` (a reflect path from the root) that reaches a kept field.
    pub(crate) fn check_path(&self, path: &str) -> Result<(), String> {
        let field = top_field(path);
        if field.is_empty() || self.field_writable(field) {
            return Ok(());
        }
        Err(self.kept_message(field))
    }

    fn kept_message(&self, field: &str) -> String {
        let writable = self.writable_fields();
        if self.others == Others::Open {
            format!("field `{field}` is Bevy's to manage and keeps its value")
        } else {
            format!(
                "field `{field}` is Bevy's to manage and keeps its value; the writable fields are: {}",
                writable.join(", ")
            )
        }
    }

    /// Checks a whole new value: every rule, every number bound, and that kept fields keep their
    /// value in `reference` (what the value replaces, or the type's default; none for a value
    /// taken whole).
    pub(crate) fn check(
        &self,
        written: &Written<'_>,
        reference: Option<&dyn PartialReflect>,
        registry: Option<&TypeRegistry>,
    ) -> Result<(), String> {
        if let Some(bound) = self.numbers {
            within(written.new, bound, &mut String::new())?;
        }
        for rule in self.fields {
            let field = if rule.field.is_empty() {
                Some(written.new)
            } else {
                field_of(written.new, rule.field)
            };
            let Some(field) = field else { continue };
            let mut at = format!(".{}", rule.field);
            match &rule.bound {
                Bound::Any | Bound::Kept => {}
                Bound::Within(bound) => within(field, *bound, &mut at)?,
                Bound::OneOf(allowed) => {
                    let mut found = Vec::new();
                    numbers(field, &mut at, &mut found);
                    for (number, path) in found {
                        if !allowed.contains(&number) {
                            return Err(format!(
                                "at {path}: {number} is not allowed; use one of {}",
                                list(allowed)
                            ));
                        }
                    }
                }
                Bound::Rule { says, check } => {
                    check(written).map_err(|reason| format!("{reason} (allowed: {says})"))?;
                }
            }
        }
        if let Some(reference) = reference {
            for field in kept_fields(self, written.new) {
                let (Some(new), Some(old)) =
                    (field_of(written.new, &field), field_of(reference, &field))
                else {
                    continue;
                };
                if !same(new, old, registry) {
                    return Err(self.kept_message(&field));
                }
            }
        }
        Ok(())
    }

    /// What a write may change, as `inspect.describe_type` shows it.
    pub(crate) fn summary(&self) -> Value {
        let rules: Map<String, Value> = self
            .fields
            .iter()
            .filter_map(|rule| {
                let shown = match &rule.bound {
                    Bound::Any | Bound::Kept => return None,
                    Bound::Within(bound) => json!({"minimum": bound.min, "maximum": bound.max}),
                    Bound::OneOf(allowed) => json!({"enum": allowed.to_vec()}),
                    Bound::Rule { says, .. } => json!(says),
                };
                let name = if rule.field.is_empty() {
                    "(whole value)"
                } else {
                    rule.field
                };
                Some((name.to_owned(), shown))
            })
            .collect();
        let kept: Vec<&str> = self
            .fields
            .iter()
            .filter(|rule| matches!(rule.bound, Bound::Kept))
            .map(|rule| rule.field)
            .collect();
        let mut summary = json!({
            "fields": match self.others {
                Others::Open => json!("all but the kept ones"),
                Others::Kept => json!(self.writable_fields()),
            },
            "rules": rules,
        });
        if !kept.is_empty() || self.others == Others::Kept {
            summary["kept"] = match self.others {
                Others::Open => json!(kept),
                Others::Kept => json!("every field not listed in fields keeps its value"),
            };
        }
        if let Some(bound) = self.numbers {
            summary["numbers"] = json!({"minimum": bound.min, "maximum": bound.max});
        }
        summary
    }

    /// The type's schema with the rules shown: `minimum`/`maximum` on bounded numbers, `enum` for
    /// allowed sets, `readOnly` on kept fields, and a description of each rule.
    pub(crate) fn annotate(&self, schema: &mut Value) {
        let Value::Object(document) = schema else {
            return;
        };
        // The root body is taken out of `$defs` while it is annotated: bounds inline the
        // definitions they reach, so one shared with an unbounded field stays as it was.
        let mut defs = document.remove("$defs").unwrap_or(Value::Null);
        let root_key = document
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/$defs/"))
            .map(str::to_owned);
        match &root_key {
            Some(key) => {
                let Some(mut root) = defs.as_object_mut().and_then(|defs| defs.remove(key)) else {
                    document.insert("$defs".to_owned(), defs);
                    return;
                };
                self.annotate_body(&mut root, &mut defs);
                if let Value::Object(map) = &mut defs {
                    map.insert(key.clone(), root);
                }
            }
            None => {
                let mut root = Value::Object(std::mem::take(document));
                self.annotate_body(&mut root, &mut defs);
                if let Value::Object(root) = root {
                    *document = root;
                }
            }
        }
        if !defs.is_null() {
            document.insert("$defs".to_owned(), defs);
        }
    }

    fn annotate_body(&self, root: &mut Value, defs: &mut Value) {
        let mut notes = Vec::new();
        if let Some(bound) = self.numbers {
            notes.push(format!(
                "every number within {}..{}",
                show(bound.min),
                show(bound.max)
            ));
            constrain_numbers(root, defs, bound, 0);
        }
        let properties: Vec<String> = root
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        for name in properties {
            let Some(property) = root.pointer_mut(&format!("/properties/{name}")) else {
                continue;
            };
            match self.rule_for(&name).map(|rule| &rule.bound) {
                Some(Bound::Within(bound)) => constrain_numbers(property, defs, *bound, 0),
                Some(Bound::OneOf(allowed)) => {
                    if let Value::Object(property) = property {
                        property.insert("enum".to_owned(), json!(allowed.to_vec()));
                    }
                }
                Some(Bound::Rule { says, .. }) => describe(property, says),
                Some(Bound::Kept) => keep(property),
                Some(Bound::Any) => {}
                None if self.others == Others::Kept => keep(property),
                None => {}
            }
        }
        if let Some(Bound::Rule { says, .. }) = self.rule_for("").map(|rule| &rule.bound) {
            notes.push((*says).to_owned());
        }
        if !notes.is_empty() {
            describe(root, &notes.join("; "));
        }
    }
}

/// The first segment of a reflect path (`.font_size.Px` -> `font_size`, `.0` -> `0`).
fn top_field(path: &str) -> &str {
    let path = path.trim_start_matches('.');
    let end = path.find(['.', '[', '#']).unwrap_or(path.len());
    &path[..end]
}

/// A top-level field of a struct or tuple struct value.
fn field_of<'v>(value: &'v dyn PartialReflect, field: &str) -> Option<&'v dyn PartialReflect> {
    match value.reflect_ref() {
        ReflectRef::Struct(value) => value.field(field),
        ReflectRef::TupleStruct(value) => value.field(field.parse().ok()?),
        _ => None,
    }
}

/// The names of the top-level fields that keep their value.
fn kept_fields(entry: &WritableType, value: &dyn PartialReflect) -> Vec<String> {
    let names: Vec<String> = match value.reflect_ref() {
        ReflectRef::Struct(value) => (0..value.field_len())
            .filter_map(|index| value.name_at(index).map(str::to_owned))
            .collect(),
        ReflectRef::TupleStruct(value) => (0..value.field_len()).map(|i| i.to_string()).collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|name| !entry.field_writable(name))
        .collect()
}

/// Whether two values are the same: reflection's equality, else their JSON.
fn same(a: &dyn PartialReflect, b: &dyn PartialReflect, registry: Option<&TypeRegistry>) -> bool {
    if let Some(equal) = a.reflect_partial_eq(b) {
        return equal;
    }
    let Some(registry) = registry else {
        return false;
    };
    match (
        crate::reflect::json::reflect_to_json(a, registry),
        crate::reflect::json::reflect_to_json(b, registry),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Every number inside `value` with its path (appended to `path`).
fn numbers(value: &dyn PartialReflect, path: &mut String, out: &mut Vec<(f64, String)>) {
    let walked: Result<(), std::convert::Infallible> =
        walk(value, path, 0, &mut |value, path, _| {
            if let Some(number) = number_of(value) {
                out.push((number, path.to_owned()));
            }
            Ok(Step::Descend)
        });
    let Ok(()) = walked;
}

/// A reflected number as f64.
pub(crate) fn number_of(value: &dyn PartialReflect) -> Option<f64> {
    macro_rules! as_f64 {
        ($($kind:ty),*) => {
            $(if let Some(number) = value.try_downcast_ref::<$kind>() {
                return Some(*number as f64);
            })*
        };
    }
    as_f64!(
        f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, u128, i128
    );
    None
}

/// Refuses a number of `value` outside `bound`.
fn within(value: &dyn PartialReflect, bound: Span, path: &mut String) -> Result<(), String> {
    let mut found = Vec::new();
    numbers(value, path, &mut found);
    for (number, at) in found {
        if !(bound.min..=bound.max).contains(&number) {
            let at = if at.is_empty() {
                "the value".to_owned()
            } else {
                format!("at {at}")
            };
            return Err(format!(
                "{at}: {} is outside {}..{}",
                show(number),
                show(bound.min),
                show(bound.max)
            ));
        }
    }
    Ok(())
}

fn show(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

fn list(numbers: &[f64]) -> String {
    numbers
        .iter()
        .map(|n| show(*n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The variant name and its first field's number, for an enum of one-number variants.
fn variant_number(value: &dyn PartialReflect) -> Option<(&str, Option<f64>)> {
    let ReflectRef::Enum(value) = value.reflect_ref() else {
        return None;
    };
    let number = value.field_at(0).and_then(number_of);
    Some((value.variant_name(), number))
}

/// The value at a reflect path inside `value`.
fn at<'v>(value: &'v dyn PartialReflect, path: &str) -> Option<&'v dyn PartialReflect> {
    path.reflect_element(value).ok()
}

/// A numeric field by reflect path, as f64.
fn number_at(value: &dyn PartialReflect, path: &str) -> Option<f64> {
    at(value, path).and_then(number_of)
}

fn font_size(written: &Written<'_>) -> Result<(), String> {
    let Some(size) = field_of(written.new, "font_size") else {
        return Ok(());
    };
    let Some((variant, Some(number))) = variant_number(size) else {
        return Err("font_size is not a size of one number".to_owned());
    };
    let (min, max) = match variant {
        "Px" => (1.0, 256.0),
        "Rem" => (0.1, 16.0),
        "Vw" | "Vh" | "VMin" | "VMax" => (0.1, 20.0),
        other => return Err(format!("font_size {other} is not a known kind of size")),
    };
    if (min..=max).contains(&number) {
        Ok(())
    } else {
        Err(format!(
            "at .font_size: {variant}({}) is outside {}..{}",
            show(number),
            show(min),
            show(max)
        ))
    }
}

fn transform_scale(written: &Written<'_>) -> Result<(), String> {
    let Some(scale) = field_of(written.new, "scale") else {
        return Ok(());
    };
    let mut found = Vec::new();
    numbers(scale, &mut ".scale".to_owned(), &mut found);
    for (number, at) in found {
        if !(1e-4..=1e6).contains(&number.abs()) {
            return Err(format!(
                "at {at}: a scale of {} collapses or explodes the entity",
                show(number)
            ));
        }
    }
    Ok(())
}

fn transform_rotation(written: &Written<'_>) -> Result<(), String> {
    let Some(rotation) = field_of(written.new, "rotation") else {
        return Ok(());
    };
    let mut found = Vec::new();
    numbers(rotation, &mut ".rotation".to_owned(), &mut found);
    let length = found
        .iter()
        .map(|(number, _)| number * number)
        .sum::<f64>()
        .sqrt();
    if (0.99..=1.01).contains(&length) {
        Ok(())
    } else {
        Err(format!(
            "at .rotation: the quaternion's length is {length:.4}, not 1"
        ))
    }
}

fn directional_shadows(written: &Written<'_>) -> Result<(), String> {
    let flag = |value: &dyn PartialReflect| {
        field_of(value, "shadow_maps_enabled")
            .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
    };
    let now = flag(written.new).unwrap_or(false);
    let before = written.before.and_then(flag).unwrap_or(false);
    if now && !before {
        Err("shadow_maps_enabled cannot turn on through the bridge".to_owned())
    } else {
        Ok(())
    }
}

fn projection(written: &Written<'_>) -> Result<(), String> {
    let ReflectRef::Enum(value) = written.new.reflect_ref() else {
        return Err("a projection is an enum".to_owned());
    };
    let Some(inner) = value.field_at(0) else {
        return Err("a projection carries its settings".to_owned());
    };
    let check = |path: &str, min: f64, max: f64| -> Result<f64, String> {
        let number = number_at(inner, path).ok_or_else(|| format!("{path} is missing"))?;
        if (min..=max).contains(&number) {
            Ok(number)
        } else {
            Err(format!(
                "at {path}: {} is outside {}..{}",
                show(number),
                show(min),
                show(max)
            ))
        }
    };
    match value.variant_name() {
        "Perspective" => {
            check(".fov", 0.01, 3.1)?;
            check(".aspect_ratio", 0.01, 100.0)?;
            let near = check(".near", 1e-6, 1e7)?;
            let far = check(".far", 1e-6, 1e7)?;
            if near >= far {
                return Err(format!(
                    "near ({}) must be below far ({})",
                    show(near),
                    show(far)
                ));
            }
        }
        "Orthographic" => {
            check(".scale", 1e-4, 1e4)?;
            let near = check(".near", -1e7, 1e7)?;
            let far = check(".far", -1e7, 1e7)?;
            if near >= far {
                return Err(format!(
                    "near ({}) must be below far ({})",
                    show(near),
                    show(far)
                ));
            }
            if let Some(mode) = at(inner, ".scaling_mode") {
                let mut found = Vec::new();
                numbers(mode, &mut ".scaling_mode".to_owned(), &mut found);
                for (number, at) in found {
                    if !(0.01..=100_000.0).contains(&number) {
                        return Err(format!("at {at}: {} is outside 0.01..100000", show(number)));
                    }
                }
            }
            within(
                at(inner, ".viewport_origin").ok_or_else(|| "a field is missing".to_owned())?,
                span(-10.0, 10.0),
                &mut ".viewport_origin".to_owned(),
            )?;
        }
        other => return Err(format!("a {other} projection cannot be written")),
    }
    Ok(())
}

fn camera_viewport(written: &Written<'_>) -> Result<(), String> {
    let Some(viewport) = field_of(written.new, "viewport") else {
        return Ok(());
    };
    let ReflectRef::Enum(option) = viewport.reflect_ref() else {
        return Ok(());
    };
    let Some(rect) = option.field_at(0) else {
        return Ok(()); // None: the whole target.
    };
    let get =
        |path: &str| number_at(rect, path).ok_or_else(|| format!("viewport{path} is missing"));
    let (x, y) = (get(".physical_position.x")?, get(".physical_position.y")?);
    let (width, height) = (get(".physical_size.x")?, get(".physical_size.y")?);
    if width < 1.0 || height < 1.0 {
        return Err(format!(
            "viewport physical_size {}x{} is empty",
            show(width),
            show(height)
        ));
    }
    let depth =
        at(rect, ".depth").and_then(|depth| depth.try_downcast_ref::<std::ops::Range<f32>>());
    if let Some(depth) = depth
        && !(0.0 <= depth.start && depth.start <= depth.end && depth.end <= 1.0)
    {
        return Err(format!(
            "viewport depth {}..{} is not within 0..1",
            depth.start, depth.end
        ));
    }
    let target = written.before.and_then(|before| {
        let target = at(before, ".computed.target_info")?;
        let ReflectRef::Enum(target) = target.reflect_ref() else {
            return None;
        };
        let info = target.field_at(0)?;
        Some((
            number_at(info, ".physical_size.x")?,
            number_at(info, ".physical_size.y")?,
        ))
    });
    let Some((target_width, target_height)) = target else {
        return Err("the camera has no render target size yet (it has not rendered a frame); set its viewport after its first frame".to_owned());
    };
    if x + width > target_width || y + height > target_height {
        return Err(format!(
            "viewport {}x{} at ({}, {}) does not fit the camera's {}x{} target",
            show(width),
            show(height),
            show(x),
            show(y),
            show(target_width),
            show(target_height)
        ));
    }
    Ok(())
}

/// The size of the image a handle names, in pixels, when the world can tell: with the render
/// feature, which knows Bevy's `Image`.
#[cfg(feature = "render")]
fn image_size(world: &World, handle: &dyn PartialReflect) -> Option<(f64, f64)> {
    use bevy::asset::{Assets, Handle};
    use bevy::image::Image;
    let handle = handle.try_downcast_ref::<Handle<Image>>()?;
    let size = world.get_resource::<Assets<Image>>()?.get(handle)?.size();
    Some((f64::from(size.x), f64::from(size.y)))
}

#[cfg(not(feature = "render"))]
fn image_size(_world: &World, _handle: &dyn PartialReflect) -> Option<(f64, f64)> {
    None
}

fn sprite_tiles(written: &Written<'_>) -> Result<(), String> {
    let sprite = written.new;
    let Some(mode) = field_of(sprite, "image_mode") else {
        return Ok(());
    };
    let ReflectRef::Enum(mode) = mode.reflect_ref() else {
        return Ok(());
    };
    // The tile's source rectangle: the sprite's rect, else the image (an atlas cell may be as
    // small as a pixel, so a sprite in an atlas counts one-pixel tiles).
    let rect = at(sprite, ".rect").and_then(|rect| match rect.reflect_ref() {
        ReflectRef::Enum(option) => option.field_at(0).and_then(|rect| {
            let width = number_at(rect, ".max.x")? - number_at(rect, ".min.x")?;
            let height = number_at(rect, ".max.y")? - number_at(rect, ".min.y")?;
            Some((width.abs(), height.abs()))
        }),
        _ => None,
    });
    let in_atlas = at(sprite, ".texture_atlas")
        .is_some_and(|atlas| matches!(atlas.reflect_ref(), ReflectRef::Enum(option) if option.variant_name() == "Some"));
    let image = match (rect, in_atlas) {
        (Some(rect), _) => Some(rect),
        (None, true) => None,
        (None, false) => written
            .world
            .and_then(|world| image_size(world, at(sprite, ".image")?)),
    };
    let custom = at(sprite, ".custom_size").and_then(|size| match size.reflect_ref() {
        ReflectRef::Enum(option) => option
            .field_at(0)
            .and_then(|size| Some((number_at(size, ".x")?, number_at(size, ".y")?))),
        _ => None,
    });
    // Drawn size: the custom size, else the source rectangle (unknown: one pixel, then the
    // drawn size is the source's and each axis holds 1 / stretch tiles).
    let source = image.unwrap_or((1.0, 1.0));
    let drawn = custom.unwrap_or(source);
    let tiles = |stretch: f64, source: (f64, f64)| -> f64 {
        let tile_x = (source.0 * stretch).max(1.0);
        let tile_y = (source.1 * stretch).max(1.0);
        (drawn.0 / tile_x).ceil().max(1.0) * (drawn.1 / tile_y).ceil().max(1.0)
    };
    let stretch_at = |value: &dyn PartialReflect, at: &str| -> Result<f64, String> {
        let stretch = number_at(value, ".stretch_value")
            .ok_or_else(|| format!("{at}.stretch_value is missing"))?;
        if stretch < MIN_STRETCH {
            return Err(format!(
                "at {at}.stretch_value: {} is below {MIN_STRETCH}",
                show(stretch)
            ));
        }
        if stretch > 100.0 {
            return Err(format!(
                "at {at}.stretch_value: {} is above 100",
                show(stretch)
            ));
        }
        Ok(stretch)
    };
    let count = match mode.variant_name() {
        "Auto" | "Scale" => return Ok(()),
        "Tiled" => {
            let stretch = stretch_at(
                at(sprite, ".image_mode").ok_or_else(|| "a field is missing".to_owned())?,
                ".image_mode",
            )?;
            let tile_x = mode
                .field("tile_x")
                .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
                .unwrap_or(true);
            let tile_y = mode
                .field("tile_y")
                .and_then(|flag| flag.try_downcast_ref::<bool>().copied())
                .unwrap_or(true);
            let all = tiles(stretch, source);
            match (tile_x, tile_y) {
                (false, false) => 1.0,
                (true, true) => all,
                // One axis: the count along it alone.
                (true, false) => (drawn.0 / (source.0 * stretch).max(1.0)).ceil().max(1.0),
                (false, true) => (drawn.1 / (source.1 * stretch).max(1.0)).ceil().max(1.0),
            }
        }
        "Sliced" => {
            let Some(slicer) = mode.field_at(0) else {
                return Ok(());
            };
            let mut borders = Vec::new();
            if let Some(border) = at(slicer, ".border") {
                numbers(border, &mut ".border".to_owned(), &mut borders);
            }
            for (number, at) in &borders {
                if !(0.0..=4096.0).contains(number) {
                    return Err(format!(
                        "at .image_mode.0{at}: {} is outside 0..4096",
                        show(*number)
                    ));
                }
            }
            let corner = number_at(slicer, ".max_corner_scale").unwrap_or(1.0);
            if !(0.0..=4096.0).contains(&corner) {
                return Err(format!(
                    "at .image_mode.0.max_corner_scale: {} is outside 0..4096",
                    show(corner)
                ));
            }
            // The center and sides are cut from what the borders leave of the source.
            let border_sum: f64 = borders.iter().map(|(number, _)| number).sum();
            let inner = (
                (source.0 - border_sum / 2.0).max(1.0),
                (source.1 - border_sum / 2.0).max(1.0),
            );
            let mut count = 9.0;
            for side in [".center_scale_mode", ".sides_scale_mode"] {
                let Some(scale) = at(slicer, side) else {
                    continue;
                };
                if matches!(scale.reflect_ref(), ReflectRef::Enum(mode) if mode.variant_name() == "Tile")
                {
                    let stretch = stretch_at(scale, &format!(".image_mode.0{side}"))?;
                    count += 4.0 * tiles(stretch, inner);
                }
            }
            count
        }
        _ => return Ok(()),
    };
    if count > MAX_SPRITE_TILES {
        let assumed = if image.is_none() {
            " (the bridge cannot see this image's size, so it counts one-pixel tiles)"
        } else {
            ""
        };
        return Err(format!(
            "this image mode cuts the sprite into about {} tiles, over {}{assumed}; use a larger stretch_value or a smaller custom_size",
            show(count.round()),
            show(MAX_SPRITE_TILES)
        ));
    }
    Ok(())
}

/// Adds `minimum`/`maximum` to every number in `schema`, inlining definitions it refers to (so a
/// definition shared with an unbounded field stays unbounded). `defs` is the document's `$defs`.
fn constrain_numbers(schema: &mut Value, defs: &mut Value, bound: Span, depth: usize) {
    if depth > 8 {
        return;
    }
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(key) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .map(str::to_owned)
        && let Some(body) = defs.get(&key).cloned()
    {
        object.remove("$ref");
        if let Value::Object(body) = body {
            for (name, value) in body {
                object.entry(name).or_insert(value);
            }
        }
    }
    let is_number = matches!(
        object.get("type").and_then(Value::as_str),
        Some("number" | "integer")
    );
    if is_number {
        bounded(object, bound);
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = object.get_mut(key) {
            for item in items {
                constrain_numbers(item, defs, bound, depth + 1);
            }
        }
    }
    for key in ["properties"] {
        if let Some(Value::Object(properties)) = object.get_mut(key) {
            for (_, property) in properties.iter_mut() {
                constrain_numbers(property, defs, bound, depth + 1);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(item) = object.get_mut(key) {
            constrain_numbers(item, defs, bound, depth + 1);
        }
    }
}

fn bounded(object: &mut Map<String, Value>, bound: Span) {
    let tighter_min = object
        .get("minimum")
        .and_then(Value::as_f64)
        .map_or(bound.min, |min| min.max(bound.min));
    let tighter_max = object
        .get("maximum")
        .and_then(Value::as_f64)
        .map_or(bound.max, |max| max.min(bound.max));
    object.insert("minimum".to_owned(), json!(tighter_min));
    object.insert("maximum".to_owned(), json!(tighter_max));
}

fn describe(schema: &mut Value, says: &str) {
    if let Value::Object(object) = schema {
        let text = match object.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own} Allowed: {says}."),
            None => format!("Allowed: {says}."),
        };
        object.insert("description".to_owned(), json!(text));
    }
}

fn keep(schema: &mut Value) {
    if let Value::Object(object) = schema {
        object.insert("readOnly".to_owned(), json!(true));
    }
    describe(
        schema,
        "nothing new: Bevy manages this field, so a write keeps its value",
    );
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
