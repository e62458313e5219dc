//! All or nothing, at every point a write can fail: a plan of every kind of change (the
//! manifest, stale files, regions, a file in a directory that does not exist yet, an orphan)
//! is applied with the N-th rename failing, for every N; the tree must be as it was, byte
//! for byte and mode for mode, with no staging file and no new directory left.

use super::*;
use std::os::unix::fs::PermissionsExt;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Every file and directory under `root`: path → (bytes, mode); directories with no bytes.
fn snapshot(root: &Path) -> BTreeMap<String, (Option<Vec<u8>>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Option<Vec<u8>>, u32)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                out.insert(rel, (None, mode));
                walk(root, &p, out);
            } else {
                out.insert(rel, (Some(std::fs::read(&p).unwrap()), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Two snapshots are equal; else the paths that differ.
fn assert_same(
    got: &BTreeMap<String, (Option<Vec<u8>>, u32)>,
    want: &BTreeMap<String, (Option<Vec<u8>>, u32)>,
) {
    let differ: BTreeSet<&String> = got
        .keys()
        .chain(want.keys())
        .filter(|k| got.get(*k) != want.get(*k))
        .collect();
    assert!(differ.is_empty(), "these differ: {differ:?}");
}

/// A repository with api.toml and docker/, whose generated/ holds one stale output, an
/// orphan, and lacks generated/src/ entirely; build.py is executable.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(format!("{REPO}/api.toml"), root.join("api.toml")).unwrap();
    std::fs::create_dir_all(root.join("docker")).unwrap();
    std::fs::create_dir_all(root.join("generated/python")).unwrap();
    for f in ["Dockerfile", "Dockerfile.rocm", "build.py"] {
        std::fs::copy(format!("{REPO}/docker/{f}"), root.join("docker").join(f)).unwrap();
    }
    std::fs::set_permissions(
        root.join("docker/build.py"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(root.join("generated/python/mooncake_sos.py"), "stale\n").unwrap();
    let orphan = format!("# {}\n", crate::render::HEADER);
    std::fs::write(root.join("generated/python/gone.py"), orphan).unwrap();
    dir
}

/// api.toml with another pin and base tag: the manifest, the shim, the bindings and every
/// region change.
fn edited_manifest(root: &Path) -> Source {
    let text = std::fs::read_to_string(root.join("api.toml")).unwrap();
    let text = text
        .replace(
            "4dbe5a4c194669850e9abad61172e9878b245b15",
            "5dbe5a4c194669850e9abad61172e9878b245b15",
        )
        .replace("\"v0.5.16-cu130\"", "\"v0.5.17-cu130\"")
        .replace("-20260730\"", "-20260731\"");
    Source::new(root.join("api.toml").display().to_string(), text)
}

/// No core records: the stubs of the module alone (these tests are about writing).
fn no_cores(_: &mooncake_sos_manifest::model::Api) -> Result<crate::render::Cores, String> {
    Ok(crate::render::Cores::default())
}

/// The plan of `edited_manifest` over the tree at `root`.
fn plan_the_edit(root: &Path) -> Result<Vec<Change>, Diagnostics> {
    plan_manifest_edit(root, &edited_manifest(root), false, &[], &no_cores)
}

/// Commits `changes` with each rename whose number (from 1) `failure` gives a message for
/// failing with it; the error the commit returns.
fn transact_failing(
    root: &Path,
    changes: &[Change],
    failure: impl Fn(usize) -> Option<String>,
) -> io::Error {
    let mut calls = 0;
    transact(root, changes, |from, to| {
        calls += 1;
        match failure(calls) {
            Some(message) => Err(io::Error::other(message)),
            None => std::fs::rename(from, to),
        }
    })
    .unwrap_err()
}

/// `commit::transact` for the manifest in `root`.
fn transact(
    root: &Path,
    changes: &[Change],
    rename: impl FnMut(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    let root = root.canonicalize().unwrap();
    commit::transact(&root.join("api.toml"), &root, changes, rename)
}

#[test]
fn a_failure_at_any_rename_leaves_the_tree_as_it_was() {
    let probe = fixture();
    let changes = plan_the_edit(probe.path()).unwrap();
    let kinds: BTreeSet<&str> = changes.iter().map(|c| c.status.label()).collect();
    assert_eq!(
        kinds,
        ["missing", "orphaned", "stale"].into_iter().collect(),
        "the plan must hold every kind of write"
    );
    let renames = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged && c.new.is_some())
        .count();
    assert!(renames >= 8, "{renames} renames");
    for fail_at in 0..renames {
        let repo = fixture();
        let root = repo.path();
        let before = snapshot(root);
        let changes = plan_the_edit(root).unwrap();
        let err = transact_failing(root, &changes, |n| {
            (n == fail_at + 1).then(|| "injected".into())
        });
        assert!(
            err.to_string().contains("injected; nothing was changed"),
            "rename {fail_at}: {err}"
        );
        assert_eq!(
            snapshot(root),
            before,
            "rename {fail_at} failed: the tree changed"
        );
    }
    // And with no failure, every file is new, build.py still executable, nothing left over.
    let repo = fixture();
    let root = repo.path();
    let edited = edited_manifest(root);
    let changes = plan_manifest_edit(root, &edited, false, &[], &no_cores).unwrap();
    transact(root, &changes, |from, to| std::fs::rename(from, to)).unwrap();
    let after = snapshot(root);
    assert_eq!(after["api.toml"].0.as_deref(), Some(edited.text.as_bytes()));
    assert_eq!(after["docker/build.py"].1 & 0o777, 0o755);
    assert!(!after.contains_key("generated/python/gone.py"));
    assert!(
        after
            .keys()
            .all(|k| !is_staging_file(k.rsplit('/').next().unwrap()))
    );
    let again = plan_manifest_edit(root, &edited, false, &[], &no_cores).unwrap();
    assert!(
        again.iter().all(|c| c.status == Status::Unchanged),
        "{again:?}"
    );
}

/// A rename that fails, and then the undo too: the error says where the old file is, the
/// journal stays, and the next run's [`recover`] puts every file back.
#[test]
fn a_failed_undo_is_finished_by_the_next_run() {
    let repo = fixture();
    let root = repo.path();
    let before = snapshot(root);
    let changes = plan_the_edit(root).unwrap();
    // The second rename fails, and so does putting the first (the manifest) back.
    let err = transact_failing(root, &changes, |n| {
        matches!(n, 2 | 3).then(|| format!("injected {n}"))
    })
    .to_string();
    let manifest = root.canonicalize().unwrap().join("api.toml");
    let journal = journal::path(&manifest);
    assert!(err.starts_with("cannot write "), "{err}");
    assert!(
        err.contains(&format!(
            ": injected 2; and then restoring {} failed: injected 3; its old contents are in ",
            manifest.display()
        )),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "; the next run tries again (from {})",
            journal.display()
        )),
        "{err}"
    );
    assert!(pending(&manifest));
    assert_ne!(snapshot(root), before);
    assert_eq!(recover(&manifest).unwrap(), Some(1));
    assert_same(&snapshot(root), &before);
    assert_eq!(recover(&manifest).unwrap(), None);
}

/// A manifest edit whose regen cannot succeed writes nothing, the manifest included: a
/// hand-edited region is refused by the plan, a read-only output by the write.
#[test]
fn a_manifest_edit_is_written_only_with_its_outputs() {
    let repo = fixture();
    let root = repo.path();
    let path = root.join("docker/Dockerfile");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("ARG ", "ARG  ", 1)).unwrap();
    let before = snapshot(root);
    let err = plan_the_edit(root).unwrap_err();
    assert!(err.to_string().contains("edited by hand"), "{err}");
    assert_eq!(snapshot(root), before);

    let repo = fixture();
    let root = repo.path();
    let shim = root.join("generated/python/mooncake_sos.py");
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(root);
    let changes = plan_the_edit(root).unwrap();
    let err = apply(&root.join("api.toml"), &changes).unwrap_err();
    assert!(err.to_string().contains("is read-only"), "{err}");
    assert_eq!(snapshot(root), before);
}
