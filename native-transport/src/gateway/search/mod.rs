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

mod learnt;
mod phrasebook;
mod spelling;
#[cfg(test)]
mod test_records;
mod world;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use mcp_vocabulary::search_words::{
    GAME_THING, READ_MOOD_WORDS, REQUEST_OPENERS, asks_how_to_change, describes_rather_than_asks,
    gives_coordinates, is_ruled_out, is_stop_word, is_weak_word, meaningful_stems,
    only_names_things, opens_as_read, says_unsure, states_a_wish, stem, words,
};
use mcp_vocabulary::{ToolError, codes, next_call};
use serde_json::{Map, Value, json};

use super::{Gateway, Visibility, mark_runnable, stamp};
use crate::app_terms::{AppTermsFeed, Term, TermKind};
use crate::catalog::{ActionRecord, Catalog, Category, Effect, ToolRecord};
use learnt::LearntWords;
pub(crate) use phrasebook::CompiledPhrasebook;
use phrasebook::Meant;
use spelling::Spelling;
pub(crate) use world::WorldIndex;
use world::{FIELD_BONUS, TermMatch};

/// Default and largest number of rows.
pub const DEFAULT_LIMIT: usize = 12;
/// Largest number of rows.
pub const MAX_LIMIT: usize = 25;

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

/// An optional filter argument (`category`, `effect`) read with `parse`; an unknown name is
/// refused with the known ones as suggestions.
fn filter<T>(
    arguments: &Map<String, Value>,
    key: &str,
    query: &str,
    parse: fn(&str) -> Option<T>,
    known: &[&'static str],
) -> Result<Option<T>, ToolError> {
    let Some(name) = arguments.get(key).and_then(Value::as_str) else {
        return Ok(None);
    };
    parse(name).map(Some).ok_or_else(|| {
        ToolError::new(codes::INVALID_ARGUMENT, format!("unknown {key} \"{name}\""))
            .suggestions(known.iter().copied())
            .next_call(json!({"operation": "search", "query": query}))
    })
}

pub(super) fn search(
    gateway: &Gateway,
    state: &Visibility,
    arguments: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if query.trim().is_empty() {
        return Err(ToolError::new(
            codes::MISSING_QUERY,
            "search needs a query: say what you want to do, e.g. \"move an entity\"",
        )
        .next_call(next_call::describe(None, None, None)));
    }
    let category = filter(
        arguments,
        "category",
        query,
        Category::parse,
        &Category::ALL.map(Category::as_str),
    )?;
    let effect = filter(
        arguments,
        "effect",
        query,
        Effect::parse,
        &Effect::ALL.map(Effect::as_str),
    )?;
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |limit| (limit as usize).clamp(1, MAX_LIMIT));
    let world = gateway.world_index();
    let query = gateway.search_index.parse_query(query, world.as_deref());
    let ranked = rank(
        &gateway.search_index,
        world.as_deref(),
        &query,
        category,
        effect,
    );
    let total = ranked.hits.len();
    let rows: Vec<Value> = ranked
        .hits
        .iter()
        .take(limit)
        .map(|hit| {
            row(
                gateway,
                state,
                hit,
                ranked.explain(&gateway.search_index, hit),
            )
        })
        .collect();
    let mut body = Map::new();
    body.insert("query".to_owned(), json!(query.text));
    if let Some(read_as) = &query.read_as {
        body.insert("readAs".to_owned(), json!(read_as));
    }
    body.insert("returned".to_owned(), json!(rows.len()));
    body.insert("total".to_owned(), json!(total));
    if rows.is_empty() {
        body.insert(
            "hint".to_owned(),
            json!("Nothing matched; try other words, or browse the tools with the nextCall."),
        );
        body.insert("nextCall".to_owned(), next_call::describe(None, None, None));
    }
    body.insert("results".to_owned(), json!(rows));
    Ok(stamp(gateway, "search", body))
}

/// One result row: the action, why it matched the app when it did, and the next call: a ready
/// `execute` for a read whose every required parameter the query gave, else a `describe` with
/// the parameters it did give (a change is never offered ready: the query did not ask for it
/// in so many words).
fn row(gateway: &Gateway, state: &Visibility, hit: &Hit, explained: Explanation) -> Value {
    let mut row = json!({
        "tool": hit.tool.name,
        "action": hit.action.name,
        "summary": hit.action.summary,
        "effect": hit.action.effect.as_str(),
        "enabled": state.is_enabled(hit.tool.name),
    });
    let describe = next_call::describe(Some(hit.tool.name), Some(hit.action.name), None);
    let known = !explained.params.is_empty();
    let params = Value::Object(explained.params);
    let ready = known
        && hit.action.effect == Effect::Read
        && state.scope().allows(hit.action.scope)
        && gateway
            .validator(hit.tool.name, hit.action.name)
            .is_some_and(|validator| validator.is_valid(&params));
    if let Some(object) = row.as_object_mut() {
        mark_runnable(object, state, hit.action);
        if !explained.because.is_empty() {
            object.insert("because".to_owned(), json!(explained.because.join("; ")));
        }
        if ready {
            object.insert(
                "nextCall".to_owned(),
                next_call::execute(hit.tool.name, hit.action.name, params),
            );
        } else {
            if params.as_object().is_some_and(|params| !params.is_empty()) {
                object.insert("knownParams".to_owned(), params);
            }
            object.insert("nextCall".to_owned(), describe);
        }
    }
    row
}

