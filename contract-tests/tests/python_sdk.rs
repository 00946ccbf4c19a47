//! Interop with the official MCP Python SDK (pinned in `interop/requirements.txt`) as a real
//! client against the real sandbox. The test makes its own virtualenv under `target/` when it is
//! missing, so `cargo test --workspace` is the only command needed. Outside CI a machine without
//! Python or without network skips with a loud message; under `CI=true` that is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bevy_mcp_sandbox::testing::SandboxServer;

/// The script may take this long at most before it is killed and the test fails.
const SCRIPT_LIMIT: Duration = Duration::from_secs(180);

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true" || value == "1")
}

/// Skips outside CI, fails in CI.
fn unavailable(reason: &str) {
    if in_ci() {
        panic!("the Python MCP SDK is required in CI: {reason}");
    }
    eprintln!("SKIPPED python_sdk interop: {reason} (this is a failure under CI=true)");
}

/// The venv's python, created and filled from `requirements.txt` when missing or stale.
fn ensure_venv() -> Result<PathBuf, String> {
    let requirements = workspace().join("contract-tests/interop/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .map_err(|error| format!("read requirements: {error}"))?;
    let venv = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
        .join("interop-venv");
    let python = venv.join("bin/python");
    let stamp = venv.join("installed-requirements.txt");
    if python.exists() && std::fs::read_to_string(&stamp).is_ok_and(|installed| installed == wanted)
    {
        return Ok(python);
    }
    run(
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements),
        "pip install -r contract-tests/interop/requirements.txt",
    )?;
    std::fs::write(&stamp, wanted).map_err(|error| format!("write stamp: {error}"))?;
    Ok(python)
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|error| format!("{what}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

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
