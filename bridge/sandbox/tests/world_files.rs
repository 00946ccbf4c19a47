//! `manage_world` on a headless sandbox with a temporary scenes directory.

use bevy::prelude::{Name, Transform};
use bevy_mcp_bridge::test_support::ScenesDir;
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{Health, Score, Team, Velocity};
use serde_json::{Value, json};

fn harness_in(dir: &std::path::Path) -> Harness {
    let mut harness = Harness::new();
    harness.world().insert_resource(ScenesDir(dir.to_owned()));
    harness
}

fn code(result: &Result<Value, mcp_native_transport::ToolError>) -> Option<&str> {
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
            .any(|row| row["type"] == json!("bevy_mcp_sandbox::Health"))
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

/// Writes a world file made of `entities` (file id, components) and `resources`.
fn write_file(
    harness: &mut Harness,
    dir: &std::path::Path,
    name: &str,
    entities: Vec<(
        bevy::prelude::Entity,
        Vec<Box<dyn bevy::reflect::PartialReflect>>,
    )>,
    resources: Vec<Box<dyn bevy::reflect::PartialReflect>>,
) {
    use bevy::world_serialization::{DynamicEntity, DynamicWorld};
    let snapshot = DynamicWorld {
        resources,
        entities: entities
            .into_iter()
            .map(|(entity, components)| DynamicEntity { entity, components })
            .collect(),
    };
    let registry = harness
        .world()
        .resource::<bevy::ecs::reflect::AppTypeRegistry>()
        .clone();
    let text = snapshot
        .serialize(&registry.read())
        .expect("serialize the file");
    std::fs::write(dir.join(format!("{name}.scn.ron")), text).expect("write the file");
}

/// File ids, as a saved world has them.
fn file_entity(index: u32) -> bevy::prelude::Entity {
    bevy::prelude::Entity::from_raw_u32(index).expect("a valid index")
}

#[test]
fn loads_rebuild_relations_and_refuse_loops_protected_types_and_bad_values() {
    use bevy::prelude::{ChildOf, Children, Time, Virtual};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    let (a, b, outside) = (file_entity(1000), file_entity(1001), file_entity(1002));
    let entities_before = harness.world().entities().count_spawned();

    // A parent loop, saved with Bevy's own types: refused, nothing spawned.
    write_file(
        &mut harness,
        dir.path(),
        "loop",
        vec![
            (a, vec![Box::new(Name::new("A")), Box::new(ChildOf(b))]),
            (b, vec![Box::new(Name::new("B")), Box::new(ChildOf(a))]),
        ],
        vec![],
    );
    let refused = harness.call("manage_world", "load", json!({"name": "loop"}));
    assert_eq!(code(&refused), Some("INVALID_FILE"));
    let message = refused.err().map(|error| error.message).unwrap_or_default();
    assert!(message.contains("loop"), "{message}");
    assert_eq!(harness.world().entities().count_spawned(), entities_before);

    // A clock in a file is protected like everywhere else.
    let mut time = Time::<Virtual>::default();
    time.set_relative_speed(2.0);
    write_file(
        &mut harness,
        dir.path(),
        "clock",
        vec![],
        vec![Box::new(time)],
    );
    let clock = harness.call("manage_world", "load", json!({"name": "clock"}));
    assert_eq!(code(&clock), Some("INVALID_FILE"));
    let message = clock.err().map(|error| error.message).unwrap_or_default();
    assert!(message.contains("protected"), "{message}");

    // Non-finite values are refused in files as in calls.
    let bad = Transform::from_xyz(f32::INFINITY, 0.0, 0.0);
    write_file(
        &mut harness,
        dir.path(),
        "infinite",
        vec![(a, vec![Box::new(bad)])],
        vec![],
    );
    let infinite = harness.call("manage_world", "load", json!({"name": "infinite"}));
    assert_eq!(code(&infinite), Some("INVALID_FILE"));
    assert_eq!(harness.world().entities().count_spawned(), entities_before);

    // A one-sided relation (Children without the matching ChildOf) and a parent outside the
    // file: Bevy rebuilds the target side from the sources, and the stray parent is listed.
    write_file(
        &mut harness,
        dir.path(),
        "family",
        vec![
            (a, vec![Box::new(Name::new("Mother"))]),
            (b, vec![Box::new(Name::new("Kid")), Box::new(ChildOf(a))]),
            (
                outside,
                vec![
                    Box::new(Name::new("Stray")),
                    Box::new(ChildOf(file_entity(9999))),
                ],
            ),
        ],
        vec![],
    );
    let loaded = harness
        .call("manage_world", "load", json!({"name": "family"}))
        .expect("the family loads");
    assert_eq!(loaded["spawned"], json!(3));
    assert_eq!(loaded["detached"][0]["entity"]["name"], json!("Stray"));
    let (mother, kid, stray) = (
        harness.entity("Mother"),
        harness.entity("Kid"),
        harness.entity("Stray"),
    );
    let world = harness.world();
    assert_eq!(world.get::<ChildOf>(kid).map(ChildOf::parent), Some(mother));
    assert_eq!(
        world
            .get::<Children>(mother)
            .map(|children| children.to_vec()),
        Some(vec![kid]),
        "the parent's side is rebuilt by Bevy"
    );
    assert!(world.get::<ChildOf>(stray).is_none());
    // Despawning the loaded parent takes its child and ends.
    harness
        .world()
        .get_entity_mut(mother)
        .expect("mother")
        .despawn();
    assert!(harness.world().get_entity(kid).is_err());
}

#[test]
fn saves_leave_out_what_a_load_would_refuse() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness_in(dir.path());
    let saved = harness
        .call(
            "manage_world",
            "save",
            json!({"name": "all", "includeResources": true, "overwrite": false}),
        )
        .expect("save");
    let skipped: Vec<&str> = saved["skipped"]
        .as_array()
        .expect("skipped rows")
        .iter()
        .filter_map(|row| row["type"].as_str())
        .collect();
    assert!(
        skipped
            .iter()
            .any(|type_path| type_path.starts_with("bevy_time::")),
        "{skipped:?}"
    );
    // What was saved loads again, relations included.
    let loaded = harness
        .call("manage_world", "load", json!({"name": "all"}))
        .expect("load");
    assert_eq!(loaded["spawned"], json!(6));
    assert_eq!(loaded["detached"], json!([]));
}