/// A query, split once.
#[derive(Debug)]
pub(crate) struct Query {
    text: String,
    /// The text as search read it, when it read a misspelled word as another.
    read_as: Option<String>,
    /// Meaningful words, stemmed.
    words: Vec<String>,
    /// Those words joined by `_`, to compare with an action's whole name.
    joined_words: String,
    /// Every distinct word, stemmed, stop words kept: what the learnt model reads.
    all_stems: Vec<String>,
    /// Those of them that say what to do: not stop words, weak words ("show", "thing"), words
    /// that only ask ("what", "list") or say how many ("every").
    content_stems: Vec<String>,
    /// The same words as written, in the same order.
    exact: Vec<String>,
    /// The catalog's words for the phrasebook phrases the query holds (stemmed, and as
    /// written).
    meant: Vec<Meant>,
    /// For each of `words`, whether a phrase of several words read it: an idiom means what
    /// the phrasebook says, not what its words say one by one ("roll back", "click and drag").
    in_idiom: Vec<bool>,
    /// For each of `words`, whether it is a participle that describes a thing ("the loaded
    /// assets") rather than says what to do.
    describes: Vec<bool>,
    /// For each of `words`, whether the query says not to do it ("without loading it").
    ruled_out: Vec<bool>,
    /// For each of `words`, whether it stands in a clause that says when ("after the wave",
    /// "since my checkpoint"): it sets the scene rather than says what to do.
    says_when: Vec<bool>,
    /// Whether it states how something ought to be ("the crate should sit under Base"): a
    /// change asked for as a wish.
    wishes: bool,
    /// Whether it asks to be shown something rather than to change it.
    wants_read: bool,
    /// Whether its first word is a meaningful verb: then it counts double. Reading verbs
    /// (`show`, `list`, `get`) are too common to.
    leads_with_verb: bool,
    /// Whether it asks, in so many words, to delete, remove, reset or quit something.
    asks_destruction: bool,
}

/// First words that make a query a question about something, whatever it names: "what",
/// "how", "is", "does" ... (not "show" or "get", which ask to be shown, nor "can", which asks).
const QUESTION_WORDS: [&str; 17] = [
    "what", "whats", "how", "which", "where", "who", "why", "when", "is", "are", "does", "do",
    "did", "has", "have", "was", "were",
];

/// Words that open a clause saying when something happened ("after the wave"), not what to do.
const TIME_WORDS: [&str; 3] = ["after", "during", "since"];

/// Words that say how many things, not what to do with them.
const QUANTIFIERS: [&str; 4] = ["every", "all", "each", "some"];

/// The catalog word a point in space ("at 3, 4, 0") means: a topic of spawning and of moving.
const COORDINATES_MEAN: &str = "place";

/// What a catalog word a phrase of the query means is worth, against one of the query's own
/// words: the phrasebook says outright what the user wants.
const MEANT_FACTOR: u32 = 2;

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

/// One ranked action.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Its tool.
    pub tool: &'static ToolRecord,
    /// The action.
    pub action: &'static ActionRecord,
    /// Its score; higher is better.
    pub score: u32,
    /// How many of the query's words (its own, those its phrases mean, and the app's things
    /// it names) count for it: among equal scores of the same effect, the action more of the
    /// query speaks of comes first.
    matched: usize,
    /// Its place in the index.
    entry: usize,
}

/// Why a hit matched the app, built only for the rows returned.
#[derive(Debug, Default)]
pub(crate) struct Explanation {
    /// What of the app it matched ("Score is a resource with a field red").
    pub because: Vec<String>,
    /// Parameters the query gave, from what of the app it named.
    pub params: Map<String, Value>,
}

/// The ranked actions, and the app's terms the query named.
#[derive(Debug, Default)]
pub(crate) struct Ranked<'w> {
    /// Every action with a positive score, best first (ties in catalog order).
    pub hits: Vec<Hit>,
    named: Vec<TermMatch<'w>>,
}

impl Ranked<'_> {
    /// Why `hit` matched the app's terms, and the parameters they give.
    pub(crate) fn explain(&self, index: &SearchIndex, hit: &Hit) -> Explanation {
        let mut explanation = Explanation::default();
        if let Some(entry) = index.entries.get(hit.entry) {
            world_score(entry, &self.named, Some(&mut explanation));
        }
        explanation
    }
}

