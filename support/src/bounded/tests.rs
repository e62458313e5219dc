use super::*;
use std::path::Path;

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]);
    cmd
}

/// Gone, or a zombie nobody will run again.
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// How long a test waits for what it asserts: generous, for a loaded machine; every wait
/// ends as soon as its condition holds. The processes the tests start sleep 60 s, so a wait
/// that ends before then still tells killed from left running.
const PATIENCE: Duration = Duration::from_secs(30);

/// Whether `done` holds within [`PATIENCE`], polled.
fn soon(mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + PATIENCE;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn all_gone_soon(pids: &[i32]) -> bool {
    soon(|| pids.iter().all(|&p| gone(p)))
}

/// The first `count` pids written to `file`, once that many whole lines are there (a line
/// still being written is not read as a pid).
fn pids_in(file: &Path, count: usize) -> Vec<i32> {
    let mut pids = Vec::new();
    let found = soon(|| {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        pids = text
            .split_inclusive('\n')
            .filter_map(|l| l.strip_suffix('\n')?.trim().parse().ok())
            .collect();
        pids.len() >= count
    });
    assert!(found, "no {count} pids in {}: {pids:?}", file.display());
    pids.truncate(count);
    pids
}

#[test]
fn a_run_past_its_deadline_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let script = format!(
        "sleep 60 & echo $! > {0}; echo $$ >> {0}; sleep 60",
        file.display()
    );
    let started = Instant::now();
    let err = run(
        &mut sh(&script),
        &Limits::within(Duration::from_millis(500)),
    )
    .err();
    assert!(matches!(err, Some(Error::TimedOut(_))), "{err:?}");
    // Not the 60 s the script sleeps (the bound leaves room for a loaded machine).
    assert!(started.elapsed() < PATIENCE, "{:?}", started.elapsed());
    assert!(all_gone_soon(&pids_in(&file, 2)));
}

#[test]
fn what_a_finished_run_left_running_is_killed_and_its_output_kept() {
    let done = run(
        &mut sh("sleep 60 & echo $!; echo said >&2"),
        &Limits::within(Duration::from_secs(30)),
    )
    .unwrap();
    assert!(done.status.success());
    assert_eq!(done.stderr_text(), "said\n");
    let pid: i32 = done.stdout_text().trim().parse().unwrap();
    assert!(all_gone_soon(&[pid]));
}

#[test]
fn output_is_kept_up_to_the_bound_and_the_rest_read() {
    let limits = Limits {
        max_capture: 1000,
        ..Limits::within(Duration::from_secs(30))
    };
    let done = run(&mut sh("head -c 3000000 /dev/zero; echo end >&2"), &limits).unwrap();
    assert!(done.status.success());
    assert_eq!(done.stdout.len(), 1000);
    assert_eq!(done.stderr_text(), "end\n");
}

#[test]
fn a_program_that_does_not_exist_is_a_spawn_error() {
    let err = run(
        &mut Command::new("/nonexistent/mooncake-sos-nothing"),
        &Limits::within(Duration::from_secs(5)),
    )
    .err();
    assert!(matches!(err, Some(Error::Spawn(_))), "{err:?}");
}

const HELPER: &str = "MOONCAKE_SOS_BOUNDED_HELPER";

/// Not a test on its own: the parent that [`a_killed_parent_takes_its_children_along`] kills.
#[test]
fn helper_parent_that_gets_killed() {
    let Some(dir) = std::env::var_os(HELPER) else {
        return;
    };
    let dir = Path::new(&dir);
    let script = format!(
        "sleep 60 & echo $! > {0}; echo $$ >> {0}; sleep 60",
        dir.join("pids").display()
    );
    let limits = Limits {
        on_orphan: Some(vec![
            "sh".into(),
            "-c".into(),
            format!("echo cleaned > {}", dir.join("orphan").display()),
        ]),
        ..Limits::within(Duration::from_secs(60))
    };
    let _ = run(&mut sh(&script), &limits);
}

#[test]
fn a_killed_parent_takes_its_children_along() {
    let dir = tempfile::tempdir().unwrap();
    let mut parent = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "bounded::tests::helper_parent_that_gets_killed",
            "--nocapture",
        ])
        .env(HELPER, dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids = pids_in(&dir.path().join("pids"), 2);
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(all_gone_soon(&pids), "{pids:?} outlived their parent");
    // `echo cleaned > orphan` makes the file, then writes it: wait for what it says.
    let orphan = dir.path().join("orphan");
    let said = || std::fs::read_to_string(&orphan).unwrap_or_default();
    soon(|| said() == "cleaned\n");
    assert_eq!(said(), "cleaned\n");
}
