//! The official SDK clients the interop tests run: the Python SDK in a virtualenv and the
//! TypeScript SDK in a `node_modules`, both under the workspace's `target/` and made when missing
//! (pinned in `contract-tests/interop/`), so `cargo test --workspace` is the only command needed.
//! Outside CI a machine without Python, Node.js or network skips with a loud message; under
//! `CI=true` that is a failure.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where the SDK clients are installed: the workspace's `target/`, whatever target directory
/// cargo builds in (the Bevy 0.20 lane builds in its own and shares these).
fn target_dir() -> PathBuf {
    workspace().join("target")
}

fn interop_dir() -> PathBuf {
    workspace().join("contract-tests/interop")
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true" || value == "1")
}

/// Skips outside CI, fails in CI.
pub fn unavailable(reason: &str) {
    if in_ci() {
        panic!("an official MCP SDK is required in CI: {reason}");
    }
    eprintln!("SKIPPED SDK interop: {reason} (this is a failure under CI=true)");
}

/// Held while the venv is checked or made: tests of several files ask for it at once, and one
/// makes it while the others wait.
static VENV: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// Held while `node_modules` is checked or made, for the same reason.
static NODE_MODULES: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// The venv's python, created and filled from `requirements.txt` when missing or stale.
pub fn ensure_venv() -> Result<PathBuf, String> {
    let _making = VENV.lock();
    let requirements = interop_dir().join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .map_err(|error| format!("read requirements: {error}"))?;
    let venv = target_dir().join("interop-venv");
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

/// The directory holding `node_modules` with the pinned TypeScript SDK, installed from the
/// committed lockfile (`npm ci`) when missing or stale.
pub fn ensure_node_modules() -> Result<PathBuf, String> {
    let _making = NODE_MODULES.lock();
    let lock = std::fs::read_to_string(interop_dir().join("package-lock.json"))
        .map_err(|error| format!("read package-lock.json: {error}"))?;
    let dir = target_dir().join("interop-node");
    let stamp = dir.join("installed-lock.json");
    if dir.join("node_modules/@modelcontextprotocol/sdk").exists()
        && std::fs::read_to_string(&stamp).is_ok_and(|installed| installed == lock)
    {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|error| format!("create {}: {error}", dir.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(interop_dir().join(file), dir.join(file))
            .map_err(|error| format!("copy {file}: {error}"))?;
    }
    run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir),
        "npm ci (contract-tests/interop/package-lock.json)",
    )?;
    std::fs::write(&stamp, lock).map_err(|error| format!("write stamp: {error}"))?;
    Ok(dir)
}
