//! `resources/list`, `resources/templates/list` and `resources/read`: the action reference, one
//! Markdown page per tool made from the catalog's records, and the identity's live resources,
//! read through read actions (a world summary, an entity, a type's shape).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{MethodError, text};
use crate::catalog::ToolRecord;
use crate::gateway::guidance::{MAX_QUERY_CHARS, clip};
use crate::gateway::{ExecutePlan, Finished, Gateway, Visibility, check_scope};
use crate::identity::{Identity, LiveResource};
use crate::jsonrpc::codes;

/// The path of the action reference of a tool: `<scheme>://reference/<tool>`.
const REFERENCE: &str = "reference/";

/// What a `resources/read` needs next.
#[derive(Debug)]
pub(crate) enum Read {
    /// The contents, ready.
    Ready(Value),
    /// A live resource: run this read action, then make its answer the contents.
    Live {
        /// The planned read.
        plan: Box<ExecutePlan>,
        /// The URI asked for.
        uri: String,
        /// Fields of its contents that change on their own (not an update for subscribers).
        volatile: Vec<String>,
    },
}

/// `resources/list`: the action reference of every tool, and the live resources without a
/// placeholder.
pub(crate) fn list(gateway: &Gateway, titles: bool) -> Value {
    let identity = gateway.identity();
    let scheme = &identity.resource_scheme;
    let mut resources: Vec<Value> = gateway
        .catalog()
        .tools
        .iter()
        .map(|tool| {
            let mut row = json!({
                "uri": format!("{scheme}://{REFERENCE}{}", tool.name),
                "name": format!("reference-{}", tool.name),
                "description": format!("How to use {}: {}", tool.name, tool.summary),
                "mimeType": "text/markdown",
            });
            if titles {
                row["title"] = json!(format!("{} actions", tool.name));
            }
            row
        })
        .collect();
    for resource in identity
        .live_resources
        .iter()
        .filter(|resource| resource.placeholder.is_none())
    {
        resources.push(described(
            resource,
            "uri",
            &format!("{scheme}://{}", resource.path),
            titles,
        ));
    }
    json!({ "resources": resources })
}

/// `resources/templates/list`: the live resources with a placeholder.
pub(crate) fn templates(identity: &Identity, titles: bool) -> Value {
    let scheme = &identity.resource_scheme;
    let templates: Vec<Value> = identity
        .live_resources
        .iter()
        .filter(|resource| resource.placeholder.is_some())
        .map(|resource| {
            described(
                resource,
                "uriTemplate",
                &format!("{scheme}://{}", resource.path),
                titles,
            )
        })
        .collect();
    json!({ "resourceTemplates": templates })
}

fn described(resource: &LiveResource, key: &str, uri: &str, titles: bool) -> Value {
    let mut row = json!({
        key: uri,
        "name": resource.name,
        "description": resource.description,
        "mimeType": "application/json",
    });
    if titles {
        row["title"] = json!(resource.title);
    }
    row
}

/// The live resource template whose URI template is `uri_template`, with its placeholder.
pub(crate) fn template<'a>(identity: &'a Identity, uri_template: &str) -> Option<&'a LiveResource> {
    let path = uri_template.strip_prefix(&format!("{}://", identity.resource_scheme))?;
    identity
        .live_resources
        .iter()
        .find(|resource| resource.placeholder.is_some() && resource.path == path)
}

