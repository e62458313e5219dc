//! Outputs → files on disk: plan what would change, then either write it (atomically, only
//! what changed) or report it as drift with a unified diff. Like rust-analyzer's
//! ensure-file-contents, with regions spliced into files the project owns.

use crate::diag::{Diagnostic, Diagnostics, Source};
use crate::model::RelPath;
use crate::region;
use crate::render::{HEADER, Output};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
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
}

impl Change {
    pub fn diff(&self) -> String {
        let old = self.old.as_deref().unwrap_or("");
        let new = self.new.as_deref().unwrap_or("");
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{}", self.path), &format!("b/{}", self.path))
            .to_string()
    }
}

/// Works out every file's new contents. Reads files, writes nothing. A hand-edited region is
/// an error unless `force`; a missing or malformed target file is an error.
pub fn plan(
    root: &Path,
    manifest: &Source,
    name: &str,
    outputs: &[Output],
    force: bool,
) -> Result<Vec<Change>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut by_path: BTreeMap<&RelPath, Vec<&Output>> = BTreeMap::new();
    for o in outputs {
        by_path.entry(o.path()).or_default().push(o);
    }
    let mut changes = Vec::new();
    for (path, outs) in &by_path {
        let old = match std::fs::read_to_string(root.join(path.as_str())) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                diags.push(declared_at(
                    manifest,
                    path,
                    format!("cannot read {path}: {e}"),
                ));
                continue;
            }
        };
        match plan_file(path, old, outs, manifest, name, force) {
            Ok(change) => changes.push(change),
            Err(d) => diags.push(d),
        }
    }
    changes.extend(orphans(root, outputs));
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
    })
}

/// Generated files (first line names the generator) beside outputs that nothing renders.
fn orphans(root: &Path, outputs: &[Output]) -> Vec<Change> {
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
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let rel = format!("{dir}/{name}");
            if owned.contains(rel.as_str()) || is_staging_file(&name) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
                continue;
            };
            let generated = text.lines().next().is_some_and(|l| l.contains(HEADER));
            if let Some(path) = RelPath::new(&rel).filter(|_| generated) {
                out.push(Change {
                    path,
                    status: Status::Orphaned,
                    old: Some(text),
                    new: None,
                });
            }
        }
    }
    out
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

/// Writes every change that is not `Unchanged`: each file through a temporary file in the same
/// directory and a rename, so a reader (or a crash) sees the old or the new file, never a mix.
/// First removes staging files a killed run left beside any output.
pub fn apply(root: &Path, changes: &[Change]) -> io::Result<()> {
    for c in changes {
        remove_staging_files(&root.join(c.path.as_str()));
    }
    for c in changes.iter().filter(|c| c.status != Status::Unchanged) {
        let path = root.join(c.path.as_str());
        match &c.new {
            Some(contents) => write_atomic(&path, contents.as_bytes())?,
            None => std::fs::remove_file(&path)?,
        }
    }
    Ok(())
}

/// `.NAME.regen-PID.tmp`, where [`write_atomic`] stages NAME before the rename.
fn staging_prefix(name: &str) -> String {
    format!(".{name}.regen-")
}

/// A file [`write_atomic`] stages; one is left behind when regen is killed before its rename.
/// Not an output: `--check` and the orphan scan skip it.
pub fn is_staging_file(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".regen-")
}

/// Removes the staging files a killed regen left beside `path`. The caller holds the
/// manifest's lock, so no live regen of the same manifest is writing them.
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

pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(
        "{}{}.tmp",
        staging_prefix(name),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        // Keep the mode of the file being replaced (docker/build.py is executable).
        if let Ok(meta) = std::fs::metadata(path) {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
