//! The bridge's identity as an MCP server: the `bevy` tool, its texts, and where a model looks up
//! real values. The transport is engine-agnostic; this is what makes it Bevy's.

use bevy_mcp_generated::names::{self, inspect};
use mcp_native_transport::catalog::Completes;
use mcp_native_transport::{Identity, LiveResource, Lookup};

/// The tool name agents see in `tools/list`.
pub(crate) const TOOL_NAME: &str = "bevy";

/// The tool description: it teaches the procedure (at most 1 KiB; the transport checks it).
pub(crate) const DESCRIPTION: &str = "Inspect and drive the running Bevy app. Operations:\n\
- search {query}: find actions by intent.\n\
- describe {} -> {tool} -> {tool, action} -> {tool, action, param}: the exact contract. Never guess names.\n\
- execute {tool, action, params}: run an action; its parameters go inside params.\n\
- configure {action, params}: enable or disable tools for this session.\n\
Replies and errors carry a nextCall: send it back unchanged. \
Destructive actions answer CONSENT_REQUIRED with a single-use grant; resend only if the user wants it.";

/// The server instructions sent with `initialize` (at most 512 bytes).
pub(crate) const INSTRUCTIONS: &str = "One tool, `bevy`, drives the running Bevy app: search or describe first, \
then execute with parameters inside params, and follow each nextCall. Entities: \"12v1\", bits or unique Name.";

/// A live resource read through an `inspect` action.
fn live(
    path: &str,
    name: &str,
    title: &str,
    description: &str,
    action: &str,
    placeholder: Option<(&str, Completes)>,
) -> LiveResource {
    LiveResource {
        path: path.to_owned(),
        name: name.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        tool: inspect::TOOL.to_owned(),
        action: action.to_owned(),
        placeholder: placeholder.map(|(param, completes)| (param.to_owned(), Some(completes))),
        // The world summary says the frame it was read at.
        volatile_fields: vec!["frame".to_owned()],
    }
}

/// The bridge's identity; the token help names the `BridgeConfig` methods (the `bevy-mcp`
/// binary replaces it with its flags).
pub fn bevy_identity() -> Identity {
    let lookup =
        |words: &[&str], exact: &[&str], labels: &[&str], hint: &str, action: &str| Lookup {
            name_contains: words.iter().map(|word| (*word).to_owned()).collect(),
            name_is: exact.iter().map(|word| (*word).to_owned()).collect(),
            type_label_is: labels.iter().map(|label| (*label).to_owned()).collect(),
            hint: hint.to_owned(),
            tool: inspect::TOOL.to_owned(),
            action: action.to_owned(),
        };
    Identity {
        tool_name: TOOL_NAME.to_owned(),
        tool_description: DESCRIPTION.to_owned(),
        instructions: INSTRUCTIONS.to_owned(),
        server_name: "bevy-mcp-bridge".to_owned(),
        server_version: env!("CARGO_PKG_VERSION").to_owned(),
        configure_tool: Some(names::CONFIGURE_TOOL.to_owned()),
        lookups: vec![
            lookup(
                &["entity"],
                &["parent", "root"],
                &["integer | string"],
                "Find the entity's id or Name with inspect.find_entities.",
                inspect::FIND_ENTITIES,
            ),
            lookup(
                &["resource"],
                &[],
                &[],
                "List resource types with inspect.list_resources.",
                inspect::LIST_RESOURCES,
            ),
            lookup(
                &["component", "type"],
                &[],
                &[],
                "List component types with inspect.list_component_types; inspect.describe_type shows a value's shape.",
                inspect::LIST_COMPONENT_TYPES,
            ),
        ],
        token_help: "Give one with BridgeConfig::with_token or with_token_file".to_owned(),
        resource_scheme: "bevy".to_owned(),
        live_resources: vec![
            live(
                "world/summary",
                "world-summary",
                "The world at a glance",
                "Entity and archetype counts, the most common components, resources and the app's state, as inspect.world_summary gives them.",
                inspect::WORLD_SUMMARY,
                None,
            ),
            live(
                "entity/{entity}",
                "entity",
                "An entity by name or id",
                "One entity's components and values (inspect.get_entity); the entity is a unique Name, \"12v1\" or bits.",
                inspect::GET_ENTITY,
                Some(("entity", Completes::Entity)),
            ),
            live(
                "type/{type}",
                "type",
                "A type's shape",
                "What a component, resource or other type's values look like (inspect.describe_type): a full type path or a unique short name.",
                inspect::DESCRIBE_TYPE,
                Some(("type", Completes::Type)),
            ),
        ],
    }
}
