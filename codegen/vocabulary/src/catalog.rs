//! The catalog record types: what every tool and action is, as `static` data.
//!
//! The values live in the generated crate, written by codegen from the canonical records in
//! `codegen/records/`. This module only defines their shape and the lookups the gateway needs,
//! so neither the transport nor the generated tables depend on each other.

use std::fmt;

use crate::codes::ErrorCode;

/// The whole catalog: every parent tool, in a stable order, and the revision of its records.
#[derive(Debug)]
pub struct Catalog {
    /// A short hash of the normalized records; changes whenever any record changes.
    pub revision: &'static str,
    /// Parent tools, ordered by category and then name.
    pub tools: &'static [ToolRecord],
    /// Prompts: procedures that use the tools well (MCP `prompts/list`), ordered by name.
    pub prompts: &'static [PromptRecord],
    /// How people say what the catalog names otherwise: `search` reads it. Written in
    /// `native-transport/search/phrasebook/`, validated by codegen.
    pub phrasebook: Phrasebook,
    /// How people asked for each action in the labelled phrasings (never the held-out ones):
    /// `search` learns which words go with which action from it. Counted by codegen.
    pub usage: &'static [ActionUsage],
}

/// The words of the labelled phrasings that ask for one action, counted: what people say when
/// they want it, in their own words rather than the record's.
#[derive(Clone, Copy, Debug)]
pub struct ActionUsage {
    /// The action, as `tool.action`.
    pub action: &'static str,
    /// How many phrasings asked for it.
    pub phrasings: u32,
    /// Each word (stemmed as search stems it, stop words kept) and in how many of those
    /// phrasings it appears, ordered by word.
    pub words: &'static [(&'static str, u32)],
}

/// The words of game developers and players (device and editor words, symptoms, idioms) mapped
/// to the catalog's own words, and the phrases that ask for destruction in so many words.
#[derive(Clone, Copy, Debug)]
pub struct Phrasebook {
    /// Each phrase and the catalog words it means, ordered by phrase.
    pub phrases: &'static [Phrase],
    /// Phrases that ask to delete, remove, reset or quit something: without one of them, search
    /// never offers a destructive action among its first three results.
    pub asks_destruction: &'static [&'static str],
}

impl Phrasebook {
    /// No phrases: search matches the records' own words only.
    pub const EMPTY: Phrasebook = Phrasebook {
        phrases: &[],
        asks_destruction: &[],
    };
}

/// One phrase of the phrasebook.
#[derive(Clone, Copy, Debug)]
pub struct Phrase {
    /// What people write (`thumbstick`, `ctrl+z`, `bring it back`).
    pub says: &'static str,
    /// The catalog's words for it: words of some action's name, aliases or topics (`gamepad`).
    pub means: &'static str,
}

/// A prompt: a procedure a user starts by name (a slash command in Claude Code), whose text
/// leads a model through the tools. Written in `codegen/prompts/`, validated by codegen.
#[derive(Debug)]
pub struct PromptRecord {
    /// Prompt name, unique, snake_case.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// One sentence on what the prompt does.
    pub description: &'static str,
    /// The arguments the text takes, in order.
    pub arguments: &'static [PromptArgument],
    /// The message the prompt sends, with `{argument}` placeholders.
    pub text: &'static str,
}

/// One argument of a prompt.
#[derive(Debug)]
pub struct PromptArgument {
    /// Argument name, as in the text's `{name}` placeholder.
    pub name: &'static str,
    /// What to give.
    pub description: &'static str,
    /// Whether a value must be given; an optional one has a `default`.
    pub required: bool,
    /// What the placeholder becomes when no value is given (optional arguments).
    pub default: &'static str,
    /// What the live app offers as completions for it, if anything.
    pub completes: Option<Completes>,
}

/// What a prompt or resource-template argument is completed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Completes {
    /// Names of the app's entities.
    Entity,
    /// The app's registered types (components, resources, events, messages, states).
    Type,
    /// Tool names of the catalog.
    Tool,
}

impl Completes {
    /// Every kind, in order.
    pub const ALL: [Completes; 3] = [Completes::Entity, Completes::Type, Completes::Tool];

