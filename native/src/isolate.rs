//! Where a wheel's code runs (a core's import, watch's smoke): in a sandbox that holds only
//! what that code needs, or, only when the user says so (`--unisolated`), on the host.
//!
//! The sandbox is bubblewrap's (Debian's `bubblewrap`; a well-kept tool rather than our own
//! namespace code): a fresh root holding, read-only, the system's `/usr`, the interpreter's
//! prefix, the scratch directory (the throwaway venv with the wheel, the scripts) and the
//! library and module directories the command names; an empty, size-bounded /tmp and
//! /dev/shm; a minimal /dev and /proc; a network namespace with only loopback; no
//! capabilities; a clean environment; a bound on its address space. Nothing else of the
//! host: no /etc, /run, /var, /home, /root, host /tmp or sockets. The runner
//! ([`mooncake_sos_support::bounded`]) bounds its time.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Once, OnceLock};
use std::time::Duration;

/// How the wheel's code runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// In bubblewrap's sandbox.
    Sandbox,
    /// On the host: asked for with `--unisolated`.
    Unisolated,
}

/// The flag that allows an unisolated run.
pub const UNISOLATED_FLAG: &str = "--unisolated";

/// Bound on the sandboxed code's address space: 16 GiB, or the hard limit already set if lower.
const MAX_ADDRESS_SPACE: u64 = 16 << 30;

/// Size of the sandbox's /tmp and of its /dev/shm, each.
const TMPFS_BYTES: u64 = 1 << 30;

/// The host directories that stand for the system (libc, the loader, the tools a smoke
/// starts): the merged-/usr links beside `/usr`, kept as the links they are.
const SYSTEM_LINKS: [&str; 6] = ["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"];

impl Isolation {
    /// The sandbox unless `unisolated`; whether it works here is found at the first use.
    pub fn choose(unisolated: bool) -> Isolation {
        if unisolated {
            Isolation::Unisolated
        } else {
            Isolation::Sandbox
        }
    }

    /// Whether this isolation works here (probed once per process): an error naming why and
    /// the flag that allows an unisolated run.
    fn available(&self) -> Result<(), String> {
        static SANDBOX: OnceLock<Result<(), String>> = OnceLock::new();
        match self {
            Isolation::Unisolated => Ok(()),
            Isolation::Sandbox => SANDBOX.get_or_init(probe).clone(),
        }
    }

    /// What the output says ran.
    pub fn describe(&self) -> &'static str {
        match self {
            Isolation::Sandbox => {
                "in a bubblewrap sandbox (read-only interpreter, venv and libraries, empty \
                 /tmp, loopback only, no capabilities, clean environment, nothing else of \
                 the host)"
            }
            Isolation::Unisolated => "on this host, unisolated (--unisolated)",
        }
    }

    /// `command` to run the wheel's code, with `scratch` (the venv, the scripts) visible
    /// read-only; says (once per process, on stderr) how the wheels' code runs. An error when
    /// the isolation does not work here.
    pub fn command(&self, command: &Command, scratch: &Path) -> Result<Command, String> {
        self.available()?;
        static SAID: Once = Once::new();
        SAID.call_once(|| eprintln!("the wheels' code runs {}", self.describe()));
        Ok(self.wrap(command, scratch))
    }

    fn wrap(&self, command: &Command, scratch: &Path) -> Command {
        if *self == Isolation::Unisolated {
            return rebuild(command, Command::new(command.get_program()));
        }
        let mut outer = Command::new("bwrap");
        outer
            .args(["--unshare-all", "--unshare-user", "--disable-userns"])
            .args(["--die-with-parent", "--new-session", "--cap-drop", "ALL"])
            .args(["--ro-bind", "/usr", "/usr"]);
        for link in SYSTEM_LINKS {
            match std::fs::read_link(link) {
                Ok(target) => {
                    outer.arg("--symlink").arg(target).arg(link);
                }
                Err(_) if Path::new(link).is_dir() => {
                    outer.args(["--ro-bind", link, link]);
                }
                Err(_) => {}
            }
        }
        outer
            .args(["--proc", "/proc", "--dev", "/dev"])
            .args(sized_tmpfs("/dev/shm"))
            .args(["--remount-ro", "/dev"])
            .args(sized_tmpfs("/tmp"));
        for dir in visible(command, scratch) {
            let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            outer.arg("--ro-bind").arg(&real).arg(&dir);
            if real != dir {
                outer.arg("--ro-bind").arg(&real).arg(&real);
            }
        }
        let work = command.get_current_dir().unwrap_or(Path::new("/tmp"));
        outer
            .args(["--remount-ro", "/", "--chdir"])
            .arg(work)
            .args([
                "--clearenv",
                "--setenv",
                "PATH",
                "/usr/local/bin:/usr/bin:/bin",
            ])
            .args(["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"])
            .args(["--setenv", "LANG", "C.UTF-8"]);
        for (key, value) in command.get_envs() {
            if let Some(value) = value {
                outer.arg("--setenv").arg(key).arg(value);
            }
        }
        outer
            .arg("--")
            .arg(command.get_program())
            .args(command.get_args());
        // SAFETY: setrlimit/getrlimit are async-signal-safe and touch no memory of the parent.
        unsafe {
            outer.pre_exec(bound_address_space);
        }
        outer
    }
}