/// `resources/read {uri}`: a reference page at once, or the read a live resource needs.
pub(crate) fn read(gateway: &Gateway, params: &Value) -> Result<Read, MethodError> {
    let uri = text(params, "uri").unwrap_or_default();
    if uri.chars().count() > MAX_QUERY_CHARS {
        return Err(MethodError::invalid(format!(
            "the uri is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let identity = gateway.identity();
    let not_found = || MethodError {
        code: codes::RESOURCE_NOT_FOUND,
        message: format!(
            "no resource at \"{}\"; resources/list and resources/templates/list show what there is",
            clip(uri, 120)
        ),
        data: Some(json!({ "uri": clip(uri, 120) })),
    };
    let path = uri
        .strip_prefix(&format!("{}://", identity.resource_scheme))
        .ok_or_else(not_found)?;
    if let Some(tool_name) = path.strip_prefix(REFERENCE) {
        let tool = gateway.catalog().tool(tool_name).ok_or_else(not_found)?;
        return Ok(Read::Ready(json!({
            "contents": [{"uri": uri, "mimeType": "text/markdown", "text": reference(tool)}],
        })));
    }
    for resource in &identity.live_resources {
        let params = match (&resource.placeholder, resource.template_prefix()) {
            (None, _) if resource.path == path => json!({}),
            (Some((param, _)), Some(prefix)) => match path.strip_prefix(prefix) {
                Some(value) if !value.is_empty() => {
                    json!({ param.as_str(): percent_decoded(value) })
                }
                _ => continue,
            },
            _ => continue,
        };
        let plan = gateway
            .plan(&resource.tool, &resource.action, params)
            .map_err(|error| MethodError::from_tool_error(&error))?;
        return Ok(Read::Live {
            plan: Box::new(plan),
            uri: uri.to_owned(),
            volatile: resource.volatile_fields.clone(),
        });
    }
    Err(not_found())
}

/// Checks that `uri` is a live resource (the only kind that changes while the app runs), for
/// `resources/subscribe`.
pub(crate) fn subscribable(
    gateway: &Gateway,
    state: &Visibility,
    uri: &str,
) -> Result<(), MethodError> {
    match read(gateway, &json!({ "uri": uri }))? {
        // The watcher reads it for the session later: the session's scope must allow the read.
        Read::Live { plan, .. } => check_scope(state, plan.tool, plan.action)
            .map_err(|refused| MethodError::from_tool_error(&refused)),
        Read::Ready(_) => Err(MethodError::invalid(format!(
            "{} does not change while the app runs; subscribe to a live resource (resources/list, resources/templates/list)",
            clip(uri, 120)
        ))),
    }
}

/// A digest of a live resource's contents that ignores its volatile fields, to tell whether it
/// changed.
pub(crate) fn fingerprint(volatile: &[String], finished: &Finished) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut payload = finished.payload.clone();
    if let Some(object) = payload.as_object_mut() {
        for field in volatile {
            object.remove(field);
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    payload.to_string().hash(&mut hasher);
    hasher.finish()
}

/// The contents of a live resource from its read's answer.
pub(crate) fn contents(uri: &str, finished: &Finished) -> Result<Value, MethodError> {
    if finished.is_error {
        let error = &finished.payload["error"];
        let code = error["code"].as_str().unwrap_or_default();
        return Err(MethodError {
            code: if code.ends_with("_NOT_FOUND") {
                codes::RESOURCE_NOT_FOUND
            } else {
                codes::INTERNAL_ERROR
            },
            message: error["message"]
                .as_str()
                .unwrap_or("the read failed")
                .to_owned(),
            data: Some(finished.payload.clone()),
        });
    }
    Ok(json!({
        "contents": [{"uri": uri, "mimeType": "application/json", "text": finished.text}],
    }))
}

/// `%xx` escapes decoded (a name with spaces arrives as `Crate%201`); invalid ones kept.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A tool's action reference as Markdown, from its records.
fn reference(tool: &ToolRecord) -> String {
    let mut out = format!("# `{}`\n\n{}\n", tool.name, tool.summary);
    for action in tool.actions {
        let _ = write!(
            out,
            "\n## `{}.{}` ({}{})\n\n{}\n\nUse it: {}\nNot for: {}\n",
            tool.name,
            action.name,
            action.effect,
            if action.long_running {
                ", long-running"
            } else {
                ""
            },
            action.summary,
            action.when_to_use,
            action.when_not_to_use
        );
        if !action.params.is_empty() {
            out.push_str("\n| parameter | type | required | meaning |\n|---|---|---|---|\n");
            for param in action.params {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    param.name,
                    param.type_label.replace('|', "\\|"),
                    if param.required { "yes" } else { "no" },
                    param.description.replace('|', "\\|").replace('\n', " ")
                );
            }
        }
        if let Some(example) = action.examples.first() {
            let _ = write!(
                out,
                "\nExample ({}): `{{\"operation\":\"execute\",\"tool\":\"{}\",\"action\":\"{}\",\"params\":{}}}` gives {}\n",
                example.title, tool.name, action.name, example.params_json, example.expect
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(percent_decoded("Crate%201"), "Crate 1");
        assert_eq!(percent_decoded("100%"), "100%");
        assert_eq!(percent_decoded("%zz"), "%zz");
    }
}
