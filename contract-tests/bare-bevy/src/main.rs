//! A bare Bevy app with the features the bridge's workspace builds Bevy with, headless like
//! `bevy-mcp`: the baseline of the bridge's build-time and binary-size cost.
use bevy::log::LogPlugin;
use bevy::prelude::*;
use bevy::state::app::StatesPlugin;

fn main() {
    App::new()
        .add_plugins((MinimalPlugins, LogPlugin::default(), StatesPlugin))
        .add_systems(Update, |time: Res<Time>| {
            if time.elapsed_secs() > 1.0 {
                info!("a frame");
            }
        })
        .run();
}
