//! Operations over the whole world in a world bigger than one frame's slice: a checkpoint, a
//! diff, a restore, a clear and its undo each take several frames and give the same results as
//! in a small world; a write sent while one runs waits for it; a restore cancelled before it
//! changed anything changes nothing, and one cancelled after it began changing the world
//! finishes; a world-wide game action in a world past the journal's bound is listed as not
//! undoable. (How long each takes per frame at 100,000 entities is `mcp-bench`'s P8: these
//! machines are too noisy for timing assertions.)

use bevy::prelude::{Entity, Name, With, World};
use bevy_mcp_bridge::test_support::SLICE_UNITS;
use bevy_mcp_sandbox::testing::{Harness, MAX_FRAMES_PER_CALL, PendingCall};
use mcp_native_transport::{ActionReply, ProgressSink, ToolError};
use serde_json::{Value, json};

/// More entities than three full slices: every whole-world pass takes four frames at least,
/// however fast the machine.
const CRATES: usize = 3 * SLICE_UNITS as usize + 500;

fn ok(harness: &mut Harness, tool: &str, action: &str, params: Value) -> Value {
    harness
        .call(tool, action, params)
        .unwrap_or_else(|error| panic!("{tool}.{action}: {error}: {:?}", error.details))
}

/// The sandbox paused (frames change nothing by themselves) with [`CRATES`] crates added.
fn big_paused_world() -> Harness {
    let mut harness = Harness::new();
    ok(&mut harness, "control_app", "pause", json!({}));
    harness.spawn_crates(CRATES);
    harness
}

fn checkpoint(harness: &mut Harness, name: &str) {
    ok(harness, "history", "checkpoint", json!({"name": name}));
}

fn named_entities(world: &mut World) -> usize {
    world.query_filtered::<(), With<Name>>().iter(world).count()
}

/// Runs frames until `pending` answers; the answer and how many frames it took.
fn finish_counting(
    harness: &mut Harness,
    pending: &PendingCall,
) -> (Result<ActionReply, ToolError>, usize) {
    for frames in 0..MAX_FRAMES_PER_CALL {
        if let Some(answer) = pending.try_answer() {
            return (answer, frames);
        }
        harness.run_frames(1);
    }
    panic!("no answer within {MAX_FRAMES_PER_CALL} frames");
}

fn start(harness: &mut Harness, tool: &str, action: &str, params: Value) -> PendingCall {
    harness.start(tool, action, params, ProgressSink::disabled())
}

fn value(answer: Result<ActionReply, ToolError>, what: &str) -> Value {
    match answer {
        Ok(reply) => reply.value,
        Err(error) => panic!("{what}: {error}: {:?}", error.details),
    }
}

#[test]
fn a_checkpoint_spans_frames_and_a_write_sent_meanwhile_waits_for_it() {
    let mut harness = big_paused_world();
    let checkpoint = start(
        &mut harness,
        "history",
        "checkpoint",
        json!({"name": "big"}),
    );
    harness.run_frames(1);
    assert!(
        checkpoint.try_answer().is_none(),
        "a world of {CRATES} crates is not read in one frame"
    );
    // Sent while the checkpoint reads: it must not change what the checkpoint holds.
    let despawn = start(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": "Crate 0"}),
    );
    let mut taken = None;
    let mut despawned = None;
    for _ in 0..MAX_FRAMES_PER_CALL {
        harness.run_frames(1);
        if taken.is_none() {
            taken = checkpoint.try_answer();
        }
        if despawned.is_none() {
            despawned = despawn.try_answer();
            assert!(
                despawned.is_none() || taken.is_some(),
                "the write answered while the checkpoint was still reading"
            );
        }
        if taken.is_some() && despawned.is_some() {
            break;
        }
    }
    let taken = value(taken.expect("the checkpoint answers"), "checkpoint");
    value(despawned.expect("the despawn answers"), "despawn");
    assert!(
        taken["framesRead"]
            .as_u64()
            .is_some_and(|frames| frames >= 4),
        "{taken}"
    );
    assert!(
        taken["entities"]
            .as_u64()
            .is_some_and(|entities| entities as usize > CRATES),
        "every crate is in the checkpoint: {taken}"
    );

    // The checkpoint holds the world from before the despawn: exactly one entity differs.
    let diff = start(&mut harness, "history", "diff", json!({"from": "big"}));
    let (answer, frames) = finish_counting(&mut harness, &diff);
    let diff = value(answer, "diff");
    assert!(frames >= 2, "the diff read the world over frames: {frames}");
    assert_eq!(
        diff["counts"],
        json!({"entitiesAdded": 0, "entitiesRemoved": 1, "entitiesChanged": 0,
            "resourcesAdded": 0, "resourcesRemoved": 0, "resourcesChanged": 0}),
        "{diff}"
    );
    assert_eq!(
        diff["entitiesRemoved"][0]["name"],
        json!("Crate 0"),
        "{diff}"
    );

    let restore = start(&mut harness, "history", "restore", json!({"name": "big"}));
    let (answer, frames) = finish_counting(&mut harness, &restore);
    let restored = value(answer, "restore");
    assert!(frames >= 2, "the restore compared over frames: {frames}");
    assert_eq!(restored["broughtBack"], json!(1), "{restored}");
    let same = ok(&mut harness, "history", "diff", json!({"from": "big"}));
    assert_eq!(same["same"], json!(true), "{same}");
}

