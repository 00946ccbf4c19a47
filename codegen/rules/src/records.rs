//! Reading the canonical records: one JSON file per parent tool plus `defs.json`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mcp_vocabulary::catalog::{Effect, Scope};
use serde::Deserialize;
use serde_json::Value;

use crate::problem::{Problem, Problems};

/// The file that holds the shared `$defs`.
pub const DEFS_FILE: &str = "defs.json";

/// Every record, as read from the records directory.
#[derive(Debug)]
pub struct RecordSet {
    /// The shared definitions, by name (`entity`, `vec3`, ...).
    pub defs: BTreeMap<String, Value>,
    /// One entry per tool file, sorted by file name.
    pub tools: Vec<ToolFile>,
    /// Every file as parsed JSON, by file name; the revision hash and case checks read these.
    pub raw: BTreeMap<String, Value>,
    /// The prompts of `codegen/prompts/`, sorted by file name (none for an app's own records).
    pub prompts: Vec<PromptFile>,
    /// The phrasebook files of `native-transport/search/phrasebook/`, sorted by file name.
    pub phrasebook: Vec<PhrasebookFile>,
    /// The labelled phrasings search learns from (never a held-out one).
    pub labelled: Vec<Labelled>,
    /// For each world a labelled phrasing may be about, the words naming its own things.
    pub world_things: WorldThings,
}

/// For each world a labelled phrasing may be about (`sandbox`, `breakout`), the stemmed words
/// naming its own things.
pub type WorldThings = BTreeMap<String, std::collections::BTreeSet<String>>;

/// One labelled phrasing, as written in a labelled set.
#[derive(Debug, Clone, Deserialize)]
pub struct Labelled {
    /// What a user typed.
    pub query: String,
    /// The actions (`tool.action`) that answer it; the first is the one it asks for.
    pub expect: Vec<String>,
    /// Which part of its set it belongs to (`tuning`, `held_out`, `dev`, ...).
    pub part: String,
    /// The world it is about (`sandbox`, `breakout`): whose things its names are.
    #[serde(default = "sandbox")]
    pub world: String,
}

fn sandbox() -> String {
    "sandbox".to_owned()
}

/// One phrasebook file.
#[derive(Debug)]
pub struct PhrasebookFile {
    /// File name inside the phrasebook directory (`devices.json`).
    pub file: String,
    /// The typed file.
    pub record: PhrasebookIn,
    /// The file as parsed JSON (for the revision hash).
    pub raw: Value,
}

/// A phrasebook file as written in `native-transport/search/phrasebook/<theme>.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhrasebookIn {
    /// One sentence on what kind of words the file holds.
    pub about: String,
    /// Catalog words (words of some action's name, aliases or topics), each with the phrases
    /// people use for them.
    #[serde(default)]
    pub means: BTreeMap<String, Vec<String>>,
    /// Phrases that ask to delete, remove, reset or quit something in so many words.
    #[serde(default, rename = "asksForDestruction")]
    pub asks_destruction: Vec<String>,
}

/// One prompt record and the file it came from.
#[derive(Debug)]
pub struct PromptFile {
    /// File name inside the prompts directory (`playtest.json`).
    pub file: String,
    /// The typed record.
    pub record: PromptIn,
    /// The file as parsed JSON (for the revision hash).
    pub raw: Value,
}

/// A prompt as written in `codegen/prompts/<name>.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptIn {
    /// Prompt name, unique, snake_case.
    pub name: String,
    /// A short human title.
    pub title: String,
    /// One sentence on what it does.
    pub description: String,
    /// Its arguments, in order.
    #[serde(default)]
    pub arguments: Vec<PromptArgumentIn>,
    /// The message, with `{argument}` placeholders; `tool.action` in backticks must name an action.
    pub text: String,
}

/// One argument of a prompt.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptArgumentIn {
    /// Its name, as in the text's placeholder.
    pub name: String,
    /// What to give.
    pub description: String,
    /// Whether a value must be given.
    pub required: bool,
    /// What an optional argument's placeholder becomes without a value.
    #[serde(default)]
    pub default: Option<String>,
    /// What it is completed from (`entity`, `type`, `tool`), if anything.
    #[serde(default)]
    pub completes: Option<String>,
}