    /// The wire name (`entity`, `type`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            Completes::Entity => "entity",
            Completes::Type => "type",
            Completes::Tool => "tool",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Completes> {
        Completes::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// One parent tool (`inspect`, `control_entity`, ...): a group of related actions.
#[derive(Debug, Clone)]
pub struct ToolRecord {
    /// Tool name, unique in the catalog.
    pub name: &'static str,
    /// The category the tool belongs to; visibility can be switched per category.
    pub category: Category,
    /// One sentence saying what the tool is for.
    pub summary: &'static str,
    /// Protected tools can never be disabled.
    pub protected: bool,
    /// The tool's actions, in record order.
    pub actions: &'static [ActionRecord],
}

/// One action of a tool: its contract, as a model discovers it through `describe`.
#[derive(Debug, Clone)]
pub struct ActionRecord {
    /// Action name, unique within its tool.
    pub name: &'static str,
    /// One sentence saying what the action does, written for a model that has never seen Bevy.
    pub summary: &'static str,
    /// What the action does to the app.
    pub effect: Effect,
    /// The acknowledgement a caller must send before the action runs.
    pub consent: Consent,
    /// The least token scope a session needs to run the action (by default the effect's:
    /// read, write, or admin for destructive actions).
    pub scope: Scope,
    /// Whether the action spans frames (it reports progress and can be cancelled mid-way).
    pub long_running: bool,
    /// Other names that resolve to this action.
    pub aliases: &'static [&'static str],
    /// Words a model may use for the intent (`move`, `freeze`, ...); they feed `search`.
    pub topics: &'static [&'static str],
    /// What of the app the action is about, from [`SUBJECTS`]: a query naming such a thing of
    /// the running game (a resource, an entity ...) lifts the action in `search`.
    pub subjects: &'static [&'static str],
    /// When this action is the right choice.
    pub when_to_use: &'static str,
    /// When another action is the right choice, and which.
    pub when_not_to_use: &'static str,
    /// The action's own parameters: required ones first, then the optional ones by name.
    pub params: &'static [ParamRecord],
    /// The self-contained JSON Schema (2020-12) of the action's `params` object.
    pub input_schema: &'static str,
    /// The self-contained JSON Schema of the action's result.
    pub output_schema: &'static str,
    /// Example calls; the first one is the one `describe` offers as a ready `nextCall`.
    pub examples: &'static [ExampleRecord],
    /// Error codes the action can raise, each with a hint on what to do next.
    pub errors: &'static [ErrorHint],
}

/// The things of an app an action can be about ([`ActionRecord::subjects`]): a named entity, a
/// component, resource, event, message or state type, any type, or a saved world file.
pub const SUBJECTS: [&str; 8] = [
    "entity",
    "component",
    "resource",
    "event",
    "message",
    "state",
    "type",
    "worldFile",
];

/// One parameter of an action.
#[derive(Debug)]
pub struct ParamRecord {
    /// Parameter name, as sent inside `params`.
    pub name: &'static str,
    /// A short type label for humans and models (`string`, `integer | string`, `array<number>`).
    pub type_label: &'static str,
    /// Whether the parameter must be present.
    pub required: bool,
    /// What the parameter means and which values it takes.
    pub description: &'static str,
    /// The allowed values when the parameter is an enumeration; empty otherwise.
    pub enum_values: &'static [&'static str],
    /// The default value as compact JSON, when the parameter has one.
    pub default_json: Option<&'static str>,
    /// The parameter's self-contained JSON Schema as canonical JSON.
    pub schema: &'static str,
}

/// One example call of an action.
#[derive(Debug)]
pub struct ExampleRecord {
    /// What the example does, in a few words.
    pub title: &'static str,
    /// The `params` object of the call, as canonical JSON.
    pub params_json: &'static str,
    /// What the caller should expect back.
    pub expect: &'static str,
}

/// A hint attached to an error code an action can raise.
#[derive(Debug)]
pub struct ErrorHint {
    /// The error code (`ENTITY_NOT_FOUND`, ...).
    pub code: ErrorCode,
    /// What to do about it.
    pub hint: &'static str,
}

/// What an action does to the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Observes only.
    Read,
    /// Changes state that can be changed back.
    Write,
    /// Removes or ends something that cannot be restored by another call.
    Destructive,
}

/// The acknowledgement an action needs before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Consent {
    /// Runs without acknowledgement.
    None,
    /// Needs a single-use grant acknowledged as `explicit`.
    Explicit,
    /// Needs a single-use grant acknowledged as `elevated` (ends the app or wipes the world).
    Elevated,
}

/// What a session's capability token lets it run. Scopes are ordered: each allows what the
/// ones before it do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Discovery and read actions.
    Read,
    /// Plus actions that change the app in ways that can be changed back.
    Write,
    /// Plus destructive actions and changing the session's tools. A server without tokens
    /// gives every session this scope.
    #[default]
    Admin,
}

/// The group a tool belongs to; visibility can be switched per category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Inspection and control of entities and time; always available.
    Core,
    /// Worlds, resources and assets as a whole.
    World,
    /// Gameplay events and watching changes over time.
    Gameplay,
    /// Logs, diagnostics and information about the app.
    Utility,
}

impl Effect {
    /// Every effect, in order.
    pub const ALL: [Effect; 3] = [Effect::Read, Effect::Write, Effect::Destructive];

