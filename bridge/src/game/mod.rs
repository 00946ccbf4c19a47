//! Game-defined actions: an app adds its own tools and actions to the catalog while it is built,
//! with the same contract as the built-in ones.
//!
//! A handler is a Bevy system that takes its typed parameters as `In<P>` and returns
//! `Result<R, ToolError>`; any `SystemParam` is usable. `P` and `R` derive their JSON Schemas with
//! `schemars` (descriptions come from doc comments, bounds from `#[schemars(range(..))]` and
//! `#[schemars(length(..))]`): a well-kept derive that reads what the author already writes,
//! where Bevy reflection carries no descriptions or bounds.
//!
//! Every registration goes through the rules codegen applies to the records (descriptions and
//! bounds on every property, `additionalProperties: false`, examples valid against the schema,
//! unique names and aliases, ...) and may not shadow a built-in tool, action or alias. A bad
//! registration stops the app while it is built, with a message naming the action and the JSON
//! pointer; nothing is checked at request time that could have been checked then.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_mcp_bridge::game::{ActionSpec, McpAppExt, ToolSpec};
//! use bevy_mcp_bridge::{BridgeConfig, McpBridgePlugin, ToolError};
//! use bevy_mcp_bridge::catalog::Category;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// How much gold to give.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct GiveGold {
//!     /// Coins to add to the purse.
//!     #[schemars(range(min = 1, max = 1000))]
//!     amount: u32,
//! }
//!
//! /// The purse after the gift.
//! #[derive(Serialize, JsonSchema)]
//! struct Purse {
//!     /// Coins now in the purse.
//!     gold: u32,
//! }
//!
//! #[derive(Resource, Default)]
//! struct Gold(u32);
//!
//! fn give_gold(In(gift): In<GiveGold>, mut gold: ResMut<Gold>) -> Result<Purse, ToolError> {
//!     gold.0 = gold.0.saturating_add(gift.amount);
//!     Ok(Purse { gold: gold.0 })
//! }
//!
//! App::new()
//!     .add_plugins(MinimalPlugins)
//!     .add_plugins(McpBridgePlugin::new(BridgeConfig::default()))
//!     .init_resource::<Gold>()
//!     .add_mcp_tool(ToolSpec::new("game", Category::Gameplay, "The game's own actions."))
//!     .add_mcp_action(
//!         ActionSpec::new("game", "give_gold", "Give the player gold.")
//!             .with_when("To reward the player.", "To take gold away.")
//!             .with_topics(&["gold", "money", "reward"])
//!             .with_example("Ten coins", serde_json::json!({"amount": 10}), "The purse grows by 10."),
//!         give_gold,
//!     )
//!     .run();
//! ```

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy::app::App;
use bevy::ecs::system::{In, IntoSystem, System};
use bevy::prelude::{Resource, World};
use bevy_mcp_codegen::schema::{
    canonical, enum_values, ordered_properties, required_names, type_label,
};
use bevy_mcp_codegen::{Problems, records, validate};
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::ProgressSink;
use mcp_vocabulary::catalog::{
    ActionRecord, Catalog, Category, Consent, Effect, ErrorHint, ExampleRecord, ParamRecord,
    ToolRecord,
};
use mcp_vocabulary::{ErrorCode, ToolError, codes};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::BridgeError;
use crate::runtime::executor::{LongJob, Outcome};

/// A tool of the app's own: a group of its actions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    name: &'static str,
    category: Category,
    summary: &'static str,
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
    tool: &'static str,
    name: &'static str,
    summary: &'static str,
    when_to_use: &'static str,
    when_not_to_use: &'static str,
    effect: Effect,
    consent: Consent,
    aliases: Vec<&'static str>,
    topics: Vec<&'static str>,
    subjects: Vec<&'static str>,
    examples: Vec<(&'static str, Value, &'static str)>,
    errors: Vec<(&'static str, &'static str)>,
    undo: Option<GameUndo>,
}

/// What a game action changes, so `history.undo` can take it back (see
/// [`ActionSpec::undoable`]). An action that declares nothing is listed as not undoable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameUndo {
    /// It changes only these resources (type paths, or short names that name one type): their
    /// values are held before and after each call.
    Resources(&'static [&'static str]),
    /// It may change any entity or resource: the whole world is held before and after each call
    /// (within the journal's byte bound; a larger world makes the call not undoable).
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

    fn qualified(&self) -> String {
        format!("{}.{}", self.tool, self.name)
    }
}

