//! `--manifest` however it is given: relative from any directory, or through a symlink
//! (followed to a file inside the repository, which is edited in place; refused when it
//! points outside). Before, a relative path made `bump` fail with "planned for another
//! directory" and a symlink with a false "changed since regen read it".

use crate::common::{Run, Sandbox, XTASK};
use mooncake_sos_testkit::module_of;
use std::path::Path;
use std::process::Command;

const COMMIT: &str = "6041a609a8c3af35e778f70db344f145c2914980";

fn bump_in(dir: &Path, manifest: &str, module: &Path) -> Run {
    let out = Command::new(XTASK)
        .args([
            "bump",
            "--manifest",
            manifest,
            "--commit",
            COMMIT,
            "--module",
        ])
        .arg(module)
        .current_dir(dir)
        .output()
        .expect("run xtask");
    Run::from(out)
}

fn pinned(manifest: &Path) -> bool {
    std::fs::read_to_string(manifest)
        .unwrap()
        .contains(&format!("commit = \"{COMMIT}\""))
}

#[test]
fn a_relative_manifest_works_from_the_repository_and_from_below_it() {
    for (from, arg) in [("", "api.toml"), ("docker", "../api.toml")] {
        let repo = Sandbox::new();
        let module = module_of("0.3.12.post1", repo.root());
        let run = bump_in(&repo.root().join(from), arg, &module);
        assert_eq!(run.code, Some(0), "{arg} from {from:?}: {run:?}");
        assert!(pinned(&repo.manifest()), "{arg} from {from:?}");
    }
}

#[test]
fn a_symlinked_manifest_inside_the_repository_is_edited_through_the_link() {
    let repo = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    let real = repo.root().join("docker/api-real.toml");
    std::fs::rename(repo.manifest(), &real).unwrap();
    std::os::unix::fs::symlink("docker/api-real.toml", repo.manifest()).unwrap();
    let run = bump_in(repo.root(), "api.toml", &module);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(pinned(&real), "the file the link points to is edited");
    let link = std::fs::symlink_metadata(repo.manifest()).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    // A second run finds nothing changed (no false "changed since regen read it").
    let again = bump_in(repo.root(), "api.toml", &module);
    assert_eq!(again.code, Some(0), "{again:?}");
}

#[test]
fn a_manifest_linked_from_outside_the_repository_is_refused_with_nothing_written() {
    let repo = Sandbox::new();
    let outside = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    std::fs::remove_file(repo.manifest()).unwrap();
    std::os::unix::fs::symlink(outside.manifest(), repo.manifest()).unwrap();
    let before = std::fs::read_to_string(outside.manifest()).unwrap();
    let run = bump_in(repo.root(), "api.toml", &module);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("the manifest is a symlink to") && run.stderr.contains("outside"),
        "{run:?}"
    );
    assert_eq!(std::fs::read_to_string(outside.manifest()).unwrap(), before);
}
