//! What people ask for, counted: the labelled phrasings of `native-transport/search/labelled/search-*.json` become,
//! for each action of the records, the words its phrasings say and in how many of them. `search`
//! learns from these counts which words go with which action, so a phrasing nobody wrote into
//! the records or the phrasebook still finds its action.
//!
//! A word naming one of the game's own things ("goblin", "paddle") is counted as
//! [`GAME_THING`], as search reads it: which thing is the game's business, and a word another
//! game does not have would teach nothing. The words are listed per world beside the labelled
//! sets ([`WORLD_THINGS_FILE`]); contract-tests checks the list against what each world names.
//!
//! Every part but [`HELD_OUT_PART`] is counted: the held-out phrasings measure search and are
//! never learnt from. Phrasings that ask for an action the records do not hold (a game's own
//! actions, such as the sandbox's `game` tool) are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use mcp_search::words::{GAME_THING, distinct_stems};
use serde::Deserialize;

use crate::problem::{Problem, Problems};
use crate::records::{Labelled, RecordSet, WorldThings, json_file_names};

/// The part of a labelled set that is never learnt from.
pub const HELD_OUT_PART: &str = "held_out";
/// How a labelled set's file name starts (`search-intents.json`, `search-phrasings-dev.json`).
pub const LABELLED_PREFIX: &str = "search-";

/// The file beside the labelled sets that lists each world's words for its own things.
pub const WORLD_THINGS_FILE: &str = "world-things.json";

#[derive(Deserialize)]
struct WorldThingsFile {
    worlds: WorldThings,
}

#[derive(Deserialize)]
struct LabelledFile {
    intents: Vec<Labelled>,
}

/// The words the phrasings asking for one action say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// The action, as `tool.action`.
    pub action: String,
    /// How many phrasings asked for it.
    pub phrasings: u32,
    /// Each stemmed word and in how many of those phrasings it appears.
    pub words: BTreeMap<String, u32>,
}

/// Reads every labelled set (`search-*.json`) of `dir`, held-out parts left out, and the sets
/// named in `left_out` left out whole (to measure a set as if search had never learnt from
/// it; naming a set `dir` does not hold is a problem). A missing directory is no phrasings:
/// the records alone still build a catalog.
pub fn load_labelled(dir: &Path, left_out: &[String]) -> Result<Vec<Labelled>, Problems> {
    let mut problems = Problems::default();
    let names: Vec<String> = match json_file_names(dir) {
        Ok(names) => {
            let labelled: Vec<String> = names
                .into_iter()
                .filter(|name| name.starts_with(LABELLED_PREFIX))
                .collect();
            for unknown in left_out.iter().filter(|name| !labelled.contains(name)) {
                problems.push(Problem::new(
                    format!("labelled/{unknown}"),
                    "",
                    "no such labelled set to leave out (give a file name of contract-tests/)",
                ));
            }
            labelled
                .into_iter()
                .filter(|name| !left_out.contains(name))
                .collect()
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            problems.push(Problem::new(
                dir.display().to_string(),
                "",
                format!("cannot read the labelled phrasings' directory: {error}"),
            ));
            return Err(problems);
        }
    };
    let mut labelled = Vec::new();
    for name in names {
        let parsed = fs::read_to_string(dir.join(&name))
            .map_err(|error| format!("cannot read: {error}"))
            .and_then(|text| {
                serde_json::from_str::<LabelledFile>(&text)
                    .map_err(|error| format!("not a labelled set: {error}"))
            });
        match parsed {
            Ok(file) => labelled.extend(
                file.intents
                    .into_iter()
                    .filter(|phrasing| phrasing.part != HELD_OUT_PART),
            ),
            Err(message) => problems.push(Problem::new(format!("labelled/{name}"), "", message)),
        }
    }
    problems.into_result(labelled)
}

/// Reads [`WORLD_THINGS_FILE`] of `dir`; none there is no world's things (every word counted
/// as written).
pub fn load_world_things(dir: &Path) -> Result<WorldThings, Problems> {
    let path = dir.join(WORLD_THINGS_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(WorldThings::new());
        }
        Err(error) => return Err(world_things_problem(format!("cannot read: {error}"))),
    };
    serde_json::from_str::<WorldThingsFile>(&text)
        .map(|file| file.worlds)
        .map_err(|error| {
            world_things_problem(format!("not a list of each world's things: {error}"))
        })
}

fn world_things_problem(message: String) -> Problems {
    let mut problems = Problems::default();
    problems.push(Problem::new(
        format!("labelled/{WORLD_THINGS_FILE}"),
        "",
        message,
    ));
    problems
}

/// Every action of `records`, as `tool.action`.
pub fn record_actions(records: &RecordSet) -> BTreeSet<String> {
    records
        .tools
        .iter()
        .flat_map(|tool| {
            tool.record
                .actions
                .iter()
                .map(move |action| format!("{}.{}", tool.record.tool, action.name))
        })
        .collect()
}

