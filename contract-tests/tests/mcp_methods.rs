//! Prompts, resources and completions over real HTTP on the real sandbox, at every protocol
//! version, and with the official Python SDK.

use crate::clients;

use std::time::Duration;

use bevy_mcp_contract_tests::http::VERSIONS;
use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_sandbox::testing::SandboxServer;
use serde_json::{Value, json};

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list["result"][key]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|row| row[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_filled_at_every_version() {
    let server = SandboxServer::start(60.0, |config| config);
    for version in VERSIONS {
        let session = McpSession::start_with(server.address, version, &[]).await;
        let listed = session.rpc("prompts/list", json!({})).await;
        assert_eq!(
            names(&listed, "prompts", "name"),
            ["fix_frame_drop", "inspect_entity", "playtest"],
            "{version}"
        );
        let titled = listed["result"]["prompts"][0].get("title").is_some();
        assert_eq!(titled, version != "2025-03-26", "titles from 2025-06-18 on");
        let inspect = &listed["result"]["prompts"][1];
        assert_eq!(inspect["arguments"][0]["name"], json!("entity"));
        assert_eq!(inspect["arguments"][0]["required"], json!(true));
    }
    let session = McpSession::start(server.address).await;
    for name in ["fix_frame_drop", "playtest"] {
        let got = session.rpc("prompts/get", json!({"name": name})).await;
        let text = got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!text.is_empty() && !text.contains('{'), "{name}: {got}");
    }
    let got = session
        .rpc(
            "prompts/get",
            json!({"name": "inspect_entity", "arguments": {"entity": "Player"}}),
        )
        .await;
    let message = &got["result"]["messages"][0];
    assert_eq!(message["role"], json!("user"));
    let text = message["content"]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Inspect Player"), "{text}");
    assert!(
        text.contains("`inspect.get_entity`") && !text.contains('{'),
        "{text}"
    );
    // An optional argument left out takes its default.
    let playtest = session
        .rpc("prompts/get", json!({"name": "playtest"}))
        .await;
    let text = playtest["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("name \"playtest\""), "{text}");
    for (params, says) in [
        (
            json!({"name": "inspect_entity"}),
            "needs its argument \"entity\"",
        ),
        (
            json!({"name": "inspect_entity", "arguments": {"entity": "P", "colour": "red"}}),
            "takes no argument",
        ),
        (json!({"name": "debug_everything"}), "no prompt is named"),
    ] {
        let refused = session.rpc("prompts/get", params).await;
        assert_eq!(refused["error"]["code"], json!(-32602));
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_give_the_action_reference_and_the_live_world() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    let listed = session.rpc("resources/list", json!({})).await;
    let uris = names(&listed, "resources", "uri");
    assert!(
        uris.contains(&"bevy://reference/inspect".to_owned()),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"bevy://world/summary".to_owned()),
        "{uris:?}"
    );
    let templates = session.rpc("resources/templates/list", json!({})).await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["bevy://entity/{entity}", "bevy://type/{type}"]
    );

    let read = |uri: &str| session.rpc("resources/read", json!({"uri": uri}));
    let reference = read("bevy://reference/inspect").await;
    let contents = &reference["result"]["contents"][0];
    assert_eq!(contents["mimeType"], json!("text/markdown"));
    let markdown = contents["text"].as_str().unwrap_or_default();
    assert!(
        markdown.contains("## `inspect.get_entity` (read)"),
        "{markdown}"
    );
    assert!(markdown.contains("| `entity` |"), "parameters are listed");

    let summary = read("bevy://world/summary").await;
    let text = summary["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let summary: Value = serde_json::from_str(text).expect("the summary is JSON");
    assert!(
        summary["entityCount"]
            .as_u64()
            .is_some_and(|count| count > 0),
        "{summary}"
    );

    let player = read("bevy://entity/Player").await;
    let text = player["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let player: Value = serde_json::from_str(text).expect("the entity is JSON");
    assert_eq!(player["entity"]["name"], json!("Player"));
    let health = read("bevy://type/Health").await;
    assert!(
        health["result"]["contents"][0]["text"].is_string(),
        "{health}"
    );

    for uri in [
        "bevy://entity/Nobody",
        "bevy://nothing/here",
        "file:///etc/passwd",
        "bevy://reference/nope",
    ] {
        let missing = read(uri).await;
        assert_eq!(missing["error"]["code"], json!(-32002), "{uri}: {missing}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_come_from_the_live_app() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    let complete = |reference: Value, argument: &str, value: &str| {
        session.rpc(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": argument, "value": value}}),
        )
    };
    // The app publishes its names a few frames after it starts.
    let mut values = Vec::new();
    for _ in 0..100 {
        let done = complete(
            json!({"type": "ref/resource", "uri": "bevy://entity/{entity}"}),
            "entity",
            "pl",
        )
        .await;
        values = names_of(&done);
        if !values.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(values.contains(&"Player".to_owned()), "{values:?}");
    let prompt = complete(
        json!({"type": "ref/prompt", "name": "inspect_entity"}),
        "entity",
        "Cra",
    )
    .await;
    assert!(names_of(&prompt).contains(&"Crate".to_owned()), "{prompt}");
    let types = complete(
        json!({"type": "ref/resource", "uri": "bevy://type/{type}"}),
        "type",
        "Heal",
    )
    .await;
    assert_eq!(
        names_of(&types).first().map(String::as_str),
        Some("Health"),
        "{types}"
    );
    let refused = complete(json!({"type": "ref/prompt", "name": "nope"}), "x", "").await;
    assert_eq!(refused["error"]["code"], json!(-32602));
}

fn names_of(completion: &Value) -> Vec<String> {
    completion["result"]["completion"]["values"]
        .as_array()
        .map(|values| {
            values
                .iter()
                .filter_map(|value| value.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_official_python_sdk_lists_gets_reads_and_completes() {
    let python = match clients::ensure_venv() {
        Ok(python) => python,
        Err(reason) => return clients::unavailable(&reason),
    };
    let server = SandboxServer::start(60.0, |config| config);
    let url = format!("http://{}/mcp", server.address);
    let script = clients::workspace().join("contract-tests/interop/methods_client.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .arg(&url)
        .output()
        .expect("run the methods client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("METHODS OK "))
        .unwrap_or_else(|| panic!("a summary line: {stdout}"));
    let summary: Value = serde_json::from_str(line).expect("summary JSON");
    assert_eq!(
        summary["prompts"],
        json!(["fix_frame_drop", "inspect_entity", "playtest"])
    );
    assert_eq!(summary["promptStartsWith"], json!("Inspect Player"));
    assert_eq!(summary["player"], json!("Player"));
    assert!(
        summary["completions"]
            .as_array()
            .is_some_and(|values| values.contains(&json!("Player")))
    );
}

/// The next `notifications/resources/updated` on `reader`, or `None` when none comes in `limit`.
async fn next_update(
    reader: &mut bevy_mcp_contract_tests::http::SseReader,
    limit: Duration,
) -> Option<String> {
    use bevy_mcp_contract_tests::http::SseEvent;
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match reader.next_within(left).await {
            Ok(Some(SseEvent::Numbered(_, message)))
                if message["method"] == json!("notifications/resources/updated") =>
            {
                return message["params"]["uri"].as_str().map(str::to_owned);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(()) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_hear_when_a_live_resource_changes() {
    let server = SandboxServer::start(60.0, |config| {
        config.with_limits(bevy_mcp_bridge::Limits {
            subscription_poll: Duration::from_millis(100),
            ..bevy_mcp_bridge::Limits::default()
        })
    });
    let session = McpSession::start(server.address).await;
    for (uri, code) in [
        ("bevy://reference/inspect", -32602),
        ("bevy://nothing", -32002),
    ] {
        let refused = session
            .rpc("resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(refused["error"]["code"], json!(code), "{uri}");
    }
    let summary = "bevy://world/summary";
    let subscribed = session
        .rpc("resources/subscribe", json!({"uri": summary}))
        .await;
    assert_eq!(subscribed["result"], json!({}));
    let stream =
        bevy_mcp_contract_tests::http::send(server.address, session.bare(hyper::Method::GET)).await;
    let mut reader = bevy_mcp_contract_tests::http::SseReader::new(stream);
    // The game runs (its frame counter moves), but nothing of the world changes: no update.
    assert_eq!(next_update(&mut reader, Duration::from_secs(1)).await, None);
    // Spawn until an update comes (the first spawn may fall before the first reading).
    let mut heard = None;
    for index in 0..30 {
        let spawned = session
            .execute(
                "control_entity",
                "spawn",
                json!({"name": format!("Probe {index}")}),
            )
            .await;
        assert!(!spawned.is_error(), "{:?}", spawned.payload());
        heard = next_update(&mut reader, Duration::from_millis(500)).await;
        if heard.is_some() {
            break;
        }
    }
    assert_eq!(heard.as_deref(), Some(summary));
    // After unsubscribing, changes are not announced.
    let done = session
        .rpc("resources/unsubscribe", json!({"uri": summary}))
        .await;
    assert_eq!(done["result"], json!({}));
    session
        .execute("control_entity", "spawn", json!({"name": "Quiet"}))
        .await;
    assert_eq!(next_update(&mut reader, Duration::from_secs(1)).await, None);
}
