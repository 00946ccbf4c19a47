//! Seeing the game over real HTTP: screenshots of the sandbox drawn offscreen by a software GPU
//! (pixels checked where sprites are projected), entity crops, saved files, and the honest
//! `RENDERING_UNAVAILABLE` of the headless sandbox.
//!
//! The offscreen tests need a Vulkan driver (lavapipe from `mesa-vulkan-drivers` is enough;
//! `.ci/run` installs it). Where none exists they check the refusal that says so instead, and
//! under `CI` they fail.

use bevy_mcp_contract_tests::mcp::{CallOutcome, McpSession};
use bevy_mcp_sandbox::render::{
    BACKGROUND_PIXEL, BLUE_PIXEL, RED_PIXEL, VIEW_HEIGHT, VIEW_WIDTH, pixel_of,
};
use bevy_mcp_sandbox::testing::SandboxServer;
use image::RgbImage;
use serde_json::{Value, json};

fn ok(outcome: &CallOutcome) -> Value {
    assert!(!outcome.is_error(), "{}", outcome.payload());
    outcome.payload()
}

/// The one PNG of a screenshot result, decoded.
fn picture(outcome: &CallOutcome) -> RgbImage {
    let images = outcome.images();
    assert_eq!(images.len(), 1, "one image content block");
    let (mime, bytes) = &images[0];
    assert_eq!(mime, "image/png");
    image::load_from_memory_with_format(bytes, image::ImageFormat::Png)
        .unwrap_or_else(|error| panic!("the image is a PNG: {error}"))
        .to_rgb8()
}

fn pixel(picture: &RgbImage, (x, y): (u32, u32)) -> [u8; 3] {
    picture.get_pixel(x, y).0
}

/// The offscreen sandbox, or `None` on a machine without any Vulkan driver (after checking that
/// the refusal says what to install). Under CI a missing driver is a failure: `.ci/run` installs
/// one.
fn offscreen_sandbox(screenshots: &std::path::Path) -> Option<SandboxServer> {
    let dir = screenshots.to_owned();
    match SandboxServer::rendering(60.0, move |config| config.with_screenshots_dir(dir)) {
        Ok(server) => Some(server),
        Err(reason) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs a Vulkan driver, yet: {reason}"
            );
            assert!(reason.contains("mesa-vulkan-drivers"), "{reason}");
            eprintln!("skipping the offscreen checks: {reason}");
            None
        }
    }
}

