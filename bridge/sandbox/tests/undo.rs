//! The journal on the real sandbox: every built-in action that changes the world is undone and
//! redone exactly (checked with `history.diff` against checkpoints taken before and after), a
//! change the game made since refuses the undo with `UNDO_CONFLICT` and changes nothing, undo
//! is per session, later steps follow entities that came back under new ids, every other write
//! is listed as not undoable, and the journal stays within its bounds.

use bevy::prelude::{Time, Virtual};
use bevy_mcp_bridge::CATALOG;
use bevy_mcp_bridge::JournalLimits;
use bevy_mcp_bridge::catalog::Effect;
use bevy_mcp_sandbox::Health;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(harness: &mut Harness, tool: &str, action: &str, params: Value) -> Value {
    harness
        .call(tool, action, params)
        .unwrap_or_else(|error| panic!("{tool}.{action}: {error}: {:?}", error.details))
}

fn refused(harness: &mut Harness, tool: &str, action: &str, params: Value) -> ToolError {
    match harness.call(tool, action, params) {
        Ok(value) => panic!("{tool}.{action} should fail: {value}"),
        Err(error) => error,
    }
}

fn checkpoint(harness: &mut Harness, name: &str) {
    ok(
        harness,
        "history",
        "checkpoint",
        json!({"name": name, "overwrite": true}),
    );
}

fn assert_same(harness: &mut Harness, from: &str, what: &str) {
    let diff = ok(harness, "history", "diff", json!({"from": from}));
    assert_eq!(
        diff["same"],
        json!(true),
        "{what}: the world equals {from}: {diff}"
    );
}

/// The world equals `before` but for unreadable components the undo named as not restored.
fn assert_only_unreadable_lost(harness: &mut Harness, undone: &Value, what: &str) {
    let lost: Vec<&str> = undone["notRestored"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|row| row["type"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        !lost.is_empty(),
        "{what}: the undo names what it lost: {undone}"
    );
    let diff = ok(harness, "history", "diff", json!({"from": "before"}));
    assert_eq!(diff["same"], json!(false), "{what}: {diff}");
    for row in diff["entitiesChanged"].as_array().into_iter().flatten() {
        assert_eq!(row["added"], json!({}), "{what}: {row}");
        assert_eq!(row["removed"], json!({}), "{what}: {row}");
        assert_eq!(row["changed"], json!([]), "{what}: {row}");
        let missing = row["removedUnreadable"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            !missing.is_empty()
                && missing
                    .iter()
                    .all(|name| lost.contains(&name.as_str().unwrap_or_default())),
            "{what}: {row} lost only what the undo named: {lost:?}"
        );
    }
    assert_eq!(diff["counts"]["entitiesAdded"], json!(0), "{what}: {diff}");
    assert_eq!(
        diff["counts"]["entitiesRemoved"],
        json!(0),
        "{what}: {diff}"
    );
}

fn game_time(harness: &mut Harness) -> (bool, f64) {
    let state = ok(harness, "control_app", "get_state", json!({}));
    (
        state["paused"].as_bool().unwrap_or_default(),
        state["speed"].as_f64().unwrap_or_default(),
    )
}

/// One undoable action: what to do first, then the call.
struct Case {
    tool: &'static str,
    action: &'static str,
    params: Value,
    setup: &'static [(&'static str, &'static str, &'static str)],
    /// The game despawns entities itself (the bridge cannot hold them): their unreflected
    /// components cannot come back, and undo must say so rather than claim the world is equal.
    loses_unreadable: bool,
}

fn case(tool: &'static str, action: &'static str, params: Value) -> Case {
    Case {
        tool,
        action,
        params,
        setup: &[],
        loses_unreadable: false,
    }
}

