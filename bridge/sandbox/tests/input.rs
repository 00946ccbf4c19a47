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

#[test]
fn a_relative_move_arrives_as_mouse_motion_spread_over_its_frames() {
    use bevy::input::mouse::AccumulatedMouseMotion;
    let mut harness = stepped_sandbox();
    let pending = harness.start(
        "input",
        "move_mouse",
        json!({"by": {"x": 120, "y": -30}, "frames": 10}),
        ProgressSink::disabled(),
    );
    let mut per_frame = Vec::new();
    for _ in 0..14 {
        harness.run_frames(1);
        let delta = harness
            .world()
            .get_resource::<AccumulatedMouseMotion>()
            .map_or(bevy::math::Vec2::NAN, |motion| motion.delta);
        per_frame.push(delta);
    }
    let answer = ok(harness.finish(&pending));
    assert_eq!(answer["moved"], json!([120.0, -30.0]));
    assert_eq!(answer["points"], json!(0));
    assert_eq!(answer["position"], Value::Null);
    let moving: Vec<_> = per_frame
        .iter()
        .filter(|delta| **delta != bevy::math::Vec2::ZERO)
        .collect();
    assert_eq!(moving.len(), 10, "one part per frame: {per_frame:?}");
    let total: bevy::math::Vec2 = per_frame.iter().sum();
    assert!(
        (total - bevy::math::Vec2::new(120.0, -30.0)).length() < 1e-3,
        "{total}"
    );
}

#[test]
fn a_cursor_position_in_a_headless_app_is_refused_with_what_works_instead() {
    let mut harness = stepped_sandbox();
    let refused = harness
        .call("input", "move_mouse", json!({"to": {"x": 10, "y": 10}}))
        .err()
        .unwrap_or_else(|| panic!("there is no window to put a cursor in"));
    assert_eq!(refused.code.to_string(), "INPUT_UNAVAILABLE");
    assert!(refused.message.contains("by"), "{}", refused.message);
    let both = harness
        .call(
            "input",
            "move_mouse",
            json!({"to": {"x": 1, "y": 1}, "by": {"x": 1, "y": 0}}),
        )
        .err()
        .unwrap_or_else(|| panic!("to and by together are refused"));
    assert_eq!(both.code.to_string(), "INVALID_PARAMS");
}

/// The cursor in a window the app has (a `Window` entity; no OS window is opened here).
#[cfg(feature = "render")]
mod in_a_window {
    use bevy::input::ButtonInput;
    use bevy::input::mouse::MouseButton;
    use bevy::math::Vec2;
    use bevy::prelude::{MessageReader, PreUpdate, ResMut, Resource, With};
    use bevy::window::{CursorMoved, PrimaryWindow, Window, WindowEvent, WindowPlugin};
    use bevy_mcp_sandbox::testing::Harness;
    use mcp_native_transport::ProgressSink;
    use serde_json::json;

    use super::ok;

    /// What readers of cursor messages saw.
    #[derive(Resource, Clone, Default)]
    struct SeenMoves {
        cursor_moved: Vec<(Vec2, Option<Vec2>)>,
        window_events: usize,
    }

    fn watch_moves(
        mut moved: MessageReader<CursorMoved>,
        mut events: MessageReader<WindowEvent>,
        mut seen: ResMut<SeenMoves>,
    ) {
        for moved in moved.read() {
            seen.cursor_moved.push((moved.position, moved.delta));
        }
        seen.window_events += events
            .read()
            .filter(|event| matches!(event, WindowEvent::CursorMoved(_)))
            .count();
    }

    fn windowed_sandbox() -> Harness {
        let mut harness = Harness::stepped_with(|app| {
            app.init_resource::<SeenMoves>()
                .add_systems(PreUpdate, watch_moves);
            app.add_plugins(WindowPlugin {
                primary_window: Some(Window {
                    resolution: (800, 600).into(),
                    ..Window::default()
                }),
                exit_condition: bevy::window::ExitCondition::DontExit,
                close_when_requested: false,
                ..WindowPlugin::default()
            });
        });
        harness.run_frames(2);
        harness
    }