    /// The wire name (`read`, `write`, `destructive`).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Destructive => "destructive",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Effect> {
        Effect::ALL
            .into_iter()
            .find(|effect| effect.as_str() == name)
    }
}

impl Consent {
    /// Every consent level, in order.
    pub const ALL: [Consent; 3] = [Consent::None, Consent::Explicit, Consent::Elevated];

    /// The wire name (`none`, `explicit`, `elevated`).
    pub fn as_str(self) -> &'static str {
        match self {
            Consent::None => "none",
            Consent::Explicit => "explicit",
            Consent::Elevated => "elevated",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Consent> {
        Consent::ALL
            .into_iter()
            .find(|consent| consent.as_str() == name)
    }
}

impl Scope {
    /// Every scope, from the least to the most.
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Admin];

    /// The wire name (`read`, `write`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == name)
    }

    /// The scope an action of this effect needs unless its record asks for more.
    pub fn for_effect(effect: Effect) -> Scope {
        match effect {
            Effect::Read => Scope::Read,
            Effect::Write => Scope::Write,
            Effect::Destructive => Scope::Admin,
        }
    }

    /// Whether a session of this scope may run an action that needs `needed`.
    pub fn allows(self, needed: Scope) -> bool {
        self >= needed
    }
}

impl Category {
    /// Every category, in catalog order.
    pub const ALL: [Category; 4] = [
        Category::Core,
        Category::World,
        Category::Gameplay,
        Category::Utility,
    ];

    /// The wire name (`core`, `world`, `gameplay`, `utility`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Core => "core",
            Category::World => "world",
            Category::Gameplay => "gameplay",
            Category::Utility => "utility",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|category| category.as_str() == name)
    }
}

