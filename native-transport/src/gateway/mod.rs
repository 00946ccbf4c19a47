//! The gateway tool: one static tool through which a model describes, searches,
//! executes and configures every action of the catalog.
//!
//! `describe`, `search` and `configure` answer here, from the catalog and the session's state,
//! without touching the app. `execute` runs the checks of DESIGN section 3 in order and hands a
//! validated [`ExecutePlan`] to the transport, which runs it through [`crate::Dispatch`].

mod arguments;
mod configure;
mod consent;
mod describe;
mod execute;
pub mod guidance;
mod params_check;
mod result;
mod search;
mod shaping;
pub mod tool;

use mcp_vocabulary::{ErrorCode, ToolError, codes, next_call};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::app_terms::AppTermsFeed;
use crate::catalog::{ActionRecord, Catalog, Category, Effect, Scope, ToolRecord};
use crate::config::ServerConfig;
use crate::dispatch::ImageContent;
use crate::error::TransportError;
use crate::identity::Identity;
use arguments::*;
pub use consent::ConsentLedger;
use guidance::{MAX_NAME_CHARS, MAX_QUERY_CHARS, clip, suggest};
use parking_lot::Mutex;
use result::*;
pub use result::{Finished, ToolResult};
pub use shaping::{Detail, HARD_MAX_BYTES, ROW_CAP, STRING_CAP};

/// The operations of the gateway tool.
pub const OPERATIONS: [&str; 4] = ["describe", "search", "execute", "configure"];

/// Which tools a session starts with; the visibility tool's `reset` returns to it.
#[derive(Clone, Debug, Default)]
pub struct StartVisibility {
    /// Tools disabled at start (protected tools and the core category stay enabled).
    pub disabled_tools: Vec<String>,
    /// Categories disabled at start (`core` is ignored).
    pub disabled_categories: Vec<Category>,
}

/// One session's gateway state: its token's scope, enabled tools and consent grants.
#[derive(Debug, Default)]
pub struct Visibility {
    /// What the session's token lets it run (`admin` without tokens, and for calls in-process).
    scope: Scope,
    disabled: BTreeSet<&'static str>,
    start: BTreeSet<&'static str>,
    /// Grants issued and used in this session.
    pub consent: ConsentLedger,
}

impl Visibility {
    /// Whether `tool` may be executed.
    pub fn is_enabled(&self, tool: &str) -> bool {
        !self.disabled.contains(tool)
    }

    /// What the session's token lets it run.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The names of the tools disabled in this session, sorted.
    pub(crate) fn disabled_tools(&self) -> Vec<String> {
        self.disabled
            .iter()
            .map(|name| (*name).to_owned())
            .collect()
    }

    /// What the session may see, without its consent ledger: read-only answers work on this
    /// copy, so the session's lock is not held while they are built.
    pub(crate) fn view(&self) -> Visibility {
        Visibility {
            scope: self.scope,
            disabled: self.disabled.clone(),
            start: self.start.clone(),
            consent: ConsentLedger::default(),
        }
    }
}

/// What `prepare` decided.
#[derive(Debug)]
pub enum Prepared {
    /// Answered here, without the app.
    Reply {
        /// The reply object (or the error object).
        value: Arc<Value>,
        /// The reply as compact JSON text, when the gateway keeps it (the catalog `describe`,
        /// whose bytes only change with the session's visibility): the text content is then not
        /// serialized again.
        text: Option<Arc<str>>,
        /// The error's code, when the reply is an error.
        error: Option<ErrorCode>,
        /// What the call named, when it was an `execute` (for the audit trail).
        execute: Option<ExecuteAttempt>,
    },
    /// A validated action to run through `Dispatch`.
    Execute(ExecutePlan),
}

/// An `execute` the gateway answered itself (refused, or run locally), as the audit records it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecuteAttempt {
    /// `tool.action`: canonical when it resolved, else as called (clipped).
    pub action: String,
    /// The action's effect, when it resolved.
    pub effect: Option<Effect>,
    /// The params the call sent, handed back (`null` when it sent none).
    pub params: Value,
}

