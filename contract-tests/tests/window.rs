//! The example games in real windows: under Xvfb, on a software Vulkan driver. The Collector
//! runs in winit's reactive mode (a call must wake the idle event loop, and a screenshot of the
//! window must show the game); Bevy's own breakout, with the bridge added as the README says, is
//! read, changed, seen and undone through an MCP client.
//!
//! Needs `xvfb-run` and a Vulkan driver (`.ci/run` installs both); without them the tests say
//! what is missing and, outside CI, stop there.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bevy_mcp_contract_tests::mcp::{CallOutcome, McpSession};
use serde_json::{Value, json};

/// Longest wait for the game to open its window and start the bridge.
const START: Duration = Duration::from_secs(180);
/// Longest wait for one answer: far below the game's reactive timeout of 600 s, so an answer
/// means the call woke the event loop.
const ANSWER: Duration = Duration::from_secs(30);

fn ok(outcome: &CallOutcome) -> Value {
    assert!(!outcome.is_error(), "{}", outcome.payload());
    outcome.payload()
}

/// An example's binary, built by `cargo test --workspace`; built here when this crate's tests
/// run alone.
fn example_binary(name: &str) -> PathBuf {
    let test_binary = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/<test> -> target/<profile>/examples/<name>
    let profile_dir = test_binary
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the profile directory")
        .to_owned();
    let binary = profile_dir.join("examples").join(name);
    if !binary.exists() {
        let target_dir = profile_dir.parent().expect("the target directory");
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "-p",
                "bevy_mcp_sandbox",
                "--example",
                name,
                "--ignore-rust-version",
                "--no-default-features",
                "--features",
                &format!("render,{}", bevy::compat::VERSION_FEATURE),
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "the example builds");
    }
    binary
}

/// The sandbox crate's folder, which holds the `assets` folder the example games load from.
fn sandbox_dir() -> &'static std::path::Path {
    std::path::Path::new(bevy_mcp_sandbox::ASSET_FOLDER)
        .parent()
        .expect("the asset folder is inside the sandbox's folder")
}

/// Whether the machine can show a window: without `xvfb-run` the tests skip outside CI.
fn can_open_windows() -> bool {
    if has_command("xvfb-run") {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI installs xvfb, yet xvfb-run is missing"
    );
    eprintln!("skipping: xvfb-run is not installed (apt install xvfb mesa-vulkan-drivers)");
    false
}

fn has_command(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The game under `xvfb-run`, in its own process group so it can be stopped as a whole.
struct Game {
    child: Child,
    address: SocketAddr,
}

impl Game {
    /// Starts an example of the sandbox with `args`, the bridge on a free port, and waits until
    /// it says where the bridge listens (the example's own line or the bridge's log line).
    fn start(example: &str, args: &[&str]) -> Game {
        Game::start_in(example, args, &std::env::temp_dir())
    }

    /// [`Game::start`] with `dir` as the game's working directory (where its world files go).
    fn start_in(example: &str, args: &[&str], dir: &std::path::Path) -> Game {
        use std::os::unix::process::CommandExt as _;
        let mut child = Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1280x720x24"])
            .arg(example_binary(example))
            .args(args)
            .env("BEVY_MCP_PORT", "0")
            // The sandbox's asset folder, wherever the game runs (Bevy reads it from here first).
            .env("BEVY_ASSET_ROOT", sandbox_dir())
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("xvfb-run starts");
        let (sender, receiver) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        watch_for_endpoint(stdout, sender.clone());
        watch_for_endpoint(stderr, sender);
        let mut game = Game {
            child,
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        game.address = receiver
            .recv_timeout(START)
            .unwrap_or_else(|error| panic!("{example} did not say where it listens: {error}"));
        game
    }
}

/// Reads a stream of the game's output, passing it on to the test's stderr, and sends the address
/// of the first `http://127.0.0.1:<port>/mcp` it shows.
fn watch_for_endpoint(
    stream: impl std::io::Read + Send + 'static,
    found: std::sync::mpsc::Sender<SocketAddr>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            eprintln!("{line}");
            let address = line
                .split("http://")
                .nth(1)
                .and_then(|rest| rest.split("/mcp").next())
                .and_then(|address| address.parse::<SocketAddr>().ok());
            if let Some(address) = address {
                let _ = found.send(address);
            }
        }
    });
}

