//! The consumer's scenarios against a release: a throwaway venv with the release's wheel
//! (and numpy, msgpack) installed, then the generated shim's `python3 -m <shim> --smoke`,
//! which starts the wheel's own `mooncake_master`. Bounded in time; the verdict is cached by
//! the wheel's and the shim's sha256 (served only as written: [`kept`]), so a warm run does
//! not run it again.

use super::index::Wheel;
use mooncake_sos_native::cuda_runtime::provides;
use mooncake_sos_native::read::{installed, missing_library};
use mooncake_sos_native::wheel::inspect;
use mooncake_sos_pysource::archive::Archive;
use mooncake_sos_pysource::source::sha256_hex;
use mooncake_sos_support::bounded::step::{StepError, bounded, tail};
use mooncake_sos_support::input::{self, ReadError};
use mooncake_sos_support::kept;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The consumer's scenarios run against the installed release (`python3 -m <shim> --smoke`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Smoke {
    /// The summary line's counts, e.g. `smoke: 2 ok, 0 failed, 1 not run`.
    Passed {
        summary: String,
    },
    Failed {
        output: String,
    },
    NotRun {
        reason: String,
    },
}

/// The largest smoke verdict read (a few KB).
const MAX_SMOKE_BYTES: u64 = 4 << 20;

/// How the smoke runs.
#[derive(Clone, Debug)]
pub struct Smoker {
    /// The interpreter that makes the venv (the wheels are built for it).
    pub python: PathBuf,
    /// The generated shim (`generated/python/<shim>.py`).
    pub shim: PathBuf,
    /// Where numpy and msgpack come from: a directory of wheels (offline), else the index.
    pub deps: Option<PathBuf>,
    pub index_url: Option<String>,
    /// Put before `LD_LIBRARY_PATH` (a CUDA runtime, a driver stub).
    pub lib_dirs: Vec<PathBuf>,
    /// Only the cache and `deps`: no index.
    pub offline: bool,
    /// Bound on making the venv, installing and the smoke, together.
    pub timeout: Duration,
    /// Verdicts are kept here by wheel and shim.
    pub cache_dir: PathBuf,
    /// Where the smoke (the wheel's code) runs.
    pub isolation: mooncake_sos_native::isolate::Isolation,
    /// What the core needs to load, brought as the core reader brings it (`None`: only
    /// `lib_dirs`), and the module that imports the core (`mooncake.store`).
    pub runtimes: Option<mooncake_sos_native::cuda_runtime::Runtimes>,
    pub native_module: String,
}

impl Smoker {
    /// What a smoke's verdict depends on besides the wheel, for the verdicts' key: the shim's
    /// text, where the dependencies come from, the interpreter, the libraries, isolation.
    pub fn identity(&self) -> String {
        let shim = self.shim_text().unwrap_or_default();
        format!(
            "smoke {} {:?} {:?} {:?} {} {:?} {:?}",
            sha256_hex(shim.as_bytes()),
            self.deps,
            self.index_url,
            self.python,
            self.offline,
            self.lib_dirs,
            self.isolation
        )
    }

    /// The generated shim's text, read bounded.
    fn shim_text(&self) -> Result<String, ReadError> {
        input::read_text(&self.shim, input::MAX_TEXT_BYTES)
    }

    /// The smoke's verdict for `wheel`.
    pub fn run(&self, wheel: &Wheel) -> Smoke {
        let shim = match self.shim_text() {
            Ok(shim) => shim,
            Err(ReadError::NotFound) => {
                return Smoke::NotRun {
                    reason: format!("no shim at {} (run regen)", self.shim.display()),
                };
            }
            Err(e) => {
                let display = self.shim.display().to_string();
                return Smoke::NotRun {
                    reason: format!("{}: cannot read the shim: {e}", e.location(&display)),
                };
            }
        };
        let key = sha256_hex(format!("{}\0{shim}", wheel.sha256).as_bytes());
        let cached = self
            .cache_dir
            .join("smoke")
            .join(format!("{}.json", &key[..32]));
        match kept::read_text(&cached, &key, MAX_SMOKE_BYTES) {
            Ok(Some(text)) => {
                if let Ok(smoke) = serde_json::from_str(&text) {
                    return smoke;
                }
            }
            Ok(None) => {}
            Err(e) => {
                let display = cached.display().to_string();
                return Smoke::NotRun {
                    reason: format!("{}: cannot read the kept smoke: {e}", e.location(&display)),
                };
            }
        }
        if self.offline && self.deps.is_none() {
            return Smoke::NotRun {
                reason: "--offline, no verdict in the cache and no --smoke-deps to install from"
                    .into(),
            };
        }
        let smoke = self.fresh(wheel, &shim);
        // A verdict that depends on this machine's state (no venv, a timeout) is not kept.
        if !matches!(smoke, Smoke::NotRun { .. })
            && let Ok(json) = serde_json::to_string(&smoke)
        {
            let _ = kept::write(&cached, &key, json.as_bytes());
        }
        smoke
    }

