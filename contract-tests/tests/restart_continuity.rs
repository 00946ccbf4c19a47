//! A restart of the app under connected clients: the official TypeScript and Python SDK clients
//! connect to the sandbox, the sandbox is stopped and started again on the same port (a new app,
//! a new server, the same session file, as `cargo run` again would), and each client's next call
//! in its old session succeeds.

use crate::clients;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bevy_mcp_sandbox::testing::SandboxServer;
use clients::{ensure_node_modules, ensure_venv, unavailable, workspace};

/// Longest wait for one line of a client (installing nothing: the SDKs are ready by then).
const LINE_LIMIT: Duration = Duration::from_secs(120);

/// A client process and the lines it prints.
struct Client {
    name: &'static str,
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Client {
    fn start(name: &'static str, mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|error| panic!("start the {name} client: {error}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Client { name, child, lines }
    }

    /// The first line that starts with `prefix`; panics (after killing the client) when the
    /// client ends or stays silent too long.
    fn line_starting(&mut self, prefix: &str) -> String {
        loop {
            match self.lines.recv_timeout(LINE_LIMIT) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(error) => {
                    let _ = self.child.kill();
                    panic!(
                        "the {} client printed no {prefix:?} line: {error}",
                        self.name
                    );
                }
            }
        }
    }

    fn go_on(&mut self) {
        let stdin = self.child.stdin.as_mut().expect("piped stdin");
        stdin.write_all(b"go\n").expect("write to the client");
        stdin.flush().expect("flush");
    }

    fn finish(mut self) -> bool {
        self.child
            .wait()
            .map(|status| status.success())
            .unwrap_or(false)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

fn sandbox(port: u16, file: PathBuf) -> SandboxServer {
    SandboxServer::start(60.0, move |config| {
        config.with_port(port).with_session_file(file)
    })
}

fn node_client(modules: &Path, url: &str) -> Command {
    // Node resolves packages next to the script: it runs from the directory with node_modules.
    let script = modules.join("restart_client.mjs");
    std::fs::copy(
        workspace().join("contract-tests/interop/restart_client.mjs"),
        &script,
    )
    .expect("copy the TypeScript client");
    let mut command = Command::new("node");
    command.arg(script).arg(url);
    command
}

#[test]
fn sdk_clients_carry_on_after_the_app_restarts() {
    let python = match ensure_venv() {
        Ok(python) => python,
        Err(reason) => return unavailable(&reason),
    };
    let modules = match ensure_node_modules() {
        Ok(modules) => modules,
        Err(reason) => return unavailable(&reason),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("sessions.json");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");

    let first = sandbox(port, file.clone());
    let mut python_client = Command::new(python);
    python_client
        .arg(workspace().join("contract-tests/interop/restart_client.py"))
        .arg(&url);
    let mut clients = [
        Client::start("TypeScript SDK", node_client(&modules, &url)),
        Client::start("Python SDK", python_client),
    ];
    for client in &mut clients {
        client.line_starting("READY");
    }
    drop(first);

    let _second = sandbox(port, file);
    for client in &mut clients {
        client.go_on();
    }
    for mut client in clients {
        let line = client.line_starting("RESTART OK ");
        let summary: serde_json::Value =
            serde_json::from_str(&line["RESTART OK ".len()..]).expect("summary JSON");
        assert!(
            summary["after"].is_string(),
            "{}: the call after the restart answered: {summary}",
            client.name
        );
        let name = client.name;
        assert!(client.finish(), "the {name} client exits cleanly");
    }
}
