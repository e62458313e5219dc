//! A throwaway copy of the repository's regen inputs (api.toml, docker/, generated/) and the
//! built `xtask` binary to run on it.

#![allow(dead_code)] // each test file uses a different subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ has a parent")
        .to_path_buf()
}

/// Files by path relative to the sandbox, with their bytes.
pub type Files = BTreeMap<String, Vec<u8>>;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    /// A temp dir holding api.toml, docker/ and generated/ as the repository has them.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = repo_root();
        std::fs::copy(root.join("api.toml"), dir.path().join("api.toml")).expect("copy api.toml");
        for sub in ["docker", "generated", "generated/python", "generated/src"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
            for entry in std::fs::read_dir(root.join(sub)).expect("read_dir") {
                let entry = entry.expect("dir entry");
                if entry.file_type().expect("file type").is_file() {
                    std::fs::copy(entry.path(), dir.path().join(sub).join(entry.file_name()))
                        .expect("copy");
                }
            }
        }
        Self { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
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

    pub fn manifest(&self) -> PathBuf {
        self.path("api.toml")
    }

    /// `xtask regen --manifest <sandbox>/api.toml ARGS`, not yet started.
    pub fn regen_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(XTASK);
        cmd.arg("regen")
            .arg("--manifest")
            .arg(self.manifest())
            .args(args)
            .current_dir(self.dir.path());
        cmd
    }

    /// Runs regen to the end: (exit code, stdout + stderr).
    pub fn regen(&self, args: &[&str]) -> (i32, String) {
        let out = self.regen_command(args).output().expect("run xtask");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }

    /// Every file under the sandbox, by relative path.
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

/// `.NAME.regen-PID.tmp` (the staging file regen renames over NAME) or
/// `.NAME.regen-PID.old.tmp` (the backup link it undoes a failed regen from).
pub fn is_regen_temp(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .map(|n| n.strip_suffix(".old").unwrap_or(n))
        .and_then(|n| n.rsplit_once(".regen-"))
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}
