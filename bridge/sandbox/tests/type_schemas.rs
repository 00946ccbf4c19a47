//! `inspect.describe_type` schemas checked with a JSON Schema validator against the values the
//! bridge itself returns: `Transform`, an enum with data, a nested game type, and the default
//! value of every registered type; a refused value points at the schema.

use bevy::prelude::AppTypeRegistry;
use bevy::reflect::std_traits::ReflectDefault;
use bevy_mcp_bridge::test_support;
use bevy_mcp_bridge::test_support::type_schema;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema)
        .unwrap_or_else(|error| panic!("not a valid schema ({error}): {schema}"))
}

fn describe(harness: &mut Harness, type_path: &str) -> Value {
    ok(harness.call("inspect", "describe_type", json!({"type": type_path})))["schema"].clone()
}

fn component(harness: &mut Harness, entity: &str, type_path: &str) -> Value {
    let reply = ok(harness.call(
        "inspect",
        "get_entity",
        json!({"entity": entity, "components": [type_path]}),
    ));
    reply["components"][type_path].clone()
}

#[test]
fn get_entity_values_fit_the_described_schemas() {
    let mut harness = Harness::new();
    let cases = [
        ("Player", "bevy_transform::components::transform::Transform"),
        ("Player", "bevy_mcp_sandbox::Weapon"),
        ("Goblin", "bevy_mcp_sandbox::Weapon"),
        ("Player", "bevy_mcp_sandbox::Inventory"),
        ("Player", "bevy_ecs::name::Name"),
        ("Turret", "bevy_ecs::hierarchy::ChildOf"),
    ];
    for (entity, type_path) in cases {
        let schema = describe(&mut harness, type_path);
        let value = component(&mut harness, entity, type_path);
        assert!(!value.is_null(), "{entity} has no {type_path}");
        let validator = validator(&schema);
        if let Err(error) = validator.validate(&value) {
            panic!("{type_path} of {entity}: {value} breaks {schema}: {error}");
        }
    }
}

#[test]
fn the_schemas_are_precise_enough_to_refuse_wrong_values() {
    let mut harness = Harness::new();
    let transform = validator(&describe(
        &mut harness,
        "bevy_transform::components::transform::Transform",
    ));
    assert!(
        !transform.is_valid(
            &json!({"translation": [0, 0], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1]})
        )
    );
    assert!(!transform.is_valid(&json!({"translation": [0, 0, 0], "rotation": [0, 0, 0, 1]})));

    let weapon = validator(&describe(&mut harness, "bevy_mcp_sandbox::Weapon"));
    for fits in [
        json!("Unarmed"),
        json!({"Sword": {"damage": 3.0, "enchanted": false}}),
        json!({"Bow": 3}),
        json!({"Staff": ["ice", 2.0]}),
    ] {
        assert!(weapon.is_valid(&fits), "{fits}");
    }
    for breaks in [
        json!("Axe"),
        json!({"Sword": {"damage": 3.0}}),
        json!({"Bow": -1}),
        json!({"Staff": ["ice"]}),
        json!({"Bow": 3, "Sword": {"damage": 1.0, "enchanted": true}}),
    ] {
        assert!(!weapon.is_valid(&breaks), "{breaks}");
    }

    let inventory = describe(&mut harness, "bevy_mcp_sandbox::Inventory");
    assert!(
        inventory["$defs"]
            .as_object()
            .is_some_and(|defs| defs.contains_key("bevy_mcp_sandbox.Item")),
        "nested types are defined once in $defs: {inventory}"
    );
    let inventory = validator(&inventory);
    assert!(inventory.is_valid(&json!({"gold": 1, "items": [], "equipped": null, "keys": {}})));
    assert!(!inventory.is_valid(
        &json!({"gold": 1, "items": [{"name": "x", "weight": 1.0}], "equipped": null, "keys": {}})
    ));
    assert!(
        !inventory
            .is_valid(&json!({"gold": 1, "items": [], "equipped": null, "keys": {"gate": 300}}))
    );
}

#[test]
fn every_registered_default_value_fits_its_schema() {
    let mut harness = Harness::new();
    let registry = harness.world().resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let mut checked = 0;
    let mut broken = Vec::new();
    for registration in registry.iter() {
        let Some(default) = registration.data::<ReflectDefault>() else {
            continue;
        };
        let value = default.default();
        // Types that cannot be written as JSON at all have nothing to check.
        let Ok(json) = test_support::to_json(value.as_partial_reflect(), &registry) else {
            continue;
        };
        let schema = type_schema(&registry, registration);
        let validator = validator(&schema);
        if let Err(error) = validator.validate(&json) {
            broken.push(format!(
                "{}: {json} ({error})",
                registration.type_info().type_path()
            ));
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} types were checked");
    assert!(
        broken.is_empty(),
        "{} of {checked} defaults break their schema:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn a_refused_value_points_at_the_schema() {
    let mut harness = Harness::new();
    let before = component(&mut harness, "Player", "bevy_mcp_sandbox::Inventory");
    let reply = ok(harness.call(
        "control_entity",
        "insert_components",
        json!({"entity": "Player", "components": {
            "Inventory": {"gold": 5, "items": [{"name": "Potion", "weight": "heavy", "slot": null}], "equipped": null, "keys": {}},
            "Health": {"current": 5.0, "max": 10.0},
        }}),
    ));
    let failed = &reply["failed"][0];
    assert_eq!(failed["code"], json!("INVALID_VALUE"), "{reply}");
    assert_eq!(
        failed["schemaViolation"]["instancePath"],
        json!("/items/0/weight"),
        "{reply}"
    );
    let schema_path = failed["schemaViolation"]["schemaPath"]
        .as_str()
        .unwrap_or_default();
    assert!(
        schema_path.ends_with("/properties/weight/type"),
        "{schema_path}"
    );
    assert_eq!(
        component(&mut harness, "Player", "bevy_mcp_sandbox::Inventory"),
        before,
        "the refused component is unchanged"
    );

    let error = harness
        .call(
            "control_entity",
            "mutate_component",
            json!({"entity": "Goblin", "component": "Weapon", "path": "", "value": {"Bow": "many"}}),
        )
        .expect_err("a wrong value is refused");
    assert_eq!(error.code.as_str(), "INVALID_VALUE");
    let details = error.details.clone().unwrap_or_default();
    assert_eq!(details["instancePath"], json!(""), "{details}");
    assert!(error.message.contains("Weapon"), "{}", error.message);
    assert_eq!(
        component(&mut harness, "Goblin", "bevy_mcp_sandbox::Weapon"),
        json!({"Bow": 12})
    );
}
