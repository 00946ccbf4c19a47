//! What search learns from how people asked: a naive Bayes model of the words that go with each
//! action, counted from the labelled phrasings (the catalog's `usage`, never a held-out one)
//! and from each action's own record (its name, aliases, topics, summary), so a game's own
//! actions, which no labelled phrasing asks for, take part through their records.
//!
//! Rules and the records' words say what a query names; the model says which action people
//! who write such words want, including words no record or phrasebook holds ("crank the
//! difficulty up", "roll the tape"). Its answer is a lead of up to [`LEARNT_LEAD`] points for the
//! actions it finds likeliest, which the ranking's rules (a question reads, no unasked
//! destruction at the top) then order like any other points.

use std::collections::{BTreeSet, HashMap};

use crate::words::{GAME_THING, distinct_stems};
use mcp_vocabulary::catalog::{ActionRecord, Catalog, ToolRecord};

/// The most points the model gives: each action gets this times its posterior, so an action
/// the words leave no doubt about gets nearly all of it and words many actions share give
/// each of them little.
pub(crate) const LEARNT_LEAD: u32 = 12;
/// The softmax temperature of the posterior, in nats of log-likelihood (1: the model's own).
const TEMPERATURE: f64 = 1.0;
/// Additive smoothing: a word an action's phrasings never say is unlikely for it, not
/// impossible.
const SMOOTHING: f64 = 0.1;
/// An action's record counts as this many phrasings that say its words.
const RECORD_WEIGHT: u32 = 2;

/// The counts, indexed by word, for the actions of one catalog in the search index's order.
#[derive(Debug, Default)]
pub(crate) struct LearntWords {
    /// For each word, the actions (by index) whose phrasings or record say it, and how often.
    said_by: HashMap<String, Vec<(usize, u32)>>,
    /// For each action, the log of its likelihoods' denominator: all its counts, smoothed.
    denominators: Vec<f64>,
}

impl LearntWords {
    /// Counts for `actions` (the index's order) from `catalog`'s usage and their records.
    pub(crate) fn build<'a>(
        catalog: &Catalog,
        actions: impl Iterator<Item = (&'a ToolRecord, &'a ActionRecord)>,
    ) -> LearntWords {
        let usage: HashMap<&str, _> = catalog
            .usage
            .iter()
            .map(|usage| (usage.action, usage))
            .collect();
        let mut counts: Vec<HashMap<String, u32>> = Vec::new();
        for (tool, action) in actions {
            let mut said: HashMap<String, u32> = HashMap::new();
            if let Some(usage) = usage.get(format!("{}.{}", tool.name, action.name).as_str()) {
                for (word, times) in usage.words {
                    *said.entry((*word).to_owned()).or_default() += times;
                }
            } else {
                // No labelled phrasing asks for it: a game's own action, which works on the
                // game's things. Its record names them ("goblins"), but a query's names are read
                // as one word, a thing of the game; without it here the actions people asked
                // of named things would draw every such query away from the game's.
                *said.entry(GAME_THING.to_owned()).or_default() += RECORD_WEIGHT;
            }
            for word in distinct_stems(&record_text(action)) {
                *said.entry(word).or_default() += RECORD_WEIGHT;
            }
            counts.push(said);
        }
        let vocabulary: BTreeSet<&String> = counts.iter().flat_map(HashMap::keys).collect();
        let smoothing = SMOOTHING * vocabulary.len() as f64;
        let denominators = counts
            .iter()
            .map(|said| (f64::from(said.values().sum::<u32>()) + smoothing).ln())
            .collect();
        let mut said_by: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        for (position, said) in counts.into_iter().enumerate() {
            for (word, times) in said {
                said_by.entry(word).or_default().push((position, times));
            }
        }
        LearntWords {
            said_by,
            denominators,
        }
    }

    /// Whether some action's phrasings or record say `word` (stemmed).
    pub(crate) fn knows(&self, word: &str) -> bool {
        self.said_by.contains_key(word)
    }

    /// Each action's lead for a query of `words` (its distinct stemmed words), in the index's
    /// order: [`LEARNT_LEAD`] times the action's posterior, rounded; all zero when the model
    /// knows none of the words.
    pub(crate) fn leads<'w>(&self, words: impl Iterator<Item = &'w String>) -> Vec<u32> {
        let known: Vec<&Vec<(usize, u32)>> =
            words.filter_map(|word| self.said_by.get(word)).collect();
        if known.is_empty() {
            return vec![0; self.denominators.len()];
        }
        let unseen = SMOOTHING.ln();
        let n = known.len() as f64;
        let mut likelihoods: Vec<f64> = self
            .denominators
            .iter()
            .map(|denominator| n * (unseen - denominator))
            .collect();
        for postings in known {
            for &(position, times) in postings {
                if let Some(likelihood) = likelihoods.get_mut(position) {
                    *likelihood += (f64::from(times) + SMOOTHING).ln() - unseen;
                }
            }
        }
        // The posterior of each action (every action equally likely before the words): sure
        // words lead one action far, words every action's phrasings say lead none much.
        let best = likelihoods
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = likelihoods
            .iter()
            .map(|likelihood| ((likelihood - best) / TEMPERATURE).exp())
            .collect();
        let total: f64 = weights.iter().sum();
        weights
            .iter()
            .map(|weight| {
                // Rounded to whole points, as every other weight of the ranking is.
                (f64::from(LEARNT_LEAD) * weight / total).round() as u32
            })
            .collect()
    }
}

