//! The `input` tool on a real App, stepped with a fixed clock (1/60 s per frame, one fixed step per
//! frame): held keys move the player by exactly what its speed gives, typed text reaches the
//! sandbox's text consumer, and no key is ever left pressed.

use bevy::input::ButtonInput;
use bevy::input::keyboard::KeyCode;
use bevy::prelude::Transform;
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{FIXED_HZ, PLAYER_SPEED, TypedText};
use mcp_native_transport::ProgressSink;
use mcp_vocabulary::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error:?}"))
}

/// The sandbox on a fixed clock, its player standing still.
fn stepped_sandbox() -> Harness {
    let mut harness = Harness::stepped();
    harness.run_frames(2);
    harness
}

fn player_x(harness: &mut Harness) -> f32 {
    let player = harness.entity("Player");
    harness
        .world()
        .get::<Transform>(player)
        .map_or(f32::NAN, |transform| transform.translation.x)
}

fn pressed(harness: &mut Harness, key: KeyCode) -> bool {
    harness
        .world()
        .get_resource::<ButtonInput<KeyCode>>()
        .is_some_and(|input| input.pressed(key))
}

#[test]
fn holding_arrow_right_for_30_frames_moves_the_player_by_its_speed() {
    let mut harness = stepped_sandbox();
    let before = player_x(&mut harness);
    let answer = ok(harness.call(
        "input",
        "press_keys",
        json!({"keys": ["ArrowRight"], "frames": 30}),
    ));
    assert_eq!(answer["keys"], json!(["ArrowRight"]));
    assert_eq!(answer["frames"], json!(30));
    assert_eq!(answer["releasedEarly"], json!(false));
    let pressed_frame = answer["pressedFrame"].as_u64().unwrap_or(0);
    let released_frame = answer["releasedFrame"].as_u64().unwrap_or(0);
    assert_eq!(released_frame - pressed_frame, 30);
    harness.run_frames(3);
    assert!(!pressed(&mut harness, KeyCode::ArrowRight));
    let moved = player_x(&mut harness) - before;
    let expected = PLAYER_SPEED * 30.0 / FIXED_HZ as f32;
    assert!(
        (moved - expected).abs() < 1e-4,
        "moved {moved}, expected {expected}"
    );
    // Nothing is left held by the bridge.
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["keys"], json!([]));
    assert_eq!(held["heldByBridge"], json!([]));
}

#[test]
fn a_chord_of_letters_and_names_is_pressed_in_the_same_frames() {
    let mut harness = stepped_sandbox();
    let pending = harness.start(
        "input",
        "press_keys",
        json!({"keys": ["ShiftLeft", "w"], "frames": 5}),
        ProgressSink::disabled(),
    );
    harness.run_frames(3);
    assert!(pressed(&mut harness, KeyCode::ShiftLeft));
    assert!(pressed(&mut harness, KeyCode::KeyW));
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["keys"], json!(["KeyW", "ShiftLeft"]));
    assert_eq!(held["heldByBridge"][0]["action"], json!("press_keys"));
    let answer = ok(harness.finish(&pending));
    assert_eq!(answer["keys"], json!(["ShiftLeft", "KeyW"]));
    harness.run_frames(1);
    assert!(!pressed(&mut harness, KeyCode::KeyW));
}

#[test]
fn a_cancelled_hold_releases_its_keys_at_once() {
    let mut harness = stepped_sandbox();
    let pending = harness.start(
        "input",
        "press_keys",
        json!({"keys": ["ArrowUp"], "frames": 600}),
        ProgressSink::disabled(),
    );
    harness.run_frames(5);
    assert!(pressed(&mut harness, KeyCode::ArrowUp));
    pending.cancel.cancel();
    let answer = harness.finish(&pending);
    let code = answer.err().map(|error| error.code.to_string());
    assert_eq!(code.as_deref(), Some("CANCELLED"));
    harness.run_frames(1);
    assert!(
        !pressed(&mut harness, KeyCode::ArrowUp),
        "the next frame sees it released"
    );
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["heldByBridge"], json!([]));
}

#[test]
fn release_all_ends_running_holds_early() {
    let mut harness = stepped_sandbox();
    let pending = harness.start(
        "input",
        "press_keys",
        json!({"keys": ["ArrowLeft"], "frames": 600}),
        ProgressSink::disabled(),
    );
    harness.run_frames(4);
    // A key another call holds is refused, and nothing else happens.
    let clash = harness
        .call("input", "press_keys", json!({"keys": ["ArrowLeft"]}))
        .err()
        .map(|error| error.code.to_string());
    assert_eq!(clash.as_deref(), Some("INVALID_PARAMS"));
    let released = ok(harness.call("input", "release_all", json!({})));
    assert_eq!(released, json!({"released": ["ArrowLeft"], "calls": 1}));
    let answer = ok(harness.finish(&pending));
    assert_eq!(answer["releasedEarly"], json!(true));
    harness.run_frames(1);
    assert!(!pressed(&mut harness, KeyCode::ArrowLeft));
}