/// Every built-in (and sandbox game) action whose calls the journal can take back.
fn undoable_cases() -> Vec<Case> {
    vec![
        case(
            "control_entity",
            "spawn",
            json!({"name": "Probe", "components": {"Health": {"current": 1.0, "max": 2.0}}, "children": [{"name": "Probe child"}], "parent": "Base"}),
        ),
        case("control_entity", "despawn", json!({"entity": "Base"})),
        case(
            "control_entity",
            "despawn_descendants",
            json!({"entity": "Base"}),
        ),
        case(
            "control_entity",
            "duplicate",
            json!({"entity": "Base", "count": 2, "withDescendants": true}),
        ),
        case(
            "control_entity",
            "insert_components",
            json!({"entity": "Crate", "components": {"Health": {"current": 3.0, "max": 9.0}, "Team": "Red"}}),
        ),
        case(
            "control_entity",
            "remove_components",
            json!({"entity": "Player", "components": ["Weapon", "Inventory"]}),
        ),
        case(
            "control_entity",
            "mutate_component",
            json!({"entity": "Goblin", "component": "Health", "path": ".current", "value": 5}),
        ),
        case(
            "control_entity",
            "set_transform",
            json!({"entity": "Orc", "translation": [1, 2, 3], "eulerDegrees": [0, 45, 0]}),
        ),
        case(
            "control_entity",
            "set_parent",
            json!({"entity": "Crate", "parent": "Base"}),
        ),
        case(
            "control_entity",
            "set_parent",
            json!({"entity": "Turret", "parent": null}),
        ),
        case(
            "control_entity",
            "rename",
            json!({"entity": "Orc", "name": "Grunt"}),
        ),
        case(
            "manage_resource",
            "insert",
            json!({"resource": "Score", "value": {"red": 4, "blue": 2}}),
        ),
        case(
            "manage_resource",
            "mutate",
            json!({"resource": "Score", "path": ".blue", "value": 7}),
        ),
        case("manage_resource", "remove", json!({"resource": "Score"})),
        Case {
            setup: &[(
                "manage_resource",
                "insert",
                r#"{"resource": "Score", "value": {"red": 3, "blue": 1}}"#,
            )],
            ..case(
                "manage_resource",
                "reset_to_default",
                json!({"resource": "Score"}),
            )
        },
        case("control_app", "set_speed", json!({"speed": 2.5})),
        case("manage_world", "clear", json!({})),
        Case {
            setup: &[
                (
                    "manage_world",
                    "save",
                    r#"{"name": "saved", "includeResources": true}"#,
                ),
                ("manage_world", "clear", "{}"),
            ],
            ..case("manage_world", "load", json!({"name": "saved"}))
        },
        Case {
            setup: &[
                ("history", "checkpoint", r#"{"name": "mark"}"#),
                ("control_entity", "despawn", r#"{"entity": "Crate"}"#),
                (
                    "manage_resource",
                    "mutate",
                    r#"{"resource": "Score", "path": ".red", "value": 9}"#,
                ),
            ],
            ..case("history", "restore", json!({"name": "mark"}))
        },
        case("game", "add_score", json!({"team": "red", "points": 5})),
        case("game", "spawn_wave", json!({"count": 3})),
        Case {
            setup: &[("game", "spawn_wave", r#"{"count": 2}"#)],
            loses_unreadable: true,
            ..case("game", "reset_level", json!({}))
        },
    ]
}

#[test]
fn every_world_changing_action_is_undone_then_redone_exactly() {
    for case in undoable_cases() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut harness = Harness::paused_in(dir.path());
        let what = format!("{}.{} {}", case.tool, case.action, case.params);
        for (tool, action, params) in case.setup {
            let params: Value = serde_json::from_str(params).expect("setup params");
            ok(&mut harness, tool, action, params);
        }
        checkpoint(&mut harness, "before");
        let time_before = game_time(&mut harness);
        ok(&mut harness, case.tool, case.action, case.params.clone());
        checkpoint(&mut harness, "after");
        let time_after = game_time(&mut harness);
        let listed = ok(&mut harness, "history", "list", json!({"limit": 1}));
        let newest = &listed["entries"][0];
        assert_eq!(
            newest["action"],
            json!(format!("{}.{}", case.tool, case.action)),
            "{what}: {listed}"
        );
        assert_eq!(newest["undoable"], json!(true), "{what}: {listed}");
        assert_eq!(newest["yours"], json!(true), "{what}");

        let undone = ok(&mut harness, "history", "undo", json!({}));
        assert_eq!(undone["undone"][0]["id"], newest["id"], "{what}: {undone}");
        assert_eq!(undone["overwritten"], json!([]), "{what}");
        if case.loses_unreadable {
            assert_only_unreadable_lost(&mut harness, &undone, &what);
        } else {
            assert_same(&mut harness, "before", &format!("{what}, undone"));
        }
        assert_eq!(game_time(&mut harness), time_before, "{what}, undone");

        let redone = ok(&mut harness, "history", "redo", json!({}));
        assert_eq!(redone["redone"][0]["id"], newest["id"], "{what}: {redone}");
        assert_same(&mut harness, "after", &format!("{what}, redone"));
        assert_eq!(game_time(&mut harness), time_after, "{what}, redone");
    }
}

#[test]
fn pausing_and_resuming_are_undone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    ok(&mut harness, "control_app", "resume", json!({}));
    assert!(!game_time(&mut harness).0);
    ok(&mut harness, "history", "undo", json!({}));
    assert!(game_time(&mut harness).0, "paused again");
    ok(&mut harness, "history", "redo", json!({}));
    assert!(!game_time(&mut harness).0, "running again");
    ok(&mut harness, "control_app", "pause", json!({}));
    ok(&mut harness, "history", "undo", json!({}));
    assert!(!game_time(&mut harness).0, "the pause was taken back");
}

/// What an agent does: a mutate through the bridge, journaled.
fn agent_sets_goblin_health(harness: &mut Harness, value: f32) {
    ok(
        harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Goblin", "component": "Health", "path": ".current", "value": value}),
    );
}

/// What the game does: a write of its own, not through the bridge.
fn game_sets_goblin_health(harness: &mut Harness, value: f32) {
    let goblin = harness.entity("Goblin");
    if let Some(mut health) = harness.world().get_mut::<Health>(goblin) {
        health.current = value;
    }
}

fn goblin_health(harness: &mut Harness) -> f32 {
    let goblin = harness.entity("Goblin");
    harness
        .world()
        .get::<Health>(goblin)
        .map(|health| health.current)
        .unwrap_or(f32::NAN)
}

#[test]
fn a_change_the_game_made_since_refuses_the_undo_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    agent_sets_goblin_health(&mut harness, 5.0);
    // The game changes the value after the agent did.
    game_sets_goblin_health(&mut harness, 7.0);
    let error = refused(&mut harness, "history", "undo", json!({}));
    assert_eq!(error.code.as_str(), "UNDO_CONFLICT", "{error}");
    let details = error.details.clone().unwrap_or_default();
    let conflict = &details["conflicts"][0];
    assert_eq!(conflict["expected"]["current"], json!(5.0), "{details}");
    assert_eq!(conflict["current"]["current"], json!(7.0), "{details}");
    assert_eq!(
        error
            .next_call
            .as_ref()
            .map(|call| call["params"]["force"].clone()),
        Some(json!(true)),
        "the way to force it: {:?}",
        error.next_call
    );
    assert_eq!(goblin_health(&mut harness), 7.0, "nothing changed");
    let listed = ok(&mut harness, "history", "list", json!({}));
    assert_eq!(listed["entries"][0]["state"], json!("done"));

    let forced = ok(&mut harness, "history", "undo", json!({"force": true}));
    assert_eq!(forced["overwritten"].as_array().map(Vec::len), Some(1));
    assert_eq!(goblin_health(&mut harness), 30.0);
}

#[test]
fn a_run_of_steps_is_checked_whole_before_any_is_applied() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    agent_sets_goblin_health(&mut harness, 5.0);
    ok(
        &mut harness,
        "control_entity",
        "rename",
        json!({"entity": "Orc", "name": "Grunt"}),
    );
    game_sets_goblin_health(&mut harness, 6.0);
    // The newer step (the rename) is fine, the older one conflicts: neither is applied.
    let error = refused(&mut harness, "history", "undo", json!({"steps": 2}));
    assert_eq!(error.code.as_str(), "UNDO_CONFLICT");
    harness.entity("Grunt");
    assert_eq!(goblin_health(&mut harness), 6.0);
    // One step does not reach the conflict.
    ok(&mut harness, "history", "undo", json!({}));
    harness.entity("Orc");
}

