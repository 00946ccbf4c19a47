//! `bevy-mcp`: the sandbox app with the bridge, the embedded default of `cargo run --release`.

mod doctor;

use std::path::PathBuf;
use std::process::ExitCode;

use bevy::MinimalPlugins;
use bevy::app::{App, AppExit, Last, PluginGroup, PostStartup, ScheduleRunnerPlugin, Startup};
use bevy::log::LogPlugin;
use bevy::prelude::{
    Commands, DetectChanges, MessageWriter, Name, Res, Resource, Transform, Vec3, World,
};
use bevy_mcp_bridge::BridgeSignals;
use bevy_mcp_bridge::LocalCalls;
use bevy_mcp_bridge::capture_logs;
use bevy_mcp_bridge::frame_paced_runner;
use bevy_mcp_bridge::process_mailbox;
use bevy_mcp_bridge::{BridgeConfig, BridgeEndpoint, CATALOG, McpBridgePlugin, Token};
use bevy_mcp_sandbox::SandboxPlugin;
use clap::Parser;
use mcp_native_transport::catalog::Scope;
use mcp_native_transport::{ProgressSink, TlsConfig, TlsTrust, generate_token, surface_report};

/// Run a headless Bevy sandbox with the MCP bridge.
#[derive(Debug, Parser)]
#[command(name = "bevy-mcp", version)]
struct Args {
    /// Host to bind; anything but loopback requires a token.
    #[arg(long, env = "BEVY_MCP_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to bind (0 picks a free one).
    #[arg(long, env = "BEVY_MCP_PORT", default_value_t = mcp_native_transport::config::DEFAULT_PORT)]
    port: u16,
    /// Require a token of this tokens file: one `TOKEN [SCOPE [LABEL]]` per line, SCOPE read,
    /// write or admin (admin when left out), mode 0600. The running app reads it again whenever
    /// it changes: a new line works at once, a removed one's sessions end.
    #[arg(long, value_name = "PATH", conflicts_with = "generate_token")]
    token_file: Option<PathBuf>,
    /// Like --token-file, after making sure the file has a token labelled --token-label (a new
    /// random one of --token-scope is added when it has none; the file is created mode 0600).
    #[arg(long, value_name = "PATH")]
    generate_token: Option<PathBuf>,
    /// Scope of the token --generate-token adds: read (discovery and read actions), write (plus
    /// changes) or admin (plus destructive actions and tool visibility).
    #[arg(long, value_name = "SCOPE", default_value = "admin", value_parser = ["read", "write", "admin"], requires = "generate_token")]
    token_scope: String,
    /// Label of the token --generate-token makes sure of (default: the scope's name).
    #[arg(long, value_name = "LABEL", requires = "generate_token")]
    token_label: Option<String>,
    /// Serve HTTPS with a certificate made for this machine's names and addresses by a local CA
    /// kept in --tls-dir (clients trust its ca.pem).
    #[arg(long)]
    tls: bool,
    /// Where --tls keeps its CA and certificate (default: ~/.config/bevy-mcp/tls).
    #[arg(long, value_name = "DIR")]
    tls_dir: Option<PathBuf>,
    /// More names or addresses the made certificate covers (e.g. a DNS alias of this machine).
    #[arg(long = "tls-name", value_name = "NAME")]
    tls_names: Vec<String>,
    /// Serve HTTPS with this certificate chain (PEM) instead of a made one; needs --tls-key.
    #[arg(
        long,
        value_name = "PATH",
        requires = "tls_key",
        conflicts_with = "tls"
    )]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Frames per second of the sandbox; 0 runs uncapped.
    #[arg(long, default_value_t = 60.0)]
    fps: f64,
    /// Most sessions open at once (beyond it a new one evicts an idle one past its grace).
    #[arg(long, value_name = "N")]
    max_sessions: Option<usize>,
    /// End every session when the app stops, instead of keeping them (loopback) so connected
    /// clients carry on after a restart.
    #[arg(long)]
    forget_sessions: bool,
    /// Keep sessions across restarts in this file (default: beside the executable).
    #[arg(long, value_name = "PATH", conflicts_with = "forget_sessions")]
    session_file: Option<PathBuf>,
    /// Directory for world files.
    #[arg(long, value_name = "DIR", default_value = "scenes")]
    scenes_dir: PathBuf,
    /// Load this world file (a name inside the scenes directory) on top of the demo world at start.
    #[arg(long, value_name = "NAME")]
    world: Option<String>,
    /// Also append every execute to this file as JSON lines (secrets redacted).
    #[arg(long, value_name = "PATH")]
    audit_log: Option<PathBuf>,
    /// Draw the demo world offscreen (a camera renders it into an image) so `view.screenshot`
    /// works without a display. Needs the `render` feature and a Vulkan driver.
    #[arg(long)]
    render: bool,
    /// Directory for screenshots saved by `view.screenshot`.
    #[arg(long, value_name = "DIR", default_value = "screenshots")]
    screenshots_dir: PathBuf,
    /// Directory for playtest scripts (`playtest.record_start`, `--replay`).
    #[arg(long, value_name = "DIR", default_value = "scripts")]
    scripts_dir: PathBuf,
    /// Replay this script (a name inside the scripts directory) in the headless sandbox on a fixed
    /// clock, print each step and expectation, and exit: 0 when all pass, 1 when one fails, 2
    /// when the script cannot run.
    #[arg(long, value_name = "NAME")]
    replay: Option<String>,
    /// With --replay: also write the report as a JUnit XML file (one test case, failing with
    /// each failed step), for CI systems to show.
    #[arg(long, value_name = "FILE", requires = "replay")]
    junit: Option<PathBuf>,
    /// Print the start-up context cost of the MCP surface and exit.
    #[arg(long)]
    measure: bool,
    /// Check the setup of an app with the bridge running on --host/--port (endpoint, token,
    /// rendering, client configuration) and exit: 0 when every check passes.
    #[arg(long)]
    doctor: bool,
    /// Also spawn this many plain named entities ("Crate 0", "Crate 1", ... with a Transform),
    /// to see how the bridge behaves in a big world (`mcp-bench` uses it).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(..=1_000_000))]
    extra_entities: u32,
    /// Most entries the undo journal holds (0 turns journaling off; `mcp-bench` compares both).
    #[arg(long, value_name = "N", default_value_t = bevy_mcp_bridge::JournalLimits::default().max_entries)]
    journal_entries: usize,
    /// Threads of the MCP transport (1 to 16); more serve many clients at once faster, at the
    /// cost of more thread wake-ups per call.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
    io_threads: u16,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.measure {
        print!(
            "{}",
            surface_report(&CATALOG, &bevy_mcp_bridge::bevy_identity())
        );
        return ExitCode::SUCCESS;
    }
    if let Some(name) = &args.replay {
        return replay(&args, name);
    }
    if args.doctor {
        return doctor::run(&args.host, args.port, args.token_file.as_deref());
    }
    let config = match config_from(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    // Refuse a bad bind before anything starts, with the message that says what to set.
    if let Err(error) = config.server.bind_address() {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    let token_header = token_header_hint(&args, config.server.tokens_required());
    let mut app = App::new();
    let log = LogPlugin {
        custom_layer: capture_logs,
        ..LogPlugin::default()
    };
    if args.render {
        if let Err(message) = add_offscreen_rendering(&mut app, log) {
            eprintln!("error: --render: {message}");
            return ExitCode::FAILURE;
        }
    } else {
        app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>())
            .add_plugins(log);
    }
    app.add_plugins(SandboxPlugin)
        .add_plugins(McpBridgePlugin::new(config));
    app.insert_resource(Banner { token_header })
        .add_systems(Last, announce_endpoint);
    if let Some(signals) = app.world().get_resource::<BridgeSignals>() {
        let waker = signals.waker.clone();
        if let Err(error) = ctrlc::set_handler(move || waker.request_stop()) {
            eprintln!("warning: Ctrl-C will not stop the app cleanly: {error}");
        }
    }
    if args.extra_entities > 0 {
        let count = args.extra_entities;
        app.add_systems(Startup, move |mut commands: Commands| {
            commands.spawn_batch((0..count).map(|index| {
                let place = Vec3::new((index % 1000) as f32, (index / 1000) as f32, 0.0);
                (
                    Name::new(format!("Crate {index}")),
                    Transform::from_translation(place),
                )
            }));
        });
    }
    if let Some(name) = args.world.clone() {
        app.insert_resource(StartupWorld(name))
            .add_systems(PostStartup, load_startup_world);
    }
    app.set_runner(frame_paced_runner(args.fps));
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(code) => ExitCode::from(code.get()),
    }
}

