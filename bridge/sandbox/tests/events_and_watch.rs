//! `manage_events` and `watch` on a headless sandbox.

use bevy::ecs::observer::Observer;
use bevy::math::Vec3;
use bevy::prelude::{Time, Virtual};
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{Explosion, GoalScored, Health, Score, Team};
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

fn code(result: &Result<Value, mcp_native_transport::ToolError>) -> Option<&str> {
    result.as_ref().err().map(|error| error.code.as_str())
}

fn observers(harness: &mut Harness) -> usize {
    let world = harness.world();
    world.query::<&Observer>().iter(world).count()
}

#[test]
fn list_trigger_and_write() {
    let mut harness = Harness::new();
    harness.world().resource_mut::<Time<Virtual>>().pause();
    let listed = harness
        .call(
            "manage_events",
            "list_event_types",
            json!({"filter": "sandbox"}),
        )
        .expect("list");
    let rows = listed["types"].as_array().expect("types").clone();
    let kinds: Vec<(String, String)> = rows
        .iter()
        .map(|row| {
            (
                row["shortPath"].as_str().unwrap_or_default().to_owned(),
                row["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Explosion".to_owned(), "event".to_owned()),
            ("GoalScored".to_owned(), "message".to_owned())
        ]
    );
    assert_eq!(rows[1]["example"], json!({"team": "Neutral"}));

    let player = harness.entity("Player");
    let goblin = harness.entity("Goblin");
    let at = harness
        .world()
        .get::<bevy::prelude::Transform>(player)
        .map(|t| t.translation)
        .unwrap_or(Vec3::ZERO);
    let triggered = harness.call(
        "manage_events",
        "trigger_event",
        json!({"event": "Explosion", "value": {"at": at.to_array(), "radius": 2, "damage": 10}}),
    );
    assert!(triggered.is_ok(), "{triggered:?}");
    assert_eq!(
        harness
            .world()
            .get::<Health>(player)
            .map(|health| health.current),
        Some(90.0)
    );
    assert_eq!(
        harness
            .world()
            .get::<Health>(goblin)
            .map(|health| health.current),
        Some(30.0),
        "out of reach"
    );

    let written = harness
        .call(
            "manage_events",
            "write_message",
            json!({"message": "GoalScored", "value": {"team": "Blue"}}),
        )
        .expect("write");
    assert!(written["note"].is_string());
    harness.run_frames(2);
    assert_eq!(harness.world().resource::<Score>().blue, 1);

    let not_event = harness.call(
        "manage_events",
        "trigger_event",
        json!({"event": "Health", "value": {"current": 1, "max": 1}}),
    );
    assert_eq!(code(&not_event), Some("NOT_AN_EVENT"));
    let bad_value = harness.call(
        "manage_events",
        "trigger_event",
        json!({"event": "Explosion", "value": {"at": "here"}}),
    );
    assert_eq!(code(&bad_value), Some("INVALID_VALUE"));
    assert_eq!(
        harness
            .world()
            .get::<Health>(player)
            .map(|health| health.current),
        Some(90.0),
        "nothing happened"
    );
    let not_message = harness.call(
        "manage_events",
        "write_message",
        json!({"message": "Explosion", "value": {}}),
    );
    assert_eq!(code(&not_message), Some("NOT_A_MESSAGE"));
}

#[test]
fn watch_entity_sees_changes_only_while_time_runs() {
    let mut harness = Harness::new();
    let (progress, mut notifications) = ProgressSink::recording(json!(1));
    let pending = harness.start(
        "watch",
        "watch_entity",
        json!({"entity": "Player", "components": ["Transform"], "frames": 10}),
        progress,
    );
    let moving = harness.finish(&pending).expect("watch");
    assert_eq!(moving["frames"], json!(10));
    assert!(
        moving["changeCount"]
            .as_u64()
            .is_some_and(|count| count >= 5),
        "{moving}"
    );
    assert_eq!(
        moving["changes"][0]["component"],
        json!("bevy_transform::components::transform::Transform")
    );
    let mut messages = 0;
    while let Ok(frame) = notifications.try_recv() {
        if String::from_utf8_lossy(&frame).contains("Transform changed") {
            messages += 1;
        }
    }
    assert!(messages >= 5, "changes are streamed as progress");

    harness.world().resource_mut::<Time<Virtual>>().pause();
    harness.run_frames(2);
    let still = harness
        .call(
            "watch",
            "watch_entity",
            json!({"entity": "Player", "frames": 5}),
        )
        .expect("watch");
    assert_eq!(still["changeCount"], json!(0));
    let missing = harness.call(
        "watch",
        "watch_entity",
        json!({"entity": "Nobody", "frames": 5}),
    );
    assert_eq!(code(&missing), Some("ENTITY_NOT_FOUND"));
}

#[test]
fn watch_resource_records_changes() {
    let mut harness = Harness::new();
    let pending = harness.start(
        "watch",
        "watch_resource",
        json!({"resource": "Score", "frames": 20}),
        ProgressSink::disabled(),
    );
    harness.run_frames(3);
    harness
        .world()
        .write_message(GoalScored { team: Team::Red });
    let watched = harness.finish(&pending).expect("watch");
    assert_eq!(watched["changeCount"], json!(1), "{watched}");
    assert_eq!(watched["changes"][0]["value"], json!({"red": 1, "blue": 0}));
}

#[test]
fn observe_event_collects_and_leaves_no_observer_behind() {
    let mut harness = Harness::new();
    let before = observers(&mut harness);
    let pending = harness.start(
        "watch",
        "observe_event",
        json!({"event": "Explosion", "frames": 30}),
        ProgressSink::disabled(),
    );
    harness.run_frames(3);
    assert_eq!(
        observers(&mut harness),
        before + 1,
        "the watch observes with one observer"
    );
    harness.world().trigger(Explosion {
        at: Vec3::ZERO,
        radius: 1.0,
        damage: 1.0,
    });
    let observed = harness.finish(&pending).expect("observe");
    assert_eq!(observed["eventCount"], json!(1));
    assert_eq!(observed["events"][0]["value"]["radius"], json!(1.0));
    assert_eq!(observers(&mut harness), before, "removed at the end");

    let cancelled = harness.start(
        "watch",
        "observe_event",
        json!({"event": "Explosion", "frames": 100000}),
        ProgressSink::disabled(),
    );
    harness.run_frames(3);
    assert_eq!(observers(&mut harness), before + 1);
    cancelled.cancel.cancel();
    let answer = harness.finish(&cancelled);
    assert_eq!(code(&answer), Some("CANCELLED"));
    assert_eq!(observers(&mut harness), before, "removed on cancel");
    let summary = harness
        .call("inspect", "world_summary", json!({"top": 0}))
        .expect("summary");
    assert_eq!(summary["observerCount"], json!(before));
    assert_eq!(
        summary["entityCount"],
        json!(6),
        "observers are not counted as entities"
    );
}
