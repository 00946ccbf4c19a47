//! `manage_asset` on a headless sandbox with its asset folder (`bridge/assets`).

use bevy_mcp_sandbox::testing::Harness;
use serde_json::{Value, json};

fn code(result: &Result<Value, mcp_native_transport::ToolError>) -> Option<&str> {
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
    assert_eq!(
        paths,
        [
            "hello.note",
            "models/crate.gltf",
            "notes/briefing.note",
            "textures/checker.png"
        ]
    );
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
    assert_eq!(loaded["type"], json!("bevy_mcp_sandbox::Note"));
    let notes = harness
        .world()
        .resource::<bevy::asset::Assets<bevy_mcp_sandbox::Note>>();
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

/// `load` checks the path the way `list_files` does: a link planted in the asset folder is
/// refused before the asset server (which follows links) opens anything.
#[cfg(unix)]
#[test]
fn loads_never_follow_planted_links() {
    let root = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("outside dir");
    std::fs::write(outside.path().join("secret.note"), "secret").expect("secret");
    std::os::unix::fs::symlink(
        outside.path().join("secret.note"),
        root.path().join("link.note"),
    )
    .expect("plant a file link");
    std::os::unix::fs::symlink(outside.path(), root.path().join("folder"))
        .expect("plant a folder link");
    let mut harness = Harness::new();
    harness
        .world()
        .insert_resource(bevy_mcp_bridge::test_support::AssetRoot(
            root.path().to_owned(),
        ));
    for path in ["link.note", "folder/secret.note"] {
        let refused = harness.call("manage_asset", "load", json!({"path": path}));
        assert_eq!(code(&refused), Some("PATH_NOT_PERMITTED"), "{path}");
    }
}

/// The bridge's hold on loaded assets is bounded and can be released.
#[test]
fn held_assets_are_bounded_and_releasable() {
    use bevy_mcp_bridge::test_support::HeldAssets;
    let mut harness = Harness::new();
    for path in ["hello.note", "notes/briefing.note"] {
        harness
            .call("manage_asset", "load", json!({"path": path}))
            .expect("load");
    }
    assert_eq!(harness.world().resource::<HeldAssets>().0.len(), 2);
    let one = harness
        .call("manage_asset", "release", json!({"path": "hello.note"}))
        .expect("release one");
    assert_eq!(
        one,
        json!({"released": ["hello.note"], "held": 1, "made": 0})
    );
    let again = harness.call("manage_asset", "release", json!({"path": "hello.note"}));
    assert_eq!(code(&again), Some("ASSET_NOT_FOUND"));
    let neither = harness.call("manage_asset", "release", json!({}));
    assert_eq!(code(&neither), Some("INVALID_PARAMS"));
    let all = harness
        .call("manage_asset", "release", json!({"all": true}))
        .expect("release all");
    assert_eq!(all["held"], json!(0));
}

/// Loading more than the bound lets go of the oldest hold.
#[test]
fn the_oldest_hold_goes_beyond_the_bound() {
    use bevy_mcp_bridge::test_support::HeldAssets;
    use bevy_mcp_bridge::{WriteLimits, WritePolicy};
    let mut harness = Harness::new();
    let mut config = bevy_mcp_bridge::PolicyConfig::default();
    let mut limits = WriteLimits::default();
    limits.max_held_assets(1);
    config.limits = limits;
    harness.world().insert_resource(WritePolicy::new(config));
    for path in ["hello.note", "notes/briefing.note"] {
        harness
            .call("manage_asset", "load", json!({"path": path}))
            .expect("load");
    }
    let held: Vec<String> = harness
        .world()
        .resource::<HeldAssets>()
        .0
        .iter()
        .map(|(path, _)| path.clone())
        .collect();
    assert_eq!(held, ["notes/briefing.note"]);
}
