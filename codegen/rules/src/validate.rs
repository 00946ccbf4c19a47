//! Validation of the records: everything that would make the catalog wrong, ambiguous or
//! unhelpful to a model is refused here, with the file and JSON pointer of the offending value.

use mcp_search::words as search_words;
use mcp_vocabulary::catalog::{Category, Completes, Consent, Effect, SUBJECTS, Scope};
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::problem::{Problem, Problems};
use crate::records::{ActionRecordIn, RecordSet, escape_pointer};
use crate::schema::{inline_refs, ref_target};

/// The wire names of the vocabulary's enums, for the checks and their messages.
fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|item| name(*item)).collect()
}
/// Summaries are read by models in search results: keep them to one sentence.
const MAX_SUMMARY_CHARS: usize = 200;

/// Checks every rule over the whole record set and returns all problems found.
pub fn validate(records: &RecordSet) -> Result<(), Problems> {
    let mut problems = Problems::default();
    for (file, value) in &records.raw {
        check_case_collisions(file, value, "", &mut problems);
        check_refs(file, value, "", records, &mut problems);
    }
    check_defs(records, &mut problems);
    check_names(records, &mut problems);
    check_prompts(records, &mut problems);
    crate::phrasebook::check_phrasebook(records, &mut problems);
    for tool_file in &records.tools {
        let file = tool_file.file.as_str();
        let tool = &tool_file.record;
        let categories = names(&Category::ALL, Category::as_str);
        if Category::parse(&tool.category).is_none() {
            problems.push(Problem::new(
                file,
                "/category",
                format!(
                    "unknown category \"{}\"; use one of {categories:?}",
                    tool.category
                ),
            ));
        }
        check_sentence(file, "/summary", &tool.summary, &mut problems);
        if tool.actions.is_empty() {
            problems.push(Problem::new(
                file,
                "/actions",
                "a tool needs at least one action",
            ));
        }
        for (index, action) in tool.actions.iter().enumerate() {
            check_action(
                file,
                &format!("/actions/{index}"),
                action,
                records,
                &mut problems,
            );
        }
    }
    problems.into_result(())
}

/// No object anywhere in a record may have two keys that differ only by case: a model that
/// sends `Entity` for `entity` must get one clear answer, never two candidates.
fn check_case_collisions(file: &str, value: &Value, pointer: &str, problems: &mut Problems) {
    match value {
        Value::Object(map) => {
            let mut seen: BTreeMap<String, &str> = BTreeMap::new();
            for key in map.keys() {
                if let Some(first) = seen.insert(key.to_lowercase(), key) {
                    problems.push(Problem::new(
                        file,
                        format!("{pointer}/{}", escape_pointer(key)),
                        format!("key \"{key}\" differs from sibling key \"{first}\" only by case"),
                    ));
                }
            }
            for (key, item) in map {
                check_case_collisions(
                    file,
                    item,
                    &format!("{pointer}/{}", escape_pointer(key)),
                    problems,
                );
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_case_collisions(file, item, &format!("{pointer}/{index}"), problems);
            }
        }
        _ => {}
    }
}

/// Every `$ref` must name an existing definition.
fn check_refs(
    file: &str,
    value: &Value,
    pointer: &str,
    records: &RecordSet,
    problems: &mut Problems,
) {
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref") {
                let here = format!("{pointer}/$ref");
                match ref_target(reference) {
                    Ok(name) if !records.defs.contains_key(name) => problems.push(Problem::new(
                        file,
                        here,
                        format!("$ref names \"{name}\", which defs.json does not define"),
                    )),
                    Ok(_) => {}
                    Err(message) => problems.push(Problem::new(file, here, message)),
                }
            }
            for (key, item) in map {
                if key != "$ref" {
                    check_refs(
                        file,
                        item,
                        &format!("{pointer}/{}", escape_pointer(key)),
                        records,
                        problems,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_refs(file, item, &format!("{pointer}/{index}"), records, problems);
            }
        }
        _ => {}
    }
}

fn check_defs(records: &RecordSet, problems: &mut Problems) {
    for (name, def) in &records.defs {
        let pointer = format!("/$defs/{}", escape_pointer(name));
        if !is_lower_camel(name) {
            problems.push(Problem::new(
                crate::records::DEFS_FILE,
                &pointer,
                "definition names are lowerCamelCase (they become Rust type names)",
            ));
        }
        if description_of(def).is_none() {
            problems.push(Problem::new(
                crate::records::DEFS_FILE,
                &pointer,
                "definition has no description",
            ));
        }
        if let Err(message) = inline_refs(def, &records.defs) {
            problems.push(Problem::new(crate::records::DEFS_FILE, &pointer, message));
        }
    }
}