/// One tool record and the file it came from.
#[derive(Debug)]
pub struct ToolFile {
    /// File name inside the records directory (`inspect.json`).
    pub file: String,
    /// The typed record.
    pub record: ToolRecordIn,
}

/// A tool record as written in `codegen/records/<tool>.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRecordIn {
    /// Tool name.
    pub tool: String,
    /// `core`, `world`, `gameplay` or `utility`.
    pub category: String,
    /// One sentence on what the tool is for.
    pub summary: String,
    /// Protected tools can never be disabled.
    pub protected: bool,
    /// The actions, in the order `describe` lists them.
    pub actions: Vec<ActionRecordIn>,
}

/// An action record.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionRecordIn {
    /// Action name, unique within the tool.
    pub name: String,
    /// One sentence on what the action does.
    pub summary: String,
    /// `read`, `write` or `destructive`.
    pub effect: String,
    /// `none`, `explicit` or `elevated`.
    pub consent: String,
    /// The least token scope that may run it (`read`, `write`, `admin`); optional, by default
    /// the effect's (read, write, admin for destructive). Only ever raised above that default.
    #[serde(default)]
    pub scope: Option<String>,
    /// Whether the action spans frames.
    pub long_running: bool,
    /// Other names for the action.
    pub aliases: Vec<String>,
    /// Intent words for search.
    pub topics: Vec<String>,
    /// What of the app the action is about (`entity`, `component`, ...): a query naming such a
    /// thing of the running game lifts the action in search. Optional.
    #[serde(default)]
    pub subjects: Vec<String>,
    /// When to use it.
    pub when_to_use: String,
    /// When to use something else, and what.
    pub when_not_to_use: String,
    /// The params object schema (may hold `$ref`s to the shared defs).
    pub params: Value,
    /// The result schema.
    pub output: Value,
    /// Example calls.
    pub examples: Vec<ExampleIn>,
    /// Error code to hint.
    pub errors: BTreeMap<String, String>,
}

impl ActionRecordIn {
    /// The scope the action needs: the record's own, else the effect's (`read` for an effect
    /// codegen refuses anyway).
    pub fn effective_scope(&self) -> &'static str {
        let by_effect = Effect::parse(&self.effect).map_or(Scope::Read, Scope::for_effect);
        self.scope
            .as_deref()
            .and_then(Scope::parse)
            .unwrap_or(by_effect)
            .as_str()
    }
}

/// An example call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleIn {
    /// What the example does.
    pub title: String,
    /// The params object.
    pub params: Value,
    /// What comes back.
    pub expect: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefsFileIn {
    #[serde(rename = "$defs")]
    defs: BTreeMap<String, Value>,
}

/// Reads every `*.json` file of `dir`. Problems are collected rather than returned one by one so
/// an author sees all of them in one run.
pub fn load(dir: &Path) -> Result<RecordSet, Problems> {
    let mut problems = Problems::default();
    let names = match json_file_names(dir) {
        Ok(names) => names,
        Err(error) => {
            problems.push(Problem::new(
                dir.display().to_string(),
                "",
                format!("cannot read the records directory: {error}"),
            ));
            return Err(problems);
        }
    };

    let mut raw = BTreeMap::new();
    for name in &names {
        let path = dir.join(name);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) => {
                problems.push(Problem::new(name, "", format!("cannot read: {error}")));
                continue;
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(value) => {
                raw.insert(name.clone(), value);
            }
            Err(error) => problems.push(Problem::new(
                name,
                "",
                format!(
                    "not valid JSON at line {} column {}: {error}",
                    error.line(),
                    error.column()
                ),
            )),
        }
    }

    let mut defs = BTreeMap::new();
    let mut tools = Vec::new();
    for (name, value) in &raw {
        if name == DEFS_FILE {
            match typed::<DefsFileIn>(value) {
                Ok(file) => defs = file.defs,
                Err((pointer, message)) => problems.push(Problem::new(name, pointer, message)),
            }
        } else {
            match typed::<ToolRecordIn>(value) {
                Ok(record) => tools.push(ToolFile {
                    file: name.clone(),
                    record,
                }),
                Err((pointer, message)) => problems.push(Problem::new(name, pointer, message)),
            }
        }
    }
    if !raw.contains_key(DEFS_FILE) && problems.is_empty() {
        problems.push(Problem::new(
            DEFS_FILE,
            "",
            "missing: the shared $defs file is required",
        ));
    }
    if tools.is_empty() && problems.is_empty() {
        problems.push(Problem::new(
            dir.display().to_string(),
            "",
            "no tool records found",
        ));
    }
    problems.into_result(RecordSet {
        defs,
        tools,
        raw,
        prompts: Vec::new(),
        phrasebook: Vec::new(),
        labelled: Vec::new(),
        world_things: WorldThings::new(),
    })
}

