//! The words `search` matches: how text splits into words, which words carry no meaning, and the
//! light stemmer. Shared by the gateway (which ranks) and codegen (which refuses topics and
//! aliases search could never match).

/// Words a query may hold that say nothing about which action is meant.
pub const STOP_WORDS: [&str; 37] = [
    "a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "my", "me", "please",
    "with", "by", "is", "it", "its", "this", "that", "i", "want", "can", "how", "what", "which",
    "are", "there", "do", "does", "any", "s", "you", "be", "from", "into",
];

/// First words that make a query a question or a request to be shown something: it wants an
/// answer now, not a change ("what is the score", "show me the player", "tell me when ...").
pub const READ_MOOD_WORDS: [&str; 23] = [
    "what", "whats", "how", "which", "where", "who", "when", "is", "are", "does", "do", "did",
    "has", "show", "list", "get", "read", "see", "find", "tell", "print", "display", "count",
];

/// Openings of several words that ask to be shown or told something, however they start
/// ("give me the fields of Health", "let me see the score", "i want to know whether ...").
pub const READ_MOOD_OPENINGS: [&[&str]; 7] = [
    &["give", "me"],
    &["let", "me", "see"],
    &["let", "me", "know"],
    &["i", "want", "to", "see"],
    &["i", "want", "to", "know"],
    &["i", "need", "to", "see"],
    &["i", "need", "to", "know"],
];

/// Whether `words` (lowercase, as written, stop words kept) open with a [`READ_MOOD_OPENINGS`].
pub fn opens_as_read(words: &[String]) -> bool {
    READ_MOOD_OPENINGS.iter().any(|opening| {
        words.len() >= opening.len() && opening.iter().zip(words).all(|(part, word)| part == word)
    })
}

/// Words that, after what they are about, say how it ought to be ("the crate should sit under
/// Base").
/// Words split at apostrophes: "shouldn't" is "shouldn", "t".
const WISH_WORDS: [&str; 3] = ["should", "shouldn", "must"];

/// Words that turn a wish into a complaint about what is ("it should move but it doesn't"): a
/// symptom, which wants finding out, not a change.
const COMPLAINT_WORDS: [&str; 7] = ["but", "yet", "isn", "doesn", "didn", "wasn", "why"];

/// Verbs after a wish word that say what a test should check ("the test should assert the orc
/// is dead", "it must fail unless ..."): a condition to check, not a change to make.
const CHECKING_VERBS: [&str; 7] = [
    "assert", "check", "verify", "confirm", "fail", "pass", "expect",
];

/// Whether `words` (lowercase, as written, stop words kept) state how something ought to be
/// ("the orc's max health is wrong, it should be 50"): a change asked for as a wish. Not a
/// question opening with "should" ("should I save first?"), nor a complaint.
pub fn states_a_wish(words: &[String]) -> bool {
    words.iter().enumerate().skip(1).any(|(at, word)| {
        WISH_WORDS.contains(&word.as_str())
            && !words
                .get(at + 1)
                .is_some_and(|verb| CHECKING_VERBS.contains(&verb.as_str()))
    }) && !words
        .iter()
        .any(|word| COMPLAINT_WORDS.contains(&word.as_str()))
}

/// Words that say the speaker does not know something ("I'm not sure the orc has a Health",
/// "I don't know if it loaded", "I wonder if there's a camera"), wherever they stand. Not "I
/// can't tell": "I can't tell them apart" asks for a way to tell them apart.
const UNSURE: [&[&str]; 6] = [
    &["not", "sure"],
    &["i", "wonder"],
    &["don", "t", "know"],
    &["can", "t", "remember"],
    &["can", "t", "recall"],
    &["no", "idea"],
];

/// Whether `words` (lowercase, as written, stop words kept) say the speaker does not know
/// something: such a sentence asks to be told, as a question does.
pub fn says_unsure(words: &[String]) -> bool {
    UNSURE.iter().any(|phrase| {
        words.windows(phrase.len()).any(|window| {
            window
                .iter()
                .zip(phrase.iter())
                .all(|(word, part)| word == part)
        })
    })
}

/// Words that open a bare naming of things ("my checkpoints", "the goblin", "all components").
const NAMING_OPENERS: [&str; 5] = ["my", "our", "the", "all", "every"];

/// Words that make a short phrase a sentence rather than a naming ("the goblin is stuck", "my
/// scenes won't load"): a verb of being, having or wanting, or a negation.
const SENTENCE_WORDS: [&str; 22] = [
    "is", "are", "was", "were", "isn", "aren", "wasn", "has", "have", "had", "should", "must",
    "won", "doesn", "don", "didn", "can", "cannot", "will", "keeps", "need", "needs",
];

/// Longest naming, in words: longer phrases say more than which thing.
const LONGEST_NAMING: usize = 3;

