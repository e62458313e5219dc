//! The consumer's files: what `verify --consumer PATH...` reads (a directory is every `.py`
//! under it), each with the dotted module name its package gives it, read in parallel.

use crate::source::{LoadError, ModuleSource};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One consumer file and its module name (`pkg.sub.mod`, `pkg.__init__` for a package's
/// `__init__.py`, the bare stem outside any package): relative imports resolve against it.
#[derive(Clone, Debug)]
pub struct ConsumerFile {
    pub source: ModuleSource,
    pub module: String,
    /// Named on the command line (not found in a directory): always analysed.
    pub named: bool,
}

/// Directories not walked: hidden ones (`.git`, `.venv`), installed packages and virtualenvs.
fn skipped(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name.starts_with('.')
        || matches!(
            name,
            "site-packages" | "dist-packages" | "__pycache__" | "node_modules"
        )
        || dir.join("pyvenv.cfg").is_file()
}

/// Every `.py` file under `dir`, sorted; symlinks are not followed (no cycles).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        LoadError::new(
            dir.display().to_string(),
            format!("cannot read the directory: {e}"),
        )
    })?;
    let mut entries: Vec<_> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in entries {
        if kind.is_dir() {
            if !skipped(&path) {
                walk(&path, out)?;
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
    Ok(())
}

/// The files named, a directory standing for every `.py` under it; each with the directory
/// it was found under (`None`: named itself). A file named with another extension than `.py`
/// and a virtualenv's root are not Python to read.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Option<&Path>)>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            // A virtualenv's root holds no source of its own to read.
            if p.join("pyvenv.cfg").is_file() {
                continue;
            }
            let mut found = Vec::new();
            walk(p, &mut found)?;
            out.extend(found.into_iter().map(|f| (f, Some(p.as_path()))));
        } else if p.extension().is_none_or(|e| e == "py") {
            out.push((p.clone(), None));
        }
        // Anything else named (`notes.txt`) is no Python source: not read.
    }
    Ok(out)
}

/// The packages `dir` sits in, outermost first: `a/b` gives `[a, b]` when `a/__init__.py` and
/// `a/b/__init__.py` exist (and the directory above `a` has none).
fn packages(dir: Option<&Path>) -> Vec<String> {
    let mut parts = Vec::new();
    let mut dir = dir;
    while let Some(d) = dir.filter(|d| d.join("__init__.py").is_file()) {
        match d.file_name().and_then(|n| n.to_str()) {
            Some(name) => parts.push(name.to_owned()),
            None => break,
        }
        dir = d.parent();
    }
    parts.reverse();
    parts
}

/// The module a file is: `b.c` for `a/b/c.py` when `a/b/__init__.py` exists and
/// `a/__init__.py` does not. Found under a directory given (`root`), the directories between
/// it and the file are packages whether they have an `__init__.py` or not (namespace
/// packages, like sglang's `srt`): the root is where Python would be started.
pub fn module_name(path: &Path, root: Option<&Path>) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let mut parts = match root.and_then(|r| Some((r, path.parent()?.strip_prefix(r).ok()?))) {
        Some((root, between)) => {
            let mut parts = packages(Some(root));
            parts.extend(between.iter().filter_map(|c| c.to_str()).map(str::to_owned));
            parts
        }
        None => packages(path.parent()),
    };
    parts.push(stem.to_owned());
    parts.join(".")
}

/// Reads every file named (directories expanded), in parallel; the first unreadable one in
/// order is the error.
pub fn read(paths: &[PathBuf]) -> Result<Vec<ConsumerFile>, LoadError> {
    let read: Vec<Result<ConsumerFile, LoadError>> = expand(paths)?
        .par_iter()
        .map(|(p, root)| {
            Ok(ConsumerFile {
                source: ModuleSource::read_unhashed(p)?,
                module: module_name(p, *root),
                named: root.is_none(),
            })
        })
        .collect();
    read.into_iter().collect()
}
