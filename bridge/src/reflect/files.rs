//! Paths a caller names inside a directory the bridge owns (world files, assets): relative,
//! plain segments only, resolved one component at a time without following any link, before
//! anything is created or opened.

use std::io::{ErrorKind, Write as _};
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::error::BridgeError;

/// Checks `given` as a path relative to a root the bridge owns and returns it trimmed: never
/// absolute, never `.`/`..`/hidden/empty segments, no backslashes or drive letters.
pub(crate) fn relative_path(given: &str) -> Result<String, BridgeError> {
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

/// What [`resolve_inside`] does with folders on the way that do not exist yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MissingFolders {
    /// Create them, one at a time, each checked (saving).
    Create,
    /// Report the path as not found (reading).
    Refuse,
}

/// A checked path inside a root: where it is, and whether a file is there now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The full path (the root joined with the relative path).
    pub path: PathBuf,
    /// Whether a regular file exists there.
    pub exists: bool,
    /// The same file as the directory and the path inside it, to write through.
    pub target: FileTarget,
}

/// A file to write: the directory the bridge owns and the checked path inside it. Writing
/// opens the directory and walks inside it again, so a folder swapped for a link after the
/// path was checked cannot lead the write outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileTarget {
    /// The directory, canonical.
    pub root: PathBuf,
    /// The checked path inside it.
    pub relative: String,
}

/// Resolves `relative` (checked by [`relative_path`]) under `root`, one component at a time,
/// without following links: every folder on the way must be a real folder, and the last
/// component a regular file or nothing. Nothing is created or opened before its component is
/// checked, so a planted link can never lead a read or a write outside `root`.
pub(crate) fn resolve_inside(
    root: &Path,
    given: &str,
    relative: &str,
    missing: MissingFolders,
) -> Result<Resolved, BridgeError> {
    let refuse = |reason: &str| BridgeError::PathNotPermitted {
        given: given.to_owned(),
        reason: reason.to_owned(),
    };
    let io = |path: &Path, error: std::io::Error| BridgeError::Io {
        file: path.display().to_string(),
        reason: error.to_string(),
    };
    let segments: Vec<&str> = relative.split('/').collect();
    let Some((last, folders)) = segments.split_last() else {
        return Err(refuse("the path is empty"));
    };
    let mut path = root.to_path_buf();
    for folder in folders {
        path.push(folder);
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(refuse(
                    "a folder on the way is a link; links are never followed",
                ));
            }
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => return Err(refuse("a folder on the way is a file")),
            Err(error) if error.kind() == ErrorKind::NotFound => match missing {
                MissingFolders::Create => {
                    std::fs::create_dir(&path).map_err(|error| io(&path, error))?;
                }
                MissingFolders::Refuse => {
                    return Err(BridgeError::FileNotFound {
                        file: relative.to_owned(),
                    });
                }
            },
            Err(error) => return Err(io(&path, error)),
        }
    }
    path.push(last);
    let exists = match std::fs::symlink_metadata(&path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            return Err(refuse("it is a link; links are never followed"));
        }
        Ok(metadata) if metadata.is_file() => true,
        Ok(_) => return Err(refuse("it is a folder, not a file")),
        Err(error) if error.kind() == ErrorKind::NotFound => false,
        Err(error) => return Err(io(&path, error)),
    };
    let target = FileTarget {
        root: root.to_path_buf(),
        relative: relative.to_owned(),
    };
    Ok(Resolved {
        path,
        exists,
        target,
    })
}

/// A caller's name of a file in a directory the bridge owns: checked with [`relative_path`],
/// given `extension` when it lacks it, and resolved inside the canonical `dir` without following
/// links. Returns the name inside the directory and where it is.
pub(crate) fn file_in(
    dir: &Path,
    given: &str,
    extension: &str,
    missing: MissingFolders,
) -> Result<(String, Resolved), BridgeError> {
    let name = relative_path(given)?;
    let relative = if name.ends_with(extension) {
        name
    } else {
        format!("{name}{extension}")
    };
    let root = canonical_dir(dir)?;
    let resolved = resolve_inside(&root, given, &relative, missing)?;
    Ok((relative, resolved))
}

/// The canonical form of a directory the bridge owns (scenes, screenshots), created when missing.
pub(crate) fn canonical_dir(dir: &Path) -> Result<PathBuf, BridgeError> {
    std::fs::create_dir_all(dir).map_err(|error| io(dir, &error))?;
    dir.canonicalize().map_err(|error| io(dir, &error))
}

/// An I/O error on `path`, as the bridge reports it.
pub(crate) fn io(path: &Path, error: &std::io::Error) -> BridgeError {
    BridgeError::Io {
        file: path.display().to_string(),
        reason: error.to_string(),
    }
}