/// Reads every `*.json` prompt of `dir` (a missing directory is no prompts).
pub fn load_prompts(dir: &Path) -> Result<Vec<PromptFile>, Problems> {
    load_typed_files(dir, "prompts", |file, record, raw| PromptFile {
        file,
        record,
        raw,
    })
}

/// Reads every `*.json` phrasebook file of `dir` (a missing directory is an empty phrasebook).
pub fn load_phrasebook(dir: &Path) -> Result<Vec<PhrasebookFile>, Problems> {
    load_typed_files(dir, "phrasebook", |file, record, raw| PhrasebookFile {
        file,
        record,
        raw,
    })
}

/// Reads every `*.json` file of `dir` as a `T`, shown as `<label>/<name>` in problems.
fn load_typed_files<T: for<'de> Deserialize<'de>, F>(
    dir: &Path,
    label: &str,
    make: impl Fn(String, T, Value) -> F,
) -> Result<Vec<F>, Problems> {
    let mut problems = Problems::default();
    let names = match json_file_names(dir) {
        Ok(names) => names,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            problems.push(Problem::new(
                dir.display().to_string(),
                "",
                format!("cannot read the {label} directory: {error}"),
            ));
            return Err(problems);
        }
    };
    let mut files = Vec::new();
    for name in names {
        let shown = format!("{label}/{name}");
        let parsed = fs::read_to_string(dir.join(&name))
            .map_err(|error| format!("cannot read: {error}"))
            .and_then(|text| {
                serde_json::from_str::<Value>(&text).map_err(|error| {
                    format!(
                        "not valid JSON at line {} column {}: {error}",
                        error.line(),
                        error.column()
                    )
                })
            });
        match parsed {
            Ok(raw) => match typed::<T>(&raw) {
                Ok(record) => files.push(make(shown, record, raw)),
                Err((pointer, message)) => problems.push(Problem::new(shown, pointer, message)),
            },
            Err(message) => problems.push(Problem::new(shown, "", message)),
        }
    }
    problems.into_result(files)
}

/// The `*.json` file names of `dir`, sorted.
pub fn json_file_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    Ok(names)
}

/// Reads tool records given as JSON values (file name -> record), with no shared `$defs`: how an
/// app's own actions, built while it starts, go through the same rules as the files.
pub fn from_values(files: BTreeMap<String, Value>) -> Result<RecordSet, Problems> {
    let mut problems = Problems::default();
    let mut tools = Vec::new();
    for (name, value) in &files {
        match typed::<ToolRecordIn>(value) {
            Ok(record) => tools.push(ToolFile {
                file: name.clone(),
                record,
            }),
            Err((pointer, message)) => problems.push(Problem::new(name, pointer, message)),
        }
    }
    problems.into_result(RecordSet {
        defs: BTreeMap::new(),
        tools,
        raw: files,
        prompts: Vec::new(),
        phrasebook: Vec::new(),
        labelled: Vec::new(),
        world_things: WorldThings::new(),
    })
}

/// Deserializes `value`, reporting a failure as (JSON pointer, message).
fn typed<T: for<'de> Deserialize<'de>>(value: &Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let pointer = path_to_pointer(error.path());
        (pointer, error.into_inner().to_string())
    })
}

/// Turns serde_path_to_error's path (`actions[2].effect`) into a JSON pointer (`/actions/2/effect`).
fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => pointer.push_str(&format!("/{}", escape_pointer(key))),
            Segment::Enum { variant } => pointer.push_str(&format!("/{}", escape_pointer(variant))),
            Segment::Unknown => {}
        }
    }
    pointer
}

/// Escapes one JSON pointer segment (RFC 6901).
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