#[test]
fn a_clear_of_a_big_world_spans_frames_and_its_undo_brings_back_every_entity() {
    let mut harness = big_paused_world();
    checkpoint(&mut harness, "full");
    let named = named_entities(harness.world());

    let clear = start(&mut harness, "manage_world", "clear", json!({}));
    let (answer, frames) = finish_counting(&mut harness, &clear);
    let cleared = value(answer, "clear");
    assert!(
        frames >= 4,
        "the clear went over frames: {frames}: {cleared}"
    );
    assert_eq!(named_entities(harness.world()), 0, "{cleared}");
    let diff = ok(&mut harness, "history", "diff", json!({"from": "full"}));
    assert!(
        diff["counts"]["entitiesRemoved"]
            .as_u64()
            .is_some_and(|removed| removed as usize >= named),
        "{diff}"
    );
    // Far more rows than a reply holds: every one is counted, the first are kept.
    assert!(diff["rowsKept"].is_string(), "{diff}");

    let listed = ok(&mut harness, "history", "list", json!({}));
    let entry = listed["entries"]
        .as_array()
        .and_then(|entries| {
            entries
                .iter()
                .find(|entry| entry["action"] == json!("manage_world.clear"))
        })
        .cloned()
        .unwrap_or_else(|| panic!("the clear is journaled: {listed}"));
    assert_eq!(entry["undoable"], json!(true), "{entry}");

    let undo = start(&mut harness, "history", "undo", json!({}));
    let (answer, frames) = finish_counting(&mut harness, &undo);
    let undone = value(answer, "undo");
    assert!(frames >= 4, "the undo went over frames: {frames}: {undone}");
    assert_eq!(named_entities(harness.world()), named);
    let same = ok(&mut harness, "history", "diff", json!({"from": "full"}));
    assert_eq!(same["same"], json!(true), "{same}");
}

#[test]
fn a_restore_cancelled_before_it_changes_anything_changes_nothing() {
    let mut harness = big_paused_world();
    checkpoint(&mut harness, "full");
    ok(&mut harness, "manage_world", "clear", json!({}));
    checkpoint(&mut harness, "empty");
    let restore = start(&mut harness, "history", "restore", json!({"name": "full"}));
    harness.run_frames(1);
    // Still comparing: nothing of the checkpoint is back yet.
    assert_eq!(named_entities(harness.world()), 0);
    restore.cancel.cancel();
    let (answer, _) = finish_counting(&mut harness, &restore);
    let Err(error) = answer else {
        panic!("a restore cancelled while comparing ends without restoring");
    };
    assert_eq!(error.code.as_str(), "CANCELLED", "{error}");
    let same = ok(&mut harness, "history", "diff", json!({"from": "empty"}));
    assert_eq!(same["same"], json!(true), "nothing changed: {same}");
}

