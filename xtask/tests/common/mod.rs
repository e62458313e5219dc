//! The built `xtask` binary and how the tests run it. The sandbox, the wheels and the file
//! server come from the shared test kit.

#![allow(dead_code, unused_imports)] // each test binary uses a different subset

pub mod cores;
pub mod measured;

pub use mooncake_sos_testkit::{Files, Sandbox, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// A finished run of `xtask`.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout's last line: the command's summary.
    pub fn last_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or_default()
    }

    /// Exit 1, the summary `COMMAND: refused: ...`.
    pub fn assert_refused(&self, command: &str) {
        assert_eq!(self.code, Some(1), "{self:?}");
        let summary = format!("{command}: refused: ");
        assert!(self.last_line().starts_with(&summary), "{self:?}");
    }

    pub fn assert_stdout_has(&self, text: &str) {
        assert!(self.stdout.contains(text), "{self:?}");
    }

    pub fn assert_stderr_has(&self, text: &str) {
        assert!(self.stderr.contains(text), "{self:?}");
    }

    /// Asserts `holds(stdout)`, showing the whole run when it does not.
    pub fn assert_stdout(&self, holds: impl FnOnce(&str) -> bool) {
        assert!(holds(&self.stdout), "{self:?}");
    }

    /// Asserts `holds(stderr)`, showing the whole run when it does not.
    pub fn assert_stderr(&self, holds: impl FnOnce(&str) -> bool) {
        assert!(holds(&self.stderr), "{self:?}");
    }

    /// stdout's lines, without the closing summary line.
    pub fn report(&self) -> Vec<&str> {
        let mut lines: Vec<&str> = self.stdout.lines().collect();
        lines.pop();
        lines
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `xtask ARGS` in the repository root; `env` adds variables.
pub fn xtask(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(XTASK);
    cmd.args(args).current_dir(repo_root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("run xtask"))
}

/// `xtask ARGS WHEEL...` on the wheels of those releases (testkit's `wheel`), in that order.
pub fn xtask_on_releases(args: &[&str], versions: &[&str]) -> Run {
    let wheels: Vec<String> = versions
        .iter()
        .map(|v| mooncake_sos_testkit::wheel(v).display().to_string())
        .collect();
    let mut all = args.to_vec();
    all.extend(wheels.iter().map(String::as_str));
    xtask(&all, &[])
}

/// `xtask COMMAND --manifest <sandbox>/api.toml ARGS...`.
pub fn xtask_in(sandbox: &Sandbox, command_and_args: &[&str]) -> Run {
    let manifest = sandbox.manifest();
    let (command, args) = command_and_args.split_first().unwrap();
    let mut all = vec![*command, "--manifest", manifest.to_str().unwrap()];
    all.extend(args);
    xtask(&all, &[])
}

/// A release's module (testkit's `module_of`) in a temp dir of its own, which must outlive
/// the path: (the dir, the path).
pub fn released_module(version: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = mooncake_sos_testkit::module_of(version, dir.path());
    (dir, path.display().to_string())
}

/// Writes `dir/NAME`; returns its path.
pub fn write_file(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// Polls `probe` until it gives a value; fails naming `what` after `secs` seconds. The
/// deadline is for a loaded machine: the wait ends as soon as the condition holds.
pub fn wait_for<T>(what: &str, secs: u64, mut probe: impl FnMut() -> Option<T>) -> T {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(std::time::Instant::now() < until, "{what} after {secs} s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The lines of `text` that `keep` keeps.
pub fn lines_where(text: &str, keep: impl Fn(&str) -> bool) -> Vec<&str> {
    text.lines().filter(|l| keep(l)).collect()
}

/// A file alone in a temp dir of its own (which must outlive the path): (the dir, the path).
pub fn lone_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), name, contents);
    (dir, path.display().to_string())
}

/// 1-based line of the first line containing `needle`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in the module"))
        + 1
}

/// api.toml's recorded drop-condition verdict, and a stale one.
pub const FIRST_RELEASE: &str = "first_release = \"0.3.12.post1\"";
pub const STALE_FIRST_RELEASE: &str = "first_release = \"0.3.13.post1\"";

/// A sandbox whose api.toml records 0.3.13.post1 as the first release (outputs current),
/// so `matrix --record` over the real wheels has 0.3.12.post1 to write.
pub fn stale_verdict() -> Sandbox {
    let sb = Sandbox::new();
    sb.edit("api.toml", FIRST_RELEASE, STALE_FIRST_RELEASE);
    let regen = sb.run_regen(&[]);
    assert_eq!(regen.code, Some(0), "{regen:?}");
    sb
}

/// A sandbox a command must leave as it found it.
pub trait NothingWritten {
    /// Runs `command`, checks it exited `code`, then that no file of the sandbox changed.
    fn run_writing_nothing(&self, code: i32, command: impl FnOnce() -> Run) -> Run;
}

impl NothingWritten for Sandbox {
    fn run_writing_nothing(&self, code: i32, command: impl FnOnce() -> Run) -> Run {
        let before = self.snapshot();
        let run = command();
        assert_eq!(run.code, Some(code), "{run:?}");
        let after = self.snapshot();
        let changed: std::collections::BTreeSet<&String> = before
            .keys()
            .chain(after.keys())
            .filter(|p| before.get(*p) != after.get(*p))
            .collect();
        assert!(changed.is_empty(), "wrote {changed:?}: {run:?}");
        run
    }
}

/// What the regen tests do with a sandbox.
pub trait RegenIn {
    /// `xtask regen --manifest <sandbox>/api.toml ARGS`, not yet started.
    fn regen_command(&self, args: &[&str]) -> Command {
        self.regen_command_by(Path::new(XTASK), args)
    }
    /// The same with another copy of the xtask binary.
    fn regen_command_by(&self, xtask: &Path, args: &[&str]) -> Command;
    /// Runs regen to the end.
    fn run_regen(&self, args: &[&str]) -> Run {
        Run::from(self.regen_command(args).output().expect("run xtask"))
    }
    /// Runs regen to the end: (exit code, stdout + stderr).
    fn regen(&self, args: &[&str]) -> (i32, String) {
        let run = self.run_regen(args);
        (
            run.code.unwrap_or(-1),
            format!("{}{}", run.stdout, run.stderr),
        )
    }
}

impl RegenIn for Sandbox {
    fn regen_command_by(&self, xtask: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(xtask);
        cmd.arg("regen")
            .arg("--manifest")
            .arg(self.manifest())
            .args(args)
            .current_dir(self.root());
        cmd
    }
}

/// `.NAME.regen-PID.tmp` (the staging file regen renames over NAME),
/// `.NAME.regen-PID.old.tmp` (the backup link it undoes a failed regen from) or
/// `.NAME.regen-PID.journal.tmp` (the journal of a write, staged).
pub fn is_regen_temp(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .map(|n| {
            n.strip_suffix(".old")
                .or_else(|| n.strip_suffix(".journal"))
                .unwrap_or(n)
        })
        .and_then(|n| n.rsplit_once(".regen-"))
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}
