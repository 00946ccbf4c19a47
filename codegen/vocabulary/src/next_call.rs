//! Builders of the `nextCall`s that replies and errors carry: calls of the `bevy` tool a model can
//! send back unchanged.

use std::fmt;

use serde_json::{Map, Value, json};

/// An action by tool and name (`control_app`, `set_speed`), written from the generated `names`
/// constants; shown as `tool.action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionName {
    /// The tool.
    pub tool: &'static str,
    /// The action.
    pub action: &'static str,
}

impl ActionName {
    /// The action `action` of `tool`.
    pub const fn new(tool: &'static str, action: &'static str) -> ActionName {
        ActionName { tool, action }
    }

    /// `describe {tool, action}` of this action.
    pub fn describe(self) -> Value {
        describe_action(self.tool, self.action)
    }
}

impl fmt::Display for ActionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.tool, self.action)
    }
}

/// `{operation: "describe"}` plus the given scope.
pub fn describe(tool: Option<&str>, action: Option<&str>, param: Option<&str>) -> Value {
    let mut call = Map::new();
    call.insert("operation".to_owned(), json!("describe"));
    for (key, value) in [("tool", tool), ("action", action), ("param", param)] {
        if let Some(value) = value {
            call.insert(key.to_owned(), json!(value));
        }
    }
    Value::Object(call)
}

/// `describe {tool, action}`: the contract of one action.
pub fn describe_action(tool: &str, action: &str) -> Value {
    describe(Some(tool), Some(action), None)
}

/// `execute {tool, action, params}`.
pub fn execute(tool: &str, action: &str, params: Value) -> Value {
    json!({"operation": "execute", "tool": tool, "action": action, "params": params})
}

/// `search {query}`.
pub fn search(query: &str) -> Value {
    json!({"operation": "search", "query": query})
}

/// `configure {action, params}`.
pub fn configure(action: &str, params: Value) -> Value {
    json!({"operation": "configure", "action": action, "params": params})
}

/// Removes `null` values and empty strings from the top level of a call object, so a `nextCall`
/// never carries a key the model would have to fill in.
pub fn without_empty_keys(call: Value) -> Value {
    match call {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, value)| {
                    !(value.is_null() || value.as_str().is_some_and(str::is_empty))
                })
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_have_no_empty_keys() {
        assert_eq!(
            describe(Some("inspect"), None, None),
            json!({"operation": "describe", "tool": "inspect"})
        );
        assert_eq!(
            without_empty_keys(
                json!({"operation": "describe", "tool": "", "action": null, "query": "x"})
            ),
            json!({"operation": "describe", "query": "x"})
        );
        assert_eq!(
            execute("inspect", "get_entity", json!({"entity": "Player"}))["params"]["entity"],
            json!("Player")
        );
    }
}