/// What the catalog `describe` depends on: the session's scope and its disabled tools.
type OverviewKey = (Scope, BTreeSet<&'static str>);

/// Says in a `describe` or `search` row whether the session may run the action, and else the
/// scope it needs. Nothing is added for a session that may run everything (a server without
/// tokens, or an `admin` token), so their replies stay as small as ever.
pub(crate) fn mark_runnable(
    row: &mut Map<String, Value>,
    state: &Visibility,
    action: &ActionRecord,
) {
    if state.scope == Scope::Admin {
        return;
    }
    let may_run = state.scope.allows(action.scope);
    row.insert("mayRun".to_owned(), json!(may_run));
    if !may_run {
        row.insert("needsScope".to_owned(), json!(action.scope.as_str()));
    }
}

/// Refuses an action beyond the session's scope, before anything else about the call is
/// looked at (nothing runs, nothing changes).
pub(crate) fn check_scope(
    state: &Visibility,
    tool: &ToolRecord,
    action: &ActionRecord,
) -> Result<(), ToolError> {
    if state.scope.allows(action.scope) {
        return Ok(());
    }
    Err(ToolError::new(
        codes::SCOPE_DENIED,
        format!(
            "{}.{} needs a token of scope {}; this session's token has scope {}, so nothing was run",
            tool.name, action.name, action.scope, state.scope
        ),
    )
    .hint(format!(
        "A session keeps the scope of the token it started with. For {} actions, ask the app's owner for a token of scope {} and start a new session with it; describe shows which actions this session may run (mayRun).",
        action.scope, action.scope
    ))
    .details(json!({"needsScope": action.scope.as_str(), "sessionScope": state.scope.as_str()}))
    .next_call(next_call::describe(Some(tool.name), None, None)))
}

/// A reply the gateway keeps, with its compact JSON text.
#[derive(Debug, Clone)]
struct CachedReply {
    value: Arc<Value>,
    text: Arc<str>,
}

/// A validated `execute`.
#[derive(Debug, Clone)]
pub struct ExecutePlan {
    /// The tool.
    pub tool: &'static ToolRecord,
    /// The canonical action.
    pub action: &'static ActionRecord,
    /// The alias the caller used, if any.
    pub resolved_from: Option<&'static str>,
    /// The validated params.
    pub params: Value,
    /// How long the transport waits.
    pub timeout: Duration,
    /// Result shaping.
    pub detail: Detail,
    /// Largest result in bytes.
    pub max_bytes: usize,
}

/// The gateway: the catalog, the compiled per-action schemas, and the session start state.
pub struct Gateway {
    catalog: &'static Catalog,
    identity: Identity,
    /// The `tools/list` result, built once: its bytes never change.
    tools_list: Value,
    /// The catalog tool `configure` runs, from the identity.
    configure_tool: Option<&'static ToolRecord>,
    validators: BTreeMap<(&'static str, &'static str), jsonschema::Validator>,
    /// Output schemas, compiled when results are checked (by default in debug builds): every
    /// result is then checked against its record, so a handler and its record cannot drift apart
    /// unnoticed.
    output_validators: BTreeMap<(&'static str, &'static str), jsonschema::Validator>,
    search_index: mcp_search::SearchIndex,
    /// The catalog `describe` answer per set of disabled tools, built once each.
    overviews: Mutex<Vec<(OverviewKey, CachedReply)>>,
    /// The running app's terms, when it publishes them (world-aware search).
    world: mcp_search::WorldCache,
    start: BTreeSet<&'static str>,
    default_timeout: Duration,
    max_timeout: Duration,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("catalog", &self.catalog.revision)
            .field("actions", &self.validators.len())
            .finish()
    }
}