macro_rules! display_as_str {
    ($($ty:ty),*) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(Effect, Consent, Scope, Category);

/// An action found by name or alias.
#[derive(Clone, Copy, Debug)]
pub struct ResolvedAction {
    /// The tool the action belongs to.
    pub tool: &'static ToolRecord,
    /// The canonical action.
    pub action: &'static ActionRecord,
    /// The alias the caller used, when it was not the canonical name.
    pub resolved_from: Option<&'static str>,
}

impl Catalog {
    /// The tool with exactly this name.
    pub fn tool(&'static self, name: &str) -> Option<&'static ToolRecord> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// The action `action` (name or alias) of tool `tool`.
    pub fn action(&'static self, tool: &str, action: &str) -> Option<ResolvedAction> {
        self.tool(tool)?.resolve(action)
    }

    /// Every action, in any tool, whose name or alias is `name`, in catalog order.
    pub fn actions_named(&'static self, name: &str) -> Vec<ResolvedAction> {
        self.tools
            .iter()
            .filter_map(|tool| tool.resolve(name))
            .collect()
    }

    /// Every action of the catalog with its tool, in catalog order.
    pub fn all_actions(
        &'static self,
    ) -> impl Iterator<Item = (&'static ToolRecord, &'static ActionRecord)> {
        self.tools
            .iter()
            .flat_map(|tool| tool.actions.iter().map(move |action| (tool, action)))
    }

    /// The prompt with exactly this name.
    pub fn prompt(&'static self, name: &str) -> Option<&'static PromptRecord> {
        self.prompts.iter().find(|prompt| prompt.name == name)
    }

    /// The number of actions in the whole catalog.
    pub fn action_count(&self) -> usize {
        self.tools.iter().map(|tool| tool.actions.len()).sum()
    }

    /// A catalog of `base`'s tools followed by `more`: actions an app adds while it is built,
    /// next to the generated ones. The tables are leaked once, on purpose: a catalog lives as long
    /// as the app that serves it, and every lookup hands out `&'static` records.
    ///
    /// Tools of `more` whose names `base` already has are the caller's to refuse first (the
    /// rules codegen applies to records apply to added ones too).
    pub fn extended(
        base: &'static Catalog,
        more: Vec<ToolRecord>,
        revision: String,
    ) -> &'static Catalog {
        let tools: Vec<ToolRecord> = base.tools.iter().cloned().chain(more).collect();
        Box::leak(Box::new(Catalog {
            revision: Box::leak(revision.into_boxed_str()),
            tools: Box::leak(tools.into_boxed_slice()),
            prompts: base.prompts,
            phrasebook: base.phrasebook,
            usage: base.usage,
        }))
    }
}

impl ToolRecord {
    /// The action with this name, or the action this alias stands for.
    pub fn resolve(&'static self, name: &str) -> Option<ResolvedAction> {
        if let Some(action) = self.actions.iter().find(|action| action.name == name) {
            return Some(ResolvedAction {
                tool: self,
                action,
                resolved_from: None,
            });
        }
        self.actions.iter().find_map(|action| {
            let alias = action.aliases.iter().find(|alias| **alias == name)?;
            Some(ResolvedAction {
                tool: self,
                action,
                resolved_from: Some(*alias),
            })
        })
    }
}

impl ActionRecord {
    /// The parameter with exactly this name.
    pub fn param(&self, name: &str) -> Option<&ParamRecord> {
        self.params.iter().find(|param| param.name == name)
    }

    /// The hint for an error code, when the records give one.
    pub fn error_hint(&self, code: ErrorCode) -> Option<&'static str> {
        self.errors
            .iter()
            .find(|error| error.code == code)
            .map(|error| error.hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_ordered_and_follow_effects() {
        assert!(Scope::Admin.allows(Scope::Write) && Scope::Write.allows(Scope::Read));
        assert!(!Scope::Read.allows(Scope::Write) && !Scope::Write.allows(Scope::Admin));
        assert_eq!(Scope::for_effect(Effect::Destructive), Scope::Admin);
        assert_eq!(Scope::parse("write"), Some(Scope::Write));
        assert_eq!(Scope::parse("root"), None);
        assert_eq!(
            Scope::default(),
            Scope::Admin,
            "no tokens: every session may do all"
        );
    }

    static ACTIONS: [ActionRecord; 1] = [ActionRecord {
        name: "despawn",
        summary: "Remove an entity.",
        effect: Effect::Destructive,
        consent: Consent::Explicit,
        scope: Scope::Admin,
        long_running: false,
        aliases: &["delete", "remove_entity"],
        topics: &["delete"],
        subjects: &[],
        when_to_use: "",
        when_not_to_use: "",
        params: &[ParamRecord {
            name: "entity",
            type_label: "integer | string",
            required: true,
            description: "The entity.",
            enum_values: &[],
            default_json: None,
            schema: "{}",
        }],
        input_schema: "{}",
        output_schema: "{}",
        examples: &[],
        errors: &[ErrorHint {
            code: ErrorCode::new("ENTITY_NOT_FOUND"),
            hint: "List entities first.",
        }],
    }];
    static TOOLS: [ToolRecord; 1] = [ToolRecord {
        name: "control_entity",
        category: Category::Core,
        summary: "Change entities.",
        protected: false,
        actions: &ACTIONS,
    }];
    static CATALOG: Catalog = Catalog {
        revision: "test",
        tools: &TOOLS,
        prompts: &[],
        phrasebook: Phrasebook::EMPTY,
        usage: &[],
    };

    #[test]
    fn resolves_names_and_aliases() {
        let direct = CATALOG
            .action("control_entity", "despawn")
            .map(|found| found.resolved_from);
        assert_eq!(direct, Some(None));
        let alias = CATALOG
            .action("control_entity", "delete")
            .map(|found| found.resolved_from);
        assert_eq!(alias, Some(Some("delete")));
        assert!(CATALOG.action("control_entity", "Despawn").is_none());
        assert!(CATALOG.action("inspect", "despawn").is_none());
        assert_eq!(CATALOG.actions_named("remove_entity").len(), 1);
    }

    #[test]
    fn a_catalog_can_hold_actions_added_at_run_time() {
        let extra = ToolRecord {
            name: "game",
            category: Category::Gameplay,
            summary: "The game's own actions.",
            protected: false,
            actions: Box::leak(Box::new([ActionRecord {
                name: "spawn_wave",
                ..ACTIONS[0].clone()
            }])),
        };
        let extended = Catalog::extended(&CATALOG, vec![extra], "test+game".to_owned());
        assert_eq!(extended.tools.len(), 2);
        assert!(extended.action("game", "spawn_wave").is_some());
        assert!(extended.action("control_entity", "delete").is_some());
        assert_eq!(extended.revision, "test+game");
        assert_eq!(extended.action_count(), 2);
    }

    #[test]
    fn wire_names_round_trip() {
        for effect in Effect::ALL {
            assert_eq!(Effect::parse(effect.as_str()), Some(effect));
        }
        for consent in Consent::ALL {
            assert_eq!(Consent::parse(consent.as_str()), Some(consent));
        }
        for category in Category::ALL {
            assert_eq!(Category::parse(category.as_str()), Some(category));
        }
        assert_eq!(Effect::parse("Read"), None);
    }

    #[test]
    fn finds_params_and_error_hints() {
        let action = &ACTIONS[0];
        assert!(action.param("entity").is_some_and(|param| param.required));
        assert!(action.param("entities").is_none());
        assert_eq!(
            action.error_hint(ErrorCode::new("ENTITY_NOT_FOUND")),
            Some("List entities first.")
        );
        assert_eq!(action.error_hint(ErrorCode::new("TYPE_NOT_FOUND")), None);
    }
}