    fn cursor(harness: &mut Harness) -> Option<Vec2> {
        let mut windows = harness
            .world()
            .query_filtered::<&Window, With<PrimaryWindow>>();
        windows
            .iter(harness.world())
            .next()
            .and_then(Window::cursor_position)
    }

    fn left_pressed(harness: &mut Harness) -> bool {
        harness
            .world()
            .get_resource::<ButtonInput<MouseButton>>()
            .is_some_and(|input| input.pressed(MouseButton::Left))
    }

    #[test]
    fn a_path_puts_the_cursor_on_each_point_with_cursor_moved_messages() {
        let mut harness = windowed_sandbox();
        let answer = ok(harness.call(
            "input",
            "move_mouse",
            json!({"path": [{"x": 100, "y": 100}, {"x": 300, "y": 120}], "frames": 2}),
        ));
        assert_eq!(answer["points"], json!(2));
        assert_eq!(answer["position"], json!({"x": 300.0, "y": 120.0}));
        assert_eq!(cursor(&mut harness), Some(Vec2::new(300.0, 120.0)));
        let seen = harness.world().resource::<SeenMoves>().clone();
        // Each move carries its delta, as winit's do, and reaches the WindowEvent stream that
        // picking reads as well.
        assert_eq!(
            seen.cursor_moved,
            vec![
                (Vec2::new(100.0, 100.0), None),
                (Vec2::new(300.0, 120.0), Some(Vec2::new(200.0, 20.0)))
            ]
        );
        assert_eq!(seen.window_events, 2);
        let held = ok(harness.call("input", "held", json!({})));
        assert_eq!(
            held["cursors"][0]["position"],
            json!({"x": 300.0, "y": 120.0})
        );
    }

    #[test]
    fn a_drag_holds_its_button_over_the_whole_path_and_releases_it_at_the_end() {
        let mut harness = windowed_sandbox();
        let pending = harness.start(
            "input",
            "drag",
            json!({"path": [{"x": 10, "y": 10}, {"x": 50, "y": 10}, {"x": 90, "y": 40}], "frames": 3}),
            ProgressSink::disabled(),
        );
        let mut seen = Vec::new();
        for _ in 0..14 {
            harness.run_frames(1);
            let pressed = left_pressed(&mut harness);
            seen.push((pressed, cursor(&mut harness)));
        }
        let answer = ok(harness.finish(&pending));
        assert_eq!(answer["button"], json!("Left"));
        assert_eq!(answer["releasedEarly"], json!(false));
        let held_at: Vec<Option<Vec2>> = seen
            .iter()
            .filter(|(pressed, _)| *pressed)
            .map(|(_, at)| *at)
            .collect();
        assert_eq!(
            held_at.len(),
            9,
            "three frames on each of three points: {seen:?}"
        );
        assert_eq!(held_at.first(), Some(&Some(Vec2::new(10.0, 10.0))));
        assert_eq!(held_at.last(), Some(&Some(Vec2::new(90.0, 40.0))));
        assert!(!left_pressed(&mut harness), "released at the end");
        assert_eq!(cursor(&mut harness), Some(Vec2::new(90.0, 40.0)));
    }

    #[test]
    fn a_cancelled_drag_releases_its_button() {
        let mut harness = windowed_sandbox();
        let pending = harness.start(
            "input",
            "drag",
            json!({"path": [{"x": 10, "y": 10}, {"x": 700, "y": 500}], "frames": 300}),
            ProgressSink::disabled(),
        );
        harness.run_frames(4);
        assert!(left_pressed(&mut harness));
        pending.cancel.cancel();
        let code = harness
            .finish(&pending)
            .err()
            .map(|error| error.code.to_string());
        assert_eq!(code.as_deref(), Some("CANCELLED"));
        harness.run_frames(1);
        assert!(
            !left_pressed(&mut harness),
            "the next frame sees it released"
        );
    }