#[test]
fn a_restore_cancelled_after_it_began_changing_the_world_finishes() {
    let mut harness = big_paused_world();
    checkpoint(&mut harness, "full");
    let named = named_entities(harness.world());
    ok(&mut harness, "manage_world", "clear", json!({}));
    let restore = start(&mut harness, "history", "restore", json!({"name": "full"}));
    let mut answer = None;
    for _ in 0..MAX_FRAMES_PER_CALL {
        harness.run_frames(1);
        let back = named_entities(harness.world());
        if back > 0 {
            assert!(back < named, "some are back, not all: {back} of {named}");
            restore.cancel.cancel();
            break;
        }
        answer = restore.try_answer();
        assert!(answer.is_none(), "answered before anything came back");
    }
    assert!(answer.is_none());
    let (answer, _) = finish_counting(&mut harness, &restore);
    let restored = value(answer, "a restore cancelled midway");
    assert!(
        restored["broughtBack"]
            .as_u64()
            .is_some_and(|back| back as usize >= named),
        "{restored}"
    );
    assert_eq!(named_entities(harness.world()), named);
    let same = ok(&mut harness, "history", "diff", json!({"from": "full"}));
    assert_eq!(same["same"], json!(true), "{same}");
}

/// The journal's entry for the newest call of `action`.
fn newest_entry(harness: &mut Harness, action: &str) -> Value {
    let listed = ok(harness, "history", "list", json!({}));
    listed["entries"]
        .as_array()
        .and_then(|entries| {
            entries
                .iter()
                .rev()
                .find(|entry| entry["action"] == json!(action))
        })
        .cloned()
        .unwrap_or_else(|| panic!("{action} is journaled: {listed}"))
}

#[test]
fn a_world_wide_game_action_past_the_journals_bound_is_listed_not_undoable() {
    // A wave first, so the reset has something to remove.
    let mut small = Harness::new();
    ok(&mut small, "game", "spawn_wave", json!({"count": 2}));
    ok(&mut small, "game", "reset_level", json!({}));
    let entry = newest_entry(&mut small, "game.reset_level");
    assert_eq!(entry["undoable"], json!(true), "{entry}");

    let mut big = big_paused_world();
    ok(&mut big, "game", "spawn_wave", json!({"count": 2}));
    ok(&mut big, "game", "reset_level", json!({}));
    let entry = newest_entry(&mut big, "game.reset_level");
    assert_eq!(entry["undoable"], json!(false), "{entry}");
    let why = entry["notUndoable"].as_str().unwrap_or_default();
    assert!(why.contains("max_world_entities"), "{entry}");
}

#[test]
fn a_save_reads_a_big_world_over_frames_and_a_despawn_meanwhile_waits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    harness.spawn_crates(CRATES);
    let named = named_entities(harness.world());
    let save = start(
        &mut harness,
        "manage_world",
        "save",
        json!({"name": "big", "includeResources": false, "overwrite": false}),
    );
    harness.run_frames(1);
    assert!(save.try_answer().is_none(), "read over several frames");
    let despawn = start(
        &mut harness,
        "control_entity",
        "despawn",
        json!({"entity": "Crate 7"}),
    );
    let (saved, _) = finish_counting(&mut harness, &save);
    let saved = value(saved, "save");
    // The despawn waited for the save: the file holds Crate 7 too.
    assert!(
        saved["entityCount"]
            .as_u64()
            .is_some_and(|count| count as usize >= named),
        "{saved}"
    );
    let (despawned, _) = finish_counting(&mut harness, &despawn);
    value(despawned, "despawn");
    let described = ok(
        &mut harness,
        "manage_world",
        "describe_file",
        json!({"name": "big"}),
    );
    assert_eq!(
        described["entityCount"], saved["entityCount"],
        "{described}"
    );

    // Loaded into an emptied world, the file leaves it past the journal's bound: the load is
    // listed as not undoable rather than the grown world read whole in one frame.
    ok(&mut harness, "manage_world", "clear", json!({}));
    let load = start(&mut harness, "manage_world", "load", json!({"name": "big"}));
    let (loaded, frames) = finish_counting(&mut harness, &load);
    let loaded = value(loaded, "load");
    // Checked, spawned and written a slice per frame: three passes over four slices' worth.
    assert!(frames >= 4, "the load went over frames: {frames}");
    assert_eq!(loaded["spawned"], saved["entityCount"], "{loaded}");
    assert!(loaded["mappingKept"].is_string(), "{loaded}");
    assert!(named_entities(harness.world()) >= named - 1);
    let entry = newest_entry(&mut harness, "manage_world.load");
    assert_eq!(entry["undoable"], json!(false), "{entry}");
    let why = entry["notUndoable"].as_str().unwrap_or_default();
    assert!(why.contains("it left the world with"), "{entry}");
}