/// Every action's words, stemmed once when the gateway is built, so a query only stems itself.
#[derive(Debug)]
pub(crate) struct SearchIndex {
    entries: Vec<IndexedAction>,
    /// Every stem of the actions' names and aliases.
    catalog_words: std::collections::HashSet<String>,
    /// The catalog's tools named by one word ("input", "history"), stemmed.
    tool_names: Vec<String>,
    /// The names of the tools' categories ("world", "gameplay"), stemmed.
    category_names: Vec<String>,
    /// How people say what the records name.
    pub(crate) phrasebook: CompiledPhrasebook,
    /// For each stemmed word, the actions (by index, in index order) whose own words hold it,
    /// and what it is worth to each ([`own_word_weights`]): a query word is looked up once, not
    /// once per action.
    word_places: HashMap<String, Vec<(usize, u32)>>,
    /// Which words people use for which action, learnt from the labelled phrasings.
    learnt: LearntWords,
    /// The catalog's own words, which a misspelled query word is read as.
    spelling: Spelling,
}

#[derive(Debug)]
struct IndexedAction {
    tool: &'static ToolRecord,
    action: &'static ActionRecord,
    name: Vec<String>,
    /// The name's words joined by `_`: a query of exactly these words names the action.
    joined_name: String,
    /// The parameters that address things of the app, and what they take.
    addresses: Vec<Address>,
    /// What of the app the action is about (its record's `subjects`), and whether a required
    /// parameter takes it.
    subjects: Vec<(Takes, bool)>,
    /// Whether the action takes a reflect `path` (a field).
    takes_path: bool,
    /// Whether the action takes a `value` (a state's value, for `state.set`).
    takes_value: bool,
    /// Whether the action takes `tools` (the catalog's tools by name).
    takes_tools: bool,
    /// Whether the action takes a `category` (of the catalog's tools).
    takes_category: bool,
    /// The words of the name and aliases as written (`resources`, not `resource`).
    exact_name: Vec<String>,
    /// The aliases and topics of several words, stemmed: phrases the query may say whole.
    phrases: Vec<Vec<String>>,
    /// The one-word aliases, stemmed.
    single_aliases: Vec<String>,
    /// The words of its name, aliases and topics that no other tool's action is named by
    /// ("wave", "points"; not "spawn"): the words that say it is this tool's way that is meant.
    own_words: Vec<String>,
}

/// A parameter that names a thing of the app.
#[derive(Debug, Clone, Copy)]
struct Address {
    param: &'static str,
    takes: Takes,
    /// Whether it takes a list of names rather than one.
    list: bool,
}

