//! Asset handles as JSON on a headless sandbox: a `Signpost` holds a `Handle<Note>`, written by
//! path, by reference and as a new asset, read back in the same forms, undone, and refused with a
//! typed error that changes nothing.

use bevy::app::App;
use bevy::asset::{Assets, Handle};
use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Component, Reflect, ReflectDefault};
use bevy_mcp_bridge::WriteLimits;
use bevy_mcp_bridge::test_support::MadeAssets;
use bevy_mcp_sandbox::Note;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

/// A sign that shows a note: a component holding an asset handle (the sequence fuzzer writes it
/// too).
#[derive(Component, Reflect, Default, Debug, Clone)]
#[reflect(Component, Default, no_auto_register)]
pub(crate) struct Signpost {
    /// The note it shows.
    shows: Handle<Note>,
}

/// Registers [`Signpost`] in a test's app.
pub(crate) fn with_signposts(app: &mut App) {
    app.register_type::<Signpost>();
}

fn sandbox() -> Harness {
    Harness::with_app(with_signposts)
}

/// Spawns a signpost showing `note`; answers with the spawn's reply, its `entity` the new id.
fn spawn_signpost(harness: &mut Harness, note: Value) -> Result<Value, ToolError> {
    let mut spawned = harness.call(
        "control_entity",
        "spawn",
        json!({"components": {"Signpost": {"shows": note}}}),
    )?;
    spawned["entity"] = spawned["entity"]["entity"].clone();
    Ok(spawned)
}

fn note_of(harness: &mut Harness, entity: &Value) -> Value {
    let read = harness
        .call(
            "inspect",
            "get_entity",
            json!({"entity": entity, "components": ["Signpost"]}),
        )
        .expect("read the signpost");
    read["components"]
        .as_object()
        .and_then(|components| components.values().next())
        .map(|signpost| signpost["shows"].clone())
        .unwrap_or_default()
}

/// What a refused write must leave as it was.
#[derive(Debug, PartialEq)]
struct Counts {
    entities: usize,
    notes: usize,
    made: usize,
}

fn counts(harness: &mut Harness) -> Counts {
    let world = harness.world();
    Counts {
        entities: world.iter_entities().count(),
        notes: world.resource::<Assets<Note>>().len(),
        made: world
            .get_resource::<MadeAssets>()
            .map_or(0, |made| made.0.len()),
    }
}

#[test]
fn a_handle_is_written_by_path_reference_or_value_and_read_back_the_same_way() {
    let mut harness = sandbox();
    let by_path = spawn_signpost(&mut harness, json!("hello.note")).expect("spawn by path");
    // Waits, over frames, until the asset server has loaded the file the signpost asked for.
    harness
        .call("manage_asset", "load", json!({"path": "hello.note"}))
        .expect("the file loads");
    assert_eq!(
        note_of(&mut harness, &by_path["entity"]),
        json!("hello.note")
    );
    let loaded = harness.world().resource::<Assets<Note>>();
    assert!(
        loaded
            .iter()
            .any(|(_, note)| note.text == "Hello from the sandbox.\n"),
        "the file is loaded for the signpost"
    );

    let made =
        spawn_signpost(&mut harness, json!({"new": {"text": "made here"}})).expect("spawn new");
    let reference = note_of(&mut harness, &made["entity"]);
    assert_eq!(reference["type"], json!("bevy_mcp_sandbox::Note"));
    let id = reference["asset"].as_str().expect("an id").to_owned();
    let shared = spawn_signpost(&mut harness, json!({"asset": id})).expect("spawn by reference");
    assert_eq!(note_of(&mut harness, &shared["entity"]), reference);
    assert_eq!(counts(&mut harness).made, 1);

    // Changing the shared asset changes what both signposts show.
    let changed = harness
        .call(
            "manage_asset",
            "mutate",
            json!({"asset": id, "path": ".text", "value": "changed"}),
        )
        .expect("mutate the note");
    assert_eq!(changed["before"], json!("made here"));
    assert_eq!(changed["after"], json!("changed"));
    let read = harness
        .call("manage_asset", "get", json!({"asset": id}))
        .expect("get the note");
    assert_eq!(read["value"], json!({"text": "changed"}));
    assert_eq!(read["madeByBridge"], json!(true));
    assert_eq!(read["usedByCount"], json!(2), "{read}");
    let users: Vec<&Value> = read["usedBy"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| &row["entity"])
        .collect();
    assert!(users.contains(&&made["entity"]) && users.contains(&&shared["entity"]));

    // An asset the game itself made (not from a file) reads as a reference too.
    let game_made = harness.world().resource_mut::<Assets<Note>>().add(Note {
        text: "the game's".to_owned(),
    });
    let entity = harness
        .world()
        .spawn(Signpost {
            shows: game_made.clone(),
        })
        .id();
    let read = note_of(&mut harness, &json!(entity.to_string()));
    let game_id = read["asset"].as_str().expect("an id").to_owned();
    drop(game_made);
    // Found through the component that holds it.
    let again = spawn_signpost(&mut harness, json!({"asset": game_id})).expect("by reference");
    assert_eq!(
        note_of(&mut harness, &again["entity"])["asset"],
        json!(game_id)
    );
}

