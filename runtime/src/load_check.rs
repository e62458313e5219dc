//! The contract a build of the bindings was generated for, and its check at load time.
//!
//! The check is the generated shim's own (`generated/python/<shim>.py`, whose `check()` is the
//! one implementation of the run-time contract): the runtime executes that file under another
//! module name, which keeps its import-time raise off, and calls `check()`. Python's
//! `import <shim>` and Rust's load therefore apply the same rules and name misses the same way.

use std::ffi::CString;

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyModule};

use crate::error::{Error, PyContext, Result, SpecMismatch};

/// What the generated crate hands the runtime: where the module is and the shim that checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    /// Dotted module name, e.g. `mooncake.structured_object_store`.
    pub module: &'static str,
    /// The native core the module stands on, e.g. `mooncake.store`.
    pub native_module: &'static str,
    /// The shim's own module name, e.g. `mooncake_sos`.
    pub shim: &'static str,
    /// The shim's source text (the generated crate `include_str!`s it).
    pub shim_source: &'static str,
    /// The native store the module is given.
    pub store: NativeStore,
}

/// The native store the module is given, as api.toml declares it (`[upstream] native_roles`
/// and the `[[native]]` entries of the store and its config): the runtime names nothing of
/// the native core that the manifest does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeStore {
    /// The store class (`native_roles.store`), e.g. `MooncakeDistributedStore`.
    pub class: &'static str,
    /// Its set-up method, which takes one dict, and the keys callers pass in it (`dict_keys`).
    pub setup: &'static str,
    pub setup_keys: &'static [&'static str],
    /// The replicate-config class (`native_roles.config`), e.g. `ReplicateConfig`, and the
    /// attributes callers write on it.
    pub config_class: &'static str,
    pub config_fields: &'static [&'static str],
    /// The field of `config_class` a replica count is written to, e.g. `replica_num`; `""`
    /// when api.toml declares none writable.
    pub replica_field: &'static str,
}

impl Contract {
    /// The same contract for a copy of the module importable under another name (tests check
    /// doctored copies).
    pub const fn with_module(self, module: &'static str) -> Contract {
        Contract { module, ..self }
    }

    /// The same contract over another native core (tests check doctored ones).
    pub const fn with_native_module(self, native_module: &'static str) -> Contract {
        Contract {
            native_module,
            ..self
        }
    }

    /// `<native_module>.<config_class>()` with `copies` written to its replica field (the one
    /// api.toml declares: [`NativeStore::replica_field`]).
    pub fn replicas<'py>(&self, py: Python<'py>, copies: u32) -> Result<Bound<'py, PyAny>> {
        self.replicate_config(py, self.store.replica_field, copies)
    }

    /// `<native_module>.<config_class>()` with `field = value` set. A field api.toml does not
    /// declare writable is an error naming it, before anything is made.
    pub fn replicate_config<'py>(
        &self,
        py: Python<'py>,
        field: &str,
        value: u32,
    ) -> Result<Bound<'py, PyAny>> {
        let (module, class) = (self.native_module, self.store.config_class);
        if class.is_empty() || !self.store.config_fields.contains(&field) {
            return Err(Error::Value(format!(
                "{module}.{class}.{field}: api.toml declares no such writable field (a [[native]] \
                 entry with object = \"{class}\", attribute = \"{field}\" and a write access)"
            )));
        }
        let config = native_class(py, module, class)
            .and_then(|cls| cls.call0())
            .context(|| format!("{module}.{class}()"))?;
        config
            .setattr(field, value)
            .context(|| format!("{class}.{field}"))?;
        Ok(config)
    }

    /// The module name the shim runs under here: never its own, so importing it raises nothing.
    fn checker_name(&self) -> String {
        format!("_{}_runtime_check", self.shim)
    }
}

/// `module.A.B` for the dotted path `A.B` api.toml gives a native class by.
pub(crate) fn native_class<'py>(
    py: Python<'py>,
    module: &str,
    dotted: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let mut found = py.import(module)?.into_any();
    for part in dotted.split('.') {
        found = found.getattr(part)?;
    }
    Ok(found)
}

/// The shim's code as a module of its own, run under [`Contract::checker_name`].
fn checker<'py>(py: Python<'py>, contract: &Contract) -> Result<Bound<'py, PyModule>> {
    let text = |s: String| CString::new(s).map_err(|e| Error::Interpreter(e.to_string()));
    PyModule::from_code(
        py,
        &text(contract.shim_source.to_owned())?,
        &text(format!("{}.py", contract.shim))?,
        &text(contract.checker_name())?,
    )
    .context(|| format!("run the {} shim's checker", contract.shim))
}

/// Runs the shim's `check()` on `contract.module`; `Ok(module)` when nothing is missing, else one
/// [`Error::Spec`] built from the shim's own report (every miss, the pin, the installed wheel,
/// the fix).
pub fn check<'py>(py: Python<'py>, contract: &Contract) -> Result<Bound<'py, PyAny>> {
    let checker = checker(py, contract)?;
    let what = || format!("{}.check", contract.shim);
    let kwargs: Bound<'py, PyDict> = [
        ("module", contract.module),
        ("native_module", contract.native_module),
    ]
    .into_py_dict(py)
    .context(what)?;
    let misses: Vec<String> = checker
        .call_method("check", (), Some(&kwargs))
        .and_then(|m| m.extract())
        .context(what)?;
    if misses.is_empty() {
        return py
            .import(contract.module)
            .map(Bound::into_any)
            .context(|| format!("import {}", contract.module));
    }
    kwargs.set_item("misses", &misses).context(what)?;
    let what = || format!("{}.report", contract.shim);
    let report = checker
        .call_method("report", (), Some(&kwargs))
        .context(what)?;
    let field = |key: &str| -> Result<String> {
        report
            .get_item(key)
            .and_then(|v| v.extract())
            .context(|| format!("{}: report[{key:?}]", contract.shim))
    };
    let text = |function: &str, arg: Bound<'py, PyAny>| -> Result<String> {
        checker
            .call_method1(function, (arg,))
            .and_then(|v| v.extract())
            .context(|| format!("{}.{function}", contract.shim))
    };
    let installed = report.get_item("installed").context(what)?;
    Err(Error::Spec(Box::new(SpecMismatch {
        module: contract.module.to_owned(),
        misses,
        pin: field("pinned")?,
        installed: text("installed_text", installed)?,
        fix: field("fix")?,
        report: text("describe", report.clone())?,
        hint: None,
    })))
}