/// Whether `words` (lowercase, as written, stop words kept) only name things: a short phrase
/// that opens with "my", "the", "all" ... and holds no verb of being, having or wanting ("my
/// checkpoints", "all components"). Typed into a chat box, such a phrase asks to be shown them.
pub fn only_names_things(words: &[String]) -> bool {
    words.len() >= 2
        && words.len() <= LONGEST_NAMING
        && NAMING_OPENERS.contains(&words[0].as_str())
        && !words
            .iter()
            .any(|word| SENTENCE_WORDS.contains(&word.as_str()))
}

/// First words that make a question a request ("can you pause it?"): it asks for something to be
/// done, not to be shown.
pub const REQUEST_OPENERS: [&str; 6] = ["can", "could", "would", "will", "please", "let"];

/// Words so common in how people talk to a running game ("show me the game", "get the thing")
/// that they say little about which action is meant: matching one counts at most as much as a
/// word of a summary, wherever the action has it ("show" in `show_entity`, "game" in `game_state`).
pub const WEAK_WORDS: [&str; 11] = [
    "show", "get", "see", "tell", "look", "inspect", "game", "games", "thing", "things", "stuff",
];

/// Whether `word` (lowercase, as written) is one of [`WEAK_WORDS`].
pub fn is_weak_word(word: &str) -> bool {
    WEAK_WORDS.contains(&word)
}

/// Whether search ignores `word` (lowercase).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// The lowercase words of `text`: split at anything not alphanumeric, and inside a word where
/// a capital follows a lowercase letter, so type names read as words (`GoalScored` -> `goal`,
/// `scored`; `max_speed` -> `max`, `speed`).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .flat_map(split_camel_case)
        .map(|word| word.to_lowercase())
}

fn split_camel_case(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut previous_lower = false;
    for (index, character) in word.char_indices() {
        if character.is_uppercase() && previous_lower {
            parts.push(&word[start..index]);
            start = index;
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
    }
    parts.push(&word[start..]);
    parts
}

/// The stemmed words of `text` that carry meaning (stop words dropped).
pub fn meaningful_stems(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text)
        .filter(|word| !is_stop_word(word))
        .map(|word| stem(&word))
}

/// The distinct stemmed words of `text`, stop words kept ("what", "how" say whether it asks or
/// tells): the words codegen counts in the labelled phrasings and search looks up for a query.
pub fn distinct_stems(text: &str) -> std::collections::BTreeSet<String> {
    words(text).map(|word| stem(&word)).collect()
}

/// What search's learnt model reads in place of a word that names one of the game's own things
/// ("goblin", "paddle"): which thing is the game's business, but that a thing is named at all
/// says something ("the goblin is too slow" is not "the game is too slow"). No word of a query
/// can be it: [`words`] splits at the `#`.
pub const GAME_THING: &str = "#thing";

/// A light stemmer: "moving", "moves" and "move" all become "mov"; "entities" becomes "entity".
pub fn stem(word: &str) -> String {
    if let Some(rest) = word.strip_suffix("ies")
        && rest.chars().count() >= 3
    {
        return format!("{rest}y");
    }
    let mut stem = word;
    for suffix in ["ing", "es", "ed", "s"] {
        if let Some(rest) = stem.strip_suffix(suffix)
            && rest.chars().count() >= 3
        {
            stem = rest;
            break;
        }
    }
    let stem = stem
        .strip_suffix('e')
        .filter(|rest| rest.chars().count() >= 3)
        .unwrap_or(stem);
    stem.to_owned()
}

/// Words ending in "ed" that are not past participles.
const NOT_PARTICIPLES: [&str; 16] = [
    "bleed", "breed", "embed", "exceed", "feed", "hundred", "indeed", "naked", "need", "proceed",
    "seed", "shed", "speed", "succeed", "sacred", "wicked",
];

/// Whether `word` (lowercase, as written) is a past participle ("loaded", "saved", "paused").
pub fn is_past_participle(word: &str) -> bool {
    word.len() >= 5 && word.ends_with("ed") && !NOT_PARTICIPLES.contains(&word)
}

