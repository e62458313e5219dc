//! The consumer's scenarios against a release: a throwaway venv with the release's wheel
//! (and numpy, msgpack) installed, then the generated shim's `python3 -m <shim> --smoke`,
//! which starts the wheel's own `mooncake_master`. Bounded in time; the verdict is cached by
//! the wheel's and the shim's sha256, so a warm run does not run it again.

use super::index::Wheel;
use super::release::Smoke;
use crate::core::run::{StepError, bounded, tail};
use crate::source::sha256_hex;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

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
    pub isolation: crate::isolate::Isolation,
}

impl Smoker {
    /// The smoke's verdict for `wheel`.
    pub fn run(&self, wheel: &Wheel) -> Smoke {
        let Ok(shim) = std::fs::read_to_string(&self.shim) else {
            return Smoke::NotRun {
                reason: format!("no shim at {} (run regen)", self.shim.display()),
            };
        };
        let key = sha256_hex(format!("{}\0{shim}", wheel.sha256).as_bytes());
        let cached = self
            .cache_dir
            .join("smoke")
            .join(format!("{}.json", &key[..32]));
        if let Some(smoke) = std::fs::read_to_string(&cached)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
        {
            return smoke;
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
            let _ = mooncake_sos_codegen::sync::write_atomic(&cached, json.as_bytes());
        }
        smoke
    }

    fn fresh(&self, wheel: &Wheel, shim: &str) -> Smoke {
        let not_run = |reason: String| Smoke::NotRun { reason };
        let Ok(work) = crate::bounded::scratch("smoke") else {
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
        let run = self.isolation.command(&run, work.path());
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

fn step(cmd: Command, deadline: Instant) -> Result<(), String> {
    match bounded(cmd, deadline) {
        Ok(done) if done.status.success() => Ok(()),
        Ok(done) => Err(format!("{}: {}", done.status, tail(&done.stderr, 3))),
        Err(StepError::TimedOut) => Err("out of time".into()),
        Err(StepError::Failed(why)) => Err(why),
    }
}
