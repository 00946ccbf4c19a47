//! The tokens file: one token per line with its scope and an optional label, readable by its
//! owner only.
//!
//! ```text
//! # TOKEN [SCOPE [LABEL]]; SCOPE is read, write or admin (admin when left out)
//! 3f9c...e1 admin dev
//! 8b21...07 read qa-laptop
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use mcp_vocabulary::catalog::Scope;

use super::{MIN_TOKEN_CHARS, Token, digest};
use crate::error::TransportError;
use crate::private_file::write_private;

/// A tokens file is a few lines; anything this big is not one.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The longest label (it names a token in every log line about it).
const MAX_LABEL_CHARS: usize = 32;

/// What a new tokens file starts with.
const HEADER: &str = "# Capability tokens, one per line: TOKEN [SCOPE [LABEL]]\n\
# SCOPE is read (discovery and read actions), write (plus changes) or admin (plus destructive\n\
# actions and tool visibility); admin when left out. LABEL names the token in logs and the audit.\n\
# A running app reads this file again when it changes. Keep it private (mode 0600).\n";

/// Reads a tokens file after checking that only its owner can read or write it.
pub(super) fn read_private(path: &Path) -> Result<String, TransportError> {
    let io_error = |source| TransportError::TokenFile {
        path: path.to_owned(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(TransportError::TokensFileExposed {
                path: path.to_owned(),
                mode,
            });
        }
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(io_error(std::io::Error::other(format!(
            "larger than {} KiB: not a tokens file",
            MAX_FILE_BYTES / 1024
        ))));
    }
    std::fs::read_to_string(path).map_err(io_error)
}

/// The tokens of a tokens file, after checking that only its owner can read or write it.
pub fn read_tokens(path: &Path) -> Result<Vec<Token>, TransportError> {
    parse_tokens(path, &read_private(path)?)
}

/// Parses a tokens file's text. Blank lines and `#` comments are skipped; any unusable line
/// refuses the whole file, so a typo never silently drops or widens a token.
pub fn parse_tokens(path: &Path, text: &str) -> Result<Vec<Token>, TransportError> {
    let mut tokens = Vec::new();
    let mut digests = BTreeSet::new();
    let mut labels = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let refuse = |reason: String| TransportError::TokensFileLine {
            path: path.to_owned(),
            line: index + 1,
            reason,
        };
        let mut words = line.split_whitespace();
        let value = words.next().unwrap_or_default();
        let scope = match words.next() {
            None => Scope::Admin,
            Some(word) => Scope::parse(word).ok_or_else(|| {
                refuse(format!(
                    "\"{}\" is not a scope; write read, write or admin after the token",
                    clip(word)
                ))
            })?,
        };
        let label = words.next();
        if words.next().is_some() {
            return Err(refuse(
                "too many words; a line is TOKEN [SCOPE [LABEL]] and a label has no spaces"
                    .to_owned(),
            ));
        }
        let mut token = Token::new(value).map_err(|_| {
            refuse(format!(
                "the token is shorter than {MIN_TOKEN_CHARS} characters; use a random one (e.g. `openssl rand -hex 32`)"
            ))
        })?;
        token = token.with_scope(scope);
        if let Some(label) = label {
            check_label(label).map_err(refuse)?;
            if !labels.insert(label.to_owned()) {
                return Err(refuse(format!(
                    "the label \"{label}\" is already used by another line; labels name one token each"
                )));
            }
            token = token.labelled(label);
        }
        if !digests.insert(digest(value)) {
            return Err(refuse(
                "the same token is on another line; give each token one line and one scope"
                    .to_owned(),
            ));
        }
        tokens.push(token);
    }
    Ok(tokens)
}

/// The value of the file's most capable token (its first `admin` one, else its first), for a
/// client on this machine that reads the file itself, such as the doctor. The file is checked as
/// the server checks it.
pub fn token_for_client(path: &Path) -> Result<String, TransportError> {
    let text = read_private(path)?;
    let tokens = parse_tokens(path, &text)?;
    let values: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    let chosen = tokens
        .iter()
        .position(|token| token.scope() == Scope::Admin)
        .unwrap_or(0);
    values
        .get(chosen)
        .map(|value| (*value).to_owned())
        .ok_or_else(|| TransportError::TokensFileLine {
            path: path.to_owned(),
            line: 1,
            reason: "the file holds no token".to_owned(),
        })
}

/// Labels are short names of letters, digits and `._-@`.
fn check_label(label: &str) -> Result<(), String> {
    let fits = label.chars().count() <= MAX_LABEL_CHARS
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if fits {
        Ok(())
    } else {
        Err(format!(
            "\"{}\" is not a label; use up to {MAX_LABEL_CHARS} letters, digits, '.', '_', '-' or '@'",
            clip(label)
        ))
    }
}

