//! `bevy-mcp`: the sandbox app. Until the bridge issue lands it only runs a headless Bevy app for
//! a handful of frames and prints the catalog it will serve.

use bevy::MinimalPlugins;
use bevy::app::PluginGroup;
use bevy::app::{App, AppExit, ScheduleRunnerPlugin, Update};
use bevy::ecs::message::MessageWriter;
use bevy::ecs::system::Local;

fn main() -> AppExit {
    let catalog = &bevy_mcp_bridge::CATALOG;
    let actions: usize = catalog.tools.iter().map(|tool| tool.actions.len()).sum();
    println!(
        "bevy-mcp: catalog {} with {} tools and {actions} actions (the MCP server is not wired in yet)",
        catalog.revision,
        catalog.tools.len(),
    );
    App::new()
        .add_plugins(MinimalPlugins.set(ScheduleRunnerPlugin::run_loop(
            std::time::Duration::from_millis(16),
        )))
        .add_systems(Update, exit_after_a_few_frames)
        .run()
}

/// Runs the placeholder app for a few frames so the binary proves Bevy starts, then exits.
fn exit_after_a_few_frames(mut frames: Local<u32>, mut exit: MessageWriter<AppExit>) {
    *frames += 1;
    if *frames >= 10 {
        exit.write(AppExit::Success);
    }
}
