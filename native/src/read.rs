//! Reads a wheel's native core: a throwaway venv, the wheel installed into it offline, then
//! `introspect.py` imports the core and prints its surface. All of it under one deadline;
//! the result is cached by the wheel's sha256.

use super::cuda_runtime::{Runtimes, provides};
use super::record::MAX_RECORD_BYTES;
use super::wheel::{WheelCore, inspect};
use crate::isolate::Isolation;
use crate::shape::Introspected;
use mooncake_sos_manifest::core_record::{CoreInfo, CoreSurface, FORMAT, ModuleKind, WheelInfo};
use mooncake_sos_manifest::signature::OVERLOADS_PY;
use mooncake_sos_pysource::archive::{Archive, MAX_WHEEL_BYTES};
use mooncake_sos_pysource::source::{LoadError, sha256_hex};
use mooncake_sos_support::bounded::step::{Finished, StepError, bounded, bounded_fed, tail};
use mooncake_sos_support::{input, kept};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The introspection script, part of this crate; it reads docstring overloads with the
/// contract's [`OVERLOADS_PY`], inserted at its marker line.
const INTROSPECT_PY: &str = include_str!("introspect.py");

/// The script the reader runs: the line starting `# @overloads:` replaced by the shared
/// reading (found by its start, so a checkout's line endings do not matter). Made once.
pub fn introspect_script() -> &'static str {
    static SCRIPT: LazyLock<String> = LazyLock::new(|| {
        let mark = INTROSPECT_PY
            .lines()
            .find(|l| l.starts_with("# @overloads:"))
            .unwrap_or_default();
        INTROSPECT_PY.replacen(mark, OVERLOADS_PY, 1)
    });
    &SCRIPT
}

/// Exit status of `introspect.py` when the module cannot be imported.
const IMPORT_FAILED: i32 = 3;

/// How cores are read.
#[derive(Clone, Debug)]
pub struct Reader {
    /// The interpreter that makes the venv; the wheel must be built for its version.
    pub python: PathBuf,
    /// Surfaces are kept here as `<wheel sha256>-<key>.json`; `None` reads every time.
    pub cache_dir: Option<PathBuf>,
    /// Put before `LD_LIBRARY_PATH` for the import (a CUDA runtime, a driver stub).
    pub lib_dirs: Vec<PathBuf>,
    /// Bound on making the venv, installing and importing, together.
    pub timeout: Duration,
    /// Where the import (the wheel's code) runs.
    pub isolation: Isolation,
    /// Where a CUDA runtime or driver stub the core needs comes from; `None`: only
    /// `lib_dirs`.
    pub runtimes: Option<Runtimes>,
}

/// Whether a surface came from the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Cache,
    Read,
}

impl Reader {
    /// What a core's verdict depends on besides the wheel, for watch's verdict key: the
    /// interpreter, the libraries the import can load, isolation.
    pub fn identity(&self) -> String {
        format!(
            "reader {:?} {:?} {:?}",
            self.python, self.lib_dirs, self.isolation
        )
    }

    /// `python3`, no cache, 120 s, unisolated (the command line chooses isolation).
    pub fn new() -> Reader {
        Reader {
            python: PathBuf::from("python3"),
            cache_dir: None,
            lib_dirs: Vec::new(),
            timeout: Duration::from_secs(120),
            isolation: Isolation::Unisolated,
            runtimes: None,
        }
    }

    /// The surface of the core serving `native_module` (e.g. `mooncake.store`) in `wheel`.
    pub fn read(&self, wheel: &Path, native_module: &str) -> Result<CoreSurface, LoadError> {
        self.read_traced(wheel, native_module).map(|(s, _)| s)
    }

    pub fn read_traced(
        &self,
        wheel: &Path,
        native_module: &str,
    ) -> Result<(CoreSurface, Origin), LoadError> {
        let display = wheel.display().to_string();
        let sha256 = input::sha256_file(wheel, MAX_WHEEL_BYTES).map_err(|e| {
            LoadError::new(e.location(&display), format!("cannot read the wheel: {e}"))
        })?;
        let cached = self.cache_entry(&sha256, native_module);
        if let Some((key, path)) = &cached
            && let Some(surface) = load_cached(path, key)?
        {
            return Ok((surface, Origin::Cache));
        }
        let core = inspect(&mut Archive::open(wheel)?, sha256, native_module)?;
        let surface = self.introspect(wheel, &core)?;
        if let Some((key, path)) = cached {
            // A cache that cannot be written costs the next run time, not this one's result.
            let _ = kept::write(&path, &key, surface.to_json().as_bytes());
        }
        Ok((surface, Origin::Read))
    }

