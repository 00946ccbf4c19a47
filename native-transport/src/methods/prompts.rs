//! `prompts/list` and `prompts/get`: the catalog's prompts, their arguments filled in.

use serde_json::{Map, Value, json};

use super::{MethodError, text};
use crate::catalog::{Catalog, PromptRecord};
use crate::gateway::guidance::{MAX_NAME_CHARS, clip};

/// The longest value one argument may have.
const MAX_ARGUMENT_CHARS: usize = 1000;

/// `prompts/list`: every prompt with its arguments (all of them: a short list, no paging).
pub(crate) fn list(catalog: &'static Catalog, titles: bool) -> Value {
    let prompts: Vec<Value> = catalog
        .prompts
        .iter()
        .map(|prompt| {
            let arguments: Vec<Value> = prompt
                .arguments
                .iter()
                .map(|argument| {
                    json!({
                        "name": argument.name,
                        "description": argument.description,
                        "required": argument.required,
                    })
                })
                .collect();
            let mut row = json!({
                "name": prompt.name,
                "description": prompt.description,
                "arguments": arguments,
            });
            if titles {
                row["title"] = json!(prompt.title);
            }
            row
        })
        .collect();
    json!({ "prompts": prompts })
}

/// `prompts/get {name, arguments}`: the prompt's message with every placeholder filled (an
/// optional argument left out takes its default).
pub(crate) fn get(catalog: &'static Catalog, params: &Value) -> Result<Value, MethodError> {
    let name = text(params, "name").unwrap_or_default();
    let Some(prompt) = catalog.prompt(name) else {
        let known: Vec<&str> = catalog.prompts.iter().map(|prompt| prompt.name).collect();
        return Err(MethodError::invalid(format!(
            "no prompt is named \"{}\"; prompts/list shows them: {}",
            clip(name, MAX_NAME_CHARS),
            known.join(", ")
        ))
        .with_data(json!({ "prompts": known })));
    };
    let given = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(given)) => given.clone(),
        Some(_) => {
            return Err(MethodError::invalid(
                "arguments must be an object of argument names to string values",
            ));
        }
    };
    let text = fill(prompt, &given)?;
    Ok(json!({
        "description": prompt.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}

/// The prompt's text with its placeholders filled from `given`.
fn fill(prompt: &PromptRecord, given: &Map<String, Value>) -> Result<String, MethodError> {
    let takes = || {
        prompt
            .arguments
            .iter()
            .map(|argument| argument.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(unknown) = given.keys().find(|key| {
        !prompt
            .arguments
            .iter()
            .any(|argument| argument.name == *key)
    }) {
        return Err(MethodError::invalid(format!(
            "prompt {} takes no argument \"{}\"; it takes: {}",
            prompt.name,
            clip(unknown, MAX_NAME_CHARS),
            takes()
        )));
    }
    let mut text = prompt.text.to_owned();
    for argument in prompt.arguments {
        let value = match given.get(argument.name) {
            Some(Value::String(value)) if !value.trim().is_empty() => {
                if value.chars().count() > MAX_ARGUMENT_CHARS {
                    return Err(MethodError::invalid(format!(
                        "argument {} of prompt {} is longer than {MAX_ARGUMENT_CHARS} characters",
                        argument.name, prompt.name
                    )));
                }
                value.trim().to_owned()
            }
            Some(Value::String(_)) | None if !argument.required => argument.default.to_owned(),
            Some(Value::String(_)) | None => {
                return Err(MethodError::invalid(format!(
                    "prompt {} needs its argument \"{}\": {}",
                    prompt.name, argument.name, argument.description
                )));
            }
            Some(_) => {
                return Err(MethodError::invalid(format!(
                    "argument {} of prompt {} must be a string",
                    argument.name, prompt.name
                )));
            }
        };
        text = text.replace(&format!("{{{}}}", argument.name), &value);
    }
    Ok(text)
}
