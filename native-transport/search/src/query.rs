//! A query, split once: its words, stems, mood, the phrases it says and what they mean.

use crate::phrasebook::{CompiledPhrasebook, Meant};
use crate::words::{
    READ_MOOD_WORDS, REQUEST_OPENERS, asks_how_to_change, describes_rather_than_asks,
    gives_coordinates, is_ruled_out, is_stop_word, is_weak_word, meaningful_stems,
    only_names_things, opens_as_read, says_unsure, states_a_wish, stem, words,
};

/// A query, split once.
#[derive(Debug)]
pub struct Query {
    pub text: String,
    /// The text as search read it, when it read a misspelled word as another.
    pub read_as: Option<String>,
    /// Meaningful words, stemmed.
    pub(crate) words: Vec<String>,
    /// Those words joined by `_`, to compare with an action's whole name.
    pub(crate) joined_words: String,
    /// Every distinct word, stemmed, stop words kept: what the learnt model reads.
    pub(crate) all_stems: Vec<String>,
    /// Those of them that say what to do: not stop words, weak words ("show", "thing"), words
    /// that only ask ("what", "list") or say how many ("every").
    pub(crate) content_stems: Vec<String>,
    /// The same words as written, in the same order.
    pub(crate) exact: Vec<String>,
    /// The catalog's words for the phrasebook phrases the query holds (stemmed, and as
    /// written).
    pub(crate) meant: Vec<Meant>,
    /// For each of `words`, whether a phrase of several words read it: an idiom means what
    /// the phrasebook says, not what its words say one by one ("roll back", "click and drag").
    pub(crate) in_idiom: Vec<bool>,
    /// For each of `words`, whether it is a participle that describes a thing ("the loaded
    /// assets") rather than says what to do.
    pub(crate) describes: Vec<bool>,
    /// For each of `words`, whether the query says not to do it ("without loading it").
    pub(crate) ruled_out: Vec<bool>,
    /// For each of `words`, whether it stands in a clause that says when ("after the wave",
    /// "since my checkpoint"): it sets the scene rather than says what to do.
    pub(crate) says_when: Vec<bool>,
    /// Whether it states how something ought to be ("the crate should sit under Base"): a
    /// change asked for as a wish.
    pub(crate) wishes: bool,
    /// Whether it asks to be shown something rather than to change it.
    pub(crate) wants_read: bool,
    /// Whether its first word is a meaningful verb: then it counts double. Reading verbs
    /// (`show`, `list`, `get`) are too common to.
    pub(crate) leads_with_verb: bool,
    /// Whether it asks, in so many words, to delete, remove, reset or quit something.
    pub(crate) asks_destruction: bool,
}

/// First words that make a query a question about something, whatever it names: "what",
/// "how", "is", "does" ... (not "show" or "get", which ask to be shown, nor "can", which asks).
pub(crate) const QUESTION_WORDS: [&str; 17] = [
    "what", "whats", "how", "which", "where", "who", "why", "when", "is", "are", "does", "do",
    "did", "has", "have", "was", "were",
];

/// Words that open a clause saying when something happened ("after the wave"), not what to do.
pub(crate) const TIME_WORDS: [&str; 3] = ["after", "during", "since"];

/// Words that say how many things, not what to do with them.
pub(crate) const QUANTIFIERS: [&str; 4] = ["every", "all", "each", "some"];

/// The catalog word a point in space ("at 3, 4, 0") means: a topic of spawning and of moving.
pub(crate) const COORDINATES_MEAN: &str = "place";

/// What a catalog word a phrase of the query means is worth, against one of the query's own
/// words: the phrasebook says outright what the user wants.
pub(crate) const MEANT_FACTOR: u32 = 2;

