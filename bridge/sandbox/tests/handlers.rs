//! Every core action on a headless sandbox through the real `Dispatch` path (typed parse,
//! mailbox, game thread), with assertions on the world afterwards, not only on the reply.

use bevy::diagnostic::FrameCount;
use bevy::prelude::{
    AppTypeRegistry, ChildOf, Entity, Name, Reflect, ReflectComponent, ReflectDefault,
    ReflectResource, Resource, Time, Transform, Virtual,
};
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{Health, Team, Velocity};
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

fn code(result: &Result<Value, mcp_native_transport::ToolError>) -> Option<&str> {
    result.as_ref().err().map(|error| error.code.as_str())
}

fn ok(result: Result<Value, mcp_native_transport::ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

fn frame(harness: &mut Harness) -> u32 {
    harness.world().resource::<FrameCount>().0
}

#[test]
fn world_summary_counts_the_demo_world() {
    let mut harness = Harness::new();
    let reply = ok(harness.call("inspect", "world_summary", json!({"top": 3})));
    assert_eq!(
        reply["entityCount"],
        json!(6),
        "resources are not entities here: {reply}"
    );
    assert_eq!(reply["namedEntityCount"], json!(6));
    assert_eq!(reply["rootCount"], json!(5));
    assert!(
        reply["resourceCount"]
            .as_u64()
            .is_some_and(|count| count >= 1)
    );
    assert_eq!(reply["topComponents"].as_array().map(Vec::len), Some(3));
    assert!(
        reply["topComponents"][0]["type"]
            .as_str()
            .is_some_and(|name| !name.contains("debug feature"))
    );
}

#[test]
fn list_and_find_entities() {
    let mut harness = Harness::new();
    let page = ok(harness.call(
        "inspect",
        "list_entities",
        json!({"limit": 2, "offset": 0, "withComponentNames": true}),
    ));
    assert_eq!(page["total"], json!(6));
    assert_eq!(page["entities"].as_array().map(Vec::len), Some(2));
    assert!(
        page["entities"][0]["components"]
            .as_array()
            .is_some_and(|names| !names.is_empty())
    );
    let found = ok(harness.call(
        "inspect",
        "find_entities",
        json!({"name": "PLAY", "exactName": false, "limit": 50}),
    ));
    assert_eq!(found["entities"][0]["name"], json!("Player"));
    let with = ok(harness.call(
        "inspect",
        "find_entities",
        json!({"withComponents": ["Health"], "withoutComponents": ["Velocity"], "exactName": false, "limit": 50}),
    ));
    let names: Vec<&str> = with["entities"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["name"].as_str())
        .collect();
    assert_eq!(names, ["Orc"]);
    let unknown = harness.call(
        "inspect",
        "find_entities",
        json!({"withComponents": ["Helth"], "exactName": false, "limit": 50}),
    );
    assert_eq!(code(&unknown), Some("TYPE_NOT_FOUND"));
    assert!(
        unknown
            .err()
            .and_then(|error| error.details)
            .is_some_and(|details| details["suggestions"][0] == json!("Health"))
    );
}

#[test]
fn get_entity_by_name_display_form_and_bits() {
    let mut harness = Harness::new();
    let player = harness.entity("Player");
    for reference in [
        json!("Player"),
        json!(player.to_string()),
        json!(player.to_bits()),
        json!(player.to_bits().to_string()),
    ] {
        let reply = ok(harness.call("inspect", "get_entity", json!({"entity": reference})));
        assert_eq!(reply["entity"]["name"], json!("Player"), "{reference}");
        assert_eq!(reply["components"]["bevy_mcp_sandbox::Team"], json!("Blue"));
    }
    let only = ok(harness.call(
        "inspect",
        "get_entity",
        json!({"entity": "Player", "components": ["Health"]}),
    ));
    assert_eq!(
        only["components"]
            .as_object()
            .map(|components| components.len()),
        Some(1)
    );
    let missing = harness.call("inspect", "get_entity", json!({"entity": "Nobody"}));
    assert_eq!(code(&missing), Some("ENTITY_NOT_FOUND"));
    let stale = harness.call("inspect", "get_entity", json!({"entity": "999v7"}));
    assert_eq!(code(&stale), Some("ENTITY_NOT_FOUND"));
}

#[test]
fn ambiguous_names_list_the_candidates() {
    let mut harness = Harness::new();
    harness.world().spawn(Name::new("Goblin"));
    let reply = harness.call("inspect", "get_entity", json!({"entity": "Goblin"}));
    assert_eq!(code(&reply), Some("AMBIGUOUS_ENTITY"));
    let details = reply
        .err()
        .and_then(|error| error.details)
        .expect("details");
    assert_eq!(details["candidates"].as_array().map(Vec::len), Some(2));
}

#[test]
fn hierarchy_types_and_resources() {
    let mut harness = Harness::new();
    let tree = ok(harness.call("inspect", "hierarchy", json!({"root": "Base", "depth": 2})));
    assert_eq!(tree["roots"][0]["children"][0]["name"], json!("Turret"));
    let types = ok(harness.call(
        "inspect",
        "list_component_types",
        json!({"filter": "sandbox", "offset": 0, "limit": 50}),
    ));
    let paths: Vec<&str> = types["types"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["shortPath"].as_str())
        .collect();
    assert_eq!(paths, ["Health", "Inventory", "Team", "Velocity", "Weapon"]);
    let described = ok(harness.call("inspect", "describe_type", json!({"type": "Velocity"})));
    assert_eq!(described["typePath"], json!("bevy_mcp_sandbox::Velocity"));
    assert_eq!(
        described["example"]["bevy_mcp_sandbox::Velocity"],
        json!({"linear": [0.0, 0.0, 0.0]})
    );
    assert!(
        described["mutablePaths"]
            .as_array()
            .is_some_and(|paths| paths.contains(&json!(".linear.x")))
    );
    let resources = ok(harness.call(
        "inspect",
        "list_resources",
        json!({"filter": "score", "offset": 0, "limit": 50}),
    ));
    // Unreflected resources are listed by name too (Messages<GoalScored> matches "score").
    assert!(
        resources["resources"]
            .as_array()
            .is_some_and(|rows| rows.iter().any(|row| row["shortPath"] == json!("Score"))),
        "{resources}"
    );
    let score = ok(harness.call("inspect", "get_resource", json!({"resource": "Score"})));
    assert_eq!(score["value"], json!({"red": 0, "blue": 0}));
    let not_resource = harness.call("inspect", "get_resource", json!({"resource": "Velocity"}));
    assert_eq!(code(&not_resource), Some("NOT_A_RESOURCE"));
    let schedules = ok(harness.call("inspect", "list_schedules", json!({"withSystems": true})));
    assert!(
        schedules["schedules"]
            .as_array()
            .is_some_and(|rows| rows.iter().any(|row| row["name"] == json!("Update")))
    );
}

#[test]
fn spawn_insert_remove_and_despawn_change_the_world() {
    let mut harness = Harness::new();
    let spawned = ok(harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Crate2", "components": {"Transform": {"translation": [0, 2, 0], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1]}}, "parent": "Base"}),
    ));
    assert_eq!(
        spawned["applied"],
        json!(["bevy_transform::components::transform::Transform"])
    );
    let crate2 = harness.entity("Crate2");
    assert_eq!(
        harness
            .world()
            .get::<Transform>(crate2)
            .map(|t| t.translation.y),
        Some(2.0)
    );
    let base = harness.entity("Base");
    assert_eq!(
        harness.world().get::<ChildOf>(crate2).map(ChildOf::parent),
        Some(base)
    );

    let partial = ok(harness.call(
        "control_entity",
        "insert_components",
        json!({"entity": "Crate2", "components": {"Velocity": {"linear": [1, 0, 0]}, "Health": {"current": "lots"}}}),
    ));
    assert_eq!(partial["applied"], json!(["bevy_mcp_sandbox::Velocity"]));
    assert_eq!(partial["failed"][0]["type"], json!("Health"));
    assert_eq!(partial["failed"][0]["code"], json!("INVALID_VALUE"));
    assert!(harness.world().get::<Velocity>(crate2).is_some());
    assert!(
        harness.world().get::<Health>(crate2).is_none(),
        "the failed component was not inserted"
    );

    let removed = ok(harness.call(
        "control_entity",
        "remove_components",
        json!({"entity": "Crate2", "components": ["Velocity", "Health"]}),
    ));
    assert_eq!(removed["removed"], json!(["bevy_mcp_sandbox::Velocity"]));
    assert_eq!(removed["notPresent"], json!(["bevy_mcp_sandbox::Health"]));
    assert!(harness.world().get::<Velocity>(crate2).is_none());

    let despawned = ok(harness.call("control_entity", "despawn", json!({"entity": "Base"})));
    assert_eq!(
        despawned["descendants"],
        json!(2),
        "Turret and Crate2 went with Base"
    );
    // Held out of the game's sight for undo: no query of the game sees them.
    let mut visible = harness.world().query::<Entity>();
    let seen: Vec<Entity> = visible.iter(harness.world()).collect();
    assert!(!seen.contains(&base));
    assert!(!seen.contains(&crate2));
}

