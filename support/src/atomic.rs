//! Writing one file so a reader sees the old bytes or the new, never a part: staged beside
//! the target, synced, renamed over it. The generator's all-or-nothing plan stages the same
//! way; caches and api.toml edits write through [`write_atomic`].

use std::fs::Permissions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// `.NAME.regen-PID.SUFFIX` beside `path`.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    path.with_file_name(format!(
        "{}{}.{suffix}",
        staging_prefix(name),
        std::process::id()
    ))
}

pub fn write_synced(path: &Path, contents: &[u8], mode: Option<Permissions>) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(contents)?;
    // Keep the mode of the file being replaced (docker/build.py is executable).
    if let Some(mode) = mode {
        f.set_permissions(mode)?;
    }
    f.sync_all()
}

/// `.NAME.regen-PID.tmp` (staging) and `.NAME.regen-PID.old.tmp` (backup) beside NAME.
pub fn staging_prefix(name: &str) -> String {
    format!(".{name}.regen-")
}

/// A file a regen stages or backs up beside an output; one is left behind when regen is
/// killed before it cleans up. Not an output: `--check` and the orphan scan skip it.
pub fn is_staging_file(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".regen-")
}

/// Replaces one file atomically (a staging file beside it, fsync, rename; its mode kept), so
/// a reader sees the old or the new bytes. For a single file outside a plan.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)?;
    let tmp = sibling(path, "tmp");
    let _ = std::fs::remove_file(&tmp);
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    let result = write_synced(&tmp, contents, mode).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
