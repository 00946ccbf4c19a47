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
