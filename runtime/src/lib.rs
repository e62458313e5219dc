//! The hand-written runtime the generated bindings (`mooncake-sos`) stand on: the embedded
//! interpreter, the load-time check of `mooncake.structured_object_store` against the
//! manifest, the store connection, the embedded store and value conversions.
//!
//! Python environment: see [`python`]; in short, `$VIRTUAL_ENV` (or `$MC_TEST_VENV`, or an
//! explicit [`PythonEnv::venv`]) names the venv whose site-packages hold the mooncake wheel.

pub mod embedded;
pub mod error;
pub mod python;
pub mod spec;
pub mod store;
pub mod value;

use pyo3::prelude::*;
use pyo3::types::PyDict;

pub use embedded::{EmbeddedStore, status};
pub use error::{Error, PyContext, Result, SpecMismatch};
pub use python::PythonEnv;
pub use spec::{
    ApiSpec, MethodSpec, NativeCheck, NativeSpec, ParamKind, ParamSpec, SymbolKind, SymbolSpec,
};
pub use store::{Liveness, Store, StoreConfig, StoreKind};
pub use value::{Record, ReplicateConfig, Rows, ToPy, json_to_py, py_to_json};

/// Re-exported so generated code and callers use the same versions.
pub use numpy;
pub use pyo3;
pub use serde_json;

/// One `Module::load` at a time in the process (see there why).
mod load_turn {
    use std::sync::{Condvar, Mutex, PoisonError};

    static BUSY: Mutex<bool> = Mutex::new(false);
    static FREE: Condvar = Condvar::new();

    /// Waits until no load runs, then marks one running.
    pub fn take() {
        let mut busy = BUSY.lock().unwrap_or_else(PoisonError::into_inner);
        while *busy {
            busy = FREE.wait(busy).unwrap_or_else(PoisonError::into_inner);
        }
        *busy = true;
    }

    /// Ends the turn when dropped, also on an early return.
    pub struct Held;

    impl Drop for Held {
        fn drop(&mut self) {
            *BUSY.lock().unwrap_or_else(PoisonError::into_inner) = false;
            FREE.notify_one();
        }
    }
}

/// The checked module: loading it runs every check of the spec once.
pub struct Module {
    module: Py<PyAny>,
    spec: &'static ApiSpec,
}

impl Module {
    /// Prepares the interpreter for `env`, imports `spec.module` and checks it (symbols,
    /// parameters, native requirements). Any miss is one [`Error::Spec`] listing all of them.
    pub fn load(spec: &'static ApiSpec, env: &PythonEnv) -> Result<Module> {
        python::prepare(env)?;
        Python::attach(|py| {
            // Loads take turns: two threads importing the module at once can trip CPython's
            // import deadlock detection (`_DeadlockError`), as a pybind11 init releases the
            // GIL mid-import. The turn is awaited with the GIL released, so a thread that
            // holds the GIL never blocks the one whose turn it is.
            py.detach(load_turn::take);
            let _turn = load_turn::Held;
            let module = spec::check(py, spec).map_err(|e| match e {
                Error::Spec(mut s) if env.venv.is_none() => {
                    s.hint = Some(
                        "no venv was configured: set VIRTUAL_ENV (or MC_TEST_VENV, as \
                         scripts/setup-test-env.sh prints) to the venv holding the mooncake wheel"
                            .into(),
                    );
                    Error::Spec(s)
                }
                other => other,
            })?;
            Ok(Module {
                module: module.unbind(),
                spec,
            })
        })
    }

    /// Another handle on the same module object.
    pub fn clone_ref(&self, py: Python<'_>) -> Module {
        Module {
            module: self.module.clone_ref(py),
            spec: self.spec,
        }
    }

    pub fn spec(&self) -> &'static ApiSpec {
        self.spec
    }

    pub fn bind<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.module.bind(py).clone()
    }

    /// `module.<name>`.
    pub fn attr<'py>(&self, py: Python<'py>, name: &str) -> Result<Bound<'py, PyAny>> {
        self.module
            .bind(py)
            .getattr(name)
            .context(|| format!("{}.{name}", self.spec.module))
    }
}

/// Keyword arguments for a module call; `None` options are left out so the module's own
/// defaults apply.
pub struct Kwargs<'py> {
    py: Python<'py>,
    module: Bound<'py, PyAny>,
    dict: Bound<'py, PyDict>,
}

impl<'py> Kwargs<'py> {
    pub fn new(py: Python<'py>, module: &Module) -> Self {
        Kwargs {
            py,
            module: module.bind(py),
            dict: PyDict::new(py),
        }
    }

    /// Adds `name=value` when `value` is `Some`.
    pub fn opt<T: ToPy>(self, name: &str, value: Option<&T>) -> Result<Self> {
        if let Some(v) = value {
            let obj = v.to_py(self.py, &self.module)?;
            self.dict
                .set_item(name, obj)
                .context(|| format!("keyword {name}"))?;
        }
        Ok(self)
    }

    /// Adds `name=value` for a Python object already built.
    pub fn obj(self, name: &str, value: Option<Bound<'py, PyAny>>) -> Result<Self> {
        if let Some(v) = value {
            self.dict
                .set_item(name, v)
                .context(|| format!("keyword {name}"))?;
        }
        Ok(self)
    }

    pub fn into_dict(self) -> Bound<'py, PyDict> {
        self.dict
    }
}

/// `obj.method(*args, **kwargs)` with the call named in any error.
pub fn call_method<'py>(
    obj: &Bound<'py, PyAny>,
    method: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyAny>> {
    let owner = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    obj.call_method(method, args, kwargs)
        .context(|| format!("{owner}.{method}"))
}
