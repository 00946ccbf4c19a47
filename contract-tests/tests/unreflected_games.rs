//! A game written the usual way — components that do not derive `Reflect`, as in Bevy's
//! breakout (`Paddle`, `Ball`, `Brick`) — over real HTTP: its components are listed by name with
//! `reflected: false` and the fix, queries and `find_entities` filter by those names, and entity
//! references inside values are written as replies show them (`"12v1"`).

use bevy::prelude::{App, Component, Entity, Name, ReflectComponent, Startup, Transform, World};
use bevy::reflect::Reflect;
use bevy::reflect::std_traits::ReflectDefault;
use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_sandbox::testing::SandboxServer;
use serde_json::{Value, json};

/// Game code without reflection.
#[derive(Component)]
struct Paddle;

#[derive(Component)]
#[allow(dead_code, reason = "game state the test never reads")]
struct Ball {
    speed: f32,
}

/// A reflected component that points at another entity.
#[derive(Component, Reflect, Default)]
#[reflect(Component, Default, no_auto_register)]
struct Aim {
    target: Option<Entity>,
}

fn breakout(app: &mut App) {
    app.register_type::<Aim>()
        .add_systems(Startup, |world: &mut World| {
            world.spawn((Paddle, Transform::from_xyz(0.0, -300.0, 0.0)));
            world.spawn((Ball { speed: 400.0 }, Transform::default()));
            world.spawn((Name::new("Turret sight"), Aim::default()));
        });
}

fn entity_with(rows: &Value, component: &str) -> Option<String> {
    rows["entities"].as_array()?.iter().find_map(|row| {
        row["components"]
            .as_array()?
            .iter()
            .any(|name| name.as_str() == Some(component))
            .then(|| row["entity"].as_str().map(str::to_owned))
            .flatten()
    })
}

/// The one paddle's id, found by its unreflected component's short name.
async fn paddle_id(session: &McpSession) -> String {
    let found = session
        .execute(
            "inspect",
            "find_entities",
            json!({"withComponents": ["Paddle"]}),
        )
        .await;
    assert!(!found.is_error(), "{:?}", found.payload());
    assert_eq!(found.payload()["total"], json!(1), "{}", found.payload());
    found.payload()["entities"][0]["entity"]
        .as_str()
        .map(str::to_owned)
        .expect("the paddle's id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreflected_components_are_named_and_filterable() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout);
    let session = McpSession::start(server.address).await;
    let paddle = paddle_id(&session).await;

    let read = session
        .execute("inspect", "get_entity", json!({"entity": paddle}))
        .await;
    let payload = read.payload();
    let unreflected = payload["unreflected"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        unreflected.iter().any(|component| {
            component["type"]
                .as_str()
                .is_some_and(|name| name.ends_with("::Paddle"))
                && component["reflected"] == json!(false)
        }),
        "the paddle's own component is named: {payload}"
    );
    assert!(
        payload["howToReflect"].as_str().is_some_and(
            |fix| fix.contains("#[reflect(Component)]") && fix.contains("register_type")
        ),
        "{payload}"
    );
    assert!(
        payload["components"]
            .as_object()
            .is_some_and(|components| components.keys().any(|path| path.ends_with("Transform"))),
        "its reflected components still come back with values"
    );

    let balls = session
        .execute(
            "inspect",
            "query",
            json!({"with": ["Ball"], "without": ["Paddle"], "components": []}),
        )
        .await;
    assert!(!balls.is_error(), "{:?}", balls.payload());
    assert_eq!(balls.payload()["total"], json!(1), "{}", balls.payload());
    let listed = session
        .execute(
            "inspect",
            "list_entities",
            json!({"withComponentNames": true, "limit": 100}),
        )
        .await;
    assert!(
        entity_with(&listed.payload(), "Ball").is_some(),
        "listings name unreflected components: {}",
        listed.payload()
    );
    let unknown = session
        .execute(
            "inspect",
            "find_entities",
            json!({"withComponents": ["Paddel"]}),
        )
        .await;
    assert_eq!(unknown.error_code().as_deref(), Some("TYPE_NOT_FOUND"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entity_references_in_values_take_the_display_form() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout);
    let session = McpSession::start(server.address).await;
    let player = session
        .execute("inspect", "get_entity", json!({"entity": "Player"}))
        .await;
    let player_id = player.payload()["entity"]["entity"]
        .as_str()
        .map(str::to_owned)
        .expect("the player's id");
    let player_bits = player.payload()["entity"]["bits"].clone();

    let aimed = session
        .execute(
            "control_entity",
            "mutate_component",
            json!({"entity": "Turret sight", "component": "Aim", "path": ".target", "value": player_id}),
        )
        .await;
    assert!(!aimed.is_error(), "{:?}", aimed.payload());
    let read = session
        .execute(
            "inspect",
            "get_entity",
            json!({"entity": "Turret sight", "components": ["Aim"]}),
        )
        .await;
    let aim = read.payload()["components"]
        .as_object()
        .and_then(|components| {
            components
                .iter()
                .find(|(path, _)| path.ends_with("::Aim"))
                .map(|(_, value)| value.clone())
        })
        .expect("the Aim value");
    assert_eq!(aim["target"], player_bits, "{aim}");

    let spawned = session
        .execute(
            "control_entity",
            "spawn",
            json!({"name": "Second sight", "components": {"Aim": {"target": player_id}}}),
        )
        .await;
    assert!(!spawned.is_error(), "{:?}", spawned.payload());
    let text = session
        .execute(
            "control_entity",
            "mutate_component",
            json!({"entity": "Turret sight", "component": "Aim", "path": ".target", "value": "not-an-entity"}),
        )
        .await;
    assert!(text.is_error(), "anything else is still refused");
}

/// Asking for the values of a component the game never reflected (`Ball`) is refused with the
/// reason, not as an unknown type: the error names the component, says it is not reflected and
/// how to reflect it, and its `nextCall` (a query by presence) finds the ball. Nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_of_an_unreflected_component_are_refused_with_the_way_in() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout);
    let session = McpSession::start(server.address).await;
    let asks = [
        ("inspect", "query", json!({"components": ["Ball"]})),
        ("inspect", "describe_type", json!({"type": "Ball"})),
        (
            "inspect",
            "query",
            json!({"where": [{"component": "Ball", "path": ".speed", "op": "gt", "value": 1}]}),
        ),
    ];
    for (tool, action, params) in asks {
        let refused = session.execute(tool, action, params.clone()).await;
        let error = &refused.payload()["error"];
        assert_eq!(
            refused.error_code().as_deref(),
            Some("TYPE_NOT_FOUND"),
            "{tool}.{action} {params}: {error}"
        );
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("::Ball is a component of this app, but it is not reflected")
                && message.contains("#[reflect(Component)]"),
            "{tool}.{action} {params}: {error}"
        );
        assert_eq!(error["details"]["reflected"], json!(false), "{error}");
        let next = &error["nextCall"];
        assert_eq!(
            (next["tool"].as_str(), next["action"].as_str()),
            (Some("inspect"), Some("query")),
            "{error}"
        );
        let followed = session
            .execute("inspect", "query", next["params"].clone())
            .await;
        assert!(!followed.is_error(), "{:?}", followed.payload());
        assert_eq!(
            followed.payload()["total"],
            json!(1),
            "{}",
            followed.payload()
        );
    }
}

