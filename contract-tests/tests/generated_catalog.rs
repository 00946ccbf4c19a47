//! The generated crate agrees with its own records: every example parses into a typed `Call`,
//! unknown fields are refused by name, and the static tables are consistent.

use bevy_mcp_generated::call::{Call, ControlEntityCall, InspectCall, ParseError};
use bevy_mcp_generated::params::EntityRef;
use bevy_mcp_generated::{CATALOG, names};
use mcp_native_transport::catalog::Consent;
use serde_json::{Value, json};

#[test]
fn every_record_example_parses_into_its_call() {
    let mut parsed = 0;
    for (tool, action) in CATALOG.all_actions() {
        assert!(
            !action.examples.is_empty(),
            "{}.{} has no example",
            tool.name,
            action.name
        );
        for example in action.examples {
            let params: Value =
                serde_json::from_str(example.params_json).expect("example params are JSON");
            let call = Call::parse(tool.name, action.name, params).unwrap_or_else(|error| {
                panic!(
                    "{}.{} example {:?}: {error}",
                    tool.name, action.name, example.title
                )
            });
            assert_eq!((call.tool(), call.action()), (tool.name, action.name));
            parsed += 1;
        }
    }
    assert!(parsed >= CATALOG.action_count());
}

#[test]
fn an_unknown_field_is_refused_by_name_with_the_accepted_ones() {
    let error = Call::parse(
        names::control_entity::TOOL,
        names::control_entity::SPAWN,
        json!({"name": "Crate", "componets": {}}),
    )
    .expect_err("unknown field must be refused");
    let message = error.to_string();
    assert!(message.contains("componets"), "{message}");
    for accepted in ["name", "components", "parent"] {
        assert!(message.contains(accepted), "{message} lists {accepted}");
    }
    assert!(matches!(
        error,
        ParseError::InvalidParams {
            tool: "control_entity",
            action: "spawn",
            ..
        }
    ));
}

#[test]
fn unknown_actions_and_aliases_are_not_parsed() {
    // Aliases are resolved by the gateway before parsing; the typed layer only knows canonical names.
    for (tool, action) in [
        ("control_entity", "delete"),
        ("inspekt", "get_entity"),
        ("inspect", ""),
    ] {
        let error = Call::parse(tool, action, json!({})).expect_err("must be refused");
        assert!(
            matches!(error, ParseError::UnknownAction { .. }),
            "{tool}.{action}: {error}"
        );
    }
}

#[test]
fn params_decode_into_the_typed_shapes() {
    let call = Call::parse(
        "control_entity",
        "set_parent",
        json!({"entity": 4294967308u64, "parent": null}),
    )
    .expect("valid params");
    let Call::ControlEntity(ControlEntityCall::SetParent(params)) = call else {
        panic!("wrong variant: {call:?}");
    };
    assert_eq!(params.entity, EntityRef::Bits(4294967308));
    assert_eq!(params.parent, None);

    let call =
        Call::parse("inspect", "list_entities", Value::Null).expect("null params count as {}");
    let Call::Inspect(InspectCall::ListEntities(params)) = call else {
        panic!("wrong variant: {call:?}");
    };
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
