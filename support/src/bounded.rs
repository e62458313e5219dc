//! The project's one way to run a subprocess (pip, python, docker, an interpreter the user
//! names): bounded in time and in what is kept of its output, and never outliving the command
//! that started it.
//!
//! The child leads its own process group. The group is killed at the deadline, on every error
//! path, and once the child is done (what it left running goes too). If this process dies
//! without a chance to clean up (SIGKILL), a watcher forked into the group before the exec
//! sees its lifeline pipe close and kills the group; the child itself also has
//! `PR_SET_PDEATHSIG`.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod scratch;
pub mod step;
pub use scratch::{scratch, sweep_stale};

/// What is kept of each of stdout and stderr unless asked otherwise; the rest is read and
/// dropped.
pub const MAX_CAPTURE: usize = 4 << 20;

/// A finished run: its exit status and (the first [`Limits::max_capture`] bytes of) what it
/// printed.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// `failed (<status>): <the last lines of stderr>`, for an error message.
    pub fn failure(&self, lines: usize) -> String {
        format!(
            "failed ({}): {}",
            self.status,
            step::tail(&self.stderr_text(), lines)
        )
    }
}

/// Why a run has no result.
#[derive(Debug)]
pub enum Error {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It was killed at the deadline, after this long.
    TimedOut(Duration),
    /// It could not be waited for (it was killed).
    Wait(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Spawn(e) => write!(f, "cannot run it: {e}"),
            Self::TimedOut(t) => write!(f, "no answer after {t:.0?}; stopped it"),
            Self::Wait(e) => write!(f, "cannot wait for it: {e}"),
        }
    }
}

/// Bounds on one run.
#[derive(Clone, Debug)]
pub struct Limits {
    pub deadline: Instant,
    pub max_capture: usize,
    /// Run (by the watcher, with `execvp`) after the group is killed because this process
    /// died: for what the group kill cannot reach (a container behind a `docker run`).
    pub on_orphan: Option<Vec<String>>,
    /// Written to the child's stdin, which is then closed; `None`: stdin is /dev/null.
    pub input: Option<Vec<u8>>,
}

impl Limits {
    pub fn until(deadline: Instant) -> Limits {
        Limits {
            deadline,
            max_capture: MAX_CAPTURE,
            on_orphan: None,
            input: None,
        }
    }
    pub fn within(timeout: Duration) -> Limits {
        Limits::until(Instant::now() + timeout)
    }
}

/// Runs `cmd` (stdin from `limits.input` or /dev/null, stdout and stderr captured) within
/// `limits`.
pub fn run(cmd: &mut Command, limits: &Limits) -> Result<Output, Error> {
    let started = Instant::now();
    let (lifeline_read, lifeline_write) = lifeline().map_err(Error::Spawn)?;
    let watcher = Watcher::new(lifeline_read.as_raw_fd(), limits.on_orphan.as_deref())
        .map_err(Error::Spawn)?;
    let parent = std::process::id() as libc::pid_t;
    let stdin = match limits.input {
        Some(_) => Stdio::piped(),
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (prctl, getppid, fork, close, read, kill, execvp, _exit) on memory made
    // before the fork.
    unsafe {
        cmd.pre_exec(move || watcher.arm(parent));
    }
    let mut child = cmd.spawn().map_err(Error::Spawn)?;
    drop(lifeline_read);
    let group = child.id() as libc::pid_t;
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), limits.input.clone()) {
        // A child that never reads its input must not block this thread: written aside.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let out = drain(child.stdout.take(), limits.max_capture);
    let err = drain(child.stderr.take(), limits.max_capture);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= limits.deadline => {
                break Err(Error::TimedOut(started.elapsed()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(Error::Wait(e)),
        }
    };
    // On every path: the group goes (while the leader is unreaped or just reaped, its id names
    // no one else's group), then the lifeline closes and the watcher exits.
    kill_group(group);
    let _ = child.wait();
    let _ = std::fs::File::from(lifeline_write).write_all(&[DONE]);
    let status = status?;
    // A process that left the group may still hold a pipe open: not waited on for long.
    let collect =
        |rx: mpsc::Receiver<Vec<u8>>| rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Ok(Output {
        status,
        stdout: collect(out),
        stderr: collect(err),
    })
}

/// What the parent writes on the lifeline once it has cleaned up itself.
const DONE: u8 = b'.';

/// Reads `stream` to its end on a thread, keeping at most `cap` bytes.
fn drain<R: Read + Send + 'static>(stream: Option<R>, cap: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(stream) = stream {
            let mut stream = stream.take(cap as u64);
            let _ = stream.read_to_end(&mut kept);
            let _ = std::io::copy(&mut stream.into_inner(), &mut std::io::sink());
        }
        let _ = tx.send(kept);
    });
    rx
}

/// SIGKILL to the process group led by `group`.
fn kill_group(group: libc::pid_t) {
    // SAFETY: kill(2) on a group this process created; an empty group is ESRCH.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// A pipe whose write end only this process holds (close-on-exec on both ends): it closes
/// when this process dies, however it dies.
fn lifeline() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1; 2];
    // SAFETY: pipe2 fills the two descriptors, owned from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What the child does before its exec, prepared (allocated) before the fork.
struct Watcher {
    lifeline: RawFd,
    /// `on_orphan` as C strings, and the NULL-terminated pointer array over them.
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
}

// SAFETY: the pointers point into `_args`, owned by the same value and never changed.
unsafe impl Send for Watcher {}
unsafe impl Sync for Watcher {}

impl Watcher {
    fn new(lifeline: RawFd, on_orphan: Option<&[String]>) -> std::io::Result<Watcher> {
        let args = on_orphan
            .unwrap_or_default()
            .iter()
            .map(|a| CString::new(a.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        Ok(Watcher {
            lifeline,
            _args: args,
            argv,
        })
    }

    /// In the child, after `setpgid`: die with the parent, and fork the group's watcher.
    fn arm(&self, parent: libc::pid_t) -> std::io::Result<()> {
        // SAFETY: async-signal-safe calls only, on memory allocated before the fork.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != parent {
                // The parent died before the prctl took effect.
                libc::_exit(1);
            }
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => self.watch(),
                _ => Ok(()),
            }
        }
    }

    /// The watcher: leaves the group, holds nothing but the lifeline's read end, and waits.
    /// A byte on it is the parent saying it is done (it kills the group itself); end of file
    /// without one is the parent's death: the group is killed, then `on_orphan` runs here.
    unsafe fn watch(&self) -> ! {
        // SAFETY: async-signal-safe calls only.
        unsafe {
            let group = libc::getpgid(0);
            libc::setpgid(0, 0);
            for fd in 0..1024 {
                if fd != self.lifeline {
                    libc::close(fd);
                }
            }
            let mut byte = 0u8;
            let read = loop {
                let n = libc::read(self.lifeline, (&raw mut byte).cast(), 1);
                if n >= 0 || *libc::__errno_location() != libc::EINTR {
                    break n;
                }
            };
            if read != 1 {
                libc::kill(-group, libc::SIGKILL);
                if self.argv.len() > 1 {
                    libc::execvp(self.argv[0], self.argv.as_ptr());
                }
            }
            libc::_exit(0)
        }
    }
}

#[cfg(test)]
mod tests;
