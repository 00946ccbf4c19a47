//! The generated crate agrees with its own records: typed params refuse unknown fields by name
//! and apply the records' defaults, and the static tables are consistent. (That every example
//! parses into its handler's params is checked where the handlers are bound, in the bridge.)

use bevy_mcp_generated::CATALOG;
use bevy_mcp_generated::params::{
    ControlEntitySetParentParams, ControlEntitySpawnParams, EntityRef, InspectListEntitiesParams,
};
use mcp_native_transport::catalog::Consent;
use serde_json::{Value, json};

#[test]
fn an_unknown_field_is_refused_by_name_with_the_accepted_ones() {
    let error = serde_json::from_value::<ControlEntitySpawnParams>(
        json!({"name": "Crate", "componets": {}}),
    )
    .expect_err("unknown field must be refused");
    let message = error.to_string();
    assert!(message.contains("componets"), "{message}");
    for accepted in ["name", "components", "parent"] {
        assert!(message.contains(accepted), "{message} lists {accepted}");
    }
}

#[test]
fn params_decode_into_the_typed_shapes() {
    let params: ControlEntitySetParentParams =
        serde_json::from_value(json!({"entity": 4294967308u64, "parent": null}))
            .expect("valid params");
    assert_eq!(params.entity, EntityRef::Bits(4294967308));
    assert_eq!(params.parent, None);

    let params: InspectListEntitiesParams =
        serde_json::from_value(json!({})).expect("an empty object fits");
    assert_eq!(
        (params.offset, params.limit, params.with_component_names),
        (0, 50, true),
        "record defaults apply"
    );
}

#[test]
fn catalog_tables_are_consistent() {
    assert_eq!(CATALOG.revision.len(), 16);
    let tools: Vec<&str> = CATALOG.tools.iter().map(|tool| tool.name).collect();
    for tool in ["manage_tools", "inspect", "control_entity", "control_app"] {
        assert!(tools.contains(&tool), "{tool} is in the catalog");
    }
    let despawn = CATALOG
        .action("control_entity", "delete")
        .expect("alias resolves");
    assert_eq!(despawn.action.name, "despawn");
    assert_eq!(despawn.resolved_from, Some("delete"));
    assert_eq!(despawn.action.consent, Consent::Explicit);
    let exit = CATALOG.action("control_app", "exit").expect("exit exists");
    assert_eq!(exit.action.consent, Consent::Elevated);
    for (tool, action) in CATALOG.all_actions() {
        let schema: Value =
            serde_json::from_str(action.input_schema).expect("input schema is JSON");
        assert_eq!(
            schema["additionalProperties"],
            json!(false),
            "{}.{}",
            tool.name,
            action.name
        );
        for param in action.params {
            assert!(
                !param.description.is_empty(),
                "{}.{}.{}",
                tool.name,
                action.name,
                param.name
            );
            let _: Value = serde_json::from_str(param.schema).expect("param schema is JSON");
        }
    }
}