/// The forms `word` (lowercase, as written) may be an inflection of, itself first: "switched"
/// -> "switch", "hanging" -> "hang", "stopped" -> "stop", "making" -> "make", "copies" ->
/// "copy". Unlike [`stem`] these are whole words, so a phrase said in another tense or number
/// matches ("switched on" says "switch on") while "stats" never becomes "state".
pub fn base_forms(word: &str) -> Vec<String> {
    let mut forms = vec![word.to_owned()];
    let mut add = |form: String| {
        if form.chars().count() >= 2 && !forms.contains(&form) {
            forms.push(form);
        }
    };
    for (suffix, replacements) in [
        ("ies", &["y"][..]),
        ("ied", &["y"]),
        ("es", &[""]),
        ("s", &[""]),
        ("ed", &["", "e"]),
        ("ing", &["", "e"]),
    ] {
        let Some(rest) = word.strip_suffix(suffix) else {
            continue;
        };
        // "class", "press": a double s is the word's own.
        if suffix == "s" && rest.ends_with('s') {
            continue;
        }
        for replacement in replacements {
            add(format!("{rest}{replacement}"));
        }
        // "stopped" -> "stop", "dropping" -> "drop".
        let mut letters = rest.chars().rev();
        if matches!(suffix, "ed" | "ing")
            && let (Some(last), Some(before)) = (letters.next(), letters.next())
            && last == before
            && !"aeiou".contains(last)
        {
            add(rest[..rest.len() - last.len_utf8()].to_owned());
        }
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_knowing_is_said_anywhere_in_a_sentence() {
        let unsure = |text: &str| says_unsure(&words(text).collect::<Vec<_>>());
        assert!(unsure("I'm not sure the crate has a Velocity"));
        assert!(unsure(
            "the screen is black and I don't know which camera is on"
        ));
        assert!(unsure("I wonder whether the Score resource exists"));
        assert!(unsure("no idea which states the game has"));
        assert!(!unsure(
            "I can't tell the two goblins apart, call one Scout"
        ));
        assert!(!unsure("make sure the crate has a Velocity"));
    }

    #[test]
    fn a_short_phrase_opening_with_my_or_the_only_names_things() {
        let names = |text: &str| only_names_things(&words(text).collect::<Vec<_>>());
        assert!(names("my checkpoints"));
        assert!(names("all components"));
        assert!(names("all the bricks"));
        assert!(!names("the goblin is stuck"), "a sentence, not a naming");
        assert!(!names("my scenes won't load"), "a sentence, not a naming");
        assert!(
            !names("checkpoint the world"),
            "a command opens with its verb"
        );
        assert!(!names("the"), "one word names nothing");
        assert!(
            !names("the ball moves too slowly"),
            "longer phrases say more"
        );
    }

    #[test]
    fn stems() {
        assert_eq!(stem("moving"), "mov");
        assert_eq!(stem("moves"), "mov");
        assert_eq!(stem("move"), "mov");
        assert_eq!(stem("entities"), "entity");
        assert_eq!(stem("entity"), "entity");
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("scored"), stem("score"));
    }

    #[test]
    fn type_names_split_into_words() {
        let split: Vec<String> =
            words("GoalScored State<GameState> max_speed HTTPServer2").collect();
        assert_eq!(
            split,
            [
                "goal",
                "scored",
                "state",
                "game",
                "state",
                "max",
                "speed",
                "httpserver2"
            ]
        );
    }

    #[test]
    fn stop_words_are_dropped() {
        let kept: Vec<String> = meaningful_stems("what is the score of the red team").collect();
        assert_eq!(kept, ["scor", "red", "team"]);
    }

    #[test]
    fn a_wish_is_told_from_a_question_and_a_complaint() {
        let said = |text: &str| words(text).collect::<Vec<_>>();
        assert!(states_a_wish(&said("the crate should sit under Base")));
        assert!(states_a_wish(&said(
            "the player shouldn't have a Team anymore"
        )));
        assert!(!states_a_wish(&said("should I save first")));
        assert!(!states_a_wish(&said("the orc should move but it doesn't")));
    }

    #[test]
    fn a_test_that_should_check_something_wishes_for_no_change() {
        let said = |text: &str| words(text).collect::<Vec<_>>();
        assert!(states_a_wish(&said("the orc's health should be zero")));
        assert!(states_a_wish(&said("the crate must sit under the base")));
        assert!(!states_a_wish(&said(
            "the test should assert that the orc's health is zero"
        )));
        assert!(!states_a_wish(&said(
            "the test should fail unless the base still has a Team"
        )));
        assert!(!states_a_wish(&said("it must check the score is 3")));
    }

    #[test]
    fn past_participles_are_told_from_words_ending_in_ed() {
        assert!(is_past_participle("loaded"));
        assert!(is_past_participle("despawned"));
        assert!(!is_past_participle("speed"));
        assert!(!is_past_participle("red"));
        assert!(!is_past_participle("load"));
    }

    #[test]
    fn inflections_lead_to_their_base_words() {
        for (word, base) in [
            ("switched", "switch"),
            ("hanging", "hang"),
            ("stopped", "stop"),
            ("dropping", "drop"),
            ("making", "make"),
            ("saved", "save"),
            ("copies", "copy"),
            ("copied", "copy"),
            ("turns", "turn"),
            ("goes", "go"),
            ("pause", "pause"),
        ] {
            assert!(
                base_forms(word).iter().any(|form| form == base),
                "{word} -> {base}: {:?}",
                base_forms(word)
            );
        }
        for (word, other) in [("stats", "state"), ("press", "pres"), ("state", "stat")] {
            assert!(
                !base_forms(word).iter().any(|form| form == other),
                "{word} is no form of {other}"
            );
        }
    }
}