/// A game action that spans frames, as the built-in `watch` and `step_frames` do: polled once per
/// frame after `Last`, with progress; cancellation, deadlines and a session's end call `abort`.
pub trait GameJob: Send + Sync + 'static {
    /// The result, with its derived schema.
    type Output: Serialize + JsonSchema;

    /// Advances by one frame; `Some` when finished.
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Self::Output, ToolError>>;

    /// Undoes temporary changes when the job ends early (cancelled, past its deadline, or after
    /// a panic).
    fn abort(&mut self, _world: &mut World) {}
}

/// Adds game-defined tools and actions to an app (see the [module docs](self)).
pub trait McpAppExt {
    /// Declares a tool of the app's own; its actions are added with [`McpAppExt::add_mcp_action`].
    fn add_mcp_tool(&mut self, tool: ToolSpec) -> &mut Self;

    /// Adds an action whose handler runs within one frame.
    ///
    /// # Panics
    ///
    /// When the registration breaks a rule of the records (the message names the action and the
    /// JSON pointer): the app does not start with a bad catalog.
    fn add_mcp_action<P, R, M>(
        &mut self,
        spec: ActionSpec,
        handler: impl IntoSystem<In<P>, Result<R, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + Send + 'static;

    /// Adds an action that spans frames: `start` runs once and returns the job polled each frame.
    ///
    /// # Panics
    ///
    /// As [`McpAppExt::add_mcp_action`].
    fn add_mcp_long_action<P, J, M>(
        &mut self,
        spec: ActionSpec,
        start: impl IntoSystem<In<P>, Result<J, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        J: GameJob;
}

impl McpAppExt for App {
    fn add_mcp_tool(&mut self, tool: ToolSpec) -> &mut Self {
        let mut actions = self.world_mut().get_resource_or_init::<GameActions>();
        actions
            .declare_tool(tool)
            .unwrap_or_else(|message| panic!("{message}"));
        self
    }

    fn add_mcp_action<P, R, M>(
        &mut self,
        spec: ActionSpec,
        handler: impl IntoSystem<In<P>, Result<R, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + Send + 'static,
    {
        let runner = InstantRunner::<P, R, _> {
            system: IntoSystem::into_system(handler),
            initialized: false,
            types: PhantomData,
        };
        register::<P, R>(self, spec, false, Box::new(runner));
        self
    }

    fn add_mcp_long_action<P, J, M>(
        &mut self,
        spec: ActionSpec,
        start: impl IntoSystem<In<P>, Result<J, ToolError>, M>,
    ) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        J: GameJob,
    {
        let runner = LongRunner::<P, J, _> {
            system: IntoSystem::into_system(start),
            initialized: false,
            types: PhantomData,
        };
        register::<P, J::Output>(self, spec, true, Box::new(runner));
        self
    }
}

fn register<P: JsonSchema, R: JsonSchema>(
    app: &mut App,
    spec: ActionSpec,
    long_running: bool,
    runner: Box<dyn Runner>,
) {
    let qualified = spec.qualified();
    let record = action_record::<P, R>(&spec, long_running);
    let mut actions = app.world_mut().get_resource_or_init::<GameActions>();
    if let Err(message) = actions.add(spec, record, runner) {
        panic!("bevy_mcp_bridge: the app's action {qualified} cannot be registered:\n{message}");
    }
}

/// The action as a record, in the format of `codegen/records`, its schemas derived.
fn action_record<P: JsonSchema, R: JsonSchema>(spec: &ActionSpec, long_running: bool) -> Value {
    let settings = || {
        SchemaSettings::draft2020_12().with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
    };
    let mut params = settings()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<P>()
        .to_value();
    let mut output = settings()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<R>()
        .to_value();
    for schema in [&mut params, &mut output] {
        if let Some(object) = schema.as_object_mut() {
            // The type's own name and doc comment describe the Rust type, not the call.
            object.remove("title");
            object.remove("description");
        }
    }
    // A struct with no fields still takes (and shows) an empty parameter object.
    if params.get("properties").is_none() && params.get("type") == Some(&json!("object")) {
        params["properties"] = json!({});
    }
    json!({
        "name": spec.name,
        "summary": spec.summary,
        "effect": spec.effect.as_str(),
        "consent": spec.consent.as_str(),
        "longRunning": long_running,
        "aliases": spec.aliases,
        "topics": spec.topics,
        "subjects": spec.subjects,
        "whenToUse": spec.when_to_use,
        "whenNotToUse": spec.when_not_to_use,
        "params": params,
        "output": output,
        "examples": spec.examples.iter().map(|(title, params, expect)| json!({"title": title, "params": params, "expect": expect})).collect::<Vec<_>>(),
        "errors": spec.errors.iter().map(|(code, hint)| ((*code).to_owned(), json!(hint))).collect::<Map<String, Value>>(),
    })
}

/// Runs one registered action.
trait Runner: Send + Sync + 'static {
    fn start(&mut self, world: &mut World, params: Value) -> Outcome;
}

struct InstantRunner<P, R, S> {
    system: S,
    initialized: bool,
    types: PhantomData<fn(P) -> R>,
}

impl<P, R, S> Runner for InstantRunner<P, R, S>
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    S: System<In = In<P>, Out = Result<R, ToolError>>,
{
    fn start(&mut self, world: &mut World, params: Value) -> Outcome {
        let result = run_system(&mut self.system, &mut self.initialized, world, params)
            .and_then(|output| output.map_err(BridgeError::Action))
            .and_then(|value| to_value(&value));
        Outcome::Done(result)
    }
}

struct LongRunner<P, J, S> {
    system: S,
    initialized: bool,
    types: PhantomData<fn(P) -> J>,
}

impl<P, J, S> Runner for LongRunner<P, J, S>
where
    P: DeserializeOwned + Send + 'static,
    J: GameJob,
    S: System<In = In<P>, Out = Result<J, ToolError>>,
{
    fn start(&mut self, world: &mut World, params: Value) -> Outcome {
        match run_system(&mut self.system, &mut self.initialized, world, params)
            .and_then(|output| output.map_err(BridgeError::Action))
        {
            Ok(job) => Outcome::Running(Box::new(JobAdapter(job))),
            Err(error) => Outcome::Done(Err(error)),
        }
    }
}

/// Parses the validated params into `P` and runs the handler system on the world.
fn run_system<P: DeserializeOwned + 'static, O, S: System<In = In<P>, Out = O>>(
    system: &mut S,
    initialized: &mut bool,
    world: &mut World,
    params: Value,
) -> Result<O, BridgeError> {
    let params: P = serde_json::from_value(params).map_err(|error| {
        BridgeError::InvalidParams(format!("the parameters do not fit the action: {error}"))
    })?;
    if !*initialized {
        system.initialize(world);
        *initialized = true;
    }
    system.run(params, world).map_err(|error| {
        BridgeError::Action(ToolError::new(
            codes::APP_BUSY,
            format!("the action's system could not run now: {error}"),
        ))
    })
}

fn to_value(value: &impl Serialize) -> Result<Value, BridgeError> {
    serde_json::to_value(value).map_err(|error| BridgeError::NotSerializable {
        type_path: std::any::type_name_of_val(value).to_owned(),
        reason: error.to_string(),
    })
}

/// A [`GameJob`] as the bridge's own jobs run.
struct JobAdapter<J>(J);

impl<J: GameJob> LongJob for JobAdapter<J> {
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let polled = self.0.poll(world, progress)?;
        Some(
            polled
                .map_err(BridgeError::Action)
                .and_then(|value| to_value(&value)),
        )
    }

