//! The one tool `tools/list` shows, the server instructions, and the surface report.
//!
//! Nothing here depends on the catalog: the always-on surface costs the same whether the catalog
//! has ten actions or a thousand.

use serde_json::{Value, json};

use crate::catalog::Catalog;

/// The tool's name.
pub const TOOL_NAME: &str = "bevy";

/// The tool description: it teaches the procedure (kept under 1 KiB; a test pins it).
pub const DESCRIPTION: &str = "Inspect and drive the running Bevy app. Operations:\n\
- search {query}: find actions by intent.\n\
- describe {} -> {tool} -> {tool, action} -> {tool, action, param}: the exact contract. Never guess names.\n\
- execute {tool, action, params}: run an action; its parameters go inside params.\n\
- configure {action, params}: enable or disable tools for this session.\n\
Replies and errors carry a nextCall: send it back unchanged. \
Destructive actions answer CONSENT_REQUIRED with a single-use grant; resend only if the user wants it.";

/// The server instructions sent with `initialize` (kept under 512 bytes; a test pins it).
pub const INSTRUCTIONS: &str = "One tool, `bevy`, drives the running Bevy app: search or describe first, \
then execute with parameters inside params, and follow each nextCall. Entities: \"12v1\", bits or unique Name.";

/// The `inputSchema` of the `bevy` tool.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["operation"],
        "properties": {
            "operation": {"type": "string", "enum": ["describe", "search", "execute", "configure"]},
            "tool": {"type": "string"},
            "action": {"type": "string"},
            "param": {"type": "string"},
            "params": {"type": "object", "description": "The action's own parameters."},
            "query": {"type": "string"},
            "category": {"type": "string", "enum": ["core", "world", "gameplay", "utility"]},
            "effect": {"type": "string", "enum": ["read", "write", "destructive"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "offset": {"type": "integer", "minimum": 0},
            "consent": {
                "type": "object",
                "additionalProperties": false,
                "required": ["capability", "acknowledge", "nonce"],
                "properties": {
                    "capability": {"type": "string"},
                    "acknowledge": {"type": "string", "enum": ["explicit", "elevated"]},
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

/// The `tools/list` result: exactly one tool.
pub fn tools_list_result() -> Value {
    json!({
        "tools": [{
            "name": TOOL_NAME,
            "description": DESCRIPTION,
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

/// Measures the surface for `catalog`.
pub fn surface_report(catalog: &'static Catalog) -> SurfaceReport {
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
        tools_list_bytes: compact_len(&tools_list_result()),
        description_bytes: DESCRIPTION.len(),
        instructions_bytes: INSTRUCTIONS.len(),
        direct_surface_bytes: compact_len(&json!({ "tools": direct })),
        action_count: catalog.action_count(),
    }
}

impl std::fmt::Display for SurfaceReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "start-up surface (bytes):")?;
        writeln!(
            f,
            "  tools/list (one `bevy` tool) {:>8}",
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
    fn surface_budget() {
        assert!(
            DESCRIPTION.len() <= 1024,
            "description is {} bytes",
            DESCRIPTION.len()
        );
        assert!(
            INSTRUCTIONS.len() <= 512,
            "instructions are {} bytes",
            INSTRUCTIONS.len()
        );
        let list = compact_len(&tools_list_result());
        assert!(list <= 4096, "tools/list is {list} bytes");
        assert!(
            list + INSTRUCTIONS.len() <= 2048,
            "start-up context is {} bytes",
            list + INSTRUCTIONS.len()
        );
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
