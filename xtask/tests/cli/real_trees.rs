//! `verify --consumer` over whole real trees no one here wrote, from the package index (read,
//! never installed): every finding, by file, line, column and message, is one a reviewer
//! confirmed is a real use of a mooncake object api.toml does not declare or that does not
//! fit it; a new finding (a false one, most likely) or a lost one fails. transformers, which
//! never names mooncake, must stay silent. (sglang, read the same way, is in
//! verify_consumer.rs with its own extra checks.)

use crate::common::{Run, repo_root, xtask};
use std::path::{Path, PathBuf};

/// The `.py` files of the wheel of `dist` in `$MC_TEST_CONSUMER_WHEELS`, unpacked under `into`.
fn unpacked(dist: &str, into: &Path) -> PathBuf {
    let dir = PathBuf::from(
        std::env::var_os("MC_TEST_CONSUMER_WHEELS")
            .unwrap_or_else(|| panic!("MC_TEST_CONSUMER_WHEELS is not set: run scripts/test.sh")),
    );
    let wheel = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("{dist}-")) && name.ends_with(".whl")
        })
        .unwrap_or_else(|| panic!("no {dist} wheel in {}: run scripts/test.sh", dir.display()));
    let python = std::env::var("MC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             z.extractall(sys.argv[2], [m for m in z.namelist() if m.endswith('.py')])",
        ])
        .arg(&wheel)
        .arg(into)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    into.join(dist)
}

/// `verify --consumer` over the package `dist`: the run, and its findings with the unpacked
/// directory's prefix taken off.
fn scan(dist: &str) -> (Run, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let package = unpacked(dist, tmp.path());
    let run = xtask(&["verify", "--consumer", package.to_str().unwrap()], &[]);
    let prefix = format!("{}/", tmp.path().display());
    let findings = run
        .stdout
        .lines()
        .filter(|l| !l.starts_with("verify --consumer: "))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_owned())
        .collect();
    (run, findings)
}

fn known(dist: &str) -> Vec<String> {
    let path = repo_root().join(format!("xtask/tests/cli/consumers/{dist}-findings.txt"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// vllm's store worker hands the store to its base class with `super().__init__(store,
/// ...)`: the base class's calls on it are among the findings, and every finding is on a
/// mooncake object.
#[test]
fn vllm_read_whole_has_exactly_the_known_findings() {
    let (run, found) = scan("vllm");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(found, known("vllm"), "{}", run.stdout);
    assert_eq!(
        run.last_line(),
        "verify --consumer: 3604 file(s), 69 uses; 44 finding(s): 43 against api.toml, 1 \
         against the images"
    );
    let worker = "vllm/distributed/kv_transfer/kv_connector/v1/mooncake/store/worker.py";
    for reached_through_super in [
        format!("{worker}:367:38: native MooncakeDistributedStore.batch_get_replica_desc:"),
        format!("{worker}:1438:34: native MooncakeDistributedStore.batch_get_into_multi_buffers:"),
    ] {
        assert!(
            found.iter().any(|l| l.starts_with(&reached_through_super)),
            "{reached_through_super}\n{}",
            run.stdout
        );
    }
}

#[test]
fn lmcache_read_whole_has_exactly_the_known_findings() {
    let (run, found) = scan("lmcache");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(found, known("lmcache"), "{}", run.stdout);
    assert_eq!(
        run.last_line(),
        "verify --consumer: 845 file(s), 35 uses; 19 finding(s): 19 against api.toml, 0 \
         against the images"
    );
}

#[test]
fn transformers_which_never_names_mooncake_is_silent() {
    let (run, found) = scan("transformers");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(found, Vec::<String>::new());
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "verify --consumer: 2951 file(s), 0 uses; every use is declared and fits api.toml and \
         every image's core\n"
    );
}
