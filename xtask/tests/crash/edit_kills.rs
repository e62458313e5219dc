//! The commands that edit api.toml (`verify --fix`, `bump`, `adopt`) killed with SIGKILL at
//! random moments: the manifest and the outputs are one write. After each kill every file is
//! whole (its old or its new bytes); the next command, whichever it is, starts by undoing a
//! write that was stopped half-way, so `regen --check` finds exactly the old tree (or the
//! new one, when the kill came after the commit), current, and the command run again writes
//! exactly the new tree; no temporary and no journal survives either.

use super::Rng;
use super::dir_events::{DirEvents, Event};
use crate::common::cores::{cuda13_0_3_14_wheel, cuda13_libs, cuda13_wheel};
use crate::common::{Files, RegenIn, Sandbox, XTASK, is_regen_temp};
use mooncake_sos_testkit::{SimpleIndex, module_of, wheel};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The journal a write keeps beside the manifest until it commits.
const JOURNAL: &str = ".api.toml.regen-journal";

fn is_temp(path: &str) -> bool {
    is_regen_temp(path) || path == JOURNAL
}

/// The first file a write makes beside the manifest: its journal, staged (before the journal
/// was added, the manifest's own staged copy came first).
fn starts_the_write(event: Event, name: &str) -> bool {
    event == Event::Appeared && name.starts_with(".api.toml.regen-") && name.ends_with(".tmp")
}