    /// Keyed by the wheel and by what reads it (the script and the module asked for): the
    /// key, and where the entry is kept.
    fn cache_entry(&self, wheel_sha256: &str, native_module: &str) -> Option<(String, PathBuf)> {
        let script = introspect_script();
        let reader = sha256_hex(format!("{FORMAT}\0{native_module}\0{script}").as_bytes());
        let key = sha256_hex(format!("{reader}\0{wheel_sha256}").as_bytes());
        let dir = self.cache_dir.as_ref()?;
        Some((
            key,
            dir.join(format!("{wheel_sha256}-{}.json", &reader[..16])),
        ))
    }

    fn introspect(&self, wheel: &Path, core: &WheelCore) -> Result<CoreSurface, LoadError> {
        let fail = |m: String| LoadError::new(&core.display, m);
        let deadline = Instant::now() + self.timeout;
        let work = mooncake_sos_support::bounded::scratch("core")
            .map_err(|e| fail(format!("cannot make a temporary directory: {e}")))?;
        let venv = work.path().join("venv");
        let venv_python = venv.join("bin/python");
        let wheel = std::path::absolute(wheel).unwrap_or_else(|_| wheel.to_path_buf());

        let mut make = Command::new(&self.python);
        make.args(["-m", "venv", "--without-pip"]).arg(&venv);
        self.step(make, "making the venv", deadline, core)?;

        // The host's pip installs into the venv: a venv without pip is made in a fraction of
        // the time. Offline, no dependencies, no user configuration.
        let mut install = Command::new(&self.python);
        install
            .args([
                "-m",
                "pip",
                "--isolated",
                "--disable-pip-version-check",
                "--python",
            ])
            .arg(&venv_python)
            .args([
                "install",
                "--quiet",
                "--no-deps",
                "--no-index",
                "--no-compile",
            ])
            .arg(&wheel);
        self.step(install, "installing the wheel", deadline, core)?;

        let script = work.path().join("introspect.py");
        let modules = work.path().join("modules.txt");
        for (path, text) in [
            (&script, introspect_script().to_owned()),
            (&modules, other_modules(core).join("\n")),
        ] {
            std::fs::write(path, text)
                .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
        }
        // A library the core needs and the reader can bring: brought, and the import tried
        // again (a runtime first, then the driver stub it needs in turn).
        let mut brought: Vec<PathBuf> = Vec::new();
        let proof = proof().map_err(|e| fail(format!("cannot make the run's proof: {e}")))?;
        let done = loop {
            let mut run = Command::new(&venv_python);
            run.arg("-I")
                .arg(&script)
                .arg(&core.module)
                .arg(&modules)
                .current_dir(work.path())
                .env("LD_LIBRARY_PATH", self.library_path(&brought));
            let run = self.isolation.command(&run, work.path()).map_err(fail)?;
            let done = bounded_fed(run, deadline, proof.clone().into_bytes())
                .map_err(|e| self.step_error(core, "importing the core", e))?;
            let missing = (done.status.code() == Some(IMPORT_FAILED))
                .then(|| missing_library(&done.stderr))
                .flatten()
                .filter(|l| provides(l));
            let (Some(runtimes), Some(library)) = (&self.runtimes, missing) else {
                break done;
            };
            let so = installed(&venv, &core.file)
                .ok_or_else(|| fail(format!("{} is not in the venv", core.file)))?;
            let dir = runtimes
                .provide(&library, &so, &core.file_sha256)
                .map_err(|why| {
                    fail(format!(
                        "{}\n  bringing {library} failed: {why}",
                        import_error(core, &done.stderr)
                    ))
                })?;
            if brought.contains(&dir) {
                break done;
            }
            brought.push(dir);
        };
        if done.status.code() == Some(IMPORT_FAILED) {
            return Err(fail(import_error(core, &done.stderr)));
        }
        if !done.status.success() {
            return Err(fail(format!(
                "reading the native core {} failed ({}):\n{}",
                core.file,
                done.status,
                tail(&done.stderr, 12)
            )));
        }
        let found = proven_surface(&done.stdout, &proof).map_err(fail)?;
        // Under the venv, as given or with symlinks resolved (a TMPDIR that is a link).
        let roots = [
            work.path().to_path_buf(),
            work.path()
                .canonicalize()
                .unwrap_or_else(|_| work.path().to_path_buf()),
        ];
        let from_wheel = found.file.as_deref().is_some_and(|f| {
            roots.iter().any(|r| Path::new(f).starts_with(r)) && f.ends_with(&core.file)
        });
        if !from_wheel || found.module != core.module {
            return Err(fail(format!(
                "`{}` was imported from {:?}, not from the wheel's {}",
                core.module, found.file, core.file
            )));
        }
        Ok(CoreSurface {
            format: FORMAT,
            wheel: WheelInfo {
                package: core.package.clone(),
                version: core.version.clone(),
                sha256: core.sha256.clone(),
            },
            core: CoreInfo {
                module: core.module.clone(),
                file: core.file.clone(),
                sha256: core.file_sha256.clone(),
            },
            classes: found.classes,
            functions: found.functions,
            values: found.values,
            modules: core.modules.clone(),
            extensions: found.extensions,
            python: found.python,
        })
    }