async fn translation_of(session: &McpSession, name: &str) -> [f32; 3] {
    let entity = ok(&session
        .execute("inspect", "get_entity", json!({"entity": name}))
        .await);
    let translation =
        &entity["components"]["bevy_transform::components::transform::Transform"]["translation"];
    let coordinate = |index: usize| translation[index].as_f64().unwrap_or(f64::NAN) as f32;
    [coordinate(0), coordinate(1), coordinate(2)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_headless_sandbox_answers_rendering_unavailable() {
    let server = SandboxServer::start(120.0, |config| config);
    let session = McpSession::start(server.address).await;
    let refused = session.execute("view", "screenshot", json!({})).await;
    assert_eq!(
        refused.error_code().as_deref(),
        Some("RENDERING_UNAVAILABLE")
    );
    let message = refused.payload()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("--render"), "{message}");
    assert!(message.contains("mesa-vulkan-drivers"), "{message}");
    assert!(refused.images().is_empty(), "no image is ever faked");
    let cameras = ok(&session.execute("view", "list_cameras", json!({})).await);
    assert_eq!(cameras["rendering"], json!(false));
    assert_eq!(cameras["total"], json!(0));
    let windows = ok(&session.execute("view", "list_windows", json!({})).await);
    assert_eq!(windows["total"], json!(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_show_the_offscreen_sandbox_where_its_sprites_are() {
    let screenshots = tempfile::tempdir().expect("screenshots dir");
    let Some(server) = offscreen_sandbox(screenshots.path()) else {
        return;
    };
    let session = McpSession::start(server.address).await;
    ok(&session.execute("control_app", "pause", json!({})).await);
    ok(&session
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "Player", "translation": [-5.0, -4.0, 0.0]}),
        )
        .await);

    let cameras = ok(&session.execute("view", "list_cameras", json!({})).await);
    assert_eq!(cameras["rendering"], json!(true));
    assert_eq!(cameras["cameras"][0]["name"], json!("MainCamera"));
    assert_eq!(cameras["cameras"][0]["target"]["kind"], json!("image"));
    assert_eq!(
        cameras["cameras"][0]["size"],
        json!([VIEW_WIDTH, VIEW_HEIGHT])
    );

    // The whole view: the player's colour where the player is projected.
    let first = session.execute("view", "screenshot", json!({})).await;
    let meta = ok(&first);
    assert_eq!(meta["target"]["kind"], json!("camera"));
    assert_eq!(meta["target"]["camera"]["name"], json!("MainCamera"));
    assert_eq!(meta["mimeType"], json!("image/png"));
    let shot = picture(&first);
    assert_eq!((shot.width(), shot.height()), (VIEW_WIDTH, VIEW_HEIGHT));
    assert_eq!(meta["width"], json!(VIEW_WIDTH));
    assert_eq!(meta["bytes"].as_u64(), Some(session_image_len(&first)));
    assert_eq!(pixel(&shot, pixel_of(-5.0, -4.0)), BLUE_PIXEL);

    // Moved through the bridge, the player is drawn at its new place and gone from the old.
    ok(&session
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "Player", "translation": [5.0, 4.0, 0.0]}),
        )
        .await);
    let moved = picture(&session.execute("view", "screenshot", json!({})).await);
    assert_eq!(pixel(&moved, pixel_of(5.0, 4.0)), BLUE_PIXEL);
    assert_eq!(pixel(&moved, pixel_of(-5.0, -4.0)), BACKGROUND_PIXEL);

    // Scaled down with the aspect kept.
    let small = session
        .execute("view", "screenshot", json!({"maxWidth": 320}))
        .await;
    let small_meta = ok(&small);
    let small_picture = picture(&small);
    assert_eq!(
        (small_picture.width(), small_picture.height()),
        (VIEW_WIDTH / 2, VIEW_HEIGHT / 2)
    );
    assert_eq!(small_meta["scale"], json!(0.5));
    assert_eq!(small_meta["capturedWidth"], json!(VIEW_WIDTH));

    // A crop around the goblin (a red one-unit square, 20 pixels) with 8 pixels of margin.
    let [x, y, _] = translation_of(&session, "Goblin").await;
    let crop = session
        .execute(
            "view",
            "screenshot",
            json!({"entity": "Goblin", "margin": 8}),
        )
        .await;
    let crop_meta = ok(&crop);
    assert_eq!(crop_meta["target"]["kind"], json!("entity"));
    assert_eq!(crop_meta["target"]["entity"]["name"], json!("Goblin"));
    let cropped = picture(&crop);
    for side in [cropped.width(), cropped.height()] {
        assert!(
            (35..=38).contains(&side),
            "20 px sprite + 2 x 8 margin, got {side}"
        );
    }
    let region = &crop_meta["region"];
    let (column, row) = pixel_of(x, y);
    let left = region["x"].as_u64().unwrap_or(u64::MAX) as u32;
    let top = region["y"].as_u64().unwrap_or(u64::MAX) as u32;
    assert!(
        (left..left + cropped.width()).contains(&column)
            && (top..top + cropped.height()).contains(&row),
        "the crop {region} contains the goblin at {column},{row}"
    );
    assert_eq!(pixel(&cropped, (column - left, row - top)), RED_PIXEL);
    assert_eq!(pixel(&cropped, (0, 0)), BACKGROUND_PIXEL, "the margin");

    // Saved under the screenshots directory, never overwritten without asking.
    let saved = ok(&session
        .execute("view", "screenshot", json!({"save": "shots/first"}))
        .await);
    assert_eq!(saved["savedTo"], json!("shots/first.png"));
    let file = std::fs::read(screenshots.path().join("shots/first.png")).expect("saved file");
    let from_disk = image::load_from_memory(&file).expect("a PNG").to_rgb8();
    assert_eq!(pixel(&from_disk, pixel_of(5.0, 4.0)), BLUE_PIXEL);
    let again = session
        .execute("view", "screenshot", json!({"save": "shots/first"}))
        .await;
    assert_eq!(again.error_code().as_deref(), Some("FILE_EXISTS"));
    let escape = session
        .execute("view", "screenshot", json!({"save": "../outside"}))
        .await;
    assert_eq!(escape.error_code().as_deref(), Some("PATH_NOT_PERMITTED"));

    // An entity outside the view, and a camera that is not one.
    ok(&session
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "Crate", "translation": [500.0, 0.0, 0.0]}),
        )
        .await);
    let off_screen = session
        .execute("view", "screenshot", json!({"entity": "Crate"}))
        .await;
    assert_eq!(off_screen.error_code().as_deref(), Some("NOT_ON_SCREEN"));
    assert_eq!(
        off_screen.payload()["error"]["nextCall"]["action"],
        json!("list_cameras")
    );
    let not_camera = session
        .execute("view", "screenshot", json!({"camera": "Goblin"}))
        .await;
    assert_eq!(not_camera.error_code().as_deref(), Some("INVALID_PARAMS"));
}