#[test]
fn undo_takes_back_the_calling_sessions_changes_unless_asked_for_all() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    agent_sets_goblin_health(&mut harness, 5.0);
    harness
        .call_as(
            "other-session",
            "control_entity",
            "rename",
            json!({"entity": "Orc", "name": "Grunt"}),
        )
        .expect("the other session renames");
    let listed = ok(&mut harness, "history", "list", json!({}));
    assert_eq!(listed["entries"][0]["yours"], json!(false), "{listed}");
    assert_eq!(listed["entries"][0]["session"], json!("other-se"));
    assert_eq!(
        ok(&mut harness, "history", "list", json!({"mine": true}))["entries"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    ok(&mut harness, "history", "undo", json!({}));
    assert_eq!(
        goblin_health(&mut harness),
        30.0,
        "the harness's own change"
    );
    harness.entity("Grunt");

    let error = refused(&mut harness, "history", "undo", json!({}));
    assert_eq!(error.code.as_str(), "NOTHING_TO_UNDO", "{error}");
    assert_eq!(
        error.next_call.as_ref().map(|call| call["params"].clone()),
        Some(json!({"allSessions": true})),
        "{:?}",
        error.next_call
    );
    ok(
        &mut harness,
        "history",
        "undo",
        json!({"allSessions": true}),
    );
    harness.entity("Orc");
}

#[test]
fn later_steps_follow_entities_that_came_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    checkpoint(&mut harness, "before");
    ok(
        &mut harness,
        "control_entity",
        "set_transform",
        json!({"entity": "Base", "translation": [5, 5, 5]}),
    );
    ok(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Turret", "component": "Team", "path": "", "value": "Red"}),
    );
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": "Base"}),
    );
    checkpoint(&mut harness, "after");

    let undone = ok(&mut harness, "history", "undo", json!({"steps": 3}));
    assert_eq!(
        undone["undone"].as_array().map(Vec::len),
        Some(3),
        "{undone}"
    );
    assert_eq!(
        undone["broughtBack"],
        json!(2),
        "Base and Turret came back whole: {undone}"
    );
    assert_same(&mut harness, "before", "three steps undone");

    let redone = ok(&mut harness, "history", "redo", json!({"steps": 3}));
    assert_eq!(
        redone["redone"].as_array().map(Vec::len),
        Some(3),
        "{redone}"
    );
    assert_same(&mut harness, "after", "three steps redone");
    // A new change gives up redoing: undo one, change, then redo has nothing left.
    ok(&mut harness, "history", "undo", json!({}));
    ok(
        &mut harness,
        "control_entity",
        "rename",
        json!({"entity": "Goblin", "name": "Hob"}),
    );
    let error = refused(&mut harness, "history", "redo", json!({}));
    assert_eq!(error.code.as_str(), "NOTHING_TO_REDO", "{error}");
}

