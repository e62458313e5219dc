//! A throwaway copy of the repository's regen inputs (api.toml, docker/, generated/) and of the
//! image core records verify and bump read (cores/), where the commands that write may write.

use crate::repo_root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files by path relative to the sandbox, with their bytes.
pub type Files = BTreeMap<String, Vec<u8>>;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A temp dir holding api.toml, docker/, generated/ and cores/ as the repository has them.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = repo_root();
        std::fs::copy(root.join("api.toml"), dir.path().join("api.toml")).expect("copy api.toml");
        for sub in ["docker", "generated", "cores"] {
            copy_tree(&root.join(sub), &dir.path().join(sub));
        }
        Self { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn manifest(&self) -> PathBuf {
        self.path("api.toml")
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).expect("write");
    }

    /// Replaces the first `from` in `rel` with `to`; `from` must be there.
    pub fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel);
        assert!(text.contains(from), "{rel} lacks {from:?}");
        self.write(rel, &text.replacen(from, to, 1));
    }

    /// Every file under the sandbox, by relative path: for "nothing was written" checks.
    pub fn snapshot(&self) -> Files {
        fn walk(root: &Path, dir: &Path, out: &mut Files) {
            for e in std::fs::read_dir(dir).expect("read_dir") {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    walk(root, &p, out);
                } else if let Ok(bytes) = std::fs::read(&p) {
                    let rel = p.strip_prefix(root).expect("under root");
                    out.insert(rel.to_string_lossy().into_owned(), bytes);
                }
            }
        }
        let mut out = Files::new();
        walk(self.dir.path(), self.dir.path(), &mut out);
        out
    }
}

/// Copies a directory tree (a `target/` in it is a build, not an input: skipped).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("dir entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("file type").is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&src, &dst);
            }
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}
