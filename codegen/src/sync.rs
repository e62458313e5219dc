//! Outputs → files on disk: plan what would change, then either write it (atomically, only
//! what changed) or report it as drift with a unified diff. Like rust-analyzer's
//! ensure-file-contents, with regions spliced into files the project owns.

mod commit;
mod journal;
mod manifest_edit;
mod rename;
pub use manifest_edit::{CoresOf, plan_manifest_edit};
pub use rename::Rename;
use rename::renamed;
mod leftovers;
mod paths;
#[cfg(test)]
mod tests;

use mooncake_sos_support::atomic::is_staging_file;
use mooncake_sos_support::drift::unified_diff;

use crate::region;
use crate::render::{HEADER, Output};
use mooncake_sos_manifest::model::RelPath;
use mooncake_sos_support::diag::{Diagnostic, Diagnostics, Source};
use mooncake_sos_support::input::{self, ReadError};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Unchanged,
    /// The file exists with other contents.
    Stale,
    /// The file does not exist yet.
    Missing,
    /// A generated file no renderer produces any more.
    Orphaned,
    /// A region whose body no longer matches its checksum (forced over with `--force`).
    HandEdited,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Stale => "stale",
            Status::Missing => "missing",
            Status::Orphaned => "orphaned",
            Status::HandEdited => "hand-edited",
        }
    }
}

/// What one file would become.
#[derive(Clone, Debug)]
pub struct Change {
    pub path: RelPath,
    pub status: Status,
    pub old: Option<String>,
    /// `None` when the file is to be removed (an orphan).
    pub new: Option<String>,
    /// The file written: `path` under the root, through symlinks that stay inside it.
    target: PathBuf,
    /// This change is the manifest itself ([`plan_manifest_edit`]).
    manifest: bool,
}

impl Change {
    pub fn diff(&self) -> String {
        let old = self.old.as_deref().unwrap_or("");
        let new = self.new.as_deref().unwrap_or("");
        unified_diff(self.path.as_str(), old, new)
    }

    /// Whether this change is the manifest (only in a [`plan_manifest_edit`]).
    pub fn is_manifest(&self) -> bool {
        self.manifest
    }
}

/// Works out every file's new contents. Reads files, writes nothing. A hand-edited region is
/// an error unless `force`; a missing or malformed target file is an error, and so is an
/// output that would leave the repository or land on the manifest, and a region of this
/// project that nothing renders any more.
///
/// `root` is the manifest's directory, and `manifest.name` ends with its file name (as
/// `cargo xtask regen` passes them), so no output can be the manifest.
pub fn plan(
    root: &Path,
    manifest: &Source,
    name: &str,
    outputs: &[Output],
    force: bool,
) -> Result<Vec<Change>, Diagnostics> {
    plan_renaming(root, manifest, name, outputs, force, &[])
}

/// [`plan`], with regions renamed first ([`Rename`]); the changes' old texts stay the files'
/// texts on disk, which [`apply`] checks are unchanged before writing.
pub fn plan_renaming(
    root: &Path,
    manifest: &Source,
    name: &str,
    outputs: &[Output],
    force: bool,
    renames: &[Rename],
) -> Result<Vec<Change>, Diagnostics> {
    let manifest_path = Path::new(&manifest.name).file_name().map(|f| root.join(f));
    let repo = paths::Repo::new(root, manifest_path.as_deref())
        .map_err(|msg| Diagnostic::new(manifest, 0..0, msg))?;
    let mut diags = Diagnostics::default();
    let mut by_path: BTreeMap<&RelPath, Vec<&Output>> = BTreeMap::new();
    for o in outputs {
        by_path.entry(o.path()).or_default().push(o);
    }
    let mut changes = Vec::new();
    let mut seen: BTreeMap<(u64, u64), &RelPath> = BTreeMap::new();
    // The real files written: a symlink's target is an output, not an orphan or a leftover.
    let mut targets = BTreeSet::new();
    for (path, outs) in &by_path {
        let resolved = match repo.resolve(path) {
            Ok(r) => r,
            Err(msg) => {
                diags.push(declared_at(manifest, path, msg));
                continue;
            }
        };
        targets.insert(resolved.target.clone());
        if let Some(id) = resolved.id
            && let Some(other) = seen.insert(id, path)
        {
            let msg = format!("{path} and {other} are the same file; each output needs its own");
            diags.push(declared_at(manifest, path, msg));
            continue;
        }
        let old = match input::read_text(&resolved.target, input::MAX_TEXT_BYTES) {
            Ok(text) => Some(text),
            Err(ReadError::NotFound) => None,
            Err(e @ ReadError::NotUtf8 { .. }) => {
                diags.push(e.diagnostic(path.as_str(), "the file"));
                continue;
            }
            Err(e) => {
                diags.push(declared_at(
                    manifest,
                    path,
                    format!("cannot read {path}: {e}"),
                ));
                continue;
            }
        };
        let moved = old
            .as_deref()
            .and_then(|text| renamed(path, text, name, renames));
        let planned = match moved {
            None => plan_file(path, old, outs, manifest, name, force),
            Some(text) => plan_file(path, Some(text), outs, manifest, name, force).map(|mut c| {
                c.status = if c.new == old {
                    Status::Unchanged
                } else {
                    Status::Stale
                };
                c.old = old;
                c
            }),
        };
        match planned {
            Ok(mut change) => {
                change.target = resolved.target;
                changes.push(change);
            }
            Err(d) => diags.push(d),
        }
    }
    for d in leftovers::in_sibling_files(&repo, name, outputs, &targets) {
        diags.push(d);
    }
    changes.extend(orphans(&repo, outputs, &targets));
    diags.finish(changes)
}

