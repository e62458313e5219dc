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

/// `--prune` writing: after the 0.3.13.post1 declarations, the 0.3.12.post1 module prunes
/// what only the newer one uses; the diff printed is exactly what is written, and the tree
/// is current and verifies after.
#[test]
fn prune_writes_the_removal_and_the_tree_verifies() {
    let repo = Sandbox::new();
    let newer = module_of("0.3.13.post1", repo.root());
    assert_eq!(fix(&repo, &newer, &[]).code, Some(0));
    let before = repo.read("api.toml");
    let older = module_of("0.3.12.post1", repo.root());
    let run = fix(&repo, &older, &["--prune"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let after = repo.read("api.toml");
    // Every declaration the 0.3.13.post1 fix added (its reason names that module) goes.
    let added = |block: &str| {
        (block.starts_with("[[native]]\n") || block.starts_with("[[sibling]]\n"))
            && block.contains("structured_object_store-0.3.13.post1.py:")
    };
    let blocks: Vec<&str> = before.split("\n\n").collect();
    let pruned = blocks.iter().filter(|b| added(b)).count();
    assert_eq!(pruned, 12, "the declarations the 0.3.13.post1 fix added");
    let kept: Vec<&str> = blocks.into_iter().filter(|b| !added(b)).collect();
    let mut want = kept.join("\n\n");
    if !want.ends_with('\n') {
        want.push('\n');
    }
    assert_eq!(after, want);
    let diff = mooncake_sos_support::drift::unified_diff("api.toml", &before, &after);
    assert!(
        run.stdout.starts_with(&diff),
        "{run:?}\nwant the diff:\n{diff}"
    );
    assert_eq!(
        run.stdout.lines().last(),
        Some("verify --fix: 12 declaration change(s) written to api.toml (review the diff above)")
    );
    assert_eq!(verify(&repo, &older).code, Some(0));
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
}

/// A domain `--fix` rewrites keeps the comments of the values that stay.
#[test]
fn a_rewritten_domain_keeps_the_comments_of_the_values_that_stay() {
    let repo = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    let one_line = "domain = [\"dataproto\", \"dict\"]";
    let commented = "domain = [\n        # the default\n        \"dataproto\",\n        # going away\n        \"gone\",\n        # dicts too\n        \"dict\",\n    ]";
    let kept = "domain = [\n        # the default\n        \"dataproto\",\n        # dicts too\n        \"dict\",\n    ]";
    let original = repo.read("api.toml");
    assert_eq!(original.matches(one_line).count(), 2, "put and get_batch");
    repo.write("api.toml", &original.replacen(one_line, commented, 1));
    let run = fix(&repo, &module, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(repo.read("api.toml"), original.replacen(one_line, kept, 1));
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
}

/// Parameters written as `[[symbol.method.params]]` tables: `--fix` sets a domain in them as
/// in an inline table.
#[test]
fn a_domain_in_a_params_table_is_fixed() {
    let repo = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    let mut doc: toml_edit::DocumentMut = repo.read("api.toml").parse().unwrap();
    let put = doc["symbol"]
        .as_array_of_tables_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|s| s.get_mut("method").and_then(|m| m.as_array_of_tables_mut()))
        .flat_map(|m| m.iter_mut())
        .find(|m| m.get("name").and_then(|n| n.as_str()) == Some("put"))
        .expect("method put");
    let inline = put["params"].as_array().unwrap().clone();
    let mut tables = toml_edit::ArrayOfTables::new();
    for p in inline.iter() {
        tables.push(p.as_inline_table().unwrap().clone().into_table());
    }
    put["params"] = toml_edit::Item::ArrayOfTables(tables);
    // toml_edit keeps the space `params = ` had before its `=`.
    let as_tables = doc
        .to_string()
        .replace("[[symbol.method.params ]]", "[[symbol.method.params]]");
    assert!(
        as_tables.contains("[[symbol.method.params]]\nname = \"type\"\n"),
        "{as_tables}"
    );
    repo.write("api.toml", &as_tables);
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "the same contract: {check:?}");
    let domain = "domain = [\"dataproto\", \"dict\"]";
    repo.write(
        "api.toml",
        &as_tables.replacen(domain, "domain = [\"dataproto\", \"dict\", \"gone\"]", 1),
    );
    let run = fix(&repo, &module, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(repo.read("api.toml"), as_tables);
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
}

/// A `Literal` value holding a newline or an escape character is no domain value api.toml
/// can carry: refused before anything is written, each located at its string in the module
/// and quoted escaped (not an error about an edited api.toml that is not on disk).
#[test]
fn a_domain_value_with_a_newline_or_an_escape_is_refused_at_the_module() {
    let repo = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    let text = std::fs::read_to_string(&module).unwrap();
    let literal = "Literal[\"dataproto\", \"dict\"]";
    let odd = "Literal[\"dataproto\", \"dict\", \"two\\nlines\", \"\\x1b[31mred\"]";
    let text = text.replacen(literal, odd, 1);
    std::fs::write(&module, &text).unwrap();
    let at = |value: &str| {
        let offset = text.find(value).unwrap();
        let line = text[..offset].matches('\n').count() + 1;
        let col = offset - text[..offset].rfind('\n').unwrap();
        format!("{}:{line}:{col}", module.display())
    };
    let run = repo.run_writing_nothing(2, || fix(&repo, &module, &[]));
    assert_eq!(run.stdout, "", "{run:?}");
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(": error: "))
        .collect();
    let takes = "error: MooncakeBundleTransfer.put(type) takes";
    assert_eq!(
        errors,
        [
            format!(
                "{}: {takes} 'two\\nlines', which api.toml cannot declare: a line break in \
                 `domain`: only condition and reason may span lines; nothing written",
                at("\"two\\nlines\"")
            ),
            format!(
                "{}: {takes} '\\x1b[31mred', which api.toml cannot declare: a control character \
                 (U+001B) in `domain`; nothing written",
                at("\"\\x1b[31mred\"")
            ),
        ],
        "{run:?}"
    );
}

/// With api.toml declaring everything the module uses but outputs out of date (a run killed
/// after writing the manifest, an edit by hand), `--fix` does not say "nothing to fix": it
/// names the outputs and exits 1, writing nothing; after regen it has nothing to fix.
#[test]
fn nothing_to_fix_is_not_said_over_outputs_out_of_date() {
    let repo = Sandbox::new();
    let module = module_of("0.3.12.post1", repo.root());
    let current = format!(
        "verify --fix: nothing to fix: api.toml already declares what {} uses\n",
        module.display()
    );
    let run = fix(&repo, &module, &[]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), current.as_str()));
    let shim = repo.read("generated/python/mooncake_sos.py");
    repo.write(
        "generated/python/mooncake_sos.py",
        &format!("{shim}# stale\n"),
    );
    std::fs::remove_file(repo.path("generated/src/lib.rs")).unwrap();
    let run = repo.run_writing_nothing(1, || fix(&repo, &module, &[]));
    assert_eq!(
        run.stdout,
        format!(
            "verify --fix: api.toml declares what {} uses, but 2 output(s) are out of date \
             (generated/python/mooncake_sos.py, generated/src/lib.rs): run `cargo xtask regen`\n",
            module.display()
        ),
        "{run:?}"
    );
    assert_eq!(xtask_in(&repo, &["regen"]).code, Some(0));
    let run = fix(&repo, &module, &[]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), current.as_str()));
}

/// A module that lacks the API (0.3.11.post1: no `MooncakeBundleTransfer`, no `export_ref`)
/// does not pass verify whatever --fix writes: plain `--fix` and `--fix --prune` both refuse,
/// exit 1, write nothing, and name each mismatch. (`--fix --prune` used to write 10 removals
/// and exit 0, leaving a tree verify failed with 8 mismatches; plain `--fix` said "nothing to
/// fix".)
#[test]
fn a_module_without_the_api_is_refused_by_fix_and_by_prune_alike() {
    let repo = Sandbox::new();
    let module = module_of("0.3.11.post1", repo.root());
    let name = module.file_name().unwrap().to_str().unwrap().to_owned();
    for extra in [&[][..], &["--prune"]] {
        let run = repo.run_writing_nothing(1, || fix(&repo, &module, extra));
        run.assert_stdout_has(&format!(
            "{name}:1: export_ref: missing: expected alias of export_dataproto_ref, found nothing\n"
        ));
        let last = run.stdout.lines().last().unwrap_or_default().to_owned();
        assert!(
            last.starts_with("verify --fix: nothing written: ")
                && last
                    .contains("does not match api.toml's symbols in 8 way(s) --fix does not write"),
            "{last}"
        );
    }
}
