//! `cargo xtask verify --consumer`: consumer fixtures (tests/cli/consumers/) that call the API
//! as the consumer does, and ones that use what api.toml does not declare.

use crate::common::{Run, repo_root};

fn fixture(name: &str) -> String {
    repo_root()
        .join("xtask/tests/cli/consumers")
        .join(name)
        .display()
        .to_string()
}

fn verify(args: &[&str]) -> Run {
    let mut all = vec!["verify"];
    all.extend_from_slice(args);
    crate::common::xtask(&all, &[])
}

#[test]
fn the_consumers_calls_are_declared_and_fit() {
    let file = fixture("object_store.py");
    let run = verify(&["--consumer", &file]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let has = |line: &str| run.stdout.lines().any(|l| l == format!("{file}:{line}"));
    for line in [
        "27: native MooncakeDistributedStore.setup: dict keys global_segment_size, local_buffer_size, local_hostname, master_server_addr, metadata_server, protocol, rdma_devices",
        "29: MooncakeBundleTransfer: call(1 arg(s), key_prefix=\"miles-object-store\")",
        "33: MooncakeBundleTransfer.put: call(1 arg(s), chunk_bytes=None, config=..., field_schemas=..., namespace=\"miles\", type=\"dict\")",
        "48: MooncakeBundleTransfer.release_result: reference",
        "57: native ReplicateConfig.replica_num: write on an instance: required",
    ] {
        assert!(has(line), "missing {line}\n{run:?}");
    }
    assert!(
        run.stdout.ends_with("verify --consumer: 1 file(s), 20 uses; every use is declared and fits api.toml and every image's core\n"),
        "{run:?}"
    );
    // What the consumer never uses is listed, not failed.
    assert!(
        !run.stderr.contains("api.toml: warning: dict key"),
        "every declared setup key is passed: {run:?}"
    );
}

#[test]
fn undeclared_uses_fail_at_their_lines() {
    let file = fixture("undeclared.py");
    let run = verify(&["--consumer", &file]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let failures: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": expected "))
        .collect();
    let expected = [
        format!(
            "{file}:3: import_ref_v2: undeclared: expected a [[symbol]] entry, found an import"
        ),
        format!(
            "{file}:6: native MooncakeDistributedStore.setup: dict key: expected one of the dict_keys api.toml declares (global_segment_size, local_buffer_size, local_hostname, master_server_addr, metadata_server, protocol, rdma_devices), found \"enable_ssd_offload\""
        ),
        format!(
            "{file}:8: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression`"
        ),
    ];
    assert_eq!(
        failures,
        expected.iter().map(String::as_str).collect::<Vec<_>>(),
        "{run:?}"
    );
    assert!(
        run.stdout
            .ends_with("3 mismatch(es) against api.toml, 0 finding(s) against the images\n"),
        "{run:?}"
    );
    // Declared items this consumer does not use are listed on stderr.
    run.assert_stderr_has(
        "api.toml: warning: method MooncakeBundleTransfer.get: declared, no consumer uses it",
    );
}

#[test]
fn json_has_the_same_facts() {
    let file = fixture("undeclared.py");
    let run = verify(&["--consumer", &file, "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["files"][0]["failures"].as_array().unwrap().len(), 3);
    assert!(
        v["unused"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u == "method MooncakeBundleTransfer.get")
    );
}

#[test]
fn bad_consumer_files_are_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bad = dir.join("bad.py");
    std::fs::write(&bad, "def f(:\n    pass\n").unwrap();
    let run = verify(&["--consumer", bad.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.starts_with(&format!(
            "{}:1:7: error: Python syntax error",
            bad.display()
        )),
        "{run:?}"
    );
    let missing = dir.join("missing.py");
    let run = verify(&["--consumer", missing.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("missing.py");
    let run = verify(&["--consumer", &fixture("object_store.py"), "--sha256"]);
    assert_eq!(run.code, Some(2), "{run:?}");
}

#[test]
fn a_directory_is_every_py_under_it_hidden_installed_and_virtualenvs_skipped() {
    // tree/ holds a package whose relative imports and `store` / `config` parameters are its
    // own, and broken files under .venv/, site-packages/ and a virtualenv (pyvenv.cfg).
    let dir = fixture("tree");
    let run = verify(&["--consumer", &dir]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let p2p = format!("{dir}/app/p2p.py");
    assert_eq!(
        run.stdout,
        format!(
            "{p2p}:4: native MooncakeDistributedStore: read: required\n\
             {p2p}:8: native MooncakeDistributedStore: call(): required\n\
             verify --consumer: 3 file(s), 2 uses; every use is declared and fits api.toml and every image's core\n"
        ),
        "{run:?}"
    );
    // A skipped file named on its own is read (and here fails, located).
    let run = verify(&["--consumer", &format!("{dir}/env/skipped.py")]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.starts_with(&format!(
            "{dir}/env/skipped.py:1:12: error: Python syntax error"
        )),
        "{run:?}"
    );
}

#[test]
fn over_the_sglang_package_the_findings_are_exactly_the_known_ones() {
    // The real sglang 0.5.16 wheel from the package index, unpacked whole (2,857 .py files).
    let wheels = std::env::var_os("MC_TEST_CONSUMER_WHEELS")
        .unwrap_or_else(|| panic!("MC_TEST_CONSUMER_WHEELS is not set: run scripts/test.sh"));
    let wheel =
        std::path::Path::new(&wheels).join("sglang-0.5.16-cp311-cp311-manylinux_2_34_x86_64.whl");
    let python = std::env::var("MC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sglang-0.5.16");
    let py = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(&python)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    py(&[
        "-m".as_ref(),
        "zipfile".as_ref(),
        "-e".as_ref(),
        wheel.as_os_str(),
        root.as_os_str(),
    ]);
    let prefix = format!("{}/", root.display());

    let run = verify(&["--consumer", root.to_str().unwrap()]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    // Every finding, by file (in the wheel), line and message: a new one or a lost one fails.
    let found: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": expected "))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l))
        .collect();
    let known = std::fs::read_to_string(fixture("sglang-0.5.16-findings.txt")).unwrap();
    assert_eq!(found, known.lines().collect::<Vec<_>>(), "{}", run.stdout);
    assert_eq!(
        run.last_line(),
        "verify --consumer: 2857 file(s), 69 uses; 32 mismatch(es) against api.toml, 0 \
         finding(s) against the images"
    );

    // Each lies in a file that imports mooncake, directly or through sglang's own modules
    // (Python's `ast` says which).
    let oracle = repo_root().join("xtask/tests/cli/consumers/import_closure.py");
    let importing = |extra: &[&std::ffi::OsStr]| -> std::collections::BTreeSet<String> {
        let mut args = vec![oracle.as_os_str(), root.as_os_str()];
        args.extend(extra);
        py(&args)
            .lines()
            .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_owned())
            .collect()
    };
    let closure = importing(&[]);
    let files: std::collections::BTreeSet<String> = found
        .iter()
        .map(|l| l.split_once(':').unwrap().0.to_owned())
        .collect();
    assert_eq!(files.len(), 10, "{files:?}");
    let elsewhere: Vec<&String> = files.difference(&closure).collect();
    assert!(
        elsewhere.is_empty(),
        "findings in files that do not import mooncake: {elsewhere:?}"
    );
    // Values cross files: the embedding store imports mooncake only through sglang's store
    // module and subclasses its class; its calls on the inherited store are among the findings.
    let embedding = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_embedding_store.py";
    assert!(files.contains(embedding), "{files:?}");
    assert!(!importing(&["--direct".as_ref()]).contains(embedding));
}