fn whole(files: &Files) -> Files {
    files
        .iter()
        .filter(|(p, _)| !is_temp(p))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

/// Makes the sandbox's files exactly `files`.
fn restore(sb: &Sandbox, files: &Files) {
    for path in sb.snapshot().keys() {
        if !files.contains_key(path) {
            std::fs::remove_file(sb.path(path)).expect("remove");
        }
    }
    for (path, bytes) in files {
        std::fs::write(sb.path(path), bytes).expect("write");
    }
}

/// One command that edits the manifest, as run against the sandbox.
struct Edit {
    name: &'static str,
    args: Vec<String>,
    /// Its exit code when run again over what it wrote (adopt refuses a move already made).
    again_code: i32,
    /// Killed runs; a quarter at any moment of a whole run, the rest aimed at the write.
    kills: usize,
}

impl Edit {
    /// The command; its stdout (verify --fix prints a diff) is dropped unless `capture`, so
    /// that a run nobody reads never blocks on a full pipe.
    fn command(&self, sb: &Sandbox, capture: bool) -> Command {
        let mut cmd = Command::new(XTASK);
        cmd.arg(self.name)
            .arg("--manifest")
            .arg(sb.manifest())
            .args(&self.args)
            .current_dir(sb.root())
            .stdout(if capture {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        cmd
    }

    /// Its exit code and what it printed (stdout, then stderr).
    fn run(&self, sb: &Sandbox) -> (i32, String) {
        let out = self.command(sb, true).output().expect("run");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), printed)
    }

    /// Runs it over `old` (the sandbox's files made so first), timing the whole run and the
    /// write: from the first file staged beside the manifest to the journal's removal (or,
    /// with no journal, the end of the run: only the summary is printed after the write).
    fn timed(&self, sb: &Sandbox, old: &Files) -> (Duration, Duration) {
        restore(sb, old);
        let mut events = DirEvents::watch(sb.root());
        let started = Instant::now();
        let mut child = self.command(sb, false).spawn().expect("spawn");
        let began = events.wait_for(&mut child, started + LONGEST, starts_the_write);
        let write_began = Instant::now();
        events.wait_for(&mut child, started + LONGEST, |e, n| {
            e == Event::Removed && n == JOURNAL
        });
        let write = write_began.elapsed();
        let out = child.wait_with_output().expect("wait");
        let took = started.elapsed();
        assert!(
            out.status.success() && began.is_some(),
            "{} on the old tree (a file staged beside the manifest: {began:?}): {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        (took, write)
    }
}

/// The longest an edit may take on a loaded machine.
const LONGEST: Duration = Duration::from_secs(300);

/// How many kills landed where; every kill must lose nothing (any loss fails the test), so
/// there is no count of losses.
#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    /// Killed before anything was staged.
    before: usize,
    /// Killed while staging its journal: every file old, the staged journal left.
    staging: usize,
    /// Killed with the journal written, not committed: some files new, or none yet, or all.
    journaled: usize,
    /// Killed after the commit (the journal, if left, says committed).
    after: usize,
}

impl Tally {
    fn inside(&self) -> usize {
        self.staging + self.journaled
    }
}

/// Kills `edit` at random moments over `sb` (whose files are the old tree); any file torn or
/// lost, or a tree the next command leaves other than whole, fails the test. Most kills are
/// aimed: they wait for the write's first file (its journal, staged) to appear, then kill within
/// the time a write takes (the medians of three runs), since the write is a few milliseconds
/// of a run that takes a hundred times as long.
fn kill_repeatedly(sb: &Sandbox, edit: &Edit, rng: &mut Rng) -> Tally {
    let old = whole(&sb.snapshot());
    let (mut runs, mut writes): (Vec<Duration>, Vec<Duration>) =
        (0..3).map(|_| edit.timed(sb, &old)).unzip();
    runs.sort();
    writes.sort();
    let (took, write) = (runs[1], writes[1]);
    let new = whole(&sb.snapshot());
    let differ: Vec<&String> = new.keys().filter(|p| old.get(*p) != new.get(*p)).collect();
    assert!(
        differ.contains(&&"api.toml".to_owned()) && differ.len() > 1,
        "{} must change the manifest and an output: {differ:?}",
        edit.name
    );
    let (code, out) = edit.run(sb);
    assert_eq!(
        code, edit.again_code,
        "{} over its own write: {out}",
        edit.name
    );
    assert!(
        whole(&sb.snapshot()) == new,
        "{} over its own write changed files",
        edit.name
    );

    let mut tally = Tally::default();
    let inside_wanted = edit.kills / 2;
    while tally.kills < edit.kills
        || (tally.inside() < inside_wanted && tally.kills < 3 * edit.kills)
    {
        tally.kills += 1;
        let run = tally.kills;
        restore(sb, &old);
        let mut events = DirEvents::watch(sb.root());
        let started = Instant::now();
        let mut child = edit.command(sb, false).spawn().expect("spawn");
        let aimed = run % 4 != 1;
        let when = if aimed {
            let began = events.wait_for(&mut child, started + LONGEST, starts_the_write);
            assert!(began.is_some(), "{} run {run}: no write began", edit.name);
            let delay = Duration::from_micros(rng.below(write.as_micros() as u64));
            std::thread::sleep(delay);
            format!("{delay:?} after its write began")
        } else {
            let delay = Duration::from_micros(rng.below(took.as_micros() as u64 * 6 / 5));
            std::thread::sleep(delay);
            format!("{delay:?} after it started")
        };
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");

        let killed = sb.snapshot();
        let files = whole(&killed);
        let mut fresh = 0;
        let paths: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for path in paths {
            let (now, was, will) = (files.get(path), old.get(path), new.get(path));
            if now == will && was != will {
                fresh += 1;
            } else if now != was {
                panic!("{} run {run} (killed {when}): {path} is torn", edit.name);
            }
        }
        // A committed journal is finished forward (its write stands), another one undone.
        let journal = killed
            .get(JOURNAL)
            .is_some_and(|j| !String::from_utf8_lossy(j).contains("\"committed\":true"));
        let temps = killed.keys().filter(|p| is_temp(p)).count();
        match (journal, fresh, temps) {
            (true, _, _) => tally.journaled += 1,
            (false, 0, 0) => tally.before += 1,
            (false, 0, _) => tally.staging += 1,
            (false, n, _) if n == differ.len() => tally.after += 1,
            (false, n, _) => panic!(
                "{} run {run} (killed {when}): {n} of {} files new and no journal to undo them",
                edit.name,
                differ.len()
            ),
        }

        // The next command: every other run `regen --check`, else the edit again.
        let committed = !journal && fresh == differ.len();
        let (want, what) = if run % 2 == 0 {
            let (code, out) = sb.regen(&["--check"]);
            assert_eq!(code, 0, "{} run {run}: regen --check: {out}", edit.name);
            (if committed { &new } else { &old }, "regen --check")
        } else {
            let (code, out) = edit.run(sb);
            let want = if committed { edit.again_code } else { 0 };
            assert_eq!(
                code, want,
                "{} run {run} again (killed {when}): {out}",
                edit.name
            );
            (&new, edit.name)
        };
        let after = sb.snapshot();
        let left: Vec<&String> = after.keys().filter(|p| is_temp(p)).collect();
        assert!(
            left.is_empty(),
            "{} run {run}: {left:?} survive {what}",
            edit.name
        );
        if after != *want {
            let wrong: Vec<&String> = want
                .keys()
                .filter(|p| after.get(*p) != want.get(*p))
                .collect();
            panic!(
                "{} run {run} (killed {when}): after {what}, not the tree wanted: {wrong:?}",
                edit.name
            );
        }
    }
    eprintln!(
        "{}: a run takes {took:?}, its write {write:?}; {} kills, {} inside the write, 0 lost: {tally:?}",
        edit.name,
        tally.kills,
        tally.inside()
    );
    assert!(
        tally.inside() >= inside_wanted,
        "{}: too few kills landed inside the write: {tally:?}",
        edit.name
    );
    tally
}

#[test]
fn sigkill_during_verify_fix_or_bump_loses_nothing() {
    let mut rng = Rng::from_env();
    let modules = tempfile::tempdir().expect("tempdir");
    let module = |version: &str| {
        let dir = modules.path().join(version);
        std::fs::create_dir_all(&dir).expect("mkdir");
        module_of(version, &dir).display().to_string()
    };
    let fix = Edit {
        name: "verify",
        args: vec!["--fix".into(), "--module".into(), module("0.3.13.post1")],
        again_code: 0,
        kills: 16,
    };
    kill_repeatedly(&Sandbox::new(), &fix, &mut rng);
    let bump = Edit {
        name: "bump",
        args: vec![
            "--commit".into(),
            "6041a609a8c3af35e778f70db344f145c2914980".into(),
            "--module".into(),
            module("0.3.12.post1"),
        ],
        again_code: 0,
        kills: 16,
    };
    kill_repeatedly(&Sandbox::new(), &bump, &mut rng);
}

#[test]
fn sigkill_during_adopt_loses_nothing() {
    let mut rng = Rng::from_env();
    let wheels: Vec<PathBuf> = vec![
        wheel("0.3.11.post1"),
        wheel("0.3.12.post1"),
        wheel("0.3.13.post1"),
        cuda13_wheel("0.3.11.post1"),
        cuda13_wheel("0.3.12.post1"),
        cuda13_0_3_14_wheel(),
    ];
    let index = SimpleIndex::serve(&wheels);
    let cache = tempfile::tempdir().expect("tempdir");
    let cache_arg = cache.path().display().to_string();
    let libs = cuda13_libs();
    // The pinned module is asked of the loopback server too (it is not there): no test
    // reaches the network beyond the index.
    let common = [
        "--watch-cache",
        &cache_arg,
        "--lib-dir",
        &libs,
        "--index-url",
        &index.url,
        "--raw-base-url",
        &index.url,
    ];
    let sb = Sandbox::new();
    // One online run fills the cache (listings, wheels, verdicts); adopt reads it offline.
    let out = Command::new(XTASK)
        .args(["watch", "--manifest"])
        .arg(sb.manifest())
        .args(common)
        .output()
        .expect("watch");
    // Exit 1: a transition is possible (the move adopt makes).
    assert_eq!(
        out.status.code(),
        Some(1),
        "watch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut args: Vec<String> = common.iter().map(|s| s.to_string()).collect();
    args.extend(["--offline", "--image", "cuda", "--strategy", "overlay"].map(String::from));
    let adopt = Edit {
        name: "adopt",
        args,
        again_code: 1,
        kills: 12,
    };
    kill_repeatedly(&sb, &adopt, &mut rng);
}
