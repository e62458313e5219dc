//! The hand-written runtime the generated bindings (`mooncake-sos`) stand on: the embedded
//! interpreter, the load-time check of `mooncake.structured_object_store` (the generated
//! shim's own checker, run here), calls into the module, the store connection and its
//! master's liveness, the embedded store, refs and value conversions.
//!
//! Python environment: see [`python`]; in short, `$VIRTUAL_ENV` (or `$MC_TEST_VENV`, or an
//! explicit [`PythonEnv::venv`]) names the venv whose site-packages hold the mooncake wheel.

pub mod call;
pub mod embedded;
pub mod error;
pub mod frozen;
pub mod handle;
pub mod liveness;
pub mod load_check;
pub mod python;
pub mod store;
pub mod value;

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::sync::MutexExt;

pub use call::{Call, Instance};
pub use embedded::{EmbeddedStore, status};
pub use error::{Error, PyContext, Result, SpecMismatch};
pub use frozen::FrozenObjects;
pub use handle::{
    DataProtoRef, FieldLocation, HANDLE_KIND, HANDLE_SECTIONS, HANDLE_TYPE, HANDLE_VERSION,
    RefHandle, StageRef,
};
pub use liveness::Liveness;
pub use load_check::{Contract, NativeStore};
pub use python::PythonEnv;
pub use store::{Store, StoreConfig, StoreKind};
pub use value::{Record, ReplicateConfig, Rows, ToPy, json_to_py, py_to_json};

/// Re-exported so generated code and callers use the same versions.
pub use numpy;
pub use pyo3;
pub use serde_json;

/// What the generated crate re-exports beside its own items: the names its users need.
pub mod prelude {
    pub use crate::{
        DataProtoRef, EmbeddedStore, Error, FieldLocation, HANDLE_KIND, HANDLE_SECTIONS,
        HANDLE_TYPE, HANDLE_VERSION, Module, PythonEnv, Record, RefHandle, ReplicateConfig, Result,
        Rows, StageRef, Store, StoreConfig,
    };
}

/// Loads take turns. Two threads importing the module at once can trip CPython's import
/// deadlock detection (`_DeadlockError`), as a pybind11 init releases the GIL mid-import.
/// Taken with `lock_py_attached`, which waits detached from the interpreter, so a thread that
/// holds the GIL never blocks the one whose turn it is.
static LOAD_TURN: Mutex<()> = Mutex::new(());

/// The checked module: loading it runs the contract's check once.
pub struct Module {
    module: Py<PyAny>,
    contract: &'static Contract,
}

impl Module {
    /// Prepares the interpreter for `env`, imports `contract.module` and checks it with the
    /// shim's checker (symbols, parameters, native requirements). Any miss is one
    /// [`Error::Spec`] listing all of them.
    pub fn load(contract: &'static Contract, env: &PythonEnv) -> Result<Module> {
        python::prepare(env)?;
        Python::attach(|py| {
            let _turn = LOAD_TURN
                .lock_py_attached(py)
                .unwrap_or_else(PoisonError::into_inner);
            // The module imports its native core: load that first, where pybind11 may keep
            // the thread state it sees (see `python::import_native`).
            python::import_native(py, contract.native_module);
            let module = load_check::check(py, contract).map_err(|e| match e {
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
                contract,
            })
        })
    }

    /// Another handle on the same module object.
    pub fn clone_ref(&self, py: Python<'_>) -> Module {
        Module {
            module: self.module.clone_ref(py),
            contract: self.contract,
        }
    }

    pub fn contract(&self) -> &'static Contract {
        self.contract
    }

    pub fn bind<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.module.bind(py).clone()
    }

    /// `module.<name>`.
    pub fn attr<'py>(&self, py: Python<'py>, name: &str) -> Result<Bound<'py, PyAny>> {
        self.module
            .bind(py)
            .getattr(name)
            .context(|| format!("{}.{name}", self.contract.module))
    }

    /// A call of the module-level function `name`; see [`Call`].
    pub fn call<'py>(&self, py: Python<'py>, name: &'static str) -> Call<'static, 'py> {
        Call::function(py, &self.bind(py), name).with_contract(self.contract)
    }
}