/// What an addressing parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
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
    fn accepts(self, term: &Term) -> bool {
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
fn own_word_weights(
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
    pub(crate) fn build(catalog: &'static Catalog) -> SearchIndex {
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
                takes_tools: action.params.iter().any(|param| param.name == "tools"),
                takes_category: action.params.iter().any(|param| param.name == "category"),
            })
            .collect();
        let catalog_words = tools_named_by.into_keys().collect();
        let tool_names = catalog
            .tools
            .iter()
            .filter_map(|tool| match stemmed([tool.name]).as_slice() {
                [word] => Some(word.clone()),
                _ => None,
            })
            .collect();
        SearchIndex {
            entries,
            catalog_words,
            tool_names,
            category_names: stemmed(Category::ALL.map(Category::as_str)),
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
    pub(crate) fn parse_query(&self, text: &str, world: Option<&WorldIndex>) -> Query {
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

/// The places of the query's words that name one of `names` (the catalog's tools, or its
/// categories) followed by the word "tool" ("the input tool", "every gameplay tool").
fn named_as_tools(query: &Query, names: &[String]) -> Vec<usize> {
    let tool = stem("tool");
    query
        .words
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair[1] == tool && names.iter().any(|name| *name == pair[0]))
        .map(|(position, _)| position)
        .collect()
}

/// Every action with a positive score, best first (ties in catalog order).
pub(crate) fn rank<'w>(
    index: &SearchIndex,
    world: Option<&'w WorldIndex>,
    query: &Query,
    category: Option<Category>,
    effect: Option<Effect>,
) -> Ranked<'w> {
    if query.words.is_empty() {
        return Ranked::default();
    }
    // A command's first word is its verb ("check that ...", "type hello"), never its object.
    let from = usize::from(query.leads_with_verb);
    let world::Named {
        terms: named,
        objects,
        with_kind,
    } = world
        .map(|world| {
            world.matches(&query.words, &query.exact, from, &|word| {
                index.catalog_words.contains(word)
            })
        })
        .unwrap_or_default();
    // "the input tool", "the history tools": a tool named as a tool is what the query is
    // about (enabling it, disabling it), not the work its actions do.
    let tools_named = named_as_tools(query, &index.tool_names);
    let categories_named = named_as_tools(query, &index.category_names);
    let named_as_tools = || tools_named.iter().chain(&categories_named).copied();
    let tools_are_named = !tools_named.is_empty() || !categories_named.is_empty();
    let objects: Vec<usize> = objects.into_iter().chain(named_as_tools()).collect();
    let with_kind: Vec<usize> = with_kind.into_iter().chain(named_as_tools()).collect();
    let said = Said::new(query, &objects);
    // The game's own actions speak its words ("add score"), unless the query says the name
    // is a thing by its kind ("add a Score resource").
    let said_by_app = Said::new(query, &with_kind);
    // ... said to ask for something, not to say when ("after the wave, is the crate there?").
    let not_asking: Vec<usize> = (0..query.words.len())
        .filter(|position| query.says_when.get(*position) == Some(&true))
        .chain(with_kind.iter().copied())
        .collect();
    let asked_of_app = Said::new(query, &not_asking);
    let names_a_game_thing =
        |word: &String| world.is_some_and(|world| world.names_a_game_thing(word));
    let leads = learnt_leads(index, world, query);
    // The model knows no phrasing of the game's own actions: where the query says one of
    // their own words, the game's action leads as far as the likeliest other does.
    let best_lead = leads.iter().copied().max().unwrap_or(0);
    // A command that opens with an action's one-word name ("save the world as arena") asks for
    // that action: the model does not outvote it.
    let verb = query
        .words
        .first()
        .filter(|_| query.leads_with_verb && query.ruled_out.first() != Some(&true));
    let worth = WordWorth::new(index, query);
    let mut hits: Vec<Hit> = index
        .entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| {
            category.is_none_or(|category| entry.tool.category == category)
                && effect.is_none_or(|effect| entry.action.effect == effect)
        })
        .filter_map(|(position, entry)| {
            // The game's own actions speak the game's words: naming its things counts for them,
            // and they lead where the query says a word of their own ("wave", not "spawn").
            let app_tool = world.is_some_and(|world| world.is_app_tool(entry.tool.name));
            let (words, words_matched) = if app_tool {
                word_score(query, &with_kind, &said_by_app, &worth, (position, entry))
            } else {
                word_score(query, &objects, &said, &worth, (position, entry))
            };
            // ... unless the query speaks the bridge's words for the thing ("the Score
            // resource") or states how a thing should be ("it should carry a Team tag"):
            // then the game's own way is one answer among equals.
            let games_way = app_tool
                && words > 0
                && with_kind.is_empty()
                && !query.wishes
                && (entry.own_words.iter().any(|word| asked_of_app.has(word))
                    || entry
                        .phrases
                        .iter()
                        .any(|phrase| asked_of_app.holds(phrase)));
            // A word of its own that also names one of the game's things ("score", "goblin")
            // says which thing, which the bridge's actions handle as well; its other words
            // ("points", "wave") say what to do the game's way.
            let games_way_by_deed = games_way
                && (entry
                    .own_words
                    .iter()
                    .any(|word| asked_of_app.has(word) && !names_a_game_thing(word))
                    || entry.phrases.iter().any(|phrase| {
                        asked_of_app.holds(phrase) && !phrase.iter().all(names_a_game_thing)
                    }));
            let mut hit = Hit {
                tool: entry.tool,
                action: entry.action,
                score: if games_way {
                    words + APP_ACTION_WEIGHT
                } else {
                    words
                },
                matched: words_matched,
                entry: position,
            };
            let (world, things_matched) = world_score(entry, &named, None);
            hit.score += world;
            hit.matched += things_matched;
            // A tool named as a tool is the thing the actions taking `tools` are about, as a
            // named resource is for the resource actions.
            let takes_named_tool = (entry.takes_tools && !tools_named.is_empty())
                || (entry.takes_category && !categories_named.is_empty());
            if takes_named_tool {
                hit.score += FIELD_BONUS;
            }
            let named_by_verb =
                verb.is_some_and(|verb| matches!(entry.name.as_slice(), [name] if name == verb));
            let lead = if games_way_by_deed || named_by_verb {
                best_lead
            } else if games_way {
                // Named only by its things, the game's way leads as far as the model is unsure
                // of another ("throw 20 goblins at the base"), not past a sure one ("reset the
                // Score to its defaults").
                learnt::LEARNT_LEAD.saturating_sub(best_lead)
            } else if tools_are_named && !takes_named_tool {
                // A tool named as a tool ("the history tools") is what the query is about: the
                // model chooses among the actions that take it.
                0
            } else {
                leads.get(position).copied().unwrap_or(0)
            };
            if hit.score == 0 && lead == 0 {
                return None;
            }
            let reads = entry.action.effect == Effect::Read;
            // A question wants its answer now: reads that span frames (watch, wait) do not
            // answer it. A command leans to changes: one that opens with its verb ("make an
            // explosion") to any, another to those whose own words it uses.
            hit.score += match (query.wants_read, reads) {
                (true, true) if !entry.action.long_running => QUESTION_WEIGHT,
                // A wish ("it should be 50") asks for the change as plainly as a question
                // asks for an answer.
                (false, false) if words > 0 && query.wishes => QUESTION_WEIGHT,
                (false, false) if words > 0 || query.leads_with_verb => COMMAND_WEIGHT,
                _ => 0,
            };
            // How likely people who say such words want this action.
            hit.score += lead;
            Some(hit)
        })
        .collect();
    // Among equal scores a read comes first, then a change, then a destruction (the safer
    // answer when the words cannot tell); among those, the action more of the query speaks of;
    // a stable sort keeps catalog order after that.
    hits.sort_by_key(|hit| {
        (
            std::cmp::Reverse(hit.score),
            effect_rank(hit.action.effect),
            std::cmp::Reverse(hit.matched),
        )
    });
    // A question is answered by reading: no change ranks above a read that answers it.
    if query.wants_read {
        // A read matched by a word or two in passing (a third of the best score or less) does
        // not answer it.
        let best = hits.first().map_or(0, |hit| hit.score);
        hits.sort_by_key(|hit| !(hit.action.effect == Effect::Read && hit.score * 3 > best));
    }
    // A wish is answered by changing: no read ranks above a change that matched it.
    if query.wishes {
        hits.sort_by_key(|hit| hit.action.effect == Effect::Read);
    }
    // Asking for destructive actions by the effect filter asks for destruction as plainly.
    let destruction_asked = query.asks_destruction || effect == Some(Effect::Destructive);
    if !destruction_asked {
        keep_destruction_out_of_the_top(&mut hits);
    }
    // A tool named as a tool leaves the model no say outside the actions that take it.
    if !tools_are_named {
        keep_a_place_for_the_likeliest(&mut hits, &leads, query, destruction_asked);
    }
    Ranked { hits, named }
}

