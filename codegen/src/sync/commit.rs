//! Writing a plan all or nothing. First the journal is written ([`journal`]): every file the
//! write replaces, creates or removes, with the names of its staged new contents and of its
//! backup. Then every new file is staged beside its target and every file about to be
//! replaced or removed is hard-linked to its backup; only then are the staged files renamed
//! into place, one by one, and the journal marked committed. If anything fails before that,
//! the write is undone from the journal, so the tree is as it was. A SIGKILL at any point
//! leaves the journal, and the next command that reads the manifest finishes from it first:
//! it undoes a write not committed, or removes what a committed one left.

use super::journal::{self, Entry, Write};
use super::{Change, Status};
use mooncake_sos_support::atomic::{sibling, staging_prefix, write_synced};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One file of the transaction.
struct Step<'a> {
    change: &'a Change,
    /// The new contents, written and synced; `None` for a removal.
    staged: Option<PathBuf>,
    /// A hard link to the file being replaced or removed; `None` when it does not exist yet.
    backup: Option<PathBuf>,
}

/// Applies `changes` (files under `root`, the directory of the manifest at `manifest`, whose
/// journal records the write), all or none; `rename` is `std::fs::rename` (a test makes it
/// fail). The caller holds the manifest's lock and has rolled back any journal left before.
pub(super) fn transact(
    manifest: &Path,
    root: &Path,
    changes: &[Change],
    mut rename: impl FnMut(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    remove_staging_files(manifest);
    for c in changes {
        remove_staging_files(&c.target);
    }
    let todo: Vec<&Change> = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .collect();
    if todo.is_empty() {
        return Ok(());
    }
    for c in &todo {
        preflight(c)?;
    }
    let mut steps: Vec<Step> = todo
        .iter()
        .map(|c| Step {
            change: c,
            staged: c.new.as_ref().map(|_| sibling(&c.target, "tmp")),
            backup: c.old.as_ref().map(|_| sibling(&c.target, "old.tmp")),
        })
        .collect();
    // The manifest moves first (undo restores it last).
    steps.sort_by_key(|s| !s.change.manifest);
    let mut write = Write {
        entries: steps.iter().map(entry).collect(),
        dirs: missing_dirs(&steps),
        committed: false,
    };
    let journal = journal::path(manifest);
    journal::write(manifest, root, &write).map_err(|e| {
        io::Error::new(e.kind(), format!("cannot write {}: {e}", journal.display()))
    })?;
    // From here on, a failure (or a kill) is undone from the journal.
    let failed = (|| {
        for dir in &write.dirs {
            std::fs::create_dir(dir).map_err(|e| (e, dir.display().to_string()))?;
        }
        for step in &steps {
            stage(step).map_err(|e| (e, step.change.path.to_string()))?;
        }
        for step in &steps {
            let target = &step.change.target;
            match &step.staged {
                Some(staged) => rename(staged, target),
                // A removal: the backup link keeps the file for an undo.
                None => std::fs::remove_file(target),
            }
            .map_err(|e| (e, step.change.path.to_string()))?;
        }
        // The renames are durable before the journal says so.
        for dir in touched_dirs(&steps) {
            journal::sync(dir);
        }
        write.committed = true;
        journal::write(manifest, root, &write).map_err(|e| (e, journal.display().to_string()))
    })();
    if let Err((e, path)) = failed {
        write.committed = false;
        let message = match journal::roll_back(&journal, &write, &mut rename) {
            Ok(_) => format!("cannot write {path}: {e}; nothing was changed"),
            Err(u) => format!("cannot write {path}: {e}; and then {u}"),
        };
        return Err(io::Error::new(e.kind(), message));
    }
    discard(&steps);
    journal::remove(&journal)
}

fn entry(step: &Step) -> Entry {
    let c = step.change;
    Entry {
        target: c.target.clone(),
        staged: step.staged.clone(),
        backup: step.backup.clone(),
        old: c.old.as_ref().map(|t| journal::sha256(t.as_bytes())),
        new: c.new.as_ref().map(|t| journal::sha256(t.as_bytes())),
    }
}

/// Refuses what must not be replaced, before anything is written.
fn preflight(c: &Change) -> io::Result<()> {
    let path = &c.path;
    let meta = match std::fs::symlink_metadata(&c.target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io::Error::new(e.kind(), format!("{path}: {e}"))),
    };
    let changed = || {
        io::Error::other(format!(
            "{path} changed since regen read it; nothing was written, run regen again"
        ))
    };
    match (meta, &c.old) {
        (None, None) => Ok(()),
        (None, Some(_)) | (Some(_), None) => Err(changed()),
        (Some(meta), Some(old)) => {
            if !meta.is_file() {
                return Err(changed());
            }
            // Root may rename over a read-only file; the mode says the owner wants it kept.
            if meta.permissions().mode() & 0o222 == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{path} is read-only (mode {:o}); regen does not replace it: make it \
                         writable (chmod u+w {path}) and run regen again",
                        meta.permissions().mode() & 0o7777
                    ),
                ));
            }
            let now = mooncake_sos_support::input::read_text(
                &c.target,
                mooncake_sos_support::input::MAX_TEXT_BYTES,
            );
            if now.ok().as_deref() != Some(old.as_str()) {
                return Err(changed());
            }
            Ok(())
        }
    }
}

/// Writes the backup link and the staging file of one step.
fn stage(step: &Step) -> io::Result<()> {
    let target = &step.change.target;
    let mode = std::fs::metadata(target).ok().map(|m| m.permissions());
    if let Some(backup) = &step.backup {
        std::fs::hard_link(target, backup)?;
    }
    if let (Some(staged), Some(contents)) = (&step.staged, &step.change.new) {
        write_synced(staged, contents.as_bytes(), mode)?;
    }
    Ok(())
}

/// Removes the staging files and backups of `steps` (those already renamed are gone).
fn discard(steps: &[Step]) {
    for path in steps.iter().flat_map(|s| [&s.staged, &s.backup]).flatten() {
        let _ = std::fs::remove_file(path);
    }
}

fn touched_dirs<'a>(steps: &'a [Step]) -> Vec<&'a Path> {
    let mut dirs: Vec<&Path> = steps
        .iter()
        .filter_map(|s| s.change.target.parent())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The directories the steps' targets need that do not exist yet, parents first.
fn missing_dirs(steps: &[Step]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for step in steps {
        let missing = step
            .change
            .target
            .ancestors()
            .skip(1)
            .take_while(|d| !d.as_os_str().is_empty() && !d.is_dir());
        for dir in missing {
            if !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_owned());
            }
        }
    }
    dirs.sort_by_key(|d| d.components().count());
    dirs
}

/// Whether killed runs left staging files beside `path`.
pub(super) fn has_staging_files(path: &Path) -> bool {
    !staging_files(path).is_empty()
}

/// Removes the staging files, backups and staged journals a killed run left beside `path`
/// (an output, or the manifest), whatever their pid: the caller holds the manifest's lock,
/// so no live run of the same manifest is writing them, and has rolled back the journal
/// that needed the backups.
pub(super) fn remove_staging_files(path: &Path) {
    for file in staging_files(path) {
        let _ = std::fs::remove_file(file);
    }
}

/// `.NAME.regen-*.tmp` beside `path` (NAME).
fn staging_files(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let prefix = staging_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let file = e.file_name();
            let file = file.to_string_lossy();
            file.starts_with(&prefix) && file.ends_with(".tmp")
        })
        .map(|e| e.path())
        .collect()
}
