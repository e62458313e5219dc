//! `matrix --record` and `bump` write api.toml only under the lock regen takes, and only if
//! it is still the text they read: a writer holding the lock (here the test, rewriting the
//! file in place under its flock, as crash_safety.rs does) keeps them waiting, and an edit
//! made meanwhile makes them refuse instead of overwriting it.

use crate::common::{FIRST_RELEASE, Run, Sandbox, XTASK, repo_root, stale_verdict};
use mooncake_sos_testkit::{module_of, wheels_dir};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether process `pid` waits for a file lock (`->` lines of /proc/locks are waiters).
fn waits_for_a_lock(pid: u32) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    locks.lines().any(|l| {
        let mut words = l.split_whitespace().skip(1);
        words.next() == Some("->") && words.nth(3) == Some(pid.to_string().as_str())
    })
}

/// Runs `xtask ARGS` while the test holds api.toml's lock; once xtask waits for it,
/// `meanwhile` may rewrite the file in place (still under the lock), then the lock goes.
fn run_while_locked(sb: &Sandbox, args: &[&str], meanwhile: Option<&str>) -> Run {
    let mut held = std::fs::OpenOptions::new()
        .write(true)
        .open(sb.manifest())
        .unwrap();
    held.lock().unwrap();
    let child = Command::new(XTASK)
        .args(args)
        .arg("--manifest")
        .arg(sb.manifest())
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !waits_for_a_lock(child.id()) {
        assert!(
            Instant::now() < deadline,
            "xtask {args:?} never waited for the lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    if let Some(text) = meanwhile {
        held.set_len(0).unwrap();
        held.write_all(text.as_bytes()).unwrap();
        held.sync_all().unwrap();
    }
    drop(held);
    Run::from(child.wait_with_output().unwrap())
}

#[test]
fn matrix_record_waits_for_the_lock_then_writes() {
    let sb = stale_verdict();
    let wheels = wheels_dir();
    let run = run_while_locked(&sb, &["matrix", "--record", wheels.to_str().unwrap()], None);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(sb.read("api.toml").contains(FIRST_RELEASE), "{run:?}");
}

#[test]
fn matrix_record_refuses_a_manifest_edited_while_it_ran() {
    let sb = stale_verdict();
    let edited = sb.read("api.toml").replace(
        "# The first release whose wheel carries the whole API",
        "# Edited by someone else. The first release whose wheel carries the whole API",
    );
    let before = sb.snapshot();
    let wheels = wheels_dir();
    let args = ["matrix", "--record", wheels.to_str().unwrap()];
    let run = run_while_locked(&sb, &args, Some(&edited));
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has(
        "api.toml: error: changed while matrix --record ran; run matrix --record again",
    );
    assert_eq!(sb.read("api.toml"), edited, "the other edit stays");
    let mut after = sb.snapshot();
    after.insert("api.toml".into(), before["api.toml"].clone());
    assert!(after == before, "nothing else was written");
}

#[test]
fn bump_refuses_a_manifest_edited_while_it_ran() {
    let sb = Sandbox::new();
    let module = module_of("0.3.12.post1", sb.root());
    let edited = format!("# Edited by someone else.\n{}", sb.read("api.toml"));
    let args = [
        "bump",
        "--commit",
        "6041a609a8c3af35e778f70db344f145c2914980",
        "--module",
        module.to_str().unwrap(),
    ];
    let run = run_while_locked(&sb, &args, Some(&edited));
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("changed while bump ran; run bump again");
    assert_eq!(sb.read("api.toml"), edited);
}
