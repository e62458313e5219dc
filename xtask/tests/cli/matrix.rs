//! `cargo xtask matrix`: the real wheels of three releases × the declared API, and the drop
//! condition's verdict.

use crate::common::{FIRST_RELEASE, NothingWritten, STALE_FIRST_RELEASE, stale_verdict};
use crate::common::{lone_file, xtask, xtask_in, xtask_on_releases};
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
    let mut releases = RELEASES;
    releases.reverse();
    let run = xtask_on_releases(&["matrix", "--json"], &releases);
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
    let repo = stale_verdict();
    let stale = repo.read("api.toml");
    let before = stale.replacen(STALE_FIRST_RELEASE, FIRST_RELEASE, 1);
    let wheels = wheels_dir();
    let wheels = wheels.to_str().unwrap();

    let run = xtask_in(&repo, &["matrix", wheels]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stderr_has("api.toml records mooncake-transfer-engine-non-cuda 0.3.13.post1");
    assert_eq!(
        repo.read("api.toml"),
        stale,
        "without --record nothing is written"
    );

    let run = xtask_in(&repo, &["matrix", "--record", wheels]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        repo.read("api.toml"),
        before,
        "only the verdict line changes back"
    );
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(
        check.code,
        Some(0),
        "record regenerated the outputs: {check:?}"
    );
}

#[test]
fn a_file_that_is_not_a_wheel_name_exits_2() {
    let (_dir, odd) = lone_file("module.whl", "named like a wheel of nothing");
    let run = xtask(&["matrix", &odd], &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    run.assert_stderr(|e| e.starts_with(&format!("{odd}: error: not a wheel file name")));
}

/// `--record` regenerates every output, the stubs too: an image core record it cannot read is
/// bad input naming the record, and neither api.toml nor any output is written.
#[test]
fn record_without_an_image_core_record_exits_2_writing_nothing() {
    let repo = stale_verdict();
    let record = "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json";
    std::fs::remove_file(repo.path(record)).unwrap();
    let wheels = wheels_dir();
    let run = repo.run_writing_nothing(2, || {
        xtask_in(&repo, &["matrix", "--record", wheels.to_str().unwrap()])
    });
    run.assert_stderr(|e| {
        e.starts_with(&format!(
            "{}:1:1: error: {}: no record of image `cuda`'s native core \
             mooncake-transfer-engine-cuda13 0.3.12.post1: ",
            repo.path("api.toml").display(),
            repo.path(record).display()
        ))
    });
}