#[test]
fn a_write_to_a_handle_is_undone_to_the_handle_before() {
    let mut harness = sandbox();
    let sign = spawn_signpost(&mut harness, json!("hello.note")).expect("spawn");
    harness
        .call(
            "control_entity",
            "mutate_component",
            json!({"entity": sign["entity"], "component": "Signpost", "path": ".shows", "value": {"new": {"text": "replacement"}}}),
        )
        .expect("point it at a new note");
    assert!(note_of(&mut harness, &sign["entity"])["asset"].is_string());
    harness.call("history", "undo", json!({})).expect("undo");
    assert_eq!(note_of(&mut harness, &sign["entity"]), json!("hello.note"));
    harness.call("history", "redo", json!({})).expect("redo");
    let redone = note_of(&mut harness, &sign["entity"]);
    let note = harness
        .call("manage_asset", "get", json!({"asset": redone["asset"]}))
        .expect("the made note is still there");
    assert_eq!(note["value"], json!({"text": "replacement"}));
}

#[test]
fn bad_handles_are_refused_with_a_typed_error_and_change_nothing() {
    let root = tempfile::tempdir().expect("asset folder");
    std::fs::write(root.path().join("readme.txt"), "not a note").expect("a text file");
    std::fs::write(root.path().join("ok.note"), "a note").expect("a note");
    let mut limits = WriteLimits::default();
    limits.max_made_assets(2);
    let mut harness =
        Harness::configured(|config| config.with_write_limits(limits), with_signposts);
    harness
        .world()
        .insert_resource(bevy_mcp_bridge::test_support::AssetRoot(
            root.path().to_owned(),
        ));
    spawn_signpost(&mut harness, json!({"new": {"text": "the one allowed"}}))
        .expect("one new note");
    let before = counts(&mut harness);
    let cases = [
        (json!("missing.note"), "INVALID_VALUE", Some("list_files")),
        (json!("readme.txt"), "INVALID_VALUE", Some("list_files")),
        (json!("../outside.note"), "PATH_NOT_PERMITTED", None),
        (json!("/etc/passwd"), "PATH_NOT_PERMITTED", None),
        (
            json!({"asset": "123456789"}),
            "INVALID_VALUE",
            Some("list_loaded"),
        ),
        (
            json!({"asset": "not an id"}),
            "INVALID_VALUE",
            Some("list_loaded"),
        ),
        (
            json!({"asset": "7b1e3a36-0000-4000-8000-000000000000"}),
            "INVALID_VALUE",
            Some("list_loaded"),
        ),
        (json!({"new": {"words": 3}}), "INVALID_VALUE", None),
        (
            json!({"path": "ok.note", "type": "bevy_mcp_sandbox::Signpost"}),
            "INVALID_VALUE",
            None,
        ),
        (json!(42), "INVALID_VALUE", None),
        (
            json!({"new": {"text": "x"}, "asset": "1"}),
            "INVALID_VALUE",
            None,
        ),
    ];
    for (note, code, next) in cases {
        let refused = spawn_signpost(&mut harness, note.clone()).expect_err(&note.to_string());
        assert_eq!(refused.code.as_str(), code, "{note}: {}", refused.message);
        if let Some(next) = next {
            let call = refused
                .next_call
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
            assert!(call.contains(next), "{note}: {call}");
        }
        assert_eq!(counts(&mut harness), before, "{note} changed nothing");
    }
    // Made assets are bounded: a third is refused and changes nothing either.
    spawn_signpost(&mut harness, json!({"new": {"text": "the second"}})).expect("a second");
    let before = counts(&mut harness);
    let refused = spawn_signpost(&mut harness, json!({"new": {"text": "one too many"}}))
        .expect_err("over the bound");
    assert_eq!(
        refused.code.as_str(),
        "LIMIT_EXCEEDED",
        "{}",
        refused.message
    );
    assert_eq!(counts(&mut harness), before);
    // A file the bound does not concern still loads.
    spawn_signpost(&mut harness, json!("ok.note")).expect("a note by path");
}