#[test]
fn spawn_with_a_bad_component_changes_nothing() {
    let mut harness = Harness::new();
    let before = harness.world().entities().count_spawned();
    let refused = harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Bad", "components": {"Nope": {}}}),
    );
    // One bad component: its own typed error, with suggestions and a nextCall.
    assert_eq!(code(&refused), Some("TYPE_NOT_FOUND"));
    let both = harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Bad", "components": {"Nope": {}, "Nada": {}}}),
    );
    // Several: INVALID_PARAMS naming each.
    assert_eq!(code(&both), Some("INVALID_PARAMS"));
    assert_eq!(harness.world().entities().count_spawned(), before);
}

#[test]
fn brp_crash_cases_return_typed_errors() {
    let mut harness = Harness::new();
    // Mutating a component of a missing entity.
    let missing = harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": 4294967295u64 * 3, "component": "Health", "path": ".current", "value": 1}),
    );
    assert_eq!(code(&missing), Some("ENTITY_NOT_FOUND"));
    // Inserting a type that is not a component.
    let not_component = harness.call(
        "control_entity",
        "insert_components",
        json!({"entity": "Crate", "components": {"Score": {"red": 1, "blue": 2}}}),
    );
    assert_eq!(code(&not_component), Some("NOT_A_COMPONENT"));
    let reason = not_component
        .err()
        .map(|error| error.message)
        .unwrap_or_default();
    assert!(reason.contains("not a reflected component"), "{reason}");
    // Mutating an immutable component.
    let immutable = harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Turret", "component": "ChildOf", "path": ".0", "value": 1}),
    );
    assert_eq!(code(&immutable), Some("IMMUTABLE_COMPONENT"));
    assert_eq!(
        immutable.err().and_then(|error| error.next_call),
        Some(json!({"operation": "describe", "tool": "control_entity", "action": "set_parent"}))
    );
    // The app still serves.
    assert!(harness.call("control_app", "get_state", json!({})).is_ok());
}

