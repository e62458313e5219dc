//! A step of a longer job (make a venv, install, import a core; list or download from the index)
//! under the job's one deadline, through [`run`](super::run).

use super::{Error, Limits, run};
use std::process::{Command, ExitStatus};
use std::time::Instant;

/// A finished step: its exit status and what it printed.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// `failed (<status>): <the last lines of stderr>`, for an error message.
    pub fn failure(&self, lines: usize) -> String {
        format!("failed ({}): {}", self.status, tail(&self.stderr, lines))
    }
}

/// Why a step has no result.
pub enum StepError {
    /// Killed at the deadline.
    TimedOut,
    /// Could not be started or waited for.
    Failed(String),
}

impl StepError {
    /// In words, for a step that had `timeout` to answer.
    pub fn describe(self, timeout: std::time::Duration) -> String {
        match self {
            StepError::TimedOut => format!("no answer within {} s", timeout.as_secs()),
            StepError::Failed(m) => m,
        }
    }
}

/// Runs `command` until it exits or `deadline` passes.
pub fn bounded(command: Command, deadline: Instant) -> Result<Finished, StepError> {
    bounded_with(command, Limits::until(deadline))
}

/// Runs `command` with `input` on its stdin until it exits or `deadline` passes.
pub fn bounded_fed(
    command: Command,
    deadline: Instant,
    input: Vec<u8>,
) -> Result<Finished, StepError> {
    let mut limits = Limits::until(deadline);
    limits.input = Some(input);
    bounded_with(command, limits)
}

fn bounded_with(mut command: Command, limits: Limits) -> Result<Finished, StepError> {
    match run(&mut command, &limits) {
        Ok(done) => Ok(Finished {
            status: done.status,
            stdout: done.stdout_text(),
            stderr: done.stderr_text(),
        }),
        Err(Error::TimedOut(_)) => Err(StepError::TimedOut),
        Err(Error::Spawn(e)) => Err(StepError::Failed(format!(
            "cannot run {:?}: {e}",
            command.get_program()
        ))),
        Err(Error::Wait(e)) => Err(StepError::Failed(e.to_string())),
    }
}

/// The last non-empty lines of a step's output, for error messages.
pub fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}