impl Drop for Game {
    fn drop(&mut self) {
        // The whole group: xvfb-run, Xvfb and the game.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.child.wait();
    }
}

async fn answered(session: &McpSession, tool: &str, action: &str, params: Value) -> CallOutcome {
    tokio::time::timeout(ANSWER, session.execute(tool, action, params))
        .await
        .unwrap_or_else(|_| panic!("{tool}.{action} was not answered within {ANSWER:?}"))
}

async fn frame(session: &McpSession) -> u64 {
    let state = ok(&answered(session, "control_app", "get_state", json!({})).await);
    state["frame"].as_u64().expect("the frame number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_game_in_a_reactive_window_wakes_for_calls_and_shows_itself() {
    if !can_open_windows() {
        return;
    }
    let game = Game::start("collector", &["--reactive"]);
    let session = McpSession::start(game.address).await;

    // Idle between calls: a reactive app runs a frame per wake-up, not sixty a second.
    let before = frame(&session).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = frame(&session).await;
    assert!(
        after - before <= 10,
        "the game idles in reactive mode (frames {before} -> {after})"
    );
    // Longer than the bridge's stall limit (5 s): the next call must still wake it.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let woken = frame(&session).await;
    assert!(woken > after);

    let windows = ok(&answered(&session, "view", "list_windows", json!({})).await);
    assert_eq!(windows["total"], json!(1));
    let window = &windows["windows"][0];
    assert_eq!(window["primary"], json!(true));
    assert!(
        window["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Collector"),
        "{window}"
    );
    let [width, height] = [0, 1].map(|index| {
        window["physicalSize"][index]
            .as_u64()
            .expect("a physical size") as u32
    });

    // The window as the player sees it: the blue player square in the middle.
    let shot = answered(
        &session,
        "view",
        "screenshot",
        json!({"maxWidth": 4096, "maxHeight": 4096}),
    )
    .await;
    let meta = ok(&shot);
    assert_eq!(meta["target"]["kind"], json!("window"));
    let images = shot.images();
    assert_eq!(images.len(), 1);
    let picture = image::load_from_memory(&images[0].1)
        .expect("a PNG")
        .to_rgb8();
    assert_eq!((picture.width(), picture.height()), (width, height));
    assert_eq!(
        picture.get_pixel(width / 2, height / 2).0,
        [40, 110, 255],
        "the player at the centre of the window"
    );

    play_it_with_the_mouse(&session, window).await;
}

async fn component(session: &McpSession, entity: &str, component: &str) -> Value {
    let found = ok(&answered(
        session,
        "inspect",
        "get_entity",
        json!({"entity": entity, "components": [component]}),
    )
    .await);
    // Keyed by full type path; one component was asked for.
    let values = found["components"].as_object().cloned().unwrap_or_default();
    assert_eq!(values.len(), 1, "{found}");
    values
        .into_iter()
        .next()
        .map(|(_, value)| value)
        .unwrap_or_default()
}

/// The mouse through the real window: a world point lands where the camera shows it, hovering
/// the UI button lights it, and a click at its position presses it (a new game: the player goes
/// back to the middle).
async fn play_it_with_the_mouse(session: &McpSession, window: &Value) {
    let [width, height] = [0, 1].map(|index| {
        window["logicalSize"][index]
            .as_f64()
            .expect("a logical size")
    });

    // The 2D camera looks at the world origin: it is the middle of the window.
    let at_origin = ok(&answered(
        session,
        "input",
        "move_mouse",
        json!({"to": {"x": 0, "y": 0}, "space": "world"}),
    )
    .await);
    assert_eq!(
        at_origin["position"],
        json!({"x": width / 2.0, "y": height / 2.0}),
        "{at_origin}"
    );

    let walked = ok(&answered(
        session,
        "input",
        "press_keys",
        json!({"keys": ["ArrowRight"], "frames": 20}),
    )
    .await);
    assert_eq!(walked["frames"], json!(20));
    let moved = component(session, "Player", "Transform").await;
    let moved_x = moved["translation"][0].as_f64().expect("a translation");
    assert!(moved_x > 0.0, "the player walked right: {moved}");

    // The button's middle, from the example's layout: 160 x 48 pixels, 16 from the top right.
    let button = json!({"x": width - 16.0 - 80.0, "y": 16.0 + 24.0});
    ok(&answered(session, "input", "move_mouse", json!({"to": button})).await);
    // Interaction is computed in the next frame's PreUpdate: one frame more and it is seen.
    ok(&answered(session, "control_app", "step_frames", json!({"frames": 1})).await);
    // Named by its type: Bevy 0.20 renamed it (`bevy_ui::focus::DeprecatedInteraction`).
    #[allow(deprecated)]
    let interaction = <bevy::ui::Interaction as bevy::reflect::TypePath>::type_path();
    let hovered = component(session, "New game button", interaction).await;
    assert_eq!(hovered, json!("Hovered"), "the cursor is over the button");

    let clicked = ok(&answered(session, "input", "click", json!({"at": button})).await);
    assert_eq!(clicked["clicks"], json!(1));
    ok(&answered(session, "control_app", "step_frames", json!({"frames": 2})).await);
    let reset = component(session, "Player", "Transform").await;
    assert_eq!(
        reset["translation"],
        json!([0.0, 0.0, 0.0]),
        "the button started a new game"
    );
}

/// Bevy's own breakout (`examples/breakout.rs`: Bevy's file with the bridge added as the README
/// says), played by an MCP client: its unreflected paddle is found, read, moved, seen moved in a
/// screenshot of the window, and the move is undone and seen undone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bevys_breakout_is_read_changed_seen_and_undone_through_the_bridge() {
    /// Breakout's colours (`PADDLE_COLOR`, `BACKGROUND_COLOR`) as the window shows them.
    const PADDLE: [u8; 3] = [77, 77, 179];
    const BACKGROUND: [u8; 3] = [230, 230, 230];
    /// Where breakout puts its paddle, and where the test moves it.
    const PADDLE_Y: f64 = -240.0;
    const MOVED_X: f64 = -300.0;

    if !can_open_windows() {
        return;
    }
    let game = Game::start("breakout", &[]);
    let session = McpSession::start(game.address).await;
    // Frozen, so the ball stays where it is put and nothing but the test moves the paddle.
    ok(&answered(&session, "control_app", "pause", json!({})).await);

    let paddle = the_one_with(&session, "Paddle").await;
    let ball = the_one_with(&session, "Ball").await;
    let read = component(&session, &paddle, "Transform").await;
    assert_eq!(read["translation"], json!([0.0, PADDLE_Y, 0.0]), "{read}");
    // Out of the paddle's row, whatever it was doing.
    ok(&answered(
        &session,
        "control_entity",
        "set_transform",
        json!({"entity": ball, "translation": [0.0, 100.0, 1.0]}),
    )
    .await);

    let window = ok(&answered(&session, "view", "list_windows", json!({})).await);
    let [width, height] = [0, 1].map(|index| {
        window["windows"][0]["physicalSize"][index]
            .as_f64()
            .expect("a physical size")
    });
    // The 2D camera looks at the origin, one world unit to a pixel.
    let pixel_of = |x: f64| ((width / 2.0 + x) as u32, (height / 2.0 - PADDLE_Y) as u32);
    let (middle, moved) = (pixel_of(0.0), pixel_of(MOVED_X));

    let before = window_picture(&session).await;
    assert_colour(&before, middle, PADDLE, "the paddle in the middle");
    assert_colour(&before, moved, BACKGROUND, "nothing where it will go");

    let changed = ok(&answered(
        &session,
        "control_entity",
        "set_transform",
        json!({"entity": paddle, "mode": "translate", "translation": [MOVED_X, 0.0, 0.0]}),
    )
    .await);
    assert_eq!(
        changed["after"]["translation"],
        json!([MOVED_X, PADDLE_Y, 0.0])
    );
    let after = window_picture(&session).await;
    assert_colour(&after, moved, PADDLE, "the paddle where it was moved");
    assert_colour(&after, middle, BACKGROUND, "nothing where it was");

    let undone = ok(&answered(&session, "history", "undo", json!({})).await);
    assert_eq!(
        undone["undone"][0]["action"],
        json!("control_entity.set_transform"),
        "{undone}"
    );
    let back = component(&session, &paddle, "Transform").await;
    assert_eq!(back["translation"], json!([0.0, PADDLE_Y, 0.0]));
    let undone_picture = window_picture(&session).await;
    assert_colour(
        &undone_picture,
        middle,
        PADDLE,
        "the paddle back in the middle",
    );
    assert_colour(
        &undone_picture,
        moved,
        BACKGROUND,
        "nothing where it had been moved",
    );
}

