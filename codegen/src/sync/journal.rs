//! The journal of a write in progress: `.NAME.regen-journal` beside the manifest NAME, holding
//! each file the write replaces, creates or removes, with its staged new contents and its
//! backup (by name) and the sha256 of its old and new contents, and the directories it
//! makes. It is written (synced, renamed into place) before anything is staged, rewritten
//! with `committed` once every rename is durable, and removed after the staged files and
//! backups are. A journal found later means a run was killed (or failed to undo): one not
//! committed is rolled back ([`roll_back`]: every file put back from its backup), of one
//! committed only the leftovers are removed ([`finish`]); the command that finds it (any
//! that reads the manifest, under its lock) does that first. Each step decides from the
//! file as it is now, so a roll-back that is itself killed is finished by the next one.

use mooncake_sos_manifest::model::RelPath;
use mooncake_sos_support::atomic::{is_staging_file, sibling, write_synced};
use mooncake_sos_support::input::hex;
use mooncake_sos_support::input::{self, ReadError};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

/// One file of a write.
#[derive(Debug)]
pub(super) struct Entry {
    /// The file, under the root.
    pub target: PathBuf,
    /// The staged new contents beside it (gone once renamed); `None` for a removal.
    pub staged: Option<PathBuf>,
    /// A hard link to the old contents beside it; `None` when the file is new.
    pub backup: Option<PathBuf>,
    /// sha256 of the old and the new contents; `None`: no file.
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The journal of the manifest at `manifest` (a path whose directory is the root).
pub fn path(manifest: &Path) -> PathBuf {
    let name = manifest
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("api.toml");
    manifest.with_file_name(format!(".{name}.regen-journal"))
}

pub(super) fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A write: its files, the directories it makes for them (parents first), and whether every
/// file is in place.
#[derive(Debug, Default)]
pub(super) struct Write {
    pub entries: Vec<Entry>,
    pub dirs: Vec<PathBuf>,
    pub committed: bool,
}

/// Writes the journal of `write` (paths under `root`) for the manifest at `manifest`: staged
/// as `.NAME.regen-PID.journal.tmp`, synced, renamed into place.
pub(super) fn write(manifest: &Path, root: &Path, write: &Write) -> io::Result<()> {
    let journal = path(manifest);
    let under = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let name = |p: &Option<PathBuf>| {
        p.as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let steps: Vec<Value> = write
        .entries
        .iter()
        .map(|e| {
            json!({
                "target": under(&e.target),
                "staged": name(&e.staged),
                "backup": name(&e.backup),
                "old": e.old,
                "new": e.new,
            })
        })
        .collect();
    let dirs: Vec<String> = write.dirs.iter().map(|d| under(d)).collect();
    let text = json!({ "steps": steps, "dirs": dirs, "committed": write.committed }).to_string();
    let staged = sibling(manifest, "journal.tmp");
    let _ = std::fs::remove_file(&staged);
    let result = write_synced(&staged, text.as_bytes(), None)
        .and_then(|()| std::fs::rename(&staged, &journal));
    if result.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    sync_dir(&journal);
    result
}

/// Removes the journal: the write is done (or undone).
pub(super) fn remove(journal: &Path) -> io::Result<()> {
    std::fs::remove_file(journal)?;
    sync_dir(journal);
    Ok(())
}

/// The write the journal at `journal` records (paths under `root`); an error says what is
/// wrong with it. Names are checked: a journal moves only the files of a write, never
/// another file.
pub(super) fn read(journal: &Path, root: &Path) -> io::Result<Write> {
    let bad = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {why}", journal.display()),
        )
    };
    let text = input::read_text(journal, input::MAX_TEXT_BYTES)
        .map_err(|e| bad(&format!("cannot read it: {e}")))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| bad(&format!("not a journal: {e}")))?;
    let steps = value["steps"]
        .as_array()
        .ok_or_else(|| bad("not a journal: no steps"))?;
    let mut write = Write {
        committed: value["committed"]
            .as_bool()
            .ok_or_else(|| bad("not a journal: no committed"))?,
        ..Write::default()
    };
    for dir in value["dirs"].as_array().into_iter().flatten() {
        let dir = dir
            .as_str()
            .and_then(RelPath::new)
            .ok_or_else(|| bad("a directory is not a path inside the repository"))?;
        write.dirs.push(root.join(dir.as_str()));
    }
    for step in steps {
        let target = step["target"]
            .as_str()
            .and_then(RelPath::new)
            .ok_or_else(|| bad("a step's target is not a path inside the repository"))?;
        let target = root.join(target.as_str());
        let beside = |key: &str| -> io::Result<Option<PathBuf>> {
            match &step[key] {
                Value::Null => Ok(None),
                Value::String(n) if is_staging_file(n) && !n.contains('/') => {
                    Ok(Some(target.with_file_name(n)))
                }
                _ => Err(bad(&format!("a step's {key} is not a staging file's name"))),
            }
        };
        let hash = |key: &str| -> io::Result<Option<String>> {
            match &step[key] {
                Value::Null => Ok(None),
                Value::String(h) if h.len() == 64 => Ok(Some(h.clone())),
                _ => Err(bad(&format!("a step's {key} is not a sha256"))),
            }
        };
        write.entries.push(Entry {
            staged: beside("staged")?,
            backup: beside("backup")?,
            old: hash("old")?,
            new: hash("new")?,
            target,
        });
    }
    Ok(write)
}