/// Gives the third row to what people who wrote such words wanted most, when the rules left it
/// lower: the model's likeliest action, or its second likeliest when the likeliest is shown
/// already. The first two rows stay the rules'; the moved action obeys them too (a question
/// gets a read, a wish a change, and no destruction unless asked). Measured leaving each of
/// eight development sets out of the learning in turn: recall@3 0.880 → 0.887, @1 unchanged.
fn keep_a_place_for_the_likeliest(
    hits: &mut Vec<Hit>,
    leads: &[u32],
    query: &Query,
    destruction_asked: bool,
) {
    let mut likeliest: Vec<(usize, u32)> = leads
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, lead)| *lead > 0)
        .collect();
    likeliest.sort_by_key(|(_, lead)| std::cmp::Reverse(*lead));
    let row_of = |entry: usize| hits.iter().position(|hit| hit.entry == entry);
    let shown = |row: Option<usize>| row.is_some_and(|row| row < SAFE_TOP);
    let mut candidates = likeliest.iter().take(2).map(|(entry, _)| row_of(*entry));
    let row = match candidates.next() {
        Some(first) if shown(first) => candidates.next().flatten(),
        Some(first) => first,
        None => None,
    };
    let Some(row) = row.filter(|row| *row >= SAFE_TOP) else {
        return;
    };
    let effect = hits[row].action.effect;
    let allowed = (effect != Effect::Destructive || destruction_asked)
        && (!query.wants_read || effect == Effect::Read)
        && (!query.wishes || effect != Effect::Read);
    if allowed {
        let hit = hits.remove(row);
        hits.insert(SAFE_TOP - 1, hit);
    }
}

/// What the learnt model adds to each action (the index's order) for `query`.
fn learnt_leads(index: &SearchIndex, world: Option<&WorldIndex>, query: &Query) -> Vec<u32> {
    // The game's own names say which thing, not what to do: the model reads each as one word,
    // "a thing of the game", as codegen counted the labelled phrasings' names (the sandbox's
    // goblins and scores), so what people ask of a named thing carries over to another game's
    // things. A word the catalog names actions by ("state") still says what to do.
    let says_what_to_do = |word: &&String| {
        index.catalog_words.contains(*word)
            || !world.is_some_and(|world| world.names_a_game_thing(word))
    };
    // Words that only say how the query is put ("show me the crate") lead nowhere: the model
    // needs a word it knows that says what to do.
    let knows_what_to_do = query
        .content_stems
        .iter()
        .filter(says_what_to_do)
        .any(|word| index.learnt.knows(word));
    if !knows_what_to_do {
        return vec![0; index.entries.len()];
    }
    let thing = GAME_THING.to_owned();
    let read: BTreeSet<&String> = query
        .all_stems
        .iter()
        .map(|word| if says_what_to_do(&word) { word } else { &thing })
        .collect();
    let leads = index.learnt.leads(read.into_iter());
    // A statement ("the crate is floating in mid-air") opens with no verb and asks no question
    // and states no wish: the rules have least to go on, so what people meant by such words
    // counts double (measured leaving each of eight development sets out of the learning in
    // turn: 0.767 / 0.868 → 0.774 / 0.874).
    let statement = !query.leads_with_verb && !query.wants_read && !query.wishes;
    if statement {
        leads
            .into_iter()
            .map(|lead| lead * STATEMENT_LEAD_FACTOR)
            .collect()
    } else {
        leads
    }
}

