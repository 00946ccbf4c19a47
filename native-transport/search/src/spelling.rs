//! Misspelled words read as the word meant: "take a screnshot", "pasue the game", "despawwn".
//! A query word that no record, phrase, learnt phrasing or thing of the game knows is read as
//! the word of the catalog's own text it is one slip away from: a letter dropped, two
//! neighbouring letters swapped, or a letter doubled. Not a letter changed or added: those
//! turn real words the catalog does not hold into words it does ("eight" into "right", "quiet"
//! into "quit"). Where several are as near, a swap is the likeliest slip, then the word the
//! catalog says most; a tie is a guess, and the word is left as written. Short words are left
//! alone: at four letters or fewer one slip reaches too many words.

use std::collections::{HashMap, HashSet};

use crate::words::words;

/// The fewest letters a word needs before search reads it as a misspelling.
const SHORTEST_CORRECTED: usize = 5;

/// Number words, which queries say ("send eight goblins") and the catalog's text rarely does:
/// known, so never read as a word one slip away ("eight" is "height" with a letter dropped).
const NUMBER_WORDS: [&str; 20] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "twenty", "thirty", "fifty", "hundred", "thousand", "million", "dozen",
];

/// The catalog's own words, and for each word with one letter taken out, the words it came
/// from: two words one edit apart share such a key (or one is the other's key).
#[derive(Debug, Default)]
pub(crate) struct Spelling {
    known: HashSet<String>,
    by_deletion: HashMap<String, Vec<u32>>,
    targets: Vec<String>,
    /// How often the catalog says each target.
    said: Vec<u32>,
    /// The most letters a target has: a longer word, one letter over at most, is no slip of one.
    longest: usize,
}

impl Spelling {
    /// The words of `texts` (records, phrases), lowercased as queries are.
    pub(crate) fn build<'a>(texts: impl Iterator<Item = &'a str>) -> Spelling {
        let mut spelling = Spelling {
            known: NUMBER_WORDS.iter().map(|word| (*word).to_owned()).collect(),
            ..Spelling::default()
        };
        let mut targets_by_word: HashMap<String, u32> = HashMap::new();
        for text in texts {
            for word in words(text) {
                if !word.chars().all(char::is_alphabetic) {
                    continue;
                }
                if let Some(id) = targets_by_word.get(&word) {
                    if let Some(said) = spelling.said.get_mut(*id as usize) {
                        *said += 1;
                    }
                    continue;
                }
                if !spelling.known.insert(word.clone()) {
                    continue;
                }
                if word.chars().count() < SHORTEST_CORRECTED - 1 {
                    continue;
                }
                let id = spelling.targets.len() as u32;
                for key in with_one_letter_less(&word).chain([word.clone()]) {
                    let ids = spelling.by_deletion.entry(key).or_default();
                    if ids.last() != Some(&id) {
                        ids.push(id);
                    }
                }
                spelling.longest = spelling.longest.max(word.chars().count());
                targets_by_word.insert(word.clone(), id);
                spelling.targets.push(word);
                spelling.said.push(1);
            }
        }
        spelling
    }

    /// Whether `word` (lowercase) is one of the catalog's own words.
    pub(crate) fn knows(&self, word: &str) -> bool {
        self.known.contains(word)
    }

    /// The catalog word `word` (lowercase, unknown) is likeliest a misspelling of, if one is a
    /// single edit away and no other is as likely.
    pub(crate) fn meant(&self, word: &str) -> Option<&str> {
        let length = word.chars().count();
        if !(SHORTEST_CORRECTED..=self.longest + 1).contains(&length)
            || !word.chars().all(char::is_alphabetic)
        {
            return None;
        }
        let mut near: Vec<u32> = with_one_letter_less(word)
            .chain([word.to_owned()])
            .flat_map(|key| self.by_deletion.get(&key).into_iter().flatten().copied())
            .collect();
        near.sort_unstable();
        near.dedup();
        // Each target one slip away, likeliest first: a swap, then the word said most.
        let mut likeliest: Vec<((bool, u32), &str)> = near
            .into_iter()
            .filter_map(|id| {
                let target = self.targets.get(id as usize)?;
                let said = self.said.get(id as usize).copied().unwrap_or(0);
                slipped(word, target).then(|| ((swapped(word, target), said), target.as_str()))
            })
            .collect();
        likeliest.sort_by_key(|(likelihood, _)| std::cmp::Reverse(*likelihood));
        match likeliest.as_slice() {
            [(best, _), (next, _), ..] if best == next => None,
            [(_, target), ..] => Some(target),
            [] => None,
        }
    }
}

/// Whether `word` is `target` with a letter dropped, two neighbouring letters swapped, or a
/// letter doubled.
fn slipped(word: &str, target: &str) -> bool {
    let (word, target) = (letters(word), letters(target));
    if word.len() + 1 == target.len() {
        (0..target.len()).any(|at| without(&target, at) == word)
    } else if word.len() == target.len() + 1 {
        (1..word.len()).any(|at| word[at] == word[at - 1] && without(&word, at) == target)
    } else {
        swapped_letters(&word, &target)
    }
}

