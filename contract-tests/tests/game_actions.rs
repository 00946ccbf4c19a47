//! Game-defined actions over real HTTP against the real sandbox: the `game` tool the sandbox
//! registers is found, described, validated, consent-gated and run exactly like a built-in tool,
//! and `tools/list` does not change.

use crate::support;

use bevy_mcp_contract_tests::http;
use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_sandbox::testing::SandboxServer;
use serde_json::json;
use support::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_actions_are_found_described_validated_and_run() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;

    // search by intent
    let found = session
        .call(json!({"operation": "search", "query": "send a wave of enemies at the base"}))
        .await
        .payload();
    assert_eq!(
        (
            found["results"][0]["tool"].clone(),
            found["results"][0]["action"].clone()
        ),
        (json!("game"), json!("spawn_wave")),
        "{found}"
    );

    // describe at every level
    let catalog = session
        .call(json!({"operation": "describe"}))
        .await
        .payload();
    let game = catalog["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["tool"] == json!("game")))
        .cloned()
        .expect("the game tool is in the catalog");
    assert_eq!(game["category"], json!("gameplay"));
    assert_eq!(game["actionCount"], json!(4));
    let tool = session
        .call(json!({"operation": "describe", "tool": "game"}))
        .await
        .payload();
    assert_eq!(tool["actions"][2]["action"], json!("reset_level"));
    assert_eq!(tool["actions"][2]["consent"], json!("explicit"));
    let action = session
        .call(json!({"operation": "describe", "tool": "game", "action": "spawn_wave"}))
        .await
        .payload();
    assert_eq!(action["parameters"][0]["name"], json!("count"));
    assert_eq!(action["parameters"][0]["required"], json!(true));
    assert!(
        action["parameters"][0]["description"]
            .as_str()
            .is_some_and(|text| text.contains("goblins")),
        "doc comments are the descriptions: {action}"
    );
    assert_eq!(
        action["nextCall"],
        json!({"operation": "execute", "tool": "game", "action": "spawn_wave", "params": {"count": 3}})
    );
    let param = session
        .call(json!({"operation": "describe", "tool": "game", "action": "spawn_wave", "param": "count"}))
        .await
        .payload();
    assert_eq!(param["schema"]["maximum"], json!(20), "{param}");

    // execute: the world changes as the handler says
    let wave = session
        .execute("game", "spawn_wave", json!({"count": 2}))
        .await;
    assert!(!wave.is_error(), "{:?}", wave.payload());
    let goblins = session
        .execute("inspect", "find_entities", json!({"name": "Wave Goblin"}))
        .await
        .payload();
    assert_eq!(goblins["total"], json!(2), "{goblins}");

    // the same typed errors as built-ins
    let wrong_type = session
        .execute("game", "spawn_wave", json!({"count": "many"}))
        .await;
    assert_eq!(wrong_type.error_code().as_deref(), Some("INVALID_PARAMS"));
    let too_many = session
        .execute("game", "spawn_wave", json!({"count": 99}))
        .await;
    assert_eq!(too_many.error_code().as_deref(), Some("INVALID_PARAMS"));
    let unknown = session
        .execute("game", "spawn_wave", json!({"cuont": 2}))
        .await;
    assert_eq!(unknown.error_code().as_deref(), Some("UNKNOWN_PARAM"));
    assert_eq!(unknown.payload()["error"]["suggestions"], json!(["count"]));
    let placeholder = session
        .execute("game", "add_score", json!({"team": "TBD", "points": 1}))
        .await;
    assert_eq!(
        placeholder.error_code().as_deref(),
        Some("PLACEHOLDER_VALUE")
    );
    let misspelled = session
        .execute("game", "spawn_wav", json!({"count": 1}))
        .await;
    assert_eq!(misspelled.error_code().as_deref(), Some("UNKNOWN_ACTION"));
    assert_eq!(
        misspelled.payload()["error"]["suggestions"][0],
        json!("spawn_wave")
    );

    // destructive: consent first, then the grant works once
    let asked = session.execute("game", "reset_level", json!({})).await;
    assert_eq!(asked.error_code().as_deref(), Some("CONSENT_REQUIRED"));
    let next_call = asked.payload()["error"]["nextCall"].clone();
    let reset = session.call(next_call.clone()).await;
    assert_eq!(reset.payload(), json!({"despawned": 2}));
    let again = session.call(next_call).await;
    assert_eq!(again.error_code().as_deref(), Some("CONSENT_REUSED"));

    // long-running: progress, then the answer
    let response = session
        .start_call(
            json!(77),
            json!({"operation": "execute", "tool": "game", "action": "wait_for_wave_cleared", "params": {"maxFrames": 5}}),
            Some(json!("wave")),
        )
        .await;
    let outcome = bevy_mcp_contract_tests::mcp::read_outcome(response).await;
    assert_eq!(outcome.payload()["cleared"], json!(true));

    // the audit trail records game actions like any other
    let audit = session
        .execute("system_control", "audit_log", json!({"limit": 50}))
        .await
        .payload();
    assert!(
        audit["entries"].as_array().is_some_and(|entries| entries
            .iter()
            .any(|entry| entry["action"] == json!("game.spawn_wave")
                && entry["effect"] == json!("write"))),
        "{audit}"
    );

    // visibility per session applies
    let disabled = session
        .call(json!({"operation": "configure", "action": "disable_tools", "params": {"tools": ["game"]}}))
        .await;
    assert!(!disabled.is_error(), "{:?}", disabled.payload());
    let refused = session
        .execute("game", "spawn_wave", json!({"count": 1}))
        .await;
    assert_eq!(refused.error_code().as_deref(), Some("TOOL_DISABLED"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_the_same_with_and_without_game_actions() {
    let with_game = SandboxServer::start(60.0, |config| config);
    let without_game = TestServer::start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut bytes = Vec::new();
    for address in [with_game.address, without_game.address] {
        let session = McpSession::start(address).await;
        bytes.push(http::body_bytes(http::send(address, session.request(&body)).await).await);
    }
    assert_eq!(bytes[0], bytes[1]);
}