/// The renderer, drawing the demo world offscreen; refused (with what to do) when this build has
/// no renderer or the machine has no GPU adapter.
#[cfg(feature = "render")]
fn add_offscreen_rendering(app: &mut App, log: LogPlugin) -> Result<(), String> {
    use bevy_mcp_sandbox::render;
    let adapter = render::probe_adapter()?;
    println!(
        "rendering offscreen ({}x{}) on {adapter}",
        render::VIEW_WIDTH,
        render::VIEW_HEIGHT
    );
    app.add_plugins(render::offscreen_plugins(log))
        .add_plugins(render::OffscreenViewPlugin);
    Ok(())
}

#[cfg(not(feature = "render"))]
fn add_offscreen_rendering(_app: &mut App, _log: LogPlugin) -> Result<(), String> {
    Err(
        "this build has no renderer; run `cargo run --release --features render -- --render`"
            .to_owned(),
    )
}

/// `--replay NAME`: the script in a fresh headless sandbox without a server.
fn replay(args: &Args, name: &str) -> ExitCode {
    let path = match bevy_mcp_bridge::playtest::script_path(&args.scripts_dir, name) {
        Ok(path) => path,
        Err(error) => {
            eprintln!("error: --replay {name}: {error}");
            return ExitCode::from(2);
        }
    };
    let config = bevy_mcp_sandbox::bridge_config()
        .without_server()
        .with_scenes_dir(args.scenes_dir.clone())
        .with_scripts_dir(args.scripts_dir.clone())
        .with_screenshots_dir(args.screenshots_dir.clone())
        .with_scripts_dir(args.scripts_dir.clone());
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>())
        .add_plugins(SandboxPlugin)
        .add_plugins(McpBridgePlugin::new(config));
    app.finish();
    app.cleanup();
    match bevy_mcp_bridge::playtest::replay_file(&mut app, &path) {
        Ok(report) => {
            println!("{report}");
            if let Some(junit) = &args.junit
                && let Err(error) = std::fs::write(junit, report.to_junit(name))
            {
                eprintln!("error: --junit {}: {error}", junit.display());
                return ExitCode::from(2);
            }
            if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("error: --replay {name}: {error}; nothing ran");
            ExitCode::from(2)
        }
    }
}

