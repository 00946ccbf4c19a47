//! The phrasebook as search reads it: each phrase split into words once, looked up by its first
//! word, matched longest first against a query's words as written or in another tense or number
//! ("switched on" says "switch on"); and the phrases (with the destructive actions' own names)
//! that ask for destruction, matched as written ("deleted" tells, it does not ask).

use std::collections::HashMap;

use crate::words::{base_forms, is_past_participle, is_stop_word, stem, words};

use mcp_vocabulary::catalog::{Catalog, Effect};

/// A catalog word a phrase of the query means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Meant {
    /// The word, stemmed.
    pub(super) stem: String,
    /// The word as the phrasebook writes it.
    pub(super) exact: String,
    /// Whether the query said the phrase as a request: as written ("vanish", not "vanished")
    /// and not left hanging on a preposition ("a point to go back to"). Only then does a
    /// meaning of destruction ask for it.
    pub(super) requested: bool,
}

/// One phrase, split into words once.
#[derive(Debug)]
struct CompiledPhrase {
    /// Its words as written (stop words kept: "bring it back"; inflected, not stemmed: "stats"
    /// is not "state").
    says: Vec<String>,
    /// The catalog words it means.
    means: Vec<Meant>,
}

/// Words after which a destruction word names a thing ("that despawn", "the reset"), rather
/// than asks for it. A phrase of several words is a thing of its own ("a clean slate").
const DETERMINERS: [&str; 11] = [
    "the", "a", "an", "that", "this", "those", "these", "its", "my", "your", "their",
];

/// Words after which a destruction phrase says how things are ("aren't clear", "comes out
/// empty", "won't close") or what happened ("the crate fell out of the world"), rather than
/// asks for it.
const DESCRIBING: [&str; 25] = [
    "is", "are", "was", "were", "been", "not", "t", "out", "looks", "seems", "stays", "still",
    "remains", "becomes", "fell", "fallen", "falls", "falling", "went", "got", "came", "sank",
    "slid", "flew", "ran",
];

/// Whether a destruction phrase of `length` words at `start` of a query (`word` gives its words
/// as written) names or describes rather than asks: it is one word after a determiner, it
/// follows one of [`DESCRIBING`] or a past participle ("the agent called despawn"), or it says
/// what the subject the query opens with does ([`said_of_a_subject`]).
fn names_rather_than_asks<'w>(
    word: impl Fn(usize) -> Option<&'w str> + Copy,
    start: usize,
    length: usize,
) -> bool {
    start.checked_sub(1).and_then(word).is_some_and(|before| {
        (length == 1 && DETERMINERS.contains(&before))
            || DESCRIBING.contains(&before)
            || is_past_participle(before)
    }) || said_of_a_subject(word, start, length)
}

/// Words a query opens with when it starts by naming what it is about ("the crates vanish").
const SUBJECT_OPENERS: [&str; 9] = [
    "the", "a", "an", "my", "our", "your", "their", "these", "those",
];

/// Words that make what stands before a destruction phrase more than the subject it tells of:
/// a request ("the goblin should vanish") or a clause of its own ("the crate is not needed any
/// more, delete it"; "the base has junk under it, clear it").
const NOT_A_SUBJECT: [&str; 27] = [
    "should", "must", "make", "let", "get", "have", "want", "need", "needs", "please", "can",
    "could", "would", "will", "is", "are", "was", "were", "has", "had", "be", "been", "it", "them",
    "s", "t", "still",
];

/// The most words a subject ("the red crates") has after its opener.
const SUBJECT_WORDS: usize = 3;

/// Whether a one-word destruction phrase at `start` (of `length` words) follows the subject the
/// query opens with ("the crates vanish after a while", "my goblins disappear"): it tells what
/// the subject does, a symptom, unless a word between asks or makes a clause of its own.
/// `word` gives the query's words as written.
fn said_of_a_subject<'w>(
    word: impl Fn(usize) -> Option<&'w str>,
    start: usize,
    length: usize,
) -> bool {
    length == 1
        && (2..=SUBJECT_WORDS + 1).contains(&start)
        && word(0).is_some_and(|first| SUBJECT_OPENERS.contains(&first))
        && (1..start).all(|at| word(at).is_some_and(|between| !NOT_A_SUBJECT.contains(&between)))
}

/// Prepositions a phrase may end on.
const PREPOSITIONS: [&str; 9] = ["to", "from", "into", "onto", "at", "on", "in", "with", "of"];

/// Whether a phrase of `says` ending at `end` of a query of `length` words, `next` the word after
/// it, hangs on a preposition with nothing after it, its own last word or the query's: "a point
/// to go back to", "the saved points I could roll back to" name a place, they do not ask to go
/// there.
fn hangs(says: &[String], end: usize, length: usize, next: Option<&str>) -> bool {
    (end == length
        && says
            .last()
            .is_some_and(|last| PREPOSITIONS.contains(&last.as_str())))
        || (end + 1 == length && next.is_some_and(|next| PREPOSITIONS.contains(&next)))
}