#[test]
fn every_other_write_is_listed_as_not_undoable_with_why() {
    let undoable: Vec<(&str, &str)> = undoable_cases()
        .iter()
        .map(|case| (case.tool, case.action))
        .chain([("control_app", "pause"), ("control_app", "resume")])
        .collect();
    let mut listed_not_undoable = Vec::new();
    for tool in CATALOG.tools {
        for action in tool.actions {
            let name = (tool.name, action.name);
            // manage_tools runs in the gateway, per session; exit would end the test.
            if action.effect == Effect::Read
                || undoable.contains(&name)
                || tool.name == "manage_tools"
                || name == ("control_app", "exit")
                || (tool.name == "history" && ["undo", "redo"].contains(&action.name))
            {
                continue;
            }
            let dir = tempfile::tempdir().expect("temp dir");
            let mut harness = Harness::paused_in(dir.path());
            let Some(example) = action.examples.first() else {
                panic!("{}.{} has an example", tool.name, action.name);
            };
            let params: Value = serde_json::from_str(example.params_json).expect("example params");
            let called = harness.call(tool.name, action.name, params);
            let listed = ok(&mut harness, "history", "list", json!({}));
            let entries = listed["entries"].as_array().cloned().unwrap_or_default();
            match called {
                Ok(_) => {
                    let entry = entries
                        .iter()
                        .find(|entry| {
                            entry["action"] == json!(format!("{}.{}", tool.name, action.name))
                        })
                        .unwrap_or_else(|| {
                            panic!("{}.{} is journaled: {listed}", tool.name, action.name)
                        });
                    assert_eq!(
                        entry["undoable"],
                        json!(false),
                        "{}.{} is undoable: add it to undoable_cases",
                        tool.name,
                        action.name
                    );
                    assert!(
                        entry["notUndoable"]
                            .as_str()
                            .is_some_and(|why| why.len() > 20),
                        "{entry}"
                    );
                    listed_not_undoable.push(format!("{}.{}", tool.name, action.name));
                }
                // A call that fails (no window for a click, no such asset) leaves no entry.
                Err(_) => assert!(entries.is_empty(), "{listed}"),
            }
        }
    }
    for expected in [
        "input.press_keys",
        "state.set",
        "manage_events.write_message",
        "manage_world.save",
    ] {
        assert!(
            listed_not_undoable.iter().any(|name| name == expected),
            "{expected} ran and was listed: {listed_not_undoable:?}"
        );
    }
}

