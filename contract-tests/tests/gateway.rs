//! The `bevy` gateway tool (DESIGN section 3) over real HTTP, against the real generated catalog
//! and a test `Dispatch`.

use crate::support;

use bevy_mcp_contract_tests::http::{self, VERSIONS};
use bevy_mcp_contract_tests::mcp::{CallOutcome, McpSession};
use bevy_mcp_contract_tests::synthetic::synthetic_catalog;
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::{ServerBuilder, ServerConfig, surface_report};
use serde_json::{Value, json};
use support::{TestDispatch, TestServer};

/// Follows `nextCall`s from `start` until an execute succeeds; `pick` chooses the row to follow
/// when a reply lists several (describe {tool}, search). Returns the codes seen on the way.
async fn follow(
    session: &McpSession,
    start: Value,
    pick: &str,
    max_steps: usize,
) -> (Vec<String>, CallOutcome) {
    let mut call = start;
    let mut seen = Vec::new();
    for _ in 0..max_steps {
        let outcome = session.call(call.clone()).await;
        let payload = outcome.payload();
        if outcome.is_error() {
            seen.push(payload["error"]["code"].as_str().unwrap_or("?").to_owned());
            call = payload["error"]["nextCall"].clone();
            assert!(
                call.is_object(),
                "every error carries a nextCall: {payload}"
            );
            continue;
        }
        if call["operation"] == json!("execute") {
            return (seen, outcome);
        }
        seen.push(payload["scope"].as_str().unwrap_or("reply").to_owned());
        let rows = payload["actions"]
            .as_array()
            .or_else(|| payload["results"].as_array());
        call = match rows {
            Some(rows) => rows
                .iter()
                .find(|row| row["action"] == json!(pick))
                .map(|row| row["nextCall"].clone())
                .unwrap_or_else(|| panic!("{pick} not listed in {payload}")),
            None => payload["nextCall"].clone(),
        };
    }
    panic!("no successful execute within {max_steps} steps; saw {seen:?}");
}