/// Whether the phrase `says` ending at `end` of a query of `length` words, `next` the word after
/// it, hangs ([`hangs`]) or tells ([`tells`]): it names the action rather than asks for it.
fn said_in_passing(says: &[String], end: usize, length: usize, next: Option<&str>) -> bool {
    hangs(says, end, length, next) || tells(next)
}

/// Verbs of telling after which a destruction word names the action that told, rather than asks
/// for it: "restore says there is no such name".
const TELLING: [&str; 14] = [
    "says",
    "said",
    "complains",
    "complained",
    "reports",
    "reported",
    "tells",
    "told",
    "answers",
    "answered",
    "replies",
    "replied",
    "errors",
    "errored",
];

/// Whether `next`, the word after a phrase, is a verb of [`TELLING`].
fn tells(next: Option<&str>) -> bool {
    next.is_some_and(|next| TELLING.contains(&next))
}

/// Words after "go" that say where to ("should go under the base", "has to go faster"): the
/// phrase then asks for a move, not for the thing to be gone.
const WHERE_TO: [&str; 24] = [
    "to", "into", "onto", "on", "in", "at", "under", "over", "up", "down", "back", "left", "right",
    "forward", "behind", "beside", "next", "near", "there", "here", "through", "inside", "faster",
    "slower",
];

/// Whether a destruction phrase ending on "go" ("has to go") is followed by where to: a move.
fn goes_somewhere(says: &[String], next: Option<&str>) -> bool {
    says.last().is_some_and(|last| last == "go")
        && next.is_some_and(|next| WHERE_TO.contains(&next))
}

/// The catalog's phrasebook, split into words once when the gateway is built.
#[derive(Debug, Default)]
pub(crate) struct CompiledPhrasebook {
    /// Every phrase, longest first.
    phrases: Vec<CompiledPhrase>,
    /// For each first word of a phrase, the phrases it opens (in `phrases` order): a query
    /// looks only at the phrases its own words open.
    opened_by: HashMap<String, Vec<usize>>,
    /// The destruction phrases' words, as written (an imperative asks; "deleted" tells).
    destruction: Vec<Vec<String>>,
}

impl CompiledPhrasebook {
    /// Reads `catalog`'s phrasebook; the names and aliases of its destructive actions ask for
    /// destruction too ("despawn", "restore", "close app").
    pub(super) fn build(catalog: &'static Catalog) -> CompiledPhrasebook {
        let phrasebook = &catalog.phrasebook;
        let mut phrases: Vec<CompiledPhrase> = phrasebook
            .phrases
            .iter()
            .map(|phrase| CompiledPhrase {
                says: words(phrase.says).collect(),
                means: words(phrase.means)
                    .filter(|word| !is_stop_word(word))
                    .map(|word| Meant {
                        stem: stem(&word),
                        exact: word,
                        requested: true,
                    })
                    .collect(),
            })
            .filter(|phrase| !phrase.says.is_empty())
            .collect();
        phrases.sort_by_key(|phrase| std::cmp::Reverse(phrase.says.len()));
        let mut opened_by: HashMap<String, Vec<usize>> = Default::default();
        for (index, phrase) in phrases.iter().enumerate() {
            if let Some(first) = phrase.says.first() {
                opened_by.entry(first.clone()).or_default().push(index);
            }
        }
        CompiledPhrasebook {
            phrases,
            opened_by,
            destruction: phrasebook
                .asks_destruction
                .iter()
                .copied()
                .chain(
                    catalog
                        .all_actions()
                        .filter(|(_, action)| action.effect == Effect::Destructive)
                        .flat_map(|(_, action)| {
                            std::iter::once(action.name).chain(action.aliases.iter().copied())
                        }),
                )
                .map(|phrase| words(phrase).collect::<Vec<_>>())
                .filter(|phrase| !phrase.is_empty())
                .collect(),
        }
    }