/// Counts the words of `labelled` for every action of `known` that some phrasing asks for,
/// ordered by action; a word naming a thing of the phrasing's world (`things`) as
/// [`GAME_THING`].
pub fn count(labelled: &[Labelled], known: &BTreeSet<String>, things: &WorldThings) -> Vec<Usage> {
    let mut usage: BTreeMap<&str, Usage> = BTreeMap::new();
    for phrasing in labelled {
        let Some(action) = phrasing.expect.first() else {
            continue;
        };
        if !known.contains(action) {
            continue;
        }
        let counted = usage.entry(action).or_insert_with(|| Usage {
            action: action.clone(),
            phrasings: 0,
            words: BTreeMap::new(),
        });
        counted.phrasings += 1;
        let world = things.get(&phrasing.world);
        let said: BTreeSet<String> = distinct_stems(&phrasing.query)
            .into_iter()
            .map(|word| match world {
                Some(world) if world.contains(&word) => GAME_THING.to_owned(),
                _ => word,
            })
            .collect();
        for word in said {
            *counted.words.entry(word).or_default() += 1;
        }
    }
    usage.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrasing(query: &str, action: &str, part: &str) -> Labelled {
        Labelled {
            query: query.to_owned(),
            expect: vec![action.to_owned()],
            part: part.to_owned(),
            world: "sandbox".to_owned(),
        }
    }

    #[test]
    fn held_out_phrasings_are_never_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let set = serde_json::json!({"intents": [
            {"query": "undo that", "expect": ["history.undo"], "part": "tuning"},
            {"query": "take it back", "expect": ["history.undo"], "part": "held_out"},
        ]});
        fs::write(dir.path().join("search-test.json"), set.to_string()).expect("written");
        fs::write(dir.path().join("other.json"), "not json").expect("written");
        let labelled = load_labelled(dir.path(), &[]).expect("reads");
        let queries: Vec<&str> = labelled.iter().map(|one| one.query.as_str()).collect();
        assert_eq!(queries, ["undo that"]);
    }

    #[test]
    fn a_set_left_out_is_not_read_and_an_unknown_one_is_a_problem() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (name, query) in [("search-a.json", "undo that"), ("search-b.json", "redo it")] {
            let set = serde_json::json!({"intents": [
                {"query": query, "expect": ["history.undo"], "part": "dev"},
            ]});
            fs::write(dir.path().join(name), set.to_string()).expect("written");
        }
        let labelled = load_labelled(dir.path(), &["search-b.json".to_owned()]).expect("reads");
        let queries: Vec<&str> = labelled.iter().map(|one| one.query.as_str()).collect();
        assert_eq!(queries, ["undo that"]);
        assert!(load_labelled(dir.path(), &["search-c.json".to_owned()]).is_err());
    }

    #[test]
    fn words_are_counted_once_per_phrasing_stop_words_kept() {
        let words: Vec<String> = distinct_stems("what is the score, the SCORE?")
            .into_iter()
            .collect();
        assert_eq!(
            words,
            ["is", "scor", "the", "what"],
            "stemmed as search stems"
        );
        let known = BTreeSet::from(["history.undo".to_owned()]);
        let counted = count(
            &[
                phrasing("undo the undo", "history.undo", "dev"),
                phrasing("undo it", "history.undo", "dev"),
                phrasing("send a wave", "game.spawn_wave", "dev"),
            ],
            &known,
            &WorldThings::new(),
        );
        let [undo] = counted.as_slice() else {
            panic!("one action counted, the game's skipped: {counted:?}");
        };
        assert_eq!(undo.phrasings, 2);
        assert_eq!(undo.words.get("undo"), Some(&2));
        assert_eq!(undo.words.get("it"), Some(&1));
    }

    #[test]
    fn a_worlds_things_are_counted_as_a_thing_of_the_game() {
        let known = BTreeSet::from(["control_app.set_speed".to_owned()]);
        let things = WorldThings::from([
            ("sandbox".to_owned(), BTreeSet::from(["goblin".to_owned()])),
            (
                "breakout".to_owned(),
                BTreeSet::from(["ball".to_owned(), "paddl".to_owned()]),
            ),
        ]);
        let mut on_breakout = phrasing(
            "the ball and the paddle are slow",
            "control_app.set_speed",
            "dev",
        );
        on_breakout.world = "breakout".to_owned();
        let counted = count(
            &[
                phrasing(
                    "the goblin is slow, the ball too",
                    "control_app.set_speed",
                    "dev",
                ),
                on_breakout,
            ],
            &known,
            &things,
        );
        let [speed] = counted.as_slice() else {
            panic!("one action counted: {counted:?}");
        };
        // Once per phrasing, however many things it names; another world's names as written.
        assert_eq!(speed.words.get(GAME_THING), Some(&2));
        assert_eq!(speed.words.get("goblin"), None);
        assert_eq!(
            speed.words.get("ball"),
            Some(&1),
            "not a thing of the sandbox"
        );
        assert_eq!(speed.words.get("paddl"), None);
    }

    #[test]
    fn the_world_things_file_is_optional_and_checked() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(
            load_world_things(dir.path()).expect("none is fine"),
            WorldThings::new()
        );
        fs::write(
            dir.path().join(WORLD_THINGS_FILE),
            r#"{"worlds": {"sandbox": ["goblin"]}}"#,
        )
        .expect("written");
        let read = load_world_things(dir.path()).expect("reads");
        assert!(read["sandbox"].contains("goblin"));
        fs::write(
            dir.path().join(WORLD_THINGS_FILE),
            r#"{"sandbox": "goblin"}"#,
        )
        .expect("written");
        assert!(load_world_things(dir.path()).is_err());
    }
}