#[test]
fn mutate_component_paths_and_values() {
    let mut harness = Harness::new();
    let reply = ok(harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Player", "component": "Health", "path": ".current", "value": 80}),
    ));
    assert_eq!(
        (reply["before"].clone(), reply["after"].clone()),
        (json!(100.0), json!(80.0))
    );
    let player = harness.entity("Player");
    assert_eq!(
        harness
            .world()
            .get::<Health>(player)
            .map(|health| health.current),
        Some(80.0)
    );
    let whole = ok(harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Goblin", "component": "Team", "path": "", "value": "Blue"}),
    ));
    assert_eq!(whole["after"], json!("Blue"));
    let goblin = harness.entity("Goblin");
    assert_eq!(harness.world().get::<Team>(goblin), Some(&Team::Blue));
    let bad_path = harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Player", "component": "Health", "path": ".curent", "value": 1}),
    );
    assert_eq!(code(&bad_path), Some("PATH_NOT_FOUND"));
    let bad_value = harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Player", "component": "Health", "path": ".current", "value": "full"}),
    );
    assert_eq!(code(&bad_value), Some("INVALID_VALUE"));
    assert_eq!(
        harness
            .world()
            .get::<Health>(player)
            .map(|health| health.current),
        Some(80.0),
        "a refused write changes nothing"
    );
    let absent = harness.call(
        "control_entity",
        "mutate_component",
        json!({"entity": "Crate", "component": "Health", "path": ".current", "value": 1}),
    );
    assert_eq!(code(&absent), Some("COMPONENT_NOT_PRESENT"));
}