    /// Runs a set-up step; a failure is the step's own last words.
    fn step(
        &self,
        command: Command,
        step: &str,
        deadline: Instant,
        core: &WheelCore,
    ) -> Result<Finished, LoadError> {
        let done = bounded(command, deadline).map_err(|e| self.step_error(core, step, e))?;
        if !done.status.success() {
            let said = match tail(&done.stderr, 6) {
                t if t.is_empty() => "(nothing on stderr)".to_owned(),
                t => t,
            };
            return Err(LoadError::new(
                &core.display,
                format!(
                    "{step} with {} failed ({}):\n{said}",
                    self.python.display(),
                    done.status
                ),
            ));
        }
        Ok(done)
    }

    fn step_error(&self, core: &WheelCore, step: &str, error: StepError) -> LoadError {
        let message = match error {
            StepError::TimedOut => format!(
                "reading the native core {} took over {} s (killed while {step})",
                core.file,
                self.timeout.as_secs_f64()
            ),
            StepError::Failed(why) => format!("reading the native core {}: {why}", core.file),
        };
        LoadError::new(&core.display, message)
    }

    fn library_path(&self, brought: &[PathBuf]) -> OsString {
        let mut dirs: Vec<PathBuf> = self.lib_dirs.clone();
        dirs.extend_from_slice(brought);
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            dirs.extend(std::env::split_paths(&old));
        }
        std::env::join_paths(dirs).unwrap_or_default()
    }
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

