//! The plugin as Bevy users expect it: building it does not wait on the network, and its systems
//! are a public set a game can order its own systems against.

use bevy::MinimalPlugins;
use bevy::app::{App, PluginGroup, ScheduleRunnerPlugin};
use bevy::prelude::{IntoScheduleConfigs, Name, Query, ResMut, Resource};
use bevy_mcp_bridge::{BridgeEndpoint, BridgeLast, BridgeSystems, McpBridgePlugin};
use bevy_mcp_sandbox::testing::Harness;
use serde_json::json;

#[test]
fn building_the_plugin_does_not_wait_for_the_transport() {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>())
        .add_plugins(McpBridgePlugin::new(
            bevy_mcp_sandbox::bridge_config().with_port(0),
        ));
    assert_eq!(
        app.world().get_resource::<BridgeEndpoint>(),
        Some(&BridgeEndpoint::Starting),
        "build returns before anything is bound"
    );
    app.finish();
    app.cleanup();
    let mut endpoint = BridgeEndpoint::Starting;
    for _ in 0..4_000 {
        app.update();
        endpoint = app
            .world()
            .get_resource::<BridgeEndpoint>()
            .cloned()
            .unwrap_or(BridgeEndpoint::Disabled);
        if endpoint != BridgeEndpoint::Starting {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        matches!(endpoint, BridgeEndpoint::Listening { ref url, .. } if url.ends_with("/mcp")),
        "{endpoint:?}"
    );
}

/// How many entities named "Ordered" game systems saw, frame by frame: before and after the
/// bridge's calls.
#[derive(Resource, Default)]
struct Seen {
    before: Vec<usize>,
    after: Vec<usize>,
}

fn ordered(names: &Query<&Name>) -> usize {
    names
        .iter()
        .filter(|name| name.as_str() == "Ordered")
        .count()
}

fn count_before(names: Query<&Name>, mut seen: ResMut<Seen>) {
    seen.before.push(ordered(&names));
}

fn count_after(names: Query<&Name>, mut seen: ResMut<Seen>) {
    seen.after.push(ordered(&names));
}

#[test]
fn game_systems_can_run_before_and_after_the_bridge_calls() {
    let mut harness = Harness::new();
    harness.app.init_resource::<Seen>().add_systems(
        BridgeLast,
        (
            count_before.before(BridgeSystems::Calls),
            count_after.after(BridgeSystems::Calls),
        ),
    );
    harness
        .call("control_entity", "spawn", json!({"name": "Ordered"}))
        .unwrap_or_else(|error| panic!("{error}"));
    let seen = harness.world().resource::<Seen>();
    // In the frame that ran the call, the entity is not there before the bridge's set and is
    // there after it.
    let frames: Vec<(usize, usize)> = seen
        .before
        .iter()
        .copied()
        .zip(seen.after.iter().copied())
        .collect();
    assert!(frames.contains(&(0, 1)), "{frames:?}");
}

/// The bridge is a plugin group: leaving the journal out leaves every action working, with
/// nothing journaled (history says so instead of failing).
#[test]
fn the_bridge_works_without_its_history_plugin() {
    use bevy_mcp_bridge::{BridgeHistoryPlugin, LocalCalls};
    use mcp_native_transport::ProgressSink;
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.build().disable::<ScheduleRunnerPlugin>())
        .add_plugins(bevy_mcp_sandbox::SandboxPlugin)
        .add_plugins(
            McpBridgePlugin::new(bevy_mcp_sandbox::bridge_config().without_server())
                .build()
                .disable::<BridgeHistoryPlugin>(),
        );
    app.finish();
    app.cleanup();
    app.update();
    let calls = app
        .world()
        .get_resource::<LocalCalls>()
        .cloned()
        .expect("the core plugin builds the gateway in the first frame");
    let answer = |app: &mut App, tool: &str, action: &str, params| {
        let mut pending = calls.start("test", tool, action, params, ProgressSink::disabled());
        for _ in 0..100 {
            if let Some(answer) = pending.try_answer() {
                return answer;
            }
            app.update();
        }
        panic!("{tool}.{action} did not answer");
    };
    let renamed = answer(
        &mut app,
        "control_entity",
        "rename",
        json!({"entity": "Orc", "name": "Grunt"}),
    );
    assert!(renamed.is_ok(), "{renamed:?}");
    let listed =
        answer(&mut app, "history", "list", json!({})).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(listed.value["entries"], json!([]), "nothing is journaled");
    let undo = answer(&mut app, "history", "undo", json!({}));
    assert_eq!(
        undo.err().map(|error| error.code.to_string()).as_deref(),
        Some("NOTHING_TO_UNDO")
    );
}