#[test]
fn set_transform_modes() {
    let mut harness = Harness::new();
    harness.world().resource_mut::<Time<Virtual>>().pause();
    let crate_entity = harness.entity("Crate");
    let moved = ok(harness.call(
        "control_entity",
        "set_transform",
        json!({"entity": "Crate", "mode": "translate", "translation": [0, 2, 0]}),
    ));
    assert_eq!(moved["after"]["translation"], json!([3.0, 2.0, 3.0]));
    assert_eq!(
        harness
            .world()
            .get::<Transform>(crate_entity)
            .map(|t| t.translation.to_array()),
        Some([3.0, 2.0, 3.0])
    );
    ok(harness.call(
        "control_entity",
        "set_transform",
        json!({"entity": "Crate", "mode": "set", "translation": [10, 0, -5], "scale": [2, 2, 2]}),
    ));
    let transform = *harness
        .world()
        .get::<Transform>(crate_entity)
        .expect("transform");
    assert_eq!(
        (transform.translation.to_array(), transform.scale.to_array()),
        ([10.0, 0.0, -5.0], [2.0, 2.0, 2.0])
    );
    ok(harness.call(
        "control_entity",
        "set_transform",
        json!({"entity": "Crate", "mode": "rotate", "eulerDegrees": [0, 90, 0]}),
    ));
    let rotated = harness
        .world()
        .get::<Transform>(crate_entity)
        .expect("transform")
        .rotation;
    assert!(
        (rotated * bevy::math::Vec3::X - bevy::math::Vec3::NEG_Z).length() < 1e-4,
        "{rotated:?}"
    );
    ok(harness.call(
        "control_entity",
        "set_transform",
        json!({"entity": "Crate", "mode": "look_at", "target": [10, 0, 5]}),
    ));
    let forward = harness
        .world()
        .get::<Transform>(crate_entity)
        .expect("transform")
        .forward();
    assert!(
        (forward.as_vec3() - bevy::math::Vec3::Z).length() < 1e-4,
        "{forward:?}"
    );
    let incomplete = harness.call(
        "control_entity",
        "set_transform",
        json!({"entity": "Crate", "mode": "translate"}),
    );
    assert_eq!(code(&incomplete), Some("INVALID_PARAMS"));
}

#[test]
fn set_parent_rename_and_duplicate() {
    let mut harness = Harness::new();
    let turret = harness.entity("Turret");
    let player = harness.entity("Player");
    let moved = ok(harness.call(
        "control_entity",
        "set_parent",
        json!({"entity": "Turret", "parent": "Player"}),
    ));
    assert_eq!(moved["previousParent"]["name"], json!("Base"));
    assert_eq!(
        harness.world().get::<ChildOf>(turret).map(ChildOf::parent),
        Some(player)
    );
    let cycle = harness.call(
        "control_entity",
        "set_parent",
        json!({"entity": "Player", "parent": "Turret"}),
    );
    assert_eq!(code(&cycle), Some("HIERARCHY_CYCLE"));
    ok(harness.call(
        "control_entity",
        "set_parent",
        json!({"entity": "Turret", "parent": null}),
    ));
    assert!(harness.world().get::<ChildOf>(turret).is_none());
    let renamed = ok(harness.call(
        "control_entity",
        "rename",
        json!({"entity": "Crate", "name": "Supply Crate"}),
    ));
    assert_eq!(
        (renamed["before"].clone(), renamed["after"].clone()),
        (json!("Crate"), json!("Supply Crate"))
    );
    harness.entity("Supply Crate");
    let copies = ok(harness.call(
        "control_entity",
        "duplicate",
        json!({"entity": "Goblin", "count": 2, "name": "Goblin"}),
    ));
    assert_eq!(copies["copies"].as_array().map(Vec::len), Some(2));
    let copy = harness.entity("Goblin (2)");
    assert_eq!(
        harness.world().get::<Health>(copy).map(|health| health.max),
        Some(30.0)
    );
    assert_eq!(harness.world().get::<Team>(copy), Some(&Team::Red));
}

#[test]
fn resource_entities_are_refused_by_entity_actions() {
    let mut harness = Harness::new();
    let resource = harness
        .world()
        .resource_entities()
        .iter()
        .map(|(_, entity)| entity)
        .next()
        .expect("a resource entity");
    let refused = harness.call(
        "control_entity",
        "despawn",
        json!({"entity": resource.to_bits()}),
    );
    assert_eq!(code(&refused), Some("IS_RESOURCE"));
    assert!(harness.world().get_entity(resource).is_ok());
}