    fn abort(&mut self, world: &mut World) {
        self.0.abort(world);
    }
}

/// An action the app registered.
struct Registered {
    tool: &'static str,
    name: &'static str,
    effect: Effect,
    undo: Option<GameUndo>,
    runner: Box<dyn Runner>,
}

/// The app's own tools and actions, in registration order, with their records.
#[derive(Resource, Default)]
pub struct GameActions {
    tools: Vec<ToolSpec>,
    /// Each tool's record (the `codegen/records` format), by tool name.
    records: BTreeMap<&'static str, Value>,
    actions: Vec<Registered>,
}

impl std::fmt::Debug for GameActions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameActions")
            .field("tools", &self.tools)
            .field("actions", &self.actions.len())
            .finish()
    }
}

impl GameActions {
    fn declare_tool(&mut self, tool: ToolSpec) -> Result<(), String> {
        if CATALOG.tool(tool.name).is_some() {
            return Err(format!(
                "bevy_mcp_bridge: the app's tool \"{}\" would shadow the built-in tool of that name; pick another name",
                tool.name
            ));
        }
        if self.tools.iter().any(|known| known.name == tool.name) {
            return Err(format!(
                "bevy_mcp_bridge: the app's tool \"{}\" is declared twice",
                tool.name
            ));
        }
        self.records.insert(
            tool.name,
            json!({"tool": tool.name, "category": tool.category.as_str(), "summary": tool.summary, "protected": false, "actions": []}),
        );
        self.tools.push(tool);
        Ok(())
    }

