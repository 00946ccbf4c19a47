//! Codegen against the real records and against broken copies of them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use bevy_mcp_codegen::{
    CodegenError, Drift, PHRASEBOOK_DIR, PROMPTS_DIR, Problem, RECORDS_DIR, check, generate, write,
};
use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch workspace holding a copy of the real records (and nothing generated yet).
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("temp dir");
        let records = dir.path().join(RECORDS_DIR);
        fs::create_dir_all(&records).expect("records dir");
        for entry in fs::read_dir(workspace_root().join(RECORDS_DIR)).expect("real records") {
            let entry = entry.expect("entry");
            fs::copy(entry.path(), records.join(entry.file_name())).expect("copy record");
        }
        Scratch { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Loads `file`, lets `change` edit it, and writes it back.
    fn edit_record(&self, file: &str, change: impl FnOnce(&mut Value)) {
        let path = self.root().join(RECORDS_DIR).join(file);
        let mut value: Value =
            serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("json");
        change(&mut value);
        fs::write(
            &path,
            serde_json::to_string_pretty(&value).expect("serialize"),
        )
        .expect("write");
    }

    /// The problems codegen reports; fails the test when generation succeeds.
    fn problems(&self) -> Vec<Problem> {
        match generate(self.root()) {
            Err(CodegenError::Records(problems)) => problems.sorted(),
            Err(other) => panic!("expected record problems, got {other}"),
            Ok(_) => panic!("expected record problems, but codegen accepted the records"),
        }
    }
}

fn action_index(value: &Value, name: &str) -> usize {
    value["actions"]
        .as_array()
        .and_then(|actions| actions.iter().position(|action| action["name"] == name))
        .expect("action exists")
}

fn assert_reported(problems: &[Problem], file: &str, pointer: &str, words: &str) {
    assert!(
        problems.iter().any(|problem| problem.file == file
            && problem.pointer == pointer
            && problem.message.contains(words)),
        "expected a problem at {file}#{pointer} mentioning {words:?}, got:\n{}",
        problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let shown = problems
        .iter()
        .find(|problem| problem.pointer == pointer)
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        shown.contains(&format!("{file}#{pointer}")) && shown.starts_with("codegen/"),
        "display names file and pointer: {shown}"
    );
}

#[test]
fn real_records_are_valid_and_generated_files_are_fresh() {
    let outputs = generate(&workspace_root()).unwrap_or_else(|error| panic!("{error}"));
    let drift = check(&workspace_root(), &outputs);
    assert!(
        drift.is_empty(),
        "run `cargo run -p bevy_mcp_codegen`: {drift:?}"
    );
}

#[test]
fn generating_twice_gives_identical_bytes() {
    let first = generate(&workspace_root()).unwrap_or_else(|error| panic!("{error}"));
    let second = generate(&workspace_root()).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(first, second);
    assert!(
        first.values().all(|text| text.contains("GENERATED")),
        "every output carries the header"
    );
}

#[test]
fn rejects_a_prompt_naming_an_unknown_action_or_argument() {
    let scratch = Scratch::new();
    let prompts = scratch.root().join(PROMPTS_DIR);
    fs::create_dir_all(&prompts).expect("prompts dir");
    let prompt = serde_json::json!({
        "name": "look_around",
        "title": "Look around",
        "description": "Look at the world.",
        "arguments": [
            {"name": "area", "description": "Where to look.", "required": false},
            {"name": "unused", "description": "Never used.", "required": true, "completes": "planet"}
        ],
        "text": "Look at {area} with `inspect.world_summary` and `inspect.peek` for {who}."
    });
    fs::write(prompts.join("look_around.json"), prompt.to_string()).expect("write");
    let problems = scratch.problems();
    let file = "prompts/look_around.json";
    assert_reported(&problems, file, "/text", "`inspect.peek` is not an action");
    assert_reported(&problems, file, "/text", "{who} is not an argument");
    assert_reported(&problems, file, "/arguments/0/default", "needs a default");
    assert_reported(
        &problems,
        file,
        "/arguments/1/completes",
        "unknown completion",
    );
    assert_reported(&problems, file, "/arguments/1/name", "never uses {unused}");
    assert!(
        problems
            .iter()
            .all(|problem| !problem.to_string().contains("world_summary")),
        "a real action is fine"
    );
}

