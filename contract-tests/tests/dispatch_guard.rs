//! C2, the dispatch guard: every action's first example runs on a fresh sandbox and succeeds
//! (consent-gated ones through the grant flow), so every action in the catalog has a working
//! handler and every example in the records is real. The game's own actions (the sandbox's
//! `game` tool) are checked the same way.

use bevy_mcp_bridge::{BridgeConfig, ServedCatalog};
use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_generated::CATALOG;
use bevy_mcp_sandbox::testing::{Harness, SandboxServer};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_first_example_succeeds_on_a_fresh_sandbox() {
    // The catalog the sandbox serves: the generated actions and the game's own.
    // (A harness owns a runtime of its own: it is built and dropped off this async test's one.)
    let served = std::thread::spawn(|| Harness::new().world().resource::<ServedCatalog>().0)
        .join()
        .expect("the sandbox builds");
    assert!(served.action_count() > CATALOG.action_count());
    let mut failures = Vec::new();
    for (tool, action) in served.all_actions() {
        let example = action
            .examples
            .first()
            .expect("every action has an example");
        let params: Value = serde_json::from_str(example.params_json).expect("example params");
        let scenes = tempfile::tempdir().expect("scenes dir");
        let scenes_path = scenes.path().to_owned();
        let configure = move |config: BridgeConfig| {
            config
                .with_screenshots_dir(scenes_path.join("screenshots"))
                .with_scripts_dir(scenes_path.join("scripts"))
                .with_scenes_dir(scenes_path)
        };
        // The view tool needs a sandbox that renders; without any Vulkan driver (never under
        // CI) only its documented refusal can be checked.
        let mut rendering_unavailable = false;
        let server = if tool.name == "view" {
            match SandboxServer::rendering(240.0, configure.clone()) {
                Ok(server) => server,
                Err(reason) => {
                    assert!(std::env::var_os("CI").is_none(), "{reason}");
                    rendering_unavailable = true;
                    SandboxServer::start(240.0, configure)
                }
            }
        } else {
            SandboxServer::start(240.0, configure)
        };
        let session = McpSession::start(server.address).await;
        // Actions that read what another action makes run after that action's examples.
        let prerequisites: &[(&str, &str)] = match (tool.name, action.name) {
            ("manage_world", "save") => &[],
            ("manage_world", _) => &[("manage_world", "save")],
            ("manage_asset", "get_info" | "get" | "mutate") => &[("manage_asset", "load")],
            ("playtest", "record_stop") => &[("playtest", "record_start")],
            ("playtest", "run") => &[("playtest", "record_start"), ("playtest", "record_stop")],
            ("history", "diff" | "restore") => &[("history", "checkpoint")],
            // Undo takes back a change; redo makes an undone one again.
            ("history", "undo") => &[("control_entity", "rename")],
            ("history", "redo") => &[("control_entity", "rename"), ("history", "undo")],
            _ => &[],
        };
        for (maker_tool, maker) in prerequisites {
            for example in CATALOG
                .action(maker_tool, maker)
                .expect("prerequisite")
                .action
                .examples
            {
                let params: Value = serde_json::from_str(example.params_json).expect("params");
                let made = session.execute(maker_tool, maker, params).await;
                assert!(!made.is_error(), "{:?}", made.payload());
            }
        }
        let call = json!({"operation": "execute", "tool": tool.name, "action": action.name, "params": params});
        let mut outcome = session.call(call).await;
        if outcome.error_code().as_deref() == Some("CONSENT_REQUIRED") {
            outcome = session
                .call(outcome.payload()["error"]["nextCall"].clone())
                .await;
        }
        let refused_for_want_of_a_gpu = rendering_unavailable
            && action.name == "screenshot"
            && outcome.error_code().as_deref() == Some("RENDERING_UNAVAILABLE");
        // The sandbox has no window (it draws offscreen, if at all): a window's title is set in
        // the windowed example games' tests, and here only its documented refusal is checked.
        let refused_for_want_of_a_window = (tool.name, action.name)
            == ("control_app", "set_window_title")
            && outcome.error_code().as_deref() == Some("RENDERING_UNAVAILABLE");
        if outcome.is_error() && !refused_for_want_of_a_gpu && !refused_for_want_of_a_window {
            failures.push(format!(
                "{}.{} ({}): {}",
                tool.name,
                action.name,
                example.title,
                outcome.payload()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "examples that failed:\n{}",
        failures.join("\n")
    );
}