/// The words the learnt model reads as [`GAME_THING`] in `world`: those naming one of the
/// game's own things that the catalog does not name actions by.
pub(crate) fn game_thing_words(index: &SearchIndex, world: &WorldIndex) -> BTreeSet<String> {
    world
        .game_thing_words()
        .filter(|word| !index.catalog_words.contains(*word))
        .cloned()
        .collect()
}

/// How many times the learnt lead counts in a statement (see [`learnt_leads`]).
const STATEMENT_LEAD_FACTOR: u32 = 2;

/// Reads first, destructions last.
fn effect_rank(effect: Effect) -> u8 {
    match effect {
        Effect::Read => 0,
        Effect::Write => 1,
        Effect::Destructive => 2,
    }
}

/// How many first rows a destructive action never takes unless the query asks for destruction.
const SAFE_TOP: usize = 3;

/// Moves destructive hits below the first [`SAFE_TOP`] others, keeping every other order: a
/// query that does not ask to delete, remove, reset or quit in so many words is never offered
/// one first. Where fewer than [`SAFE_TOP`] others match, the destructive hits are left out:
/// they would otherwise be among the first three.
fn keep_destruction_out_of_the_top(hits: &mut Vec<Hit>) {
    let mut ordered = Vec::with_capacity(hits.len());
    let mut held = Vec::new();
    let mut safe_rows = 0;
    for hit in hits.drain(..) {
        if safe_rows >= SAFE_TOP {
            ordered.push(hit);
        } else if hit.action.effect == Effect::Destructive {
            held.push(hit);
        } else {
            ordered.push(hit);
            safe_rows += 1;
            if safe_rows == SAFE_TOP {
                ordered.append(&mut held);
            }
        }
    }
    // Whatever is still held had fewer than SAFE_TOP safe hits before it: it is left out.
    *hits = ordered;
}

/// How well the query's words match the action's. Words that name a thing of the game in full
/// (`objects`: "Score", "the goblin") are what the query is about, not what it wants done: they
/// count through the world, not here. The catalog words the query's phrases mean count like
/// its own words, each once. Returns the score and how many words hit the action's name,
/// aliases or topics.
fn word_score(
    query: &Query,
    objects: &[usize],
    said: &Said<'_>,
    worth: &WordWorth,
    (position_in_index, entry): (usize, &IndexedAction),
) -> (u32, usize) {
    let mut total = 0;
    let mut matched = 0;
    for position in 0..query.words.len() {
        // A word the query rules out ("without loading it") asks for nothing.
        if objects.contains(&position)
            || query.in_idiom.get(position) == Some(&true)
            || query.ruled_out.get(position) == Some(&true)
        {
            continue;
        }
        let exact = query.exact.get(position);
        let verb = position == 0 && query.leads_with_verb;
        let mut best = word_weight(worth.of_word(position, position_in_index), entry, exact);
        // A participle after "the", "all", "I" ... says what a thing is ("free the loaded
        // assets"), not what to do: it names an action no more than a topic does, unless
        // written so in the action's own name (`list_loaded`).
        if !verb
            && query.describes.get(position) == Some(&true)
            && exact.is_some_and(|exact| !entry.exact_name.contains(exact))
        {
            best = best.min(TOPIC_WEIGHT);
        }
        // The first word of a command is usually its verb ("save the world to a file"): it
        // counts double.
        total += if verb { best * 2 } else { best };
        // Only a word of the action's name, aliases or topics speaks of it; its summary's and
        // tool's words are too common to.
        matched += usize::from(best >= TOPIC_WEIGHT);
    }
    for (meaning, meant) in query.meant.iter().enumerate() {
        // A word the query says itself (outside an idiom) counts once, as its own.
        let said = query
            .words
            .iter()
            .zip(&query.in_idiom)
            .any(|(word, in_idiom)| !in_idiom && *word == meant.stem);
        if said {
            continue;
        }
        let weight = word_weight(
            worth.of_meaning(meaning, position_in_index),
            entry,
            Some(&meant.exact),
        );
        total += weight * MEANT_FACTOR;
        matched += usize::from(weight >= TOPIC_WEIGHT);
    }
    total += phrase_score(said, entry);
    // The whole query naming the action exactly ("get_entity", "get entity") wins outright.
    if query.joined_words == entry.joined_name {
        total += 10;
    } else if let [name] = entry.name.as_slice()
        && (query
            .words
            .iter()
            .zip(&query.ruled_out)
            .any(|(word, ruled_out)| !ruled_out && word == name)
            || query.meant.iter().any(|meant| &meant.stem == name))
    {
        total += WHOLE_NAME_WEIGHT;
    }
    (total, matched)
}