/// Bevy's own 3d_scene (`examples/3d_scene.rs`, with the bridge added), built in by an MCP
/// client: a red cube beside Bevy's blue one, from a new mesh and a new material in one call,
/// seen in a screenshot; its material recoloured and seen so; the cube undone and seen gone;
/// the world saved and loaded into a second, fresh game, where the cube shows again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_builds_a_cube_in_bevys_3d_scene_and_it_shows_saved_and_loaded() {
    if !can_open_windows() {
        return;
    }
    let dir = tempfile::tempdir().expect("a working directory for both games");
    let game = Game::start_in("3d_scene", &[], dir.path());
    let session = McpSession::start(game.address).await;
    let before = window_picture(&session).await;
    assert_eq!(count(&before, red), 0, "nothing red in Bevy's scene");
    // The cursor aimed at the blue cube lands on it, as the camera shows it.
    let aimed = ok(&answered(
        &session,
        "input",
        "move_mouse",
        json!({"to": {"entity": "Cube"}}),
    )
    .await);
    assert_eq!(aimed["target"]["name"], json!("Cube"), "{aimed}");
    let at = |key: &str| aimed["position"][key].as_f64().expect("a position") as u32;
    let [r, g, b] = before.get_pixel(at("x"), at("y")).0;
    // Blue, lit or in shade; the white floor and the grey clear colour are neither.
    assert!(
        b > r.saturating_add(30) && b > g.saturating_add(30),
        "the cube's blue at the cursor: {:?}",
        [r, g, b]
    );

    // A drag from one entity onto another: pressed on the cube, released over the floor.
    let dragged = ok(&answered(
        &session,
        "input",
        "drag",
        json!({"path": [{"entity": "Cube"}, {"entity": "CircularBase"}]}),
    )
    .await);
    assert_eq!(dragged["points"], json!(2), "{dragged}");
    assert_eq!(
        dragged["target"]["name"],
        json!("CircularBase"),
        "{dragged}"
    );

    // One call: a unit cube, a new red material, beside the blue cube.
    let spawned = ok(&answered(
        &session,
        "control_entity",
        "spawn",
        json!({"name": "RedCube", "components": {
            "Mesh3d": {"new": {"Cuboid": {"half_size": [0.5, 0.5, 0.5]}}},
            "MeshMaterial3d<StandardMaterial>": {"new": {"base_color": {"Srgba": {"red": 1.0, "green": 0.0, "blue": 0.0, "alpha": 1.0}}}},
            "Transform": {"translation": [1.8, 0.5, 0.0]}
        }}),
    )
    .await);
    let cube = spawned["entity"]["entity"]
        .as_str()
        .expect("an id")
        .to_owned();
    let with_cube = window_picture(&session).await;
    let reds = count(&with_cube, red);
    assert!(reds > 400, "the red cube shows: {reds} red pixels");
    assert_eq!(count(&with_cube, green), 0);

    // Its material, recoloured: what uses it changes.
    let material = component(&session, &cube, "MeshMaterial3d<StandardMaterial>").await;
    let material_id = material["asset"]
        .as_str()
        .expect("a made material")
        .to_owned();
    ok(&answered(
        &session,
        "manage_asset",
        "mutate",
        json!({"asset": material_id, "path": ".base_color", "value": {"Srgba": {"red": 0.0, "green": 1.0, "blue": 0.0, "alpha": 1.0}}}),
    )
    .await);
    let recoloured = window_picture(&session).await;
    assert_eq!(count(&recoloured, red), 0, "no red left");
    let greens = count(&recoloured, green);
    assert!(greens > 400, "the cube is green now: {greens} green pixels");

    ok(&answered(
        &session,
        "manage_world",
        "save",
        json!({"name": "built", "entities": [cube]}),
    )
    .await);
    let undone = ok(&answered(&session, "history", "undo", json!({})).await);
    assert_eq!(
        undone["undone"][0]["action"],
        json!("control_entity.spawn"),
        "{undone}"
    );
    let without = window_picture(&session).await;
    assert_eq!(count(&without, green), 0, "the cube is gone");
    drop(session);
    drop(game);

    // A fresh game loads the file: the cube, its mesh and its material come back.
    let fresh = Game::start_in("3d_scene", &[], dir.path());
    let session = McpSession::start(fresh.address).await;
    assert_eq!(count(&window_picture(&session).await, green), 0);
    ok(&answered(&session, "manage_world", "load", json!({"name": "built"})).await);
    let loaded = window_picture(&session).await;
    let greens = count(&loaded, green);
    assert!(greens > 400, "the loaded cube shows: {greens} green pixels");
}

