//! What the running app is made of, in words `search` can match: its registered types
//! (components, resources, events, messages, states) with their fields, and its named entities.
//!
//! The engine side publishes a fresh [`AppTerms`] when types or names change (never per query);
//! the gateway indexes the newest one the first time a search needs it.

use std::sync::Arc;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

/// What a term names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TermKind {
    /// A component type.
    Component,
    /// A resource type.
    Resource,
    /// An observer event type.
    Event,
    /// A buffered message type.
    Message,
    /// A state type; its fields are its values.
    State,
    /// A named entity.
    Entity,
    /// A saved world file, by its name (`arena` for `arena.scn.ron`).
    WorldFile,
}

impl TermKind {
    /// The word a hit's explanation uses ("Score is a resource ...").
    pub fn as_str(self) -> &'static str {
        match self {
            TermKind::Component => "component",
            TermKind::Resource => "resource",
            TermKind::Event => "event",
            TermKind::Message => "message",
            TermKind::State => "state",
            TermKind::Entity => "entity",
            TermKind::WorldFile => "world file",
        }
    }

    /// Whether the term is a type (the rest are entities and files).
    pub fn is_type(self) -> bool {
        !matches!(self, TermKind::Entity | TermKind::WorldFile)
    }
}

/// A field of a struct, or a value of an enum or a state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermField {
    /// Its name (`red`, `Playing`).
    pub name: String,
    /// The first line of its doc comment, when the app keeps docs.
    pub docs: Option<String>,
}

/// One thing of the app a query may name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// What it is.
    pub kind: TermKind,
    /// What people call it: a type's short name (`Score`) or an entity's `Name` (`Goblin`).
    pub name: String,
    /// How actions address it: a type's full path, or the entity's name again.
    pub address: String,
    /// Fields of a struct (what a reflect `path` addresses).
    pub fields: Vec<TermField>,
    /// Values of an enum or a state (its variants).
    pub values: Vec<TermField>,
    /// The first line of the type's doc comment, when the app keeps docs.
    pub docs: Option<String>,
    /// For an entity name: how many entities carry it.
    pub count: usize,
    /// Whether the engine provides the type, rather than the game: the game's own types are
    /// what people name, so engine types count for less.
    pub engine: bool,
    /// For an entity term of a game that does not name its entities: the component (full type
    /// path) its entities carry, by whose name people call them (breakout's `Paddle`). Its
    /// `address` is then the one entity's id, or empty when several carry it.
    #[serde(default)]
    pub carried_by: Option<String>,
    /// Whether the type is reflected (its values can be read and written). A game's
    /// unreflected components are published by name only, for the actions that filter by
    /// components.
    #[serde(default = "reflected")]
    pub reflected: bool,
}

fn reflected() -> bool {
    true
}

/// Everything the app offers to search, as published at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppTerms {
    /// Types and entity names, in any order.
    pub terms: Vec<Term>,
    /// Distinct entity names left out because the world had more than the publisher keeps.
    pub names_left_out: usize,
    /// The tools the app added to the catalog (game-defined actions): the game's own way to do
    /// what they match outranks a generic action.
    pub app_tools: Vec<String>,
}

/// The newest [`AppTerms`], shared by the engine (which publishes) and the gateway (which reads).
/// Cloning shares the same feed.
#[derive(Clone, Debug, Default)]
pub struct AppTermsFeed {
    published: Arc<RwLock<Published>>,
}

#[derive(Debug, Default)]
struct Published {
    version: u64,
    terms: Arc<AppTerms>,
}

impl AppTermsFeed {
    /// A feed with nothing published yet.
    pub fn new() -> AppTermsFeed {
        AppTermsFeed::default()
    }

    /// Replaces what search knows about the app.
    pub fn publish(&self, terms: AppTerms) {
        let mut published = self.published.write();
        published.version += 1;
        published.terms = Arc::new(terms);
    }

    /// The newest terms and their version (0 before the first publication).
    pub fn current(&self) -> (u64, Arc<AppTerms>) {
        let published = self.published.read();
        (published.version, Arc::clone(&published.terms))
    }
}
