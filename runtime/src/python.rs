//! The embedded interpreter: started by the runtime itself, with a venv's site-packages put
//! on `sys.path`, because the interpreter PyO3 links (pyenv's libpython) knows nothing of the
//! venv that holds the mooncake wheel.
//!
//! Which venv: [`PythonEnv::venv`] if given, else `$VIRTUAL_ENV`, else `$MC_TEST_VENV` (what
//! `scripts/setup-test-env.sh` exports). No venv at all is allowed: then only the interpreter's
//! own site-packages are searched.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{IntoPyDict, PyList};

use crate::error::{Error, PyContext, Result};

/// Where the embedded interpreter finds the mooncake wheel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonEnv {
    /// Root of a venv (the directory holding `pyvenv.cfg`).
    pub venv: Option<PathBuf>,
    /// Extra directories prepended to `sys.path` (tests use it for temp package trees).
    pub extra_paths: Vec<PathBuf>,
}

impl PythonEnv {
    /// The venv from `$VIRTUAL_ENV` or `$MC_TEST_VENV`, if either is set.
    pub fn from_env() -> Self {
        let venv = ["VIRTUAL_ENV", "MC_TEST_VENV"]
            .iter()
            .find_map(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
            .map(PathBuf::from);
        PythonEnv {
            venv,
            extra_paths: Vec::new(),
        }
    }

    /// An explicit venv root.
    pub fn venv(path: impl Into<PathBuf>) -> Self {
        PythonEnv {
            venv: Some(path.into()),
            extra_paths: Vec::new(),
        }
    }
}

/// Paths already added, so repeated loads are cheap and `sys.path` does not grow.
static ADDED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the interpreter (once per process) and makes `env` importable.
pub fn prepare(env: &PythonEnv) -> Result<()> {
    Python::attach(|py| -> Result<()> {
        // Waits for the lock detached from the interpreter: an import below may release the
        // GIL, and another thread could then hold it while waiting here.
        let mut added = ADDED
            .lock_py_attached(py)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let sys = py.import("sys").context(|| "import sys".into())?;
        if !sys.hasattr("argv").unwrap_or(false) {
            // Some modules read sys.argv; an embedded interpreter has none.
            sys.setattr("argv", PyList::new(py, ["mooncake-sos"]).ok())
                .context(|| "set sys.argv".into())?;
        }
        for path in env.extra_paths.iter().rev() {
            if added.contains(path) {
                continue;
            }
            let list = sys.getattr("path").context(|| "sys.path".into())?;
            list.call_method1("insert", (0, path.to_string_lossy().as_ref()))
                .context(|| format!("add {} to sys.path", path.display()))?;
            added.push(path.clone());
        }
        if let Some(venv) = &env.venv {
            let site = site_packages(py, venv)?;
            if !added.contains(&site) {
                let site_mod = py.import("site").context(|| "import site".into())?;
                // addsitedir also runs the venv's .pth files, as a venv's python would.
                site_mod
                    .call_method1("addsitedir", (site.to_string_lossy().as_ref(),))
                    .context(|| format!("site.addsitedir({})", site.display()))?;
                preload_cudart(py, &site)?;
                added.push(site);
            }
        }
        Ok(())
    })
}

/// `<venv>/lib/pythonX.Y/site-packages` for the embedded interpreter's X.Y; a venv built for
/// another Python version is refused, since its compiled extensions would not load.
fn site_packages(py: Python<'_>, venv: &Path) -> Result<PathBuf> {
    let info = py.version_info();
    let version = format!("{}.{}", info.major, info.minor);
    let site = venv
        .join("lib")
        .join(format!("python{version}"))
        .join("site-packages");
    if site.is_dir() {
        return Ok(site);
    }
    let found: Vec<String> = std::fs::read_dir(venv.join("lib"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    Err(Error::Interpreter(format!(
        "venv {} has no site-packages for the embedded Python {version} (found lib/{:?}); \
         create the venv with Python {version} or point VIRTUAL_ENV at one that is",
        venv.display(),
        found
    )))
}

/// The 0.3.12.post1 `store.so` links `libcudart.so.12`, which the venv carries under
/// `nvidia/cuda_runtime/lib`; loading it globally first spares callers LD_LIBRARY_PATH.
fn preload_cudart(py: Python<'_>, site: &Path) -> Result<()> {
    let lib = site.join("nvidia/cuda_runtime/lib/libcudart.so.12");
    if !lib.is_file() {
        return Ok(());
    }
    let ctypes = py.import("ctypes").context(|| "import ctypes".into())?;
    let mode = ctypes
        .getattr("RTLD_GLOBAL")
        .context(|| "ctypes.RTLD_GLOBAL".into())?;
    ctypes
        .getattr("CDLL")
        .and_then(|cdll| {
            cdll.call(
                (lib.to_string_lossy().as_ref(),),
                Some(&[("mode", mode)].into_py_dict(py)?),
            )
        })
        .map(|_| ())
        .context(|| format!("load {}", lib.display()))
}

/// The name of the runtime's own Python thread (see [`import_native`]); 15 bytes at most, as
/// Linux keeps them.
pub const LASTING_THREAD: &str = "mc-sos-python";

/// Imports `module` (a native core) on the runtime's own Python thread, if it is not imported yet.
///
/// Why a thread of its own: pybind11 remembers, per OS thread, the Python thread state of the
/// thread that first loads a pybind11 module in the process, and enters it again whenever that
/// thread makes a native call that takes the GIL back. PyO3 deletes a thread's state when that
/// thread's outermost `Python::attach` returns, so a first import on a caller's thread leaves
/// that thread a dangling state: its later `MooncakeDistributedStore.get` crashed (SIGSEGV in
/// `PyThreadState_Clear`) whenever the freed memory had been reused. This thread stays attached
/// for the life of the process (parked, with the GIL released), so the state pybind11
/// remembers stays valid. The caller waits detached from the interpreter. An import error is
/// left for the contract check to report.
pub fn import_native(py: Python<'_>, module: &str) {
    use std::sync::OnceLock;
    use std::sync::mpsc::{Sender, channel};
    type Request = (String, Sender<()>);
    static LASTING: OnceLock<Mutex<Sender<Request>>> = OnceLock::new();

    let imported = py
        .import("sys")
        .and_then(|sys| sys.getattr("modules"))
        .and_then(|modules| modules.contains(module))
        .unwrap_or(false);
    if imported {
        return;
    }
    let requests = LASTING.get_or_init(|| {
        let (tx, rx) = channel::<Request>();
        std::thread::Builder::new()
            .name(LASTING_THREAD.into())
            .spawn(move || {
                Python::attach(|py| {
                    let mut rx = rx;
                    loop {
                        // The receiver goes into the detached wait and comes back with the request.
                        let (request, back) = py.detach(move || (rx.recv(), rx));
                        rx = back;
                        let Ok((module, done)) = request else { return };
                        let _ = py.import(module.as_str());
                        let _ = done.send(());
                    }
                })
            })
            .expect("spawn the runtime's Python thread");
        Mutex::new(tx)
    });
    let module = module.to_owned();
    py.detach(move || {
        let (done, wait) = channel();
        let sent = requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .send((module, done));
        if sent.is_ok() {
            let _ = wait.recv();
        }
    });
}