/// A link planted in the scenes directory never leads a save outside it: not through a folder
/// on the way (nothing is created beyond the link), not through the temporary file's name.
#[cfg(unix)]
#[test]
fn saves_never_follow_planted_links() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("outside dir");
    let mut harness = harness_in(dir.path());
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("plant a link");
    let through = harness.call(
        "manage_world",
        "save",
        json!({"name": "link/sub/x", "includeResources": false, "overwrite": false}),
    );
    assert_eq!(code(&through), Some("PATH_NOT_PERMITTED"));
    assert!(
        !outside.path().join("sub").exists(),
        "no folder was created outside"
    );
    // The name the temporary file used to get, planted as a link to a file outside.
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim file");
    let predictable = format!(".x.scn.ron.tmp-{}", std::process::id());
    std::os::unix::fs::symlink(&victim, dir.path().join(predictable)).expect("plant a link");
    harness
        .call(
            "manage_world",
            "save",
            json!({"name": "x", "includeResources": false, "overwrite": false}),
        )
        .expect("save");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "keep me",
        "the file outside was not written"
    );
    assert!(
        std::fs::symlink_metadata(dir.path().join("x.scn.ron"))
            .is_ok_and(|metadata| metadata.is_file()),
        "the save is a regular file"
    );
    // A link in place of the target itself is refused, even with overwrite.
    std::os::unix::fs::symlink(&victim, dir.path().join("y.scn.ron")).expect("plant a link");
    let over = harness.call(
        "manage_world",
        "save",
        json!({"name": "y", "includeResources": false, "overwrite": true}),
    );
    assert_eq!(code(&over), Some("PATH_NOT_PERMITTED"));
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
}
