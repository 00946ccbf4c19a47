//! Bevy's own 3d_scene (`examples/3d/3d_scene.rs`), with the MCP bridge in it: a light shining
//! over a cube sitting on a plane, for an agent to build in.
//!
//! Bevy 0.19 and 0.20 write this scene with `bsn_list!`, in two different syntaxes; this file
//! spawns the same entities with `Commands`, as Bevy's file did before, which both versions build.
//! Changed from Bevy's scene, and only this: the bridge's plugin is added (three lines in `main`),
//! and the camera has no tonemapping (this workspace builds Bevy without `tonemapping_luts`,
//! without which Bevy's default tonemapper draws everything magenta). Everything else is Bevy's,
//! under Bevy's MIT/Apache-2.0 licence.
//!
//! ```text
//! cargo run --release -p bevy_mcp_sandbox --example 3d_scene --features render
//! ```
//!
//! The bridge listens on `127.0.0.1:15720/mcp` (`BEVY_MCP_PORT` changes the port).

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy_mcp_bridge::{BridgeConfig, McpBridgePlugin};

fn main() {
    let port = std::env::var("BEVY_MCP_PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(15720);
    App::new()
        .add_plugins(DefaultPlugins)
        // The bridge.
        .add_plugins(McpBridgePlugin::new(
            BridgeConfig::default().with_port(port),
        ))
        .add_systems(Startup, setup)
        .run();
}

/// set up a simple 3D scene
fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    // circular base
    commands.spawn((
        Name::new("CircularBase"),
        Mesh3d(meshes.add(Circle::new(4.0))),
        MeshMaterial3d(materials.add(Color::WHITE)),
        Transform::from_rotation(Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2)),
    ));
    // cube
    commands.spawn((
        Name::new("Cube"),
        Mesh3d(meshes.add(Cuboid::new(1.0, 1.0, 1.0))),
        MeshMaterial3d(materials.add(Color::srgb_u8(124, 144, 255))),
        Transform::from_xyz(0.0, 0.5, 0.0),
    ));
    // light
    commands.spawn((
        PointLight {
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(4.0, 8.0, 4.0),
    ));
    // camera
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(-2.5, 4.5, 9.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}