/// The byte length of the one image of a result.
fn session_image_len(outcome: &CallOutcome) -> u64 {
    outcome
        .images()
        .first()
        .map_or(0, |(_, bytes)| bytes.len() as u64)
}

/// Screenshots that could show nothing say so, and a UI node is cropped to its computed
/// rectangle: over HTTP on the engine showcase (sprites, a 3D scene, a UI panel).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captures_that_would_show_nothing_are_refused_and_ui_nodes_crop() {
    let dir = tempfile::tempdir().expect("temp dir");
    let screenshots = dir.path().to_owned();
    let server = match SandboxServer::rendering_with(
        60.0,
        move |config| config.with_screenshots_dir(screenshots),
        |app| {
            app.add_plugins(bevy_mcp_sandbox::render::EngineShowcasePlugin);
        },
    ) {
        Ok(server) => server,
        Err(reason) => {
            assert!(std::env::var_os("CI").is_none(), "{reason}");
            eprintln!("skipping: {reason}");
            return;
        }
    };
    let session = McpSession::start(server.address).await;

    // A UI node: its computed rectangle (180 x 48 px, the image target's scale is 1).
    let panel = session
        .execute(
            "view",
            "screenshot",
            json!({"entity": "Panel", "margin": 0}),
        )
        .await;
    let meta = ok(&panel);
    assert_eq!(meta["target"]["kind"], json!("uiNode"), "{meta}");
    let image = picture(&panel);
    assert!(
        (179..=181).contains(&image.width()) && (47..=49).contains(&image.height()),
        "the panel's rectangle: {}x{}",
        image.width(),
        image.height()
    );

    // A hidden entity.
    ok(&session
        .execute(
            "control_entity",
            "mutate_component",
            json!({"entity": "Goblin", "component": "Visibility", "path": "", "value": "Hidden"}),
        )
        .await);
    let hidden = session
        .execute("view", "screenshot", json!({"entity": "Goblin"}))
        .await;
    assert_eq!(hidden.error_code().as_deref(), Some("NOTHING_TO_CAPTURE"));
    assert!(
        hidden.payload()["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("hidden")),
        "{}",
        hidden.payload()
    );

    // A zero-size entity: an empty UI node laid out 0 x 0 px (a zero scale is refused on write).
    ok(&session
        .execute(
            "control_entity",
            "spawn",
            json!({"name": "Empty", "components": {"Node": {"width": {"Px": 0.0}, "height": {"Px": 0.0}}}}),
        )
        .await);
    ok(&session
        .execute("control_app", "step_frames", json!({"frames": 2}))
        .await);
    let flat = session
        .execute("view", "screenshot", json!({"entity": "Empty"}))
        .await;
    assert_eq!(
        flat.error_code().as_deref(),
        Some("NOTHING_TO_CAPTURE"),
        "{:?}",
        flat.payload()
    );

    // No active camera: every camera switched off, the capture names the cameras there are.
    let cameras = ok(&session.execute("view", "list_cameras", json!({})).await);
    for camera in cameras["cameras"].as_array().cloned().unwrap_or_default() {
        ok(&session
            .execute(
                "control_entity",
                "mutate_component",
                json!({"entity": camera["entity"], "component": "Camera", "path": ".is_active", "value": false}),
            )
            .await);
    }
    let dark = session.execute("view", "screenshot", json!({})).await;
    assert_eq!(
        dark.error_code().as_deref(),
        Some("NOTHING_TO_CAPTURE"),
        "{:?}",
        dark.payload()
    );
    let listed = dark.payload()["error"]["details"]["cameras"].clone();
    assert!(
        listed.as_array().is_some_and(|cameras| !cameras.is_empty()
            && cameras
                .iter()
                .all(|camera| camera["active"] == json!(false))),
        "{}",
        dark.payload()
    );
}

