//! The one tool `tools/list` shows, the server instructions, and the surface report.
//!
//! Nothing here depends on the catalog: the always-on surface costs the same whether the catalog
//! has ten actions or a thousand.

use serde_json::{Value, json};

use super::OPERATIONS;
use crate::catalog::{Catalog, Category, Consent, Effect};
use crate::identity::Identity;

/// The `inputSchema` of the one tool; its enums come from the vocabulary.
pub fn input_schema() -> Value {
    let acknowledgements: Vec<&str> = Consent::ALL
        .iter()
        .filter(|consent| **consent != Consent::None)
        .map(|consent| consent.as_str())
        .collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["operation"],
        "properties": {
            "operation": {"type": "string", "enum": OPERATIONS},
            "tool": {"type": "string"},
            "action": {"type": "string"},
            "param": {"type": "string"},
            "params": {"type": "object", "description": "The action's own parameters."},
            "query": {"type": "string"},
            "category": {"type": "string", "enum": Category::ALL.map(Category::as_str)},
            "effect": {"type": "string", "enum": Effect::ALL.map(Effect::as_str)},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "offset": {"type": "integer", "minimum": 0},
            "consent": {
                "type": "object",
                "additionalProperties": false,
                "required": ["capability", "acknowledge", "nonce"],
                "properties": {
                    "capability": {"type": "string"},
                    "acknowledge": {"type": "string", "enum": acknowledgements},
                    "nonce": {"type": "string"}
                }
            },
            "options": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 600000},
                    "detail": {"type": "string", "enum": ["summary", "full"]},
                    "maxBytes": {"type": "integer", "minimum": 1024, "maximum": 262144}
                }
            }
        }
    })
}

/// The surface budget an identity must keep: a tool name, a description of at most 1 KiB and
/// instructions of at most 512 bytes.
pub fn check_identity(identity: &Identity) -> Result<(), String> {
    if identity.tool_name.is_empty() {
        return Err("the tool needs a name".to_owned());
    }
    if identity.tool_description.len() > 1024 {
        return Err(format!(
            "the tool description is {} bytes; the budget is 1024",
            identity.tool_description.len()
        ));
    }
    if identity.instructions.len() > 512 {
        return Err(format!(
            "the instructions are {} bytes; the budget is 512",
            identity.instructions.len()
        ));
    }
    Ok(())
}

/// Checks the identity's live resources against the catalog: each names a read action, and a
/// template's placeholder one of its parameters.
pub(crate) fn check_live_resources(
    catalog: &'static Catalog,
    identity: &Identity,
) -> Result<(), String> {
    for resource in &identity.live_resources {
        let found = catalog
            .action(&resource.tool, &resource.action)
            .ok_or_else(|| {
                format!(
                    "live resource {}: no action {}.{}",
                    resource.path, resource.tool, resource.action
                )
            })?;
        if found.action.effect != Effect::Read {
            return Err(format!(
                "live resource {}: {}.{} is not a read",
                resource.path, resource.tool, resource.action
            ));
        }
        match (&resource.placeholder, resource.template_prefix()) {
            (Some((param, _)), Some(_)) if found.action.param(param).is_some() => {}
            (None, None) => {}
            _ => {
                return Err(format!(
                    "live resource {}: a template has one trailing {{placeholder}} naming a parameter of {}.{}, a fixed resource none",
                    resource.path, resource.tool, resource.action
                ));
            }
        }
    }
    Ok(())
}

/// The `tools/list` result: exactly one tool.
pub fn tools_list_result(identity: &Identity) -> Value {
    json!({
        "tools": [{
            "name": identity.tool_name,
            "description": identity.tool_description,
            "inputSchema": input_schema(),
        }]
    })
}

/// What the always-on surface costs, next to what one-tool-per-action would cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceReport {
    /// Bytes of the `tools/list` result.
    pub tools_list_bytes: usize,
    /// Bytes of the tool description.
    pub description_bytes: usize,
    /// Bytes of the server instructions.
    pub instructions_bytes: usize,
    /// Bytes of a `tools/list` result listing every action as its own tool with its schema.
    pub direct_surface_bytes: usize,
    /// Actions in the catalog.
    pub action_count: usize,
}

/// Measures the surface for `catalog` served as `identity`.
pub fn surface_report(catalog: &'static Catalog, identity: &Identity) -> SurfaceReport {
    let direct: Vec<Value> = catalog
        .all_actions()
        .map(|(tool, action)| {
            json!({
                "name": format!("{}_{}", tool.name, action.name),
                "description": format!("{} {} {}", action.summary, action.when_to_use, action.when_not_to_use),
                "inputSchema": serde_json::from_str::<Value>(action.input_schema).unwrap_or(Value::Null),
            })
        })
        .collect();
    SurfaceReport {
        tools_list_bytes: compact_len(&tools_list_result(identity)),
        description_bytes: identity.tool_description.len(),
        instructions_bytes: identity.instructions.len(),
        direct_surface_bytes: compact_len(&json!({ "tools": direct })),
        action_count: catalog.action_count(),
    }
}

impl std::fmt::Display for SurfaceReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "start-up surface (bytes):")?;
        writeln!(
            f,
            "  tools/list (one tool)        {:>8}",
            self.tools_list_bytes
        )?;
        writeln!(
            f,
            "  tool description             {:>8}",
            self.description_bytes
        )?;
        writeln!(
            f,
            "  instructions                 {:>8}",
            self.instructions_bytes
        )?;
        writeln!(
            f,
            "  direct surface ({} actions as {} tools) {:>8}",
            self.action_count, self.action_count, self.direct_surface_bytes
        )
    }
}

fn compact_len(value: &Value) -> usize {
    serde_json::to_vec(value)
        .map(|bytes| bytes.len())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_identity_keeps_the_surface_budget() {
        let identity = Identity::default();
        assert!(check_identity(&identity).is_ok());
        let list = compact_len(&tools_list_result(&identity));
        assert!(list <= 4096, "tools/list is {list} bytes");
        assert!(
            list + identity.instructions.len() <= 2048,
            "start-up context is {} bytes",
            list + identity.instructions.len()
        );
        let oversized = Identity {
            instructions: "i".repeat(513),
            ..Identity::default()
        };
        assert!(check_identity(&oversized).is_err());
    }

    #[test]
    fn schema_is_closed_at_the_top_and_open_in_params() {
        let schema = input_schema();
        assert_eq!(schema["additionalProperties"], json!(false));
        assert!(
            schema["properties"]["params"]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(
            schema["properties"]["consent"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            schema["properties"]["options"]["additionalProperties"],
            json!(false)
        );
        assert!(jsonschema::draft202012::meta::validate(&schema).is_ok());
    }
}
