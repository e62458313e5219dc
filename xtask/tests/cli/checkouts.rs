//! Two checkouts sharing one CARGO_TARGET_DIR (a common CI and developer set-up): cargo
//! reuses the xtask binary one checkout built for the other (same sources, a workspace
//! member's build is keyed relative to its workspace), so a root baked in at build time
//! would check the wrong checkout. `cargo xtask regen --check` must check its own.

use crate::common::{XTASK, repo_root};
use mooncake_sos_testkit::copy_tree;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a checkout needs to build and run xtask: the workspace, its members, the inputs
/// (scripts/: the core reader builds the CUDA driver stub with cuda-driver-stub.sh; cores/:
/// regen renders the stubs from the images' core records; consumers/: cli/ builds them in).
const CHECKOUT: [&str; 20] = [
    "Cargo.toml",
    "Cargo.lock",
    ".cargo",
    "api.toml",
    "cores",
    "manifest",
    "support",
    "codegen",
    "pysource",
    "native",
    "watch",
    "checks",
    "cli",
    "consumers",
    "xtask",
    "runtime",
    "generated",
    "tests",
    "docker",
    "scripts",
];

/// A copy of the repository in `dir`, with the sources' modification times, so a build
/// left in the shared target by an earlier run of this test counts as fresh.
fn checkout(dir: &Path) {
    let root = repo_root();
    for name in CHECKOUT {
        let (from, to) = (root.join(name), dir.join(name));
        if from.is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
    keep_mtimes(&root, dir, dir);
}

fn keep_mtimes(root: &Path, copy: &Path, dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            keep_mtimes(root, copy, &path);
        } else {
            let original = root.join(path.strip_prefix(copy).unwrap());
            let mtime = std::fs::metadata(&original).unwrap().modified().unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(mtime).unwrap();
        }
    }
}

/// The shared target directory: beside this build's own (`<target>/debug/xtask`), kept
/// between runs so only the first one builds xtask's dependencies.
fn shared_target() -> PathBuf {
    Path::new(XTASK)
        .ancestors()
        .nth(2)
        .expect("<target>/debug/xtask")
        .join("shared-by-two-checkouts")
}

/// `cargo xtask regen --check` in `dir` (a checkout or a directory in one), with the target
/// directory shared: (exit code, stdout + stderr).
fn cargo_xtask_check(dir: &Path) -> (Option<i32>, String) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["xtask", "regen", "--check"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target())
        .env("CARGO_NET_OFFLINE", "true")
        // Smaller and quicker to build: this build is run, never debugged.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn two_checkouts_sharing_a_target_directory_each_check_their_own() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    checkout(a.path());
    checkout(b.path());
    // Checkout A builds xtask into the shared target and is current.
    let (code, out) = cargo_xtask_check(a.path());
    assert_eq!(code, Some(0), "checkout A: {out}");
    assert!(out.contains("are current"), "{out}");

    // Checkout B's manifest moves on; its outputs are now stale. Cargo runs the binary
    // A built (nothing in B's sources differs), and it must look at B.
    let manifest = b.path().join("api.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let (from, to) = (
        "base_tag = \"v0.5.16-cu130\"",
        "base_tag = \"v0.5.17-cu130\"",
    );
    assert!(text.contains(from));
    std::fs::write(&manifest, text.replacen(from, to, 1)).unwrap();
    for dir in [b.path().to_owned(), b.path().join("docker")] {
        let (code, out) = cargo_xtask_check(&dir);
        assert_eq!(code, Some(1), "checkout B ({}): {out}", dir.display());
        assert!(out.contains("stale: docker/Dockerfile"), "{out}");
    }
    let (code, out) = cargo_xtask_check(a.path());
    assert_eq!(code, Some(0), "checkout A again: {out}");

    // The binary run by hand finds the checkout from its working directory.
    let binary = shared_target().join("debug/xtask");
    for (dir, want) in [(a.path(), 0), (b.path(), 1)] {
        let status = Command::new(&binary)
            .args(["regen", "--check"])
            .current_dir(dir.join("docker"))
            .env_remove("CARGO_MANIFEST_DIR")
            .output()
            .unwrap();
        assert_eq!(status.status.code(), Some(want), "{}", dir.display());
    }
}