#[test]
fn made_assets_are_created_counted_and_freed() {
    let mut harness = sandbox();
    let created = harness
        .call(
            "manage_asset",
            "create_asset",
            json!({"type": "Note", "value": {"text": "by create"}}),
        )
        .expect("create");
    assert_eq!(created["made"], json!(1));
    assert_eq!(created["handle"]["type"], json!("bevy_mcp_sandbox::Note"));
    let sign = spawn_signpost(&mut harness, created["handle"].clone()).expect("use it");
    assert_eq!(note_of(&mut harness, &sign["entity"]), created["handle"]);
    let notes = counts(&mut harness).notes;
    let released = harness
        .call("manage_asset", "release", json!({"asset": created["id"]}))
        .expect("release");
    assert_eq!(released["released"], json!([created["id"]]));
    assert_eq!(released["made"], json!(0));
    assert_eq!(counts(&mut harness).notes, notes - 1, "the asset is freed");
    let gone = harness.call("manage_asset", "get", json!({"asset": created["id"]}));
    assert_eq!(gone.expect_err("freed").code.as_str(), "ASSET_NOT_FOUND");
    let not_an_asset = harness.call(
        "manage_asset",
        "create_asset",
        json!({"type": "Signpost", "value": {}}),
    );
    assert_eq!(
        not_an_asset.expect_err("a component").code.as_str(),
        "INVALID_VALUE"
    );
}

#[test]
fn describe_type_shows_the_handle_forms() {
    let mut harness = sandbox();
    let described = harness
        .call("inspect", "describe_type", json!({"type": "Signpost"}))
        .expect("describe");
    let text = described.to_string();
    assert!(
        text.contains("a handle to a bevy_mcp_sandbox::Note"),
        "{text}"
    );
    assert!(text.contains("\\\"new\\\""), "{text}");
}

#[test]
fn a_world_file_keeps_the_assets_the_bridge_made_and_loads_them_in_another_app() {
    let dir = tempfile::tempdir().expect("dir");
    let mut saving = Harness::paused_in_with(dir.path(), with_signposts);
    let made = spawn_signpost(&mut saving, json!({"new": {"text": "carried in the file"}}))
        .expect("spawn with a new note");
    let by_path = spawn_signpost(&mut saving, json!("hello.note")).expect("spawn by path");
    let made_handle = note_of(&mut saving, &made["entity"]);
    saving
        .call(
            "manage_world",
            "save",
            json!({"name": "signs", "entities": [made["entity"], by_path["entity"]], "includeResources": false}),
        )
        .expect("save");

    let mut loading = Harness::paused_in_with(dir.path(), with_signposts);
    assert!(
        loading
            .call(
                "manage_asset",
                "get",
                json!({"asset": made_handle["asset"]})
            )
            .is_err(),
        "a fresh app does not have it"
    );
    let loaded = loading
        .call("manage_world", "load", json!({"name": "signs"}))
        .expect("load");
    assert_eq!(loaded["spawned"], json!(2), "{loaded}");
    loading.run_frames(5);
    let found = loading
        .call(
            "inspect",
            "query",
            json!({"with": ["Signpost"], "components": ["Signpost"]}),
        )
        .expect("query");
    let shown: Vec<Value> = found["entities"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["components"].as_object()?.values().next())
        .map(|signpost| signpost["shows"].clone())
        .collect();
    assert!(shown.contains(&made_handle), "{shown:?}");
    assert!(shown.contains(&json!("hello.note")), "{found}");
    let note = loading
        .call(
            "manage_asset",
            "get",
            json!({"asset": made_handle["asset"]}),
        )
        .expect("made again from the file");
    assert_eq!(note["value"], json!({"text": "carried in the file"}));
    assert_eq!(note["madeByBridge"], json!(true));
    // Loading it again makes nothing twice.
    loading
        .call("manage_world", "load", json!({"name": "signs"}))
        .expect("load again");
    assert_eq!(
        loading.world().resource::<MadeAssets>().0.len(),
        1,
        "the asset is made once"
    );
}

