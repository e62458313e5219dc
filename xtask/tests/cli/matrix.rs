//! `cargo xtask matrix`: the real wheels of three releases × the declared API, and the drop
//! condition's verdict.

use crate::common::{Sandbox, xtask};
use mooncake_sos_testkit::{wheel, wheels_dir};

const RELEASES: [&str; 3] = ["0.3.11.post1", "0.3.12.post1", "0.3.13.post1"];

#[test]
fn markdown_table_over_the_wheel_cache_names_0_3_12_first() {
    let run = xtask(&["matrix", wheels_dir().to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Only mooncake wheels are columns (the cache also holds numpy and msgpack), in version order.
    assert!(
        lines.contains(&"| api.toml item | 0.3.11.post1 | 0.3.12.post1 | 0.3.13.post1 |"),
        "{run:?}"
    );
    for row in [
        "| `FieldSchema` | ✗ missing | ✓ | ✓ |",
        "| `MooncakeBundleTransfer` | ✓ | ✓ | ✓ |",
        "| `MooncakeBundleTransfer.__init__(buffer_pool)` | ✗ missing | ✓ | ✓ |",
        "| `MooncakeBundleTransfer.release_result(result)` | ✗ missing | ✓ | ✓ |",
        "| `export_ref(ref)` | ✗ missing | ✓ | ✓ |",
        "| `import_ref` | ✗ missing | ✓ | ✓ |",
    ] {
        assert!(lines.contains(&row), "no row {row:?}: {run:?}");
    }
    assert_eq!(
        lines.last(),
        Some(
            &"Drop condition: the first release carrying the whole API is mooncake-transfer-engine-non-cuda 0.3.12.post1."
        )
    );
    // api.toml records the same verdict, so nothing is suggested.
    assert_eq!(run.stderr, "", "{run:?}");
}

#[test]
fn json_lists_every_release_in_version_order_whatever_the_argument_order() {
    let wheels: Vec<String> = RELEASES
        .iter()
        .rev()
        .map(|v| wheel(v).display().to_string())
        .collect();
    let mut args = vec!["matrix", "--json"];
    args.extend(wheels.iter().map(String::as_str));
    let run = xtask(&args, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let versions: Vec<&str> = v["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, RELEASES);
    assert_eq!(v["first_release"]["version"], "0.3.12.post1");
    assert_eq!(
        v["first_release"]["package"],
        "mooncake-transfer-engine-non-cuda"
    );
    let old = &v["releases"][0];
    assert_eq!(old["ok"], false);
    assert_eq!(old["mismatches"].as_array().unwrap().len(), 8, "{old}");
    let items = v["items"].as_array().unwrap();
    assert_eq!(old["status"].as_array().unwrap().len(), items.len());
    assert_eq!(
        v["releases"][1]["module_sha256"],
        "611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f"
    );
    assert!(
        v["releases"][2]["status"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s == "present")
    );
}

#[test]
fn no_release_with_the_whole_api_exits_1() {
    let run = xtask(&["matrix", wheel("0.3.11.post1").to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout.lines().last(),
        Some("Drop condition: no release given carries the whole API.")
    );
}

#[test]
fn record_writes_the_verdict_into_the_manifest_and_regenerates() {
    let repo = Sandbox::new();
    let manifest = repo.manifest();
    let before = std::fs::read_to_string(&manifest).unwrap();
    let stale = before.replace(
        "first_release = \"0.3.12.post1\"",
        "first_release = \"0.3.13.post1\"",
    );
    assert_ne!(stale, before, "api.toml records 0.3.12.post1");
    std::fs::write(&manifest, &stale).unwrap();
    let m = manifest.to_str().unwrap();
    xtask(&["regen", "--manifest", m], &[]);

    let run = xtask(
        &["matrix", "--manifest", m, wheels_dir().to_str().unwrap()],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stderr_has("api.toml records mooncake-transfer-engine-non-cuda 0.3.13.post1");
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        stale,
        "without --record nothing is written"
    );

    let run = xtask(
        &[
            "matrix",
            "--record",
            "--manifest",
            m,
            wheels_dir().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        before,
        "only the verdict line changes back"
    );
    let check = xtask(&["regen", "--check", "--manifest", m], &[]);
    assert_eq!(
        check.code,
        Some(0),
        "record regenerated the outputs: {check:?}"
    );
}

#[test]
fn a_file_that_is_not_a_wheel_name_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("module.whl");
    std::fs::write(&odd, "named like a wheel of nothing").unwrap();
    let run = xtask(&["matrix", odd.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with(&format!("{}: error: not a wheel file name", odd.display())),
        "{run:?}"
    );
}
