//! Paths a caller names inside a directory the bridge owns (world files, assets): relative,
//! plain segments only. Links that lead outside are caught where files are opened.

use std::path::{Component, Path};

use crate::error::BridgeError;

/// Checks `given` as a path relative to a root the bridge owns and returns it trimmed: never
/// absolute, never `.`/`..`/hidden/empty segments, no backslashes or drive letters.
pub fn relative_path(given: &str) -> Result<String, BridgeError> {
    let refuse = |reason: &str| BridgeError::PathNotPermitted {
        given: given.to_owned(),
        reason: reason.to_owned(),
    };
    let path = given.trim();
    if path.is_empty() {
        return Err(refuse("the path is empty"));
    }
    if path.starts_with('/') || path.contains(':') || path.contains('\\') {
        return Err(refuse(
            "absolute paths are not allowed; give a path inside the folder",
        ));
    }
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '))
    {
        return Err(refuse("use letters, digits, spaces, _ - . and / only"));
    }
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment.starts_with('.'))
    {
        return Err(refuse(
            "\"..\", \".\", hidden and empty path segments are not allowed",
        ));
    }
    if !Path::new(path)
        .components()
        .all(|component| matches!(component, Component::Normal(_)))
    {
        return Err(refuse("only plain relative paths are allowed"));
    }
    Ok(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths() {
        assert_eq!(
            relative_path(" notes/hello.note ").ok().as_deref(),
            Some("notes/hello.note")
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../b",
            "./x",
            "a//b",
            "C:\\x",
            "a\\b",
            ".hidden",
            "x\0y",
            "~/x",
            "a/.git/config",
        ] {
            assert!(
                matches!(
                    relative_path(bad),
                    Err(BridgeError::PathNotPermitted { .. })
                ),
                "{bad:?}"
            );
        }
    }
}