/// Tool names are unique; action names are unique within their tool; an alias names exactly one
/// action in the whole catalog and is never the name of an action anywhere.
fn check_names(records: &RecordSet, problems: &mut Problems) {
    let mut tools: BTreeMap<&str, &str> = BTreeMap::new();
    let mut action_names: BTreeSet<&str> = BTreeSet::new();
    for tool_file in &records.tools {
        let tool = &tool_file.record;
        if !is_snake(&tool.tool) {
            problems.push(Problem::new(
                &tool_file.file,
                "/tool",
                "tool names are snake_case",
            ));
        }
        if let Some(first) = tools.insert(&tool.tool, &tool_file.file) {
            problems.push(Problem::new(
                &tool_file.file,
                "/tool",
                format!("duplicate tool \"{}\" (also defined in {first})", tool.tool),
            ));
        }
        let expected_file = format!("{}.json", tool.tool);
        if tool_file.file != expected_file {
            problems.push(Problem::new(
                &tool_file.file,
                "/tool",
                format!("tool \"{}\" must live in {expected_file}", tool.tool),
            ));
        }
        let mut own: BTreeMap<&str, usize> = BTreeMap::new();
        for (index, action) in tool.actions.iter().enumerate() {
            if !is_snake(&action.name) {
                problems.push(Problem::new(
                    &tool_file.file,
                    format!("/actions/{index}/name"),
                    "action names are snake_case",
                ));
            }
            if let Some(first) = own.insert(&action.name, index) {
                problems.push(Problem::new(
                    &tool_file.file,
                    format!("/actions/{index}/name"),
                    format!(
                        "duplicate action \"{}\" (first at /actions/{first})",
                        action.name
                    ),
                ));
            }
            action_names.insert(&action.name);
        }
    }
    let mut aliases: BTreeMap<&str, String> = BTreeMap::new();
    for tool_file in &records.tools {
        let tool = &tool_file.record;
        for (index, action) in tool.actions.iter().enumerate() {
            for (alias_index, alias) in action.aliases.iter().enumerate() {
                let pointer = format!("/actions/{index}/aliases/{alias_index}");
                let here = format!("{}.{}", tool.tool, action.name);
                if !is_snake(alias) {
                    problems.push(Problem::new(
                        &tool_file.file,
                        &pointer,
                        "aliases are snake_case",
                    ));
                }
                if action_names.contains(alias.as_str()) {
                    problems.push(Problem::new(
                        &tool_file.file,
                        &pointer,
                        format!("alias \"{alias}\" of {here} collides with an action of that name"),
                    ));
                }
                if tools.contains_key(alias.as_str()) {
                    problems.push(Problem::new(
                        &tool_file.file,
                        &pointer,
                        format!("alias \"{alias}\" of {here} collides with a tool of that name"),
                    ));
                }
                if let Some(first) = aliases.insert(alias, here.clone()) {
                    problems.push(Problem::new(
                        &tool_file.file,
                        &pointer,
                        format!("alias \"{alias}\" of {here} is already an alias of {first}"),
                    ));
                }
            }
        }
    }
}

fn check_action(
    file: &str,
    at: &str,
    action: &ActionRecordIn,
    records: &RecordSet,
    problems: &mut Problems,
) {
    check_sentence(file, &format!("{at}/summary"), &action.summary, problems);
    for (key, text) in [
        ("whenToUse", &action.when_to_use),
        ("whenNotToUse", &action.when_not_to_use),
    ] {
        if text.trim().is_empty() {
            problems.push(Problem::new(
                file,
                format!("{at}/{key}"),
                "must not be empty",
            ));
        }
    }
    check_effect(file, at, action, problems);
    check_search_words(file, at, action, problems);
    for (code, hint) in &action.errors {
        let pointer = format!("{at}/errors/{}", escape_pointer(code));
        if !is_upper_snake(code) {
            problems.push(Problem::new(
                file,
                &pointer,
                "error codes are UPPER_SNAKE_CASE",
            ));
        }
        if hint.trim().is_empty() {
            problems.push(Problem::new(
                file,
                &pointer,
                "an error code needs a hint saying what to do",
            ));
        }
    }
    check_output(file, &format!("{at}/output"), &action.output, problems);
    let Some(params) = check_params(file, &format!("{at}/params"), action, records, problems)
    else {
        return;
    };
    check_examples(file, at, action, &params, problems);
}

