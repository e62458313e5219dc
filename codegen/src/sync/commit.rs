//! Writing a plan all or nothing. Every new file is first staged beside its target and every
//! file about to be replaced or removed is hard-linked to a backup beside it; then the
//! journal is written ([`journal`]), and only then are the staged files renamed into place,
//! one by one; the journal's removal commits. If a rename fails, the renames already done
//! are undone from the backups, so the tree is as it was; a failure while staging changes
//! nothing at all. A SIGKILL between the journal and its removal leaves the journal, and the
//! next command that reads the manifest undoes the write from it first: every file is then
//! as it was before.

use super::journal::{self, Entry, Write};
use super::{Change, Status};
use mooncake_sos_contract::atomic::{sibling, staging_prefix, write_synced};
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
    let mut created_dirs = Vec::new();
    let mut steps = Vec::new();
    for c in &todo {
        match stage(c, &mut created_dirs) {
            Ok(step) => steps.push(step),
            Err(e) => {
                discard(&steps);
                remove_dirs(&created_dirs);
                return Err(e);
            }
        }
    }
    // The manifest moves first (undo restores it last).
    steps.sort_by_key(|s| !s.change.manifest);
    let write = Write {
        entries: steps.iter().map(entry).collect(),
        dirs: created_dirs.clone(),
    };
    let journal = journal::path(manifest);
    if let Err(e) = journal::write(&journal, root, &write) {
        discard(&steps);
        remove_dirs(&created_dirs);
        return Err(io::Error::new(
            e.kind(),
            format!("cannot write {}: {e}", journal.display()),
        ));
    }
    for step in &steps {
        let target = &step.change.target;
        let result = match &step.staged {
            Some(staged) => rename(staged, target),
            // A removal: the backup link keeps the file for an undo.
            None => std::fs::remove_file(target),
        };
        if let Err(e) = result {
            let path = &step.change.path;
            let message = match journal::roll_back(&journal, &write, &mut rename) {
                Ok(_) => format!("cannot write {path}: {e}; nothing was changed"),
                Err(u) => format!("cannot write {path}: {e}; and then {u}"),
            };
            return Err(io::Error::new(e.kind(), message));
        }
    }
    // The renames are durable before the journal goes.
    for dir in touched_dirs(&steps) {
        journal::sync(dir);
    }
    journal::remove(&journal)?;
    discard(&steps);
    Ok(())
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
            let now = mooncake_sos_contract::input::read_text(
                &c.target,
                mooncake_sos_contract::input::MAX_TEXT_BYTES,
            );
            if now.ok().as_deref() != Some(old.as_str()) {
                return Err(changed());
            }
            Ok(())
        }
    }
}

/// Writes the staging file and the backup link of one change.
fn stage<'a>(c: &'a Change, created_dirs: &mut Vec<PathBuf>) -> io::Result<Step<'a>> {
    let target = &c.target;
    let with_path = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", c.path));
    let mut step = Step {
        change: c,
        staged: None,
        backup: None,
    };
    let result = (|| {
        if let Some(dir) = target.parent() {
            create_dirs(dir, created_dirs)?;
        }
        let mode = std::fs::metadata(target).ok().map(|m| m.permissions());
        if c.old.is_some() {
            let backup = sibling(target, "old.tmp");
            let _ = std::fs::remove_file(&backup);
            std::fs::hard_link(target, &backup)?;
            step.backup = Some(backup);
        }
        if let Some(contents) = &c.new {
            let staged = sibling(target, "tmp");
            step.staged = Some(staged.clone());
            write_synced(&staged, contents.as_bytes(), mode)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(step),
        Err(e) => {
            discard(std::slice::from_ref(&step));
            Err(with_path(e))
        }
    }
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

/// `create_dir_all`, recording each directory it made, so that a failure can remove them.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent, created)?;
    }
    std::fs::create_dir(dir)?;
    created.push(dir.to_owned());
    Ok(())
}

fn remove_dirs(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Removes the staging files, backups and staged journals a killed run left beside `path`
/// (an output, or the manifest), whatever their pid: the caller holds the manifest's lock,
/// so no live run of the same manifest is writing them, and has rolled back the journal
/// that needed the backups.
fn remove_staging_files(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let prefix = staging_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        if file.starts_with(&prefix) && file.ends_with(".tmp") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
