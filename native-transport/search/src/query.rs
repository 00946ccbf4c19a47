//! A query, split once: its words, stems, mood, the phrases it says and what they mean.

use crate::phrasebook::{CompiledPhrasebook, Meant};
use crate::words::{
    READ_MOOD_WORDS, REQUEST_OPENERS, is_stop_word, is_weak_word, meaningful_stems,
    only_names_things, opens_as_read, says_unsure, states_a_wish, stem, words,
};

/// A query, split once.
#[derive(Debug)]
pub struct Query {
    /// The query as sent.
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

/// Words that say how many things, not what to do with them.
pub(crate) const QUANTIFIERS: [&str; 4] = ["every", "all", "each", "some"];

/// What a catalog word a phrase of the query means is worth, against one of the query's own
/// words: the phrasebook says outright what the user wants.
pub(crate) const MEANT_FACTOR: u32 = 2;

impl Query {
    /// Splits `text`, reading it with `phrasebook`.
    pub(crate) fn parse(text: &str, phrasebook: &CompiledPhrasebook) -> Query {
        let all: Vec<String> = words(text).collect();
        let first = all.first().cloned().unwrap_or_default();
        let (meant, read_by) = phrasebook.meanings(&all);
        // A question about destruction ("how long does the turret take to kill them?") asks
        // to know, not to destroy.
        let asks_about = QUESTION_WORDS.contains(&first.as_str());
        let asks_destruction = !asks_about && phrasebook.asks_destruction(&all, &read_by, &meant);
        let leads_with_verb = !first.is_empty()
            && !is_stop_word(&first)
            && !READ_MOOD_WORDS.contains(&first.as_str());
        // A question mark makes a question unless it opens as a request; a request to destroy
        // is never a question, whatever its first word ("get rid of ...").
        let questioned =
            text.trim_end().ends_with('?') && !REQUEST_OPENERS.contains(&first.as_str());
        let wants_read = (READ_MOOD_WORDS.contains(&first.as_str())
            || opens_as_read(&all)
            || questioned
            // "my scenes", typed alone, asks to see them.
            || only_names_things(&all)
            || says_unsure(&all))
            && !asks_destruction;
        let in_idiom = all
            .iter()
            .zip(&read_by)
            .filter(|(word, _)| !is_stop_word(word))
            .map(|(_, length)| *length > 1)
            .collect();
        let wishes = !wants_read && states_a_wish(&all);
        let all_stems = all
            .iter()
            .map(|word| stem(word))
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        let content_stems = all
            .iter()
            .filter(|word| {
                !is_stop_word(word)
                    && !is_weak_word(word)
                    && !READ_MOOD_WORDS.contains(&word.as_str())
                    && !QUANTIFIERS.contains(&word.as_str())
            })
            .map(|word| stem(word))
            .collect();
        let meaningful: Vec<String> = meaningful_stems(text).collect();
        Query {
            text: text.to_owned(),
            joined_words: meaningful.join("_"),
            read_as: None,
            all_stems,
            content_stems,
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