/// [`plan`] without the file system, for tests and the fuzzer: `file` gives each target's
/// text (`None`: it does not exist). No path resolution, orphans or files beside the
/// outputs: the per-file rules only (regions, hand edits, regions left behind in a target).
pub fn plan_texts(
    manifest: &Source,
    name: &str,
    outputs: &[Output],
    file: &dyn Fn(&RelPath) -> Option<String>,
    force: bool,
) -> Result<Vec<Change>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut by_path: BTreeMap<&RelPath, Vec<&Output>> = BTreeMap::new();
    for o in outputs {
        by_path.entry(o.path()).or_default().push(o);
    }
    let mut changes = Vec::new();
    for (path, outs) in by_path {
        match plan_file(path, file(path), &outs, manifest, name, force) {
            Ok(change) => changes.push(change),
            Err(d) => diags.push(d),
        }
    }
    diags.finish(changes)
}

fn plan_file(
    path: &RelPath,
    old: Option<String>,
    outs: &[&Output],
    manifest: &Source,
    name: &str,
    force: bool,
) -> Result<Change, Diagnostic> {
    let mut hand_edited = false;
    let new = match outs {
        [Output::File { contents, .. }] => contents.clone(),
        _ => {
            let Some(mut text) = old.clone() else {
                let msg = format!("{path} does not exist; it must hold the generated regions");
                return Err(declared_at(manifest, path, msg));
            };
            let ids: Vec<&str> = outs
                .iter()
                .filter_map(|o| match o {
                    Output::Region { region, .. } => Some(*region),
                    Output::File { .. } => None,
                })
                .collect();
            if let Some(d) =
                leftovers::in_target(&Source::new(path.as_str(), text.as_str()), name, &ids)
            {
                return Err(d);
            }
            for o in outs {
                let Output::Region {
                    region: id, body, ..
                } = o
                else {
                    return Err(declared_at(
                        manifest,
                        path,
                        format!("{path} is both a whole output and a region target"),
                    ));
                };
                let source = Source::new(path.as_str(), text.as_str());
                let found = region::find(&source, name, id)?;
                if found.is_hand_edited(&text) {
                    if !force {
                        let msg = format!(
                            "region `{name} {id}` was edited by hand (its body no longer matches the checksum); \
                             move the change into api.toml, or run regen --force to overwrite it"
                        );
                        return Err(Diagnostic::new(&source, found.end_line.clone(), msg));
                    }
                    hand_edited = true;
                }
                text = region::splice(&text, &found, name, id, body);
            }
            text
        }
    };
    let status = match &old {
        None => Status::Missing,
        Some(o) if *o == new => Status::Unchanged,
        Some(_) if hand_edited => Status::HandEdited,
        Some(_) => Status::Stale,
    };
    Ok(Change {
        path: path.clone(),
        status,
        old,
        new: Some(new),
        target: PathBuf::new(),
        manifest: false,
    })
}

