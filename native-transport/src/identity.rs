//! What the server presents itself as. Product identity is configuration: the tool's name and
//! texts, the server's name, the catalog tool `configure` runs, where placeholder values are
//! looked up, and what an operator is told about tokens. The defaults name no product; the app
//! that embeds the transport passes its own, so this crate serves any engine's catalog unchanged.

use mcp_vocabulary::catalog::Completes;

/// The product the transport serves as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The one tool's name. Default `app`.
    pub tool_name: String,
    /// The tool's description, which teaches the procedure; at most 1 KiB.
    pub tool_description: String,
    /// The `instructions` sent with `initialize`; at most 512 bytes.
    pub instructions: String,
    /// `serverInfo.name`. Default `mcp-native-transport`.
    pub server_name: String,
    /// `serverInfo.version`. Default this crate's version.
    pub server_version: String,
    /// The catalog tool whose actions `configure` runs (visibility), if the catalog has one.
    /// Default none: `configure` then explains it is not available.
    pub configure_tool: Option<String>,
    /// Where a model finds a real value after sending a placeholder, first match wins. Default
    /// none: the error then points at the parameter's own contract.
    pub lookups: Vec<Lookup>,
    /// What an operator is told to do when a non-loopback bind has no token.
    pub token_help: String,
    /// The URI scheme of the server's resources (`app://reference/<tool>`). Default `app`.
    pub resource_scheme: String,
    /// Resources read live from the app through read actions (a world summary, an entity by
    /// name). Default none: only the action reference is offered.
    pub live_resources: Vec<LiveResource>,
}

/// A resource whose contents a read action gives (MCP `resources/read`): a fixed URI, or a
/// template whose one `{placeholder}` fills a parameter of the action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveResource {
    /// The path after `<scheme>://`: `world/summary`, or a template such as `entity/{entity}`.
    pub path: String,
    /// A short name (`world-summary`).
    pub name: String,
    /// A human title.
    pub title: String,
    /// What it holds.
    pub description: String,
    /// The read action that gives the contents.
    pub tool: String,
    /// See `tool`.
    pub action: String,
    /// For a template: the action parameter its placeholder fills, and what completes it.
    pub placeholder: Option<(String, Option<Completes>)>,
    /// Top-level fields of the contents that change on their own (a frame counter): a change of
    /// only these is not an update for subscribers.
    pub volatile_fields: Vec<String>,
}

/// Where the real value of some parameters can be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The rule applies to parameters whose lowercase name contains one of these.
    pub name_contains: Vec<String>,
    /// ... or is one of these.
    pub name_is: Vec<String>,
    /// ... or whose type label is one of these (`integer | string`).
    pub type_label_is: Vec<String>,
    /// What to tell the model.
    pub hint: String,
    /// The tool and action to describe next.
    pub tool: String,
    /// See `tool`.
    pub action: String,
}

impl LiveResource {
    /// The part of a template's path before its placeholder (`entity/` of `entity/{entity}`);
    /// `None` for a path without one trailing placeholder.
    pub fn template_prefix(&self) -> Option<&str> {
        let (prefix, rest) = self.path.split_once('{')?;
        (rest.ends_with('}') && !rest[..rest.len() - 1].contains(['{', '}'])).then_some(prefix)
    }
}

impl Lookup {
    /// Whether the rule applies to a parameter with this name and type label.
    pub fn applies_to(&self, name: &str, type_label: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        self.name_contains
            .iter()
            .any(|word| lower.contains(word.as_str()))
            || self.name_is.contains(&lower)
            || self.type_label_is.iter().any(|label| label == type_label)
    }
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            tool_name: "app".to_owned(),
            tool_description: "Inspect and drive the running app. Operations:\n\
- search {query}: find actions by intent.\n\
- describe {} -> {tool} -> {tool, action} -> {tool, action, param}: the exact contract. Never guess names.\n\
- execute {tool, action, params}: run an action; its parameters go inside params.\n\
- configure {action, params}: enable or disable tools for this session.\n\
Replies and errors carry a nextCall: send it back unchanged. \
Destructive actions answer CONSENT_REQUIRED with a single-use grant; resend only if the user wants it."
                .to_owned(),
            instructions: "One tool drives the running app: search or describe first, then execute \
with parameters inside params, and follow each nextCall."
                .to_owned(),
            server_name: "mcp-native-transport".to_owned(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            configure_tool: None,
            lookups: Vec::new(),
            token_help: "configure a capability token".to_owned(),
            resource_scheme: "app".to_owned(),
            live_resources: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_prefixes() {
        let resource = |path: &str| LiveResource {
            path: path.to_owned(),
            name: String::new(),
            title: String::new(),
            description: String::new(),
            tool: String::new(),
            action: String::new(),
            placeholder: None,
            volatile_fields: Vec::new(),
        };
        assert_eq!(
            resource("entity/{entity}").template_prefix(),
            Some("entity/")
        );
        assert_eq!(resource("world/summary").template_prefix(), None);
        assert_eq!(resource("a/{b}/c").template_prefix(), None);
    }
}
