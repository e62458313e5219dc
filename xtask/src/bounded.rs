//! Running a subprocess the user names (`verify --python PYTHON`) with a time bound and a
//! bound on what is kept of its output: an interpreter that hangs on import, or prints
//! without end, is stopped and reported, never waited on forever.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The time bound unless `MOONCAKE_SOS_PYTHON_TIMEOUT_SECS` says otherwise; the check takes
/// 1-3 s here.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// What is kept of each of stdout and stderr; the rest is read and dropped.
pub const MAX_CAPTURE: usize = 4 << 20;

pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

pub enum Error {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It was stopped after this long.
    Timeout(Duration),
    Wait(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Spawn(e) => write!(f, "cannot run it: {e}"),
            Self::Timeout(t) => write!(
                f,
                "no answer after {t:.0?}; stopped it (MOONCAKE_SOS_PYTHON_TIMEOUT_SECS sets the bound)"
            ),
            Self::Wait(e) => write!(f, "cannot wait for it: {e}"),
        }
    }
}

pub fn timeout() -> Duration {
    std::env::var("MOONCAKE_SOS_PYTHON_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// Like `Command::output`, but kills the command's whole process group once `limit` has
/// passed (an error saying so), and keeps at most [`MAX_CAPTURE`] bytes of each stream.
pub fn output(cmd: &mut Command, limit: Duration) -> Result<Output, Error> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that what it starts is stopped with it.
        .process_group(0)
        .spawn()
        .map_err(Error::Spawn)?;
    let group = child.id() as i32;
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(stream) = stream {
                let mut stream = stream.take(MAX_CAPTURE as u64);
                let _ = stream.read_to_end(&mut kept);
                let _ = std::io::copy(&mut stream.into_inner(), &mut std::io::sink());
            }
            let _ = tx.send(kept);
        });
        rx
    };
    let out = drain(child.stdout.take().map(|s| Box::new(s) as _));
    let err = drain(child.stderr.take().map(|s| Box::new(s) as _));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                kill_group(group);
                let _ = child.wait();
                return Err(Error::Timeout(limit));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Error::Wait(e)),
        }
    };
    // What it started may still hold the pipes open: stop them too, then collect (a
    // process that left the group and holds a pipe is not waited on for long).
    kill_group(group);
    let collect =
        |rx: mpsc::Receiver<Vec<u8>>| rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Ok(Output {
        status,
        stdout: collect(out),
        stderr: collect(err),
    })
}

fn kill_group(group: i32) {
    // SAFETY: kill(2) on the process group this function created; no memory is involved.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}
