//! `search`: ranks every action of a catalog, and the running app's own words, by how well they
//! match a request.
//!
//! # What it reads
//!
//! - The catalog (`index`): each action's name, aliases, topics, tool and summary, stemmed
//!   once ([`words`]: splitting, stop words, the light stemmer). A query word is worth its best
//!   place among an action's words: name 5, alias 4, topic 3, tool or summary 1; one more when
//!   written as in the name; at most a summary's when everybody says it ("show", "game"). A
//!   command's first word, its verb, counts double, and an action's own phrase or one-word alias
//!   said whole adds 2 or 1.
//! - The phrasebook (`phrasebook`, data in `phrasebook/`): how people say what the records
//!   name ("ctrl+z" is undo, "laggy" is lag). A phrase's meaning counts twice a word's, and the
//!   words an idiom read count only through it. Its destruction phrases feed the guard below.
//! - What people wrote (`learnt`): a naive Bayes model over the words of the labelled phrasings
//!   (`labelled/`, never their held-out parts), counted by codegen. It adds a lead of up to
//!   `learnt::LEARNT_LEAD` (12) points when the query has a word it knows that says what to do; the
//!   game's own names read as one word, "a thing of the game".
//! - The running app ([`terms`], `world`): its types, fields, values, states, files and named
//!   entities. Naming one lifts the actions about that kind of thing (their records' `subjects`),
//!   says why, and fills their parameters.
//! - Spelling (`spelling`): an unknown word of five letters or more one slip away from a known
//!   word is read as that word (`readAs`).
//!
//! # How a query is read (`query`) and ranked (`rank`)
//!
//! Score = word places + the app's things named + the mood weight + the learnt lead. The whole
//! query naming an action exactly wins outright (10), and a one-word action name said anywhere
//! adds 2; a command that opens with an action's one-word name ("save ...") gives it the model's
//! best lead. The game's own actions (tools the app registered) get 2 more where the query says
//! a word of their own ("wave", not "spawn"), and lead as far as the model's best where that word
//! names none of the game's things, as far as it is unsure of another otherwise.
//!
//! The rules that order the hits, all kept for safety or mood:
//!
//! - **Mood.** A question (a reading first word, a reading opening such as "give me", a question
//!   mark outside a request, a short naming typed alone, a sentence saying the speaker is not
//!   sure) adds 3 to reads that answer now and ranks every read scoring over a third of the best
//!   above every write. A wish ("the crate should sit under Base") adds 3 to changes and ranks
//!   them above reads. A command adds 2 to changes.
//! - **No unasked destruction.** No destructive action is among the first three unless the query
//!   asks for destruction in so many words (the phrasebook's destruction phrases, not in a
//!   question about it); with fewer than three other hits, it is left out.
//! - **Equal scores:** a read first, then a change, then a destruction; then the action more of
//!   the query speaks of; then catalog order.
//!
//! # On a budget
//!
//! A rule stays only if it is a safety or mood rule or is worth half a point of recall@3 on the
//! leave-one-set-out measure (`leave-one-set-out.sh`: each development set ranked with its own
//! phrasings left out of the learning). The labelled sets are frozen: a miss found later becomes
//! a phrasebook entry, or is left. The guide's search chapter lists what was removed and what each
//! was worth.

mod index;
mod learnt;
mod phrasebook;
mod query;
mod rank;
mod spelling;
pub mod terms;
#[cfg(test)]
mod test_records;
pub mod words;
mod world;

pub use index::SearchIndex;
pub use query::Query;
pub use rank::{Explanation, Hit, Ranked, game_thing_words, rank};
pub use world::{WorldCache, WorldIndex};

const NAME_WEIGHT: u32 = 5;
const ALIAS_WEIGHT: u32 = 4;
const TOPIC_WEIGHT: u32 = 3;
const TOOL_WEIGHT: u32 = 1;
const SUMMARY_WEIGHT: u32 = 1;
/// What a question ("what is ...", "show me ...") adds to a read action that matched at all.
const QUESTION_WEIGHT: u32 = 3;
/// What a command adds to an action that changes something, once it matched at all; less than a
/// question gives reads, since "watch", "wait until" and "list" are commands that read.
const COMMAND_WEIGHT: u32 = 2;
/// A query word that is a word of the action's name exactly as written (plural and all).
const EXACT_WORD_WEIGHT: u32 = 1;
/// A query word that is the action's whole (one-word) name: `load`, `save`, `pause`.
const WHOLE_NAME_WEIGHT: u32 = 2;
/// A topic or alias of several words found whole, in order, among the query's words ("let go",
/// "delete all", "game over"): the record's own phrase for what the user said.
const WHOLE_PHRASE_WEIGHT: u32 = 2;
/// A one-word alias the query says ("find", "states"): a name the action answers to, said
/// whole, outranks a topic sharing the word.
const WHOLE_ALIAS_WEIGHT: u32 = 1;
/// An action of the app's own tools (game-defined) that matched the query's words: the game's
/// own way to do something outranks the bridge's generic one.
const APP_ACTION_WEIGHT: u32 = 2;

#[cfg(test)]
mod tests {
    use mcp_vocabulary::catalog::Catalog;

    use super::*;
    use crate::index::own_word_weights;
    use crate::rank::weight_at;
    use test_records::{action, tool};

    #[test]
    fn a_word_is_worth_its_best_place_among_an_actions_words() {
        let save = action("save_world", "Save the world to a file.", &["snapshot"]);
        let manage = tool("manage_world", Vec::new());
        // "world" is in the name, the summary and the tool's name: the name's weight wins.
        // Words are stemmed as search stems them ("save" -> "sav").
        let worth = own_word_weights(&manage, &save, |_, full| full);
        assert_eq!(worth.get("world"), Some(&NAME_WEIGHT));
        assert_eq!(worth.get("snapshot"), Some(&TOPIC_WEIGHT));
        assert_eq!(worth.get("manag"), Some(&TOOL_WEIGHT));
        assert_eq!(worth.get("fil"), Some(&SUMMARY_WEIGHT));
        assert_eq!(worth.get("load"), None);
        // A name word many actions share is worth what the caller says.
        let shared = own_word_weights(&manage, &save, |_, _| TOPIC_WEIGHT);
        assert_eq!(shared.get("sav"), Some(&TOPIC_WEIGHT));
    }

    #[test]
    fn a_words_places_are_in_index_order_and_found_by_action() {
        let catalog: &'static Catalog = Box::leak(Box::new(Catalog {
            revision: "test",
            tools: Box::leak(Box::new([
                tool(
                    "manage_world",
                    vec![
                        action("save_world", "Save the world.", &[]),
                        action("load_world", "Load the world.", &[]),
                    ],
                ),
                tool(
                    "history",
                    vec![action("undo", "Undo the last change.", &[])],
                ),
            ])),
            prompts: &[],
            phrasebook: mcp_vocabulary::catalog::Phrasebook::EMPTY,
            usage: &[],
        }));
        let index = SearchIndex::build(catalog);
        for places in index.word_places.values() {
            assert!(
                places.windows(2).all(|pair| pair[0].0 < pair[1].0),
                "{places:?}"
            );
        }
        let world = index
            .word_places
            .get("world")
            .map_or(&[][..], Vec::as_slice);
        assert_eq!(
            weight_at(&[world], 0, 1),
            NAME_WEIGHT - 1,
            "two names share it"
        );
        assert_eq!(weight_at(&[world], 0, 2), 0, "undo does not say it");
        assert_eq!(weight_at(&[world], 1, 0), 0, "no second word");
    }
}