    /// Checks the action with every rule, then keeps it; nothing is kept when a rule fails.
    fn add(
        &mut self,
        spec: ActionSpec,
        record: Value,
        runner: Box<dyn Runner>,
    ) -> Result<(), String> {
        let Some(tool_record) = self.records.get(spec.tool) else {
            return Err(format!(
                "no tool \"{}\" was declared: call add_mcp_tool(ToolSpec::new(\"{}\", ..)) first",
                spec.tool, spec.tool
            ));
        };
        let mut candidate = tool_record.clone();
        if let Some(actions) = candidate["actions"].as_array_mut() {
            actions.push(record);
        }
        let mut files = BTreeMap::new();
        for (name, existing) in &self.records {
            let value = if *name == spec.tool {
                candidate.clone()
            } else {
                existing.clone()
            };
            files.insert(format!("{name}.json"), value);
        }
        let checked = records::from_values(files).and_then(|set| validate::validate(&set));
        let mut problems: Vec<String> = match checked {
            Ok(()) => Vec::new(),
            Err(problems) => problem_lines(&problems),
        };
        problems.extend(shadowing(&spec));
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        self.records.insert(spec.tool, candidate);
        self.actions.push(Registered {
            tool: spec.tool,
            name: spec.name,
            effect: spec.effect,
            undo: spec.undo,
            runner,
        });
        Ok(())
    }

    /// The app's tools as `{tool, category, summary, actions}` rows, for `app_info`.
    pub fn describe_tools(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|tool| {
                let actions: Vec<&str> = self
                    .actions
                    .iter()
                    .filter(|action| action.tool == tool.name)
                    .map(|action| action.name)
                    .collect();
                json!({"tool": tool.name, "category": tool.category.as_str(), "summary": tool.summary, "actions": actions})
            })
            .collect()
    }

    /// Whether `tool` is one of the app's tools.
    pub fn has_tool(&self, tool: &str) -> bool {
        self.tools.iter().any(|known| known.name == tool)
    }

    /// What action `action` of the app's tool `tool` does to the world, and how the journal takes
    /// it back (when it declared how).
    pub fn journaling(&self, tool: &str, action: &str) -> Option<(Effect, Option<GameUndo>)> {
        self.actions
            .iter()
            .find(|registered| registered.tool == tool && registered.name == action)
            .map(|registered| (registered.effect, registered.undo))
    }

    /// Runs action `action` of the app's tool `tool` with validated `params`.
    pub(crate) fn start(
        &mut self,
        world: &mut World,
        tool: &str,
        action: &str,
        params: Value,
    ) -> Outcome {
        let Some(registered) = self
            .actions
            .iter_mut()
            .find(|registered| registered.tool == tool && registered.name == action)
        else {
            return Outcome::Done(Err(BridgeError::InvalidParams(format!(
                "{tool}.{action} is not an action of this app"
            ))));
        };
        registered.runner.start(world, params)
    }

    /// The catalog served: the generated one, then the app's tools (leaked once: a catalog lives
    /// as long as the app that serves it).
    pub fn catalog(&self) -> &'static Catalog {
        if self.tools.is_empty() {
            return &CATALOG;
        }
        let tools: Vec<ToolRecord> = self
            .tools
            .iter()
            .filter_map(|tool| {
                self.records
                    .get(tool.name)
                    .map(|record| tool_record(tool, record))
            })
            .collect();
        let mut hasher = std::hash::DefaultHasher::new();
        canonical(&json!(self.records)).hash(&mut hasher);
        Catalog::extended(
            &CATALOG,
            tools,
            format!("{}+{:016x}", CATALOG.revision, hasher.finish()),
        )
    }
}

/// Runs a game action on the world, keeping the registry even if the handler panics (the panic
/// is caught here and reported as `HANDLER_PANICKED` by the caller).
pub(crate) fn start(world: &mut World, tool: &str, action: &str, params: Value) -> Outcome {
    let started =
        world.try_resource_scope(|world, mut actions: bevy::prelude::Mut<GameActions>| {
            catch_unwind(AssertUnwindSafe(|| {
                actions.start(world, tool, action, params)
            }))
        });
    match started {
        None => Outcome::Done(Err(BridgeError::InvalidParams(
            "this app registered no actions of its own".to_owned(),
        ))),
        Some(Ok(outcome)) => outcome,
        Some(Err(payload)) => std::panic::resume_unwind(payload),
    }
}

