//! `cargo xtask verify`: the real PyPI wheels, a real interpreter, and small synthetic
//! modules for every kind of mismatch, each asserting the exact report line.

use crate::common::{Run, line_of, lone_file, released_module, repo_root, xtask};
use mooncake_sos_testkit::wheel;
use std::path::Path;

fn assert_reports(edits: &[(&str, &str)], expected: impl Fn(&str, &str) -> Vec<String>) {
    let (file, text, run) = verify_edited(edits);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.report(), expected(&file, &text), "{run:?}");
    assert!(run.last_line().contains("mismatch(es)"), "{run:?}");
}

#[test]
fn the_synthetic_module_matches_as_written() {
    let (_, _, run) = verify_edited(&[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("verify: ") && run.stdout.contains("matches api.toml"),
        "{run:?}"
    );
}

#[test]
fn renamed_parameter() {
    assert_reports(
        &[("namespace=\"default\"", "name_space=\"default\"")],
        |f, t| {
            let line = line_of(t, "def put(");
            vec![format!(
                "{f}:{line}: MooncakeBundleTransfer.put: parameter 'namespace': expected keyword-only, found nothing"
            )]
        },
    );
}

#[test]
fn parameter_made_keyword_only() {
    assert_reports(
        &[(
            "DEFAULT_BUNDLE_CHUNK_BYTES, buffer_pool",
            "DEFAULT_BUNDLE_CHUNK_BYTES, *, buffer_pool",
        )],
        |f, t| {
            let line = line_of(t, "def __init__(");
            vec![format!(
                "{f}:{line}: MooncakeBundleTransfer.__init__: parameter 'buffer_pool' kind: expected positional, found keyword-only"
            )]
        },
    );
}

#[test]
fn default_changed() {
    assert_reports(
        &[(
            "key_prefix: str = \"bundle\"",
            "key_prefix: str = \"bundles\"",
        )],
        |f, t| {
            let line = line_of(t, "def __init__(");
            vec![format!(
                "{f}:{line}: MooncakeBundleTransfer.__init__: parameter 'key_prefix' default: expected 'bundle', found \"bundles\""
            )]
        },
    );
}

#[test]
fn alias_retargeted() {
    assert_reports(
        &[(
            "export_ref = export_dataproto_ref",
            "export_ref = export_other_ref",
        )],
        |f, t| {
            let line = line_of(t, "export_ref = ");
            vec![format!(
                "{f}:{line}: export_ref: alias target: expected export_dataproto_ref, found export_other_ref"
            )]
        },
    );
}

#[test]
fn alias_turned_into_a_function() {
    assert_reports(
        &[(
            "export_ref = export_dataproto_ref",
            "def export_ref(ref):\n    return {}",
        )],
        |f, t| {
            let line = line_of(t, "def export_ref(");
            vec![format!(
                "{f}:{line}: export_ref: kind: expected alias of export_dataproto_ref, found function"
            )]
        },
    );
}

#[test]
fn class_turned_function() {
    let class_start = GOOD.find("class MooncakeBundleTransfer:").unwrap();
    let class_end = GOOD.find("export_ref = ").unwrap();
    let class = &GOOD[class_start..class_end];
    assert_reports(
        &[(
            class,
            "def MooncakeBundleTransfer(store, key_prefix=\"bundle\"):\n    pass\n\n\n",
        )],
        |f, t| {
            let line = line_of(t, "def MooncakeBundleTransfer(");
            vec![format!(
                "{f}:{line}: MooncakeBundleTransfer: kind: expected class, found function"
            )]
        },
    );
}

#[test]
fn staticmethod_dropped_and_factory_changed_are_both_reported() {
    let edits = [
        (
            "    @staticmethod\n    def release_result(result)",
            "    def release_result(self, result)",
        ),
        ("field(default_factory=dict)", "field(default_factory=list)"),
        ("@dataclass(frozen=True)", "@dataclass"),
    ];
    assert_reports(&edits, |f, t| {
        vec![
            format!(
                "{f}:{}: FieldSchema: frozen: expected True, found False",
                line_of(t, "class FieldSchema")
            ),
            format!(
                "{f}:{}: FieldSchema.metadata: default: expected field(default_factory=dict), found field(default_factory=list)",
                line_of(t, "metadata:")
            ),
            format!(
                "{f}:{}: MooncakeBundleTransfer.release_result: staticmethod: expected staticmethod, found instance method",
                line_of(t, "def release_result(")
            ),
        ]
    });
}

#[test]
fn undeclared_required_parameter_and_reordered_positionals() {
    let edits = [
        ("def put(self, data, *,", "def put(self, data, mode, *,"),
        (
            "key_prefix: str = \"bundle\", default_chunk_bytes: int = DEFAULT_BUNDLE_CHUNK_BYTES,",
            "default_chunk_bytes: int = DEFAULT_BUNDLE_CHUNK_BYTES, key_prefix: str = \"bundle\",",
        ),
    ];
    assert_reports(&edits, |f, t| {
        let init = line_of(t, "def __init__(");
        vec![
            format!(
                "{f}:{init}: MooncakeBundleTransfer.__init__: parameter 'key_prefix' position: expected 2, found 3"
            ),
            format!(
                "{f}:{init}: MooncakeBundleTransfer.__init__: parameter 'default_chunk_bytes' position: expected 3, found 2"
            ),
            format!(
                "{f}:{}: MooncakeBundleTransfer.put: undeclared required parameter: expected none, found positional mode",
                line_of(t, "def put(")
            ),
        ]
    });
}

#[test]
fn release_0_3_11_lacks_the_api_and_every_miss_is_named() {
    let whl = wheel("0.3.11.post1");
    let run = xtask(&["verify", "--wheel", whl.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let file = format!("{}!mooncake/structured_object_store.py", whl.display());
    let report = run.report();
    for expected in [
        format!("{file}:1: FieldSchema: missing: expected dataclass, found nothing"),
        format!(
            "{file}:1: export_ref: missing: expected alias of export_dataproto_ref, found nothing"
        ),
        format!(
            "{file}:1: import_ref: missing: expected alias of import_dataproto_ref, found nothing"
        ),
    ] {
        assert!(
            report.contains(&expected.as_str()),
            "no {expected:?} in {run:?}"
        );
    }
    for method in ["put", "get", "cleanup_dataproto"] {
        let want =
            format!(": MooncakeBundleTransfer.{method}: missing: expected method, found nothing");
        assert!(
            report.iter().any(|l| l.ends_with(&want)),
            "no {want:?} in {run:?}"
        );
    }
    let want =
        ": MooncakeBundleTransfer.release_result: missing: expected staticmethod, found nothing";
    assert!(report.iter().any(|l| l.ends_with(want)), "{run:?}");
    assert!(
        run.stdout
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("verify: {} mismatch(es)", report.len()))
    );
}

#[test]
fn releases_0_3_12_and_0_3_13_carry_the_api() {
    let whl = wheel("0.3.12.post1");
    let run = xtask(&["verify", "--wheel", whl.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 1, "one summary line: {run:?}");
    run.assert_stdout_has("matches api.toml");
    // The same module as a plain file gives the same verdict.
    let (_dir, module) = released_module("0.3.12.post1");
    let run = xtask(&["verify", "--module", &module], &[]);
    assert_eq!(run.code, Some(0), "as a file: {run:?}");
    // 0.3.13.post1 carries every symbol, but needs more of the native core than api.toml
    // declares (ReplicateConfig.group_ids, ...): only native-surface lines are reported.
    let whl = wheel("0.3.13.post1");
    let run = xtask(&["verify", "--wheel", whl.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report = run.report();
    assert!(!report.is_empty(), "{run:?}");
    assert!(
        report
            .iter()
            .all(|l| l.contains(": native ") || l.contains(": sibling ")),
        "{run:?}"
    );
}

#[test]
fn sha256_requires_the_pinned_file() {
    let (_dir, m) = released_module("0.3.12.post1");
    let run = xtask(&["verify", "--module", &m, "--sha256"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let api = std::fs::read_to_string(repo_root().join("api.toml")).unwrap();
    let pinned = api
        .lines()
        .find_map(|l| l.strip_prefix("sha256 = \""))
        .unwrap()
        .trim_end_matches('"');
    assert_eq!(
        run.report(),
        [format!(
            "{m}:1: upstream.sha256: file hash: expected {pinned} (the pinned mooncake-wheel/mooncake/structured_object_store.py at 4dbe5a4c), found 611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f"
        )]
    );
}

fn python() -> String {
    mooncake_sos_testkit::python().display().to_string()
}

fn assert_bad_input(args: &[&str], location: &str, message: &str) {
    let run = xtask(args, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "no partial output: {run:?}");
    let want = format!("{location}: error: {message}");
    assert!(run.stderr.starts_with(&want), "want {want:?}: {run:?}");
}

#[test]
fn bad_input_is_located_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.py");
    let m = missing.to_str().unwrap();
    assert_bad_input(&["verify", "--module", m], m, "cannot read the module");

    let bogus = dir.path().join("bogus.whl");
    std::fs::write(&bogus, "not a zip").unwrap();
    let b = bogus.to_str().unwrap();
    assert_bad_input(&["verify", "--wheel", b], b, "not a wheel (zip archive)");

    // A zip with the `mooncake` package but not the module (what an older release ships),
    // written by the real interpreter's zipfile.
    let pkg = dir.path().join("pkg/mooncake");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    let old = dir.path().join("mooncake_old-0.1-py3-none-any.whl");
    let zipped = std::process::Command::new(python())
        .args(["-m", "zipfile", "-c"])
        .arg(&old)
        .arg(&pkg)
        .status()
        .unwrap();
    assert!(zipped.success());
    let o = old.to_str().unwrap();
    assert_bad_input(
        &["verify", "--wheel", o],
        o,
        "the wheel has no mooncake/structured_object_store.py",
    );

    let nowhere = dir.path().join("bin/python3");
    let p = nowhere.to_str().unwrap();
    assert_bad_input(&["verify", "--python", p], p, "cannot run the interpreter");

    let broken = dir.path().join("broken.py");
    std::fs::write(&broken, "import os\n\ndef f(:\n    pass\n").unwrap();
    let s = format!("{}:3:7", broken.display());
    assert_bad_input(
        &["verify", "--module", broken.to_str().unwrap()],
        &s,
        "Python syntax error",
    );
}

#[test]
fn python_runs_the_shim_in_a_real_interpreter() {
    let python = python();
    let run = xtask(&["verify", "--python", &python], &[]);
    assert_eq!(run.code, Some(0), "the venv has 0.3.12.post1: {run:?}");
    run.assert_stdout_has("mooncake-transfer-engine-non-cuda 0.3.12.post1");
    // The venv's module is the 0.3.12.post1 release's, not the pinned commit's.
    let run = xtask(&["verify", "--python", &python, "--sha256"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let want = "upstream.sha256: file hash: expected 6f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0 \
                (the pinned file at 4dbe5a4c), found 611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f";
    let tail = format!("structured_object_store.py: {want}");
    assert!(run.report().iter().any(|l| l.ends_with(&tail)), "{run:?}");

    // The 0.3.11.post1 wheel unpacked ahead of the venv's: the shim must name what is missing.
    let dir = tempfile::tempdir().unwrap();
    let unpack = std::process::Command::new(&python)
        .args(["-m", "zipfile", "-e"])
        .arg(wheel("0.3.11.post1"))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(unpack.success());
    let path = dir.path().to_str().unwrap();
    let run = xtask(&["verify", "--python", &python], &[("PYTHONPATH", path)]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let module = Path::new(path).join("mooncake/structured_object_store.py");
    let want = format!("{}: FieldSchema: missing", module.display());
    assert!(
        run.stdout.lines().any(|l| l == want),
        "no {want:?}: {run:?}"
    );
    for name in ["export_ref", "import_ref", "MooncakeBundleTransfer.put"] {
        assert!(
            run.stdout.contains(&format!(": {name}: missing")),
            "{name}: {run:?}"
        );
    }
}

/// A module carrying exactly the API api.toml declares; each test breaks one thing in it.
/// Quote style and spacing differ from api.toml on purpose (`"bundle"` vs `'bundle'`).
const GOOD: &str = include_str!("synthetic_module.py");

/// Writes `GOOD` with `edits` applied (each `from` must occur) and runs verify on it.
fn verify_edited(edits: &[(&str, &str)]) -> (String, String, Run) {
    let mut text = GOOD.to_owned();
    for (from, to) in edits {
        assert!(text.contains(from), "edit {from:?} does not apply");
        text = text.replacen(from, to, 1);
    }
    let (_dir, file) = lone_file("structured_object_store.py", &text);
    let run = xtask(&["verify", "--module", &file], &[]);
    (file, text, run)
}
