//! Ranking: each action's score for a query, then the rules that order the hits.

use std::collections::BTreeSet;

use mcp_vocabulary::catalog::{ActionRecord, Category, Effect, ToolRecord};
use serde_json::{Map, Value, json};

use crate::index::{IndexedAction, SearchIndex, Takes};
use crate::query::{MEANT_FACTOR, Query};
use crate::terms::TermKind;
use crate::words::{GAME_THING, is_weak_word};
use crate::world::{FIELD_BONUS, TermMatch, WorldIndex};
use crate::{
    APP_ACTION_WEIGHT, COMMAND_WEIGHT, EXACT_WORD_WEIGHT, QUESTION_WEIGHT, SUMMARY_WEIGHT,
    TOPIC_WEIGHT, WHOLE_ALIAS_WEIGHT, WHOLE_NAME_WEIGHT, WHOLE_PHRASE_WEIGHT,
};

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
    pub(crate) matched: usize,
    /// Its place in the index.
    pub(crate) entry: usize,
}

/// Why a hit matched the app, built only for the rows returned.
#[derive(Debug, Default)]
pub struct Explanation {
    /// What of the app it matched ("Score is a resource with a field red").
    pub because: Vec<String>,
    /// Parameters the query gave, from what of the app it named.
    pub params: Map<String, Value>,
}

/// The ranked actions, and the app's terms the query named.
#[derive(Debug, Default)]
pub struct Ranked<'w> {
    /// Every action with a positive score, best first (ties in catalog order).
    pub hits: Vec<Hit>,
    pub(crate) named: Vec<TermMatch<'w>>,
}

impl Ranked<'_> {
    /// Why `hit` matched the app's terms, and the parameters they give.
    pub fn explain(&self, index: &SearchIndex, hit: &Hit) -> Explanation {
        let mut explanation = Explanation::default();
        if let Some(entry) = index.entries.get(hit.entry) {
            world_score(entry, &self.named, Some(&mut explanation));
        }
        explanation
    }
}

/// Every action with a positive score, best first (ties in catalog order).
pub fn rank<'w>(
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
    let crate::world::Named {
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
    let said = Said::new(query, &objects);
    // The game's own actions speak its words ("add score"), unless the query says the name
    // is a thing by its kind ("add a Score resource").
    let said_by_app = Said::new(query, &with_kind);
    let names_a_game_thing =
        |word: &String| world.is_some_and(|world| world.names_a_game_thing(word));
    let leads = learnt_leads(index, world, query);
    // The model knows no phrasing of the game's own actions: where the query says one of
    // their own words, the game's action leads as far as the likeliest other does.
    let best_lead = leads.iter().copied().max().unwrap_or(0);
    // A command that opens with an action's one-word name ("save the world as arena") asks for
    // that action: the model does not outvote it.
    let verb = query.words.first().filter(|_| query.leads_with_verb);
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
                && (entry.own_words.iter().any(|word| said_by_app.has(word))
                    || entry.phrases.iter().any(|phrase| said_by_app.holds(phrase)));
            // A word of its own that also names one of the game's things ("score", "goblin")
            // says which thing, which the bridge's actions handle as well; its other words
            // ("points", "wave") say what to do the game's way.
            let games_way_by_deed = games_way
                && (entry
                    .own_words
                    .iter()
                    .any(|word| said_by_app.has(word) && !names_a_game_thing(word))
                    || entry.phrases.iter().any(|phrase| {
                        said_by_app.holds(phrase) && !phrase.iter().all(names_a_game_thing)
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
            let named_by_verb =
                verb.is_some_and(|verb| matches!(entry.name.as_slice(), [name] if name == verb));
            let lead = if games_way_by_deed || named_by_verb {
                best_lead
            } else if games_way {
                // Named only by its things, the game's way leads as far as the model is unsure
                // of another ("throw 20 goblins at the base"), not past a sure one ("reset the
                // Score to its defaults").
                crate::learnt::LEARNT_LEAD.saturating_sub(best_lead)
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
    Ranked { hits, named }
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
    index.learnt.leads(read.into_iter())
}

/// The words the learnt model reads as [`GAME_THING`] in `world`: those naming one of the
/// game's own things that the catalog does not name actions by.
pub fn game_thing_words(index: &SearchIndex, world: &WorldIndex) -> BTreeSet<String> {
    world
        .game_thing_words()
        .filter(|word| !index.catalog_words.contains(*word))
        .cloned()
        .collect()
}

/// Reads first, destructions last.
pub(crate) fn effect_rank(effect: Effect) -> u8 {
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
        // A word an idiom read means what the idiom does ("roll back"), not what it says.
        if objects.contains(&position) || query.in_idiom.get(position) == Some(&true) {
            continue;
        }
        let exact = query.exact.get(position);
        let verb = position == 0 && query.leads_with_verb;
        let best = word_weight(worth.of_word(position, position_in_index), entry, exact);
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
        && (query.words.iter().any(|word| word == name)
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
    pub(crate) words: Vec<&'i [(usize, u32)]>,
    /// The same for each word its phrasebook phrases mean.
    pub(crate) meanings: Vec<&'i [(usize, u32)]>,
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
pub(crate) fn weight_at(places: &[&[(usize, u32)]], word: usize, action: usize) -> u32 {
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
    pub(crate) words: Vec<&'q str>,
    pub(crate) meant: Vec<&'q str>,
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
