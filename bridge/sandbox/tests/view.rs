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

/// The UI tree of the engine showcase (a panel with a label, drawn by a camera into an image):
/// the nodes with their kind, text and rect; a hidden panel hides its label too.
#[test]
fn the_ui_tree_lists_nodes_as_a_player_sees_them() {
    let mut harness = match Harness::showcase(|config| config) {
        Ok(harness) => harness,
        Err(reason) => {
            assert!(std::env::var_os("CI").is_none(), "{reason}");
            eprintln!("skipping: {reason}");
            return;
        }
    };
    harness.run_frames(3);
    let call = |harness: &mut Harness, tool: &str, action: &str, params| {
        harness
            .call(tool, action, params)
            .unwrap_or_else(|error| panic!("{tool}.{action}: {error:?}"))
    };
    let tree = call(&mut harness, "inspect", "ui_tree", json!({}));
    let panel = &tree["nodes"][0];
    assert_eq!(panel["name"], json!("Panel"), "{tree}");
    assert_eq!(panel["kind"], json!("container"), "{tree}");
    assert_eq!(panel["depth"], json!(0), "{tree}");
    assert_eq!(panel["visible"], json!(true), "{tree}");
    assert_eq!(
        (
            panel["rect"]["width"].as_f64(),
            panel["rect"]["height"].as_f64()
        ),
        (Some(180.0), Some(48.0)),
        "{tree}"
    );
    assert!(panel.get("window").is_none(), "drawn into an image: {tree}");
    let labels = call(
        &mut harness,
        "inspect",
        "ui_tree",
        json!({"text": "score", "kind": "text"}),
    );
    assert_eq!(labels["total"], json!(1), "{labels}");
    assert_eq!(labels["nodes"][0]["text"], json!("Score: 0"), "{labels}");
    assert_eq!(labels["nodes"][0]["parent"], panel["entity"], "{labels}");

    call(
        &mut harness,
        "control_entity",
        "insert_components",
        json!({"entity": "Panel", "components": {"Visibility": "Hidden"}}),
    );
    harness.run_frames(2);
    let hidden = call(&mut harness, "inspect", "ui_tree", json!({"kind": "text"}));
    assert_eq!(hidden["nodes"][0]["visible"], json!(false), "{hidden}");
    assert!(
        hidden["nodes"][0]["notVisible"]
            .as_str()
            .is_some_and(|why| why.contains("hidden")),
        "{hidden}"
    );
    let seen = call(
        &mut harness,
        "inspect",
        "ui_tree",
        json!({"visibleOnly": true}),
    );
    assert_eq!(seen["total"], json!(0), "{seen}");
}
