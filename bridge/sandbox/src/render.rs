//! The sandbox drawn offscreen (`bevy-mcp --render`): a 2D camera renders the demo world into an
//! image, so `view.screenshot` works on a server without a display, on a software Vulkan driver
//! when there is no GPU.
//!
//! Every named entity with a transform is drawn as a one-unit square in its team's colour. The
//! colours are exact sRGB values and the camera neither dithers nor multisamples, so a test can
//! check a pixel where a sprite is projected.

use bevy::app::{App, Plugin, PluginGroup, PluginGroupBuilder, Startup, Update};
use bevy::asset::{AssetPlugin, Assets};
use bevy::camera::{Camera2d, OrthographicProjection, Projection, RenderTarget};
use bevy::color::Color;
use bevy::core_pipeline::tonemapping::DebandDither;
use bevy::image::Image;
use bevy::log::LogPlugin;
use bevy::math::Vec2;
use bevy::prelude::{
    Added, ClearColor, Commands, Entity, Name, Query, ResMut, Transform, With, Without,
};
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::Msaa;
use bevy::sprite::Sprite;
use bevy::window::{ExitCondition, WindowPlugin};
use bevy::winit::WinitPlugin;

use crate::{ASSET_FOLDER, Team};

/// Width of the offscreen view in pixels.
pub const VIEW_WIDTH: u32 = 640;
/// Height of the offscreen view in pixels.
pub const VIEW_HEIGHT: u32 = 360;
/// Pixels per world unit: the view shows 32 x 18 units around the origin.
pub const PIXELS_PER_UNIT: f32 = 20.0;
/// The name of the sandbox's camera.
pub const CAMERA_NAME: &str = "MainCamera";

/// The blue team's colour, as the screenshot shows it (sRGB bytes).
pub const BLUE_PIXEL: [u8; 3] = [40, 110, 255];
/// The red team's colour.
pub const RED_PIXEL: [u8; 3] = [230, 40, 40];
/// The colour of entities of no team.
pub const NEUTRAL_PIXEL: [u8; 3] = [200, 200, 200];
/// The background.
pub const BACKGROUND_PIXEL: [u8; 3] = [16, 16, 24];

fn color([red, green, blue]: [u8; 3]) -> Color {
    Color::srgb_u8(red, green, blue)
}

/// Where a point of the world is in the offscreen view, in pixels from the top left.
pub fn pixel_of(x: f32, y: f32) -> (u32, u32) {
    let column = VIEW_WIDTH as f32 / 2.0 + x * PIXELS_PER_UNIT;
    let row = VIEW_HEIGHT as f32 / 2.0 - y * PIXELS_PER_UNIT;
    // Points of the sandbox lie inside the view; the casts only drop the fraction.
    (column.max(0.0) as u32, row.max(0.0) as u32)
}

/// Asks the system for a GPU adapter the way Bevy's renderer will (`WGPU_BACKEND` and friends
/// honoured). Bevy panics in a background task when there is none; asking first turns that into
/// a message. Returns the adapter's name.
pub fn probe_adapter() -> Result<String, String> {
    bevy::tasks::block_on(bevy_mcp_gpu_probe::adapter_name())
}

/// Bevy's default plugins for drawing offscreen: the renderer without winit and without a
/// window; the sandbox's asset folder; the log layer given (the bridge's log capture).
pub fn offscreen_plugins(log: LogPlugin) -> PluginGroupBuilder {
    bevy::DefaultPlugins
        .build()
        .disable::<WinitPlugin>()
        // The sandbox stops on Ctrl-C through its own handler (it wakes the runner).
        .disable::<bevy::app::TerminalCtrlCHandlerPlugin>()
        .set(WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            close_when_requested: false,
            ..WindowPlugin::default()
        })
        .set(AssetPlugin {
            file_path: ASSET_FOLDER.to_owned(),
            watch_for_changes_override: Some(false),
            ..AssetPlugin::default()
        })
        .set(log)
}

