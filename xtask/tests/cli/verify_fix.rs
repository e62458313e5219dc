//! `verify --fix`: the declarations a new module needs, written into api.toml from the
//! module's derived uses and the images' core records, with regen, as one reviewable change;
//! what needs a person refused with nothing written. On the real 0.3.13.post1 module and the
//! real records in cores/.

use crate::common::{NothingWritten, Run, Sandbox, xtask_in};
use mooncake_sos_testkit::module_of;
use std::path::Path;

fn fix(repo: &Sandbox, module: &Path, extra: &[&str]) -> Run {
    let args = ["verify", "--fix", "--module", module.to_str().unwrap()];
    xtask_in(repo, &[&args[..], extra].concat())
}

fn verify(repo: &Sandbox, module: &Path) -> Run {
    xtask_in(repo, &["verify", "--module", module.to_str().unwrap()])
}

#[test]
fn fix_declares_what_the_0_3_13_module_uses_and_leaves_a_passing_tree() {
    let repo = Sandbox::new();
    let module = module_of("0.3.13.post1", repo.root());
    let before = std::fs::read_to_string(repo.manifest()).unwrap();
    assert_eq!(
        verify(&repo, &module).code,
        Some(1),
        "undeclared uses before"
    );

    let run = fix(&repo, &module, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has("+object = \"MooncakeDistributedStore.is_exist\"\n+use = \"optional\"\n+overload = \"arg0: str\"\n");
    run.assert_stdout_has("+attribute = \"group_ids\"\n+instance = true\n+access = \"read-write\"\n+reason = \"structured_object_store-0.3.13.post1.py:6329, _config_with_group_id\"\n");
    run.assert_stdout_has("+module = \"mooncake._fast_copy\"\n+use = \"optional\"\n");
    run.assert_stdout(|o| {
        o.ends_with(
            "verify --fix: 13 declaration change(s) written to api.toml (review the diff above)\n",
        )
    });

    let after = std::fs::read_to_string(repo.manifest()).unwrap();
    // Only declarations change: every line of before is still there in order, but the one
    // access widened (the module now also reads replica_num to copy it).
    let after_lines: Vec<&str> = after.lines().collect();
    let mut at = 0;
    let mut removed = Vec::new();
    for line in before.lines() {
        match after_lines[at..].iter().position(|l| *l == line) {
            Some(i) => at += i + 1,
            None => removed.push(line),
        }
    }
    assert_eq!(removed, ["access = \"write\""], "lines lost from api.toml");
    assert_eq!(
        after.lines().filter(|l| l.starts_with('#')).count(),
        before.lines().filter(|l| l.starts_with('#')).count()
    );
    assert_eq!(
        verify(&repo, &module).code,
        Some(0),
        "{:?}",
        verify(&repo, &module)
    );
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    // A second run has nothing left to do.
    let again = fix(&repo, &module, &[]);
    assert_eq!(again.code, Some(0), "{again:?}");
    again.assert_stdout(|o| o.starts_with("verify --fix: nothing to fix"));
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let repo = Sandbox::new();
    let module = module_of("0.3.13.post1", repo.root());
    let run = repo.run_writing_nothing(0, || fix(&repo, &module, &["--dry-run"]));
    run.assert_stdout(|o| o.starts_with("--- a/api.toml\n+++ b/api.toml\n"));
    run.assert_stdout(|o| {
        o.ends_with("verify --fix --dry-run: 13 declaration change(s); nothing written\n")
    });
}

#[test]
fn a_use_no_images_core_serves_is_refused_with_nothing_written() {
    let repo = Sandbox::new();
    let module = module_of("0.3.13.post1", repo.root());
    let mut text = std::fs::read_to_string(&module).unwrap();
    text.push_str("\n\ndef _needs_more(store):\n    return store.not_in_any_core(1)\n");
    std::fs::write(&module, &text).unwrap();
    let line = text.lines().count();
    let run = repo.run_writing_nothing(1, || fix(&repo, &module, &[]));
    let at = format!(
        "structured_object_store-0.3.13.post1.py:{line}: native MooncakeDistributedStore.not_in_any_core:"
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains(&at) && l.contains("stay on the")),
        "{run:?}"
    );
    run.assert_stdout_has("verify --fix: nothing written: ");
}

#[test]
fn prune_removes_a_declaration_nothing_uses() {
    let repo = Sandbox::new();
    let module = module_of("0.3.13.post1", repo.root());
    assert_eq!(fix(&repo, &module, &[]).code, Some(0));
    // The 0.3.12.post1 module does not touch mooncake._fast_copy.
    let older = module_of("0.3.12.post1", repo.root());
    let run = fix(&repo, &older, &["--prune", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has("-module = \"mooncake._fast_copy\"\n");
}