fn assert_no_empty_keys(call: &Value) {
    for (key, value) in call.as_object().expect("a call object") {
        assert!(
            !value.is_null() && value != &json!(""),
            "nextCall key {key} is empty: {call}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_catalog_level() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let reply = session
        .call(json!({"operation": "describe"}))
        .await
        .payload();
    assert_eq!(reply["scope"], json!("catalog"));
    assert_eq!(reply["catalogRevision"], json!(CATALOG.revision));
    let tools = reply["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), CATALOG.tools.len());
    for (row, tool) in tools.iter().zip(CATALOG.tools) {
        assert_eq!(row["tool"], json!(tool.name));
        assert_eq!(row["actionCount"], json!(tool.actions.len()));
        assert_eq!(row["enabled"], json!(true));
        assert_eq!(
            row["nextCall"],
            json!({"operation": "describe", "tool": tool.name})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_tool_level_pages_and_filters() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let reply = session
        .call(json!({"operation": "describe", "tool": "control_entity", "limit": 3}))
        .await
        .payload();
    assert_eq!(reply["scope"], json!("tool"));
    assert_eq!(reply["actions"].as_array().map(Vec::len), Some(3));
    assert_eq!(reply["hasMore"], json!(true));
    let despawn =
        json!({"operation": "describe", "tool": "control_entity", "offset": 1, "limit": 1});
    let row = &session.call(despawn).await.payload()["actions"][0];
    assert_eq!(row["action"], json!("despawn"));
    assert_eq!(
        row["consent"],
        json!("explicit"),
        "consent shows when needed"
    );
    let filtered = session
        .call(json!({"operation": "describe", "tool": "control_entity", "query": "parent"}))
        .await
        .payload();
    let names: Vec<&str> = filtered["actions"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["action"].as_str())
        .collect();
    assert!(names.contains(&"set_parent"), "{names:?}");
    assert!(!names.contains(&"rename"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_matches_catalog_json_for_every_action_and_param() {
    let catalog: Value =
        serde_json::from_str(include_str!("../../generated/catalog.json")).expect("catalog.json");
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    for tool in catalog["tools"].as_array().expect("tools") {
        let tool_name = tool["tool"].as_str().expect("name");
        for action in tool["actions"].as_array().expect("actions") {
            let action_name = action["action"].as_str().expect("name");
            let reply = session
                .call(json!({"operation": "describe", "tool": tool_name, "action": action_name}))
                .await
                .payload();
            assert_eq!(reply["scope"], json!("action"));
            for key in [
                "summary",
                "effect",
                "consent",
                "longRunning",
                "aliases",
                "whenToUse",
                "whenNotToUse",
                "errors",
            ] {
                assert_eq!(reply[key], action[key], "{tool_name}.{action_name} {key}");
            }
            let expected_rows: Vec<Value> = action["parameters"]
                .as_array()
                .expect("parameters")
                .iter()
                .map(|row| {
                    let mut row = row.clone();
                    row.as_object_mut().expect("row").remove("schema");
                    row
                })
                .collect();
            assert_eq!(
                reply["parameters"],
                json!(expected_rows),
                "{tool_name}.{action_name} parameters"
            );
            let next_call = &reply["nextCall"];
            assert_eq!(next_call["operation"], json!("execute"));
            assert_eq!(
                next_call["params"], action["examples"][0]["params"],
                "the example is a ready call"
            );
            assert_eq!(
                reply.get("consentGrant").is_some(),
                action["consent"] != json!("none")
            );
            for param in action["parameters"].as_array().expect("parameters") {
                let name = param["name"].as_str().expect("name");
                let reply = session
                    .call(json!({"operation": "describe", "tool": tool_name, "action": action_name, "param": name}))
                    .await
                    .payload();
                assert_eq!(reply["scope"], json!("param"));
                assert_eq!(
                    reply["schema"], param["schema"],
                    "{tool_name}.{action_name}.{name}"
                );
                assert_eq!(reply["required"], param["required"]);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_parameters_are_the_actions_own() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let rename = session
        .call(json!({"operation": "describe", "tool": "control_entity", "action": "rename"}))
        .await
        .payload();
    let names: Vec<&str> = rename["parameters"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["name"].as_str())
        .collect();
    assert_eq!(names, ["entity", "name"], "never a union over the tool");
    let alias = session
        .call(json!({"operation": "describe", "tool": "control_entity", "action": "teleport"}))
        .await
        .payload();
    assert_eq!(
        (alias["action"].clone(), alias["resolvedFrom"].clone()),
        (json!("set_transform"), json!("teleport"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_actions_by_intent() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    for (query, tool, action) in [
        ("move the player", "control_entity", "set_transform"),
        ("teleport", "control_entity", "set_transform"),
        ("freeze time", "control_app", "pause"),
        ("delete an entity", "control_entity", "despawn"),
        ("get entity", "inspect", "get_entity"),
        ("what resources exist", "inspect", "list_resources"),
        ("save the world to a file", "manage_world", "save"),
        ("load a saved world", "manage_world", "load"),
        ("list asset files", "manage_asset", "list_files"),
        ("watch the player", "watch", "watch_entity"),
        ("fire an explosion event", "manage_events", "trigger_event"),
        ("recent error logs", "system_control", "get_logs"),
    ] {
        let reply = session
            .call(json!({"operation": "search", "query": query}))
            .await
            .payload();
        let top = &reply["results"][0];
        assert_eq!(
            (top["tool"].as_str(), top["action"].as_str()),
            (Some(tool), Some(action)),
            "{query}: {reply}"
        );
        assert_eq!(
            top["nextCall"],
            json!({"operation": "describe", "tool": tool, "action": action})
        );
    }
    let limited = session
        .call(json!({"operation": "search", "query": "entity", "limit": 2}))
        .await
        .payload();
    assert_eq!(limited["results"].as_array().map(Vec::len), Some(2));
    let destructive = session
        .call(json!({"operation": "search", "query": "entity", "effect": "destructive"}))
        .await
        .payload();
    let rows = destructive["results"].as_array().expect("rows");
    // The filter asks for destruction: the destructive actions about entities are offered.
    assert!(!rows.is_empty(), "{destructive}");
    assert!(rows.iter().all(|row| row["effect"] == json!("destructive")));
    let nothing = session
        .call(json!({"operation": "search", "query": "qqqzzz"}))
        .await
        .payload();
    assert_eq!(nothing["results"], json!([]));
    assert_eq!(nothing["nextCall"], json!({"operation": "describe"}));
    let capped = session
        .call(json!({"operation": "search", "query": "entity", "limit": 50}))
        .await
        .payload();
    assert!(
        capped["results"].as_array().expect("rows").len() <= 25,
        "max 25"
    );
    for (key, wrong, known) in [
        ("category", "gamplay", "gameplay"),
        ("effect", "writes", "write"),
    ] {
        let refused = session
            .call(json!({"operation": "search", "query": "entity", key: wrong}))
            .await;
        assert_eq!(
            refused.error_code().as_deref(),
            Some("INVALID_ARGUMENT"),
            "{key}"
        );
        let error = &refused.payload()["error"];
        assert!(
            error["suggestions"]
                .as_array()
                .is_some_and(|names| names.contains(&json!(known))),
            "{error}"
        );
        assert_eq!(
            error["nextCall"],
            json!({"operation": "search", "query": "entity"})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelled_tool_reaches_a_successful_call() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let start = json!({"operation": "execute", "tool": "control_entty", "action": "spawn", "params": {"name": "Crate"}});
    let (seen, outcome) = follow(&session, start, "spawn", 5).await;
    assert_eq!(seen, ["UNKNOWN_TOOL", "tool", "action"]);
    assert!(!outcome.is_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelled_action_reaches_a_successful_call() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let first = session
        .call(json!({"operation": "execute", "tool": "control_entity", "action": "spwan"}))
        .await;
    assert_eq!(first.error_code().as_deref(), Some("UNKNOWN_ACTION"));
    assert_eq!(first.payload()["error"]["suggestions"][0], json!("spawn"));
    let start = json!({"operation": "execute", "tool": "control_entity", "action": "spwan"});
    let (seen, outcome) = follow(&session, start, "spawn", 4).await;
    assert_eq!(seen, ["UNKNOWN_ACTION", "action"]);
    assert!(!outcome.is_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelled_param_reaches_a_successful_call() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let start = json!({"operation": "execute", "tool": "control_entity", "action": "spawn", "params": {"nmae": "Crate"}});
    let first = session.call(start.clone()).await;
    let error = &first.payload()["error"];
    assert_eq!(error["code"], json!("UNKNOWN_PARAM"));
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("did you mean \"name\""))
    );
    assert_eq!(
        error["nextCall"],
        json!({"operation": "describe", "tool": "control_entity", "action": "spawn", "param": "name"})
    );
    let (seen, outcome) = follow(&session, start, "spawn", 5).await;
    assert_eq!(seen, ["UNKNOWN_PARAM", "param", "action"]);
    assert!(!outcome.is_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_param_names_the_sibling_that_takes_it() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let outcome = session
        .execute(
            "control_entity",
            "rename",
            json!({"entity": "Crate", "name": "A", "components": ["Velocity"]}),
        )
        .await;
    let error = &outcome.payload()["error"];
    assert_eq!(error["code"], json!("UNKNOWN_PARAM"));
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("control_entity.spawn") && hint.contains("control_entity.remove_components"),
        "{hint}"
    );
    assert_eq!(error["details"]["accepted"], json!(["entity", "name"]));
    assert_no_empty_keys(&error["nextCall"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_of_another_tool_redirects_there() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let outcome = session
        .execute("control_entity", "get_entity", json!({"entity": "Player"}))
        .await;
    let error = &outcome.payload()["error"];
    assert_eq!(error["code"], json!("UNKNOWN_ACTION"));
    assert_eq!(
        error["nextCall"],
        json!({"operation": "describe", "tool": "inspect", "action": "get_entity"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_and_top_level_mistakes_are_guided() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let typo = session.call(json!({"operation": "exectue"})).await;
    assert_eq!(typo.error_code().as_deref(), Some("UNKNOWN_OPERATION"));
    assert_eq!(typo.payload()["error"]["suggestions"][0], json!("execute"));
    // A parameter at the top level is moved into params by the nextCall.
    let flat = session
        .call(json!({"operation": "execute", "tool": "inspect", "action": "get_entity", "entity": "Player"}))
        .await;
    assert_eq!(flat.error_code().as_deref(), Some("UNKNOWN_ARGUMENT"));
    let fixed = flat.payload()["error"]["nextCall"].clone();
    assert_eq!(fixed["params"], json!({"entity": "Player"}));
    assert!(
        !session.call(fixed).await.is_error(),
        "the nextCall works unchanged"
    );
    // action inside params.
    let nested = session
        .call(json!({"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"action": "get_entity", "entity": "Player"}}))
        .await;
    assert_eq!(nested.error_code().as_deref(), Some("INVALID_PARAMS"));
    assert!(
        !session
            .call(nested.payload()["error"]["nextCall"].clone())
            .await
            .is_error()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placeholders_are_refused_with_where_to_look() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    for placeholder in [
        "TBD",
        "xxx",
        "dummy_1",
        "<entity>",
        "<id>",
        "your_entity",
        "REPLACE_ME",
    ] {
        let outcome = session
            .execute("inspect", "get_entity", json!({"entity": placeholder}))
            .await;
        assert_eq!(
            outcome.error_code().as_deref(),
            Some("PLACEHOLDER_VALUE"),
            "{placeholder}"
        );
        assert_eq!(
            outcome.payload()["error"]["nextCall"],
            json!({"operation": "describe", "tool": "inspect", "action": "find_entities"})
        );
    }
    let typed = session
        .execute("inspect", "describe_type", json!({"type": "<component>"}))
        .await;
    assert_eq!(
        typed.payload()["error"]["nextCall"],
        json!({"operation": "describe", "tool": "inspect", "action": "list_component_types"})
    );
    for real in ["TBD Tower", "Player", "Training Dummy", "box_xxx_crate"] {
        let outcome = session
            .execute("inspect", "get_entity", json!({"entity": real}))
            .await;
        assert!(!outcome.is_error(), "{real}: {:?}", outcome.payload());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_errors_carry_the_pointer_and_the_value() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let outcome = session
        .execute("control_app", "step_frames", json!({"frames": 0}))
        .await;
    let error = &outcome.payload()["error"];
    assert_eq!(error["code"], json!("INVALID_PARAMS"));
    assert_eq!(
        error["details"]["violations"][0]["pointer"],
        json!("/frames")
    );
    assert_eq!(error["details"]["violations"][0]["value"], json!(0));
    assert_eq!(
        error["nextCall"],
        json!({"operation": "describe", "tool": "control_app", "action": "step_frames", "param": "frames"})
    );
    let missing = session
        .execute("control_app", "step_frames", json!({}))
        .await;
    assert_eq!(missing.error_code().as_deref(), Some("INVALID_PARAMS"));
    assert!(
        missing.payload()["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("frames"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_errors_pass_through_with_record_hints() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let outcome = session
        .execute("inspect", "get_entity", json!({"entity": "Missing"}))
        .await;
    let error = &outcome.payload()["error"];
    assert_eq!(error["code"], json!("ENTITY_NOT_FOUND"));
    let hint = CATALOG
        .action("inspect", "get_entity")
        .and_then(|found| {
            found
                .action
                .error_hint(bevy_mcp_generated::names::error_codes::ENTITY_NOT_FOUND)
        })
        .expect("record hint");
    assert_eq!(error["hint"], json!(hint));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consent_flow_with_single_use_grants() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let first = session
        .execute("control_entity", "despawn", json!({"entity": "Crate"}))
        .await;
    assert_eq!(first.error_code().as_deref(), Some("CONSENT_REQUIRED"));
    let next_call = first.payload()["error"]["nextCall"].clone();
    assert_eq!(
        next_call["consent"]["capability"],
        json!("control_entity.despawn")
    );
    assert_eq!(next_call["consent"]["acknowledge"], json!("explicit"));
    assert!(
        server.dispatch.0.calls.lock().is_empty(),
        "nothing ran without consent"
    );
    let granted = session.call(next_call.clone()).await;
    assert!(!granted.is_error(), "{:?}", granted.payload());
    let replay = session.call(next_call).await;
    assert_eq!(replay.error_code().as_deref(), Some("CONSENT_REUSED"));
    assert_eq!(
        server.dispatch.0.calls.lock().len(),
        1,
        "the replay did not run"
    );
    // Another session's grant is not valid here.
    let other = McpSession::start(server.address).await;
    let foreign = other
        .call(replay.payload()["error"]["nextCall"].clone())
        .await;
    assert_eq!(foreign.error_code().as_deref(), Some("CONSENT_INVALID"));
    // exit needs an elevated acknowledgement.
    let exit = session.execute("control_app", "exit", json!({})).await;
    assert_eq!(
        exit.payload()["error"]["nextCall"]["consent"]["acknowledge"],
        json!("elevated")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_is_per_session() {
    let server = TestServer::start().await;
    let first = McpSession::start(server.address).await;
    let second = McpSession::start(server.address).await;
    let disabled = first
        .call(json!({"operation": "configure", "action": "disable_tools", "params": {"tools": ["control_app"]}}))
        .await;
    assert_eq!(disabled.payload()["disabled"], json!(["control_app"]));
    let refused = first.execute("control_app", "get_state", json!({})).await;
    assert_eq!(refused.error_code().as_deref(), Some("TOOL_DISABLED"));
    assert!(
        !second
            .execute("control_app", "get_state", json!({}))
            .await
            .is_error(),
        "no leak between sessions"
    );
    let enable = refused.payload()["error"]["nextCall"].clone();
    assert_eq!(enable["operation"], json!("configure"));
    assert!(!first.call(enable).await.is_error());
    assert!(
        !first
            .execute("control_app", "get_state", json!({}))
            .await
            .is_error()
    );
    // Protected tools and the core category stay on; bad input changes nothing.
    let protected = first
        .call(json!({"operation": "configure", "action": "disable_tools", "params": {"tools": ["control_entity", "inspect"]}}))
        .await;
    assert_eq!(protected.error_code().as_deref(), Some("TOOL_PROTECTED"));
    assert!(
        !first
            .execute(
                "control_entity",
                "rename",
                json!({"entity": "Crate", "name": "B"})
            )
            .await
            .is_error()
    );
    let core = first.call(json!({"operation": "configure", "action": "disable_category", "params": {"category": "core"}})).await;
    assert_eq!(core.error_code().as_deref(), Some("CATEGORY_PROTECTED"));
    let unknown = first.call(json!({"operation": "configure", "action": "enable_tools", "params": {"tools": ["control_ap"]}})).await;
    assert_eq!(
        unknown.payload()["error"]["suggestions"][0],
        json!("control_app")
    );
    let status = first
        .call(json!({"operation": "configure", "action": "get_status"}))
        .await
        .payload();
    assert_eq!(status["disabled"], json!([]));
    let reset = first
        .call(json!({"operation": "execute", "tool": "manage_tools", "action": "reset"}))
        .await;
    assert!(
        !reset.is_error(),
        "manage_tools also runs through execute, locally"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_shaped() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let summary = session
        .execute("inspect", "list_entities", json!({}))
        .await
        .payload();
    assert_eq!(summary["entities"].as_array().map(Vec::len), Some(50));
    assert_eq!(
        (
            summary["returned"].clone(),
            summary["total"].clone(),
            summary["moreAvailable"].clone()
        ),
        (json!(50), json!(120), json!(true))
    );
    assert!(summary["hint"].is_string());
    assert_eq!(
        summary["truncatedFields"],
        json!(["/entities (50 of 120 rows)"])
    );
    let full = session
        .call(json!({"operation": "execute", "tool": "inspect", "action": "list_entities", "params": {}, "options": {"detail": "full"}}))
        .await
        .payload();
    assert_eq!(full["entities"].as_array().map(Vec::len), Some(120));
    let cut = session
        .execute("inspect", "describe_type", json!({"type": "Transform"}))
        .await
        .payload();
    let text = cut["typePath"].as_str().unwrap_or_default();
    assert_eq!(
        text.chars().count(),
        501,
        "cut at 500 characters plus the ellipsis"
    );
    assert!(text.ends_with('…'));
    assert_eq!(
        cut["truncatedFields"],
        json!(["/typePath (cut at 500 characters)"])
    );
    let small = session
        .call(json!({"operation": "execute", "tool": "inspect", "action": "list_entities", "params": {}, "options": {"detail": "full", "maxBytes": 1024}}))
        .await;
    assert_eq!(small.error_code().as_deref(), Some("RESULT_TOO_LARGE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_content_only_on_2025_06_18_and_later() {
    let server = TestServer::start().await;
    for version in VERSIONS {
        let session = McpSession::start_with(server.address, version, &[]).await;
        let outcome = session.call(json!({"operation": "describe"})).await;
        let result = outcome.result();
        assert_eq!(result["content"][0]["type"], json!("text"));
        assert_eq!(
            result.get("structuredContent").is_some(),
            version != "2025-03-26",
            "{version}"
        );
        if let Some(structured) = result.get("structuredContent") {
            assert_eq!(
                structured,
                &outcome.payload(),
                "the same object as the text"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn surface_budget_and_identical_bytes() {
    let server = TestServer::start().await;
    let mut bodies = Vec::new();
    for version in VERSIONS {
        let session = McpSession::start_with(server.address, version, &[]).await;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        bodies
            .push(http::body_bytes(http::send(server.address, session.request(&body)).await).await);
    }
    assert!(
        bodies.windows(2).all(|pair| pair[0] == pair[1]),
        "identical across sessions and versions"
    );
    assert!(
        bodies[0].len() <= 4096,
        "tools/list is {} bytes",
        bodies[0].len()
    );
    let report = surface_report(&CATALOG, &bevy_mcp_bridge::bevy_identity());
    assert!(report.description_bytes <= 1024);
    assert!(report.instructions_bytes <= 512);
    assert!(
        report.direct_surface_bytes > report.tools_list_bytes * 4,
        "{report}"
    );

    // A synthetic catalog of 1,000 actions serves the very same bytes (it has no visibility
    // tool, so configure is off, and no inspect actions for the live resources).
    let mut config = config_on_any_port();
    config.identity.configure_tool = None;
    config.identity.live_resources.clear();
    let synthetic = ServerBuilder::new(config, synthetic_catalog(1000))
        .start(std::sync::Arc::new(TestDispatch::new()))
        .await
        .expect("synthetic server");
    let session = McpSession::start(synthetic.local_addr()).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let synthetic_bytes =
        http::body_bytes(http::send(synthetic.local_addr(), session.request(&body)).await).await;
    assert_eq!(synthetic_bytes, bodies[0]);
    let described = session
        .call(json!({"operation": "describe", "tool": "synthetic_3"}))
        .await
        .payload();
    assert_eq!(described["actionCount"], json!(100));
}

fn config_on_any_port() -> ServerConfig {
    let mut config = ServerConfig {
        identity: bevy_mcp_bridge::bevy_identity(),
        ..ServerConfig::default()
    };
    config.port(0);
    // These servers run the echoing test double, whose results are not the records' shapes.
    config.check_output_schemas = false;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_errors_are_tool_errors_not_protocol_errors() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "bevy", "arguments": {"operation": "execute", "tool": "nope"}}});
    let (status, reply) =
        http::status_json(http::send(server.address, session.request(&body)).await).await;
    assert_eq!(status, hyper::StatusCode::OK);
    assert!(
        reply.get("error").is_none(),
        "a model-facing mistake is an isError result: {reply}"
    );
    assert_eq!(reply["result"]["isError"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_arguments_are_guided() {
    let server = TestServer::start().await;
    let session = McpSession::start(server.address).await;
    for (arguments, code) in [
        (json!({"operation": "execute"}), "MISSING_TOOL"),
        (
            json!({"operation": "execute", "action": "get_entity"}),
            "MISSING_TOOL",
        ),
        (
            json!({"operation": "execute", "action": "control_app.get_state", "params": {}}),
            "MISSING_TOOL",
        ),
        (
            json!({"operation": "execute", "tool": "inspect"}),
            "MISSING_ACTION",
        ),
        (
            json!({"operation": "describe", "action": "despawn"}),
            "MISSING_TOOL",
        ),
        (
            json!({"operation": "describe", "action": "history.checkpoint"}),
            "MISSING_TOOL",
        ),
        (json!({"operation": "search"}), "MISSING_QUERY"),
        (json!({"operation": "configure"}), "MISSING_ACTION"),
        (json!({}), "UNKNOWN_OPERATION"),
    ] {
        let outcome = session.call(arguments.clone()).await;
        assert_eq!(outcome.error_code().as_deref(), Some(code), "{arguments}");
        let next_call = outcome.payload()["error"]["nextCall"].clone();
        assert_no_empty_keys(&next_call);
        // An action named whole (`tool.action`) comes back as the same call, split.
        if let Some((tool, action)) = arguments["action"]
            .as_str()
            .and_then(|name| name.split_once('.'))
        {
            assert_eq!(
                (
                    &next_call["operation"],
                    &next_call["tool"],
                    &next_call["action"]
                ),
                (&arguments["operation"], &json!(tool), &json!(action)),
                "{next_call}"
            );
        }
        assert!(
            !session.call(next_call).await.is_error(),
            "{arguments}: the nextCall succeeds"
        );
    }
}

/// Records are the contract both ways: in debug builds (every test build) a handler result that
/// breaks its action's output schema turns into `OUTPUT_SCHEMA_VIOLATION`, naming the action and
/// the JSON pointer, so the dispatch guard and every end-to-end test check the records too. The
/// broken result here is made on purpose; no product handler returns it.
#[test]
fn a_result_that_breaks_its_output_schema_is_named() {
    use mcp_native_transport::gateway::Prepared;
    let gateway = mcp_native_transport::Gateway::new(
        &CATALOG,
        &mcp_native_transport::StartVisibility::default(),
        &ServerConfig {
            check_output_schemas: true,
            identity: bevy_mcp_bridge::bevy_identity(),
            ..ServerConfig::default()
        },
    )
    .expect("the gateway compiles the catalog");
    let state = parking_lot::Mutex::new(
        gateway.new_session_state(mcp_native_transport::catalog::Scope::Admin),
    );
    let arguments = json!({"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"entity": "Player"}});
    let Prepared::Execute(plan) = gateway.prepare(&state, arguments) else {
        panic!("get_entity is planned for dispatch");
    };
    // The record requires `entity` (an entity object) and `components` (an object).
    let finished = gateway.finish(
        &plan,
        Ok(json!({"entity": {"entity": "1v0", "bits": 1}, "components": "none"})),
    );
    let payload = &finished.payload;
    assert!(finished.is_error, "{payload}");
    assert_eq!(payload["error"]["code"], json!("OUTPUT_SCHEMA_VIOLATION"));
    assert_eq!(
        payload["error"]["details"]["action"],
        json!("inspect.get_entity")
    );
    assert_eq!(payload["error"]["details"]["pointer"], json!("/components"));
    // A result that keeps the contract goes through untouched.
    let good = json!({"entity": {"entity": "1v0", "bits": 1}, "components": {}});
    let finished = gateway.finish(&plan, Ok(good.clone()));
    assert!(!finished.is_error);
    assert_eq!(finished.payload, good);
    assert_eq!(finished.text, good.to_string());
}

#[test]
fn the_catalog_describe_is_built_once_per_visibility() {
    use mcp_native_transport::gateway::Prepared;
    let gateway = mcp_native_transport::Gateway::new(
        &CATALOG,
        &mcp_native_transport::StartVisibility::default(),
        &ServerConfig {
            identity: bevy_mcp_bridge::bevy_identity(),
            ..ServerConfig::default()
        },
    )
    .expect("the gateway compiles the catalog");
    let state = parking_lot::Mutex::new(
        gateway.new_session_state(mcp_native_transport::catalog::Scope::Admin),
    );
    let describe = |state: &parking_lot::Mutex<_>| {
        let Prepared::Reply { value, text, .. } =
            gateway.prepare(state, json!({"operation": "describe"}))
        else {
            panic!("describe is answered by the gateway");
        };
        (value, text.expect("the catalog describe keeps its text"))
    };
    let (first, text) = describe(&state);
    assert_eq!(
        serde_json::to_string(&*first).ok().as_deref(),
        Some(&*text),
        "the kept text is the value's"
    );
    let (again, _) = describe(&state);
    assert!(std::sync::Arc::ptr_eq(&first, &again), "built once");
    let disabled = gateway.prepare(
        &state,
        json!({"operation": "configure", "action": "disable_tools", "params": {"tools": ["view"]}}),
    );
    assert!(
        matches!(disabled, Prepared::Reply { error: None, .. }),
        "{disabled:?}"
    );
    let (narrower, _) = describe(&state);
    let view = narrower["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["tool"] == json!("view")))
        .expect("view is listed");
    assert_eq!(
        view["enabled"],
        json!(false),
        "another visibility, another answer"
    );
    let other_session = parking_lot::Mutex::new(
        gateway.new_session_state(mcp_native_transport::catalog::Scope::Admin),
    );
    let (fresh, _) = describe(&other_session);
    assert!(
        std::sync::Arc::ptr_eq(&first, &fresh),
        "shared by sessions that see the same"
    );
}
