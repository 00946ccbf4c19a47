//! Every built-in action: one module per tool, each declaring its actions as constants beside
//! their handlers (`control_app::PAUSE`: the handler, and what a call may change for the
//! journal). Codegen binds every record to its constant in [`bindings`], so a record without a
//! handler fails to compile. Larger tools keep parts in a folder of their own (`inspect/query`,
//! `control_entity/lifecycle`, `input/pointer`, `view/`).
//!
//! This is the top of the bridge's layers: an action may use anything below it (`reflect`,
//! `runtime`, `history`, `playtest`, `observe`, `game`), and nothing below imports an action.

#[rustfmt::skip]
mod bindings;
pub(crate) mod control_app;
pub(crate) mod control_entity;
pub(crate) mod history;
pub(crate) mod input;
pub(crate) mod inspect;
pub(crate) mod manage_asset;
pub(crate) mod manage_events;
pub(crate) mod manage_resource;
pub(crate) mod manage_world;
pub(crate) mod playtest;
pub(crate) mod state;
pub(crate) mod system_control;
pub(crate) mod view;
pub(crate) mod watch;
pub(crate) mod world_file_assets;

pub(crate) use bindings::bind_all;

/// A JSON object of `fields`, moved in: `json!` serializes each value it is given into a copy,
/// which for a page of rows or a map of components costs as much as building it.
pub(crate) fn object<const N: usize>(fields: [(&str, serde_json::Value); N]) -> serde_json::Value {
    serde_json::Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use mcp_vocabulary::catalog::Effect;

    use crate::runtime::registry::ActionRegistry;

    /// The journal holds exactly what a write's footprint names: a write that declared nothing
    /// would be treated as touching nothing, and a read that declared something would be held
    /// for nothing.
    #[test]
    fn every_write_declares_its_footprint_and_no_read_does() {
        let mut registry = ActionRegistry::default();
        super::bind_all(&mut registry);
        let mut checked = 0;
        for ((tool, action), declares) in registry.footprints() {
            let record = bevy_mcp_generated::CATALOG
                .action(tool, action)
                .unwrap_or_else(|| panic!("{tool}.{action} is bound but has no record"));
            let writes = record.action.effect != Effect::Read;
            assert_eq!(
                declares,
                Some(writes),
                "{tool}.{action} is {} and {} a footprint",
                record.action.effect.as_str(),
                if writes {
                    "must declare"
                } else {
                    "must not declare"
                }
            );
            checked += 1;
        }
        let configure = bevy_mcp_generated::CATALOG
            .tool(bevy_mcp_generated::names::CONFIGURE_TOOL)
            .map_or(0, |tool| tool.actions.len());
        assert_eq!(
            checked + configure,
            bevy_mcp_generated::CATALOG.all_actions().count(),
            "every action but the configure tool's is bound"
        );
    }

    /// Every record's examples parse into the params of the handler it is bound to.
    #[test]
    fn every_record_example_parses_into_its_handlers_params() {
        let mut registry = ActionRegistry::default();
        super::bind_all(&mut registry);
        let actions = registry.freeze();
        let mut parsed = 0;
        for (tool, action) in bevy_mcp_generated::CATALOG.all_actions() {
            let Some(binding) = actions.get(tool.name, action.name) else {
                assert_eq!(tool.name, bevy_mcp_generated::names::CONFIGURE_TOOL);
                continue;
            };
            assert!(!action.examples.is_empty(), "{}.{}", tool.name, action.name);
            for example in action.examples {
                let params: serde_json::Value = serde_json::from_str(example.params_json)
                    .unwrap_or_else(|error| panic!("{error}"));
                if let Err(error) = binding.parse(&params) {
                    panic!(
                        "{}.{} example {:?}: {error}",
                        tool.name, action.name, example.title
                    );
                }
                parsed += 1;
            }
        }
        assert!(parsed >= 80, "{parsed} examples");
    }
}