impl Gateway {
    /// Compiles every action's schema. Fails when a schema does not compile (codegen prevents it).
    /// Takes the call deadlines and whether results are checked from `config`.
    pub fn new(
        catalog: &'static Catalog,
        start: &StartVisibility,
        config: &ServerConfig,
    ) -> Result<Gateway, TransportError> {
        let default_timeout = config.limits.default_call_timeout;
        let max_timeout = config.limits.max_call_timeout;
        let check_outputs = config.check_output_schemas;
        let identity = config.identity.clone();
        tool::check_identity(&identity).map_err(TransportError::Catalog)?;
        tool::check_live_resources(catalog, &identity).map_err(TransportError::Catalog)?;
        let configure_tool = match &identity.configure_tool {
            None => None,
            Some(name) => Some(catalog.tool(name).ok_or_else(|| {
                TransportError::Catalog(format!(
                    "the identity names \"{name}\" as the configure tool, and the catalog has no such tool"
                ))
            })?),
        };
        let compile = |tool: &ToolRecord, action: &ActionRecord, schema: &str| {
            let unusable = |error: String| {
                TransportError::Catalog(format!("{}.{}: {error}", tool.name, action.name))
            };
            let schema: Value =
                serde_json::from_str(schema).map_err(|error| unusable(error.to_string()))?;
            jsonschema::draft202012::new(&schema).map_err(|error| unusable(error.to_string()))
        };
        let mut validators = BTreeMap::new();
        let mut output_validators = BTreeMap::new();
        for (tool, action) in catalog.all_actions() {
            validators.insert(
                (tool.name, action.name),
                compile(tool, action, action.input_schema)?,
            );
            if check_outputs {
                output_validators.insert(
                    (tool.name, action.name),
                    compile(tool, action, action.output_schema)?,
                );
            }
        }
        let mut disabled = BTreeSet::new();
        for tool in catalog.tools {
            let by_name = start.disabled_tools.iter().any(|name| name == tool.name);
            let by_category = tool.category != Category::Core
                && start.disabled_categories.contains(&tool.category);
            if (by_name || by_category) && can_disable(tool) {
                disabled.insert(tool.name);
            }
        }
        Ok(Gateway {
            catalog,
            tools_list: tool::tools_list_result(&identity),
            identity,
            configure_tool,
            validators,
            output_validators,
            search_index: mcp_search::SearchIndex::build(catalog),
            overviews: Mutex::new(Vec::new()),
            world: mcp_search::WorldCache::default(),
            start: disabled,
            default_timeout,
            max_timeout,
        })
    }

    /// Lets `search` match what the app publishes on `feed` (its types, fields, named entities).
    #[must_use]
    pub fn with_app_terms(mut self, feed: AppTermsFeed) -> Gateway {
        self.world = mcp_search::WorldCache::new(Some(feed));
        self
    }

    /// The first `limit` actions `search` ranks for `query`, with their scores: a tuning aid for
    /// the ranking (the scores are not part of any reply).
    #[doc(hidden)]
    pub fn search_scores(&self, query: &str, limit: usize) -> Vec<(String, u32, String)> {
        let world = self.world_index();
        let query = self.search_index.parse_query(query, world.as_deref());
        let ranked = mcp_search::rank(&self.search_index, world.as_deref(), &query, None, None);
        ranked
            .hits
            .iter()
            .take(limit)
            .map(|hit| {
                (
                    format!("{}.{}", hit.tool.name, hit.action.name),
                    hit.score,
                    ranked.explain(&self.search_index, hit).because.join("; "),
                )
            })
            .collect()
    }

    /// The words of the app's newest terms that search's learnt model reads as one word, "a
    /// thing of the game" (what codegen's `world-things.json` must list for this world).
    #[doc(hidden)]
    pub fn game_thing_words(&self) -> std::collections::BTreeSet<String> {
        self.world_index()
            .map(|world| mcp_search::game_thing_words(&self.search_index, &world))
            .unwrap_or_default()
    }

    /// The app's newest terms (its types and named entities), when it publishes any.
    pub(crate) fn app_terms(&self) -> Option<std::sync::Arc<crate::app_terms::AppTerms>> {
        self.world.terms()
    }

    /// The index of the app's newest terms, when it publishes any.
    pub(crate) fn world_index(&self) -> Option<std::sync::Arc<mcp_search::WorldIndex>> {
        self.world.index()
    }