/// A model that calls an unnamed entity by its component ("move the Paddle", "the ball") is
/// told which entities carry it, by id, and gets the query that lists them: nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entity_called_by_its_component_gets_the_carriers_ids() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout);
    let session = McpSession::start(server.address).await;
    let paddle = paddle_id(&session).await;

    let moved = session
        .execute(
            "control_entity",
            "set_transform",
            json!({"entity": "Paddle", "translation": [50.0, -300.0, 0.0]}),
        )
        .await;
    assert_eq!(moved.error_code().as_deref(), Some("ENTITY_NOT_FOUND"));
    let error = &moved.payload()["error"];
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains(&paddle) && message.contains("Paddle")),
        "the message names the carrier's id: {error}"
    );
    assert_eq!(error["details"]["count"], json!(1), "{error}");
    assert_eq!(error["details"]["carriers"][0]["entity"], json!(paddle));
    let next = &error["nextCall"];
    assert_eq!(
        (&next["tool"], &next["action"]),
        (&json!("inspect"), &json!("query"))
    );
    let listed = session
        .execute("inspect", "query", next["params"].clone())
        .await;
    assert_eq!(listed.payload()["total"], json!(1), "{}", listed.payload());

    let read = session
        .execute("inspect", "get_entity", json!({"entity": paddle}))
        .await;
    assert_eq!(
        read.payload()["components"]["bevy_transform::components::transform::Transform"]["translation"],
        json!([0.0, -300.0, 0.0]),
        "the refused call moved nothing"
    );

    let ball = session
        .execute("inspect", "get_entity", json!({"entity": "ball"}))
        .await;
    assert_eq!(
        ball.payload()["error"]["details"]["count"],
        json!(1),
        "any case: {}",
        ball.payload()
    );
    let nothing = session
        .execute("inspect", "get_entity", json!({"entity": "Bat"}))
        .await;
    assert_eq!(nothing.error_code().as_deref(), Some("ENTITY_NOT_FOUND"));
    assert!(
        nothing.payload()["error"]["details"]
            .get("carriers")
            .is_none(),
        "no component of that name: {}",
        nothing.payload()
    );
}