impl Query {
    /// Splits `text`, reading it with `phrasebook`.
    pub(crate) fn parse(text: &str, phrasebook: &CompiledPhrasebook) -> Query {
        let all: Vec<String> = words(text).collect();
        let first = all.first().cloned().unwrap_or_default();
        let (mut meant, read_by) = phrasebook.meanings(&all);
        // "at 3, 4, 0" says where a thing goes, as the catalog's "place" does.
        if gives_coordinates(text) && !meant.iter().any(|meant| meant.exact == COORDINATES_MEAN) {
            meant.push(Meant {
                stem: stem(COORDINATES_MEAN),
                exact: COORDINATES_MEAN.to_owned(),
                requested: true,
            });
        }
        // "how do I rename the orc": the first word kept is the verb, as in a command.
        let how_to = asks_how_to_change(&all);
        // A question about destruction ("how long does the turret take to kill them?") asks
        // to know, not to destroy; asking how to destroy something asks for the destroying.
        let asks_about = QUESTION_WORDS.contains(&first.as_str()) && !how_to;
        let asks_destruction = !asks_about && phrasebook.asks_destruction(&all, &read_by, &meant);
        // "loaded assets" opens with what the assets are, not with what to do.
        let leads_with_verb = how_to
            || (!first.is_empty()
                && !is_stop_word(&first)
                && !READ_MOOD_WORDS.contains(&first.as_str())
                && !describes_rather_than_asks(&all, 0));
        // A question mark makes a question unless it opens as a request; a request to destroy
        // is never a question, whatever its first word ("get rid of ..."); nor is asking how to
        // change something ("how do I rename the orc?").
        let questioned =
            text.trim_end().ends_with('?') && !REQUEST_OPENERS.contains(&first.as_str());
        let wants_read = (READ_MOOD_WORDS.contains(&first.as_str())
            || opens_as_read(&all)
            || questioned
            // "my scenes", typed alone, asks to see them.
            || only_names_things(&all)
            || says_unsure(&all))
            && !asks_destruction
            && !how_to;
        let in_idiom = all
            .iter()
            .zip(&read_by)
            .filter(|(word, _)| !is_stop_word(word))
            .map(|(_, length)| *length > 1)
            .collect();
        let wishes = !wants_read && states_a_wish(&all);
        let describes = (0..all.len())
            .filter(|&index| !is_stop_word(&all[index]))
            .map(|index| describes_rather_than_asks(&all, index))
            .collect();
        // For every word: whether the query says not to do it (stop words never are).
        let rules_out: Vec<bool> = (0..all.len())
            .map(|index| !is_stop_word(&all[index]) && is_ruled_out(&all, index))
            .collect();
        let ruled_out = all
            .iter()
            .zip(&rules_out)
            .filter(|(word, _)| !is_stop_word(word))
            .map(|(_, ruled_out)| *ruled_out)
            .collect();
        // What the query says not to do ("without loading it") teaches nothing either.
        let kept = || {
            all.iter()
                .zip(&rules_out)
                .filter(|(_, ruled_out)| !**ruled_out)
                .map(|(word, _)| word)
        };
        let all_stems = kept()
            .map(|word| stem(word))
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        let content_stems = kept()
            .filter(|word| {
                !is_stop_word(word)
                    && !is_weak_word(word)
                    && !READ_MOOD_WORDS.contains(&word.as_str())
                    && !QUANTIFIERS.contains(&word.as_str())
            })
            .map(|word| stem(word))
            .collect();
        let says_when = text
            .split([',', ';', '!', '?'])
            .flat_map(|clause| {
                let mut after_when = false;
                words(clause)
                    .map(|word| {
                        let flag = after_when;
                        after_when |= TIME_WORDS.contains(&word.as_str());
                        (word, flag)
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|(word, _)| !is_stop_word(word))
            .map(|(_, flag)| flag)
            .collect();
        let meaningful: Vec<String> = meaningful_stems(text).collect();
        Query {
            text: text.to_owned(),
            joined_words: meaningful.join("_"),
            read_as: None,
            says_when,
            all_stems,
            content_stems,
            describes,
            ruled_out,
            wishes,
            words: meaningful,
            exact: all.into_iter().filter(|word| !is_stop_word(word)).collect(),
            meant,
            in_idiom,
            wants_read,
            leads_with_verb,
            asks_destruction,
        }
    }
}
