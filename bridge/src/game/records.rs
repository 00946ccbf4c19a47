//! The app's own tools and actions as records, in the format of `codegen/records`: derived from
//! their specs and handler types, checked with codegen's rules, and turned into the catalog the
//! bridge serves (the generated one, then the app's).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use bevy::prelude::{Resource, World};
use bevy_mcp_generated::CATALOG;
use mcp_record_rules::schema::{
    canonical, enum_values, ordered_properties, required_names, type_label,
};
use mcp_record_rules::{Problems, records, validate};
use mcp_vocabulary::ErrorCode;
use mcp_vocabulary::catalog::{
    ActionRecord, Catalog, Consent, Effect, ErrorHint, ExampleRecord, ParamRecord, Scope,
    ToolRecord,
};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::spec::{ActionSpec, ToolSpec};
use crate::runtime::catalog::ServedCatalog;

/// The action as a record, in the format of `codegen/records`, its schemas derived.
pub(super) fn action_record<P: JsonSchema, R: JsonSchema>(
    spec: &ActionSpec,
    long_running: bool,
) -> Value {
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
    let mut record = json!({
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
    });
    if let Some(scope) = spec.scope {
        record["scope"] = json!(scope.as_str());
    }
    record
}

/// The app's own tools and actions, in registration order, with their records.
#[derive(Resource, Default)]
pub(crate) struct GameActions {
    tools: Vec<ToolSpec>,
    /// Each tool's record (the `codegen/records` format), by tool name.
    records: BTreeMap<&'static str, Value>,
    /// The actions, as `(tool, action)` in registration order.
    actions: Vec<(&'static str, &'static str)>,
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
    pub(super) fn declare_tool(&mut self, tool: ToolSpec) -> Result<(), String> {
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

    /// Checks the action with every rule, then keeps its record; nothing is kept when a rule
    /// fails.
    pub(super) fn add(&mut self, spec: &ActionSpec, record: Value) -> Result<(), String> {
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
        problems.extend(shadowing(spec));
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        self.records.insert(spec.tool, candidate);
        self.actions.push((spec.tool, spec.name));
        Ok(())
    }

    /// The app's tools as `{tool, category, summary, actions}` rows, for `app_info`.
    pub(crate) fn describe_tools(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|tool| {
                let actions: Vec<&str> = self
                    .actions
                    .iter()
                    .filter(|(owner, _)| *owner == tool.name)
                    .map(|(_, action)| *action)
                    .collect();
                json!({"tool": tool.name, "category": tool.category.as_str(), "summary": tool.summary, "actions": actions})
            })
            .collect()
    }

    /// The catalog served: the generated one, then the app's tools (leaked once: a catalog lives
    /// as long as the app that serves it).
    pub(crate) fn catalog(&self) -> &'static Catalog {
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

/// Builds the served catalog once every action is registered (the first frame's `Startup`).
pub(crate) fn publish_catalog(world: &mut World) {
    let catalog = world
        .get_resource::<GameActions>()
        .map_or(&CATALOG, GameActions::catalog);
    world.insert_resource(ServedCatalog(catalog));
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
    let effect = record["effect"]
        .as_str()
        .and_then(Effect::parse)
        .unwrap_or(Effect::Write);
    ActionRecord {
        name: text("name"),
        summary: text("summary"),
        effect,
        consent: record["consent"]
            .as_str()
            .and_then(Consent::parse)
            .unwrap_or(Consent::None),
        scope: record["scope"]
            .as_str()
            .and_then(Scope::parse)
            .unwrap_or(Scope::for_effect(effect)),
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
