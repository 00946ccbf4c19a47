//! `bevy-mcp --doctor` against the running sandbox over real HTTP, and against a port where no
//! app listens.

use std::process::Command;

use bevy_mcp_sandbox::testing::SandboxServer;

fn doctor(port: u16, project: &std::path::Path) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_bevy-mcp"))
        .args(["--doctor", "--port", &port.to_string()])
        .current_dir(project)
        .env_remove("BEVY_MCP_TOKEN")
        .output()
        .expect("bevy-mcp --doctor runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_doctor_checks_a_running_app_and_says_what_to_fix() {
    let server = SandboxServer::start(60.0, |config| config);
    let port = server.address.port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        project.path().join(".mcp.json"),
        format!(r#"{{"mcpServers": {{"bevy": {{"type": "http", "url": "{url}"}}}}}}"#),
    )
    .expect("write .mcp.json");

    let (passed, printed) = doctor(port, project.path());
    assert!(
        printed.contains(&format!("[ok  ] endpoint: listening on {url}")),
        "{printed}"
    );
    assert!(printed.contains("[ok  ] claude-code: "), "{printed}");
    assert!(
        printed.contains("[FAIL] rendering: "),
        "the headless sandbox does not render: {printed}"
    );
    assert!(
        printed.contains("fix: add to ") && printed.contains(".cursor/mcp.json"),
        "Cursor's missing entry comes with the line to add: {printed}"
    );
    assert!(!passed, "a failed check fails the run");
    drop(server);

    let (passed, printed) = doctor(port, project.path());
    assert!(!passed);
    assert!(
        printed.contains("[FAIL] endpoint: ") && printed.contains("does not answer"),
        "{printed}"
    );
    assert!(
        printed.contains("[ok  ] claude-code: "),
        "client checks still run without the app: {printed}"
    );
}
