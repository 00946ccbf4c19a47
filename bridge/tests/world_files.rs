//! `manage_world` on a headless sandbox with a temporary scenes directory.

use bevy::prelude::{Name, Transform};
use bevy_mcp_bridge::handlers::manage_world::ScenesDir;
use bevy_mcp_bridge::sandbox::{Health, Score, Team, Velocity};
use bevy_mcp_bridge::testing::Harness;
use serde_json::{Value, json};

fn harness_in(dir: &std::path::Path) -> Harness {
    let mut harness = Harness::new();
    harness.world().insert_resource(ScenesDir(dir.to_owned()));
    harness
}

fn code(result: &Result<Value, mcp_native_transport::ActionError>) -> Option<&str> {
    result.as_ref().err().map(|error| error.code.as_str())
}

/// Every named entity's components, keyed by name, as comparable text.
fn snapshot(harness: &mut Harness) -> Vec<(String, String)> {
    let world = harness.world();
    let mut query = world.query::<(
        &Name,
        Option<&Transform>,
        Option<&Velocity>,
        Option<&Health>,
        Option<&Team>,
    )>();
    let mut rows: Vec<(String, String)> = query
        .iter(world)
        .map(|(name, transform, velocity, health, team)| {
            (
                name.as_str().to_owned(),
                format!("{transform:?} {velocity:?} {health:?} {team:?}"),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn save_clear_load_restores_component_values_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    harness
        .world()
        .resource_mut::<bevy::prelude::Time<bevy::prelude::Virtual>>()
        .pause();
    harness.run_frames(2);
    let before = snapshot(&mut harness);
    let saved = harness
        .call(
            "manage_world",
            "save",
            json!({"name": "checkpoint", "includeResources": true, "overwrite": false}),
        )
        .expect("save");
    assert_eq!(saved["entityCount"], json!(6));
    assert!(dir.path().join("checkpoint.scn.ron").exists());

    let cleared = harness
        .call("manage_world", "clear", json!({}))
        .expect("clear");
    assert_eq!(cleared["despawned"], json!(6));
    assert!(snapshot(&mut harness).is_empty());
    harness.world().resource_mut::<Score>().red = 99;

    let loaded = harness
        .call("manage_world", "load", json!({"name": "checkpoint"}))
        .expect("load");
    assert_eq!(loaded["spawned"], json!(6));
    assert_eq!(loaded["mapping"].as_array().map(Vec::len), Some(6));
    assert_eq!(
        snapshot(&mut harness),
        before,
        "every component value is back"
    );
    assert_eq!(
        harness.world().resource::<Score>().red,
        0,
        "resources were restored too"
    );
    let turret = harness.entity("Turret");
    let base = harness.entity("Base");
    assert_eq!(
        harness
            .world()
            .get::<bevy::prelude::ChildOf>(turret)
            .map(|child_of| child_of.parent()),
        Some(base)
    );
}

#[test]
fn selections_overwrite_and_listing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    let saved = harness
        .call("manage_world", "save", json!({"name": "teams/red", "withComponents": ["Team"], "names": ["Goblin", "Orc", "Player"], "includeResources": false, "overwrite": false}))
        .expect("save");
    assert_eq!(saved["entityCount"], json!(3));
    let again = harness.call(
        "manage_world",
        "save",
        json!({"name": "teams/red", "includeResources": false, "overwrite": false}),
    );
    assert_eq!(code(&again), Some("FILE_EXISTS"));
    let replaced = harness
        .call("manage_world", "save", json!({"name": "teams/red", "entities": ["Goblin"], "includeResources": false, "overwrite": true}))
        .expect("overwrite");
    assert_eq!(replaced["entityCount"], json!(1));
    let files = harness
        .call("manage_world", "list_files", json!({}))
        .expect("list");
    assert_eq!(
        files["files"],
        json!([{"name": "teams/red.scn.ron", "bytes": replaced["bytes"]}])
    );
}

#[test]
fn describe_file_spawns_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    harness
        .call(
            "manage_world",
            "save",
            json!({"name": "all", "includeResources": false, "overwrite": false}),
        )
        .expect("save");
    let count = harness.world().entities().count_spawned();
    let described = harness
        .call("manage_world", "describe_file", json!({"name": "all"}))
        .expect("describe");
    assert_eq!(described["entityCount"], json!(6));
    assert!(
        described["names"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("Player")))
    );
    assert!(described["componentTypes"].as_array().is_some_and(|types| {
        types
            .iter()
            .any(|row| row["type"] == json!("bevy_mcp_bridge::sandbox::Health"))
    }));
    harness.run_frames(1);
    assert_eq!(harness.world().entities().count_spawned(), count);
}

#[test]
fn every_path_escape_is_refused() {
    let root = tempfile::tempdir().expect("temp dir");
    let scenes = root.path().join("scenes");
    std::fs::create_dir_all(&scenes).expect("scenes dir");
    let outside = root.path().join("outside.scn.ron");
    std::fs::write(&outside, "(resources: {}, entities: {})").expect("outside file");
    let mut harness = harness_in(&scenes);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, scenes.join("link.scn.ron")).expect("file link");
        std::os::unix::fs::symlink(root.path(), scenes.join("up")).expect("folder link");
    }
    for name in [
        "/etc/passwd",
        "../outside",
        "a/../../outside",
        "link",
        "up/outside",
        ".hidden",
    ] {
        for (action, params) in [
            ("load", json!({"name": name})),
            ("describe_file", json!({"name": name})),
            (
                "save",
                json!({"name": name, "includeResources": false, "overwrite": true}),
            ),
        ] {
            let result = harness.call("manage_world", action, params);
            assert_eq!(
                code(&result),
                Some("PATH_NOT_PERMITTED"),
                "{action} {name}: {result:?}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(&outside).ok().as_deref(),
        Some("(resources: {}, entities: {})"),
        "nothing outside was written"
    );
}

#[test]
fn a_broken_file_spawns_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    std::fs::write(
        dir.path().join("broken.scn.ron"),
        "(entities: {4294967296: (components: {\"no::Such\": ()})})",
    )
    .expect("write");
    let count = harness.world().entities().count_spawned();
    let loaded = harness.call("manage_world", "load", json!({"name": "broken"}));
    assert_eq!(code(&loaded), Some("INVALID_FILE"));
    assert_eq!(harness.world().entities().count_spawned(), count);
    let missing = harness.call("manage_world", "load", json!({"name": "nope"}));
    assert_eq!(code(&missing), Some("FILE_NOT_FOUND"));
}
