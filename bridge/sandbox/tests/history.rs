//! `history.checkpoint` and `history.diff` on the real sandbox: a paused world compares equal to
//! itself; every kind of change shows with its before and after values; two checkpoints compare
//! without the world; the checkpoints held are listed; names are checked; the number of checkpoints
//! stays bounded.

use bevy_mcp_bridge::test_support::MAX_CHECKPOINTS;
use bevy_mcp_sandbox::Velocity;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(harness: &mut Harness, tool: &str, action: &str, params: Value) -> Value {
    harness
        .call(tool, action, params)
        .unwrap_or_else(|error| panic!("{tool}.{action}: {error}: {:?}", error.details))
}

/// Runs each call in turn; each must succeed.
fn apply(harness: &mut Harness, calls: &[(&str, &str, Value)]) {
    for (tool, action, params) in calls {
        ok(harness, tool, action, params.clone());
    }
}

fn refused(harness: &mut Harness, tool: &str, action: &str, params: Value) -> ToolError {
    match harness.call(tool, action, params) {
        Ok(value) => panic!("{tool}.{action} should fail: {value}"),
        Err(error) => error,
    }
}

/// The sandbox with game time paused, so frames passing change nothing by themselves.
fn paused() -> Harness {
    let mut harness = Harness::new();
    ok(&mut harness, "control_app", "pause", json!({}));
    harness
}

fn changed_named<'a>(diff: &'a Value, name: &str) -> &'a Value {
    diff["entitiesChanged"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["name"] == json!(name)))
        .unwrap_or_else(|| panic!("{name} is among the changed entities: {diff}"))
}

#[test]
fn a_paused_world_is_the_same_as_its_checkpoint() {
    let mut harness = paused();
    let taken = ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "start"}),
    );
    assert!(
        taken["entities"].as_u64().is_some_and(|count| count >= 6),
        "{taken}"
    );
    assert!(
        taken["resources"].as_u64().is_some_and(|count| count >= 2),
        "{taken}"
    );
    harness.run_frames(5);
    let diff = ok(&mut harness, "history", "diff", json!({"from": "start"}));
    assert_eq!(diff["same"], json!(true), "{diff}");
    assert_eq!(diff["to"], json!("now"));
}

#[test]
fn every_kind_of_change_shows_with_before_and_after() {
    let mut harness = paused();
    apply(
        &mut harness,
        &[
            ("history", "checkpoint", json!({"name": "before"})),
            ("control_entity", "spawn", json!({"name": "Probe"})),
            ("control_entity", "despawn", json!({"entity": "Crate"})),
            (
                "control_entity",
                "mutate_component",
                json!({"entity": "Goblin", "component": "Health", "path": ".current", "value": 5}),
            ),
            (
                "control_entity",
                "rename",
                json!({"entity": "Orc", "name": "Grunt"}),
            ),
            (
                "control_entity",
                "remove_components",
                json!({"entity": "Player", "components": ["Weapon"]}),
            ),
            (
                "manage_resource",
                "mutate",
                json!({"resource": "Score", "path": ".red", "value": 3}),
            ),
        ],
    );
    let diff = ok(&mut harness, "history", "diff", json!({"from": "before"}));
    assert_eq!(diff["same"], json!(false));
    assert_eq!(
        diff["counts"],
        json!({"entitiesAdded": 1, "entitiesRemoved": 1, "entitiesChanged": 3, "resourcesAdded": 0, "resourcesRemoved": 0, "resourcesChanged": 1}),
        "{diff}"
    );
    assert_eq!(diff["entitiesAdded"][0]["name"], json!("Probe"));
    assert_eq!(diff["entitiesRemoved"][0]["name"], json!("Crate"));
    assert!(
        diff["entitiesRemoved"][0]["components"]["bevy_transform::components::transform::Transform"]
            .is_object(),
        "a removed entity shows what it held: {diff}"
    );
    let goblin = changed_named(&diff, "Goblin");
    assert_eq!(
        goblin["changed"],
        json!([{"component": "bevy_mcp_sandbox::Health", "before": {"current": 30.0, "max": 30.0}, "after": {"current": 5.0, "max": 30.0}}])
    );
    let grunt = changed_named(&diff, "Grunt");
    assert_eq!(
        grunt["changed"],
        json!([{"component": "bevy_ecs::name::Name", "before": "Orc", "after": "Grunt"}])
    );
    let player = changed_named(&diff, "Player");
    assert_eq!(
        player["removed"]["bevy_mcp_sandbox::Weapon"],
        json!({"Sword": {"damage": 12.5, "enchanted": true}})
    );
    assert_eq!(
        diff["resourcesChanged"],
        json!([{"resource": "bevy_mcp_sandbox::Score", "before": {"red": 0, "blue": 0}, "after": {"red": 3, "blue": 0}}])
    );
}

