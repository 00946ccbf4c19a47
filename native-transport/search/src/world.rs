//! The app's own words: an index over the newest [`AppTerms`], so a query that names a type, a
//! field, a value or an entity of the running game finds the actions that work on it.
//!
//! A term counts when the query holds every word of its name (`Score`, `Goblin`, `GameState`
//! for "game state"), or every word of one of its fields or values (`red` of `Score`, `Bow` of
//! `Weapon`); words of its docs then make it stronger. Docs alone never count: their common
//! words would tie any query to half the engine's types. An engine type counts only when named:
//! its members are common words ("right", "left", "title", "off") that would tie any sentence to
//! `Node` or `Window`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::words::{meaningful_stems, stem, words};

use crate::spelling::Spelling;
use crate::terms::{AppTerms, AppTermsFeed, Term};

/// Most entities one word points at. A word shared by thousands of names ("Enemy 1" ..
/// "Enemy 9999") says little about which one is meant; the cap bounds the work per query.
const MAX_ENTITIES_PER_WORD: usize = 32;
/// A query holding every word of a name.
const FULL_NAME: u32 = 6;
/// Each word of a longer name the query holds, when it also names a field or value of the type.
const NAME_WORD: u32 = 1;
/// A field or value the query names in full.
const MEMBER: u32 = 3;
/// Each word of the docs the query holds, up to a cap.
const DOC_WORD: u32 = 1;
const DOC_CAP: u32 = 3;
/// Most a matched term adds to an action: the app's words say *what* the query is about; the
/// action's own words still say what to *do* with it.
const TERM_CAP: u32 = 6;
/// A field the query names, for actions that address fields (`path`).
pub(super) const FIELD_BONUS: u32 = 3;

/// One term of the app the query names.
#[derive(Debug, Clone, Copy)]
pub(super) struct TermMatch<'a> {
    /// The term.
    pub term: &'a Term,
    /// How strongly the query names it (at most [`TERM_CAP`]).
    pub strength: u32,
    /// The field the query names, if any.
    pub field: Option<&'a str>,
    /// The value (enum variant, state value) the query names, if any.
    pub value: Option<&'a str>,
}

/// Where a word occurs in a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Name,
    Docs,
    Field(usize),
    Value(usize),
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    term: usize,
    place: Place,
}

/// How many words each part of a term has: a part counts only when the query holds them all.
#[derive(Debug, Default)]
struct Sizes {
    name: usize,
    fields: Vec<usize>,
    values: Vec<usize>,
    /// Each value's words in their order ("game", "over" for `GameOver`).
    value_words: Vec<Vec<String>>,
    /// For an engine type, the words of its name as written: the engine's names are ordinary
    /// words, so only the word itself names one ("checked" names `Checked`; "check" does not).
    written: Vec<String>,
}

/// The published terms, their words stemmed once.
#[derive(Debug)]
pub struct WorldIndex {
    terms: Arc<AppTerms>,
    sizes: Vec<Sizes>,
    postings: HashMap<String, Vec<Posting>>,
    /// The words of the app's names (types, their fields and values, entities), which a
    /// misspelled query word may mean as well as a catalog word ("the Weapn").
    pub(super) spelling: Spelling,
}

/// Distinct stemmed meaningful words of `text`, and how many words it has in all (stop words
/// included: `InGame` is not named by "game" alone).
fn part_words(text: &str) -> (Vec<String>, usize) {
    let mut stems: Vec<String> = meaningful_stems(text).collect();
    stems.sort();
    stems.dedup();
    let all = words(text).count().max(stems.len());
    (stems, all)
}