#[test]
fn an_entity_the_game_despawned_comes_back_with_the_assets_it_held() {
    let dir = tempfile::tempdir().expect("dir");
    let mut harness = Harness::paused_in_with(dir.path(), with_signposts);
    // A note the game made at run time, held only by its entity.
    let note = harness.world().resource_mut::<Assets<Note>>().add(Note {
        text: "the game's own".to_owned(),
    });
    let id = note.id();
    let entity = harness
        .world()
        .spawn((
            bevy::prelude::Name::new("GameSign"),
            Signpost { shows: note },
        ))
        .id();
    harness
        .call("history", "checkpoint", json!({"name": "before"}))
        .expect("checkpoint");
    // The game despawns it (not through the bridge), and its note would go with it.
    harness.world().despawn(entity);
    harness.run_frames(3);
    assert!(
        harness.world().resource::<Assets<Note>>().get(id).is_some(),
        "the history keeps the note alive"
    );
    let restored = harness
        .call("history", "restore", json!({"name": "before"}))
        .expect("restore");
    let back = harness
        .call("inspect", "find_entities", json!({"name": "GameSign"}))
        .expect("find");
    assert_eq!(back["total"], json!(1), "{restored}");
    let shows = note_of(&mut harness, &back["entities"][0]["entity"]);
    let text = harness
        .call("manage_asset", "get", json!({"asset": shows["asset"]}))
        .expect("the note is there");
    assert_eq!(
        text["value"],
        json!({"text": "the game's own"}),
        "{restored}"
    );
}

#[test]
fn a_value_whose_asset_is_gone_is_named_not_restored_and_the_rest_comes_back() {
    let dir = tempfile::tempdir().expect("dir");
    let mut harness = Harness::paused_in_with(dir.path(), with_signposts);
    // Without the history's hold (as for an asset beyond the newest it keeps).
    harness
        .world()
        .remove_resource::<bevy_mcp_bridge::test_support::KeptByHistory>();
    let note = harness.world().resource_mut::<Assets<Note>>().add(Note {
        text: "soon gone".to_owned(),
    });
    let id = note.id();
    let entity = harness
        .world()
        .spawn((
            bevy::prelude::Name::new("LostSign"),
            Signpost { shows: note },
        ))
        .id();
    harness
        .call("history", "checkpoint", json!({"name": "before"}))
        .expect("checkpoint");
    harness.world().despawn(entity);
    let freed = (0..100).any(|_| {
        harness.run_frames(1);
        harness.world().resource::<Assets<Note>>().get(id).is_none()
    });
    assert!(freed, "nothing holds the note any more");
    let restored = harness
        .call("history", "restore", json!({"name": "before"}))
        .expect("the restore gives back what it can");
    let rows = restored["notRestored"].to_string();
    assert!(
        rows.contains("Signpost") && rows.contains("gone"),
        "{restored}"
    );
    let back = harness
        .call("inspect", "find_entities", json!({"name": "LostSign"}))
        .expect("find");
    assert_eq!(back["total"], json!(1), "{restored}");
}
