//! Game-defined actions on a real `App`: the sandbox's own `game` tool runs through the real
//! `Dispatch` path, and bad registrations stop the app while it is built, naming the action and
//! the JSON pointer.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy::MinimalPlugins;
use bevy::app::{App, PluginGroup, ScheduleRunnerPlugin};
use bevy::prelude::{In, Name, Query, With};
use bevy_mcp_bridge::ToolError;
use bevy_mcp_bridge::catalog::Category;
use bevy_mcp_bridge::game::{ActionSpec, GameUndo, McpAppExt, ToolSpec};
use bevy_mcp_bridge::{McpBridgePlugin, ServedCatalog};
use bevy_mcp_sandbox::Score;
use bevy_mcp_sandbox::game::WaveEnemy;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ProgressSink;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

#[test]
fn the_sandbox_game_actions_change_the_world() {
    let mut harness = Harness::new();
    let catalog = harness.world().resource::<ServedCatalog>().0;
    assert!(catalog.action("game", "spawn_wave").is_some());
    assert!(
        catalog.action("game", "send_wave").is_some(),
        "aliases resolve"
    );
    assert_ne!(
        catalog.revision,
        bevy_mcp_bridge::CATALOG.revision,
        "the app's actions change the revision"
    );

    let wave = ok(harness.call("game", "spawn_wave", json!({"count": 4})));
    assert_eq!(wave["spawned"].as_array().map(Vec::len), Some(4));
    harness.run_frames(1);
    let world = harness.world();
    let enemies = world
        .query_filtered::<&Name, With<WaveEnemy>>()
        .iter(world)
        .count();
    assert_eq!(enemies, 4);

    let score = ok(harness.call("game", "add_score", json!({"team": "blue", "points": 7})));
    assert_eq!(score, json!({"red": 0, "blue": 7}));
    assert_eq!(harness.world().resource::<Score>().blue, 7);

    // A long-running action reports progress each frame and ends when the wave is gone.
    let (progress, mut notifications) = ProgressSink::recording(json!("w"));
    let waiting = harness.start(
        "game",
        "wait_for_wave_cleared",
        json!({"maxFrames": 3}),
        progress,
    );
    let waited = ok(harness.finish(&waiting));
    assert_eq!(waited["cleared"], json!(false));
    assert_eq!(waited["remaining"], json!(4));
    assert!(notifications.try_recv().is_ok(), "progress was reported");

    let reset = ok(harness.call("game", "reset_level", json!({})));
    assert_eq!(reset, json!({"despawned": 4}));
    harness.run_frames(1);
    let world = harness.world();
    let left = world
        .query_filtered::<&Name, With<WaveEnemy>>()
        .iter(world)
        .count();
    assert_eq!(left, 0);
    assert_eq!(*harness.world().resource::<Score>(), Score::default());
    let cleared = ok(harness.call("game", "wait_for_wave_cleared", json!({"maxFrames": 10})));
    assert_eq!(cleared["cleared"], json!(true));

    // The handler's own typed error reaches the caller as it is.
    harness.world().remove_resource::<Score>();
    let refused = harness.call("game", "add_score", json!({"team": "red", "points": 1}));
    assert_eq!(
        refused.err().map(|error| error.code.to_string()).as_deref(),
        Some("NO_SCORE")
    );

    let info = ok(harness.call("system_control", "app_info", json!({})));
    assert_eq!(info["gameTools"][0]["tool"], json!("game"));
    assert_eq!(
        info["gameTools"][0]["actions"],
        json!([
            "spawn_wave",
            "add_score",
            "reset_level",
            "wait_for_wave_cleared"
        ])
    );
}

/// Parameters of a test action.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct Boom {
    /// Whether to panic.
    now: bool,
}

/// What a test action returns.
#[derive(Serialize, JsonSchema, Debug)]
struct Fine {
    /// Always true.
    fine: bool,
}

fn boom(In(boom): In<Boom>, names: Query<&Name>) -> Result<Fine, ToolError> {
    if boom.now {
        panic!(
            "the game's handler fell over ({} names)",
            names.iter().count()
        );
    }
    Ok(Fine { fine: true })
}

fn test_tool() -> ToolSpec {
    ToolSpec::new("test_game", Category::Gameplay, "Actions of a test game.")
}

fn boom_spec() -> ActionSpec {
    ActionSpec::new("test_game", "boom", "Panic on purpose, or not.")
        .with_when("To test panics.", "Never in a real game.")
        .with_topics(&["panic"])
        .with_example("No panic", json!({"now": false}), "fine.")
}

#[test]
fn a_panicking_game_handler_leaves_the_app_running() {
    let mut harness = Harness::with_app(|app| {
        app.add_mcp_tool(test_tool())
            .add_mcp_action(boom_spec(), boom);
    });
    let panicked = harness.call("test_game", "boom", json!({"now": true}));
    let error = panicked.expect_err("the panic is an error");
    assert_eq!(error.code.to_string(), "HANDLER_PANICKED");
    harness.run_frames(3);
    // The registry survived the panic: the action still runs.
    assert_eq!(
        ok(harness.call("test_game", "boom", json!({"now": false}))),
        json!({"fine": true})
    );
}

/// Builds an app with the bridge and `register`; returns the registration panic's message.
fn registration_error(register: impl FnOnce(&mut App)) -> String {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut app = App::new();
        app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>())
            .add_plugins(McpBridgePlugin::new(
                bevy_mcp_bridge::BridgeConfig::default().without_server(),
            ));
        register(&mut app);
    }));
    match outcome {
        Ok(()) => panic!("the registration was accepted"),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| {
                payload
                    .downcast_ref::<&str>()
                    .map(|text| (*text).to_owned())
            })
            .unwrap_or_default(),
    }
}

