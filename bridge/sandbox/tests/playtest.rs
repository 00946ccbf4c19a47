//! `playtest.expect` on a real App: component and resource fields, existence and counts, pass and
//! fail with the actual value and a diff, and the checks that refuse a malformed expectation.

use bevy::prelude::{Transform, Vec3};
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{FIXED_HZ, PLAYER_SPEED, Score};
use mcp_vocabulary::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error:?}"))
}

fn refused(result: Result<Value, ToolError>) -> ToolError {
    result
        .err()
        .unwrap_or_else(|| panic!("the expectation is refused"))
}

/// The sandbox with the player standing still at x = 3.
fn sandbox() -> Harness {
    let mut harness = Harness::stepped();
    let player = harness.entity("Player");
    if let Some(mut transform) = harness.world().get_mut::<Transform>(player) {
        transform.translation = Vec3::new(3.0, 0.0, 0.0);
    }
    harness
}

#[test]
fn component_fields_pass_or_fail_with_the_actual_value_and_a_diff() {
    let mut harness = sandbox();
    let pass = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "value": 3.0}),
    ));
    assert_eq!(pass["pass"], json!(true));
    assert_eq!(pass["check"], json!("component"));
    assert_eq!(pass["subject"], json!("Player: Transform.translation.x"));
    assert_eq!(pass["actual"], json!(3.0));
    assert!(pass.get("diff").is_none());

    let fail = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Transform", "path": ".translation", "value": [1.0, 0.0, 0.0]}),
    ));
    assert_eq!(fail["pass"], json!(false));
    assert_eq!(fail["actual"], json!([3.0, 0.0, 0.0]));
    assert_eq!(
        fail["diff"],
        json!([{"path": "[0]", "expected": 1.0, "actual": 3.0, "difference": 2.0}])
    );
    assert!(
        fail["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("fail"),
        "{fail}"
    );

    let near = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "value": 3.0004, "tolerance": 0.001}),
    ));
    assert_eq!(near["pass"], json!(true));
    let ordered = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "op": "lt", "value": 2}),
    ));
    assert_eq!(ordered["pass"], json!(false));
    assert_eq!(ordered["diff"][0]["difference"], json!(1.0));

    // An entity without the component fails with no actual value.
    let missing = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Crate", "component": "Health", "path": ".current", "value": 10}),
    ));
    assert_eq!(missing["pass"], json!(false));
    assert_eq!(missing["actual"], Value::Null);
}

#[test]
fn resources_existence_and_counts() {
    let mut harness = sandbox();
    let zero = ok(harness.call(
        "playtest",
        "expect",
        json!({"resource": "Score", "path": ".blue", "value": 0}),
    ));
    assert_eq!(zero["pass"], json!(true));
    assert_eq!(zero["check"], json!("resource"));
    if let Some(mut score) = harness.world().get_resource_mut::<Score>() {
        score.blue = 5;
    }
    let five = ok(harness.call(
        "playtest",
        "expect",
        json!({"resource": "Score", "path": ".blue", "value": 0}),
    ));
    assert_eq!(five["pass"], json!(false));
    assert_eq!(five["actual"], json!(5));

    let alive = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Goblin", "exists": false}),
    ));
    assert_eq!(alive["pass"], json!(false));
    assert_eq!(alive["actual"], json!(true));
    let goblin = harness.entity("Goblin");
    harness.world().despawn(goblin);
    let gone = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Goblin", "exists": false}),
    ));
    assert_eq!(gone["pass"], json!(true));

    // Player, Orc, Base and Turret have a team now; the goblin is gone.
    let teams = ok(harness.call(
        "playtest",
        "expect",
        json!({"count": {"with": ["Team"]}, "value": 4}),
    ));
    assert_eq!(teams["pass"], json!(true), "{teams}");
    let unarmed = ok(harness.call(
        "playtest",
        "expect",
        json!({"count": {"with": ["Team"], "without": ["Health"]}, "op": "ge", "value": 3}),
    ));
    assert_eq!(unarmed["pass"], json!(false));
    assert_eq!(unarmed["actual"], json!(2), "Base and Turret");
}

#[test]
fn held_keys_then_an_expectation_is_a_playtest() {
    let mut harness = sandbox();
    ok(harness.call(
        "input",
        "press_keys",
        json!({"keys": ["ArrowRight"], "frames": 30}),
    ));
    harness.run_frames(2);
    let expected = 3.0 + PLAYER_SPEED * 30.0 / FIXED_HZ as f32;
    let moved = ok(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "value": expected, "tolerance": 0.0001}),
    ));
    assert_eq!(moved["pass"], json!(true), "{moved}");
}

#[test]
fn malformed_expectations_are_refused_and_say_why() {
    let mut harness = sandbox();
    let nothing = refused(harness.call("playtest", "expect", json!({"value": 1})));
    assert_eq!(nothing.code.to_string(), "INVALID_PARAMS");
    let two = refused(harness.call(
        "playtest",
        "expect",
        json!({"resource": "Score", "count": {"with": ["Team"]}, "value": 1}),
    ));
    assert_eq!(two.code.to_string(), "INVALID_PARAMS");
    let no_value = refused(harness.call(
        "playtest",
        "expect",
        json!({"resource": "Score", "path": ".blue"}),
    ));
    assert_eq!(no_value.code.to_string(), "INVALID_PARAMS");
    let bad_path = refused(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Health", "path": ".curent", "value": 1}),
    ));
    assert_eq!(bad_path.code.to_string(), "PATH_NOT_FOUND");
    let details = bad_path.details.unwrap_or_default();
    assert_eq!(details["suggestions"][0], json!(".current"));
    let bad_variant = refused(harness.call(
        "playtest",
        "expect",
        json!({"entity": "Player", "component": "Team", "value": "Green"}),
    ));
    assert_eq!(bad_variant.code.to_string(), "INVALID_VALUE");
}
