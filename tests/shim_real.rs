//! The generated shim (generated/python/mooncake_sos.py) on the real release wheels, unpacked
//! with their real native cores: which release carries the API, and the stricter rules
//! (positional-only, defaults, order) caught on Python's import of doctored copies.

use mooncake_sos_tests::doctored::DOCTORINGS;
use mooncake_sos_tests::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The interpreter and the release wheels the test set-up provides.
fn python_and_wheels() -> (PathBuf, PathBuf) {
    match (
        std::env::var_os("MC_TEST_PYTHON"),
        std::env::var_os("MC_TEST_WHEELS"),
    ) {
        (Some(p), Some(w)) => (PathBuf::from(p), PathBuf::from(w)),
        _ => panic!("MC_TEST_PYTHON / MC_TEST_WHEELS not set: run scripts/test.sh"),
    }
}

/// The release wheel of `version` unpacked (the module and its real native core), with the shim
/// beside it.
fn unpacked_wheel(python: &Path, wheels: &Path, version: &str) -> tempfile::TempDir {
    let wheel = std::fs::read_dir(wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(&format!("-{version}-")))
        .unwrap_or_else(|| panic!("no {version} wheel in {}", wheels.display()));
    let dir = tempfile::tempdir().unwrap();
    let unzip = Command::new(python)
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(unzip.success());
    std::fs::copy(
        repo_root().join("generated/python/mooncake_sos.py"),
        dir.path().join("mooncake_sos.py"),
    )
    .unwrap();
    dir
}

/// The real wheels: 0.3.11.post1 lacks the API, 0.3.12.post1 and 0.3.13.post1 carry it.
#[test]
fn real_wheels() {
    let (python, wheels) = python_and_wheels();
    for (version, ok) in [
        ("0.3.11.post1", false),
        ("0.3.12.post1", true),
        ("0.3.13.post1", true),
    ] {
        let dir = unpacked_wheel(&python, &wheels, version);
        let out = Command::new(&python)
            .args(["-m", "mooncake_sos", "--json"])
            .env("PYTHONPATH", dir.path())
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{version}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(report["ok"], ok, "{version}: {report:#}");
        assert_eq!(out.status.code(), Some(if ok { 0 } else { 1 }), "{version}");
        if !ok {
            let misses: Vec<&str> = report["misses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            for name in [
                "FieldSchema: missing",
                "export_ref: missing",
                "import_ref: missing",
            ] {
                assert!(misses.contains(&name), "{version}: {misses:#?}");
            }
            assert!(
                misses
                    .iter()
                    .any(|m| m.starts_with("MooncakeBundleTransfer")),
                "{version}: {misses:#?}"
            );
        }
    }
}

/// The stricter rules, on Python's import: a positional-only parameter, a changed default and a
/// reordered parameter in the real 0.3.12.post1 module (over its real native core) each make
/// `import mooncake_sos` raise with exactly that miss (roundtrip_bad.rs proves the same on the
/// Rust runtime's load).
#[test]
fn a_positional_only_parameter_a_changed_default_and_a_reordered_parameter_fail_the_import() {
    let (python, wheels) = python_and_wheels();
    let dir = unpacked_wheel(&python, &wheels, "0.3.12.post1");
    let module = dir.path().join("mooncake/structured_object_store.py");
    let real = std::fs::read_to_string(&module).unwrap();
    let import = |what: &str| {
        let out = Command::new(&python)
            .args(["-c", "import mooncake_sos"])
            .env("PYTHONPATH", dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.success(), err.is_empty(), "{what}: {err}");
        err
    };
    assert_eq!(import("the real module"), "");
    for d in &DOCTORINGS {
        std::fs::write(&module, d.apply(&real)).unwrap();
        let err = import(d.what);
        assert!(
            err.contains("ImportError: mooncake_sos: mooncake.structured_object_store does not provide the API api.toml declares (1 problem(s)):"),
            "{}: {err}",
            d.what
        );
        let misses: Vec<&str> = err.lines().filter_map(|l| l.strip_prefix("  - ")).collect();
        assert_eq!(misses.len(), 1, "{}: {err}", d.what);
        assert!(
            misses[0].starts_with(d.miss),
            "{}: want {:?}, got {err}",
            d.what,
            d.miss
        );
    }
}
