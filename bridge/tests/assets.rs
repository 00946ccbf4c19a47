//! `manage_asset` on a headless sandbox with its asset folder (`bridge/assets`).

use bevy_mcp_bridge::testing::Harness;
use serde_json::{Value, json};

fn code(result: &Result<Value, mcp_native_transport::ActionError>) -> Option<&str> {
    result.as_ref().err().map(|error| error.code.as_str())
}

#[test]
fn list_files_load_and_inspect_assets() {
    let mut harness = Harness::new();
    let files = harness
        .call("manage_asset", "list_files", json!({"limit": 50}))
        .expect("list files");
    let paths: Vec<&str> = files["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|row| row["path"].as_str())
        .collect();
    assert_eq!(paths, ["hello.note", "notes/briefing.note"]);
    let folder = harness
        .call(
            "manage_asset",
            "list_files",
            json!({"folder": "notes", "limit": 50}),
        )
        .expect("list folder");
    assert_eq!(folder["total"], json!(1));

    let unknown = harness.call("manage_asset", "get_info", json!({"path": "hello.note"}));
    assert_eq!(code(&unknown), Some("ASSET_NOT_FOUND"));
    let loaded = harness
        .call("manage_asset", "load", json!({"path": "hello.note"}))
        .expect("load");
    assert_eq!(loaded["state"], json!("loaded"));
    assert_eq!(loaded["type"], json!("bevy_mcp_bridge::sandbox::Note"));
    let notes = harness
        .world()
        .resource::<bevy::asset::Assets<bevy_mcp_bridge::sandbox::Note>>();
    assert!(
        notes
            .iter()
            .any(|(_, note)| note.text == "Hello from the sandbox.\n"),
        "the asset is in memory"
    );
    harness.run_frames(3);
    let listed = harness
        .call(
            "manage_asset",
            "list_loaded",
            json!({"type": "Note", "limit": 50}),
        )
        .expect("list loaded");
    assert_eq!(
        listed["total"],
        json!(1),
        "the bridge keeps it alive: {listed}"
    );
    assert_eq!(listed["assets"][0]["path"], json!("hello.note"));
    assert_eq!(listed["assets"][0]["state"], json!("loaded"));
    let info = harness
        .call("manage_asset", "get_info", json!({"path": "hello.note"}))
        .expect("info");
    assert!(
        info["assets"]
            .as_array()
            .is_some_and(|assets| assets.iter().any(|asset| asset["state"] == json!("loaded")))
    );
}

#[test]
fn failed_loads_say_why_and_paths_stay_inside() {
    let mut harness = Harness::new();
    let missing = harness.call("manage_asset", "load", json!({"path": "nope.note"}));
    assert_eq!(code(&missing), Some("ASSET_LOAD_FAILED"));
    let no_loader = harness.call("manage_asset", "load", json!({"path": "hello.unknownext"}));
    assert_eq!(code(&no_loader), Some("ASSET_LOAD_FAILED"));
    assert!(
        no_loader
            .err()
            .is_some_and(|error| error.message.contains("could not be loaded"))
    );
    for bad in ["../Cargo.toml", "/etc/passwd", "notes/../../x"] {
        let refused = harness.call("manage_asset", "load", json!({"path": bad}));
        assert_eq!(code(&refused), Some("PATH_NOT_PERMITTED"), "{bad}");
        let refused = harness.call(
            "manage_asset",
            "list_files",
            json!({"folder": bad, "limit": 5}),
        );
        assert_eq!(code(&refused), Some("PATH_NOT_PERMITTED"), "{bad}");
    }
}