/// The offscreen camera and the sprites of the demo world.
#[derive(Debug, Default)]
pub struct OffscreenViewPlugin;

impl Plugin for OffscreenViewPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ClearColor(color(BACKGROUND_PIXEL)))
            .add_systems(Startup, spawn_offscreen_camera)
            .add_systems(Update, draw_named_entities);
    }
}

fn spawn_offscreen_camera(mut commands: Commands, mut images: ResMut<Assets<Image>>) {
    let target = images.add(Image::new_target_texture(
        VIEW_WIDTH,
        VIEW_HEIGHT,
        TextureFormat::Rgba8UnormSrgb,
        None,
    ));
    commands.spawn((
        Name::new(CAMERA_NAME),
        Camera2d,
        RenderTarget::Image(target.into()),
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / PIXELS_PER_UNIT,
            ..OrthographicProjection::default_2d()
        }),
        // Exact colours: no dithering, no blended edges.
        DebandDither::Disabled,
        Msaa::Off,
    ));
}

/// Named entities with a place in the world that have no sprite yet.
type Undrawn = (Added<Name>, With<Transform>, Without<Sprite>);

/// Gives every newly named entity with a transform a one-unit square in its team's colour, so
/// what an agent spawns shows up too.
fn draw_named_entities(
    mut commands: Commands,
    named: Query<(Entity, Option<&Team>), Undrawn>,
    cameras: Query<(), With<Camera2d>>,
) {
    for (entity, team) in &named {
        if cameras.contains(entity) {
            continue;
        }
        let pixel = match team {
            Some(Team::Blue) => BLUE_PIXEL,
            Some(Team::Red) => RED_PIXEL,
            Some(Team::Neutral) | None => NEUTRAL_PIXEL,
        };
        commands.entity(entity).insert(Sprite {
            color: color(pixel),
            custom_size: Some(Vec2::ONE),
            ..Sprite::default()
        });
    }
}

/// Name of the showcase's 3D camera.
pub const CAMERA_3D_NAME: &str = "Camera3d";

/// What real games put on screen, for the tests of generic writes to engine types: sprites
/// (plain, sliced and tiled, from an image), 2D text, a UI panel with a label, and a 3D scene
/// (meshes, a standard material, a point and a directional light with shadows) seen by a 3D
/// camera. Both cameras draw offscreen; add it beside [`OffscreenViewPlugin`].
#[derive(Debug, Default)]
pub struct EngineShowcasePlugin;

impl Plugin for EngineShowcasePlugin {
    fn build(&self, app: &mut App) {
        // Small shadow maps: the software driver draws every texel on the CPU.
        app.insert_resource(bevy::light::PointLightShadowMap { size: 512 })
            .insert_resource(bevy::light::DirectionalLightShadowMap { size: 512 })
            .add_systems(Startup, spawn_showcase)
            .add_systems(bevy::app::PostStartup, spawn_ui_panel);
    }
}