impl WorldIndex {
    /// Indexes `terms`. Entities with shorter names are indexed first, so a word shared by more
    /// names than the cap still finds the entity named by that word alone.
    pub(crate) fn build(terms: Arc<AppTerms>) -> WorldIndex {
        let mut postings: HashMap<String, Vec<Posting>> = HashMap::new();
        let mut entities_per_word: HashMap<String, usize> = HashMap::new();
        let names: Vec<(Vec<String>, usize)> = terms
            .terms
            .iter()
            .map(|term| part_words(&term.name))
            .collect();
        let mut sizes: Vec<Sizes> = names
            .iter()
            .zip(&terms.terms)
            .map(|((_, all), term)| Sizes {
                name: *all,
                written: if term.engine {
                    words(&term.name).collect()
                } else {
                    Vec::new()
                },
                ..Sizes::default()
            })
            .collect();
        let mut order: Vec<usize> = (0..terms.terms.len()).collect();
        order.sort_by_key(|&index| {
            let is_entity = terms
                .terms
                .get(index)
                .is_some_and(|term| !term.kind.is_type());
            (is_entity, names.get(index).map_or(0, |(_, all)| *all))
        });
        for index in order {
            let (Some(term), Some((name_words, _)), Some(size)) = (
                terms.terms.get(index),
                names.get(index),
                sizes.get_mut(index),
            ) else {
                continue;
            };
            let mut add = |word: &str, place: Place| {
                let list = postings.entry(word.to_owned()).or_default();
                if !list
                    .iter()
                    .any(|posting| posting.term == index && posting.place == place)
                {
                    list.push(Posting { term: index, place });
                }
            };
            if !term.kind.is_type() {
                for word in name_words {
                    let count = entities_per_word.entry(word.clone()).or_default();
                    if *count < MAX_ENTITIES_PER_WORD {
                        *count += 1;
                        add(word, Place::Name);
                    }
                }
                continue;
            }
            for word in name_words {
                add(word, Place::Name);
            }
            let docs = term.docs.iter().chain(
                term.fields
                    .iter()
                    .chain(&term.values)
                    .filter_map(|member| member.docs.as_ref()),
            );
            for word in docs.flat_map(|docs| meaningful_stems(docs)) {
                add(&word, Place::Docs);
            }
            for (member, field) in term.fields.iter().enumerate() {
                let (stems, all) = part_words(&field.name);
                size.fields.push(all);
                for word in &stems {
                    add(word, Place::Field(member));
                }
            }
            for (member, value) in term.values.iter().enumerate() {
                let (stems, all) = part_words(&value.name);
                size.values.push(all);
                let mut in_order: Vec<String> = Vec::new();
                for word in meaningful_stems(&value.name) {
                    push_new(&mut in_order, word);
                }
                size.value_words.push(in_order);
                for word in &stems {
                    add(word, Place::Value(member));
                }
            }
        }
        let spelling = Spelling::build(terms.terms.iter().flat_map(|term| {
            std::iter::once(term.name.as_str()).chain(
                term.fields
                    .iter()
                    .chain(&term.values)
                    .map(|member| member.name.as_str()),
            )
        }));
        WorldIndex {
            terms,
            sizes,
            postings,
            spelling,
        }
    }

    /// Whether `word` (stemmed) is a word of the name, a field or a value of one of the game's
    /// own things (not the engine's): "goblin", "blue" (a field of `Score`). Such words say
    /// which thing, not what to do with it.
    pub(super) fn names_a_game_thing(&self, word: &str) -> bool {
        self.postings.get(word).is_some_and(|postings| {
            postings.iter().any(|posting| {
                posting.place != Place::Docs
                    && self
                        .terms
                        .terms
                        .get(posting.term)
                        .is_some_and(|term| !term.engine)
            })
        })
    }

    /// Every stemmed word that names one of the game's own things ([`Self::names_a_game_thing`]).
    pub(super) fn game_thing_words(&self) -> impl Iterator<Item = &String> {
        self.postings
            .keys()
            .filter(|word| self.names_a_game_thing(word))
    }

    /// Whether `word` (stemmed) is a word of any of the app's terms, the engine's included.
    pub(super) fn knows(&self, word: &str) -> bool {
        self.postings.contains_key(word)
    }

    /// Whether `tool` is one the app added (game-defined actions).
    pub(super) fn is_app_tool(&self, tool: &str) -> bool {
        self.terms.app_tools.iter().any(|name| name == tool)
    }