    /// Whether the query asks for destruction: its own words not read by a phrase hold a
    /// destruction phrase, or a phrase it holds means one ("nuke everything" means "wipe";
    /// "close-up" means "crop", not "close").
    pub(super) fn asks_destruction(
        &self,
        all: &[String],
        read_by: &[usize],
        meant: &[Meant],
    ) -> bool {
        let meant: Vec<String> = meant
            .iter()
            .filter(|word| word.requested)
            .map(|word| word.exact.clone())
            .collect();
        self.destruction.iter().any(|phrase| {
            let unread = all
                .windows(phrase.len())
                .enumerate()
                .any(|(start, window)| {
                    window == phrase.as_slice()
                        && read_by
                            .get(start..start + phrase.len())
                            .is_some_and(|lengths| lengths.iter().all(|length| *length == 0))
                        && !names_rather_than_asks(
                            |at| all.get(at).map(String::as_str),
                            start,
                            phrase.len(),
                        )
                        && !said_in_passing(
                            phrase,
                            start + phrase.len(),
                            all.len(),
                            all.get(start + phrase.len()).map(String::as_str),
                        )
                        && !goes_somewhere(
                            phrase,
                            all.get(start + phrase.len()).map(String::as_str),
                        )
                });
            unread
                || meant
                    .windows(phrase.len())
                    .any(|window| window == phrase.as_slice())
        })
    }

    /// What the phrases `all` holds mean: longest phrases first, each word read by one phrase;
    /// and for each word, the length of the phrase that read it (0: none did).
    pub(super) fn meanings(&self, all: &[String]) -> (Vec<Meant>, Vec<usize>) {
        let mut read_by = vec![0; all.len()];
        let mut meant: Vec<Meant> = Vec::new();
        // A phrase matches in any tense or number ("switched on" says "switch on"), after the
        // phrases of its length said as written ("saved levels" before "saved level").
        let forms: Vec<Vec<String>> = all.iter().map(|word| base_forms(word)).collect();
        let mut opened: Vec<usize> = forms
            .iter()
            .flatten()
            .filter_map(|form| self.opened_by.get(form))
            .flatten()
            .copied()
            .collect();
        opened.sort_unstable();
        opened.dedup();
        let phrases: Vec<&CompiledPhrase> = opened
            .iter()
            .filter_map(|index| self.phrases.get(*index))
            .collect();
        for same_length in phrases.chunk_by(|one, other| one.says.len() == other.says.len()) {
            for as_written in [true, false] {
                for phrase in same_length {
                    read_phrase(phrase, &forms, as_written, &mut read_by, &mut meant);
                }
            }
        }
        (meant, read_by)
    }
}

