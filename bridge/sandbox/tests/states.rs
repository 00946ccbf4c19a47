//! The `state` tool on the sandbox's state machine (menu / playing / paused / game over, the
//! computed `InGame`, the `PauseMenu` sub-state), through the real dispatch path, with the world
//! checked after each transition: OnEnter systems ran, nothing changed on a refusal.

use bevy::prelude::State;
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{GameState, PauseMenu, StateLog};
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

fn row<'a>(list: &'a Value, short_path: &str) -> &'a Value {
    list["states"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|row| row["shortPath"] == json!(short_path))
        })
        .unwrap_or_else(|| panic!("{short_path} is listed: {list}"))
}

fn game_state(harness: &mut Harness) -> GameState {
    *harness.world().resource::<State<GameState>>().get()
}

fn log(harness: &mut Harness) -> StateLog {
    *harness.world().resource::<StateLog>()
}

#[test]
fn list_shows_values_variants_and_schedules() {
    let mut harness = Harness::new();
    let list = ok(harness.call("state", "list", json!({})));
    let game = row(&list, "GameState");
    assert_eq!(game["current"], json!("Menu"));
    assert_eq!(game["active"], json!(true));
    assert_eq!(game["settable"], json!(true));
    assert_eq!(
        game["variants"],
        json!(["Menu", "Playing", "Paused", "GameOver"])
    );
    let schedules = game["schedules"].as_array().expect("schedules");
    for label in ["OnEnter(Playing)", "OnEnter(GameOver)"] {
        let found = schedules.iter().find(|row| row["label"] == json!(label));
        assert!(
            found.is_some_and(|row| row["systems"].as_u64() >= Some(1)),
            "{label} in {schedules:?}"
        );
    }
    let in_game = row(&list, "InGame");
    assert_eq!(
        in_game["active"],
        json!(false),
        "InGame is computed as absent in Menu"
    );
    assert_eq!(in_game["settable"], json!(false));
    let pause_menu = row(&list, "PauseMenu");
    assert_eq!(pause_menu["active"], json!(false));
    assert!(pause_menu.get("current").is_none());
}

#[test]
fn a_transition_runs_its_on_enter_system() {
    let mut harness = Harness::new();
    assert_eq!(log(&mut harness).entered_playing, 0);
    let reply = ok(harness.call(
        "state",
        "set",
        json!({"state": "GameState", "value": "Playing"}),
    ));
    assert_eq!(reply["from"], json!("Menu"));
    assert_eq!(reply["to"], json!("Playing"));
    assert_eq!(reply["changed"], json!(true));
    assert!(
        reply["ranSchedules"]
            .as_array()
            .is_some_and(|ran| ran.contains(&json!("OnEnter(Playing)"))),
        "{reply}"
    );
    assert_eq!(game_state(&mut harness), GameState::Playing);
    assert_eq!(
        log(&mut harness).entered_playing,
        1,
        "OnEnter(Playing) ran once"
    );

    let list = ok(harness.call("state", "list", json!({"filter": "ingame"})));
    assert_eq!(
        row(&list, "InGame")["active"],
        json!(true),
        "the computed state followed"
    );

    // The same value again changes nothing, unless a re-entry is asked for.
    let same = ok(harness.call(
        "state",
        "set",
        json!({"state": "GameState", "value": "Playing"}),
    ));
    assert_eq!(same["changed"], json!(false));
    assert_eq!(log(&mut harness).entered_playing, 1);
    let again = ok(harness.call(
        "state",
        "set",
        json!({"state": "GameState", "value": "Playing", "reenter": true}),
    ));
    assert_eq!(again["changed"], json!(true));
    assert_eq!(log(&mut harness).entered_playing, 2);

    ok(harness.call(
        "state",
        "set",
        json!({"state": "bevy_mcp_sandbox::GameState", "value": "GameOver"}),
    ));
    assert_eq!(log(&mut harness).games_over, 1);
}