    /// Every term the query's (stemmed, meaningful) words name, strongest first; and which of
    /// the words name one of the game's own things in full (the query's objects).
    /// Words before `from` are not looked at (a command's verb is not an object).
    /// A value said without its type's full name, only in words the catalog names actions by
    /// ("is the game paused?": `Paused` of `GameState`, and the catalog's `pause`), names
    /// nothing of the app: `catalog_word` tells those words.
    pub(super) fn matches(
        &self,
        words: &[String],
        written: &[String],
        from: usize,
        catalog_word: &dyn Fn(&str) -> bool,
    ) -> Named<'_> {
        /// The query's words found in one term, by place.
        #[derive(Default)]
        struct Seen {
            name: Vec<usize>,
            docs: Vec<usize>,
            fields: Vec<(usize, usize)>,
            values: Vec<(usize, usize)>,
        }
        let mut seen: HashMap<usize, Seen> = HashMap::new();
        for (word, text) in words.iter().enumerate().skip(from) {
            let Some(list) = self.postings.get(text) else {
                continue;
            };
            for posting in list {
                let entry = seen.entry(posting.term).or_default();
                let (found, key) = match posting.place {
                    Place::Name => (&mut entry.name, word),
                    Place::Docs => (&mut entry.docs, word),
                    Place::Field(member) => {
                        push_new(&mut entry.fields, (member, word));
                        continue;
                    }
                    Place::Value(member) => {
                        push_new(&mut entry.values, (member, word));
                        continue;
                    }
                };
                push_new(found, key);
            }
        }
        // Names the query holds in full, with their words next to each other ("typed text",
        // not "type hello into the text field"), by the query words they use.
        let full_names: Vec<(usize, &Vec<usize>)> = seen
            .iter()
            .filter(|(index, seen)| {
                let size = self
                    .sizes
                    .get(**index)
                    .map_or(usize::MAX, |sizes| sizes.name);
                !seen.name.is_empty() && seen.name.len() >= size && adjacent(&seen.name)
            })
            .map(|(index, seen)| (*index, &seen.name))
            .collect();
        // A name within a longer one the query holds is not named on its own: "GoalScored"
        // does not name `Score`, "wave goblin" does not name `Goblin`.
        let within_longer = |index: usize, words: &Vec<usize>| {
            full_names.iter().any(|(other, longer)| {
                *other != index
                    && longer.len() > words.len()
                    && words.iter().all(|word| longer.contains(word))
            })
        };
        let mut matches: Vec<TermMatch<'_>> = seen
            .iter()
            .filter_map(|(&index, seen)| {
                let term = self.terms.terms.get(index)?;
                let sizes = self.sizes.get(index)?;
                let field = complete(&seen.fields, &sizes.fields)
                    .and_then(|member| term.fields.get(member))
                    .map(|field| field.name.as_str());
                let own_words = |member: usize| {
                    seen.name.len() >= sizes.name
                        || seen
                            .values
                            .iter()
                            .filter(|(other, _)| *other == member)
                            .any(|(_, position)| {
                                words.get(*position).is_some_and(|word| !catalog_word(word))
                            })
                };
                let value = complete(&seen.values, &sizes.values)
                    .filter(|member| own_words(*member))
                    .filter(|member| {
                        sizes
                            .value_words
                            .get(*member)
                            .is_some_and(|own| said_in_order(&seen.values, *member, words, own))
                    })
                    .and_then(|member| term.values.get(member))
                    .map(|value| value.name.as_str());
                let member = field.is_some() || value.is_some();
                let named = if within_longer(index, &seen.name) {
                    0
                } else {
                    seen.name.len()
                };
                // An engine type is named only by its words as written.
                let as_written = sizes.written.is_empty()
                    || seen.name.iter().all(|position| {
                        written
                            .get(*position)
                            .is_some_and(|word| sizes.written.contains(word))
                    });
                let name = if named > 0 && named >= sizes.name && adjacent(&seen.name) && as_written
                {
                    FULL_NAME
                } else if member && !term.engine {
                    NAME_WORD * named as u32
                } else {
                    return None;
                };
                let docs = (DOC_WORD * seen.docs.len() as u32).min(DOC_CAP);
                let mut strength = (name + if member { MEMBER } else { 0 } + docs).min(TERM_CAP);
                // The game's own types are what its players and developers talk about; the
                // engine's count half, so "text field" does not mean the engine's `Text` more
                // than the game's `TypedText`.
                if term.engine {
                    strength /= 2;
                }
                (strength > 0).then_some(TermMatch {
                    term,
                    strength,
                    field,
                    value,
                })
            })
            .collect();
        matches.sort_by(|a, b| {
            b.strength
                .cmp(&a.strength)
                .then_with(|| a.term.name.cmp(&b.term.name))
        });
        let game_names = full_names.iter().filter_map(|(index, positions)| {
            let term = self.terms.terms.get(*index)?;
            (!term.engine).then_some((term, *positions))
        });
        let mut objects = Vec::new();
        let mut with_kind = Vec::new();
        for (term, positions) in game_names {
            objects.extend(positions.iter().copied());
            // "the Score resource", "a Health component": the word after the name says what
            // kind of thing it is, so the name is only the thing, even to the game's actions.
            let next = positions.iter().max().map(|last| last + 1);
            if next
                .and_then(|next| words.get(next))
                .is_some_and(|word| *word == stem(term.kind.as_str()))
            {
                with_kind.extend(positions.iter().copied());
            }
        }
        for list in [&mut objects, &mut with_kind] {
            list.sort_unstable();
            list.dedup();
        }
        Named {
            terms: matches,
            objects,
            with_kind,
        }
    }
}

/// What of the app a query names.
#[derive(Debug, Default)]
pub(super) struct Named<'a> {
    /// Every term named, strongest first.
    pub terms: Vec<TermMatch<'a>>,
    /// The query words that name one of the game's own things in full.
    pub objects: Vec<usize>,
    /// Those of `objects` followed by the word for their kind ("the Score resource").
    pub with_kind: Vec<usize>,
}

