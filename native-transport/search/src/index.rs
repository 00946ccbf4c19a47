//! Every action's words, stemmed once when the gateway is built, so a query only stems itself.

use std::collections::HashMap;

use mcp_vocabulary::catalog::{ActionRecord, Catalog, ToolRecord};

use crate::learnt::LearntWords;
use crate::phrasebook::CompiledPhrasebook;
use crate::query::Query;
use crate::spelling::Spelling;
use crate::terms::{Term, TermKind};
use crate::words::{is_stop_word, meaningful_stems, stem, words};
use crate::world::WorldIndex;
use crate::{ALIAS_WEIGHT, NAME_WEIGHT, SUMMARY_WEIGHT, TOOL_WEIGHT, TOPIC_WEIGHT};

/// Every action's words, stemmed once when the gateway is built, so a query only stems itself.
#[derive(Debug)]
pub struct SearchIndex {
    pub(crate) entries: Vec<IndexedAction>,
    /// Every stem of the actions' names and aliases.
    pub(crate) catalog_words: std::collections::HashSet<String>,
    /// How people say what the records name.
    pub(crate) phrasebook: CompiledPhrasebook,
    /// For each stemmed word, the actions (by index, in index order) whose own words hold it,
    /// and what it is worth to each ([`own_word_weights`]): a query word is looked up once, not
    /// once per action.
    pub(crate) word_places: HashMap<String, Vec<(usize, u32)>>,
    /// Which words people use for which action, learnt from the labelled phrasings.
    pub(crate) learnt: LearntWords,
    /// The catalog's own words, which a misspelled query word is read as.
    pub(crate) spelling: Spelling,
}

#[derive(Debug)]
pub(crate) struct IndexedAction {
    pub(crate) tool: &'static ToolRecord,
    pub(crate) action: &'static ActionRecord,
    pub(crate) name: Vec<String>,
    /// The name's words joined by `_`: a query of exactly these words names the action.
    pub(crate) joined_name: String,
    /// The parameters that address things of the app, and what they take.
    pub(crate) addresses: Vec<Address>,
    /// What of the app the action is about (its record's `subjects`), and whether a required
    /// parameter takes it.
    pub(crate) subjects: Vec<(Takes, bool)>,
    /// Whether the action takes a reflect `path` (a field).
    pub(crate) takes_path: bool,
    /// Whether the action takes a `value` (a state's value, for `state.set`).
    pub(crate) takes_value: bool,
    /// The words of the name and aliases as written (`resources`, not `resource`).
    pub(crate) exact_name: Vec<String>,
    /// The aliases and topics of several words, stemmed: phrases the query may say whole.
    pub(crate) phrases: Vec<Vec<String>>,
    /// The one-word aliases, stemmed.
    pub(crate) single_aliases: Vec<String>,
    /// The words of its name, aliases and topics that no other tool's action is named by
    /// ("wave", "points"; not "spawn"): the words that say it is this tool's way that is meant.
    pub(crate) own_words: Vec<String>,
}

/// A parameter that names a thing of the app.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Address {
    pub(crate) param: &'static str,
    pub(crate) takes: Takes,
    /// Whether it takes a list of names rather than one.
    pub(crate) list: bool,
}

/// What an addressing parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// Any term of this kind.
    Kind(TermKind),
    /// A term of this kind whose value the action reads or writes: a reflected one.
    ValueOf(TermKind),
    /// Any reflected type.
    AnyType,
}

impl Takes {
    /// Which kind of thing a parameter addresses, by its name: the records' shared names.
    fn of(param: &str) -> Option<Takes> {
        Some(match param {
            "entity" | "root" => Takes::Kind(TermKind::Entity),
            // Presence filters take any component; the others read or write its value.
            "with" | "withComponents" => Takes::Kind(TermKind::Component),
            "component" | "components" => Takes::ValueOf(TermKind::Component),
            "resource" => Takes::Kind(TermKind::Resource),
            "event" => Takes::Kind(TermKind::Event),
            "message" => Takes::Kind(TermKind::Message),
            "state" => Takes::Kind(TermKind::State),
            "type" => Takes::AnyType,
            _ => return None,
        })
    }

    /// What a record's subject names.
    fn subject(subject: &str) -> Option<Takes> {
        Some(match subject {
            "entity" => Takes::Kind(TermKind::Entity),
            "component" => Takes::Kind(TermKind::Component),
            "resource" => Takes::Kind(TermKind::Resource),
            "event" => Takes::Kind(TermKind::Event),
            "message" => Takes::Kind(TermKind::Message),
            "state" => Takes::Kind(TermKind::State),
            "type" => Takes::AnyType,
            "worldFile" => Takes::Kind(TermKind::WorldFile),
            _ => return None,
        })
    }