/// What each word of a query, and each word its phrases mean, is worth to every action by its
/// place among the action's own words ([`own_word_weights`]), looked up once per query.
struct WordWorth<'i> {
    /// For each of the query's words, the actions holding it and its weight in each.
    words: Vec<&'i [(usize, u32)]>,
    /// The same for each word its phrasebook phrases mean.
    meanings: Vec<&'i [(usize, u32)]>,
}

impl<'i> WordWorth<'i> {
    fn new(index: &'i SearchIndex, query: &Query) -> WordWorth<'i> {
        let places = |word: &str| index.word_places.get(word).map_or(&[][..], Vec::as_slice);
        WordWorth {
            words: query.words.iter().map(|word| places(word)).collect(),
            meanings: query
                .meant
                .iter()
                .map(|meant| places(&meant.stem))
                .collect(),
        }
    }

    /// What the query's word at `word` is worth to the action at `action`.
    fn of_word(&self, word: usize, action: usize) -> u32 {
        weight_at(&self.words, word, action)
    }

    /// What the word its phrases mean at `meaning` is worth to the action at `action`.
    fn of_meaning(&self, meaning: usize, action: usize) -> u32 {
        weight_at(&self.meanings, meaning, action)
    }
}

/// The weight of the word at `word` of `places` (each in index order) for the action at
/// `action`; none where the action does not hold it.
fn weight_at(places: &[&[(usize, u32)]], word: usize, action: usize) -> u32 {
    places
        .get(word)
        .and_then(|places| {
            let found = places
                .binary_search_by_key(&action, |(place, _)| *place)
                .ok()?;
            places.get(found)
        })
        .map_or(0, |(_, weight)| *weight)
}

/// The query's stems outside the game's names, and the stems its phrases mean: what an
/// action's own phrases are looked for in, gathered once per query.
struct Said<'q> {
    words: Vec<&'q str>,
    meant: Vec<&'q str>,
}

