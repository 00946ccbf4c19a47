//! The doctor: the setup checks behind `system_control.doctor` and `bevy-mcp --doctor`. What a
//! user gets wrong is rarely the game: a client configured for another URL or none, a token file
//! others can read, a machine without a Vulkan driver. Each check says what it found and, when it
//! fails, the exact line that fixes it.

use std::path::{Path, PathBuf};

use mcp_native_transport::TransportError;
use serde_json::{Value, json};

/// One check's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked: `endpoint`, `token`, `token-file`, `rendering`, `claude-code`, `cursor`,
    /// `gemini`.
    pub check: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when it failed: a command or a line to add.
    pub fix: Option<String>,
}

impl Check {
    /// A passed check.
    pub fn pass(check: &str, detail: impl Into<String>) -> Check {
        Check {
            check: check.to_owned(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    /// A failed check and its fix.
    pub fn fail(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            check: check.to_owned(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The check as JSON: `{check, ok, detail, fix?}`.
    pub fn to_json(&self) -> Value {
        let mut value = json!({"check": self.check, "ok": self.ok, "detail": self.detail});
        if let Some(fix) = &self.fix {
            value["fix"] = json!(fix);
        }
        value
    }
}

/// The `--header` argument a command line needs for a token-protected server (a placeholder,
/// never a token).
const TOKEN_HEADER: &str = "\"X-MCP-Capability-Token: <token>\"";

/// Whether Claude Code, Cursor and Gemini CLI register `url`, in `project`'s files or the user's
/// (`home`); one check per client, with the exact line to add when none does.
pub fn client_checks(
    project: &Path,
    home: Option<&Path>,
    url: &str,
    token_required: bool,
) -> Vec<Check> {
    let header = |flag: &str| {
        if token_required {
            format!(" {flag} {TOKEN_HEADER}")
        } else {
            String::new()
        }
    };
    let mut claude_files = vec![Source::servers(project.join(".mcp.json"))];
    let mut cursor_files = vec![Source::servers(project.join(".cursor/mcp.json"))];
    let mut gemini_files = vec![Source::servers(project.join(".gemini/settings.json"))];
    if let Some(home) = home {
        claude_files.push(Source::servers(home.join(".claude.json")));
        claude_files.push(Source {
            file: home.join(".claude.json"),
            pointer: Some(project_pointer(project)),
        });
        cursor_files.push(Source::servers(home.join(".cursor/mcp.json")));
        gemini_files.push(Source::servers(home.join(".gemini/settings.json")));
    }
    let cursor_entry = if token_required {
        format!(
            "{{ \"mcpServers\": {{ \"bevy\": {{ \"url\": \"{url}\", \"headers\": {{ \"X-MCP-Capability-Token\": \"<token>\" }} }} }} }}"
        )
    } else {
        format!("{{ \"mcpServers\": {{ \"bevy\": {{ \"url\": \"{url}\" }} }} }}")
    };
    vec![
        client_check(
            "claude-code",
            &claude_files,
            url,
            format!(
                "claude mcp add --transport http bevy {url}{}",
                header("--header")
            ),
        ),
        client_check(
            "cursor",
            &cursor_files,
            url,
            format!(
                "add to {}: {cursor_entry}",
                project.join(".cursor/mcp.json").display()
            ),
        ),
        client_check(
            "gemini",
            &gemini_files,
            url,
            format!(
                "gemini mcp add --transport http bevy {url}{}",
                header("--header")
            ),
        ),
    ]
}

/// Where a client keeps server entries: a file, and the object in it that holds `mcpServers`.
struct Source {
    file: PathBuf,
    /// A JSON pointer to the object with `mcpServers`; `None` for the top level.
    pointer: Option<String>,
}

impl Source {
    fn servers(file: PathBuf) -> Source {
        Source {
            file,
            pointer: None,
        }
    }

    /// Every server URL this source registers.
    fn urls(&self) -> Vec<String> {
        let Some(document) = std::fs::read_to_string(&self.file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        else {
            return Vec::new();
        };
        let holder = match &self.pointer {
            Some(pointer) => document.pointer(pointer),
            None => Some(&document),
        };
        holder
            .and_then(|holder| holder.get("mcpServers"))
            .and_then(Value::as_object)
            .map(|servers| {
                servers
                    .values()
                    .filter_map(|server| {
                        ["url", "httpUrl"]
                            .iter()
                            .find_map(|key| server.get(*key).and_then(Value::as_str))
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Claude Code keeps a project's local servers under `projects.<absolute path>` of its user file.
fn project_pointer(project: &Path) -> String {
    let path = project.display().to_string();
    // JSON pointer escaping: `~` as `~0`, `/` as `~1`.
    format!("/projects/{}", path.replace('~', "~0").replace('/', "~1"))
}

fn client_check(client: &str, sources: &[Source], url: &str, fix: String) -> Check {
    let wanted = normalized(url);
    let mut elsewhere = Vec::new();
    for source in sources {
        for found in source.urls() {
            if normalized(&found) == wanted {
                return Check::pass(client, format!("{} registers {url}", source.file.display()));
            }
            if found.contains("/mcp") {
                elsewhere.push(found);
            }
        }
    }
    let detail = if elsewhere.is_empty() {
        format!("no configuration of {client} registers {url}")
    } else {
        format!(
            "{client} registers {} but not {url} (another port or host?)",
            elsewhere.join(", ")
        )
    };
    Check::fail(client, detail, fix)
}

/// A URL compared loosely: case, `localhost` for `127.0.0.1`, a trailing slash.
fn normalized(url: &str) -> String {
    url.trim()
        .trim_end_matches('/')
        .to_ascii_lowercase()
        .replace("://localhost", "://127.0.0.1")
}

/// Whether a token file can be read by its owner only.
pub fn token_file_check(path: &Path) -> Check {
    match mcp_native_transport::tokens::read_tokens(path) {
        Ok(tokens) => {
            let mut counts = [0usize; 3];
            for token in &tokens {
                counts[token.scope() as usize] += 1;
            }
            Check::pass(
                "token-file",
                format!(
                    "{} is private and holds {} token(s): {} read, {} write, {} admin",
                    path.display(),
                    tokens.len(),
                    counts[0],
                    counts[1],
                    counts[2]
                ),
            )
        }
        Err(TransportError::TokensFileExposed { mode, .. }) => Check::fail(
            "token-file",
            format!(
                "{} has mode {mode:o}: other users can read the tokens",
                path.display()
            ),
            format!("chmod 600 {}", path.display()),
        ),
        Err(TransportError::TokenFile { source, .. }) => Check::fail(
            "token-file",
            format!("{} cannot be read: {source}", path.display()),
            format!("create it: bevy-mcp --generate-token {}", path.display()),
        ),
        Err(error) => Check::fail(
            "token-file",
            error.to_string(),
            "write each line as TOKEN [read|write|admin [LABEL]]; the app keeps its tokens until the file is usable",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:15720/mcp";

    fn write(path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|error| panic!("{error}"));
        }
        std::fs::write(path, text).unwrap_or_else(|error| panic!("{error}"));
    }

    #[test]
    fn each_client_is_found_where_it_keeps_servers_or_told_the_line_to_add() {
        let project = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let home = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let checks = client_checks(project.path(), Some(home.path()), URL, true);
        assert!(checks.iter().all(|check| !check.ok), "{checks:?}");
        let claude = &checks[0];
        assert_eq!(
            claude.fix.as_deref(),
            Some(
                "claude mcp add --transport http bevy http://127.0.0.1:15720/mcp --header \"X-MCP-Capability-Token: <token>\""
            )
        );

        write(
            &project.path().join(".mcp.json"),
            r#"{"mcpServers": {"game": {"type": "http", "url": "http://localhost:15720/mcp/"}}}"#,
        );
        write(
            &home.path().join(".gemini/settings.json"),
            r#"{"mcpServers": {"bevy": {"httpUrl": "http://127.0.0.1:15721/mcp"}}}"#,
        );
        let local = format!(
            r#"{{"projects": {{"{}": {{"mcpServers": {{"bevy": {{"url": "{URL}"}}}}}}}}}}"#,
            project.path().display()
        );
        write(&home.path().join(".cursor/mcp.json"), &local);
        let checks = client_checks(project.path(), Some(home.path()), URL, false);
        assert!(
            checks[0].ok,
            "localhost and a trailing slash match: {:?}",
            checks[0]
        );
        assert!(!checks[1].ok, "cursor's file has no top-level mcpServers");
        assert!(
            !checks[2].ok && checks[2].detail.contains("15721"),
            "another port is named: {:?}",
            checks[2]
        );

        // Claude Code's local scope: the project's entry in ~/.claude.json.
        std::fs::remove_file(project.path().join(".mcp.json"))
            .unwrap_or_else(|error| panic!("{error}"));
        write(&home.path().join(".claude.json"), &local);
        let checks = client_checks(project.path(), Some(home.path()), URL, false);
        assert!(checks[0].ok, "{:?}", checks[0]);
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_read_fails() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let path = dir.path().join("token");
        write(&path, "0123456789abcdef0123 read qa");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|error| panic!("{error}"));
        let check = token_file_check(&path);
        assert!(
            !check.ok
                && check
                    .fix
                    .as_deref()
                    .is_some_and(|fix| fix.starts_with("chmod 600"))
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|error| panic!("{error}"));
        let check = token_file_check(&path);
        assert!(check.ok && check.detail.contains("1 read"), "{check:?}");
        assert!(!token_file_check(&dir.path().join("missing")).ok);
        write(&path, "0123456789abcdef0123 reader");
        let check = token_file_check(&path);
        assert!(!check.ok && check.detail.contains("line 1"), "{check:?}");
    }
}