    /// Whether a parameter or subject of this kind takes `term`. An action that reads or writes
    /// values, or is about any type (`describe_type`), reads reflection: an unreflected
    /// component is not one it can take.
    pub(crate) fn accepts(self, term: &Term) -> bool {
        match self {
            Takes::Kind(taken) => taken == term.kind,
            Takes::ValueOf(taken) => taken == term.kind && term.reflected,
            Takes::AnyType => term.kind.is_type() && term.reflected,
        }
    }
}

fn stemmed<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    texts.into_iter().flat_map(meaningful_stems).collect()
}

/// What each stemmed word of an action's name, aliases, topics, tool name and summary (with
/// its `whenToUse` and examples' titles) is worth when a query says it: its best place.
/// `name_weight` says what a word of the name or an alias is worth at most.
pub(crate) fn own_word_weights(
    tool: &ToolRecord,
    action: &ActionRecord,
    name_weight: impl Fn(&String, u32) -> u32,
) -> HashMap<String, u32> {
    let name = stemmed([action.name])
        .into_iter()
        .map(|word| (name_weight(&word, NAME_WEIGHT), word));
    let aliases = stemmed(action.aliases.iter().copied())
        .into_iter()
        .map(|word| (name_weight(&word, ALIAS_WEIGHT), word));
    let topics = stemmed(action.topics.iter().copied())
        .into_iter()
        .map(|word| (TOPIC_WEIGHT, word));
    let tool_words = stemmed([tool.name])
        .into_iter()
        .map(|word| (TOOL_WEIGHT, word));
    let summary = stemmed(
        [action.summary, action.when_to_use]
            .into_iter()
            .chain(action.examples.iter().map(|example| example.title)),
    )
    .into_iter()
    .map(|word| (SUMMARY_WEIGHT, word));
    let mut best: HashMap<String, u32> = HashMap::new();
    for (worth, word) in name
        .chain(aliases)
        .chain(topics)
        .chain(tool_words)
        .chain(summary)
    {
        let kept = best.entry(word).or_default();
        *kept = (*kept).max(worth);
    }
    best
}