/// `--size BYTES --tmpfs DIR`.
fn sized_tmpfs(dir: &str) -> [String; 4] {
    [
        "--size".into(),
        TMPFS_BYTES.to_string(),
        "--tmpfs".into(),
        dir.into(),
    ]
}

/// The directories the command needs to see, besides the system: the scratch directory, the
/// prefix of the interpreter it runs (a venv's python links there), and every directory its
/// `LD_LIBRARY_PATH` and `PYTHONPATH` name. Only those that exist, each once.
fn visible(command: &Command, scratch: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![std::path::absolute(scratch).unwrap_or_else(|_| scratch.to_path_buf())];
    dirs.extend(interpreter_prefix(command.get_program()));
    for (key, value) in command.get_envs() {
        if let (true, Some(value)) = (key == "LD_LIBRARY_PATH" || key == "PYTHONPATH", value) {
            dirs.extend(std::env::split_paths(value).filter(|d| d.is_absolute()));
        }
    }
    let mut seen = Vec::new();
    for dir in dirs {
        let under_usr = dir.starts_with("/usr");
        if dir.is_dir() && !under_usr && !seen.contains(&dir) {
            seen.push(dir);
        }
    }
    seen
}

/// `<prefix>` of the interpreter `program` resolves to (`<prefix>/bin/python3.11`), which
/// holds its standard library.
fn interpreter_prefix(program: &OsStr) -> Option<PathBuf> {
    let program = Path::new(program);
    let found = if program.components().count() > 1 {
        program.to_path_buf()
    } else {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())?
    };
    let real = found.canonicalize().ok()?;
    let bin = real.parent()?;
    (bin.file_name()? == "bin").then(|| bin.parent().map(Path::to_path_buf))?
}

/// In the child before exec: the address space bounded, below any hard limit already set (a
/// limit cannot be raised, so a lower one stays).
fn bound_address_space() -> std::io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write and read the one struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_AS, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let bound = limit.rlim_max.min(MAX_ADDRESS_SPACE);
        limit.rlim_cur = bound;
        limit.rlim_max = bound;
        if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs `true` in the sandbox.
fn probe() -> Result<(), String> {
    let scratch = mooncake_sos_support::bounded::scratch("probe")
        .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut probe = Command::new("true");
    probe.current_dir(scratch.path());
    let mut wrapped = Isolation::Sandbox.wrap(&probe, scratch.path());
    let limits = mooncake_sos_support::bounded::Limits::within(Duration::from_secs(20));
    let why = match mooncake_sos_support::bounded::run(&mut wrapped, &limits) {
        Ok(done) if done.status.success() => return Ok(()),
        Ok(done) => format!(
            "{} ({})",
            mooncake_sos_support::bounded::step::tail(&done.stderr_text(), 2),
            done.status
        ),
        Err(e) => e.to_string(),
    };
    Err(format!(
        "the wheels' code runs isolated, and no isolation works here: bubblewrap (`bwrap`, \
         Debian's bubblewrap) failed: {why}; {UNISOLATED_FLAG} runs it on this host instead"
    ))
}

/// `fresh` with `command`'s arguments, environment and directory.
fn rebuild(command: &Command, mut fresh: Command) -> Command {
    fresh.args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => fresh.env(key, value),
            None => fresh.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        fresh.current_dir(PathBuf::from(dir));
    }
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_sees_the_scratch_the_interpreter_and_the_named_libraries_only() {
        let scratch = tempfile::tempdir().unwrap();
        let libs = tempfile::tempdir().unwrap();
        let mut command = Command::new("python3");
        command
            .env(
                "LD_LIBRARY_PATH",
                format!("{}:relative:/nonexistent", libs.path().display()),
            )
            .env("PYTHONPATH", "/usr/lib/python3/dist-packages");
        let dirs = visible(&command, scratch.path());
        assert_eq!(dirs[0], scratch.path());
        assert!(dirs.contains(&libs.path().to_path_buf()), "{dirs:?}");
        // Under /usr (already there), relative and missing directories: not bound again.
        assert!(
            dirs.iter()
                .all(|d| !d.starts_with("/usr") && d.is_absolute()),
            "{dirs:?}"
        );
        assert!(!dirs.contains(&PathBuf::from("/nonexistent")), "{dirs:?}");
    }
}
