//! `search`: rank every action of the catalog by how well it matches an intent.
//!
//! Words of the query are stemmed lightly ("moving" -> "mov") and matched against, from
//! strongest to weakest: the action's name, its aliases and topics, its tool's name, its summary
//! (with its `whenToUse` and its examples' titles: the records' own plain words).
//! The first word counts double when it leads the query: it is usually the verb of the intent.
//!
//! The running app's own words count too ([`world`]): a query naming one of its types, fields,
//! values or named entities lifts the actions about that kind of thing (their records'
//! `subjects`: a resource lifts `get_resource`, `mutate`, `watch_resource` ...), the hit says
//! why, and its parameters come pre-filled. A question ("what is ...", "show me ...") leans to
//! reads; a command leans to writes; the game's own actions lead where the query says one of
//! their own words ("wave", not "spawn"), unless it names the thing by its kind ("a Score
//! resource") or states a wish. A tool or category named as a tool ("the input tool") is what
//! the query is about; three numbers in a row are a place ("at 3, 4, 0"). An unreflected
//! component fills only presence filters (`with`), never a value to read or write, and a name
//! several entities carry leads to the actions that find them ("the bricks").
//!
//! How people say things counts through the catalog's phrasebook ([`phrasebook`]): "ctrl+z" means
//! undo, "laggy" means lag; and through what search learnt from the labelled phrasings ([`learnt`]:
//! which words people use for which action, never from a held-out phrasing), which adds a lead of
//! up to [`learnt::LEARNT_LEAD`] points to the actions such words make likeliest. The lead needs a
//! word that says what to do ("show me the crate" has none), reads each of the game's own names as
//! one word, a thing of the game, counts double in a statement (no verb first, no question, no
//! wish), goes to the game's action where the query says one of its words that names none of the
//! game's things (outside a clause that says when), to the action a command names by its first word
//! ("save ..."), and among actions taking a tool named as a tool. A participle after "the", "all",
//! "I" ... describes a thing ("the loaded assets") and names an action no more than a topic does,
//! and a word the query says not to do ("without loading it") asks for nothing. Four rules close
//! the ranking: a question, a short naming typed alone ("my scenes", "all components") or a
//! sentence saying the speaker does not know ("I'm not sure the crate has a Velocity"), ranks every
//! read that answers it (more than a third of the best score) above every write; a wish ("the crate
//! should sit under Base") ranks every change above every read; no destructive action is among the
//! first three unless the query asks for destruction in so many words; among equal scores reads
//! come first, then the action more of the query speaks of. Last, the action the learnt model finds
//! likeliest keeps the third row if the rules ranked it lower and allow it there.

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
