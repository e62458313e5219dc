//! The built `xtask` binary and how the tests run it. The sandbox, the wheels and the file
//! server come from the shared test kit.

#![allow(dead_code, unused_imports)] // each test binary uses a different subset

pub mod cores;

pub use mooncake_sos_testkit::{Files, Sandbox, repo_root};
use std::path::Path;
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

/// `.NAME.regen-PID.tmp` (the staging file regen renames over NAME) or
/// `.NAME.regen-PID.old.tmp` (the backup link it undoes a failed regen from).
pub fn is_regen_temp(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .map(|n| n.strip_suffix(".old").unwrap_or(n))
        .and_then(|n| n.rsplit_once(".regen-"))
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}