/// Finishes the write the journal records: one not committed is rolled back
/// ([`roll_back`]); of one committed, only the backups and the journal are left to remove.
/// How many files were put back.
pub(super) fn finish(journal: &Path, write: &Write) -> io::Result<usize> {
    if !write.committed {
        return roll_back(journal, write, &mut |from, to| std::fs::rename(from, to));
    }
    remove_temporaries(write);
    remove(journal)?;
    Ok(0)
}

/// Puts every file of `write` back as it was before it and removes its staged files, its
/// backups, the directories it made (when empty) and the journal. A file that is neither its old nor its new
/// contents was changed after the write stopped: nothing is done, and the error names it.
/// `rename` is `std::fs::rename` (a test makes it fail).
pub(super) fn roll_back(
    journal: &Path,
    write: &Write,
    rename: &mut impl FnMut(&Path, &Path) -> io::Result<()>,
) -> io::Result<usize> {
    let mut restore = Vec::new();
    for e in &write.entries {
        let now = match input::read_bytes(&e.target, input::MAX_TEXT_BYTES) {
            Ok(bytes) => Some(sha256(&bytes)),
            Err(ReadError::NotFound) => None,
            Err(ReadError::Io(err)) => return Err(with_target(e, err)),
            // Neither contents: refused below.
            Err(other) => Some(other.to_string()),
        };
        if now == e.old {
            continue;
        }
        if now != e.new {
            return Err(io::Error::other(format!(
                "{} changed after a write to it was stopped half-way, so the write cannot be \
                 undone: nothing was restored; keep the file as it should be, delete {} and \
                 run again",
                e.target.display(),
                journal.display()
            )));
        }
        restore.push(e);
    }
    // Last first: the reverse of the order written.
    for e in restore.iter().rev() {
        let result = match &e.backup {
            Some(backup) => rename(backup, &e.target),
            None => std::fs::remove_file(&e.target),
        };
        result.map_err(|err| {
            let kept = e.backup.as_ref().map_or(String::new(), |b| {
                format!("; its old contents are in {}", b.display())
            });
            io::Error::new(
                err.kind(),
                format!(
                    "restoring {} failed: {err}{kept}; the next run tries again (from {})",
                    e.target.display(),
                    journal.display()
                ),
            )
        })?;
    }
    remove_temporaries(write);
    for dir in write.dirs.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
    remove(journal)?;
    Ok(restore.len())
}

/// Removes the staged files and backups of `write` (those still there).
fn remove_temporaries(write: &Write) {
    for e in &write.entries {
        for path in [&e.staged, &e.backup].into_iter().flatten() {
            let _ = std::fs::remove_file(path);
        }
        sync_dir(&e.target);
    }
}

fn with_target(e: &Entry, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", e.target.display()))
}

/// Makes a rename or a removal of `path` durable (its directory synced); a directory that
/// cannot be synced is not an error.
fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        sync(dir);
    }
}

/// Makes the renames and removals in `dir` durable; a directory that cannot be synced is not
/// an error.
pub(super) fn sync(dir: &Path) {
    let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
}