/// Most slices the `--world` load may take before the app gives up on it (minutes of work).
const STARTUP_LOAD_SLICES: usize = 1_000_000;

/// The world file `--world` asked for.
#[derive(Resource)]
struct StartupWorld(String);

/// Loads the `--world` file after the demo world is spawned, through the bridge's own pipeline
/// (the gateway's checks, the mailbox, the executor); a file that cannot be loaded stops the app
/// with the reason.
fn load_startup_world(world: &mut World) {
    let Some(StartupWorld(name)) = world.remove_resource::<StartupWorld>() else {
        return;
    };
    let Some(calls) = world.get_resource::<LocalCalls>().cloned() else {
        eprintln!("error: --world {name}: the bridge did not start");
        world.write_message(AppExit::error());
        return;
    };
    let mut load = calls.start(
        "startup",
        "manage_world",
        "load",
        serde_json::json!({"name": name}),
        ProgressSink::disabled(),
    );
    // The executor takes the call now, before the first frame's systems see the world; a load
    // works a slice at a time, so the mailbox is run until it answers (each run is a slice).
    let mut answer = None;
    for _ in 0..STARTUP_LOAD_SLICES {
        process_mailbox(world);
        answer = load.try_answer();
        if answer.is_some() {
            break;
        }
        // The file is parsed on a thread of its own meanwhile.
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    match answer {
        Some(Ok(loaded)) => println!(
            "loaded {} entities from {}",
            loaded.value["spawned"], loaded.value["file"]
        ),
        Some(Err(error)) => {
            eprintln!("error: --world {name}: {}", error.message);
            world.write_message(AppExit::error());
        }
        None => {
            eprintln!("error: --world {name}: the load did not run");
            world.write_message(AppExit::error());
        }
    }
}

fn config_from(args: &Args) -> Result<BridgeConfig, String> {
    // Whole-world calls over big worlds (`--extra-entities`) free their values a slice at a
    // time; with glibc's fast bins on, the next big allocation pays for them all at once.
    let mut config = bevy_mcp_sandbox::bridge_config().with_allocator_tuning(true);
    config.server.identity.token_help =
        "Set BEVY_MCP_TOKEN, pass --token-file PATH, or create one with --generate-token PATH"
            .to_owned();
    let mut config = config
        .with_host(args.host.clone())
        .with_port(args.port)
        .with_scenes_dir(args.scenes_dir.clone())
        .with_screenshots_dir(args.screenshots_dir.clone())
        .with_scripts_dir(args.scripts_dir.clone())
        .with_journal_limits(bevy_mcp_bridge::JournalLimits {
            max_entries: args.journal_entries,
            ..bevy_mcp_bridge::JournalLimits::default()
        })
        .with_io_threads(usize::from(args.io_threads));
    if let Some(path) = &args.session_file {
        config = config.with_session_file(path.clone());
    }
    config = config.with_keep_sessions(!args.forget_sessions);
    if let Some(max_sessions) = args.max_sessions {
        config.server.limits.max_sessions = max_sessions.max(1);
    }
    if let Some(path) = &args.audit_log {
        config = config.with_audit_log_file(path.clone());
    }
    if let Ok(token) = std::env::var("BEVY_MCP_TOKEN") {
        let token = Token::new(&token).map_err(|error| format!("BEVY_MCP_TOKEN: {error}"))?;
        config = config.with_token(token.labelled("BEVY_MCP_TOKEN"));
    }
    if let Some(path) = &args.generate_token {
        let scope = Scope::parse(&args.token_scope).unwrap_or(Scope::Admin);
        let label = args.token_label.as_deref().unwrap_or(scope.as_str());
        let generated = generate_token(path, scope, label).map_err(|error| error.to_string())?;
        if generated.created {
            println!(
                "added a new {} token labelled {} to {}",
                generated.scope,
                generated.label,
                path.display()
            );
        }
    }
    if let Some(path) = args.token_file.as_ref().or(args.generate_token.as_ref()) {
        config = config
            .with_token_file(path)
            .map_err(|error| error.to_string())?;
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config = config.with_tls(TlsConfig::Files {
            cert: cert.clone(),
            key: key.clone(),
        });
    } else if args.tls {
        let dir = args.tls_dir.clone().unwrap_or_else(default_tls_dir);
        config = config.with_tls(TlsConfig::Generated {
            dir,
            extra_names: args.tls_names.clone(),
        });
    }
    Ok(config)
}

/// Whether the banner mentions the token.
#[derive(Resource)]
struct Banner {
    /// The `--header` argument a client needs, as a shell word that reads the token from where
    /// it is (never the token itself); `None` without a token.
    token_header: Option<String>,
}

/// How a shell command line sends the token: read from the tokens file (the generated token by
/// its label, else the file's first token), or from the variable.
fn token_header_hint(args: &Args, protected: bool) -> Option<String> {
    if !protected {
        return None;
    }
    let source = match (&args.generate_token, &args.token_file) {
        (Some(path), _) => {
            let label = args.token_label.as_deref().unwrap_or(&args.token_scope);
            format!(
                "$(awk '$3 == \"{label}\" {{print $1}}' {})",
                shell_quote(path)
            )
        }
        (None, Some(path)) => format!(
            "$(awk '!/^#/ && NF {{print $1; exit}}' {})",
            shell_quote(path)
        ),
        (None, None) => "$BEVY_MCP_TOKEN".to_owned(),
    };
    Some(format!("\"X-MCP-Capability-Token: {source}\""))
}

/// Where `--tls` keeps its CA and certificate unless told: the user's configuration directory,
/// so clients keep trusting it across rebuilds (`cargo clean` included).
fn default_tls_dir() -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    config.join("bevy-mcp").join("tls")
}

