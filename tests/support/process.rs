//! Running a helper program (a docker build, a script) with a time limit and one combined log.

use std::io::{Read, Seek};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with stdout and stderr in one log, stdin empty, killed (with everything it
/// started) after `timeout`: (exit status or None on timeout, the log).
pub fn run_logged(
    mut cmd: Command,
    timeout: Duration,
) -> Result<(Option<ExitStatus>, String), String> {
    let mut out = tempfile::tempfile().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null());
    cmd.stdout(out.try_clone().map_err(|e| e.to_string())?);
    cmd.stderr(out.try_clone().map_err(|e| e.to_string())?);
    // Its own process group, so a timeout ends what it started too, not just the program.
    cmd.process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {:?}: {e}", cmd.get_program()))?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // The group id is the child's pid; the shell's builtin kill needs no procps.
                let _ = Command::new("/bin/sh")
                    .args([
                        "-c",
                        "kill -s KILL -- \"-$1\"",
                        "sh",
                        &child.id().to_string(),
                    ])
                    .status();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut text = String::new();
    out.rewind()
        .and_then(|_| out.read_to_string(&mut text))
        .map_err(|e| e.to_string())?;
    Ok((status, text))
}