#[test]
fn rejects_phrases_that_lead_nowhere_repeat_or_match_anything() {
    let scratch = Scratch::new();
    let phrasebook = scratch.root().join(PHRASEBOOK_DIR);
    fs::create_dir_all(&phrasebook).expect("phrasebook dir");
    let book = json!({
        "about": "Words for a test.",
        "means": {
            "gamepad": ["thumbstick", "Joypad", "it"],
            "teleportation device": ["portal gun"],
            "undo": ["ctrl+z", "ctrl z"]
        },
        "asksForDestruction": ["delete", "delete", "the"]
    });
    fs::write(phrasebook.join("words.json"), book.to_string()).expect("write");
    let problems = scratch.problems();
    let file = "phrasebook/words.json";
    assert_reported(&problems, file, "/means/gamepad/1", "lowercase");
    assert_reported(&problems, file, "/means/gamepad/2", "only stop words");
    assert_reported(
        &problems,
        file,
        "/means/teleportation device",
        "\"device\" (of \"teleportation device\") is no word of any action",
    );
    assert_reported(&problems, file, "/means/undo/1", "listed already");
    assert_reported(&problems, file, "/asksForDestruction/1", "listed already");
    assert_reported(&problems, file, "/asksForDestruction/2", "only stop words");
    assert!(
        problems
            .iter()
            .all(|problem| !problem.to_string().contains("thumbstick")),
        "a phrase meaning a catalog word is fine: {problems:?}"
    );
}

#[test]
fn rejects_a_duplicate_action() {
    let scratch = Scratch::new();
    let mut copied_to = 0;
    scratch.edit_record("inspect.json", |record| {
        let actions = record["actions"].as_array_mut().expect("actions");
        let mut copy =
            actions[action_index(&json!({"actions": actions.clone()}), "get_entity")].clone();
        copy["aliases"] = json!([]);
        actions.push(copy);
        copied_to = actions.len() - 1;
    });
    assert_reported(
        &scratch.problems(),
        "inspect.json",
        &format!("/actions/{copied_to}/name"),
        "duplicate action \"get_entity\"",
    );
}

#[test]
fn rejects_an_alias_that_collides_with_another_action() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("control_entity.json", |record| {
        at = action_index(record, "spawn");
        record["actions"][at]["aliases"] = json!(["get_entity"]);
    });
    assert_reported(
        &scratch.problems(),
        "control_entity.json",
        &format!("/actions/{at}/aliases/0"),
        "collides with an action",
    );
}

#[test]
fn rejects_an_alias_used_twice() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("inspect.json", |record| {
        at = action_index(record, "world_summary");
        record["actions"][at]["aliases"] = json!(["delete"]);
    });
    assert_reported(
        &scratch.problems(),
        "inspect.json",
        &format!("/actions/{at}/aliases/0"),
        "already an alias of control_entity.despawn",
    );
}

#[test]
fn rejects_an_undescribed_property() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("control_entity.json", |record| {
        at = action_index(record, "rename");
        record["actions"][at]["params"]["properties"]["name"]
            .as_object_mut()
            .expect("property")
            .remove("description");
    });
    assert_reported(
        &scratch.problems(),
        "control_entity.json",
        &format!("/actions/{at}/params/properties/name"),
        "has no description",
    );
}

#[test]
fn rejects_an_example_that_violates_its_schema() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("control_app.json", |record| {
        at = action_index(record, "step_frames");
        record["actions"][at]["examples"][0]["params"] = json!({"frames": 0});
    });
    assert_reported(
        &scratch.problems(),
        "control_app.json",
        &format!("/actions/{at}/examples/0/params/frames"),
        "does not match",
    );
}

#[test]
fn rejects_an_example_with_an_unknown_argument() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("control_app.json", |record| {
        at = action_index(record, "set_speed");
        record["actions"][at]["examples"][0]["params"]["sped"] = json!(2);
    });
    assert_reported(
        &scratch.problems(),
        "control_app.json",
        &format!("/actions/{at}/examples/0/params"),
        "sped",
    );
}

#[test]
fn rejects_keys_that_differ_only_by_case() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("inspect.json", |record| {
        at = action_index(record, "get_entity");
        record["actions"][at]["params"]["properties"]["Entity"] =
            json!({"type": "string", "maxLength": 8, "description": "Shadow."});
    });
    assert_reported(
        &scratch.problems(),
        "inspect.json",
        &format!("/actions/{at}/params/properties/entity"),
        "only by case",
    );
}

#[test]
fn rejects_an_unresolvable_ref() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("inspect.json", |record| {
        at = action_index(record, "get_entity");
        record["actions"][at]["params"]["properties"]["entity"]["$ref"] =
            json!("#/$defs/entityReference");
    });
    assert_reported(
        &scratch.problems(),
        "inspect.json",
        &format!("/actions/{at}/params/properties/entity/$ref"),
        "entityReference",
    );
}

