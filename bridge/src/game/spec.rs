//! How an app describes its own tools and actions: [`ToolSpec`], [`ActionSpec`] and what an
//! action changes ([`GameUndo`]), the same contract the built-in records give.

use mcp_vocabulary::catalog::{Category, Consent, Effect, Scope};
use serde_json::Value;

/// A tool of the app's own: a group of its actions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    pub(super) name: &'static str,
    pub(super) category: Category,
    pub(super) summary: &'static str,
}

impl ToolSpec {
    /// A tool named `name` (snake_case, not a built-in tool's name) in `category`.
    pub fn new(name: &'static str, category: Category, summary: &'static str) -> Self {
        ToolSpec {
            name,
            category,
            summary,
        }
    }
}

/// The contract of one action of the app's own, as `describe` shows it. Parameters and result
/// come from the handler's types.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionSpec {
    pub(super) tool: &'static str,
    pub(super) name: &'static str,
    pub(super) summary: &'static str,
    pub(super) when_to_use: &'static str,
    pub(super) when_not_to_use: &'static str,
    pub(super) effect: Effect,
    pub(super) consent: Consent,
    pub(super) scope: Option<Scope>,
    pub(super) aliases: Vec<&'static str>,
    pub(super) topics: Vec<&'static str>,
    pub(super) subjects: Vec<&'static str>,
    pub(super) examples: Vec<(&'static str, Value, &'static str)>,
    pub(super) errors: Vec<(&'static str, &'static str)>,
    pub(super) undo: Option<GameUndo>,
}

/// What a game action changes, so `history.undo` can take it back (see
/// [`ActionSpec::undoable`]). An action that declares nothing is listed as not undoable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GameUndo {
    /// It changes only these resources (type paths, or short names that name one type): their
    /// values are held before and after each call.
    Resources(&'static [&'static str]),
    /// It only adds entities, each named in its reply under one of these keys (an entity row
    /// with `bits`, or a list of them): they are held after each call with what hangs below
    /// them, so undo removes them, however big the world is.
    Spawns(&'static [&'static str]),
    /// It may change any entity or resource: the whole world is held before and after each call
    /// while the world is small enough to read within a frame (`JournalLimits::max_world_entities`,
    /// 500 entities by default, and the journal's byte bound); in a bigger world the call is
    /// listed as not undoable. Declare `Spawns` or `Resources` where they say enough.
    World,
}

impl ActionSpec {
    /// Action `name` of tool `tool`, doing what `summary` says (one sentence). Defaults: a
    /// `write` action without consent.
    pub fn new(tool: &'static str, name: &'static str, summary: &'static str) -> Self {
        ActionSpec {
            tool,
            name,
            summary,
            when_to_use: "",
            when_not_to_use: "",
            effect: Effect::Write,
            consent: Consent::None,
            scope: None,
            aliases: Vec::new(),
            topics: Vec::new(),
            subjects: Vec::new(),
            examples: Vec::new(),
            errors: Vec::new(),
            undo: None,
        }
    }

    /// When this action is the right choice, and when another one is (and which).
    #[must_use]
    pub fn with_when(mut self, to_use: &'static str, not_to_use: &'static str) -> Self {
        self.when_to_use = to_use;
        self.when_not_to_use = not_to_use;
        self
    }

    /// What the action does to the app, and the consent it needs (destructive actions need one).
    #[must_use]
    pub fn with_effect(mut self, effect: Effect, consent: Consent) -> Self {
        self.effect = effect;
        self.consent = consent;
        self
    }

    /// Raises the token scope a session needs to run the action above its effect's (read,
    /// write, admin for destructive): e.g. `admin` for a write that only the developer should run.
    #[must_use]
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// Other names the action answers to.
    #[must_use]
    pub fn with_aliases(mut self, aliases: &[&'static str]) -> Self {
        self.aliases = aliases.to_vec();
        self
    }

    /// Words a model may use for the intent; `search` matches them.
    #[must_use]
    pub fn with_topics(mut self, topics: &[&'static str]) -> Self {
        self.topics = topics.to_vec();
        self
    }

    /// What of the app the action is about (`entity`, `component`, `resource`, `event`,
    /// `message`, `state`, `type`): a query naming such a thing of the game lifts it in `search`.
    #[must_use]
    pub fn with_subjects(mut self, subjects: &[&'static str]) -> Self {
        self.subjects = subjects.to_vec();
        self
    }

    /// An example call; the first one is offered as a ready `nextCall`.
    #[must_use]
    pub fn with_example(
        mut self,
        title: &'static str,
        params: Value,
        expect: &'static str,
    ) -> Self {
        self.examples.push((title, params, expect));
        self
    }

    /// An error code the handler can return, with what to do about it.
    #[must_use]
    pub fn with_error(mut self, code: &'static str, hint: &'static str) -> Self {
        self.errors.push((code, hint));
        self
    }

    /// Declares what the action changes, so the journal can take it back with `history.undo`;
    /// without it, its calls are listed as not undoable (never undone wrongly).
    #[must_use]
    pub fn undoable(mut self, changes: GameUndo) -> Self {
        self.undo = Some(changes);
        self
    }

    pub(crate) fn qualified(&self) -> String {
        format!("{}.{}", self.tool, self.name)
    }
}