/// A name or alias of the app's action that a built-in one already uses.
fn shadowing(spec: &ActionSpec) -> Vec<String> {
    std::iter::once(spec.name)
        .chain(spec.aliases.iter().copied())
        .filter(|name| !CATALOG.actions_named(name).is_empty())
        .map(|name| {
            let owner = CATALOG
                .actions_named(name)
                .first()
                .map(|found| format!("{}.{}", found.tool.name, found.action.name))
                .unwrap_or_default();
            format!(
                "{}: \"{name}\" would shadow the built-in action {owner}; pick another name",
                spec.qualified()
            )
        })
        .collect()
}

fn problem_lines(problems: &Problems) -> Vec<String> {
    problems.to_string().lines().map(str::to_owned).collect()
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn leak_list(items: &[Value]) -> &'static [&'static str] {
    let strings: Vec<&'static str> = items.iter().filter_map(Value::as_str).map(leak).collect();
    Box::leak(strings.into_boxed_slice())
}

/// A checked tool record as the catalog's static tables.
fn tool_record(tool: &ToolSpec, record: &Value) -> ToolRecord {
    let actions: Vec<ActionRecord> = record["actions"]
        .as_array()
        .map(|actions| actions.iter().map(action_from_record).collect())
        .unwrap_or_default();
    ToolRecord {
        name: tool.name,
        category: tool.category,
        summary: tool.summary,
        protected: false,
        actions: Box::leak(actions.into_boxed_slice()),
    }
}

fn action_from_record(record: &Value) -> ActionRecord {
    let text = |key: &str| leak(record[key].as_str().unwrap_or_default());
    let input = &record["params"];
    let required = required_names(input);
    let params: Vec<ParamRecord> = input
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| ordered_properties(properties, &required))
        .unwrap_or_default()
        .into_iter()
        .map(|(name, schema)| ParamRecord {
            name: leak(name),
            type_label: leak(&type_label(schema)),
            required: required.contains(&name),
            description: leak(
                schema
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            enum_values: Box::leak(
                enum_values(schema)
                    .iter()
                    .map(|value| leak(value))
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            ),
            default_json: schema
                .get("default")
                .map(|default| leak(&canonical(default))),
            schema: leak(&canonical(schema)),
        })
        .collect();
    let examples: Vec<ExampleRecord> = record["examples"]
        .as_array()
        .map(|examples| {
            examples
                .iter()
                .map(|example| ExampleRecord {
                    title: leak(example["title"].as_str().unwrap_or_default()),
                    params_json: leak(&canonical(&example["params"])),
                    expect: leak(example["expect"].as_str().unwrap_or_default()),
                })
                .collect()
        })
        .unwrap_or_default();
    let errors: Vec<ErrorHint> = record["errors"]
        .as_object()
        .map(|errors| {
            errors
                .iter()
                .map(|(code, hint)| ErrorHint {
                    code: ErrorCode::new(leak(code)),
                    hint: leak(hint.as_str().unwrap_or_default()),
                })
                .collect()
        })
        .unwrap_or_default();
    ActionRecord {
        name: text("name"),
        summary: text("summary"),
        effect: record["effect"]
            .as_str()
            .and_then(Effect::parse)
            .unwrap_or(Effect::Write),
        consent: record["consent"]
            .as_str()
            .and_then(Consent::parse)
            .unwrap_or(Consent::None),
        long_running: record["longRunning"].as_bool().unwrap_or(false),
        aliases: leak_list(record["aliases"].as_array().map_or(&[][..], Vec::as_slice)),
        topics: leak_list(record["topics"].as_array().map_or(&[][..], Vec::as_slice)),
        subjects: leak_list(record["subjects"].as_array().map_or(&[][..], Vec::as_slice)),
        when_to_use: text("whenToUse"),
        when_not_to_use: text("whenNotToUse"),
        params: Box::leak(params.into_boxed_slice()),
        input_schema: leak(&canonical(input)),
        output_schema: leak(&canonical(&record["output"])),
        examples: Box::leak(examples.into_boxed_slice()),
        errors: Box::leak(errors.into_boxed_slice()),
    }
}
