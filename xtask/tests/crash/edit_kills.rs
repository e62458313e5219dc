//! The commands that edit api.toml (`verify --fix`, `bump`, `adopt`) killed with SIGKILL at
//! random moments: the manifest and the outputs are one write. After each kill every file is
//! whole (its old or its new bytes); the next command, whichever it is, starts by undoing a
//! write that was stopped half-way, so `regen --check` finds exactly the old tree (or the
//! new one, when the kill came after the commit), current, and the command run again writes
//! exactly the new tree; no temporary and no journal survives either.

use super::{KillWindow, Rng};
use crate::common::cores::{cuda13_0_3_14_wheel, cuda13_libs, cuda13_wheel};
use crate::common::{Files, RegenIn, Sandbox, XTASK, is_regen_temp};
use mooncake_sos_testkit::{SimpleIndex, module_of, wheel};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

const KILLS: usize = 30;
/// Kills that must land inside the write (staging, or between the journal and its removal);
/// more runs are made (up to `MAX_KILLS`) until they do.
const INSIDE_WANTED: usize = 6;
const MAX_KILLS: usize = 150;

/// The journal a write keeps beside the manifest until it commits.
const JOURNAL: &str = ".api.toml.regen-journal";

fn is_temp(path: &str) -> bool {
    is_regen_temp(path) || path == JOURNAL
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
}

impl Edit {
    fn command(&self, sb: &Sandbox) -> Command {
        let mut cmd = Command::new(XTASK);
        cmd.arg(self.name)
            .arg("--manifest")
            .arg(sb.manifest())
            .args(&self.args)
            .current_dir(sb.root())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }

    fn run(&self, sb: &Sandbox) -> (i32, String) {
        let out = self.command(sb).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), err)
    }
}

#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    /// Killed before anything was staged.
    before: usize,
    /// Killed while staging: every file old, temporaries left.
    staging: usize,
    /// Killed with the journal written: some files new, or none yet, or all.
    journaled: usize,
    /// Killed after the commit.
    after: usize,
}

impl Tally {
    fn inside(&self) -> usize {
        self.staging + self.journaled
    }
}

/// Kills `edit` at random moments over `sb` (whose files are the old tree); any file torn or
/// lost, or a tree the next command leaves other than whole, fails the test.
fn kill_repeatedly(sb: &Sandbox, edit: &Edit, rng: &mut Rng) -> Tally {
    let old = whole(&sb.snapshot());
    let started = Instant::now();
    let (code, err) = edit.run(sb);
    assert_eq!(code, 0, "{} on the old tree: {err}", edit.name);
    let took = started.elapsed();
    let new = whole(&sb.snapshot());
    let differ: Vec<&String> = new.keys().filter(|p| old.get(*p) != new.get(*p)).collect();
    assert!(
        differ.contains(&&"api.toml".to_owned()) && differ.len() > 1,
        "{} must change the manifest and an output: {differ:?}",
        edit.name
    );
    let mut window = KillWindow::new(took);
    let mut tally = Tally::default();
    while tally.kills < KILLS || (tally.inside() < INSIDE_WANTED && tally.kills < MAX_KILLS) {
        tally.kills += 1;
        let run = tally.kills;
        restore(sb, &old);
        let delay = window.next_delay(rng);
        let mut child = edit.command(sb).spawn().expect("spawn");
        std::thread::sleep(delay);
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
                panic!(
                    "{} run {run} (killed after {delay:?}): {path} is torn",
                    edit.name
                );
            }
        }
        // A committed journal is finished forward (its write stands), another one undone.
        let journal = killed
            .get(JOURNAL)
            .is_some_and(|j| !String::from_utf8_lossy(j).contains("\"committed\":true"));
        let temps = killed.keys().filter(|p| is_temp(p)).count();
        window.learn(delay, fresh, differ.len());
        match (journal, fresh, temps) {
            (true, _, _) => tally.journaled += 1,
            (false, 0, 0) => tally.before += 1,
            (false, 0, _) => tally.staging += 1,
            (false, n, _) if n == differ.len() => tally.after += 1,
            (false, n, _) => panic!(
                "{} run {run}: {n} of {} files new and no journal to undo them",
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
            let (code, err) = edit.run(sb);
            assert_eq!(code, 0, "{} run {run} again: {err}", edit.name);
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
                "{} run {run}: after {what}, not the tree wanted: {wrong:?}",
                edit.name
            );
        }
    }
    eprintln!("{}: a run takes {took:?}: {tally:?}", edit.name);
    assert!(
        tally.inside() >= INSIDE_WANTED,
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
    let common = ["--watch-cache", &cache_arg, "--lib-dir", &libs];
    let sb = Sandbox::new();
    let mut watch = Command::new(XTASK);
    watch
        .args(["watch", "--manifest"])
        .arg(sb.manifest())
        .args(common)
        .args(["--index-url", &index.url]);
    let out = watch.output().expect("watch");
    assert!(
        out.status.code().is_some(),
        "watch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut args: Vec<String> = common.iter().map(|s| s.to_string()).collect();
    args.extend(
        [
            "--index-url",
            &index.url,
            "--image",
            "cuda",
            "--strategy",
            "overlay",
        ]
        .map(String::from),
    );
    let adopt = Edit {
        name: "adopt",
        args,
    };
    kill_repeatedly(&sb, &adopt, &mut rng);
}
