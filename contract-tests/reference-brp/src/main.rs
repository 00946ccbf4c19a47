//! `reference-brp`: the sandbox's game (the same `SandboxPlugin`, the same world and systems)
//! served by the Bevy Remote Protocol instead of the bridge, so `mcp-bench` can compare BRP's
//! `world.get_components` with the bridge's `inspect.get_entity` on the same machine.
//!
//! ```text
//! reference-brp --port 15702 --fps 0
//! ```
//!
//! Prints `reference-brp on http://127.0.0.1:PORT/` once the app runs.

use std::net::TcpStream;
use std::process::ExitCode;
use std::time::Duration;

use bevy::MinimalPlugins;
use bevy::app::{App, AppExit, Last, PluginGroup, ScheduleRunnerPlugin};
use bevy::ecs::system::Local;
use bevy_mcp_sandbox::SandboxPlugin;
use bevy_remote::RemotePlugin;
use bevy_remote::http::{DEFAULT_PORT, RemoteHttpPlugin};
#[cfg(feature = "bevy_0_19")]
use bevy_remote_0_19 as bevy_remote;
#[cfg(feature = "bevy_0_20")]
use bevy_remote_0_20 as bevy_remote;

const USAGE: &str = "usage: reference-brp [--port N] [--fps F (0: uncapped)]";

fn main() -> ExitCode {
    let (port, fps) = match parse_args(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    // As the sandbox's runner does: 0 runs frames back to back.
    let wait = if fps > 0.0 {
        Duration::from_secs_f64(1.0 / fps.clamp(1.0, 1000.0))
    } else {
        Duration::ZERO
    };
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.set(ScheduleRunnerPlugin::run_loop(wait)))
        .add_plugins(SandboxPlugin)
        .add_plugins((
            RemotePlugin::default(),
            RemoteHttpPlugin::default().with_port(port),
        ))
        .add_systems(Last, move |mut announced: Local<bool>| {
            // BRP binds in a task of the IO pool: say where it is once it accepts connections.
            if !*announced && TcpStream::connect(("127.0.0.1", port)).is_ok() {
                *announced = true;
                println!("reference-brp on http://127.0.0.1:{port}/");
            }
        });
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(code) => ExitCode::from(code.get()),
    }
}

/// `--port N` and `--fps F`, both optional.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, f64), String> {
    let mut port = DEFAULT_PORT;
    let mut fps = 60.0;
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--port" => port = value.parse().map_err(|_| format!("bad port {value:?}"))?,
            "--fps" => fps = value.parse().map_err(|_| format!("bad fps {value:?}"))?,
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    Ok((port, fps))
}