/// An action's name and aliases.
fn action_names(action: &'static ActionRecord) -> impl Iterator<Item = &'static str> {
    std::iter::once(action.name).chain(action.aliases.iter().copied())
}

impl SearchIndex {
    /// Indexes every action of the catalog, in catalog order.
    pub fn build(catalog: &'static Catalog) -> SearchIndex {
        // How many actions have each word in their name or aliases.
        let mut names_with: std::collections::HashMap<String, u32> = Default::default();
        for (_, action) in catalog.all_actions() {
            let mut words =
                stemmed(std::iter::once(action.name).chain(action.aliases.iter().copied()));
            words.sort();
            words.dedup();
            for word in words {
                *names_with.entry(word).or_default() += 1;
            }
        }
        // Which tools have an action named by each word (its name or an alias).
        let mut tools_named_by: std::collections::HashMap<String, Vec<&str>> = Default::default();
        for (tool, action) in catalog.all_actions() {
            for word in stemmed(action_names(action)) {
                let tools = tools_named_by.entry(word).or_default();
                if !tools.contains(&tool.name) {
                    tools.push(tool.name);
                }
            }
        }
        // A name's words weigh less where many actions' names share them (`set`, `get`,
        // `list`): they say little about which action is meant.
        let weight = |word: &String, full: u32| match names_with.get(word).copied().unwrap_or(0) {
            0 | 1 => full,
            2 | 3 => full - 1,
            _ => TOPIC_WEIGHT,
        };
        let mut word_places: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        for (position, (tool, action)) in catalog.all_actions().enumerate() {
            for (word, worth) in own_word_weights(tool, action, weight) {
                word_places.entry(word).or_default().push((position, worth));
            }
        }
        let entries = catalog
            .all_actions()
            .map(|(tool, action)| IndexedAction {
                tool,
                action,
                name: stemmed([action.name]),
                exact_name: std::iter::once(action.name)
                    .chain(action.aliases.iter().copied())
                    .flat_map(words)
                    .collect(),
                joined_name: stemmed([action.name]).join("_"),
                phrases: action
                    .aliases
                    .iter()
                    .chain(action.topics)
                    .map(|text| meaningful_stems(text).collect::<Vec<_>>())
                    .filter(|phrase| phrase.len() > 1)
                    .collect(),
                single_aliases: action
                    .aliases
                    .iter()
                    .map(|text| meaningful_stems(text).collect::<Vec<_>>())
                    .filter_map(|alias| match alias.as_slice() {
                        [word] => Some(word.clone()),
                        _ => None,
                    })
                    .collect(),
                addresses: action
                    .params
                    .iter()
                    .filter_map(|param| {
                        let list = param.type_label.starts_with("array");
                        let scalar = param.type_label.contains("string");
                        // An action about world files takes one by its `name`.
                        let file = param.name == "name" && action.subjects.contains(&"worldFile");
                        let takes = Takes::of(param.name)
                            .or(file.then_some(Takes::Kind(TermKind::WorldFile)))?;
                        (list || scalar).then_some(Address {
                            param: param.name,
                            takes,
                            list,
                        })
                    })
                    .collect(),
                subjects: action
                    .subjects
                    .iter()
                    .filter_map(|subject| Takes::subject(subject))
                    .map(|subject| {
                        // Components are the subject of a presence filter only where a
                        // parameter filters by presence; elsewhere their values are.
                        let filters = |kind| {
                            action
                                .params
                                .iter()
                                .any(|param| Takes::of(param.name) == Some(Takes::Kind(kind)))
                        };
                        let subject = match subject {
                            Takes::Kind(kind @ TermKind::Component) if !filters(kind) => {
                                Takes::ValueOf(kind)
                            }
                            other => other,
                        };
                        let required = action
                            .params
                            .iter()
                            .any(|param| param.required && Takes::of(param.name) == Some(subject));
                        (subject, required)
                    })
                    .collect(),
                own_words: {
                    // A topic of several words ("finish off", "group of enemies") is a phrase:
                    // its words one by one ("off", "group") are not the action's own.
                    let one_word_topics = action
                        .topics
                        .iter()
                        .copied()
                        .filter(|topic| meaningful_stems(topic).count() == 1);
                    let mut own = stemmed(action_names(action).chain(one_word_topics));
                    own.retain(|word| {
                        tools_named_by
                            .get(word)
                            .is_none_or(|tools| tools.iter().all(|other| *other == tool.name))
                    });
                    own
                },
                takes_path: action.params.iter().any(|param| param.name == "path"),
                takes_value: action.params.iter().any(|param| param.name == "value"),
            })
            .collect();
        let catalog_words = tools_named_by.into_keys().collect();
        SearchIndex {
            entries,
            catalog_words,
            phrasebook: CompiledPhrasebook::build(catalog),
            word_places,
            learnt: LearntWords::build(catalog, catalog.all_actions()),
            spelling: Spelling::build(catalog_text(catalog)),
        }
    }

    /// Reads `text` as a query: each misspelled word as the word meant ([`Spelling`]: a word
    /// of the catalog, else of the app's own names), then split and read with the phrasebook.
    /// A word the catalog, the learnt phrasings or the game's own things (`world`) know is
    /// never respelled, nor a name in CamelCase.
    pub fn parse_query(&self, text: &str, world: Option<&WorldIndex>) -> Query {
        let known = |word: &str| {
            is_stop_word(word) || self.spelling.knows(word) || {
                let stem = stem(word);
                self.learnt.knows(&stem)
                    || self.catalog_words.contains(&stem)
                    || world.is_some_and(|world| world.knows(&stem))
            }
        };
        let mut read_as = String::with_capacity(text.len());
        let mut respelled = false;
        for piece in text.split_inclusive(|c: char| !c.is_alphanumeric()) {
            let word_end = piece
                .char_indices()
                .find(|(_, c)| !c.is_alphanumeric())
                .map_or(piece.len(), |(at, _)| at);
            let (word, rest) = piece.split_at(word_end);
            let lower = word.to_lowercase();
            let camel_case = word.chars().skip(1).any(char::is_uppercase);
            // The catalog's words first; then the app's own names.
            match (!camel_case && !known(&lower))
                .then(|| {
                    self.spelling
                        .meant(&lower)
                        .or_else(|| world.and_then(|world| world.spelling.meant(&lower)))
                })
                .flatten()
            {
                Some(meant) => {
                    read_as.push_str(meant);
                    respelled = true;
                }
                None => read_as.push_str(word),
            }
            read_as.push_str(rest);
        }
        let mut query = Query::parse(if respelled { &read_as } else { text }, &self.phrasebook);
        if respelled {
            query.text = text.to_owned();
            query.read_as = Some(read_as);
        }
        query
    }
}

/// Every text of the catalog's records and phrasebook: the words a misspelling may mean.
fn catalog_text(catalog: &'static Catalog) -> impl Iterator<Item = &'static str> {
    let tools = catalog
        .tools
        .iter()
        .flat_map(|tool| [tool.name, tool.summary]);
    let actions = catalog.all_actions().flat_map(|(_, action)| {
        [
            action.name,
            action.summary,
            action.when_to_use,
            action.when_not_to_use,
        ]
        .into_iter()
        .chain(action.aliases.iter().copied())
        .chain(action.topics.iter().copied())
        .chain(action.examples.iter().map(|example| example.title))
        .chain(
            action
                .params
                .iter()
                .flat_map(|param| [param.name, param.description]),
        )
    });
    let phrases = catalog
        .phrasebook
        .phrases
        .iter()
        .flat_map(|phrase| [phrase.says, phrase.means])
        .chain(catalog.phrasebook.asks_destruction.iter().copied());
    tools.chain(actions).chain(phrases)
}