/// An action's own words: its name, aliases, topics, summary, when to use it and its examples'
/// titles.
fn record_text(action: &ActionRecord) -> String {
    let mut text = vec![action.name, action.summary, action.when_to_use];
    text.extend(action.aliases.iter().copied());
    text.extend(action.topics.iter().copied());
    text.extend(action.examples.iter().map(|example| example.title));
    text.join(" ")
}

#[cfg(test)]
mod tests {
    use mcp_vocabulary::catalog::{ActionUsage, Phrasebook};

    use super::*;
    use crate::test_records::{action, tool};

    /// Undo and spawn, which people asked for in the labelled phrasings, and a game's action,
    /// which nobody did.
    fn model() -> LearntWords {
        let catalog = Box::leak(Box::new(Catalog {
            revision: "test",
            tools: Box::leak(Box::new([
                tool(
                    "history",
                    vec![action("undo", "Undo the last change.", &[])],
                ),
                tool(
                    "control_entity",
                    vec![action("spawn", "Spawn an entity.", &[])],
                ),
                tool(
                    "game",
                    vec![action("spawn_wave", "Send a wave.", &["horde"])],
                ),
            ])),
            prompts: &[],
            phrasebook: Phrasebook::EMPTY,
            usage: &[
                ActionUsage {
                    action: "control_entity.spawn",
                    phrasings: 4,
                    words: &[("add", 3), ("new", 2), ("the", 4)],
                },
                ActionUsage {
                    action: "history.undo",
                    phrasings: 4,
                    words: &[("oop", 3), ("revert", 2), ("the", 4)],
                },
            ],
        }));
        LearntWords::build(catalog, catalog.all_actions())
    }

    /// The leads for `text`, read as search reads a query.
    fn leads(model: &LearntWords, text: &str) -> Vec<u32> {
        model.leads(distinct_stems(text).iter())
    }

    #[test]
    fn a_word_people_say_for_one_action_leads_to_it() {
        let model = model();
        let [undo, spawn, wave] = leads(&model, "oops, the")[..] else {
            panic!("one lead per action");
        };
        assert!(undo >= 10, "undo leads by most of the lead: {undo}");
        assert_eq!((spawn, wave), (0, 0));
        let [undo, spawn, _] = leads(&model, "add new")[..] else {
            panic!("one lead per action");
        };
        assert!(spawn > undo, "{spawn} against {undo}");
    }

    #[test]
    fn words_nobody_said_lead_nowhere() {
        let model = model();
        assert!(!model.knows("zorblax"));
        assert_eq!(leads(&model, "zorblax"), [0, 0, 0]);
    }

    #[test]
    fn an_action_nobody_asked_for_is_known_by_its_record() {
        let model = model();
        let [undo, spawn, wave] = leads(&model, "a horde")[..] else {
            panic!("one lead per action");
        };
        assert!(wave > undo.max(spawn), "{wave} against {undo} and {spawn}");
    }

    #[test]
    fn an_action_nobody_asked_for_works_on_the_games_things() {
        let model = model();
        // A query naming only a thing of the game ("the goblin", read as one word) leads to the
        // game's own action, which the labelled phrasings never taught anything.
        let [undo, spawn, wave] = model.leads([GAME_THING.to_owned()].iter())[..] else {
            panic!("one lead per action");
        };
        assert!(wave > undo.max(spawn), "{wave} against {undo} and {spawn}");
    }
}
