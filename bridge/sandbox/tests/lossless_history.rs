//! History that loses nothing: what the bridge removes is held out of the game's sight and comes
//! back whole (unreflected components and asset handles included, under the same id); what
//! cannot come back is named; undo and redo keep hierarchies and refuse loops; hierarchies stay
//! within their depth bound and deep ones the game built are removed without recursion; the
//! bridge's own entities are left alone; files and replays keep their bounds.
//!
//! Each test here failed before the change that made it pass (see the closing note of the issue
//! "History that loses nothing").

use bevy::asset::{Assets, Handle};
use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::{
    ChildOf, Component, Entity, Name, Reflect, ReflectComponent, Resource, Time, Transform,
    Virtual, With, World,
};
use bevy::reflect::TypePath;
use bevy_mcp_bridge::playtest::{Script, ScriptError, ScriptStep, replay};
use bevy_mcp_bridge::test_support::ScriptsDir;
use bevy_mcp_sandbox::Note;
use bevy_mcp_sandbox::game::WaveEnemy;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

/// A game's marker that does not derive `Reflect` (like breakout's `Brick`).
#[derive(Component, Debug)]
struct Brick;

/// A game's resource that does not derive `Reflect` (like breakout's `Score`).
#[derive(Resource, Debug, PartialEq)]
struct Score(u32);

/// A reflected component holding a strong asset handle (like `Mesh3d`).
#[derive(Component, Reflect, Debug)]
#[reflect(Component, no_auto_register)]
struct Skin(Handle<Note>);

fn ok(harness: &mut Harness, tool: &str, action: &str, params: Value) -> Value {
    harness
        .call(tool, action, params)
        .unwrap_or_else(|error| panic!("{tool}.{action}: {error}: {:?}", error.details))
}

fn refused(harness: &mut Harness, tool: &str, action: &str, params: Value) -> ToolError {
    match harness.call(tool, action, params) {
        Ok(value) => panic!("{tool}.{action} should fail: {value}"),
        Err(error) => error,
    }
}

/// The sandbox, game time paused, with `Skin` registered.
fn harness() -> Harness {
    let mut harness = Harness::with_app(|app| {
        app.register_type::<Skin>();
    });
    harness.world().resource_mut::<Time<Virtual>>().pause();
    harness.run_frames(2);
    harness
}

/// Spawns a brick as a game would: a name, a transform, an unreflected marker and a handle.
fn game_brick(harness: &mut Harness, name: &str) -> Entity {
    let world = harness.world();
    let handle = world.resource_mut::<Assets<Note>>().add(Note {
        text: "skin".to_owned(),
    });
    world
        .spawn((
            Name::new(name.to_owned()),
            Transform::from_xyz(1.0, 2.0, 3.0),
            Brick,
            Skin(handle),
        ))
        .id()
}

fn count<T: Component>(world: &mut World) -> usize {
    world.query_filtered::<(), With<T>>().iter(world).count()
}

fn id(entity: Entity) -> Value {
    json!(entity.to_string())
}

#[test]
fn undo_of_a_despawn_brings_back_unreflected_components_and_handles_under_the_same_id() {
    let mut harness = harness();
    let brick = game_brick(&mut harness, "Brick 1");
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": id(brick)}),
    );
    // Out of the game's sight: its queries (Disabled is a default filter) do not see it.
    assert_eq!(count::<Brick>(harness.world()), 0);
    assert!(harness.world().get::<Disabled>(brick).is_some());
    let listed = ok(
        &mut harness,
        "inspect",
        "find_entities",
        json!({"name": "Brick 1"}),
    );
    assert_eq!(listed["entities"], json!([]), "{listed}");
    let by_component = ok(
        &mut harness,
        "inspect",
        "find_entities",
        json!({"withComponents": [Skin::type_path()]}),
    );
    assert_eq!(by_component["entities"], json!([]), "{by_component}");
    let summary = ok(&mut harness, "inspect", "world_summary", json!({}));
    let diagnostics = ok(&mut harness, "system_control", "diagnostics", json!({}));
    assert_eq!(
        summary["entityCount"], diagnostics["entityCount"],
        "{summary}"
    );

    let undone = ok(&mut harness, "history", "undo", json!({}));
    assert_eq!(undone["broughtBack"], json!(1), "{undone}");
    assert_eq!(undone["notRestored"], json!([]), "{undone}");
    let world = harness.world();
    assert!(
        world.get::<Brick>(brick).is_some(),
        "the unreflected marker is back"
    );
    assert!(world.get::<Skin>(brick).is_some(), "the handle is back");
    assert!(world.get::<Disabled>(brick).is_none());
    assert_eq!(count::<Brick>(world), 1);

    // Redo takes it away again, and a second undo brings the same entity back once more.
    ok(&mut harness, "history", "redo", json!({}));
    assert_eq!(count::<Brick>(harness.world()), 0);
    ok(&mut harness, "history", "undo", json!({}));
    assert!(harness.world().get::<Brick>(brick).is_some());
}