/// The capacity of the table `entity` is in, and how many entities it holds.
fn table_of(world: &World, entity: Entity) -> (usize, usize) {
    let location = world
        .entities()
        .get_spawned(entity)
        .expect("the entity is spawned");
    let table = world
        .storages()
        .tables
        .get(location.table_id)
        .expect("its table");
    (table.capacity(), table.entity_count() as usize)
}

#[test]
fn a_load_into_a_big_table_about_to_grow_writes_every_entity_around_the_growth() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    harness.spawn_crates(100);
    let saved = ok(
        &mut harness,
        "manage_world",
        "save",
        json!({"name": "few", "includeResources": false, "overwrite": false}),
    );
    // Named entities like the file's crates until their table is a few rows short of a big
    // capacity: the load's first writes grow it (Bevy doubles a table in the insert that
    // crosses its capacity), which the load gives a slice of its own.
    let world = harness.world();
    let filler = world.spawn(Name::new("Filler")).id();
    let mut spawned = 1;
    let capacity = loop {
        let (capacity, count) = table_of(world, filler);
        if capacity >= 16_384 && capacity - count < 8 {
            break capacity;
        }
        assert!(spawned < 40_000, "the table reached no big capacity");
        world.spawn(Name::new(format!("Filler {spawned}")));
        spawned += 1;
    };
    let before = named_entities(harness.world());
    let load = start(&mut harness, "manage_world", "load", json!({"name": "few"}));
    let (loaded, _) = finish_counting(&mut harness, &load);
    let loaded = value(loaded, "load");
    assert_eq!(loaded["spawned"], saved["entityCount"], "{loaded}");
    let saved_named = saved["entityCount"].as_u64().unwrap_or(0) as usize;
    assert!(
        named_entities(harness.world()) >= before + 100 && saved_named >= 100,
        "every crate of the file is back: {loaded}"
    );
    let (grown, _) = table_of(harness.world(), filler);
    assert!(grown > capacity, "the table grew: {capacity} -> {grown}");
}

#[test]
fn bevy_mcp_world_loads_a_big_file_before_serving_and_refuses_a_missing_one() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::Duration;

    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = Harness::paused_in(dir.path());
    harness.spawn_crates(CRATES);
    let saved = ok(
        &mut harness,
        "manage_world",
        "save",
        json!({"name": "big", "includeResources": false, "overwrite": false}),
    );
    let start = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_bevy-mcp"))
            .args(["--port", "0", "--world", name])
            .arg("--scenes-dir")
            .arg(dir.path().join("scenes"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bevy-mcp starts")
    };
    let mut app = start("big");
    let stdout = app.stdout.take().expect("piped stdout");
    let (lines, read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // The load spans many slices; the app runs the mailbox until it answers, then serves.
    let mut loaded = None;
    while let Ok(line) = read.recv_timeout(Duration::from_secs(120)) {
        if line.starts_with("loaded ") {
            loaded = Some(line);
            break;
        }
    }
    let _ = app.kill();
    let _ = app.wait();
    let expected = format!("loaded {} entities", saved["entityCount"]);
    assert!(
        loaded
            .as_deref()
            .is_some_and(|line| line.starts_with(&expected)),
        "{loaded:?}, expected {expected}"
    );

    let missing = start("nothing_here")
        .wait_with_output()
        .expect("bevy-mcp ends");
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("--world nothing_here"), "{stderr}");
}
