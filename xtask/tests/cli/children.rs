//! Children never outlive their command: a `watch` killed with SIGKILL while its listing
//! (python3's urllib) waits on a silent index leaves no child running, and any scratch
//! directory goes at the next start.

use crate::common::{Sandbox, XTASK};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pids of live processes (python3, pip) whose command line contains `needle`.
fn pips_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, r)| r.starts_with('Z'));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if !zombie && cmdline.contains(needle) && cmdline.contains("python") {
            found.push(pid);
        }
    }
    found
}

fn scratch_dirs(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mooncake-sos-"))
        .collect();
    names.sort();
    names
}

fn wait_for<T>(what: &str, secs: u64, mut probe: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < until, "{what} after {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_watch_leaves_no_pip_and_no_scratch_after_the_next_start() {
    // An index that accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/simple/", silent.local_addr().unwrap());
    let held = std::thread::spawn(move || silent.incoming().take(64).collect::<Vec<_>>());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new();
    let watch = |extra: &[&str]| {
        let mut cmd = Command::new(XTASK);
        cmd.arg("watch")
            .arg("--manifest")
            .arg(sandbox.manifest())
            .arg("--watch-cache")
            .arg(cache.path())
            .args(["--index-url", &url])
            .args(extra)
            .env("TMPDIR", tmp.path())
            .current_dir(sandbox.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };
    let mut running = watch(&[]).spawn().unwrap();
    let pips = wait_for("nothing asking the index", 60, || {
        Some(pips_with(&url)).filter(|p| !p.is_empty())
    });
    // The listing reads the page without pip: no scratch directory yet.
    assert!(
        scratch_dirs(tmp.path()).len() <= 1,
        "{:?}",
        scratch_dirs(tmp.path())
    );
    running.kill().unwrap();
    running.wait().unwrap();
    wait_for("a child outlived the killed watch", 5, || {
        pips_with(&url).is_empty().then_some(())
    });
    // Killed, it could not remove a scratch directory: the next start does.
    let next = watch(&["--offline"]).status().unwrap();
    assert_eq!(next.code(), Some(2));
    assert_eq!(
        scratch_dirs(tmp.path()),
        Vec::<String>::new(),
        "pip was {pips:?}"
    );
    drop(held);
}
