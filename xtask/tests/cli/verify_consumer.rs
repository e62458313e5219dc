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
    // Without --uses, a clean tree is one line.
    let run = verify(&["--consumer", &file]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        "verify --consumer: 1 file(s), 20 uses; every use is declared and fits api.toml and every image's core\n"
    );
    assert_eq!(
        run.stderr, "",
        "nothing about api.toml unless asked (--unused)"
    );
    // With --uses, every use, then the summary.
    let run = verify(&["--consumer", &file, "--uses"]);
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
    assert_eq!(run.stdout.lines().count(), 21, "{run:?}");
}

#[test]
fn undeclared_uses_fail_at_their_places_findings_first() {
    let file = fixture("undeclared.py");
    let run = verify(&["--consumer", &file]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            format!("{file}:3:82: import_ref_v2: undeclared: expected a [[symbol]] entry, found an import [api-undeclared]"),
            format!("{file}:6:7: native MooncakeDistributedStore.setup: dict key: expected one of the dict_keys api.toml declares (global_segment_size, local_buffer_size, local_hostname, master_server_addr, metadata_server, protocol, rdma_devices), found \"enable_ssd_offload\" [dict-key]"),
            format!("{file}:8:57: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression` [api-call]"),
            "verify --consumer: 1 file(s), 10 uses; 3 finding(s): 3 against api.toml, 0 against the images".to_owned(),
        ],
        "{run:?}"
    );
    assert_eq!(run.stderr, "", "{run:?}");
    // Declared items this consumer does not use, when asked.
    let run = verify(&["--consumer", &file, "--unused"]);
    run.assert_stderr_has(
        "api.toml: warning: method MooncakeBundleTransfer.get: declared, no file given uses it",
    );
}

/// One shape for every finding (file, line, column, rule, message; images for a finding
/// against them) and the summary's counts.
#[test]
fn json_gives_every_finding_in_one_shape_and_the_counts() {
    let file = fixture("undeclared.py");
    let run = verify(&["--consumer", &file, "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["summary"],
        serde_json::json!({"files": 1, "uses": 10, "findings": 3, "api": 3, "images": 0})
    );
    let findings = v["findings"].as_array().unwrap();
    let places: Vec<(u64, u64, &str)> = findings
        .iter()
        .map(|f| {
            assert_eq!(f["file"], file.as_str());
            let keys: Vec<&String> = f.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["file", "line", "column", "rule", "message"], "{f}");
            (
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["rule"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            (3, 82, "api-undeclared"),
            (6, 7, "dict-key"),
            (8, 57, "api-call")
        ]
    );
    assert_eq!(
        findings[2]["message"],
        "MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression`"
    );
}

/// A target with no Python file to read is bad input: a CI job pointed at the wrong path must
/// not pass forever.
#[test]
fn a_target_with_no_python_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "from mooncake.store import X\n").unwrap();
    let venv = tmp.path().join("venv");
    std::fs::create_dir_all(venv.join("lib/python3.11/site-packages")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(
        venv.join("lib/python3.11/site-packages/m.py"),
        "import os\n",
    )
    .unwrap();
    for target in [&empty, &notes, &venv] {
        let shown = target.display().to_string();
        let run = verify(&["--consumer", &shown]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(run.stdout, "", "{run:?}");
        assert_eq!(
            run.stderr,
            format!(
                "{shown}: error: no Python file to read there (no `.py` file, directories like site-packages, virtualenvs and hidden ones left out)\n"
            )
        );
    }
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
    let run = verify(&["--consumer", &dir, "--uses"]);
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
        .filter(|l| !l.starts_with("verify --consumer: "))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l))
        .collect();
    let known = std::fs::read_to_string(fixture("sglang-0.5.16-findings.txt")).unwrap();
    assert_eq!(found, known.lines().collect::<Vec<_>>(), "{}", run.stdout);
    assert_eq!(
        run.last_line(),
        "verify --consumer: 2857 file(s), 69 uses; 43 finding(s): 43 against api.toml, 0 \
         against the images"
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
    assert_eq!(files.len(), 11, "{files:?}");
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