#[test]
fn pause_resume_and_speed_use_virtual_time() {
    let mut harness = Harness::new();
    let paused = ok(harness.call("control_app", "pause", json!({})));
    assert_eq!(paused["wasPaused"], json!(false));
    assert!(harness.world().resource::<Time<Virtual>>().is_paused());
    let player = harness.entity("Player");
    let before = harness
        .world()
        .get::<Transform>(player)
        .map(|t| t.translation);
    harness.run_frames(5);
    assert_eq!(
        harness
            .world()
            .get::<Transform>(player)
            .map(|t| t.translation),
        before,
        "paused: nothing moves"
    );
    ok(harness.call("control_app", "resume", json!({})));
    assert!(!harness.world().resource::<Time<Virtual>>().is_paused());
    let speed = ok(harness.call("control_app", "set_speed", json!({"speed": 0.5})));
    assert_eq!(speed["after"], json!(0.5));
    assert_eq!(
        harness
            .world()
            .resource::<Time<Virtual>>()
            .relative_speed_f64(),
        0.5
    );
    let state = ok(harness.call("control_app", "get_state", json!({})));
    assert_eq!(
        (state["paused"].clone(), state["speed"].clone()),
        (json!(false), json!(0.5))
    );
}

#[test]
fn step_frames_advances_exactly_n_frames_and_repauses() {
    let mut harness = Harness::new();
    ok(harness.call("control_app", "pause", json!({})));
    let start = frame(&mut harness);
    let (progress, mut notifications) = ProgressSink::recording(json!("p"));
    let pending = harness.start(
        "control_app",
        "step_frames",
        json!({"frames": 10}),
        progress,
    );
    let reply = ok(harness.finish(&pending));
    assert_eq!(reply["stepped"], json!(10));
    assert_eq!(reply["paused"], json!(true), "paused again after stepping");
    let (from, to) = (
        reply["startFrame"].as_u64().expect("startFrame"),
        reply["frame"].as_u64().expect("frame"),
    );
    assert_eq!(to - from, 10, "exactly ten frames ran");
    assert!(from >= u64::from(start));
    let mut sent = 0;
    while notifications.try_recv().is_ok() {
        sent += 1;
    }
    assert_eq!(sent, 10, "one progress notification per frame");
    assert!(harness.world().resource::<Time<Virtual>>().is_paused());
}

#[test]
fn a_cancelled_step_stops_early_and_restores_the_pause() {
    let mut harness = Harness::new();
    ok(harness.call("control_app", "pause", json!({})));
    let start = frame(&mut harness);
    let pending = harness.start(
        "control_app",
        "step_frames",
        json!({"frames": 1000}),
        ProgressSink::disabled(),
    );
    harness.run_frames(5);
    pending.cancel.cancel();
    let answer = harness.finish(&pending);
    assert_eq!(code(&answer), Some("CANCELLED"));
    assert!(
        frame(&mut harness) < start + 100,
        "stopped long before 1000 frames"
    );
    assert!(
        harness.world().resource::<Time<Virtual>>().is_paused(),
        "pause restored"
    );
}

#[test]
fn wait_until_resolves_when_a_moving_entity_crosses_a_threshold() {
    let mut harness = Harness::new();
    let player = harness.entity("Player");
    if let Some(mut velocity) = harness.world().get_mut::<Velocity>(player) {
        velocity.linear.x = 200.0;
    }
    let reply = ok(harness.call(
        "control_app",
        "wait_until",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "op": "gt", "value": 5, "maxFrames": 5000}),
    ));
    assert_eq!(reply["satisfied"], json!(true));
    assert!(reply["value"].as_f64().is_some_and(|x| x > 5.0));
    assert!(
        harness
            .world()
            .get::<Transform>(player)
            .is_some_and(|t| t.translation.x > 5.0)
    );

    ok(harness.call("control_app", "pause", json!({})));
    let limited = harness.call(
        "control_app",
        "wait_until",
        json!({"entity": "Player", "component": "Transform", "path": ".translation.x", "op": "changed", "maxFrames": 3}),
    );
    assert_eq!(code(&limited), Some("WAIT_LIMIT_REACHED"));
    let not_number = harness.call("control_app", "wait_until", json!({"entity": "Player", "component": "Team", "path": "", "op": "gt", "value": 1, "maxFrames": 3}));
    assert_eq!(code(&not_number), Some("INVALID_PARAMS"));
}