/// Writes `target` through a fresh, unpredictably named file beside it (created exclusively, so
/// nothing planted there is followed), then renames it over the target: a reader never sees half
/// a file. The directory is opened and the folders inside it walked as capabilities (`cap-std`):
/// no link, planted before or after the path was checked, leads the write outside it.
pub(crate) fn write_atomically(target: &FileTarget, bytes: &[u8]) -> Result<(), BridgeError> {
    let shown = target.root.join(&target.relative);
    let failed = |error: std::io::Error| io(&shown, &error);
    let root = Dir::open_ambient_dir(&target.root, ambient_authority()).map_err(failed)?;
    let (folders, file) = match target.relative.rsplit_once('/') {
        Some((folders, file)) => (Some(folders), file),
        None => (None, target.relative.as_str()),
    };
    let folder = match folders {
        Some(folders) => root.open_dir(folders).map_err(failed)?,
        None => root,
    };
    let temporary = format!(".save-{}.tmp", uuid::Uuid::new_v4().simple());
    let written = folder
        .open_with(&temporary, OpenOptions::new().write(true).create_new(true))
        .and_then(|mut out| {
            out.write_all(bytes)?;
            out.sync_all()
        })
        .and_then(|()| folder.rename(&temporary, &folder, file));
    if let Err(error) = written {
        let _ = folder.remove_file(&temporary);
        return Err(failed(error));
    }
    Ok(())
}

/// The files under `root` whose names end with `extension`, as `(path inside root, bytes)`, sorted;
/// hidden files and folders are skipped and links are not followed, so a listing never leaves
/// the directory.
pub(crate) fn files_ending_with(root: &Path, extension: &str) -> Vec<(String, u64)> {
    files_ending_within(root, extension, usize::MAX)
}

/// [`files_ending_with`], looking at no more than `most_entries` entries (files and folders): a
/// listing repeated in the background stays cheap whatever folder it was pointed at.
pub(crate) fn files_ending_within(
    root: &Path,
    extension: &str,
    most_entries: usize,
) -> Vec<(String, u64)> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut looked_at = 0_usize;
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            looked_at += 1;
            if looked_at > most_entries {
                pending.clear();
                break;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                // A hidden folder's files are skipped below; its tree is not walked at all.
                if !entry.file_name().to_string_lossy().starts_with('.') {
                    pending.push(path);
                }
            } else if kind.is_file() && path.to_string_lossy().ends_with(extension) {
                let relative = path
                    .strip_prefix(root)
                    .map(|relative| relative.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if relative.split('/').any(|segment| segment.starts_with('.')) {
                    continue;
                }
                let bytes = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
                files.push((relative, bytes));
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_are_never_followed_and_nothing_is_created_outside() {
        let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let outside = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let link = root.path().join("link");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap_or_else(|error| panic!("{error}"));
        let resolved = resolve_inside(
            root.path(),
            "link/sub/x",
            "link/sub/x",
            MissingFolders::Create,
        );
        assert!(matches!(
            resolved,
            Err(BridgeError::PathNotPermitted { .. })
        ));
        assert!(
            !outside.path().join("sub").exists(),
            "nothing was created through the link"
        );
        let made = resolve_inside(root.path(), "a/b/x", "a/b/x", MissingFolders::Create)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(made.path, root.path().join("a/b/x"));
        assert!(!made.exists && root.path().join("a/b").is_dir());
        assert!(matches!(
            resolve_inside(root.path(), "c/x", "c/x", MissingFolders::Refuse),
            Err(BridgeError::FileNotFound { .. })
        ));
        std::fs::write(outside.path().join("secret"), "s")
            .unwrap_or_else(|error| panic!("{error}"));
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("file"))
            .unwrap_or_else(|error| panic!("{error}"));
        assert!(matches!(
            resolve_inside(root.path(), "file", "file", MissingFolders::Refuse),
            Err(BridgeError::PathNotPermitted { .. })
        ));
    }

    #[test]
    fn a_bounded_listing_stops_after_its_entries_and_skips_hidden_folders() {
        let root = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let hidden = root.path().join(".git");
        std::fs::create_dir_all(&hidden).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(hidden.join("x.scn.ron"), "()").unwrap_or_else(|error| panic!("{error}"));
        for index in 0..10 {
            std::fs::write(root.path().join(format!("{index}.scn.ron")), "()")
                .unwrap_or_else(|error| panic!("{error}"));
        }
        assert_eq!(files_ending_with(root.path(), ".scn.ron").len(), 10);
        // The hidden folder is one entry looked at; at most four entries, at most four files.
        let bounded = files_ending_within(root.path(), ".scn.ron", 4);
        assert!(!bounded.is_empty() && bounded.len() <= 4, "{bounded:?}");
    }

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