fn spawn_showcase(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut meshes: ResMut<Assets<bevy::mesh::Mesh>>,
    mut materials: ResMut<Assets<bevy::pbr::StandardMaterial>>,
) {
    use bevy::asset::RenderAssetUsages;
    use bevy::camera::Camera;
    use bevy::compat::primitives::{Cuboid, Plane3d};
    use bevy::math::Vec3;
    use bevy::mesh::Meshable;
    use bevy::render::render_resource::{Extent3d, TextureDimension};
    use bevy::sprite::{BorderRect, SliceScaleMode, SpriteImageMode, Text2d, TextureSlicer};
    use bevy::text::{FontSize, TextColor, TextFont};

    let texture = images.add(Image::new_fill(
        Extent3d {
            width: 16,
            height: 16,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        &[255, 220, 120, 255],
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::default(),
    ));
    commands.spawn((
        Name::new("SlicedPanel"),
        Transform::from_xyz(-10.0, 6.0, 0.0),
        Sprite {
            image: texture.clone(),
            custom_size: Some(Vec2::new(4.0, 2.0)),
            image_mode: SpriteImageMode::Sliced(TextureSlicer {
                border: BorderRect::all(4.0),
                center_scale_mode: SliceScaleMode::Tile { stretch_value: 0.5 },
                ..TextureSlicer::default()
            }),
            ..Sprite::default()
        },
    ));
    commands.spawn((
        Name::new("TiledFloor"),
        Transform::from_xyz(10.0, 6.0, 0.0),
        Sprite {
            image: texture,
            custom_size: Some(Vec2::new(4.0, 4.0)),
            image_mode: SpriteImageMode::Tiled {
                tile_x: true,
                tile_y: true,
                stretch_value: 0.25,
            },
            ..Sprite::default()
        },
    ));
    commands.spawn((
        Name::new("Banner"),
        Text2d::new("Bevy MCP Bridge"),
        TextFont {
            font_size: FontSize::Px(24.0),
            ..TextFont::default()
        },
        TextColor(Color::WHITE),
        Transform::from_xyz(0.0, -7.0, 1.0),
    ));

    let target = images.add(Image::new_target_texture(
        VIEW_WIDTH / 2,
        VIEW_HEIGHT / 2,
        TextureFormat::Rgba8UnormSrgb,
        None,
    ));
    commands.spawn((
        Name::new(CAMERA_3D_NAME),
        bevy::camera::Camera3d::default(),
        Camera {
            // Drawn before the 2D camera, which stays the default UI camera.
            order: -1,
            ..Camera::default()
        },
        RenderTarget::Image(target.into()),
        Transform::from_xyz(-2.5, 4.5, 9.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Name::new("Cube"),
        bevy::mesh::Mesh3d(meshes.add(Cuboid::new(1.0, 1.0, 1.0))),
        bevy::pbr::MeshMaterial3d(materials.add(Color::srgb(0.8, 0.7, 0.6))),
        Transform::from_xyz(0.0, 0.5, 0.0),
    ));
    commands.spawn((
        Name::new("Ground"),
        bevy::mesh::Mesh3d(meshes.add(Plane3d::default().mesh().size(8.0, 8.0))),
        bevy::pbr::MeshMaterial3d(materials.add(Color::srgb(0.3, 0.5, 0.3))),
    ));
    commands.spawn((
        Name::new("Lamp"),
        bevy::light::PointLight {
            shadow_maps_enabled: true,
            ..bevy::light::PointLight::default()
        },
        Transform::from_xyz(4.0, 8.0, 4.0),
    ));
    commands.spawn((
        Name::new("Sun"),
        bevy::light::DirectionalLight {
            shadow_maps_enabled: true,
            ..bevy::light::DirectionalLight::default()
        },
        bevy::light::CascadeShadowConfigBuilder {
            num_cascades: 1,
            ..bevy::light::CascadeShadowConfigBuilder::default()
        }
        .build(),
        Transform::from_xyz(1.0, 2.0, 1.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

/// A UI panel with a label, drawn by the 2D camera.
fn spawn_ui_panel(mut commands: Commands, cameras: Query<Entity, With<Camera2d>>) {
    use bevy::text::{FontSize, TextColor, TextFont};
    use bevy::ui::widget::Text;
    use bevy::ui::{BackgroundColor, BorderColor, Node, UiRect, UiTargetCamera, Val};

    let Some(camera) = cameras.iter().next() else {
        return;
    };
    commands
        .spawn((
            Name::new("Panel"),
            Node {
                width: Val::Px(180.0),
                height: Val::Px(48.0),
                border: UiRect::all(Val::Px(2.0)),
                ..Node::default()
            },
            BackgroundColor(Color::srgb(0.1, 0.1, 0.3)),
            BorderColor::all(Color::WHITE),
            UiTargetCamera(camera),
        ))
        .with_children(|panel| {
            panel.spawn((
                Name::new("Label"),
                Text::new("Score: 0"),
                TextFont {
                    font_size: FontSize::Px(20.0),
                    ..TextFont::default()
                },
                TextColor(Color::WHITE),
            ));
        });
}
