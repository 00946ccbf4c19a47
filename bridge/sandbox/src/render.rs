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
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .map_err(|error| {
                format!(
                    "no GPU adapter was found ({error}); on a machine without a GPU install a \
                     software Vulkan driver (Debian/Ubuntu: apt install mesa-vulkan-drivers)"
                )
            })?;
    Ok(adapter.get_info().name)
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