/// An action's effect, consent and scope: known names, and a scope only where it raises one.
fn check_effect(file: &str, at: &str, action: &ActionRecordIn, problems: &mut Problems) {
    let effects = names(&Effect::ALL, Effect::as_str);
    if Effect::parse(&action.effect).is_none() {
        problems.push(Problem::new(
            file,
            format!("{at}/effect"),
            format!(
                "unknown effect \"{}\"; use one of {effects:?}",
                action.effect
            ),
        ));
    }
    let consents = names(&Consent::ALL, Consent::as_str);
    if Consent::parse(&action.consent).is_none() {
        problems.push(Problem::new(
            file,
            format!("{at}/consent"),
            format!(
                "unknown consent \"{}\"; use one of {consents:?}",
                action.consent
            ),
        ));
    }
    if let Some(scope) = &action.scope {
        let least = Effect::parse(&action.effect).map(Scope::for_effect);
        match (Scope::parse(scope), least) {
            (None, _) => problems.push(Problem::new(
                file,
                format!("{at}/scope"),
                format!(
                    "unknown scope \"{scope}\"; use one of {:?}",
                    names(&Scope::ALL, Scope::as_str)
                ),
            )),
            (Some(scope), Some(least)) if scope <= least => problems.push(Problem::new(
                file,
                format!("{at}/scope"),
                format!(
                    "scope \"{scope}\" is what a {} action needs anyway; give a scope only to raise it",
                    action.effect
                ),
            )),
            _ => {}
        }
    }
    if action.effect == "read" && action.consent != "none" {
        problems.push(Problem::new(
            file,
            format!("{at}/consent"),
            "a read action never needs consent",
        ));
    }
}

/// An action's topics, subjects and aliases: words search can match, each listed once.
fn check_search_words(file: &str, at: &str, action: &ActionRecordIn, problems: &mut Problems) {
    for (index, topic) in action.topics.iter().enumerate() {
        if topic.trim().is_empty() {
            problems.push(Problem::new(
                file,
                format!("{at}/topics/{index}"),
                "empty topic",
            ));
        } else if search_words::meaningful_stems(topic).next().is_none() {
            problems.push(Problem::new(
                file,
                format!("{at}/topics/{index}"),
                format!("\"{topic}\" is only stop words, which search ignores: it can never match"),
            ));
        } else if action.topics[..index].contains(topic) {
            problems.push(Problem::new(
                file,
                format!("{at}/topics/{index}"),
                format!("\"{topic}\" is listed twice"),
            ));
        }
    }
    for (index, subject) in action.subjects.iter().enumerate() {
        if !SUBJECTS.contains(&subject.as_str()) {
            problems.push(Problem::new(
                file,
                format!("{at}/subjects/{index}"),
                format!("unknown subject \"{subject}\"; use one of {SUBJECTS:?}"),
            ));
        } else if action.subjects[..index].contains(subject) {
            problems.push(Problem::new(
                file,
                format!("{at}/subjects/{index}"),
                format!("\"{subject}\" is listed twice"),
            ));
        }
    }
    for (index, alias) in action.aliases.iter().enumerate() {
        if search_words::meaningful_stems(alias).next().is_none() {
            problems.push(Problem::new(
                file,
                format!("{at}/aliases/{index}"),
                format!("\"{alias}\" is only stop words, which search ignores: it can never match"),
            ));
        }
    }
    if action.topics.is_empty() {
        problems.push(Problem::new(
            file,
            format!("{at}/topics"),
            "give at least one topic so search finds the action by intent",
        ));
    }
}

fn check_output(file: &str, at: &str, output: &Value, problems: &mut Problems) {
    if output.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(Problem::new(
            file,
            format!("{at}/type"),
            "an output schema must be of type \"object\"",
        ));
    }
}