#[test]
fn exit_answers_first_then_exits() {
    use bevy_mcp_bridge::test_support::PendingExit;
    let mut harness = Harness::new();
    // The call answers in the frame it runs and only schedules the exit.
    let reply = ok(harness.call("control_app", "exit", json!({"code": 3})));
    assert_eq!(reply["exiting"], json!(true));
    assert!(harness.world().contains_resource::<PendingExit>());
    assert!(
        harness.app.should_exit().is_none(),
        "the reply comes before the exit"
    );
    harness.run_frames(5);
    assert_eq!(
        harness.app.should_exit(),
        Some(bevy::app::AppExit::from_code(3))
    );
    // With the default code too.
    let mut harness = Harness::new();
    let reply = ok(harness.call("control_app", "exit", json!({})));
    assert_eq!(reply["code"], json!(0));
    harness.run_frames(5);
    assert_eq!(harness.app.should_exit(), Some(bevy::app::AppExit::Success));
}

/// A component whose `Default` panics: describing it makes the handler panic.
#[derive(bevy::prelude::Component, bevy::prelude::Reflect)]
#[reflect(Component, Default, no_auto_register)]
struct Exploding;

impl Default for Exploding {
    fn default() -> Self {
        panic!("Exploding::default always panics");
    }
}

#[test]
fn a_panicking_handler_becomes_handler_panicked_and_the_app_keeps_serving() {
    let mut harness = Harness::new();
    harness.app.register_type::<Exploding>();
    let panicked = harness.call("inspect", "describe_type", json!({"type": "Exploding"}));
    assert_eq!(code(&panicked), Some("HANDLER_PANICKED"));
    assert!(
        panicked
            .err()
            .is_some_and(|error| error.message.contains("always panics"))
    );
    let next = ok(harness.call("inspect", "get_entity", json!({"entity": "Player"})));
    assert_eq!(next["entity"]["name"], json!("Player"));
}

#[test]
fn manage_resource_reset_to_default() {
    use bevy_mcp_sandbox::Score;
    let mut harness = Harness::new();
    ok(harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Score", "value": {"red": 2, "blue": 5}}),
    ));
    let reset = ok(harness.call(
        "manage_resource",
        "reset_to_default",
        json!({"resource": "Score"}),
    ));
    assert_eq!(
        (
            reset["created"].clone(),
            reset["before"].clone(),
            reset["after"].clone()
        ),
        (
            json!(false),
            json!({"red": 2, "blue": 5}),
            json!({"red": 0, "blue": 0})
        )
    );
    assert_eq!(*harness.world().resource::<Score>(), Score::default());
    // A type without a registered default says what to do instead, and changes nothing.
    harness
        .world()
        .resource::<AppTypeRegistry>()
        .write()
        .register::<Undeclared>();
    harness.world().insert_resource(Undeclared(7));
    let no_default = harness.call(
        "manage_resource",
        "reset_to_default",
        json!({"resource": "Undeclared"}),
    );
    assert_eq!(code(&no_default), Some("INVALID_VALUE"), "{no_default:?}");
    assert!(
        no_default
            .err()
            .is_some_and(|error| error.message.contains("manage_resource.insert"))
    );
    assert_eq!(*harness.world().resource::<Undeclared>(), Undeclared(7));
    // Engine-owned resources stay refused, as for every generic write.
    let protected = harness.call(
        "manage_resource",
        "reset_to_default",
        json!({"resource": "bevy_time::time::Time<bevy_time::virt::Virtual>"}),
    );
    assert_eq!(code(&protected), Some("PROTECTED_TYPE"), "{protected:?}");
}