#[test]
fn two_checkpoints_compare_without_the_world() {
    let mut harness = paused();
    ok(&mut harness, "history", "checkpoint", json!({"name": "a"}));
    ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "Probe"}),
    );
    ok(&mut harness, "history", "checkpoint", json!({"name": "b"}));
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": "Probe"}),
    );
    let between = ok(
        &mut harness,
        "history",
        "diff",
        json!({"from": "a", "to": "b"}),
    );
    assert_eq!(
        (
            between["to"].clone(),
            between["counts"]["entitiesAdded"].clone()
        ),
        (json!("b"), json!(1))
    );
    let since = ok(&mut harness, "history", "diff", json!({"from": "a"}));
    assert_eq!(
        since["same"],
        json!(true),
        "the probe came and went: {since}"
    );
}

#[test]
fn the_checkpoints_held_are_listed_oldest_first_with_their_size() {
    let mut harness = paused();
    let none = ok(&mut harness, "history", "list_checkpoints", json!({}));
    assert_eq!(
        (none["held"].clone(), none["checkpoints"].clone()),
        (json!(0), json!([]))
    );
    assert_eq!(none["limits"]["checkpoints"], json!(MAX_CHECKPOINTS));
    let first = ok(&mut harness, "history", "checkpoint", json!({"name": "a"}));
    ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "Probe"}),
    );
    harness.run_frames(3);
    let second = ok(&mut harness, "history", "checkpoint", json!({"name": "b"}));
    let listed = ok(&mut harness, "history", "list_checkpoints", json!({}));
    let rows = listed["checkpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&Value> = rows.iter().map(|row| &row["name"]).collect();
    assert_eq!(names, [&json!("a"), &json!("b")], "{listed}");
    for (row, taken) in rows.iter().zip([&first, &second]) {
        for field in ["frame", "entities", "resources", "bytes"] {
            assert_eq!(row[field], taken[field], "{field}: {row} against {taken}");
        }
    }
    assert_eq!(
        rows[1]["entities"].as_u64(),
        rows[0]["entities"].as_u64().map(|count| count + 1),
        "the probe is in the second only"
    );
    let ages: Vec<Option<u64>> = rows.iter().map(|row| row["framesAgo"].as_u64()).collect();
    assert!(
        matches!(ages[..], [Some(older), Some(newer)] if older >= newer + 3),
        "{ages:?}"
    );
    let total = first["bytes"].as_u64().zip(second["bytes"].as_u64());
    assert_eq!(
        listed["bytes"].as_u64(),
        total.map(|(a, b)| a + b),
        "{listed}"
    );
    assert_eq!(listed["held"], json!(2));
}

#[test]
fn names_are_checked_and_checkpoints_bounded() {
    let mut harness = paused();
    ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "kept"}),
    );
    let taken = refused(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "kept"}),
    );
    assert_eq!(taken.code.as_str(), "CHECKPOINT_EXISTS");
    assert_eq!(
        taken.next_call,
        Some(
            json!({"operation": "execute", "tool": "history", "action": "checkpoint", "params": {"name": "kept", "overwrite": true}})
        )
    );
    ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "kept", "overwrite": true}),
    );
    let missing = refused(&mut harness, "history", "diff", json!({"from": "kpet"}));
    assert_eq!(missing.code.as_str(), "CHECKPOINT_NOT_FOUND");
    assert_eq!(missing.suggestions, ["kept"]);
    let mut last = Value::Null;
    for index in 0..MAX_CHECKPOINTS {
        last = ok(
            &mut harness,
            "history",
            "checkpoint",
            json!({"name": format!("c{index}")}),
        );
    }
    assert_eq!(
        last["dropped"],
        json!("kept"),
        "the oldest goes, and the reply says so"
    );
    assert_eq!(
        last["checkpoints"].as_array().map(Vec::len),
        Some(MAX_CHECKPOINTS)
    );
}