/// A glTF model from the asset folder, placed by path through `WorldAssetRoot`: a missing file is
/// refused with nothing spawned; the model shows; a world file leaves the model's parts out (its
/// root spawns them again); removing the component takes the model away and undo brings it back;
/// undoing the spawn takes both, and redoing it brings both back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gltf_model_placed_by_path_shows_and_goes_with_its_component() {
    if !can_open_windows() {
        return;
    }
    let dir = tempfile::tempdir().expect("a working directory for the game");
    let game = Game::start_in("3d_scene", &[], dir.path());
    let session = McpSession::start(game.address).await;
    assert_eq!(
        count(&window_picture(&session).await, yellow),
        0,
        "nothing yellow in Bevy's scene"
    );

    let missing = answered(
        &session,
        "control_entity",
        "spawn",
        json!({"name": "Crate", "components": {"WorldAssetRoot": "models/missing.gltf#Scene0"}}),
    )
    .await;
    assert_eq!(
        missing.error_code().as_deref(),
        Some("INVALID_VALUE"),
        "{}",
        missing.payload()
    );
    let an_image = answered(
        &session,
        "control_entity",
        "spawn",
        json!({"name": "Crate", "components": {"WorldAssetRoot": "textures/checker.png"}}),
    )
    .await;
    assert_eq!(
        an_image.error_code().as_deref(),
        Some("INVALID_VALUE"),
        "{}",
        an_image.payload()
    );
    assert_eq!(
        named_count(&session, "Crate").await,
        0,
        "nothing was spawned"
    );

    let spawned = ok(&answered(
        &session,
        "control_entity",
        "spawn",
        json!({"name": "Crate", "components": {
            "WorldAssetRoot": "models/crate.gltf#Scene0",
            "Transform": {"translation": [1.8, 0.5, 0.0]}
        }}),
    )
    .await);
    let crate_id = spawned["entity"]["entity"]
        .as_str()
        .expect("an id")
        .to_owned();
    let shown = until_yellow(&session, true).await;
    assert!(count(&shown, yellow) > 400, "the model shows");
    assert_eq!(
        component(&session, &crate_id, "WorldAssetRoot").await,
        json!("models/crate.gltf#Scene0"),
        "the handle reads back as its path"
    );
    assert_eq!(
        named_count(&session, "CrateBody").await,
        1,
        "the glTF node is spawned once"
    );

    // Saved by name, the model's own node (also named) is left out: its root brings it back.
    let saved = ok(&answered(
        &session,
        "manage_world",
        "save",
        json!({"name": "crate", "names": ["Crate", "CrateBody"]}),
    )
    .await);
    assert_eq!(saved["entityCount"], json!(1), "{saved}");
    assert!(
        saved["modelParts"]["leftOut"].as_u64() >= Some(1),
        "{saved}"
    );

    ok(&answered(
        &session,
        "control_entity",
        "remove_components",
        json!({"entity": crate_id, "components": ["WorldAssetRoot"]}),
    )
    .await);
    let removed = until_yellow(&session, false).await;
    assert_eq!(
        count(&removed, yellow),
        0,
        "the model went with its component"
    );
    assert_eq!(named_count(&session, "CrateBody").await, 0);

    ok(&answered(&session, "history", "undo", json!({})).await);
    let back = until_yellow(&session, true).await;
    assert!(count(&back, yellow) > 400, "undo brings the model back");

    // The spawn undone, the model goes with its entity; the file brings both back, the model once.
    let undone = ok(&answered(&session, "history", "undo", json!({})).await);
    assert_eq!(
        undone["undone"][0]["action"],
        json!("control_entity.spawn"),
        "{undone}"
    );
    assert_eq!(count(&until_yellow(&session, false).await, yellow), 0);
    assert_eq!(named_count(&session, "CrateBody").await, 0);
    ok(&answered(&session, "history", "redo", json!({})).await);
    assert!(
        count(&until_yellow(&session, true).await, yellow) > 400,
        "redo brings it back"
    );
    assert_eq!(
        named_count(&session, "CrateBody").await,
        1,
        "with its model once"
    );
    ok(&answered(&session, "history", "undo", json!({})).await);
    assert_eq!(count(&until_yellow(&session, false).await, yellow), 0);
    ok(&answered(&session, "manage_world", "load", json!({"name": "crate"})).await);
    let loaded = until_yellow(&session, true).await;
    assert!(count(&loaded, yellow) > 400, "the loaded model shows");
    assert_eq!(
        named_count(&session, "CrateBody").await,
        1,
        "one copy of the model"
    );
}