/// Whether `target` is `word` with two neighbouring letters swapped.
fn swapped(word: &str, target: &str) -> bool {
    swapped_letters(&letters(word), &letters(target))
}

fn swapped_letters(word: &[char], target: &[char]) -> bool {
    word.len() == target.len()
        && (0..word.len().saturating_sub(1)).any(|at| {
            word[at] == target[at + 1]
                && word[at + 1] == target[at]
                && word[at] != word[at + 1]
                && word[..at] == target[..at]
                && word[at + 2..] == target[at + 2..]
        })
}

fn letters(word: &str) -> Vec<char> {
    word.chars().collect()
}

/// `letters` without the one at `at`.
fn without(letters: &[char], at: usize) -> Vec<char> {
    letters
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != at)
        .map(|(_, letter)| *letter)
        .collect()
}

/// `word` with each of its letters left out in turn.
fn with_one_letter_less(word: &str) -> impl Iterator<Item = String> + '_ {
    word.char_indices().map(move |(at, letter)| {
        let mut shorter = String::with_capacity(word.len());
        shorter.push_str(&word[..at]);
        shorter.push_str(&word[at + letter.len_utf8()..]);
        shorter
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelling() -> Spelling {
        Spelling::build(
            [
                "Take a screenshot",
                "pause the game",
                "despawn an entity",
                "Checkpoint the world; resume",
            ]
            .into_iter(),
        )
    }

    #[test]
    fn one_edit_away_reads_as_the_word_meant() {
        let spelling = spelling();
        assert_eq!(
            spelling.meant("screnshot"),
            Some("screenshot"),
            "a letter dropped"
        );
        assert_eq!(
            spelling.meant("pasue"),
            Some("pause"),
            "two letters swapped"
        );
        assert_eq!(
            spelling.meant("despawwn"),
            Some("despawn"),
            "a letter doubled"
        );
        assert_eq!(spelling.meant("chekpoint"), Some("checkpoint"));
        assert_eq!(
            spelling.meant("resime"),
            None,
            "a letter changed: a real word, as often"
        );
    }

    #[test]
    fn short_far_changed_or_ambiguous_words_are_left_alone() {
        let spelling = spelling();
        assert_eq!(spelling.meant("gaem"), None, "four letters or fewer");
        assert_eq!(spelling.meant("scrnsht"), None, "two slips away");
        assert_eq!(spelling.meant("goblin"), None, "nothing near");
        assert_eq!(
            spelling.meant(&"a".repeat(500)),
            None,
            "longer than any word"
        );
        let height = Spelling::build(["height"].into_iter());
        assert!(height.knows("eight"), "a number word is a word");
        // A letter changed or added turns real words into the catalog's.
        let real = Spelling::build(["quit", "right", "change"].into_iter());
        assert_eq!(real.meant("quiet"), None);
        assert_eq!(real.meant("eight"), None);
        assert_eq!(real.meant("charge"), None);
        let both = Spelling::build(["cloned", "clones"].into_iter());
        assert_eq!(
            both.meant("clone"),
            None,
            "two words as near, said as often"
        );
        let often = Spelling::build(["cloned", "clones", "clones of it"].into_iter());
        assert_eq!(
            often.meant("clone"),
            Some("clones"),
            "the word said more often"
        );
        let swap = Spelling::build(["pause", "pasuee", "pasuee"].into_iter());
        assert_eq!(
            swap.meant("pasue"),
            Some("pause"),
            "a swap before a drop, however often said"
        );
        assert!(spelling.knows("screenshot"));
        assert!(!spelling.knows("screnshot"));
    }

    /// Any word, in any script, is either left alone or read as a target one slip away; none
    /// makes the reader panic. Words come from a fixed-seed generator (xorshift), so a failure
    /// repeats.
    #[test]
    fn any_word_is_left_alone_or_read_as_a_word_one_slip_away() {
        let spelling = spelling();
        let alphabet: Vec<char> = "screnshotpaudekiw\u{e9}\u{df}\u{65e5}\u{1f600}_-1"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let length = (next() % 14) as usize;
            let word: String = (0..length)
                .filter_map(|_| alphabet.get((next() % alphabet.len() as u64) as usize))
                .collect();
            if let Some(target) = spelling.meant(&word) {
                assert!(slipped(&word, target), "{word:?} read as {target:?}");
            }
        }
        // Slips of the catalog's own words are generated too, and read.
        for target in ["screenshot", "despawn", "checkpoint"] {
            for at in 0..target.len() {
                let dropped: String = without(&letters(target), at).into_iter().collect();
                assert_eq!(spelling.meant(&dropped), Some(target), "{dropped:?}");
            }
        }
    }
}
