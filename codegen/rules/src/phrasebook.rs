//! Rules of the phrasebook (`native-transport/search/phrasebook/*.json`): every phrase leads to words the
//! catalog's actions answer to, no phrase is listed twice, and no phrase is so bare (only stop
//! words) that it would match every query.

use std::collections::{BTreeMap, BTreeSet};

use mcp_search::words::{self as search_words, meaningful_stems, words};

use crate::problem::{Problem, Problems};
use crate::records::{RecordSet, escape_pointer};

/// Checks every phrasebook file of `records` against its tool records.
pub fn check_phrasebook(records: &RecordSet, problems: &mut Problems) {
    let catalog_words = catalog_words(records);
    let mut said: BTreeMap<String, String> = BTreeMap::new();
    let mut destructive: BTreeMap<String, String> = BTreeMap::new();
    for phrasebook_file in &records.phrasebook {
        let file = phrasebook_file.file.as_str();
        let book = &phrasebook_file.record;
        if book.about.trim().is_empty() {
            problems.push(Problem::new(
                file,
                "/about",
                "say in one sentence what the file holds",
            ));
        }
        if book.means.is_empty() && book.asks_destruction.is_empty() {
            problems.push(Problem::new(
                file,
                "",
                "the file holds no phrases: give `means` or `asksForDestruction`",
            ));
        }
        for (concept, phrases) in &book.means {
            let at = format!("/means/{}", escape_pointer(concept));
            let concept_words: Vec<String> = words(concept)
                .filter(|word| !search_words::is_stop_word(word))
                .collect();
            if concept_words.is_empty() {
                problems.push(Problem::new(
                    file,
                    &at,
                    format!("\"{concept}\" holds no word search matches"),
                ));
            }
            for word in concept_words
                .iter()
                .filter(|word| !catalog_words.contains(&search_words::stem(word)))
            {
                problems.push(Problem::new(
                    file,
                    &at,
                    format!(
                        "\"{word}\" (of \"{concept}\") is no word of any action's name, aliases or topics: the phrases would lead nowhere"
                    ),
                ));
            }
            if phrases.is_empty() {
                problems.push(Problem::new(file, &at, "list at least one phrase"));
            }
            for (index, phrase) in phrases.iter().enumerate() {
                let pointer = format!("{at}/{index}");
                check_phrase(file, &pointer, phrase, problems);
                if words(phrase).eq(words(concept)) {
                    problems.push(Problem::new(
                        file,
                        &pointer,
                        format!("\"{phrase}\" is the catalog word itself; search already knows it"),
                    ));
                }
                if let Some(first) = said.insert(normal(phrase), format!("{file}{pointer}")) {
                    problems.push(Problem::new(
                        file,
                        &pointer,
                        format!(
                            "\"{phrase}\" is listed already at {first}: a phrase means one thing"
                        ),
                    ));
                }
            }
        }
        for (index, phrase) in book.asks_destruction.iter().enumerate() {
            let pointer = format!("/asksForDestruction/{index}");
            check_phrase(file, &pointer, phrase, problems);
            if let Some(first) = destructive.insert(normal(phrase), format!("{file}{pointer}")) {
                problems.push(Problem::new(
                    file,
                    &pointer,
                    format!("\"{phrase}\" is listed already at {first}"),
                ));
            }
        }
    }
}

/// A phrase is lowercase and holds at least one word that is not a stop word.
fn check_phrase(file: &str, pointer: &str, phrase: &str, problems: &mut Problems) {
    if phrase != phrase.to_lowercase() {
        problems.push(Problem::new(
            file,
            pointer,
            format!("\"{phrase}\": write phrases in lowercase (search lowercases queries)"),
        ));
    }
    if words(phrase).all(|word| search_words::is_stop_word(&word)) {
        problems.push(Problem::new(
            file,
            pointer,
            format!("\"{phrase}\" is only stop words: it would match almost any query"),
        ));
    }
}

/// The phrase as search splits it, for comparing ("ctrl+z" and "ctrl z" are the same phrase).
fn normal(phrase: &str) -> String {
    words(phrase).collect::<Vec<_>>().join(" ")
}

/// The stems of every action's name, aliases and topics.
fn catalog_words(records: &RecordSet) -> BTreeSet<String> {
    records
        .tools
        .iter()
        .flat_map(|tool_file| &tool_file.record.actions)
        .flat_map(|action| {
            std::iter::once(&action.name)
                .chain(&action.aliases)
                .chain(&action.topics)
        })
        .flat_map(|text| meaningful_stems(text).collect::<Vec<_>>())
        .collect()
}