#[test]
fn restore_brings_back_what_the_bridge_removed_and_names_what_the_game_removed() {
    let mut harness = harness();
    let kept = game_brick(&mut harness, "Brick kept");
    let lost = game_brick(&mut harness, "Brick lost");
    // Reflected throughout, with a handle to a note the game made at run time, which nothing
    // else holds: the history keeps the note, so it comes back whole.
    let handle = harness.world().resource_mut::<Assets<Note>>().add(Note {
        text: "skin".to_owned(),
    });
    let skinned = harness
        .world()
        .spawn((
            Name::new("Skinned"),
            Transform::from_xyz(4.0, 5.0, 6.0),
            Skin(handle),
        ))
        .id();
    let child = harness
        .world()
        .spawn((Name::new("Lost's child"), ChildOf(lost)))
        .id();
    ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "before"}),
    );
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": id(kept)}),
    );
    // The game despawns the others itself: the bridge never held them (the child is taken out
    // of the brick first, so the despawn leaves it).
    harness.world().entity_mut(child).remove::<ChildOf>();
    harness.world().despawn(lost);
    harness.world().despawn(skinned);
    harness.run_frames(1);
    let bricks = count::<Brick>(harness.world());

    let restored = ok(
        &mut harness,
        "history",
        "restore",
        json!({"name": "before"}),
    );
    assert_eq!(restored["broughtBack"], json!(1), "{restored}");
    assert!(harness.world().get::<Brick>(kept).is_some());
    // The lost brick comes back under a new id with its reflected values only: its unreflected
    // marker cannot be rebuilt, and the reply names it, the brick, and how to reflect it. (The
    // one marked brick more is the kept one, back under its own id.)
    assert_eq!(count::<Brick>(harness.world()), bricks + 1, "{restored}");
    assert!(
        !restored["notRestored"]
            .to_string()
            .contains("TransformTreeChanged"),
        "Bevy added it back to every entity that had it: {restored}"
    );
    let rows = restored["notRestored"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let marker = rows
        .iter()
        .find(|row| {
            row["type"]
                .as_str()
                .is_some_and(|path| path.ends_with("Brick"))
        })
        .unwrap_or_else(|| panic!("the unreflected marker is named: {restored}"));
    let reason = marker["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Brick lost") && reason.contains("derive Reflect"),
        "{restored}"
    );
    // Its child, which the game left in the world, hangs under the copy again.
    let parent = harness
        .world()
        .get::<ChildOf>(child)
        .map(ChildOf::parent)
        .unwrap_or_else(|| panic!("the child is under the copy again: {restored}"));
    assert_eq!(
        harness.world().get::<Name>(parent).map(Name::as_str),
        Some("Brick lost")
    );
    // The skinned entity comes back under a new id with its values, its note's handle included.
    let world = harness.world();
    let handles: Vec<Handle<Note>> = world
        .query::<(&Name, &Skin)>()
        .iter(world)
        .filter(|(name, _)| name.as_str() == "Skinned")
        .map(|(_, skin)| skin.0.clone())
        .collect();
    let notes = world.resource::<Assets<Note>>();
    let skins: Vec<String> = handles
        .iter()
        .filter_map(|handle| notes.get(handle).map(|note| note.text.clone()))
        .collect();
    assert_eq!(skins, ["skin"], "{restored}");
    assert!(
        !restored["notRestored"].to_string().contains("Skin"),
        "{restored}"
    );
    // A diff compares component sets: the brick without its marker differs from the checkpoint.
    let diff = ok(&mut harness, "history", "diff", json!({"from": "before"}));
    assert_eq!(diff["same"], json!(false), "{diff}");
    assert_eq!(diff["counts"]["entitiesChanged"], json!(1), "{diff}");
}