/// Whether word positions follow each other with no gap.
fn adjacent(positions: &[usize]) -> bool {
    let (Some(low), Some(high)) = (positions.iter().min(), positions.iter().max()) else {
        return true;
    };
    high - low + 1 == positions.len()
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Whether the query says `member`'s words in the member's own order ("game over", not "over
/// this game"): words out of order name something else.
fn said_in_order(
    found: &[(usize, usize)],
    member: usize,
    words: &[String],
    own: &[String],
) -> bool {
    let mut positions: Vec<usize> = found
        .iter()
        .filter(|(other, _)| *other == member)
        .map(|(_, position)| *position)
        .collect();
    positions.sort_unstable();
    let places: Option<Vec<usize>> = positions
        .iter()
        .map(|position| {
            let word = words.get(*position)?;
            own.iter().position(|own_word| own_word == word)
        })
        .collect();
    places.is_some_and(|places| places.windows(2).all(|pair| pair[0] < pair[1]))
}

/// The first member all of whose words the query holds.
fn complete(found: &[(usize, usize)], sizes: &[usize]) -> Option<usize> {
    let mut members: Vec<usize> = found.iter().map(|(member, _)| *member).collect();
    members.sort_unstable();
    members.dedup();
    members.into_iter().find(|member| {
        let words = found.iter().filter(|(other, _)| other == member).count();
        sizes.get(*member).is_some_and(|size| words >= *size)
    })
}

/// The gateway's view of the app's terms: the feed, and the index of the newest publication,
/// built by the first search that needs it.
#[derive(Debug, Default)]
pub struct WorldCache {
    feed: Option<AppTermsFeed>,
    built: parking_lot::Mutex<Option<(u64, Arc<WorldIndex>)>>,
}

impl WorldCache {
    pub fn new(feed: Option<AppTermsFeed>) -> WorldCache {
        WorldCache {
            feed,
            built: parking_lot::Mutex::new(None),
        }
    }

    /// The newest terms the app published, or `None` when it publishes none.
    pub fn terms(&self) -> Option<Arc<AppTerms>> {
        let (version, terms) = self.feed.as_ref()?.current();
        (version > 0).then_some(terms)
    }

    /// The index of the newest terms, or `None` when the app publishes none.
    pub fn index(&self) -> Option<Arc<WorldIndex>> {
        let feed = self.feed.as_ref()?;
        let (version, terms) = feed.current();
        if version == 0 {
            return None;
        }
        let mut built = self.built.lock();
        if let Some((built_version, index)) = built.as_ref()
            && *built_version == version
        {
            return Some(Arc::clone(index));
        }
        let index = Arc::new(WorldIndex::build(terms));
        *built = Some((version, Arc::clone(&index)));
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::{TermField, TermKind};

    fn component(name: &str, engine: bool) -> Term {
        Term {
            kind: TermKind::Component,
            name: name.to_owned(),
            address: format!("crate::{name}"),
            fields: Vec::new(),
            values: Vec::new(),
            docs: None,
            count: 0,
            engine,
            carried_by: None,
            reflected: true,
        }
    }

    /// What `query` (words split at spaces, no catalog words) names in `index`, strongest first:
    /// each term's name and the value it names.
    fn found(index: &WorldIndex, query: &str) -> Vec<(String, Option<String>)> {
        let written: Vec<String> = query.split(' ').map(str::to_owned).collect();
        let stems: Vec<String> = written.iter().map(|word| stem(word)).collect();
        index
            .matches(&stems, &written, 0, &|_| false)
            .terms
            .iter()
            .map(|found| (found.term.name.clone(), found.value.map(str::to_owned)))
            .collect()
    }

    fn named(index: &WorldIndex, query: &str) -> Vec<String> {
        found(index, query)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    #[test]
    fn an_engine_type_is_named_only_by_its_words_as_written() {
        let index = WorldIndex::build(Arc::new(AppTerms {
            terms: vec![component("Checked", true), component("Healed", false)],
            ..AppTerms::default()
        }));
        assert!(
            named(&index, "check versions").is_empty(),
            "\"check\" is a verb here"
        );
        assert_eq!(named(&index, "checked"), ["Checked"]);
        assert_eq!(
            named(&index, "heal"),
            ["Healed"],
            "the game's own names match by stem"
        );
    }

    #[test]
    fn a_value_of_several_words_is_named_only_in_its_order() {
        let mut state = component("Phase", false);
        state.kind = TermKind::State;
        state.values = vec![TermField {
            name: "GameOver".to_owned(),
            docs: None,
        }];
        let index = WorldIndex::build(Arc::new(AppTerms {
            terms: vec![state],
            ..AppTerms::default()
        }));
        let value = |query: &str| {
            found(&index, query)
                .into_iter()
                .find_map(|(_, value)| value)
        };
        assert_eq!(
            value("show the game over screen").as_deref(),
            Some("GameOver")
        );
        assert_eq!(value("what can you do over this game"), None);
    }
}