    #[test]
    fn a_point_outside_the_window_is_refused_and_changes_nothing() {
        let mut harness = windowed_sandbox();
        let refused = harness
            .call("input", "click", json!({"at": {"x": 900, "y": 10}}))
            .err()
            .unwrap_or_else(|| panic!("900 is outside an 800 pixel wide window"));
        assert_eq!(refused.code.to_string(), "INVALID_PARAMS");
        assert!(refused.message.contains("outside"), "{}", refused.message);
        assert_eq!(cursor(&mut harness), None);
        harness.run_frames(1);
        assert!(!left_pressed(&mut harness));
    }

    #[test]
    fn a_click_at_a_point_places_the_cursor_in_the_frame_of_the_press() {
        let mut harness = windowed_sandbox();
        let pending = harness.start(
            "input",
            "click",
            json!({"at": {"x": 400, "y": 300}}),
            ProgressSink::disabled(),
        );
        let mut cursor_when_pressed = None;
        for _ in 0..5 {
            harness.run_frames(1);
            let just_pressed = harness
                .world()
                .get_resource::<ButtonInput<MouseButton>>()
                .is_some_and(|input| input.just_pressed(MouseButton::Left));
            if just_pressed {
                cursor_when_pressed = Some(cursor(&mut harness));
            }
        }
        assert_eq!(cursor_when_pressed, Some(Some(Vec2::new(400.0, 300.0))));
        let answer = ok(harness.finish(&pending));
        assert_eq!(answer["position"], json!({"x": 400.0, "y": 300.0}));
    }
}

/// What a game's gesture readers saw, frame by frame.
#[derive(bevy::prelude::Resource, Default)]
struct SeenGestures(Vec<String>);

fn read_gestures(
    mut pinches: bevy::prelude::MessageReader<bevy::input::gestures::PinchGesture>,
    mut rotations: bevy::prelude::MessageReader<bevy::input::gestures::RotationGesture>,
    mut pans: bevy::prelude::MessageReader<bevy::input::gestures::PanGesture>,
    mut taps: bevy::prelude::MessageReader<bevy::input::gestures::DoubleTapGesture>,
    mut seen: bevy::prelude::ResMut<SeenGestures>,
) {
    seen.0
        .extend(pinches.read().map(|pinch| format!("pinch {}", pinch.0)));
    seen.0
        .extend(rotations.read().map(|turn| format!("rotate {}", turn.0)));
    seen.0.extend(
        pans.read()
            .map(|pan| format!("pan {} {}", pan.0.x, pan.0.y)),
    );
    seen.0.extend(taps.read().map(|_| "double tap".to_owned()));
}

#[test]
fn gestures_reach_the_games_readers_as_bevys_messages() {
    let mut harness = Harness::with_app(|app| {
        app.init_resource::<SeenGestures>()
            .add_systems(bevy::app::Update, read_gestures);
    });
    harness.run_frames(2);
    for params in [
        json!({"kind": "pinch", "amount": 0.25}),
        json!({"kind": "rotate", "amount": -0.5}),
        json!({"kind": "pan", "x": 12, "y": -4}),
        json!({"kind": "double_tap"}),
    ] {
        let answer = ok(harness.call("input", "gesture", params));
        assert!(answer["frame"].is_u64(), "{answer}");
        harness.run_frames(1);
    }
    let seen = harness
        .world()
        .get_resource::<SeenGestures>()
        .map(|seen| seen.0.clone());
    assert_eq!(
        seen,
        Some(vec![
            "pinch 0.25".to_owned(),
            "rotate -0.5".to_owned(),
            "pan 12 -4".to_owned(),
            "double tap".to_owned(),
        ])
    );
    let refused = harness.call("input", "gesture", json!({"kind": "pinch", "amount": 50}));
    assert!(
        refused.is_err(),
        "an amount outside the schema's bounds is refused"
    );
}