/// Reads every place the query says `phrase` (as written, or in any tense or number) whose
/// words no phrase read yet: marks them read and notes what the phrase means. `forms` holds
/// each of the query's words with its base forms, the word as written first.
fn read_phrase(
    phrase: &CompiledPhrase,
    forms: &[Vec<String>],
    as_written: bool,
    read_by: &mut [usize],
    meant: &mut Vec<Meant>,
) {
    let says = &phrase.says;
    let mut start = 0;
    while start + says.len() <= forms.len() {
        let end = start + says.len();
        let free = read_by
            .get(start..end)
            .is_some_and(|taken| taken.iter().all(|length| *length == 0));
        let said = forms.get(start..end).is_some_and(|words| {
            words.iter().zip(says).all(|(word_forms, base)| {
                let considered = if as_written { 1 } else { word_forms.len() };
                word_forms.iter().take(considered).any(|form| form == base)
            })
        });
        if free && said {
            read_by
                .iter_mut()
                .take(end)
                .skip(start)
                .for_each(|length| *length = says.len());
            let next = forms
                .get(end)
                .and_then(|word| word.first())
                .map(String::as_str);
            // An idiom that describes ("the crate fell out of the world") asks for nothing,
            // as a destruction phrase that does.
            let written = |at: usize| {
                forms
                    .get(at)
                    .and_then(|word| word.first())
                    .map(String::as_str)
            };
            let requested = as_written
                && !names_rather_than_asks(written, start, says.len())
                && !said_in_passing(says, end, forms.len(), next);
            for word in &phrase.means {
                match meant.iter_mut().find(|known| known.exact == word.exact) {
                    // Meant before only in passing ("wiped out"), asked for here ("wipe it").
                    Some(known) => known.requested |= requested,
                    None => meant.push(Meant {
                        requested,
                        ..word.clone()
                    }),
                }
            }
            start = end;
        } else {
            start += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_vocabulary::catalog::{Phrase, Phrasebook};

    static CATALOG: Catalog = Catalog {
        revision: "test",
        tools: &[],
        prompts: &[],
        phrasebook: Phrasebook {
            phrases: &[
                Phrase {
                    says: "ctrl+z",
                    means: "undo",
                },
                Phrase {
                    says: "hit ctrl+z",
                    means: "undo",
                },
                Phrase {
                    says: "hit",
                    means: "press",
                },
                Phrase {
                    says: "nuke everything",
                    means: "wipe",
                },
                Phrase {
                    says: "close-up",
                    means: "crop",
                },
                Phrase {
                    says: "stats",
                    means: "performance",
                },
                Phrase {
                    says: "switch on",
                    means: "enable",
                },
                Phrase {
                    says: "vanish",
                    means: "delete",
                },
                Phrase {
                    says: "go back to",
                    means: "rollback",
                },
                Phrase {
                    says: "zap",
                    means: "wipe",
                },
                Phrase {
                    says: "out of the world",
                    means: "delete",
                },
            ],
            asks_destruction: &[
                "wipe",
                "close",
                "delete",
                "rollback",
                "clean slate",
                "has to go",
                "should go",
            ],
        },
        usage: &[],
    };

    fn read(text: &str) -> (Vec<String>, Vec<usize>, bool) {
        let book = CompiledPhrasebook::build(&CATALOG);
        let all: Vec<String> = words(text).collect();
        let (meant, read_by) = book.meanings(&all);
        let destroys = book.asks_destruction(&all, &read_by, &meant);
        (
            meant.into_iter().map(|word| word.exact).collect(),
            read_by,
            destroys,
        )
    }

    #[test]
    fn the_longest_phrase_reads_its_words_once() {
        let (meant, read_by, _) = read("hit ctrl+z now");
        assert_eq!(
            meant,
            ["undo"],
            "\"hit\" is part of the shortcut, not a press"
        );
        assert_eq!(read_by, [3, 3, 3, 0]);
    }

    #[test]
    fn phrases_match_words_as_written() {
        let (meant, _, _) = read("what state is the game in");
        assert!(meant.is_empty(), "\"state\" is not \"stats\": {meant:?}");
        let (meant, _, _) = read("show the stats");
        assert_eq!(meant, ["performance"]);
    }

    #[test]
    fn a_phrase_matches_in_another_tense_or_number() {
        assert_eq!(read("get the view tool switched on").0, ["enable"]);
        assert_eq!(read("switching on the input tool").0, ["enable"]);
        assert_eq!(read("switch on input").0, ["enable"]);
        assert!(
            read("switchboard on").0.is_empty(),
            "a longer word is no inflection"
        );
    }

    #[test]
    fn destruction_is_asked_in_so_many_words() {
        assert!(read("delete the crate").2);
        assert!(
            !read("I deleted the wrong one").2,
            "a past tense tells, it does not ask"
        );
        assert!(
            read("nuke everything").2,
            "the phrase means a destruction word"
        );
        assert!(!read("grab a close-up of the orc").2, "close-up means crop");
        assert!(read("close the game").2);
    }

    #[test]
    fn destruction_said_of_what_happened_or_of_a_thing_does_not_ask() {
        assert!(read("make the orc vanish").2);
        assert!(
            !read("an object vanished").2,
            "an idiom in the past tense tells"
        );
        assert!(read("go back to my checkpoint").2);
        assert!(
            !read("I want a point to go back to").2,
            "a phrase hanging on its preposition names a place"
        );
        assert!(
            !read("which session ran that delete").2,
            "a destruction word after a determiner names the call"
        );
        assert!(
            read("give me a clean slate").2,
            "a phrase of several words is a thing of its own"
        );
        assert!(!read("the groups aren't clear to me").2);
        assert!(
            !read("the window won't close").2,
            "a symptom, not a request"
        );
        assert!(!read("the agent claims it called delete").2);
        assert!(read("take the crate out of the world").2);
        assert!(
            !read("the crates vanish after a while").2,
            "what the subject a query opens with does is a symptom"
        );
        assert!(!read("my red crates zap each other").2);
        assert!(read("the crate should vanish").2, "unless a word asks");
        assert!(
            read("the crate is in the way, zap it").2,
            "or opens a clause of its own"
        );
        assert!(read("zap the crate").2);
        assert!(
            !read("the crate fell out of the world").2,
            "an idiom after a verb of what happened tells"
        );
    }

    #[test]
    fn destruction_hanging_on_the_last_word_or_telling_does_not_ask() {
        assert!(read("rollback to the start").2);
        assert!(
            !read("show me the points I could rollback to").2,
            "a preposition ending the query after the word names a place"
        );
        assert!(read("wipe it").2);
        assert!(
            !read("wipe says there is nothing to clear").2,
            "the action that told, not a request"
        );
        assert!(
            !read("the saved points I could go back to").2,
            "as before: the phrase's own preposition"
        );
    }

    #[test]
    fn going_somewhere_is_a_move_not_a_destruction() {
        assert!(read("the Gravity resource has to go").2);
        assert!(read("whatever sits beneath it should go").2);
        assert!(
            !read("the crate should go under the base").2,
            "where to: a move"
        );
        assert!(!read("the orc has to go to 3, 0, 3").2);
    }

    #[test]
    fn a_meaning_told_in_passing_and_then_asked_for_asks() {
        assert!(!read("I nuked everything by mistake").2, "told, not asked");
        assert!(
            read("I nuked everything, now zap the rest").2,
            "the same meaning asked for by a shorter phrase"
        );
    }
}