/// Checks the params schema and returns it with its `$ref`s inlined.
fn check_params(
    file: &str,
    at: &str,
    action: &ActionRecordIn,
    records: &RecordSet,
    problems: &mut Problems,
) -> Option<Value> {
    let params = &action.params;
    if params.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(Problem::new(
            file,
            format!("{at}/type"),
            "params must be of type \"object\"",
        ));
    }
    if params.get("additionalProperties") != Some(&Value::Bool(false)) {
        problems.push(Problem::new(
            file,
            format!("{at}/additionalProperties"),
            "params must set additionalProperties: false so unknown arguments are refused",
        ));
    }
    let Some(properties) = params.get("properties").and_then(Value::as_object) else {
        problems.push(Problem::new(
            file,
            format!("{at}/properties"),
            "params must have a properties object (it may be empty)",
        ));
        return None;
    };
    if let Some(required) = params.get("required").and_then(Value::as_array) {
        for (index, name) in required.iter().enumerate() {
            if !name
                .as_str()
                .is_some_and(|name| properties.contains_key(name))
            {
                problems.push(Problem::new(
                    file,
                    format!("{at}/required/{index}"),
                    format!("required names {name}, which is not a property"),
                ));
            }
        }
    }
    let resolved = match inline_refs(params, &records.defs) {
        Ok(resolved) => resolved,
        Err(message) => {
            problems.push(Problem::new(file, at, message));
            return None;
        }
    };
    check_properties(
        file,
        &format!("{at}/properties"),
        properties,
        &resolved["properties"],
        problems,
    );
    if let Err(error) = jsonschema::draft202012::meta::validate(&resolved) {
        problems.push(Problem::new(
            file,
            at,
            format!("not a valid JSON Schema: {error}"),
        ));
        return None;
    }
    Some(resolved)
}

/// Every property has a description, a type and bounds; nested object properties too.
fn check_properties(
    file: &str,
    at: &str,
    written: &serde_json::Map<String, Value>,
    resolved: &Value,
    problems: &mut Problems,
) {
    for (name, schema) in written {
        let pointer = format!("{at}/{}", escape_pointer(name));
        let full = &resolved[name.as_str()];
        if !is_lower_camel(name) {
            problems.push(Problem::new(
                file,
                &pointer,
                format!("property \"{name}\" must be lowerCamelCase"),
            ));
        }
        if description_of(full).is_none() {
            problems.push(Problem::new(
                file,
                &pointer,
                format!("property \"{name}\" has no description"),
            ));
        }
        let typed = ["type", "oneOf", "anyOf", "enum"]
            .iter()
            .any(|key| full.get(key).is_some());
        let any_by_definition = schema.get("$ref").is_some();
        if !typed && !any_by_definition {
            problems.push(Problem::new(
                file,
                &pointer,
                format!("property \"{name}\" has no type"),
            ));
        }
        if let Some(missing) = missing_bound(full) {
            problems.push(Problem::new(
                file,
                &pointer,
                format!("property \"{name}\" needs {missing}"),
            ));
        }
        if let (Some(nested), Some(nested_resolved)) = (
            schema.get("properties").and_then(Value::as_object),
            full.get("properties"),
        ) {
            check_properties(
                file,
                &format!("{pointer}/properties"),
                nested,
                nested_resolved,
                problems,
            );
        }
        if let Some(default) = full.get("default")
            && let Err(error) = jsonschema::validate(full, default)
        {
            problems.push(Problem::new(
                file,
                format!("{pointer}/default"),
                format!("default {default} does not fit the property's own schema: {error}"),
            ));
        }
    }
}

/// Input from a model is bounded: strings have a length limit (or a closed set of values), lists
/// and maps a size limit, integers a lower bound.
fn missing_bound(schema: &Value) -> Option<&'static str> {
    let has = |key: &str| schema.get(key).is_some();
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if !has("maxLength") && !has("enum") => Some("maxLength (or enum)"),
        Some("array") if !has("maxItems") => Some("maxItems"),
        Some("object") if !has("maxProperties") && !has("properties") => Some("maxProperties"),
        Some("integer") if !has("minimum") && !has("exclusiveMinimum") => Some("minimum"),
        _ => None,
    }
}

fn check_examples(
    file: &str,
    at: &str,
    action: &ActionRecordIn,
    params: &Value,
    problems: &mut Problems,
) {
    if action.examples.is_empty() {
        problems.push(Problem::new(
            file,
            format!("{at}/examples"),
            "give at least one example",
        ));
        return;
    }
    let validator = match jsonschema::draft202012::new(params) {
        Ok(validator) => validator,
        Err(error) => {
            problems.push(Problem::new(
                file,
                format!("{at}/params"),
                format!("schema does not compile: {error}"),
            ));
            return;
        }
    };
    for (index, example) in action.examples.iter().enumerate() {
        let here = format!("{at}/examples/{index}");
        if example.title.trim().is_empty() {
            problems.push(Problem::new(
                file,
                format!("{here}/title"),
                "must not be empty",
            ));
        }
        if example.expect.trim().is_empty() {
            problems.push(Problem::new(
                file,
                format!("{here}/expect"),
                "must not be empty",
            ));
        }
        for error in validator.iter_errors(&example.params) {
            problems.push(Problem::new(
                file,
                format!("{here}/params{}", error.instance_path()),
                format!("example does not match the action's params schema: {error}"),
            ));
        }
    }
}