/// The row of `rows` (`notHeld` or `notRestored`) that names `Score`, with its reason.
fn score_row(reply: &Value, rows: &str) -> String {
    reply[rows]
        .as_array()
        .into_iter()
        .flatten()
        .find(|row| {
            row["type"]
                .as_str()
                .is_some_and(|path| path.ends_with("::Score"))
        })
        .and_then(|row| row["reason"].as_str())
        .unwrap_or_else(|| panic!("{rows} names the unreflected Score: {reply}"))
        .to_owned()
}

#[test]
fn a_game_resource_no_checkpoint_or_undo_can_hold_is_named_not_passed_over() {
    let mut harness = harness();
    harness.world().insert_resource(Score(3));
    let checkpoint = ok(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "before"}),
    );
    // Named when it can still be mended: before anything relies on the checkpoint.
    let reason = score_row(&checkpoint, "notHeld");
    assert!(reason.contains("#[reflect(Resource)]"), "{checkpoint}");

    harness.world().resource_mut::<Score>().0 = 7;
    let restored = ok(
        &mut harness,
        "history",
        "restore",
        json!({"name": "before"}),
    );
    assert_eq!(harness.world().resource::<Score>(), &Score(7));
    let reason = score_row(&restored, "notRestored");
    assert!(
        reason.contains("not reflected") && reason.contains("keeps the value it has now"),
        "{restored}"
    );

    // The undo of a call that may change anything names it too, and so does its redo.
    ok(&mut harness, "game", "spawn_wave", json!({"count": 2}));
    ok(&mut harness, "game", "reset_level", json!({}));
    assert_eq!(count::<WaveEnemy>(harness.world()), 0);
    let undone = ok(&mut harness, "history", "undo", json!({}));
    // (The goblins come back as copies: the game despawned them itself.)
    assert_eq!(
        undone["respawned"].as_object().map(|ids| ids.len()),
        Some(2),
        "{undone}"
    );
    score_row(&undone, "notRestored");
    let redone = ok(&mut harness, "history", "redo", json!({}));
    score_row(&redone, "notRestored");
    assert_eq!(harness.world().resource::<Score>(), &Score(7));
}

#[test]
fn a_wave_undone_and_redone_is_still_the_games_wave() {
    let mut harness = harness();
    ok(&mut harness, "game", "spawn_wave", json!({"count": 5}));
    assert_eq!(count::<WaveEnemy>(harness.world()), 5);
    ok(&mut harness, "history", "undo", json!({}));
    assert_eq!(count::<WaveEnemy>(harness.world()), 0);
    ok(&mut harness, "history", "redo", json!({}));
    assert_eq!(
        count::<WaveEnemy>(harness.world()),
        5,
        "the redone goblins carry the game's marker"
    );
}

#[test]
fn a_tree_despawned_and_undone_twice_keeps_every_parent() {
    let mut harness = harness();
    let spawned = ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "Fort", "children": [{"name": "Keep"}, {"name": "Gate", "under": 0}]}),
    );
    let base = spawned["entity"]["entity"].clone();
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": base}),
    );
    for call in ["undo", "redo", "undo"] {
        ok(&mut harness, "history", call, json!({}));
    }
    let base = harness.entity("Fort");
    let tower = harness.entity("Keep");
    let turret = harness.entity("Gate");
    let world = harness.world();
    assert_eq!(world.get::<ChildOf>(tower).map(ChildOf::parent), Some(base));
    assert_eq!(
        world.get::<ChildOf>(turret).map(ChildOf::parent),
        Some(tower)
    );
}

#[test]
fn an_undo_that_would_close_a_parent_loop_is_refused_and_changes_nothing() {
    let mut harness = harness();
    let x = harness.world().spawn(Name::new("X")).id();
    let y = harness.world().spawn(Name::new("Y")).id();
    let set_parent = |child: Entity, parent: Option<Entity>| json!({"entity": id(child), "parent": parent.map(id)});
    harness
        .call_as("a", "control_entity", "set_parent", set_parent(x, Some(y)))
        .unwrap_or_else(|error| panic!("{error}"));
    harness
        .call_as("a", "control_entity", "set_parent", set_parent(x, None))
        .unwrap_or_else(|error| panic!("{error}"));
    harness
        .call_as("b", "control_entity", "set_parent", set_parent(y, Some(x)))
        .unwrap_or_else(|error| panic!("{error}"));
    let error = harness
        .call_as("a", "history", "undo", json!({}))
        .err()
        .unwrap_or_else(|| panic!("the undo would make X and Y each other's parent"));
    assert_eq!(error.code.as_str(), "UNDO_CONFLICT", "{error}");
    assert!(error.message.contains("loop"), "{error}");
    // Forcing overwrites values, never the rules.
    let forced = harness
        .call_as("a", "history", "undo", json!({"force": true}))
        .err()
        .unwrap_or_else(|| panic!("forcing does not make a loop either"));
    assert_eq!(forced.code.as_str(), "UNDO_CONFLICT", "{forced}");
    let world = harness.world();
    assert_eq!(world.get::<ChildOf>(x), None);
    assert_eq!(world.get::<ChildOf>(y).map(ChildOf::parent), Some(x));
}

