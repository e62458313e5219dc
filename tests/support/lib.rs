//! Shared test harness: the paths `scripts/setup-test-env.sh` exports, a real
//! `mooncake_master` on free loopback ports (stopped on drop), and the round-trip scenarios
//! the embedded-store and real-master tests both run.

pub mod consumer;
pub mod data;
pub mod docker;
pub mod doctored;
pub mod process;
pub mod scenarios;
pub mod stub_mistakes;
pub mod venvs;
pub mod workload;

pub use mooncake_sos_testkit::{SETUP_HINT, repo_root};

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mooncake_sos::{PythonEnv, StoreConfig};
use mooncake_sos_runtime::Contract;

/// Paths from the environment the setup script exports.
#[derive(Debug, Clone)]
pub struct TestEnv {
    pub venv: PathBuf,
    pub python: PathBuf,
    pub master: PathBuf,
}

fn var(name: &str) -> PathBuf {
    match std::env::var_os(name).filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => panic!("{name} is not set: {SETUP_HINT}"),
    }
}

impl TestEnv {
    /// Reads MC_TEST_VENV, MC_TEST_PYTHON and MC_TEST_MASTER; fails the test if any is missing.
    pub fn get() -> TestEnv {
        let env = TestEnv {
            venv: var("MC_TEST_VENV"),
            python: var("MC_TEST_PYTHON"),
            master: var("MC_TEST_MASTER"),
        };
        for (what, path) in [
            ("venv", &env.venv),
            ("python", &env.python),
            ("master", &env.master),
        ] {
            assert!(
                path.exists(),
                "{what} {} does not exist: {SETUP_HINT}",
                path.display()
            );
        }
        env
    }

    pub fn python_env(&self) -> PythonEnv {
        PythonEnv::venv(&self.venv)
    }

    /// `<venv>/lib/python3.X/site-packages`.
    pub fn site_packages(&self) -> PathBuf {
        let lib = self.venv.join("lib");
        std::fs::read_dir(&lib)
            .ok()
            .and_then(|mut entries| {
                entries.find_map(|e| {
                    let e = e.ok()?;
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("python")
                        .then(|| e.path().join("site-packages"))
                })
            })
            .unwrap_or_else(|| panic!("no site-packages under {}: {SETUP_HINT}", lib.display()))
    }
}

/// A stand-in for the native core: the module `name` (`source`, in a temporary directory
/// removed on drop), the shipped contract naming it the native module, and the venv's Python
/// with that directory on its path.
pub struct StandInNative {
    pub contract: &'static Contract,
    pub python: PythonEnv,
    _dir: tempfile::TempDir,
}

impl StandInNative {
    pub fn new(env: &TestEnv, name: &'static str, source: &str) -> StandInNative {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(format!("{name}.py")), source).expect("write");
        let mut python = env.python_env();
        python.extra_paths.push(dir.path().to_path_buf());
        StandInNative {
            // A loaded module keeps its contract for the rest of the process.
            contract: Box::leak(Box::new(mooncake_sos::API.with_native_module(name))),
            python,
            _dir: dir,
        }
    }
}

/// A port nobody listens on right now (the OS picks it; a start retries on a lost race).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral loopback port")
}

/// Makes a spawned child get SIGKILL when the spawning thread ends, so a test process killed
/// mid-run (a timeout, a closed pipe) leaves no master behind; Drop covers the normal case.
/// Spawn from the thread that owns the child for the child's whole life.
pub fn dies_with_this_thread(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls prctl, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
}

/// A running `mooncake_master`, killed and reaped on drop.
pub struct Master {
    child: Child,
    pub rpc_port: u16,
    pub http_port: u16,
    pub metrics_port: u16,
    _log_dir: tempfile::TempDir,
    pub log: PathBuf,
}

impl Master {
    /// Starts the wheel's master on loopback with the http metadata server, and waits until
    /// both ports accept connections.
    pub fn start(env: &TestEnv) -> Master {
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start(env) {
                Ok(m) => return m,
                Err(e) => last = e,
            }
        }
        panic!("mooncake_master did not start: {last}");
    }

    fn try_start(env: &TestEnv) -> Result<Master, String> {
        let (rpc_port, http_port, metrics_port) = (free_port(), free_port(), free_port());
        let log_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let log = log_dir.path().join("master.log");
        let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut command = Command::new(&env.master);
        dies_with_this_thread(&mut command);
        let child = command
            .args([
                "-rpc_address=127.0.0.1".to_owned(),
                format!("-rpc_port={rpc_port}"),
                "-enable_http_metadata_server=true".to_owned(),
                "-http_metadata_server_host=127.0.0.1".to_owned(),
                format!("-http_metadata_server_port={http_port}"),
                format!("-metrics_port={metrics_port}"),
            ])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", env.master.display()))?;
        let mut master = Master {
            child,
            rpc_port,
            http_port,
            metrics_port,
            _log_dir: log_dir,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = master.child.try_wait() {
                let text = std::fs::read_to_string(&master.log).unwrap_or_default();
                return Err(format!("exited with {status}: {}", tail(&text)));
            }
            let up = |p: u16| {
                TcpStream::connect_timeout(&([127, 0, 0, 1], p).into(), Duration::from_millis(200))
                    .is_ok()
            };
            if up(rpc_port) && up(http_port) {
                return Ok(master);
            }
            if Instant::now() > deadline {
                return Err(format!("ports {rpc_port}/{http_port} not open after 15 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A client config for this master: tcp on loopback, http metadata.
    pub fn store_config(&self) -> StoreConfig {
        let mut c = StoreConfig::loopback(format!("127.0.0.1:{}", self.rpc_port));
        c.metadata_server = format!("http://127.0.0.1:{}/metadata", self.http_port);
        c
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}
