//! Files only their owner may read: the session file, token files, TLS keys.

use std::path::Path;

/// Writes a file only its owner can read (mode 0600 on Unix, also when it existed before).
#[cfg(unix)]
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing file keeps its old mode through `open`; tighten it explicitly.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(contents)
}

/// Writes a file (no modes off Unix).
#[cfg(not(unix))]
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, contents)
}