#[test]
fn typed_text_reaches_a_text_consumer() {
    let mut harness = stepped_sandbox();
    let answer = ok(harness.call("input", "type_text", json!({"text": "Ada 42!"})));
    assert_eq!(answer["typed"], json!(7));
    assert_eq!(answer["frames"], json!(7));
    harness.run_frames(1);
    ok(harness.call("input", "press_keys", json!({"keys": ["Backspace"]})));
    harness.run_frames(1);
    let typed = harness
        .world()
        .get_resource::<TypedText>()
        .map(|typed| typed.text.clone());
    assert_eq!(typed.as_deref(), Some("Ada 42"));
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["keys"], json!([]));
}

#[test]
fn unknown_key_names_get_the_closest_real_ones() {
    let mut harness = stepped_sandbox();
    let refused = harness
        .call("input", "press_keys", json!({"keys": ["ArowRight"]}))
        .err()
        .unwrap_or_else(|| panic!("a misspelt key is refused"));
    assert_eq!(refused.code.to_string(), "INVALID_VALUE");
    assert_eq!(
        refused.suggestions.first().map(String::as_str),
        Some("ArrowRight")
    );
    assert!(refused.message.contains("KeyCode"), "{}", refused.message);
    harness.run_frames(1);
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["keys"], json!([]));
    assert_eq!(held["heldByBridge"], json!([]));
}

#[test]
fn a_simulated_gamepad_stick_moves_the_player_and_unplugs() {
    let mut harness = stepped_sandbox();
    let before = player_x(&mut harness);
    let answer = ok(harness.call(
        "input",
        "gamepad",
        json!({"axes": {"LeftStickX": 1.0}, "frames": 30}),
    ));
    assert_eq!(answer["connected"], json!(true));
    assert_eq!(answer["axes"], json!({"LeftStickX": 1.0}));
    harness.run_frames(3);
    let moved = player_x(&mut harness) - before;
    let expected = PLAYER_SPEED * 30.0 / FIXED_HZ as f32;
    assert!(
        (moved - expected).abs() < 1e-4,
        "moved {moved}, expected {expected}"
    );
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["gamepads"][0]["simulated"], json!(true));
    assert_eq!(
        held["gamepads"][0]["leftStick"],
        json!([0.0, 0.0]),
        "centred again"
    );
    // The same gamepad is used again, not a second one.
    let again = ok(harness.call("input", "gamepad", json!({"buttons": ["South"]})));
    assert_eq!(again["connected"], json!(false));
    assert_eq!(again["gamepad"], answer["gamepad"]);
    let unplugged = ok(harness.call("input", "disconnect_gamepad", json!({})));
    assert_eq!(unplugged["disconnected"][0], answer["gamepad"]);
    harness.run_frames(2);
    let held = ok(harness.call("input", "held", json!({})));
    assert_eq!(held["gamepads"], json!([]));
    let bad = harness
        .call("input", "gamepad", json!({"buttons": ["Suoth"]}))
        .err()
        .unwrap_or_else(|| panic!("a misspelt button is refused"));
    assert_eq!(bad.suggestions.first().map(String::as_str), Some("South"));
}

#[test]
fn a_double_click_presses_twice_and_a_scroll_is_seen_once() {
    use bevy::input::mouse::{AccumulatedMouseScroll, MouseButton};
    let mut harness = stepped_sandbox();
    let pending = harness.start(
        "input",
        "click",
        json!({"button": "Right", "clicks": 2, "frames": 2}),
        ProgressSink::disabled(),
    );
    let mut presses = 0;
    let mut held_frames = 0;
    for _ in 0..12 {
        harness.run_frames(1);
        let input = harness.world().get_resource::<ButtonInput<MouseButton>>();
        presses += usize::from(input.is_some_and(|input| input.just_pressed(MouseButton::Right)));
        held_frames += usize::from(input.is_some_and(|input| input.pressed(MouseButton::Right)));
    }
    let answer = ok(harness.finish(&pending));
    assert_eq!(answer["clicks"], json!(2));
    assert_eq!(
        (presses, held_frames),
        (2, 4),
        "two presses of two frames each"
    );

    ok(harness.call("input", "scroll", json!({"y": 3})));
    harness.run_frames(1);
    let scrolled = harness
        .world()
        .get_resource::<AccumulatedMouseScroll>()
        .map(|scroll| scroll.delta.y);
    assert_eq!(scrolled, Some(3.0));
    harness.run_frames(1);
    let after = harness
        .world()
        .get_resource::<AccumulatedMouseScroll>()
        .map(|scroll| scroll.delta.y);
    assert_eq!(after, Some(0.0), "one frame only");
}
