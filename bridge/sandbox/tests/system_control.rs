//! `system_control` on a headless sandbox. Log capture uses a process-wide ring, so the log test
//! lives alone in this file.

use bevy::app::App;
use bevy::log::tracing_subscriber::Registry;
use bevy::log::tracing_subscriber::layer::SubscriberExt;
use bevy_mcp_bridge::capture_logs;
use bevy_mcp_sandbox::testing::Harness;
use serde_json::json;

#[test]
fn app_info_and_diagnostics() {
    let mut harness = Harness::new();
    let info = harness
        .call("system_control", "app_info", json!({}))
        .expect("app_info");
    assert_eq!(info["bevyVersion"], json!(bevy::compat::BEVY_VERSION));
    // The served catalog: the generated revision, then the game's own actions.
    let served = harness
        .world()
        .resource::<bevy_mcp_bridge::ServedCatalog>()
        .0
        .revision;
    assert_eq!(info["catalogRevision"], json!(served));
    assert!(served.starts_with(bevy_mcp_bridge::CATALOG.revision));
    assert_eq!(info["limits"]["maxSessions"], json!(512));
    assert_eq!(info["endpoint"]["tokenRequired"], json!(false));
    let plugins = info["plugins"].as_array().expect("plugins");
    for plugin in [
        "bevy_time::TimePlugin",
        "bevy_asset::AssetPlugin",
        "bevy_mcp_bridge::plugin::McpBridgePlugin",
    ] {
        assert!(
            plugins.contains(&json!(plugin)),
            "{plugin} is missing from {plugins:?}"
        );
    }
    assert!(
        !plugins.contains(&json!("bevy_log::LogPlugin")),
        "the harness adds no LogPlugin"
    );
    harness.run_frames(10);
    let diagnostics = harness
        .call("system_control", "diagnostics", json!({}))
        .expect("diagnostics");
    assert_eq!(diagnostics["entityCount"], json!(6));
    assert!(
        diagnostics["frameTimeMs"]["samples"]
            .as_u64()
            .is_some_and(|samples| samples >= 10)
    );
    assert!(diagnostics["fps"].as_f64().is_some_and(|fps| fps > 0.0));
}

#[test]
fn logs_are_captured_filtered_and_read_since_a_cursor() {
    let mut harness = Harness::new();
    let before = harness
        .call(
            "system_control",
            "get_logs",
            json!({"level": "info", "limit": 100}),
        )
        .expect("get_logs");
    assert_eq!(before["capturing"], json!(false), "nothing installed yet");

    let layer = capture_logs(&mut App::new()).expect("a layer");
    let subscriber = Registry::default().with(layer);
    bevy::log::tracing::subscriber::with_default(subscriber, || {
        bevy::log::tracing::info!(target: "game", "the door opened");
        bevy::log::tracing::warn!(target: "game", hp = 3, "the player is hurt");
        bevy::log::tracing::error!(target: "physics", "collider missing");
        bevy::log::tracing::debug!(target: "game", "noise");
    });
    let warnings = harness
        .call(
            "system_control",
            "get_logs",
            json!({"level": "warn", "limit": 100}),
        )
        .expect("get_logs");
    let messages: Vec<&str> = warnings["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(|line| line["message"].as_str())
        .collect();
    assert_eq!(messages, ["the player is hurt hp=3", "collider missing"]);
    let cursor = warnings["cursor"].as_u64().expect("cursor");

    let text = harness
        .call(
            "system_control",
            "get_logs",
            json!({"level": "trace", "contains": "DOOR", "limit": 100}),
        )
        .expect("get_logs");
    assert_eq!(text["lines"].as_array().map(Vec::len), Some(1));

    let subscriber = Registry::default().with(capture_logs(&mut App::new()).expect("a layer"));
    bevy::log::tracing::subscriber::with_default(subscriber, || {
        bevy::log::tracing::warn!("after the cursor")
    });
    let newer = harness
        .call(
            "system_control",
            "get_logs",
            json!({"level": "info", "since": cursor, "limit": 100}),
        )
        .expect("get_logs");
    let messages: Vec<&str> = newer["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(|line| line["message"].as_str())
        .collect();
    assert_eq!(messages, ["after the cursor"]);
    let limited = harness
        .call(
            "system_control",
            "get_logs",
            json!({"level": "trace", "limit": 1}),
        )
        .expect("get_logs");
    assert_eq!(
        limited["lines"][0]["message"],
        json!("after the cursor"),
        "the newest lines win"
    );
    assert_eq!(limited["dropped"], json!(4));
}
