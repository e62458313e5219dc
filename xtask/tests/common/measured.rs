//! A command run to its end (or a deadline) with its peak memory measured.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Measured {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
    /// Peak resident memory of the process, in MiB.
    pub max_rss_mib: u64,
}

/// Runs `cmd` and reports its peak memory. The test process cannot take it from its own
/// wait4(2): Linux keeps, as a child's peak, the memory it had before exec, and a child
/// spawned from this (large, multi-threaded) test binary starts out sharing its memory. So a
/// small python3 starts it and reports `RUSAGE_CHILDREN` of that one child; past its
/// deadline (argv[1] seconds) the child is killed and the run reports exit `None`.
const MEASURE: &str = "import resource, subprocess, sys\n\
try:\n\
\x20   code = subprocess.run(sys.argv[2:], timeout=float(sys.argv[1])).returncode\n\
except subprocess.TimeoutExpired:\n\
\x20   code = -999\n\
m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n\
sys.stderr.write(f'\\n@measured {code} {m}\\n')\n";

/// [`run_within`] a generous minute.
pub fn run(cmd: &mut Command) -> Measured {
    run_within(cmd, Duration::from_secs(60))
}

/// `cmd`, killed after `deadline` (a hang shows as exit `None`, not as a test that never ends).
pub fn run_within(cmd: &mut Command, deadline: Duration) -> Measured {
    let started = Instant::now();
    let mut measured = Command::new("python3");
    measured
        .arg("-c")
        .arg(MEASURE)
        .arg(deadline.as_secs_f64().to_string())
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => measured.env(k, v),
            None => measured.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        measured.current_dir(dir);
    }
    let out = measured
        .stdin(Stdio::null())
        .output()
        .expect("spawn python3 and the command");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let (stderr, tail) = stderr
        .rsplit_once("\n@measured ")
        .unwrap_or_else(|| panic!("no measurement: {stderr}"));
    let mut fields = tail.split_whitespace().map(|f| f.parse::<i64>().unwrap());
    let (returncode, max_rss_kib) = (fields.next().unwrap(), fields.next().unwrap());
    Measured {
        code: (returncode >= 0).then_some(returncode as i32),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: stderr.to_owned(),
        took: started.elapsed(),
        max_rss_mib: max_rss_kib as u64 / 1024,
    }
}