#[test]
fn rejects_params_that_accept_unknown_arguments() {
    let scratch = Scratch::new();
    let mut at = 0;
    scratch.edit_record("control_app.json", |record| {
        at = action_index(record, "pause");
        record["actions"][at]["params"]
            .as_object_mut()
            .expect("params")
            .remove("additionalProperties");
    });
    assert_reported(
        &scratch.problems(),
        "control_app.json",
        &format!("/actions/{at}/params/additionalProperties"),
        "additionalProperties: false",
    );
}

#[test]
fn reports_unknown_record_fields_with_their_pointer() {
    let scratch = Scratch::new();
    scratch.edit_record("control_app.json", |record| {
        record["actions"][1]["efect"] = json!("read");
    });
    assert_reported(
        &scratch.problems(),
        "control_app.json",
        "/actions/1/efect",
        "unknown field `efect`",
    );
}

#[test]
fn check_fails_after_a_generated_file_is_edited_by_hand() {
    let scratch = Scratch::new();
    let outputs = generate(scratch.root()).unwrap_or_else(|error| panic!("{error}"));
    write(scratch.root(), &outputs).unwrap_or_else(|error| panic!("{error}"));
    assert!(check(scratch.root(), &outputs).is_empty());

    let edited = scratch.root().join("generated/src/catalog.rs");
    let text = fs::read_to_string(&edited).expect("read");
    fs::write(
        &edited,
        text.replacen("Quit the app.", "Quit the app now.", 1),
    )
    .expect("write");
    assert_eq!(
        check(scratch.root(), &outputs),
        [Drift::Stale("generated/src/catalog.rs".to_owned())]
    );

    fs::remove_file(scratch.root().join("generated/ACTIONS.md")).expect("remove");
    fs::write(
        scratch.root().join("generated/src/extra.rs"),
        "// hand-written\n",
    )
    .expect("write");
    let drift = check(scratch.root(), &outputs);
    assert!(
        drift.contains(&Drift::Missing("generated/ACTIONS.md".to_owned())),
        "{drift:?}"
    );
    assert!(
        drift.contains(&Drift::Stray("generated/src/extra.rs".to_owned())),
        "{drift:?}"
    );
}

#[test]
fn check_fails_after_a_record_changes_without_regenerating() {
    let scratch = Scratch::new();
    let outputs = generate(scratch.root()).unwrap_or_else(|error| panic!("{error}"));
    write(scratch.root(), &outputs).unwrap_or_else(|error| panic!("{error}"));
    scratch.edit_record("control_app.json", |record| {
        let at = action_index(record, "pause");
        record["actions"][at]["summary"] = json!("Freeze game time.");
    });

    let binary = env!("CARGO_BIN_EXE_bevy_mcp_codegen");
    let run = Command::new(binary)
        .args(["--check", "--root"])
        .arg(scratch.root())
        .output()
        .expect("run codegen");
    assert!(!run.status.success(), "--check must fail on drift");
    let stderr = String::from_utf8_lossy(&run.stderr);
    for stale in [
        "generated/src/catalog.rs",
        "generated/catalog.json",
        "generated/ACTIONS.md",
    ] {
        assert!(stderr.contains(stale), "--check names {stale}: {stderr}");
    }

    let regenerate = Command::new(binary)
        .arg("--root")
        .arg(scratch.root())
        .output()
        .expect("run codegen");
    assert!(regenerate.status.success());
    let recheck = Command::new(binary)
        .args(["--check", "--root"])
        .arg(scratch.root())
        .output()
        .expect("run codegen");
    assert!(
        recheck.status.success(),
        "{}",
        String::from_utf8_lossy(&recheck.stderr)
    );
}

#[test]
fn revision_changes_with_the_records() {
    let scratch = Scratch::new();
    let before = generate(scratch.root()).unwrap_or_else(|error| panic!("{error}"));
    scratch.edit_record("inspect.json", |record| {
        record["summary"] = json!("Read the world.");
    });
    let after = generate(scratch.root()).unwrap_or_else(|error| panic!("{error}"));
    let revision = |outputs: &bevy_mcp_codegen::Outputs| {
        let catalog: Value =
            serde_json::from_str(&outputs["generated/catalog.json"]).expect("json");
        catalog["catalogRevision"]
            .as_str()
            .map(str::to_owned)
            .expect("revision")
    };
    assert_ne!(revision(&before), revision(&after));
}