#[test]
fn undo_passes_over_what_cannot_be_undone_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    ok(
        &mut harness,
        "control_entity",
        "rename",
        json!({"entity": "Orc", "name": "Grunt"}),
    );
    ok(
        &mut harness,
        "manage_world",
        "save",
        json!({"name": "kept"}),
    );
    let undone = ok(&mut harness, "history", "undo", json!({}));
    assert_eq!(
        undone["undone"][0]["action"],
        json!("control_entity.rename")
    );
    assert_eq!(
        undone["passedOver"][0]["action"],
        json!("manage_world.save"),
        "{undone}"
    );
    harness.entity("Orc");
    let to_save = ok(&mut harness, "history", "list", json!({}))["entries"][0]["id"].clone();
    let error = refused(&mut harness, "history", "undo", json!({"to": to_save}));
    assert_eq!(error.code.as_str(), "NOT_UNDOABLE", "{error}");
}

#[test]
fn the_journal_stays_within_its_bounds_and_says_what_it_dropped() {
    let limits = JournalLimits {
        max_entries: 4,
        max_bytes: 1024 * 1024,
        ..JournalLimits::default()
    };
    let mut harness = Harness::configured(|config| config.with_journal_limits(limits), |_| {});
    harness.world().resource_mut::<Time<Virtual>>().pause();
    for value in 1..=7 {
        agent_sets_goblin_health(&mut harness, value as f32);
    }
    let listed = ok(&mut harness, "history", "list", json!({}));
    assert_eq!(listed["held"], json!(4), "{listed}");
    assert_eq!(listed["dropped"], json!(3), "{listed}");
    assert!(
        listed["droppedNote"]
            .as_str()
            .is_some_and(|note| note.contains("3 older entries")),
        "{listed}"
    );
    let undone = ok(&mut harness, "history", "undo", json!({"steps": 64}));
    assert_eq!(undone["undone"].as_array().map(Vec::len), Some(4));
    assert_eq!(
        goblin_health(&mut harness),
        3.0,
        "back as far as the journal holds"
    );

    // The byte bound: each spawn holds about 40 bytes; 400 keeps about ten.
    let limits = JournalLimits {
        max_entries: 256,
        max_bytes: 400,
        ..JournalLimits::default()
    };
    let mut harness = Harness::configured(|config| config.with_journal_limits(limits), |_| {});
    for index in 0..20 {
        ok(
            &mut harness,
            "control_entity",
            "spawn",
            json!({"name": format!("Probe {index}"), "components": {"Health": {"current": 1.0, "max": 2.0}, "Team": "Red"}}),
        );
    }
    let listed = ok(&mut harness, "history", "list", json!({}));
    assert!(
        listed["bytes"].as_u64().is_some_and(|bytes| bytes <= 400),
        "{listed}"
    );
    assert!(
        listed["dropped"]
            .as_u64()
            .is_some_and(|dropped| dropped > 0),
        "{listed}"
    );
    assert!(listed["droppedNote"].is_string(), "{listed}");
}
