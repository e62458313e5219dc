//! `watch` warm: verdicts kept by the hash of their inputs. A second run on the same cache
//! prints the cold run's bytes and checks nothing again (`--timings` counts the kept verdicts
//! served and the releases checked); a kept verdict is served only while every input it rests
//! on is unchanged (one test per part of the key), and only as the tool wrote it. Every
//! release's verdict is kept: each that carries the API has its core read here (0.3.14's on
//! the driver stub), so none waits to be read again.

use crate::common::{Run, XTASK};
use crate::watch::{cache_copy, online, pinned_sandbox, watch};
use mooncake_sos_testkit::{Sandbox, copy_tree};
use std::path::Path;
use std::process::Command;

/// Every release the online run reported.
fn all_releases() -> Vec<&'static serde_json::Value> {
    online().json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["releases"].as_array().unwrap())
        .collect()
}

fn releases() -> usize {
    all_releases().len()
}

/// The checkout as the online run had it, in a sandbox of its own: pinned by `bump`, the
/// pinned module in its `--fetch` cache (an offline run does not download it). Only what a
/// test then changes differs from the online run's inputs.
fn online_checkout() -> Sandbox {
    let sandbox = pinned_sandbox();
    let fetched = "target/upstream-cache";
    copy_tree(&online().sandbox.path(fetched), &sandbox.path(fetched));
    sandbox
}

/// (verdicts served from the cache, releases checked), from `--timings`.
fn counts(run: &Run) -> (usize, usize) {
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("watch timings: "))
        .unwrap_or_else(|| panic!("no timings: {run:?}"));
    let tail = line.rsplit_once(" s (").unwrap().1;
    let numbers: Vec<usize> = tail
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(
        tail,
        format!("{} kept verdicts, {} checked)", numbers[0], numbers[1]),
        "{line}"
    );
    (numbers[0], numbers[1])
}

/// `watch --json --timings --offline` on `cache`, from `sandbox`, with `args`.
fn offline_run(sandbox: &Sandbox, cache: &Path, args: &[&str]) -> Run {
    let mut all = vec![
        "--json",
        "--timings",
        "--offline",
        "--index-url",
        &online().url,
    ];
    all.extend(args);
    let run = watch(sandbox, cache, &all);
    assert_eq!(run.code, Some(1), "{run:?}");
    run
}

/// The run printed the cold run's report and checked every release again.
fn checked_again(run: &Run) {
    assert_eq!(counts(run), (0, releases()), "{run:?}");
    assert_eq!(run.stdout, online().run.stdout);
}

#[test]
fn a_warm_run_serves_every_kept_verdict_and_prints_the_cold_runs_bytes() {
    let online = online();
    let cache = cache_copy();
    let run = watch(
        &online.sandbox,
        cache.path(),
        &["--json", "--timings", "--index-url", &online.url],
    );
    assert_eq!(run.stdout, online.run.stdout, "warm = cold, byte for byte");
    assert_eq!(counts(&run), (releases(), 0), "{run:?}");
    let run = offline_run(&online.sandbox, cache.path(), &[]);
    assert_eq!(run.stdout, online.run.stdout);
    assert_eq!(counts(&run), (releases(), 0), "{run:?}");
}

/// Another copy of the checkout, unchanged, is the same inputs: every verdict is served. (The
/// tests of one changed part run on such a copy.)
#[test]
fn a_copy_of_the_checkout_serves_every_kept_verdict() {
    let cache = cache_copy();
    let run = offline_run(&online_checkout(), cache.path(), &[]);
    assert_eq!(counts(&run), (releases(), 0), "{run:?}");
    assert_eq!(run.stdout, online().run.stdout);
}

/// A verdict edited by hand (0.3.13.post1's findings dropped) is not what the tool wrote: it
/// is checked again, and the report is the cold one.
#[test]
fn a_hand_edited_verdict_is_checked_again() {
    let online = online();
    let cache = cache_copy();
    let mut edited = 0;
    for entry in std::fs::read_dir(cache.path().join("verdicts")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // The entry's three envelope lines, then the verdict.
        let mut parts = text.splitn(4, '\n');
        let head: Vec<&str> = parts.by_ref().take(3).collect();
        let mut verdict: serde_json::Value = serde_json::from_str(parts.next().unwrap()).unwrap();
        if verdict["version"] != "0.3.13.post1" {
            continue;
        }
        verdict["layers"] = serde_json::json!([]);
        verdict["changes"] = serde_json::json!([]);
        // A new file: the copy's files are hard links to the shared cache's.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, format!("{}\n{verdict}", head.join("\n"))).unwrap();
        edited += 1;
    }
    // Other tests' runs keep verdicts of other inputs in the shared cache too.
    assert!(edited >= 1);
    let run = offline_run(&online.sandbox, cache.path(), &[]);
    assert_eq!(counts(&run), (releases() - 1, 1), "{run:?}");
    assert_eq!(run.stdout, online.run.stdout);
}