/// A sprite spawned with its image given by path: the file is loaded through the asset server
/// and the sprite shows it, each quadrant of the 8x8 checker where the sprite puts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sprite_spawned_with_an_image_by_path_shows_the_image() {
    /// `bridge/sandbox/assets/textures/checker.png`: orange at the top left and bottom right.
    const ORANGE: [u8; 3] = [255, 128, 0];
    const TEAL: [u8; 3] = [0, 128, 128];
    let screenshots = tempfile::tempdir().expect("screenshots dir");
    let Some(server) = offscreen_sandbox(screenshots.path()) else {
        return;
    };
    let session = McpSession::start(server.address).await;
    ok(&session.execute("control_app", "pause", json!({})).await);
    ok(&session
        .execute(
            "control_entity",
            "spawn",
            json!({"name": "Checker", "components": {
                "Sprite": {"image": "textures/checker.png", "custom_size": [4.0, 4.0]},
                "Transform": {"translation": [12.0, 6.0, 5.0]}
            }}),
        )
        .await);
    let read = ok(&session
        .execute(
            "inspect",
            "get_entity",
            json!({"entity": "Checker", "components": ["Sprite"]}),
        )
        .await);
    assert_eq!(
        read["components"]["bevy_sprite::sprite::Sprite"]["image"],
        json!("textures/checker.png")
    );
    let close = |seen: [u8; 3], expected: [u8; 3]| {
        seen.iter()
            .zip(expected)
            .all(|(seen, expected)| seen.abs_diff(expected) <= 3)
    };
    // The file loads over a few frames: look until it shows (bounded).
    let mut last = None;
    for _ in 0..30 {
        let shot = picture(
            &session
                .execute("view", "screenshot", json!({"imageIfUnchanged": true}))
                .await,
        );
        let quadrants = [
            pixel(&shot, pixel_of(11.0, 7.0)),
            pixel(&shot, pixel_of(13.0, 7.0)),
            pixel(&shot, pixel_of(11.0, 5.0)),
            pixel(&shot, pixel_of(13.0, 5.0)),
        ];
        if close(quadrants[0], ORANGE) {
            last = Some(quadrants);
            break;
        }
        last = Some(quadrants);
    }
    let [top_left, top_right, bottom_left, bottom_right] = last.expect("screenshots were taken");
    assert!(close(top_left, ORANGE), "{top_left:?}");
    assert!(close(top_right, TEAL), "{top_right:?}");
    assert!(close(bottom_left, TEAL), "{bottom_left:?}");
    assert!(close(bottom_right, ORANGE), "{bottom_right:?}");
}

/// A screenshot says what it shows: the same paused scene captured twice is `unchanged` the second
/// time and comes without its image unless asked (per session), and a camera that sees only its
/// clear colour is `blank`, with the colour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_say_when_they_are_unchanged_or_blank() {
    let screenshots = tempfile::tempdir().expect("screenshots dir");
    let Some(server) = offscreen_sandbox(screenshots.path()) else {
        return;
    };
    let session = McpSession::start(server.address).await;
    ok(&session.execute("control_app", "pause", json!({})).await);

    let first = session.execute("view", "screenshot", json!({})).await;
    assert_eq!(ok(&first)["unchanged"], json!(false), "{}", first.payload());
    assert_eq!(first.images().len(), 1);
    assert!(ok(&first).get("blank").is_none(), "the scene has sprites");
    let second = session.execute("view", "screenshot", json!({})).await;
    assert_eq!(
        ok(&second)["unchanged"],
        json!(true),
        "{}",
        second.payload()
    );
    assert_eq!(ok(&second)["imageSent"], json!(false));
    assert!(
        second.images().is_empty(),
        "no image for an unchanged picture"
    );
    let asked = session
        .execute("view", "screenshot", json!({"imageIfUnchanged": true}))
        .await;
    assert_eq!(ok(&asked)["unchanged"], json!(true));
    assert_eq!(asked.images().len(), 1, "the image when asked");
    // Another session has not seen it yet.
    let other = McpSession::start(server.address).await;
    let fresh = other.execute("view", "screenshot", json!({})).await;
    assert_eq!(ok(&fresh)["unchanged"], json!(false));
    assert_eq!(fresh.images().len(), 1);

    // The camera looking far away: only the clear colour is left.
    ok(&session
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "MainCamera", "translation": [100000.0, 100000.0, 0.0]}),
        )
        .await);
    let empty = session.execute("view", "screenshot", json!({})).await;
    let meta = ok(&empty);
    assert_eq!(meta["blank"], json!(true), "{meta}");
    assert_eq!(meta["blankColor"], json!(BACKGROUND_PIXEL), "{meta}");
    assert_eq!(meta["unchanged"], json!(false), "the picture changed");
    assert_eq!(pixel(&picture(&empty), (0, 0)), BACKGROUND_PIXEL);
}
