//! Interop with the official MCP Python SDK (pinned in `interop/requirements.txt`) as a real
//! client against the real sandbox (the virtualenv: `clients/mod.rs`).

use crate::clients;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bevy_mcp_sandbox::testing::SandboxServer;
use clients::{ensure_venv, unavailable, workspace};

/// The script may take this long at most before it is killed and the test fails.
const SCRIPT_LIMIT: Duration = Duration::from_secs(180);

/// Runs the script with a hard time limit; returns (success, stdout, stderr).
fn run_script(python: &Path, url: &str) -> (bool, String, String) {
    let script = workspace().join("contract-tests/interop/sdk_client.py");
    let mut child = Command::new(python)
        .arg(&script)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the interop script");
    let started = Instant::now();
    loop {
        match child.try_wait().expect("poll the script") {
            Some(_) => break,
            None if started.elapsed() > SCRIPT_LIMIT => {
                let _ = child.kill();
                break;
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    let output = child.wait_with_output().expect("script output");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_official_python_sdk_drives_the_sandbox() {
    let python = match ensure_venv() {
        Ok(python) => python,
        Err(reason) => return unavailable(&reason),
    };
    let server = SandboxServer::start(60.0, |config| config);
    let url = format!("http://{}/mcp", server.address);
    let (success, stdout, stderr) = run_script(&python, &url);
    assert!(success, "the SDK client failed:\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|line| line.starts_with("INTEROP OK "))
        .expect("a summary line");
    let summary: serde_json::Value =
        serde_json::from_str(&line["INTEROP OK ".len()..]).expect("summary JSON");
    assert_eq!(summary["tools"], serde_json::json!(["bevy"]));
    assert_eq!(summary["cancelledAfterProgress"], serde_json::json!(true));
    assert_eq!(summary["sessionUsableAfterCancel"], serde_json::json!(true));
    assert_eq!(summary["gameAction"], serde_json::json!("game.spawn_wave"));
}