#[test]
fn a_changed_manifest_misses() {
    let cache = cache_copy();
    // A comment at the end changes no verdict, but it is another input.
    let sandbox = online_checkout();
    let text = sandbox.read("api.toml");
    sandbox.write("api.toml", &format!("{text}# edited\n"));
    checked_again(&offline_run(&sandbox, cache.path(), &[]));
}

#[test]
fn a_changed_core_record_misses() {
    let cache = cache_copy();
    // A value no check asks about, in every core record.
    let sandbox = online_checkout();
    for entry in std::fs::read_dir(sandbox.path("cores")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut record: serde_json::Value = serde_json::from_str(&text).unwrap();
        record["values"]["ZZ_ADDED_BY_THE_TEST"] = serde_json::json!({"type": "int"});
        std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    }
    checked_again(&offline_run(&sandbox, cache.path(), &[]));
}

#[test]
fn a_changed_user_record_misses() {
    let cache = cache_copy();
    // sglang's record counts one more file naming the package: no use changes.
    let sandbox = online_checkout();
    let path = "consumers/sglang-0.5.16.json";
    let mut record: serde_json::Value = serde_json::from_str(&sandbox.read(path)).unwrap();
    record["files"] = serde_json::json!(record["files"].as_u64().unwrap() + 1);
    sandbox.write(path, &serde_json::to_string_pretty(&record).unwrap());
    checked_again(&offline_run(&sandbox, cache.path(), &[]));
}

#[test]
fn a_changed_reader_misses() {
    let cache = cache_copy();
    // One more library directory for the core's import (an empty one).
    let libs = tempfile::tempdir().unwrap();
    let args = ["--lib-dir", libs.path().to_str().unwrap()];
    checked_again(&offline_run(&online().sandbox, cache.path(), &args));
}

#[test]
fn a_smoke_misses() {
    let cache = cache_copy();
    // Offline without its dependencies the smoke does not run, but it is another input.
    let run = offline_run(&online().sandbox, cache.path(), &["--smoke"]);
    assert_eq!(counts(&run), (0, releases()), "{run:?}");
}

#[test]
fn another_build_of_the_tool_misses() {
    let cache = cache_copy();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("xtask");
    std::fs::copy(XTASK, &copy).unwrap();
    let online = online();
    let run = Run::from(
        Command::new(&copy)
            .arg("watch")
            .arg("--manifest")
            .arg(online.sandbox.manifest())
            .arg("--watch-cache")
            .arg(cache.path())
            .arg("--lib-dir")
            .arg(crate::common::cores::cuda13_libs())
            .args(["--raw-base-url", &crate::watch::upstream().base_url])
            .args([
                "--json",
                "--timings",
                "--offline",
                "--index-url",
                &online.url,
            ])
            .current_dir(online.sandbox.root())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    checked_again(&run);
}

/// A FIFO left where a verdict belongs: an error naming it, at once (before, the run hung).
#[test]
fn a_fifo_as_a_kept_verdict_is_refused_at_once() {
    let online = online();
    let cache = cache_copy();
    let verdicts = cache.path().join("verdicts");
    for entry in std::fs::read_dir(&verdicts).unwrap() {
        let path = entry.unwrap().path();
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    let mut cmd = Command::new(XTASK);
    cmd.arg("watch")
        .arg("--manifest")
        .arg(online.sandbox.manifest())
        .arg("--watch-cache")
        .arg(cache.path())
        .arg("--lib-dir")
        .arg(crate::common::cores::cuda13_libs())
        .args(["--raw-base-url", &crate::watch::upstream().base_url])
        .args(["--offline", "--index-url", &online.url])
        .current_dir(online.sandbox.root());
    let r = crate::common::measured::run_within(&mut cmd, std::time::Duration::from_secs(60));
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "");
    let error = r.stderr.lines().find(|l| l.contains(": error: ")).unwrap();
    let (path, says) = error.split_once(": error: ").unwrap();
    assert!(Path::new(path).starts_with(&verdicts), "{error}");
    assert_eq!(
        says,
        "cannot read the kept verdict: is a FIFO, not a regular file"
    );
}