/// Parameters without a description on their field.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct Undocumented {
    #[schemars(range(min = 0, max = 3))]
    level: u32,
}

fn undocumented(In(params): In<Undocumented>) -> Result<Fine, ToolError> {
    Ok(Fine {
        fine: params.level < 4,
    })
}

#[test]
fn bad_registrations_stop_the_app_with_their_message() {
    let duplicate = registration_error(|app| {
        app.add_mcp_tool(test_tool())
            .add_mcp_action(boom_spec(), boom)
            .add_mcp_action(boom_spec(), boom);
    });
    assert!(
        duplicate.contains("test_game.boom") && duplicate.contains("duplicate action"),
        "{duplicate}"
    );
    let shadow_tool = registration_error(|app| {
        app.add_mcp_tool(ToolSpec::new("inspect", Category::Core, "Mine."));
    });
    assert!(
        shadow_tool.contains("shadow the built-in tool"),
        "{shadow_tool}"
    );
    let shadow_action = registration_error(|app| {
        app.add_mcp_tool(test_tool()).add_mcp_action(
            ActionSpec::new("test_game", "despawn", "Despawn my way.")
                .with_when("Never.", "Always.")
                .with_topics(&["despawn"])
                .with_example("No", json!({"now": false}), "fine."),
            boom,
        );
    });
    assert!(
        shadow_action.contains("shadow the built-in action control_entity.despawn"),
        "{shadow_action}"
    );
    let missing_description = registration_error(|app| {
        app.add_mcp_tool(test_tool()).add_mcp_action(
            ActionSpec::new("test_game", "undocumented", "Take a level.")
                .with_when("Never.", "Always.")
                .with_topics(&["level"])
                .with_example("Level one", json!({"level": 1}), "fine."),
            undocumented,
        );
    });
    assert!(
        missing_description.contains("/actions/0/params/properties/level")
            && missing_description.contains("no description"),
        "{missing_description}"
    );
    let bad_example = registration_error(|app| {
        app.add_mcp_tool(test_tool()).add_mcp_action(
            ActionSpec::new("test_game", "boom", "Panic on purpose, or not.")
                .with_when("To test panics.", "Never in a real game.")
                .with_topics(&["panic"])
                .with_example("Wrong", json!({"now": "yes"}), "nothing."),
            boom,
        );
    });
    assert!(
        bad_example.contains("/actions/0/examples/0/params/now")
            && bad_example.contains("does not match"),
        "{bad_example}"
    );
    let no_tool = registration_error(|app| {
        app.add_mcp_action(boom_spec(), boom);
    });
    assert!(no_tool.contains("add_mcp_tool"), "{no_tool}");
}

#[test]
fn a_long_game_action_stops_when_cancelled() {
    let mut harness = Harness::new();
    ok(harness.call("game", "spawn_wave", json!({"count": 2})));
    let waiting = harness.start(
        "game",
        "wait_for_wave_cleared",
        json!({"maxFrames": 100000}),
        ProgressSink::disabled(),
    );
    harness.run_frames(3);
    waiting.cancel.cancel();
    let cancelled = harness.finish(&waiting);
    assert_eq!(
        cancelled
            .err()
            .map(|error| error.code.to_string())
            .as_deref(),
        Some("CANCELLED")
    );
    // Nothing keeps running for it.
    harness.run_frames(2);
    assert_eq!(
        harness
            .world()
            .resource::<bevy_mcp_bridge::test_support::ActiveJobs>()
            .len(),
        0
    );
}

#[test]
fn a_game_action_that_declares_no_undo_is_listed_as_not_undoable() {
    let mut harness = Harness::with_app(|app| {
        app.add_mcp_tool(test_tool())
            .add_mcp_action(boom_spec(), boom)
            .add_mcp_action(
                ActionSpec::new(
                    "test_game",
                    "boom_gold",
                    "Panic on purpose, or not, with gold.",
                )
                .with_when("To test undo declarations.", "Never in a real game.")
                .with_topics(&["gold"])
                .with_example("No panic", json!({"now": false}), "fine.")
                .undoable(GameUndo::Resources(&["NoSuchGold"])),
                boom,
            );
    });
    ok(harness.call("test_game", "boom", json!({"now": false})));
    ok(harness.call("test_game", "boom_gold", json!({"now": false})));
    ok(harness.call("game", "add_score", json!({"team": "red", "points": 1})));
    let listed = ok(harness.call("history", "list", json!({})));
    let entries = &listed["entries"];
    assert_eq!(entries[0]["action"], json!("game.add_score"));
    assert_eq!(entries[0]["undoable"], json!(true), "{listed}");
    assert_eq!(entries[1]["action"], json!("test_game.boom_gold"));
    assert!(
        entries[1]["notUndoable"]
            .as_str()
            .is_some_and(|why| why.contains("NoSuchGold")),
        "{listed}"
    );
    assert_eq!(entries[2]["action"], json!("test_game.boom"));
    assert!(
        entries[2]["notUndoable"]
            .as_str()
            .is_some_and(|why| why.contains("ActionSpec::undoable")),
        "{listed}"
    );
    // Undo passes over both and takes back the score only.
    let undone = ok(harness.call("history", "undo", json!({"steps": 3})));
    assert_eq!(
        undone["undone"].as_array().map(Vec::len),
        Some(1),
        "{undone}"
    );
    assert_eq!(harness.world().resource::<Score>().red, 0);
}
