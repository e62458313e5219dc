//! Runs one step of reading a core (make a venv, install, introspect) with a deadline. The
//! step runs in its own process group, so a timeout kills it and everything it started.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A finished step: its exit status and what it printed.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Why a step has no result.
pub enum StepError {
    /// Killed at the deadline.
    TimedOut,
    /// Could not be started or waited for.
    Failed(String),
}

/// Runs `command` until it exits or `deadline` passes; output goes through files in `dir`
/// named after `tag` (pipes would need a reader thread each to never block the child).
pub fn bounded(
    mut command: Command,
    dir: &Path,
    tag: &str,
    deadline: Instant,
) -> Result<Finished, StepError> {
    let out_path = dir.join(format!("{tag}.out"));
    let err_path = dir.join(format!("{tag}.err"));
    let file = |p: &Path| {
        std::fs::File::create(p).map_err(|e| StepError::Failed(format!("{}: {e}", p.display())))
    };
    command
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| StepError::Failed(format!("cannot run {:?}: {e}", command.get_program())))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(StepError::TimedOut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(StepError::Failed(e.to_string())),
        }
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Ok(Finished {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
    })
}

/// SIGKILL to the process group led by `pid` (made with `process_group(0)`); called only while
/// the leader is unreaped, so the group id cannot name anyone else's processes.
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) on a group this process created; an already empty group is ESRCH.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// The last non-empty lines of a step's output, for error messages.
pub fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}