/// Generated files (first line names the generator) beside outputs that nothing renders.
/// Only regular files are looked at (not symlinks, FIFOs or devices), and no bigger than
/// any output could be.
fn orphans(repo: &paths::Repo, outputs: &[Output], targets: &BTreeSet<PathBuf>) -> Vec<Change> {
    let owned: BTreeSet<&str> = outputs
        .iter()
        .filter(|o| matches!(o, Output::File { .. }))
        .map(|o| o.path().as_str())
        .collect();
    let dirs: BTreeSet<&str> = owned
        .iter()
        .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d))
        .collect();
    let mut out = Vec::new();
    for dir in dirs {
        // A directory that leads outside the repository is reported with its outputs.
        let Some(resolved) = repo.dir(dir) else {
            continue;
        };
        for (name, path) in regular_files(&resolved) {
            let rel = format!("{dir}/{name}");
            if owned.contains(rel.as_str()) || is_staging_file(&name) || targets.contains(&path) {
                continue;
            }
            let Ok(text) = input::read_text(&path, input::MAX_TEXT_BYTES) else {
                continue;
            };
            let generated = text.lines().next().is_some_and(|l| l.contains(HEADER));
            if let Some(rel) = RelPath::new(&rel).filter(|_| generated) {
                out.push(Change {
                    path: rel,
                    status: Status::Orphaned,
                    old: Some(text),
                    new: None,
                    target: path,
                    manifest: false,
                });
            }
        }
    }
    out
}

/// The regular files (not symlinks) directly in `dir`, by name, sorted.
fn regular_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    files.sort();
    files
}

/// An error about a target file, located where api.toml names it (or at 1:1 if it does not).
fn declared_at(manifest: &Source, path: &RelPath, message: String) -> Diagnostic {
    let quoted = format!("\"{path}\"");
    let span = manifest
        .text
        .find(&quoted)
        .map_or(0..0, |i| i..i + quoted.len());
    Diagnostic::new(manifest, span, message)
}

/// Writes every change that is not `Unchanged`, all or nothing (see [`commit`]): new
/// contents are staged beside every target first, then renamed into place; a failure
/// anywhere leaves every file as it was. Refuses a read-only output and a file that changed
/// since [`plan`] read it. First rolls back a write a killed run left half-made
/// ([`recover`]) and removes the staging files killed runs left beside any output and the
/// manifest. `manifest` is the manifest's path (its directory the root the changes were
/// planned under); the caller holds its lock.
pub fn apply(manifest: &Path, changes: &[Change]) -> io::Result<()> {
    recover(manifest)?;
    let dir = manifest.parent().filter(|d| !d.as_os_str().is_empty());
    let root = std::fs::canonicalize(dir.unwrap_or(Path::new(".")))?;
    if let Some(c) = changes.iter().find(|c| !c.target.starts_with(&root)) {
        let msg = format!(
            "{} was planned for another directory than {}",
            c.path,
            root.display()
        );
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    commit::transact(manifest, &root, changes, |from, to| {
        std::fs::rename(from, to)
    })
}

/// Whether a write to the manifest at `manifest` and its outputs was stopped (its journal is
/// there, or a staged journal): [`recover`] and [`sweep`] must run, under the manifest's
/// exclusive lock, before anything reads the manifest or its outputs.
pub fn pending(manifest: &Path) -> bool {
    journal::path(manifest).exists() || commit::has_staging_files(manifest)
}

/// Finishes the write a killed run left (see [`commit`]): one not committed is rolled back,
/// every file it had replaced, created or removed as before it; of one committed, what it
/// left beside the files is removed. `None` when there was none; else how many files were
/// put back. The caller holds the manifest's exclusive lock.
pub fn recover(manifest: &Path) -> io::Result<Option<usize>> {
    let journal = journal::path(manifest);
    if !journal.exists() {
        return Ok(None);
    }
    let dir = manifest.parent().filter(|d| !d.as_os_str().is_empty());
    let root = std::fs::canonicalize(dir.unwrap_or(Path::new(".")))?;
    let write = journal::read(&journal, &root)?;
    journal::finish(&journal, &write).map(Some)
}

/// Removes the staging files killed runs left beside the manifest at `manifest` (a staged
/// journal). The caller holds the manifest's lock and has called [`recover`].
pub fn sweep(manifest: &Path) {
    commit::remove_staging_files(manifest);
}