#[test]
fn hierarchies_stay_within_the_depth_bound_on_every_path_that_sets_a_parent() {
    let mut harness = harness();
    // A chain of 999 levels the game built: one more level is the most the bridge adds.
    let world = harness.world();
    let mut chain = vec![world.spawn(Name::new("link 0")).id()];
    for index in 1..999 {
        let parent = chain[index - 1];
        chain.push(
            world
                .spawn((Name::new(format!("link {index}")), ChildOf(parent)))
                .id(),
        );
    }
    let deepest = id(chain[998]);
    ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "level 1000", "parent": deepest}),
    );
    let one_more = refused(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "too deep", "parent": deepest, "children": [{"name": "below"}]}),
    );
    assert_eq!(one_more.code.as_str(), "LIMIT_EXCEEDED", "{one_more}");
    assert!(one_more.message.contains("1001 levels"), "{one_more}");
    // An entity with a child of its own would put the child at level 1,001.
    let loose = harness.world().spawn(Name::new("loose")).id();
    harness
        .world()
        .spawn((Name::new("loose child"), ChildOf(loose)));
    let moved = refused(
        &mut harness,
        "control_entity",
        "set_parent",
        json!({"entity": id(loose), "parent": deepest}),
    );
    assert_eq!(moved.code.as_str(), "LIMIT_EXCEEDED", "{moved}");
    // The game itself may go deeper; a copy of such a tree is refused.
    let level_1000 = harness.entity("level 1000");
    harness
        .world()
        .spawn((Name::new("level 1001"), ChildOf(level_1000)));
    let copied = refused(
        &mut harness,
        "control_entity",
        "duplicate",
        json!({"entity": id(chain[998]), "withDescendants": true}),
    );
    // A copy of link 998 with its subtree hangs beside it: 1,001 levels.
    assert_eq!(copied.code.as_str(), "LIMIT_EXCEEDED", "{copied}");
    assert_eq!(harness.world().get::<ChildOf>(loose), None);
}

#[test]
fn a_chain_the_game_built_twenty_thousand_deep_is_removed_without_overflowing_the_stack() {
    let mut harness = harness();
    let world = harness.world();
    let root = world.spawn(Name::new("deep root")).id();
    let mut parent = root;
    for _ in 0..20_000 {
        parent = world.spawn(ChildOf(parent)).id();
    }
    let removed = ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": id(root)}),
    );
    assert_eq!(removed["descendants"], json!(20_000), "{removed}");
    // Bringing it back would set parents past the depth bound: refused, like any such write.
    let undo = refused(&mut harness, "history", "undo", json!({}));
    assert_eq!(undo.code.as_str(), "UNDO_CONFLICT", "{undo}");
    assert!(undo.message.contains("levels deep"), "{}", undo.message);
    // The other removals walk leaf-first too.
    let world = harness.world();
    let second = world.spawn(Name::new("second root")).id();
    let mut parent = second;
    for _ in 0..20_000 {
        parent = world.spawn(ChildOf(parent)).id();
    }
    let third = world.spawn(Name::new("third root")).id();
    let mut parent = third;
    for _ in 0..20_000 {
        parent = world.spawn(ChildOf(parent)).id();
    }
    let below = ok(
        &mut harness,
        "control_entity",
        "despawn_descendants",
        json!({"entity": id(second)}),
    );
    assert_eq!(below["despawned"], json!(20_000), "{below}");
    ok(&mut harness, "manage_world", "clear", json!({}));
    let diagnostics = ok(&mut harness, "system_control", "diagnostics", json!({}));
    assert!(
        diagnostics["bridge"]["heldEntities"]
            .as_u64()
            .is_some_and(|held| held > 60_000),
        "{diagnostics}"
    );
    assert_eq!(diagnostics["entityCount"], json!(0), "{diagnostics}");
}

