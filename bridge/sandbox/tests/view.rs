//! `view` on a real App drawn offscreen, frame by frame: the image travels beside the result, and
//! a cancelled capture leaves nothing behind. The HTTP path and the pixels are checked in
//! `contract-tests/tests/view.rs`.

#![cfg(feature = "render")]

use bevy::render::view::screenshot::Screenshot;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ProgressSink;
use serde_json::json;

/// The offscreen sandbox, or `None` without a Vulkan driver (a failure under CI, which has one).
fn rendering() -> Option<Harness> {
    match Harness::rendering() {
        Ok(harness) => Some(harness),
        Err(reason) => {
            assert!(std::env::var_os("CI").is_none(), "{reason}");
            assert!(reason.contains("mesa-vulkan-drivers"), "{reason}");
            eprintln!("skipping: {reason}");
            None
        }
    }
}

fn screenshot_entities(harness: &mut Harness) -> usize {
    let mut query = harness.world().query::<&Screenshot>();
    query.iter(harness.world()).count()
}

#[test]
fn a_screenshot_answers_with_one_png_and_a_cancelled_one_leaves_nothing() {
    let Some(mut harness) = rendering() else {
        return;
    };
    let reply = harness
        .call_reply(
            "view",
            "screenshot",
            json!({"entity": "Player", "margin": 4, "maxWidth": 16}),
        )
        .unwrap_or_else(|error| panic!("{error:?}"));
    assert_eq!(reply.images.len(), 1);
    assert_eq!(reply.images[0].mime_type, "image/png");
    assert!(reply.images[0].data.starts_with(b"\x89PNG"));
    assert_eq!(reply.value["bytes"], json!(reply.images[0].data.len()));
    assert_eq!(reply.value["width"], json!(16), "28 px crop scaled to 16");
    assert_eq!(reply.value["target"]["entity"]["name"], json!("Player"));
    assert_eq!(screenshot_entities(&mut harness), 0);

    // Cancelled while it waits: the answer is CANCELLED and Bevy is asked for nothing more.
    let pending = harness.start("view", "screenshot", json!({}), ProgressSink::disabled());
    harness.run_frames(1);
    pending.cancel.cancel();
    let answer = harness.finish(&pending);
    let code = answer.err().map(|error| error.code.to_string());
    assert_eq!(code.as_deref(), Some("CANCELLED"));
    // A request the renderer already picked up is finished and removed by Bevy itself, within
    // a few frames; the app keeps running (no command on a despawned entity).
    for _ in 0..120 {
        if screenshot_entities(&mut harness) == 0 {
            break;
        }
        harness.run_frames(1);
    }
    assert_eq!(screenshot_entities(&mut harness), 0);
    let after = harness
        .call_reply("view", "screenshot", json!({"maxWidth": 64}))
        .unwrap_or_else(|error| panic!("{error:?}"));
    assert_eq!(after.images.len(), 1, "the app still captures");
}
