//! `completion/complete`: values for a prompt's or a resource template's argument, from the
//! live app (entity names, type names) or the catalog (tool names).

use serde_json::{Value, json};

use super::{MethodError, resources, text};
use crate::app_terms::TermKind;
use crate::catalog::Completes;
use crate::gateway::Gateway;
use crate::gateway::guidance::{MAX_NAME_CHARS, clip};

/// Most values one completion returns (the spec's cap).
const MAX_VALUES: usize = 100;

/// `completion/complete {ref, argument: {name, value}}`.
pub(crate) fn complete(gateway: &Gateway, params: &Value) -> Result<Value, MethodError> {
    let reference = params.get("ref").unwrap_or(&Value::Null);
    let argument = text(&params["argument"], "name").unwrap_or_default();
    let typed = text(&params["argument"], "value").unwrap_or_default();
    let kind = match text(reference, "type") {
        Some("ref/prompt") => {
            let name = text(reference, "name").unwrap_or_default();
            let prompt = gateway.catalog().prompt(name).ok_or_else(|| {
                MethodError::invalid(format!(
                    "no prompt is named \"{}\"; prompts/list shows them",
                    clip(name, MAX_NAME_CHARS)
                ))
            })?;
            let found = prompt
                .arguments
                .iter()
                .find(|candidate| candidate.name == argument)
                .ok_or_else(|| {
                    MethodError::invalid(format!(
                        "prompt {} has no argument \"{}\"",
                        prompt.name,
                        clip(argument, MAX_NAME_CHARS)
                    ))
                })?;
            found.completes
        }
        Some("ref/resource") => {
            let uri = text(reference, "uri").unwrap_or_default();
            let template = resources::template(gateway.identity(), uri).ok_or_else(|| {
                MethodError::invalid(format!(
                    "no resource template is \"{}\"; resources/templates/list shows them",
                    clip(uri, 120)
                ))
            })?;
            template
                .placeholder
                .as_ref()
                .filter(|(param, _)| param == argument)
                .and_then(|(_, completes)| *completes)
        }
        _ => {
            return Err(MethodError::invalid(
                "ref must be {\"type\": \"ref/prompt\", \"name\"} or {\"type\": \"ref/resource\", \"uri\"}",
            ));
        }
    };
    let candidates = match kind {
        None => Vec::new(),
        Some(Completes::Tool) => gateway
            .catalog()
            .tools
            .iter()
            .map(|tool| tool.name.to_owned())
            .collect(),
        Some(Completes::Entity) => terms(gateway, |kind| kind == TermKind::Entity),
        Some(Completes::Type) => terms(gateway, TermKind::is_type),
    };
    let values = ranked(candidates, typed);
    let total = values.len();
    Ok(json!({
        "completion": {
            "values": values.into_iter().take(MAX_VALUES).collect::<Vec<_>>(),
            "total": total,
            "hasMore": total > MAX_VALUES,
        }
    }))
}

/// The names of the app's terms of the kinds `wanted` accepts (an entity's name; a type's
/// short name and, when it differs, its full path).
fn terms(gateway: &Gateway, wanted: impl Fn(TermKind) -> bool) -> Vec<String> {
    let Some(terms) = gateway.app_terms() else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for term in terms.terms.iter().filter(|term| wanted(term.kind)) {
        // What a parameter takes: never an unreflected type (nothing can read it), and for an
        // entity the game calls by a component it carries, only its id (when it is the one).
        if !term.reflected {
            continue;
        }
        if term.carried_by.is_some() {
            if !term.address.is_empty() {
                names.push(term.address.clone());
            }
            continue;
        }
        names.push(term.name.clone());
        if term.address != term.name {
            names.push(term.address.clone());
        }
    }
    names
}

/// The candidates that match what was typed: those starting with it (case-insensitive) first,
/// then those containing it, each group sorted, without repeats.
fn ranked(mut candidates: Vec<String>, typed: &str) -> Vec<String> {
    candidates.sort();
    candidates.dedup();
    let typed = typed.to_lowercase();
    let (mut starting, mut containing) = (Vec::new(), Vec::new());
    for candidate in candidates {
        let lower = candidate.to_lowercase();
        if lower.starts_with(&typed) {
            starting.push(candidate);
        } else if lower.contains(&typed) {
            containing.push(candidate);
        }
    }
    starting.extend(containing);
    starting
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_rank_before_contained_matches() {
        let names = ["Goblin", "Go-kart", "Big Goblin", "Player", "goal"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(
            ranked(names.clone(), "go"),
            ["Go-kart", "Goblin", "goal", "Big Goblin"]
        );
        assert_eq!(ranked(names, "").len(), 5);
    }
}