#[test]
fn held_entities_are_despawned_for_real_once_nothing_names_them() {
    let mut harness = Harness::configured(
        |config| {
            config.with_journal_limits(bevy_mcp_bridge::JournalLimits {
                max_entries: 2,
                ..bevy_mcp_bridge::JournalLimits::default()
            })
        },
        |_| {},
    );
    let first = game_brick(&mut harness, "first");
    ok(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": id(first)}),
    );
    harness.run_frames(1);
    assert!(
        harness.world().get_entity(first).is_ok(),
        "held while named"
    );
    // Two newer entries push the despawn out of the journal: nothing can bring it back now.
    for name in ["a", "b"] {
        ok(
            &mut harness,
            "control_entity",
            "spawn",
            json!({"name": name}),
        );
    }
    harness.run_frames(1);
    assert!(harness.world().get_entity(first).is_err(), "released");
    let diagnostics = ok(&mut harness, "system_control", "diagnostics", json!({}));
    assert_eq!(
        diagnostics["bridge"]["heldEntities"],
        json!(0),
        "{diagnostics}"
    );
}

#[test]
fn the_bridges_simulated_gamepad_is_left_alone_and_disconnected_ones_go() {
    let mut harness = harness();
    let before =
        ok(&mut harness, "system_control", "diagnostics", json!({}))["entityCount"].clone();
    let pad = ok(
        &mut harness,
        "input",
        "gamepad",
        json!({"buttons": ["South"], "frames": 1}),
    )["gamepad"]["entity"]
        .clone();
    let copied = refused(
        &mut harness,
        "control_entity",
        "duplicate",
        json!({"entity": pad}),
    );
    assert_eq!(copied.code.as_str(), "PROTECTED_ENTITY", "{copied}");
    let despawned = refused(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": pad}),
    );
    assert_eq!(despawned.code.as_str(), "PROTECTED_ENTITY", "{despawned}");
    ok(&mut harness, "input", "disconnect_gamepad", json!({}));
    for _ in 0..20 {
        ok(
            &mut harness,
            "input",
            "gamepad",
            json!({"buttons": ["East"], "frames": 1}),
        );
        ok(&mut harness, "input", "disconnect_gamepad", json!({}));
        harness.run_frames(3);
    }
    harness.run_frames(10);
    let pads = harness
        .world()
        .query::<&bevy::input::gamepad::GamepadSettings>()
        .iter(harness.world())
        .count();
    assert_eq!(pads, 0, "no disconnected gamepad stays in the world");
    let after = ok(&mut harness, "system_control", "diagnostics", json!({}))["entityCount"].clone();
    assert_eq!(after, before);
}

#[test]
fn a_recording_is_written_inside_its_folder_even_when_the_folder_became_a_link() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let outside = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let mut harness = harness();
    harness
        .world()
        .insert_resource(ScriptsDir(dir.path().join("scripts")));
    ok(
        &mut harness,
        "playtest",
        "record_start",
        json!({"name": "sub/run"}),
    );
    ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"name": "recorded"}),
    );
    // The checked folder is swapped for a link to somewhere else.
    let folder = dir.path().join("scripts").join("sub");
    std::fs::remove_dir(&folder).unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink(outside.path(), &folder).unwrap_or_else(|error| panic!("{error}"));
    let error = refused(&mut harness, "playtest", "record_stop", json!({}));
    assert_eq!(error.code.as_str(), "IO_ERROR", "{error}");
    let written: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap_or_else(|error| panic!("{error}"))
        .collect();
    assert!(
        written.is_empty(),
        "nothing was written outside: {written:?}"
    );
}

#[test]
fn a_replay_beyond_the_bounds_of_a_recording_is_refused_before_anything_runs() {
    let step = |frames_before: u64| ScriptStep {
        frames_before,
        tool: "control_entity".to_owned(),
        action: "spawn".to_owned(),
        params: json!({"name": "replayed"}),
    };
    let mut harness = harness();
    let forever = Script {
        version: 1,
        steps: vec![step(0), step(u64::MAX)],
        truncated: false,
    };
    let outcome = replay(&mut harness.app, &forever);
    assert!(
        matches!(outcome, Err(ScriptError::TooLarge { .. })),
        "{outcome:?}"
    );
    let many = Script {
        version: 1,
        steps: (0..10_001).map(|_| step(0)).collect(),
        truncated: false,
    };
    let outcome = replay(&mut harness.app, &many);
    assert!(
        matches!(outcome, Err(ScriptError::TooLarge { .. })),
        "{outcome:?}"
    );
    assert!(
        harness
            .call("inspect", "find_entities", json!({"name": "replayed"}))
            .is_ok_and(|found| found["entities"] == json!([])),
        "nothing ran"
    );
}
