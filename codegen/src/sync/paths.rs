//! Where an output's bytes really go: inside the repository (the manifest's directory), never
//! through a symlink that leaves it, never onto the manifest, never two outputs on one file.

use mooncake_sos_manifest::model::RelPath;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The repository an output plan is made for.
pub struct Repo {
    /// `root`, canonical (symlinks resolved).
    root: PathBuf,
    /// The manifest's (device, inode): an output must not be that file, under any name.
    manifest: Option<(u64, u64)>,
}

/// An output path resolved to the file that would be written.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The real path (through symlinks that stay inside the repository).
    pub target: PathBuf,
    /// (device, inode) of the file when it exists.
    pub id: Option<(u64, u64)>,
}

impl Repo {
    pub fn new(root: &Path, manifest: Option<&Path>) -> Result<Repo, String> {
        let root = std::fs::canonicalize(root)
            .map_err(|e| format!("cannot resolve the directory {}: {e}", root.display()))?;
        let manifest = manifest
            .and_then(|m| std::fs::metadata(m).ok())
            .map(|m| (m.dev(), m.ino()));
        Ok(Repo { root, manifest })
    }

    /// A directory under the root, resolved; `None` if it does not exist or leads outside.
    pub fn dir(&self, path: &str) -> Option<PathBuf> {
        let Some(rel) = RelPath::new(path) else {
            return path.is_empty().then(|| self.root.clone());
        };
        let target = self.inside(&rel).ok()?;
        target.is_dir().then_some(target)
    }

    /// Resolves output `path` under the root. Errors say why in a sentence naming the path.
    pub fn resolve(&self, path: &RelPath) -> Result<Resolved, String> {
        let target = self.inside(path)?;
        let meta = match std::fs::metadata(&target) {
            Ok(meta) => meta,
            Err(_) => return Ok(Resolved { target, id: None }),
        };
        if !meta.is_file() {
            let what = if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(format!("{path} is {what}; regen writes regular files"));
        }
        let id = (meta.dev(), meta.ino());
        if Some(id) == self.manifest {
            return Err(format!(
                "{path} is the manifest itself; an output must be another file"
            ));
        }
        Ok(Resolved {
            target,
            id: Some(id),
        })
    }

    /// `path` under the root with every existing part's symlinks resolved; an error if that
    /// leads outside the root.
    fn inside(&self, path: &RelPath) -> Result<PathBuf, String> {
        let full = self.root.join(path.as_str());
        // The deepest part of the path that exists decides where the rest would be created.
        let mut existing = full.as_path();
        let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
        while std::fs::symlink_metadata(existing).is_err() {
            let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                break;
            };
            missing.push(name);
            existing = parent;
        }
        let real = std::fs::canonicalize(existing).map_err(|e| {
            format!(
                "{path}: cannot resolve {} (a dangling symlink?): {e}",
                existing.display()
            )
        })?;
        if !real.starts_with(&self.root) {
            return Err(format!(
                "{path} leads outside the repository (to {}, through a symlink); \
                 regen writes only inside {}",
                real.display(),
                self.root.display()
            ));
        }
        Ok(missing.iter().rev().fold(real, |p, name| p.join(name)))
    }
}
