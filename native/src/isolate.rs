//! Where a wheel's code runs (a core's import, watch's smoke): isolated from the host in Linux
//! namespaces (`unshare`: its own user, mount, pid and network namespaces), or, only when
//! the user says so (`--unisolated`), on the host.
//!
//! Isolated, the code sees the host's file system read-only (so the library directories it
//! is given stay visible), a fresh tmpfs at /dev/shm, its scratch directory (also its TMPDIR
//! and HOME) as the one writable place, a network namespace with only
//! loopback, a clean environment and HOME, and a bound on its address space; the runner
//! ([`mooncake_sos_contract::bounded`]) bounds its time.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Once, OnceLock};
use std::time::Duration;

/// How the wheel's code runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// `unshare` namespaces (util-linux).
    Namespaces,
    /// On the host: asked for with `--unisolated`.
    Unisolated,
}

/// The flag that allows an unisolated run.
pub const UNISOLATED_FLAG: &str = "--unisolated";

/// Bound on the isolated code's address space (KiB for `ulimit -v`): 16 GiB.
const MAX_ADDRESS_SPACE_KIB: u64 = 16 << 20;

/// Set up inside the namespaces, then exec the command: `$1` the scratch directory, `$2` the
/// working directory, the rest the command.
const SETUP: &str = r#"set -e
S="$1"; W="$2"; shift 2
mount --bind "$S" "$S"
awk '{print $2}' /proc/self/mounts | sort -u | while read -r m; do
  m=$(printf '%b' "$m")
  [ "$m" = "$S" ] || mount -o remount,bind,ro "$m" 2>/dev/null || true
done
if [ -d /dev/shm ]; then mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm; fi
ip link set lo up 2>/dev/null || true
ulimit -v "$MOONCAKE_SOS_MAX_KIB"
unset MOONCAKE_SOS_MAX_KIB
cd "$W"
exec "$@"
"#;

impl Isolation {
    /// Namespaces unless `unisolated`; whether they work here is found at the first use.
    pub fn choose(unisolated: bool) -> Isolation {
        if unisolated {
            Isolation::Unisolated
        } else {
            Isolation::Namespaces
        }
    }

    /// Whether this isolation works here (probed once per process): an error naming why and
    /// the flag that allows an unisolated run.
    fn available(&self) -> Result<(), String> {
        static NAMESPACES: OnceLock<Result<(), String>> = OnceLock::new();
        match self {
            Isolation::Unisolated => Ok(()),
            Isolation::Namespaces => NAMESPACES.get_or_init(probe).clone(),
        }
    }

    /// What the output says ran.
    pub fn describe(&self) -> &'static str {
        match self {
            Isolation::Namespaces => {
                "isolated in Linux namespaces (unshare: no network, read-only file system \
                 but its scratch directory, clean environment)"
            }
            Isolation::Unisolated => "on this host, unisolated (--unisolated)",
        }
    }

    /// `command` to run the wheel's code with `scratch` its one writable directory; says
    /// (once per process, on stderr) how the wheels' code runs. An error when the isolation
    /// does not work here.
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
        let scratch = scratch
            .canonicalize()
            .unwrap_or_else(|_| scratch.to_path_buf());
        let work = command
            .get_current_dir()
            .map_or_else(|| scratch.clone(), Path::to_path_buf);
        let home = scratch.join("home");
        let tmp = scratch.join("tmp");
        let _ = std::fs::create_dir_all(&home);
        let _ = std::fs::create_dir_all(&tmp);
        let mut outer = Command::new("unshare");
        outer
            .args(["--user", "--map-root-user", "--mount", "--net", "--pid"])
            .args([
                "--fork",
                "--mount-proc",
                "--kill-child",
                "sh",
                "-c",
                SETUP,
                "sh",
            ])
            .arg(&scratch)
            .arg(&work)
            .arg(command.get_program())
            .args(command.get_args())
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(default_path),
            )
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .env("LANG", "C.UTF-8")
            .env("MOONCAKE_SOS_MAX_KIB", MAX_ADDRESS_SPACE_KIB.to_string())
            .current_dir(&scratch);
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => outer.env(key, value),
                None => outer.env_remove(key),
            };
        }
        outer
    }
}

/// Runs `true` in the namespaces.
fn probe() -> Result<(), String> {
    let scratch = mooncake_sos_contract::bounded::scratch("probe")
        .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut probe = Command::new("true");
    probe.current_dir(scratch.path());
    let mut wrapped = Isolation::Namespaces.wrap(&probe, scratch.path());
    let limits = mooncake_sos_contract::bounded::Limits::within(Duration::from_secs(20));
    let why = match mooncake_sos_contract::bounded::run(&mut wrapped, &limits) {
        Ok(done) if done.status.success() => return Ok(()),
        Ok(done) => format!(
            "{} ({})",
            mooncake_sos_contract::bounded::step::tail(&done.stderr_text(), 2),
            done.status
        ),
        Err(e) => e.to_string(),
    };
    Err(format!(
        "the wheels' code runs isolated, and no isolation works here: `unshare` (Linux \
         namespaces) failed: {why}; {UNISOLATED_FLAG} runs it on this host instead"
    ))
}

fn default_path() -> OsString {
    "/usr/local/bin:/usr/bin:/bin".into()
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