/// Screenshots until yellow shows (or is gone), over a bounded number of frames: a model loads
/// and spawns a few frames after its root is written.
async fn until_yellow(session: &McpSession, shows: bool) -> image::RgbImage {
    let mut picture = window_picture(session).await;
    for _ in 0..30 {
        if (count(&picture, yellow) > 400) == shows {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        picture = window_picture(session).await;
    }
    picture
}

/// How many entities have exactly this name.
async fn named_count(session: &McpSession, name: &str) -> u64 {
    let found = ok(&answered(
        session,
        "inspect",
        "find_entities",
        json!({"name": name, "exactName": true}),
    )
    .await);
    found["total"].as_u64().expect("a total")
}

/// Yellow pixels, as the lit glTF crate shows (the scene's white floor has blue in it).
fn yellow(pixel: [u8; 3]) -> bool {
    let [r, g, b] = pixel;
    r > 100 && g > 80 && b < 40
}

/// Bevy's own button example: the UI tree lists its one button with its text and where it is; a
/// click aimed at the button's entity presses it (the game's own system shows "Press" while it is
/// held, "Hover" after); a hidden button is refused and nothing is pressed.
// The example is Bevy 0.19's (0.20 rewrote its button on `bevy_ui_widgets`).
#[cfg(feature = "bevy_0_19")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_finds_bevys_button_in_the_ui_tree_and_clicks_it_by_entity() {
    if !can_open_windows() {
        return;
    }
    let dir = tempfile::tempdir().expect("a working directory for the game");
    let game = Game::start_in("button", &[], dir.path());
    let session = McpSession::start(game.address).await;
    let watcher = McpSession::start(game.address).await;
    // The display's own pointer starts in the middle of the screen, over the button: move it off.
    ok(&answered(
        &session,
        "input",
        "move_mouse",
        json!({"to": {"x": 10, "y": 10}}),
    )
    .await);
    frame_passes(&session).await;
    let buttons = ok(&answered(&session, "inspect", "ui_tree", json!({"kind": "button"})).await);
    assert_eq!(buttons["total"], json!(1), "{buttons}");
    let button = &buttons["nodes"][0];
    assert_eq!(button["text"], json!("Button"), "{button}");
    assert_eq!(button["visible"], json!(true), "{button}");
    assert_eq!(button["interaction"], json!("None"), "{button}");
    // 150 x 65 logical pixels, in the middle of the 1280 x 720 window.
    let rect = &button["rect"];
    let number = |key: &str| rect[key].as_f64().expect("a rect number");
    assert_eq!((number("width"), number("height")), (150.0, 65.0), "{rect}");
    let centre = (number("x") + 75.0, number("y") + 32.5);
    assert!(
        (centre.0 - 640.0).abs() <= 1.0 && (centre.1 - 360.0).abs() <= 1.0,
        "{rect}"
    );
    let id = button["entity"].as_str().expect("an id").to_owned();
    let everything = ok(&answered(&session, "inspect", "ui_tree", json!({})).await);
    assert_eq!(
        everything["total"],
        json!(3),
        "the root, the button, its text: {everything}"
    );

    // Held for a while, so a second session sees the game's own system react to the press.
    let click = {
        let params = json!({"at": {"entity": id}, "frames": 120});
        let session = &session;
        async move { answered(session, "input", "click", params).await }
    };
    let watch = async {
        for _ in 0..100 {
            let pressed =
                ok(&answered(&watcher, "inspect", "ui_tree", json!({"text": "press"})).await);
            if pressed["total"] == json!(2) {
                return pressed;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the button never showed Press");
    };
    let (clicked, pressed) = tokio::join!(click, watch);
    let clicked = ok(&clicked);
    assert_eq!(clicked["target"]["entity"], json!(id), "{clicked}");
    assert_eq!(
        pressed["nodes"][0]["interaction"],
        json!("Pressed"),
        "{pressed}"
    );
    let after = ok(&answered(&session, "inspect", "ui_tree", json!({"kind": "button"})).await);
    assert_eq!(after["nodes"][0]["text"], json!("Hover"), "{after}");
    assert_eq!(after["nodes"][0]["focused"], json!(true), "{after}");
    // The game's hovered colour, in the strip between the border and the text.
    let picture = window_picture(&session).await;
    let top_strip = (640, (number("y") + 8.0) as u32);
    assert_colour(
        &picture,
        top_strip,
        [64, 64, 64],
        "the hovered button's background",
    );

    ok(&answered(
        &session,
        "control_entity",
        "insert_components",
        json!({"entity": id, "components": {"Visibility": "Hidden"}}),
    )
    .await);
    frame_passes(&session).await;
    let hidden = answered(&session, "input", "click", json!({"at": {"entity": id}})).await;
    assert_eq!(
        hidden.error_code().as_deref(),
        Some("NOT_ON_SCREEN"),
        "{}",
        hidden.payload()
    );
    let reason = hidden.payload()["error"]["message"].to_string();
    assert!(reason.contains("hidden"), "{reason}");
    let listed = ok(&answered(&session, "inspect", "ui_tree", json!({"kind": "button"})).await);
    assert_eq!(listed["nodes"][0]["visible"], json!(false), "{listed}");
    assert_ne!(
        listed["nodes"][0]["interaction"],
        json!("Pressed"),
        "nothing pressed: {listed}"
    );

    // A playtest recorded here, run by the agent: it passes, and fails once its expectation is
    // made wrong, with the difference.
    ok(&answered(
        &session,
        "control_entity",
        "insert_components",
        json!({"entity": id, "components": {"Visibility": "Inherited"}}),
    )
    .await);
    frame_passes(&session).await;
    let label = ok(&answered(&session, "inspect", "ui_tree", json!({"kind": "text"})).await);
    let label = label["nodes"][0]["entity"]
        .as_str()
        .expect("the label")
        .to_owned();
    ok(&answered(
        &session,
        "playtest",
        "record_start",
        json!({"name": "press"}),
    )
    .await);
    ok(&answered(&session, "input", "click", json!({"at": {"entity": id}})).await);
    let expected = json!({"entity": label, "component": "Text", "path": ".0", "value": "Hover"});
    let held = ok(&answered(&session, "playtest", "expect", expected).await);
    assert_eq!(held["pass"], json!(true), "{held}");
    ok(&answered(&session, "playtest", "record_stop", json!({})).await);
    let passed = ok(&answered(&session, "playtest", "run", json!({"name": "press"})).await);
    assert_eq!(passed["passed"], json!(true), "{passed}");
    assert_eq!(passed["restored"], json!(true), "{passed}");
    let file = dir.path().join("scripts/press.json");
    let script = std::fs::read_to_string(&file).expect("the recorded script");
    std::fs::write(&file, script.replace("\"Hover\"", "\"Pressed for ever\"")).expect("edited");
    let failed = ok(&answered(&session, "playtest", "run", json!({"name": "press"})).await);
    assert_eq!(failed["passed"], json!(false), "{failed}");
    assert_eq!(failed["failures"][0]["actual"], json!("Hover"), "{failed}");
    assert!(!failed["failures"][0]["diff"].is_null(), "{failed}");

    // The wheel turned over the button: the cursor goes to its centre first.
    let scrolled = ok(&answered(
        &session,
        "input",
        "scroll",
        json!({"y": 1, "at": {"entity": id}}),
    )
    .await);
    assert_eq!(scrolled["target"]["entity"], json!(id), "{scrolled}");
    let at = |key: &str| scrolled["position"][key].as_f64().unwrap_or(f64::NAN);
    assert!(
        (at("x") - 640.0).abs() <= 1.0 && (at("y") - 360.0).abs() <= 1.0,
        "{scrolled}"
    );

    // The window's title, as its title bar shows it.
    let windows = ok(&answered(&session, "view", "list_windows", json!({})).await);
    let titled = ok(&answered(
        &session,
        "control_app",
        "set_window_title",
        json!({"title": "Button (an agent's run)"}),
    )
    .await);
    assert_eq!(titled["before"], windows["windows"][0]["title"], "{titled}");
    let windows = ok(&answered(&session, "view", "list_windows", json!({})).await);
    assert_eq!(
        windows["windows"][0]["title"],
        json!("Button (an agent's run)")
    );
}

/// Waits until the game has run a frame past this call (a write lands after the frame).
#[cfg(feature = "bevy_0_19")]
async fn frame_passes(session: &McpSession) {
    let now = frame(session).await;
    for _ in 0..100 {
        if frame(session).await > now + 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the game ran no frame");
}

/// Strongly red pixels, as a lit red cube shows.
fn red(pixel: [u8; 3]) -> bool {
    let [r, g, b] = pixel;
    r > 100 && g < 40 && b < 40
}

/// Strongly green pixels, as a lit green cube shows.
fn green(pixel: [u8; 3]) -> bool {
    let [r, g, b] = pixel;
    g > 100 && r < 40 && b < 40
}

/// How many pixels of `picture` are of a kind.
fn count(picture: &image::RgbImage, kind: fn([u8; 3]) -> bool) -> usize {
    picture.pixels().filter(|pixel| kind(pixel.0)).count()
}

/// The id of the one entity with a component of this name (the game's own, unreflected).
async fn the_one_with(session: &McpSession, component: &str) -> String {
    let found = ok(&answered(
        session,
        "inspect",
        "find_entities",
        json!({"withComponents": [component]}),
    )
    .await);
    assert_eq!(found["total"], json!(1), "{found}");
    found["entities"][0]["entity"]
        .as_str()
        .map(str::to_owned)
        .expect("an entity id")
}

/// A screenshot of the game's one window, at its full size.
async fn window_picture(session: &McpSession) -> image::RgbImage {
    let shot = answered(
        session,
        "view",
        "screenshot",
        json!({"maxWidth": 4096, "maxHeight": 4096, "imageIfUnchanged": true}),
    )
    .await;
    assert_eq!(ok(&shot)["target"]["kind"], json!("window"));
    let images = shot.images();
    assert_eq!(images.len(), 1);
    image::load_from_memory(&images[0].1)
        .expect("a PNG")
        .to_rgb8()
}

/// The pixel at `at` is `expected`, give or take the rounding of sRGB conversions.
fn assert_colour(picture: &image::RgbImage, at: (u32, u32), expected: [u8; 3], what: &str) {
    let seen = picture.get_pixel(at.0, at.1).0;
    let close = seen
        .iter()
        .zip(expected)
        .all(|(seen, expected)| seen.abs_diff(expected) <= 2);
    assert!(close, "{what}: {seen:?} at {at:?}, expected {expected:?}");
}