/// introspect.py's modules file: the package's other extension modules, and its pure-Python
/// modules, each comma-separated (on argv, thousands overflow an argument).
fn other_modules(core: &WheelCore) -> [String; 2] {
    let of = |kinds: &[ModuleKind]| {
        core.modules
            .iter()
            .filter(|(name, kind)| kinds.contains(kind) && **name != core.module)
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    [
        of(&[ModuleKind::Extension]),
        of(&[ModuleKind::Python, ModuleKind::Package]),
    ]
}

/// A fresh secret for one read: the reader prints it before the surface, and only the
/// reader's own process (never the wheel's code) can learn it (see introspect.py's main).
fn proof() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The surface the reader printed after `proof`, in the shape and within the limits of a
/// record; anything else is refused, naming why.
fn proven_surface(stdout: &str, proof: &str) -> Result<Introspected, String> {
    let refused = |why: String| format!("the core's reader gave no surface: {why}");
    let (first, rest) = stdout.split_once('\n').unwrap_or((stdout, ""));
    if first != proof {
        return Err(refused(
            "its output does not start with this run's proof (something else wrote it)".into(),
        ));
    }
    let found: Introspected =
        serde_json::from_str(rest).map_err(|e| refused(format!("not a surface ({e})")))?;
    crate::shape::check(&found).map_err(refused)?;
    Ok(found)
}

/// A surface this reader kept for `key`, as it wrote it.
fn load_cached(path: &Path, key: &str) -> Result<Option<CoreSurface>, LoadError> {
    let text = kept::read_text(path, key, MAX_RECORD_BYTES).map_err(|e| {
        let display = path.display().to_string();
        LoadError::new(
            e.location(&display),
            format!("cannot read the kept surface: {e}"),
        )
    })?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

/// `<venv>/lib/python3.*/site-packages/<file>`.
pub fn installed(venv: &Path, file: &str) -> Option<PathBuf> {
    std::fs::read_dir(venv.join("lib"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages").join(file))
        .find(|p| p.is_file())
}

const NOT_FOUND: &str = ": cannot open shared object file";

/// The shared library the loader could not find, when that is why the import failed.
pub fn missing_library(stderr: &str) -> Option<String> {
    let last = tail(stderr, 1);
    let end = last.find(NOT_FOUND)?;
    Some(last[..end].rsplit([' ', ':']).next()?.to_owned())
}

/// The import error, naming the shared library the loader could not find when that is why.
fn import_error(core: &WheelCore, stderr: &str) -> String {
    let last = tail(stderr, 1);
    match missing_library(stderr) {
        Some(library) => {
            format!(
                "the native core {} does not import: it needs {library}, which the dynamic \
                 loader cannot find (add its directory with --lib-dir or LD_LIBRARY_PATH)\n  {last}",
                core.file
            )
        }
        None => format!(
            "the native core {} (`{}`) does not import:\n{}",
            core.file,
            core.module,
            tail(stderr, 12)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_named() {
        let core = WheelCore {
            display: "x.whl".into(),
            package: "p".into(),
            version: "1".into(),
            sha256: String::new(),
            module: "mooncake.store".into(),
            file: "mooncake/store.so".into(),
            file_sha256: String::new(),
            modules: Default::default(),
        };
        let err = "Traceback ...\nImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n";
        let msg = import_error(&core, err);
        assert!(
            msg.starts_with(
                "the native core mooncake/store.so does not import: it needs libcuda.so.1, which"
            ),
            "{msg}"
        );
        let other = import_error(&core, "ImportError: undefined symbol: foo\n");
        assert!(other.contains("undefined symbol: foo"), "{other}");
    }
}

#[cfg(test)]
mod script_tests {
    /// The reader runs with the shared overload reading in place of its marker line.
    #[test]
    fn the_script_holds_the_shared_overload_reading() {
        let script = super::introspect_script();
        assert!(!script.contains("# @overloads:"));
        assert_eq!(script.matches("def _overloads(obj, name):").count(), 1);
        assert!(script.find("def _overloads").unwrap() < script.find("def main(").unwrap());
    }

    /// The reader's forked child, for each way an extension's code can end: its result, an
    /// exception, a crash, a kill that is not the deadline's, a hang (stopped at the
    /// deadline), an exit without a result, and a result forged on the pipe.
    #[test]
    fn the_child_runner_names_how_the_work_ended() {
        let cases = r#"
import os, signal, time
def forge():
    for fd in range(3, 64):
        try:
            os.write(fd, b'"okay"')
        except OSError:
            pass
    os._exit(0)
cases = {
    "ok": lambda: {"a": 1},
    "raised": lambda: 1 / 0,
    "crash": lambda: os.kill(os.getpid(), signal.SIGSEGV),
    "kill": lambda: os.kill(os.getpid(), signal.SIGKILL),
    "hang": lambda: time.sleep(60),
    "exit": lambda: os._exit(3),
    "forged": forge,
}
print(json.dumps({name: in_child(work, 1) for name, work in cases.items()}))
"#;
        // Not `__main__`: the script's definitions, without its `main()`.
        let program = format!(
            "__name__ = 'reader'\n{}\n{cases}",
            super::introspect_script()
        );
        let out = std::process::Command::new("python3")
            .args(["-I", "-c", &program])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = serde_json::json!({
            "ok": {"ok": {"a": 1}},
            "raised": {"raised": "ZeroDivisionError: division by zero"},
            "crash": {"killed": 11},
            "kill": {"killed": 9},
            "hang": {"late": null},
            "exit": {"silent": null},
            "forged": {"silent": null},
        });
        assert_eq!(got, want);
    }
}