/// A path as one shell word (single-quoted when it holds anything unusual).
fn shell_quote(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Prints how to connect once the transport listens, or stops the app with the reason it could
/// not (the transport starts in the first frame, off the game thread).
fn announce_endpoint(
    endpoint: Res<BridgeEndpoint>,
    banner: Res<Banner>,
    mut exit: MessageWriter<AppExit>,
) {
    if !endpoint.is_changed() {
        return;
    }
    match endpoint.as_ref() {
        BridgeEndpoint::Listening { url, tls, .. } => {
            print_banner(url, banner.token_header.as_deref(), tls.as_ref());
        }
        BridgeEndpoint::Failed(reason) => {
            eprintln!("error: the MCP server did not start: {reason}");
            exit.write(AppExit::error());
        }
        _ => {}
    }
}

fn print_banner(url: &str, token_header: Option<&str>, tls: Option<&TlsTrust>) {
    println!("bevy-mcp sandbox: MCP server listening on {url}");
    if let Some(tls) = tls {
        let ca = shell_quote(&tls.ca_file);
        println!("  TLS: clients trust {ca} (SHA-256 {})", tls.fingerprint);
        if !tls.names.is_empty() {
            println!("  the certificate covers: {}", tls.names.join(", "));
        }
        println!(
            "  Node-based clients (Claude Code, mcp-remote): NODE_EXTRA_CA_CERTS={ca}; Python: SSL_CERT_FILE={ca}"
        );
    }
    match token_header {
        None => println!("  connect Claude Code:  claude mcp add --transport http bevy {url}"),
        Some(header) => {
            println!(
                "  connect Claude Code:  claude mcp add --transport http bevy {url} --header {header}"
            );
            println!(
                "  token required: every client sends the header X-MCP-Capability-Token (or Authorization: Bearer)"
            );
        }
    }
    println!(
        "  one tool, `bevy`: start with {{\"operation\":\"search\",\"query\":\"...\"}}; Ctrl-C stops the app"
    );
}