#[test]
fn checkpoint_changes_diff_restore_is_exact() {
    let mut harness = paused();
    ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "start"}),
    );
    let base_before = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Base"}),
    )["entity"]["entity"]
        .clone();
    // Many changes: spawns (one under the player), despawns (one with a child), a reparent,
    // component values, names, components added and removed, a resource.
    apply(
        &mut harness,
        &[
            (
                "control_entity",
                "spawn",
                json!({"name": "Probe", "parent": "Player"}),
            ),
            ("control_entity", "spawn", json!({"name": "Loose"})),
            ("control_entity", "despawn", json!({"entity": "Base"})),
            ("control_entity", "despawn", json!({"entity": "Crate"})),
            (
                "control_entity",
                "set_parent",
                json!({"entity": "Orc", "parent": "Loose"}),
            ),
            (
                "control_entity",
                "mutate_component",
                json!({"entity": "Goblin", "component": "Health", "path": ".current", "value": 1}),
            ),
            (
                "control_entity",
                "rename",
                json!({"entity": "Player", "name": "Hero"}),
            ),
            (
                "control_entity",
                "insert_components",
                json!({"entity": "Goblin", "components": {"Velocity": {"linear": [0, 9, 0]}}}),
            ),
            (
                "control_entity",
                "remove_components",
                json!({"entity": "Hero", "components": ["Inventory"]}),
            ),
            (
                "manage_resource",
                "mutate",
                json!({"resource": "Score", "path": ".blue", "value": 7}),
            ),
        ],
    );
    let changed = ok(&mut harness, "history", "diff", json!({"from": "start"}));
    assert_eq!(changed["same"], json!(false));

    let restored = ok(&mut harness, "history", "restore", json!({"name": "start"}));
    assert_eq!(
        restored["despawned"],
        json!(2),
        "Probe and Loose: {restored}"
    );
    // The bridge held what it despawned: all three come back whole, under their own ids.
    assert_eq!(
        restored["broughtBack"],
        json!(3),
        "Base, its Turret and Crate come back: {restored}"
    );
    assert_eq!(restored["respawned"], json!({}), "{restored}");
    assert_eq!(restored["notRestored"], json!([]), "{restored}");

    let after = ok(&mut harness, "history", "diff", json!({"from": "start"}));
    assert_eq!(
        after["same"],
        json!(true),
        "the world is the checkpoint again: {after}"
    );
    // The turret hangs under the base again, and the game sees the old values.
    let turret = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Turret"}),
    );
    let base = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Base"}),
    );
    assert_eq!(
        turret["parent"]["entity"], base["entity"]["entity"],
        "{turret}"
    );
    assert_eq!(
        base["entity"]["entity"], base_before,
        "the same entity: {base}"
    );
    let orc = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Orc"}),
    );
    assert!(orc["parent"].is_null(), "the orc is a root again: {orc}");
    let player = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Player"}),
    );
    assert!(player["components"]["bevy_mcp_sandbox::Inventory"].is_object());
    let score = ok(
        &mut harness,
        "inspect",
        "get_resource",
        json!({"resource": "Score"}),
    );
    assert_eq!(score["value"], json!({"red": 0, "blue": 0}));
}

#[test]
fn a_restore_of_an_unknown_checkpoint_changes_nothing() {
    let mut harness = paused();
    apply(
        &mut harness,
        &[
            ("history", "checkpoint", json!({"name": "start"})),
            ("control_entity", "spawn", json!({"name": "Probe"})),
        ],
    );
    let missing = refused(&mut harness, "history", "restore", json!({"name": "strat"}));
    assert_eq!(missing.code.as_str(), "CHECKPOINT_NOT_FOUND");
    assert_eq!(missing.suggestions, ["start"]);
    assert_eq!(
        missing.next_call,
        Some(
            json!({"operation": "execute", "tool": "history", "action": "list_checkpoints", "params": {}})
        )
    );
    let diff = ok(&mut harness, "history", "diff", json!({"from": "start"}));
    assert_eq!(
        diff["counts"]["entitiesAdded"],
        json!(1),
        "the probe is still there"
    );
}

#[test]
fn restore_leaves_what_the_write_policy_protects() {
    let mut harness = Harness::configured(
        |config| config.with_protected_type::<Velocity>("the physics step owns it"),
        |_| {},
    );
    ok(&mut harness, "control_app", "pause", json!({}));
    ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "start"}),
    );
    // The game (not the bridge: the policy refuses that) speeds the goblin up.
    let goblin = harness.entity("Goblin");
    if let Some(mut velocity) = harness.world().get_mut::<Velocity>(goblin) {
        velocity.linear.y = 9.0;
    }
    ok(
        &mut harness,
        "control_entity",
        "rename",
        json!({"entity": "Orc", "name": "Grunt"}),
    );
    let restored = ok(&mut harness, "history", "restore", json!({"name": "start"}));
    assert_eq!(
        restored["notRestored"],
        json!([{"type": "bevy_mcp_sandbox::Velocity", "reason": "protected: the physics step owns it"}]),
        "{restored}"
    );
    let diff = ok(&mut harness, "history", "diff", json!({"from": "start"}));
    assert_eq!(
        diff["counts"]["entitiesChanged"],
        json!(1),
        "the name came back, the protected velocity did not: {diff}"
    );
    assert_eq!(
        changed_named(&diff, "Goblin")["changed"][0]["component"],
        json!("bevy_mcp_sandbox::Velocity")
    );
}
