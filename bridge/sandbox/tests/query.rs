//! `inspect.query` on a headless sandbox through the real dispatch path: value filters, ordering,
//! paging by cursor while the world changes, and the errors a model gets for a wrong field, value
//! or op.

use bevy::prelude::{Name, Transform};
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{Health, Team};
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

fn err(result: Result<Value, ToolError>) -> ToolError {
    match result {
        Ok(reply) => panic!("expected an error, got {reply}"),
        Err(error) => error,
    }
}

fn names(page: &Value) -> Vec<String> {
    page["entities"]
        .as_array()
        .expect("an entities list")
        .iter()
        .map(|row| row["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn spawn_red(harness: &mut Harness, name: &str, health: f32) {
    harness.world().spawn((
        Name::new(name.to_owned()),
        Transform::default(),
        Health {
            current: health,
            max: 100.0,
        },
        Team::Red,
    ));
}

fn red_by_health(cursor: Option<&Value>) -> Value {
    let mut params = json!({
        "components": ["Health"],
        "where": [{"component": "Team", "path": "", "op": "eq", "value": "Red"}],
        "orderBy": {"component": "Health", "path": ".current"},
        "limit": 2,
    });
    if let Some(cursor) = cursor {
        params["cursor"] = cursor.clone();
    }
    params
}

#[test]
fn a_value_filter_with_ordering_pages_exactly_and_survives_inserts() {
    let mut harness = Harness::new();
    // Red already holds Goblin (30) and Orc (80); Player is Blue (100).
    spawn_red(&mut harness, "Imp", 10.0);
    spawn_red(&mut harness, "Troll", 50.0);
    spawn_red(&mut harness, "Ogre", 90.0);

    let first = ok(harness.call("inspect", "query", red_by_health(None)));
    assert_eq!(names(&first), ["Imp", "Goblin"]);
    assert_eq!(first["total"], json!(5));
    assert_eq!(first["returned"], json!(2));
    assert_eq!(first["moreAvailable"], json!(true));
    assert_eq!(
        first["entities"][1]["components"]["bevy_mcp_sandbox::Health"]["current"],
        json!(30.0)
    );
    assert!(
        first["entities"][1]["components"]
            .get("bevy_mcp_sandbox::Team")
            .is_none(),
        "only the components asked for come back: {first}"
    );

    // Between pages: one entity sorts before the cursor, one after it.
    spawn_red(&mut harness, "Rat", 5.0);
    spawn_red(&mut harness, "Golem", 60.0);

    let second = ok(harness.call("inspect", "query", red_by_health(Some(&first["cursor"]))));
    assert_eq!(names(&second), ["Troll", "Golem"]);
    assert_eq!(second["total"], json!(7));
    let third = ok(harness.call("inspect", "query", red_by_health(Some(&second["cursor"]))));
    assert_eq!(names(&third), ["Orc", "Ogre"]);
    assert_eq!(third["moreAvailable"], json!(false));
    assert!(
        third.get("cursor").is_none(),
        "no cursor after the last page"
    );
}

#[test]
fn descending_order_lt_with_without_and_tolerance() {
    let mut harness = Harness::new();
    let weakest_first = ok(harness.call(
        "inspect",
        "query",
        json!({
            "components": [],
            "where": [{"component": "Health", "path": ".current", "op": "lt", "value": 90}],
            "orderBy": {"component": "Health", "path": ".current", "descending": true},
        }),
    ));
    assert_eq!(names(&weakest_first), ["Orc", "Goblin"]);
    assert_eq!(weakest_first["entities"][0]["components"], json!({}));

    let near = ok(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Health", "path": ".current", "op": "eq", "value": 30.0004, "tolerance": 0.001}]}),
    ));
    assert_eq!(names(&near), ["Goblin"]);
    let exact = ok(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Health", "path": ".current", "op": "eq", "value": 30.0004}]}),
    ));
    assert_eq!(exact["total"], json!(0));

    let blue_without_health = ok(harness.call(
        "inspect",
        "query",
        json!({
            "where": [{"component": "Team", "path": "", "op": "ne", "value": "Red"}],
            "without": ["Health"],
            "orderBy": {"component": "Name", "path": ""},
        }),
    ));
    assert_eq!(names(&blue_without_health), ["Base", "Turret"]);

    let by_name = ok(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Name", "path": "", "op": "contains", "value": "ob"}]}),
    ));
    assert_eq!(names(&by_name), ["Goblin"]);
}

#[test]
fn without_components_every_reflected_value_comes_back() {
    let mut harness = Harness::new();
    let reply = ok(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Name", "path": "", "op": "eq", "value": "Goblin"}]}),
    ));
    let components = &reply["entities"][0]["components"];
    for type_path in [
        "bevy_mcp_sandbox::Health",
        "bevy_mcp_sandbox::Team",
        "bevy_mcp_sandbox::Velocity",
        "bevy_transform::components::transform::Transform",
    ] {
        assert!(
            components.get(type_path).is_some(),
            "{type_path} missing: {components}"
        );
    }
}

#[test]
fn a_wrong_field_value_op_or_cursor_gets_guidance_and_changes_nothing() {
    let mut harness = Harness::new();

    let field = err(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Health", "path": ".curent", "op": "lt", "value": 50}]}),
    ));
    assert_eq!(field.code, "PATH_NOT_FOUND");
    let details = field.details.clone().unwrap_or_default();
    assert_eq!(details["suggestions"][0], json!(".current"), "{details}");
    assert_eq!(details["paths"], json!([".current", ".max"]));

    let order = err(harness.call(
        "inspect",
        "query",
        json!({"orderBy": {"component": "Transform", "path": ".translation.w"}}),
    ));
    assert_eq!(order.code, "PATH_NOT_FOUND");

    let variant = err(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Team", "path": "", "op": "eq", "value": "red"}]}),
    ));
    assert_eq!(variant.code, "INVALID_VALUE");
    assert!(variant.message.contains("Red"), "{}", variant.message);

    let op = err(harness.call(
        "inspect",
        "query",
        json!({"where": [{"component": "Velocity", "path": "", "op": "lt", "value": 1}]}),
    ));
    assert_eq!(op.code, "INVALID_PARAMS");
    assert!(op.message.contains("where[0]"), "{}", op.message);

    let first = ok(harness.call("inspect", "query", red_by_health(None)));
    let mut other = red_by_health(Some(&json!("not a cursor")));
    assert_eq!(
        err(harness.call("inspect", "query", other.clone())).code,
        "INVALID_PARAMS"
    );
    // A cursor of another query (sorted by max) is refused, not read as a position in this one.
    let mut by_max = red_by_health(None);
    by_max["orderBy"] = json!({"component": "Health", "path": ".max"});
    by_max["limit"] = json!(1);
    other["cursor"] = ok(harness.call("inspect", "query", by_max))["cursor"].clone();
    let foreign = err(harness.call("inspect", "query", other));
    assert_eq!(foreign.code, "INVALID_PARAMS");
    assert!(
        foreign.message.contains("different query"),
        "{}",
        foreign.message
    );

    let again = ok(harness.call("inspect", "query", red_by_health(None)));
    assert_eq!(first, again, "a query changes nothing");
}