impl<'q> Said<'q> {
    fn new(query: &'q Query, objects: &[usize]) -> Said<'q> {
        Said {
            words: query
                .words
                .iter()
                .enumerate()
                .filter(|(position, _)| !objects.contains(position))
                .map(|(_, word)| word.as_str())
                .collect(),
            meant: query
                .meant
                .iter()
                .map(|meant| meant.stem.as_str())
                .collect(),
        }
    }

    /// Whether `phrase` stands whole, in order, among the words said or meant.
    fn holds(&self, phrase: &[String]) -> bool {
        [&self.words, &self.meant].into_iter().any(|words| {
            words
                .windows(phrase.len())
                .any(|window| window.iter().zip(phrase).all(|(word, part)| *word == part))
        })
    }

    /// Whether `word` is said or meant.
    fn has(&self, word: &str) -> bool {
        self.words.contains(&word) || self.meant.contains(&word)
    }
}

/// What saying one of the action's own phrases whole is worth: [`WHOLE_PHRASE_WEIGHT`] for a
/// topic or alias of several words found in order among the query's words (or the words its
/// phrasebook phrases mean), else [`WHOLE_ALIAS_WEIGHT`] for a one-word alias the query says.
fn phrase_score(said: &Said<'_>, entry: &IndexedAction) -> u32 {
    if entry.phrases.iter().any(|phrase| said.holds(phrase)) {
        WHOLE_PHRASE_WEIGHT
    } else if entry.single_aliases.iter().any(|alias| said.has(alias)) {
        WHOLE_ALIAS_WEIGHT
    } else {
        0
    }
}

/// What one (stemmed) query word is worth to an action: its best place among the action's
/// words, and a little more when it is a word of the name or an alias as written.
fn word_weight(place: u32, entry: &IndexedAction, exact: Option<&String>) -> u32 {
    let mut best = place;
    if best == 0 {
        return 0;
    }
    // A word of the name or an alias as written ("resources" in `list_resources`) beats one
    // that only shares its stem.
    if exact.is_some_and(|exact| entry.exact_name.contains(exact)) {
        best += EXACT_WORD_WEIGHT;
    }
    if exact.is_some_and(|exact| is_weak_word(exact)) {
        best = best.min(SUMMARY_WEIGHT);
    }
    best
}

/// What the app's terms named in the query add to an action: for each kind of thing the action
/// is about (its record's `subjects`), the strongest term of that kind, in full for the first
/// subject (what the action is mainly about) and half for the others; plus a bonus when the
/// query names a field and the action takes a `path`, or a state's value and it takes a `value`.
/// With `explain`, says which terms counted and fills every addressing parameter the query gave
/// a value for. Returns the score and how many terms counted.
fn world_score(
    entry: &IndexedAction,
    named: &[TermMatch<'_>],
    mut explain: Option<&mut Explanation>,
) -> (u32, usize) {
    if named.is_empty() {
        return (0, 0);
    }
    let mut total = 0;
    let mut member = None;
    let mut counted: Vec<&str> = Vec::new();
    // The subject the action is mainly about: its first, unless the query names that kind only
    // by an unreflected type (the game's "ball") where the action needs values: then the name
    // stands for the entity that carries it, and the next subject is the main one.
    let mut main = 0;
    for (position, (subject, required)) in entry.subjects.iter().enumerate() {
        let Some(best) = named.iter().find(|found| {
            subject.accepts(found.term) && !counted.contains(&found.term.address.as_str())
        }) else {
            if position == main
                && let Takes::ValueOf(kind) = subject
                && named
                    .iter()
                    .any(|found| found.term.kind == *kind && !found.term.reflected)
            {
                main += 1;
            }
            continue;
        };
        counted.push(best.term.address.as_str());
        // The main subject is what the action is about; the others count half when the action
        // needs them, a quarter when they only narrow it (`get_entity`'s components). An action
        // about any type (`describe_type`) yields to a kind's own actions.
        total += match (position == main, subject, required) {
            (true, Takes::AnyType, _) => best.strength.saturating_sub(1),
            // A saved file's name names nothing the running world holds, and only the file
            // actions take it: "how many entities does arena hold?" asks about the file, however
            // much its other words sound like a count of the world.
            (true, _, _) if best.term.kind == TermKind::WorldFile => best.strength * 2,
            // A component's name standing for the several entities that carry it ("the
            // bricks") says what kind of entity, not which one: half, so the actions that find
            // entities by the component lead.
            (true, Takes::Kind(TermKind::Entity), _) if best.term.address.is_empty() => {
                best.strength / 2
            }
            (true, _, _) => best.strength,
            (false, _, true) => best.strength / 2,
            (false, _, false) => best.strength / 4,
        };
        if let Some(explain) = explain.as_deref_mut() {
            explain.because.push(describe_match(best));
        }
        if member.is_none() {
            member = match (best.term.kind, best.field, best.value) {
                (_, Some(field), _) if entry.takes_path => Some(("path", field)),
                (TermKind::State, _, Some(value)) if entry.takes_value => Some(("value", value)),
                _ => None,
            };
        }
    }
    if member.is_some() {
        total += FIELD_BONUS;
    }
    let matched = counted.len();
    let Some(explain) = explain else {
        return (total, matched);
    };
    let mut used: Vec<&str> = Vec::new();
    for address in &entry.addresses {
        let Some(best) = named.iter().find(|found| {
            address.takes.accepts(found.term) && !used.contains(&found.term.address.as_str())
        }) else {
            continue;
        };
        used.push(best.term.address.as_str());
        // Several entities carry the component a game calls them by: none is the one meant.
        if best.term.address.is_empty() {
            continue;
        }
        let value = json!(best.term.address);
        explain.params.insert(
            address.param.to_owned(),
            if address.list { json!([value]) } else { value },
        );
    }
    match member {
        Some(("path", field)) => {
            explain
                .params
                .insert("path".to_owned(), json!(format!(".{field}")));
        }
        Some((param, value)) => {
            explain.params.insert(param.to_owned(), json!(value));
        }
        None => {}
    }
    (total, matched)
}

/// "Score is a resource with a field red", "Goblin is an entity".
fn describe_match(found: &TermMatch<'_>) -> String {
    let term = found.term;
    if let Some(component) = &term.carried_by {
        return if term.address.is_empty() {
            format!(
                "{} names the entities that carry the component {component} (they have no Name)",
                term.name
            )
        } else {
            format!(
                "{} names the entity {} that carries the component {component} (it has no Name)",
                term.name, term.address
            )
        };
    }
    let mut text = format!(
        "{} is {} {}",
        term.name,
        article(term.kind),
        term.kind.as_str()
    );
    if let Some(field) = found.field {
        text.push_str(&format!(" with a field {field}"));
    } else if let Some(value) = found.value {
        text.push_str(&format!(" with a value {value}"));
    } else if term.kind == TermKind::Entity && term.count > 1 {
        text.push_str(&format!(" name ({} entities have it)", term.count));
    }
    text
}

fn article(kind: TermKind) -> &'static str {
    match kind {
        TermKind::Entity | TermKind::Event => "an",
        _ => "a",
    }
}

/// The gateway's view of the app's terms: the feed, and the index of the newest publication,
/// built by the first search that needs it.
#[derive(Debug, Default)]
pub(crate) struct WorldCache {
    feed: Option<AppTermsFeed>,
    built: parking_lot::Mutex<Option<(u64, Arc<WorldIndex>)>>,
}

impl WorldCache {
    pub(crate) fn new(feed: Option<AppTermsFeed>) -> WorldCache {
        WorldCache {
            feed,
            built: parking_lot::Mutex::new(None),
        }
    }

    /// The newest terms the app published, or `None` when it publishes none.
    pub(crate) fn terms(&self) -> Option<Arc<crate::app_terms::AppTerms>> {
        let (version, terms) = self.feed.as_ref()?.current();
        (version > 0).then_some(terms)
    }

    /// The index of the newest terms, or `None` when the app publishes none.
    pub(crate) fn index(&self) -> Option<Arc<WorldIndex>> {
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