    fn fresh(&self, wheel: &Wheel, shim: &str) -> Smoke {
        let not_run = |reason: String| Smoke::NotRun { reason };
        let Ok(work) = mooncake_sos_support::bounded::scratch("smoke") else {
            return not_run("cannot make a temporary directory".into());
        };
        let deadline = Instant::now() + self.timeout;
        let venv = work.path().join("venv");
        let py = venv.join("bin/python");
        let mut make = Command::new(&self.python);
        make.args(["-m", "venv", "--without-pip"]).arg(&venv);
        if let Err(why) = step(make, deadline) {
            return not_run(format!("making the venv: {why}"));
        }
        let mut install = Command::new(&self.python);
        install
            .args(["-m", "pip", "--disable-pip-version-check", "--python"])
            .arg(&py)
            .args(["install", "--quiet", "--no-deps", "--no-compile"])
            .env_remove("PIP_FIND_LINKS");
        match (&self.deps, &self.index_url) {
            (Some(dir), _) => {
                install.args(["--no-index", "--find-links"]).arg(dir);
            }
            (None, Some(url)) => {
                install.args(["--index-url", url]);
            }
            (None, None) => {}
        }
        install.arg(&wheel.path).args(["numpy", "msgpack"]);
        if let Err(why) = step(install, deadline) {
            return not_run(format!("installing the release: {why}"));
        }
        let dir = work.path().join("shim");
        let module = self
            .shim
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("mooncake_sos")
            .to_owned();
        if std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join(format!("{module}.py")), shim))
            .is_err()
        {
            return not_run("cannot write the shim".into());
        }
        let mut paths = self.lib_dirs.clone();
        match self.core_loads(wheel, &venv, work.path(), deadline) {
            Ok(brought) => paths.extend(brought),
            Err(why) => return not_run(why),
        }
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            paths.extend(std::env::split_paths(&old));
        }
        let mut run = Command::new(&py);
        run.args(["-m", &module, "--smoke"])
            .current_dir(work.path())
            .env("PYTHONPATH", &dir)
            .env(
                "LD_LIBRARY_PATH",
                std::env::join_paths(paths).unwrap_or_default(),
            )
            .env("MC_TCP_BIND_ADDRESS", "127.0.0.1");
        let run = match self.isolation.command(&run, work.path()) {
            Ok(run) => run,
            Err(why) => return not_run(why),
        };
        match bounded(run, deadline) {
            Err(StepError::TimedOut) => {
                not_run(format!("no verdict within {} s", self.timeout.as_secs()))
            }
            Err(StepError::Failed(why)) => not_run(why),
            Ok(done) => {
                let summary = done
                    .stdout
                    .lines()
                    .rfind(|l| l.starts_with("smoke: "))
                    .unwrap_or("")
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .to_owned();
                match done.status.code() {
                    Some(0) if summary.contains(" ok") && !summary.starts_with("smoke: 0 ok") => {
                        Smoke::Passed { summary }
                    }
                    Some(0) => not_run(format!("no scenario ran ({summary})")),
                    Some(1) => Smoke::Failed {
                        output: done
                            .stdout
                            .lines()
                            .filter(|l| l.contains("FAILED"))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    },
                    _ => not_run(format!(
                        "the smoke did not run ({}): {}",
                        done.status,
                        tail(&done.stderr, 2)
                    )),
                }
            }
        }
    }
}

impl Smoker {
    /// The directories the core needs beyond `lib_dirs` (a CUDA runtime, a driver stub), found
    /// as the core reader finds them: import it, bring what the loader says is missing, again.
    /// An error (the loader's last words) when the core does not import here: the smoke would
    /// only report that as failed scenarios.
    fn core_loads(
        &self,
        wheel: &Wheel,
        venv: &Path,
        work: &Path,
        deadline: Instant,
    ) -> Result<Vec<PathBuf>, String> {
        let mut brought = Vec::new();
        let core = Archive::open(&wheel.path)
            .and_then(|mut w| inspect(&mut w, wheel.sha256.clone(), &self.native_module))
            .ok();
        // A wheel whose core cannot be found: the smoke says what happens.
        let Some(core) = core else {
            return Ok(brought);
        };
        loop {
            let mut dirs = self.lib_dirs.clone();
            dirs.extend(brought.iter().cloned());
            let inherited = std::env::var_os("LD_LIBRARY_PATH");
            dirs.extend(inherited.iter().flat_map(std::env::split_paths));
            let mut import = Command::new(venv.join("bin/python"));
            import
                .args(["-I", "-c", &format!("import {}", core.module)])
                .current_dir(work)
                .env(
                    "LD_LIBRARY_PATH",
                    std::env::join_paths(dirs).unwrap_or_default(),
                );
            let import = self.isolation.command(&import, work)?;
            let done = match bounded(import, deadline) {
                Ok(done) => done,
                Err(StepError::TimedOut) => return Err("out of time importing its core".into()),
                Err(StepError::Failed(why)) => return Err(why),
            };
            if done.status.success() {
                return Ok(brought);
            }
            let said = tail(&done.stderr, 1);
            let library = missing_library(&done.stderr).filter(|l| provides(l));
            let so = installed(venv, &core.file);
            let (Some(runtimes), Some(library), Some(so)) = (&self.runtimes, library, so) else {
                return Err(format!("its core does not import here: {said}"));
            };
            match runtimes.provide(&library, &so, &core.file_sha256) {
                Ok(dir) if !brought.contains(&dir) => brought.push(dir),
                Ok(_) => return Err(format!("its core does not import here: {said}")),
                Err(why) => return Err(format!("its core does not import here: {said} ({why})")),
            }
        }
    }
}

fn step(cmd: Command, deadline: Instant) -> Result<(), String> {
    match bounded(cmd, deadline) {
        Ok(done) if done.status.success() => Ok(()),
        Ok(done) => Err(format!("{}: {}", done.status, tail(&done.stderr, 3))),
        Err(StepError::TimedOut) => Err("out of time".into()),
        Err(StepError::Failed(why)) => Err(why),
    }
}