    /// The catalog served.
    pub fn catalog(&self) -> &'static Catalog {
        self.catalog
    }

    /// What the server presents itself as.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The `tools/list` result (the same bytes for the server's whole life).
    pub fn tools_list(&self) -> &Value {
        &self.tools_list
    }

    /// The catalog tool whose actions `configure` runs, if the identity names one.
    pub fn configure_tool(&self) -> Option<&'static ToolRecord> {
        self.configure_tool
    }

    /// A new session's state for a token of `scope`, seeded from the start visibility.
    pub fn new_session_state(&self, scope: Scope) -> Visibility {
        Visibility {
            scope,
            disabled: self.start.clone(),
            start: self.start.clone(),
            consent: ConsentLedger::default(),
        }
    }

    /// A kept session's state: these tools disabled (names the catalog no longer has are
    /// dropped), the start visibility for `reset`, and no consent grants (a grant is for one
    /// moment of one conversation, never carried over a restart).
    pub(crate) fn restored_session_state(&self, disabled: &[String], scope: Scope) -> Visibility {
        let disabled = self
            .catalog
            .tools
            .iter()
            .filter(|tool| disabled.iter().any(|name| name == tool.name))
            .map(|tool| tool.name)
            .collect();
        Visibility {
            scope,
            disabled,
            start: self.start.clone(),
            consent: ConsentLedger::default(),
        }
    }

    /// Handles the arguments of a `tools/call` of the gateway tool. The session's state is locked only for
    /// the moments it is read or changed, never while names are matched or schemas checked.
    ///
    /// The arguments are taken: an `execute` that passes every check moves its params into the
    /// plan (they are never copied), and one the gateway answers itself hands them back in its
    /// [`ExecuteAttempt`].
    pub fn prepare(&self, state: &Mutex<Visibility>, mut arguments: Value) -> Prepared {
        let prepared = match self.route(state, &mut arguments) {
            Ok(prepared) => prepared,
            Err(error) => Prepared::Reply {
                value: Arc::new(error.to_json()),
                text: None,
                error: Some(error.code),
                execute: None,
            },
        };
        match prepared {
            Prepared::Reply {
                value, text, error, ..
            } if arguments.get("operation").and_then(Value::as_str) == Some("execute") => {
                Prepared::Reply {
                    value,
                    text,
                    error,
                    execute: Some(self.attempt(arguments)),
                }
            }
            other => other,
        }
    }

    /// Plans a call made from inside the app (a test, a replayed script, the app's own start-up)
    /// with the checks a client's `execute` passes, in the same order, but those of a session:
    /// every tool is enabled, and no consent is asked (the code that calls already has it). The
    /// params move into the plan.
    pub fn plan(&self, tool: &str, action: &str, params: Value) -> Result<ExecutePlan, ToolError> {
        let state = Mutex::new(Visibility::default());
        let mut arguments = Map::new();
        arguments.insert("operation".to_owned(), json!("execute"));
        arguments.insert("tool".to_owned(), json!(tool));
        arguments.insert("action".to_owned(), json!(action));
        arguments.insert("params".to_owned(), params);
        check_lengths(&arguments)?;
        match execute::execute(self, &state, &mut arguments, execute::Caller::InProcess)? {
            Prepared::Execute(plan) => Ok(plan),
            Prepared::Reply { .. } => Err(ToolError::new(
                codes::INVALID_ARGUMENTS,
                format!("{tool}.{action} runs per session, through the configure operation"),
            )
            .next_call(json!({"operation": "configure", "action": action}))),
        }
    }

    /// What an `execute`'s arguments name, resolved where they can be, with its params.
    fn attempt(&self, mut arguments: Value) -> ExecuteAttempt {
        let named = |key: &str| {
            clip(
                arguments.get(key).and_then(Value::as_str).unwrap_or("?"),
                MAX_NAME_CHARS,
            )
            .into_owned()
        };
        let (tool, action) = (named("tool"), named("action"));
        let params = arguments
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        match self.catalog.action(&tool, &action) {
            Some(found) => ExecuteAttempt {
                action: format!("{}.{}", found.tool.name, found.action.name),
                effect: Some(found.action.effect),
                params,
            },
            None => ExecuteAttempt {
                action: format!("{tool}.{action}"),
                effect: None,
                params,
            },
        }
    }

    fn route(
        &self,
        state: &Mutex<Visibility>,
        arguments: &mut Value,
    ) -> Result<Prepared, ToolError> {
        let Some(arguments) = arguments.as_object_mut() else {
            return Err(ToolError::new(
                codes::INVALID_ARGUMENTS,
                format!(
                    "the arguments of `{}` must be an object",
                    self.identity.tool_name
                ),
            )
            .next_call(next_call::describe(None, None, None)));
        };
        check_lengths(arguments)?;
        let operation = arguments.get("operation").and_then(Value::as_str);
        let operation = match operation {
            Some(operation) if OPERATIONS.contains(&operation) => operation,
            other => {
                let given = other.unwrap_or_default();
                let message = if given.is_empty() {
                    "missing \"operation\": use describe, search, execute or configure".to_owned()
                } else {
                    format!(
                        "unknown operation \"{given}\": use describe, search, execute or configure"
                    )
                };
                return Err(ToolError::new(codes::UNKNOWN_OPERATION, message)
                    .suggestions(suggest(given, OPERATIONS))
                    .next_call(next_call::describe(None, None, None)));
            }
        };
        check_top_level_keys(operation, arguments)?;
        let reply = match operation {
            "describe" if describe::is_catalog_overview(arguments) => {
                let key = {
                    let state = state.lock();
                    (state.scope, state.disabled.clone())
                };
                let CachedReply { value, text } = self.catalog_overview(key);
                return Ok(Prepared::Reply {
                    value,
                    text: Some(text),
                    error: None,
                    execute: None,
                });
            }
            "describe" => describe::describe(self, state, arguments)?,
            "search" => {
                let view = state.lock().view();
                search::search(self, &view, arguments)?
            }
            "configure" => {
                let mut state = state.lock();
                configure::configure(self, &mut state, arguments)?
            }
            _ => return execute::execute(self, state, arguments, execute::Caller::Client),
        };
        Ok(Prepared::Reply {
            value: Arc::new(reply),
            text: None,
            error: None,
            execute: None,
        })
    }

    /// Most visibility states whose catalog `describe` is kept; beyond it the oldest is rebuilt
    /// when asked for again.
    const OVERVIEWS_KEPT: usize = 32;

    /// The catalog `describe` for a session of this scope with these tools disabled: built
    /// once per pair.
    fn catalog_overview(&self, key: OverviewKey) -> CachedReply {
        let mut kept = self.overviews.lock();
        if let Some((_, reply)) = kept.iter().find(|(kept_key, _)| *kept_key == key) {
            return reply.clone();
        }
        let (scope, disabled) = key;
        let view = Visibility {
            scope,
            disabled: disabled.clone(),
            start: self.start.clone(),
            consent: ConsentLedger::default(),
        };
        let value = describe::catalog_overview(self, &view);
        let reply = CachedReply {
            text: Arc::from(serde_json::to_string(&value).unwrap_or_default()),
            value: Arc::new(value),
        };
        if kept.len() >= Self::OVERVIEWS_KEPT {
            kept.remove(0);
        }
        kept.push(((scope, disabled), reply.clone()));
        reply
    }

    /// The payload of a finished execute and whether it is an error: shaped success, or the
    /// handler's error with the records' hint when the handler gave none. Wrap it in a
    /// [`ToolResult`] to send it.
    ///
    /// In debug builds a result that does not match the action's output schema becomes an
    /// `OUTPUT_SCHEMA_VIOLATION` error naming the action and the JSON pointer, so every test that
    /// runs an action checks its record too.
    pub fn finish(&self, plan: &ExecutePlan, outcome: Result<Value, ToolError>) -> Finished {
        let outcome = outcome.and_then(|value| self.check_output(plan, value));
        match outcome {
            Ok(mut value) => {
                if let (Some(alias), Some(object)) = (plan.resolved_from, value.as_object_mut()) {
                    object.insert("resolvedFrom".to_owned(), json!(alias));
                }
                // A call that changed the world answers, cut if need be: an error after the
                // change would say it was not made.
                if plan.action.effect != Effect::Read {
                    return Finished::new(
                        shaping::shape_to_fit(value, plan.detail, plan.max_bytes),
                        false,
                    );
                }
                match shaping::shape(value, plan.detail, plan.max_bytes) {
                    Ok(shaped) => Finished::new(shaped, false),
                    Err(too_large) => Finished::error(too_large.to_json()),
                }
            }
            Err(mut error) => {
                if error.hint.is_none() {
                    error.hint = plan.action.error_hint(error.code).map(str::to_owned);
                }
                Finished::error(error.to_json())
            }
        }
    }

    /// The result itself, or the first way it breaks its record's output schema (debug builds).
    fn check_output(&self, plan: &ExecutePlan, value: Value) -> Result<Value, ToolError> {
        let Some(validator) = self
            .output_validators
            .get(&(plan.tool.name, plan.action.name))
        else {
            return Ok(value);
        };
        let Some(violation) = validator.iter_errors(&value).next() else {
            return Ok(value);
        };
        let pointer = violation.instance_path().to_string();
        let problem = clip(&violation.to_string(), 300).into_owned();
        Err(ToolError::new(
            codes::OUTPUT_SCHEMA_VIOLATION,
            format!(
                "{}.{} returned a result that breaks its output schema at \"{pointer}\": {problem}",
                plan.tool.name, plan.action.name
            ),
        )
        .hint("A bug in the handler or its record (codegen/records), not in the call.")
        .details(json!({"action": format!("{}.{}", plan.tool.name, plan.action.name), "pointer": pointer, "problem": problem})))
    }

    /// The `data` of the JSON-RPC error for `tools/call` with a name other than the tool's.
    pub fn unknown_tool_data(&self, name: &str) -> Value {
        let next_call = if name.chars().count() > MAX_NAME_CHARS {
            next_call::describe(None, None, None)
        } else if self.catalog.tool(name).is_some() {
            next_call::describe(Some(name), None, None)
        } else if let Some((tool, found)) = self.split_action_name(name) {
            next_call::describe(Some(tool.name), Some(found.action.name), None)
        } else if let Some(found) = self.catalog.actions_named(name).first() {
            next_call::describe(Some(found.tool.name), Some(found.action.name), None)
        } else {
            json!({"operation": "search", "query": name.replace(['_', '.', '/'], " ")})
        };
        json!({
            "tool": self.identity.tool_name,
            "hint": format!("This server has one tool, `{}`; call it with the arguments in nextCall.", self.identity.tool_name),
            "nextCall": next_call,
        })
    }

    pub(crate) fn validator(
        &self,
        tool: &'static str,
        action: &'static str,
    ) -> Option<&jsonschema::Validator> {
        self.validators.get(&(tool, action))
    }

    pub(crate) fn timeouts(&self) -> (Duration, Duration) {
        (self.default_timeout, self.max_timeout)
    }

    /// Resolves a tool name or explains, with suggestions, why it cannot.
    pub(crate) fn resolve_tool(&self, name: &str) -> Result<&'static ToolRecord, ToolError> {
        if let Some(tool) = self.catalog.tool(name) {
            return Ok(tool);
        }
        let names = self.catalog.tools.iter().map(|tool| tool.name);
        let suggestions = suggest(name, names);
        // A model that passes an action name as the tool gets sent to that action.
        if let Some(found) = self.catalog.actions_named(name).first() {
            return Err(ToolError::new(
                codes::UNKNOWN_TOOL,
                format!(
                    "\"{name}\" is not a tool; it is an action of {}",
                    found.tool.name
                ),
            )
            .next_call(next_call::describe(
                Some(found.tool.name),
                Some(found.action.name),
                None,
            )));
        }
        let next_call = match suggestions.first() {
            Some(best) => next_call::describe(Some(best), None, None),
            None => next_call::describe(None, None, None),
        };
        Err(
            ToolError::new(codes::UNKNOWN_TOOL, format!("no tool is named \"{name}\""))
                .hint(
                    "Tools are listed by {operation:\"describe\"}; search finds actions by intent.",
                )
                .suggestions(suggestions)
                .next_call(next_call),
        )
    }

    /// `tool.action` (or `tool/action`) written as one name, the way search and the journal name
    /// actions: the tool and its action, when both exist.
    pub(crate) fn split_action_name(
        &self,
        name: &str,
    ) -> Option<(&'static ToolRecord, crate::catalog::ResolvedAction)> {
        let (tool, action) = name.split_once('.').or_else(|| name.split_once('/'))?;
        let tool = self.catalog.tool(tool)?;
        Some((tool, tool.resolve(action)?))
    }

    /// Resolves an action of `tool` (name or alias) or explains why not: another tool's action
    /// redirects there, otherwise the closest names are suggested.
    pub(crate) fn resolve_action(
        &self,
        tool: &'static ToolRecord,
        name: &str,
    ) -> Result<crate::catalog::ResolvedAction, ToolError> {
        if let Some(found) = tool.resolve(name) {
            return Ok(found);
        }
        let elsewhere = self.catalog.actions_named(name);
        if let Some(other) = elsewhere.first() {
            let owners: Vec<String> = elsewhere
                .iter()
                .map(|found| format!("{}.{}", found.tool.name, found.action.name))
                .collect();
            return Err(ToolError::new(
                codes::UNKNOWN_ACTION,
                format!(
                    "\"{name}\" is not an action of {}; it belongs to {}",
                    tool.name,
                    owners.join(" and ")
                ),
            )
            .suggestions(owners.clone())
            .next_call(next_call::describe(
                Some(other.tool.name),
                Some(other.action.name),
                None,
            )));
        }
        let candidates = tool
            .actions
            .iter()
            .flat_map(|action| std::iter::once(action.name).chain(action.aliases.iter().copied()));
        let mut suggestions: Vec<&str> = Vec::new();
        for candidate in suggest(name, candidates) {
            let canonical = tool
                .resolve(candidate)
                .map_or(candidate, |found| found.action.name);
            if !suggestions.contains(&canonical) {
                suggestions.push(canonical);
            }
        }
        let next_call = match suggestions.first() {
            Some(best) => next_call::describe(Some(tool.name), Some(best), None),
            None => next_call::describe(Some(tool.name), None, None),
        };
        Err(ToolError::new(
            codes::UNKNOWN_ACTION,
            format!("{} has no action \"{name}\"", tool.name),
        )
        .suggestions(suggestions)
        .next_call(next_call))
    }
}