fn check_sentence(file: &str, pointer: &str, text: &str, problems: &mut Problems) {
    if text.trim().is_empty() {
        problems.push(Problem::new(file, pointer, "must not be empty"));
    } else if text.chars().count() > MAX_SUMMARY_CHARS {
        problems.push(Problem::new(
            file,
            pointer,
            format!("longer than {MAX_SUMMARY_CHARS} characters; keep summaries to one sentence"),
        ));
    }
}

/// Prompts: unique snake_case names, one-sentence descriptions, arguments the text uses (and
/// only those), optional ones with a default, and every `tool.action` in backticks an action
/// of the records, so a prompt cannot lead a model to an action that is gone.
fn check_prompts(records: &RecordSet, problems: &mut Problems) {
    let mut seen = std::collections::BTreeSet::new();
    for prompt_file in &records.prompts {
        let file = prompt_file.file.as_str();
        let prompt = &prompt_file.record;
        if !is_snake(&prompt.name) {
            problems.push(Problem::new(file, "/name", "a prompt name is snake_case"));
        }
        if !seen.insert(prompt.name.as_str()) {
            problems.push(Problem::new(
                file,
                "/name",
                format!("another prompt is named \"{}\"", prompt.name),
            ));
        }
        check_sentence(file, "/title", &prompt.title, problems);
        check_sentence(file, "/description", &prompt.description, problems);
        let placeholders = placeholders(&prompt.text);
        let mut arguments = std::collections::BTreeSet::new();
        for (index, argument) in prompt.arguments.iter().enumerate() {
            let at = format!("/arguments/{index}");
            if !is_snake(&argument.name) || !arguments.insert(argument.name.as_str()) {
                problems.push(Problem::new(
                    file,
                    format!("{at}/name"),
                    "argument names are snake_case and unique",
                ));
            }
            check_sentence(
                file,
                &format!("{at}/description"),
                &argument.description,
                problems,
            );
            match (argument.required, &argument.default) {
                (true, Some(_)) => problems.push(Problem::new(
                    file,
                    format!("{at}/default"),
                    "a required argument has no default",
                )),
                (false, None) => problems.push(Problem::new(
                    file,
                    format!("{at}/default"),
                    "an optional argument needs a default: what the text says without a value",
                )),
                _ => {}
            }
            if let Some(kind) = &argument.completes
                && Completes::parse(kind).is_none()
            {
                problems.push(Problem::new(
                    file,
                    format!("{at}/completes"),
                    format!(
                        "unknown completion \"{kind}\"; use one of {:?}",
                        names(&Completes::ALL, Completes::as_str)
                    ),
                ));
            }
            if !placeholders.contains(&argument.name.as_str()) {
                problems.push(Problem::new(
                    file,
                    format!("{at}/name"),
                    format!("the text never uses {{{}}}", argument.name),
                ));
            }
        }
        for placeholder in &placeholders {
            if !arguments.contains(placeholder) {
                problems.push(Problem::new(
                    file,
                    "/text",
                    format!("{{{placeholder}}} is not an argument of the prompt"),
                ));
            }
        }
        for (tool, action) in action_references(&prompt.text) {
            let known = records.tools.iter().any(|tool_file| {
                tool_file.record.tool == tool
                    && tool_file
                        .record
                        .actions
                        .iter()
                        .any(|record| record.name == action)
            });
            if !known {
                problems.push(Problem::new(
                    file,
                    "/text",
                    format!("`{tool}.{action}` is not an action of the records"),
                ));
            }
        }
    }
}

/// The `{name}` placeholders of a prompt text.
fn placeholders(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if is_snake(&after[..end]) => {
                found.push(&after[..end]);
                rest = &after[end + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

/// Every `` `tool.action` `` of a text (backticked, two snake_case words joined by a dot).
fn action_references(text: &str) -> Vec<(&str, &str)> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| quoted.split_once('.'))
        .filter(|(tool, action)| is_snake(tool) && is_snake(action))
        .collect()
}

fn description_of(schema: &Value) -> Option<&str> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
}

fn is_snake(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.ends_with('_')
        && !name.contains("__")
}

fn is_lower_camel(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
}

fn is_upper_snake(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        assert!(is_snake("set_transform"));
        assert!(!is_snake("setTransform"));
        assert!(!is_snake("_x"));
        assert!(!is_snake("x__y"));
        assert!(is_lower_camel("withComponents"));
        assert!(!is_lower_camel("with_components"));
        assert!(is_upper_snake("ENTITY_NOT_FOUND"));
        assert!(!is_upper_snake("EntityNotFound"));
    }
}