#[test]
fn a_bad_variant_gets_suggestions_and_changes_nothing() {
    let mut harness = Harness::new();
    let error = harness
        .call(
            "state",
            "set",
            json!({"state": "GameState", "value": "Playng"}),
        )
        .expect_err("not a variant");
    assert_eq!(error.code.as_str(), "INVALID_VALUE");
    assert_eq!(
        error.suggestions.first().map(String::as_str),
        Some("Playing")
    );
    let details = error.details.clone().unwrap_or_default();
    assert_eq!(
        details["variants"],
        json!(["Menu", "Playing", "Paused", "GameOver"])
    );
    harness.run_frames(3);
    assert_eq!(game_state(&mut harness), GameState::Menu);
    assert_eq!(log(&mut harness).entered_playing, 0);
    let list = ok(harness.call("state", "list", json!({})));
    assert!(
        row(&list, "GameState").get("pending").is_none(),
        "nothing is pending"
    );
}

#[test]
fn computed_inactive_and_unknown_states_are_refused_with_guidance() {
    let mut harness = Harness::new();
    let computed = harness
        .call("state", "set", json!({"state": "InGame", "value": null}))
        .expect_err("a computed state cannot be set");
    assert_eq!(computed.code.as_str(), "STATE_NOT_SETTABLE");

    let inactive = harness
        .call(
            "state",
            "set",
            json!({"state": "PauseMenu", "value": "Settings"}),
        )
        .expect_err("the pause menu only exists while paused");
    assert_eq!(inactive.code.as_str(), "STATE_INACTIVE");

    let unknown = harness
        .call(
            "state",
            "set",
            json!({"state": "GameStat", "value": "Menu"}),
        )
        .expect_err("no such state");
    assert_eq!(unknown.code.as_str(), "STATE_NOT_FOUND");
    let details = unknown.details.clone().unwrap_or_default();
    assert_eq!(details["states"][0], json!("GameState"), "{details}");

    // State<S> itself is not written behind the transition's back.
    let direct = harness
        .call(
            "manage_resource",
            "mutate",
            json!({"resource": "bevy_state::state::resources::State<bevy_mcp_sandbox::GameState>", "path": "", "value": "Playing"}),
        )
        .expect_err("State<S> is protected");
    assert_eq!(direct.code.as_str(), "PROTECTED_TYPE");
    assert_eq!(game_state(&mut harness), GameState::Menu);

    // Once paused, the sub-state exists and can be set.
    ok(harness.call(
        "state",
        "set",
        json!({"state": "GameState", "value": "Paused"}),
    ));
    let reply = ok(harness.call(
        "state",
        "set",
        json!({"state": "PauseMenu", "value": "Settings"}),
    ));
    assert_eq!(reply["from"], json!("Main"));
    assert_eq!(
        *harness.world().resource::<State<PauseMenu>>().get(),
        PauseMenu::Settings
    );
}

/// Game code that derives `States` without `Reflect` (Bevy's `game_menu`): how most games are.
#[derive(bevy::prelude::States, Default, Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum MenuScreen {
    #[default]
    Main,
    Settings,
}

#[test]
fn a_state_without_reflection_is_named_with_the_fix_and_refused_by_name() {
    use bevy::prelude::AppExtStates;
    let mut harness = Harness::with_app(|app| {
        app.init_state::<MenuScreen>();
    });
    let list = ok(harness.call("state", "list", json!({})));
    let unreflected = list["unreflected"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        unreflected,
        vec![json!({"typePath": "sandbox::states::MenuScreen", "reflected": false})],
        "only the unreflected state, not the sandbox's reflected ones: {list}"
    );
    assert!(
        list["howToReflect"]
            .as_str()
            .is_some_and(|fix| fix.contains("register_type_mutable_state")),
        "{list}"
    );
    row(&list, "GameState");

    let refused = harness
        .call(
            "state",
            "set",
            json!({"state": "menuscreen", "value": "Settings"}),
        )
        .expect_err("an unreflected state cannot be set");
    assert_eq!(refused.code.as_str(), "STATE_NOT_FOUND");
    assert!(
        refused.message.contains("not reflected"),
        "{}",
        refused.message
    );
    let details = refused.details.clone().unwrap_or_default();
    assert_eq!(details["typePath"], json!("sandbox::states::MenuScreen"));
    let now = *harness.world().resource::<State<MenuScreen>>().get();
    assert!(
        now == MenuScreen::Main && now != MenuScreen::Settings,
        "nothing changed: {now:?}"
    );

    let filtered = ok(harness.call("state", "list", json!({"filter": "GameState"})));
    assert!(filtered.get("unreflected").is_none(), "{filtered}");
}