/// A word of a refused line as an error quotes it: never much of it (it may be a token).
fn clip(word: &str) -> String {
    let mut shown: String = word.chars().take(12).collect();
    if shown.len() < word.len() {
        shown.push('…');
    }
    shown
}

/// What [`generate_token`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedToken {
    /// The label of the token in the file.
    pub label: String,
    /// Its scope.
    pub scope: Scope,
    /// Whether a new token was written; `false` when the file already had one with this label.
    pub created: bool,
}

/// Makes sure the tokens file at `path` has a token labelled `label`: when it has none, a
/// random 256-bit token (hex) with `scope` is added as a new line. The file is created (with
/// its parent directories) when missing, always with mode 0600; its other lines are kept.
/// Running it again reuses the token, so a client configured once keeps working; deleting the
/// line (or the file) makes a new one.
pub fn generate_token(
    path: &Path,
    scope: Scope,
    label: &str,
) -> Result<GeneratedToken, TransportError> {
    let file_error = |source| TransportError::TokenFile {
        path: path.to_owned(),
        source,
    };
    check_label(label).map_err(|reason| TransportError::TokensFileLine {
        path: path.to_owned(),
        line: 0,
        reason,
    })?;
    let existing = match std::fs::metadata(path) {
        Ok(_) => Some(read_private(path)?),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(file_error(error)),
    };
    if let Some(text) = &existing {
        let tokens = parse_tokens(path, text)?;
        if let Some(token) = tokens.iter().find(|token| token.id() == label) {
            return Ok(GeneratedToken {
                label: label.to_owned(),
                scope: token.scope(),
                created: false,
            });
        }
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| file_error(std::io::Error::other(error.to_string())))?;
    let value: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut text = existing.unwrap_or_else(|| HEADER.to_owned());
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{value} {scope} {label}\n"));
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(file_error)?;
    }
    write_private(path, text.as_bytes()).map_err(file_error)?;
    Ok(GeneratedToken {
        label: label.to_owned(),
        scope,
        created: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Vec<Token>, String> {
        parse_tokens(Path::new("tokens"), text).map_err(|error| error.to_string())
    }

    #[test]
    fn lines_give_scopes_and_labels() {
        let tokens = parsed(
            "# comment\n\n0123456789abcdef0001\n0123456789abcdef0002 read qa\n  0123456789abcdef0003 write\n",
        )
        .unwrap_or_else(|error| panic!("{error}"));
        let scopes: Vec<Scope> = tokens.iter().map(Token::scope).collect();
        assert_eq!(scopes, [Scope::Admin, Scope::Read, Scope::Write]);
        assert_eq!(tokens[1].id(), "qa");
        assert!(tokens[0].id().starts_with("tok-"));
    }

    #[test]
    fn an_unusable_line_refuses_the_file_and_names_the_line_without_the_token() {
        for (text, says) in [
            ("0123456789abcdef0001 reader", "not a scope"),
            ("short read", "shorter than"),
            ("0123456789abcdef0001 read qa extra", "too many words"),
            ("0123456789abcdef0001 read q/a", "not a label"),
            (
                "0123456789abcdef0001 read qa\n0123456789abcdef0002 read qa",
                "already used",
            ),
            (
                "0123456789abcdef0001 read\n0123456789abcdef0001 admin",
                "same token",
            ),
        ] {
            let error = parsed(text).err().unwrap_or_default();
            assert!(error.contains(says), "{text:?}: {error}");
            assert!(!error.contains("0123456789abcdef"), "{error}");
        }
        let error = parsed("# a\n0123456789abcdef0001 nope")
            .err()
            .unwrap_or_default();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn generated_tokens_are_private_reused_by_label_and_keep_other_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let path = dir.path().join("nested/tokens");
        let made = |scope, label| {
            generate_token(&path, scope, label).unwrap_or_else(|error| panic!("{error}"))
        };
        assert!(made(Scope::Admin, "dev").created);
        assert!(made(Scope::Read, "qa").created);
        let again = made(Scope::Write, "qa");
        assert!(!again.created, "the qa token is reused");
        assert_eq!(again.scope, Scope::Read, "with the scope it has");
        let tokens = read_tokens(&path).unwrap_or_else(|error| panic!("{error}"));
        let ids: Vec<String> = tokens.iter().map(Token::id).collect();
        assert_eq!(ids, ["dev", "qa"]);
        let admin = token_for_client(&path).unwrap_or_else(|error| panic!("{error}"));
        assert!(tokens[0].matches_digest(&digest(&admin)), "the admin token");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .map(|meta| meta.permissions().mode() & 0o777)
                .unwrap_or(0);
            assert_eq!(mode, 0o600);
            let loose = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
            assert!(loose.is_ok());
            let refused = read_tokens(&path).err().map(|error| error.to_string());
            assert!(
                refused
                    .as_deref()
                    .is_some_and(|message| message.contains("chmod 600")),
                "{refused:?}"
            );
        }
    }
}