#[test]
fn manage_resource_insert_and_mutate() {
    use bevy_mcp_sandbox::Score;
    let mut harness = Harness::new();
    let inserted = ok(harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Score", "value": {"red": 2, "blue": 5}}),
    ));
    assert_eq!(
        (inserted["created"].clone(), inserted["before"].clone()),
        (json!(false), json!({"red": 0, "blue": 0}))
    );
    assert_eq!(
        *harness.world().resource::<Score>(),
        Score { red: 2, blue: 5 }
    );
    let mutated = ok(harness.call(
        "manage_resource",
        "mutate",
        json!({"resource": "Score", "path": ".blue", "value": 6}),
    ));
    assert_eq!(
        (mutated["before"].clone(), mutated["after"].clone()),
        (json!(5), json!(6))
    );
    assert_eq!(harness.world().resource::<Score>().blue, 6);
    let bad = harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Score", "value": {"red": "many"}}),
    );
    assert_eq!(code(&bad), Some("INVALID_VALUE"));
    assert_eq!(
        *harness.world().resource::<Score>(),
        Score { red: 2, blue: 6 },
        "a refused insert changes nothing"
    );
    let bad_path = harness.call(
        "manage_resource",
        "mutate",
        json!({"resource": "Score", "path": ".green", "value": 1}),
    );
    assert_eq!(code(&bad_path), Some("PATH_NOT_FOUND"));
    let component = harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Velocity", "value": {"linear": [0, 0, 0]}}),
    );
    assert_eq!(code(&component), Some("NOT_A_RESOURCE"));

    harness.world().remove_resource::<Score>();
    let missing = harness.call(
        "manage_resource",
        "mutate",
        json!({"resource": "Score", "path": ".red", "value": 1}),
    );
    assert_eq!(code(&missing), Some("RESOURCE_NOT_FOUND"));
    let created = ok(harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Score", "value": {"red": 1, "blue": 1}}),
    ));
    assert_eq!(created["created"], json!(true));
    assert_eq!(
        *harness.world().resource::<Score>(),
        Score { red: 1, blue: 1 }
    );
    let listed = ok(harness.call(
        "inspect",
        "list_entities",
        json!({"limit": 50, "offset": 0, "withComponentNames": false}),
    ));
    assert_eq!(
        listed["total"],
        json!(6),
        "the new resource entity stays out of entity listings"
    );
}

/// A reflected resource the sandbox did not declare removable.
#[derive(Resource, Reflect, Debug, PartialEq)]
#[reflect(Resource, no_auto_register)]
struct Undeclared(u32);

#[test]
fn manage_resource_remove_returns_the_value_and_refuses_undeclared_resources() {
    use bevy_mcp_sandbox::Score;
    let mut harness = Harness::new();
    harness
        .world()
        .resource::<AppTypeRegistry>()
        .write()
        .register::<Undeclared>();
    harness.world().insert_resource(Score { red: 3, blue: 4 });
    let removed = ok(harness.call("manage_resource", "remove", json!({"resource": "Score"})));
    assert_eq!(removed["removed"], json!({"red": 3, "blue": 4}));
    assert!(!harness.world().contains_resource::<Score>());
    // The sandbox's only Score system takes Option<ResMut<Score>>: the app keeps running.
    harness.run_frames(3);
    let gone = harness.call("inspect", "get_resource", json!({"resource": "Score"}));
    assert_eq!(code(&gone), Some("RESOURCE_NOT_FOUND"));
    let again = harness.call("manage_resource", "remove", json!({"resource": "Score"}));
    assert_eq!(code(&again), Some("RESOURCE_NOT_FOUND"));
    ok(harness.call(
        "manage_resource",
        "insert",
        json!({"resource": "Score", "value": removed["removed"]}),
    ));
    assert_eq!(
        *harness.world().resource::<Score>(),
        Score { red: 3, blue: 4 },
        "the returned value puts the resource back exactly"
    );

    // Removing Time would stop the app: it is protected, and the app did not declare it removable.
    let protected = harness.call(
        "manage_resource",
        "remove",
        json!({"resource": "bevy_time::time::Time<()>"}),
    );
    assert_eq!(code(&protected), Some("PROTECTED_TYPE"));
    assert!(harness.world().contains_resource::<Time>());
    // An unprotected resource the app did not declare is refused too, listing what is removable.
    harness.world().insert_resource(Undeclared(7));
    let refused = harness.call(
        "manage_resource",
        "remove",
        json!({"resource": "Undeclared"}),
    );
    assert_eq!(code(&refused), Some("RESOURCE_NOT_REMOVABLE"));
    let error = refused.expect_err("refused");
    assert_eq!(
        error.details,
        Some(json!({"removable": ["bevy_mcp_sandbox::Score"]}))
    );
    assert_eq!(harness.world().resource::<Undeclared>(), &Undeclared(7));
    harness.run_frames(2);
    let component = harness.call("manage_resource", "remove", json!({"resource": "Velocity"}));
    assert_eq!(code(&component), Some("NOT_A_RESOURCE"));
}
