//! One error type for everything the runtime does, so callers match on a kind and print a
//! message that already names the item, the expectation and what was found.

use std::fmt;

/// Result alias used across the runtime and the generated bindings.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between Rust and the pinned Python module.
#[derive(Debug)]
pub enum Error {
    /// The embedded interpreter or its environment could not be prepared.
    Interpreter(String),
    /// The installed module does not match the manifest; one line per miss.
    Spec(Box<SpecMismatch>),
    /// The store could not be reached or set up.
    Connect(String),
    /// A Python call raised; `context` says which call, `message` carries type and text.
    Python { context: String, message: String },
    /// A value had the wrong shape or type for a conversion.
    Value(String),
    /// A JSON handle failed validation.
    Handle(String),
}

/// The load-time verdict of the shim's checker: every miss, plus the facts someone needs to
/// fix it, as the shim reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecMismatch {
    /// The module that was checked.
    pub module: String,
    /// One line per miss, as the shim's `check()` names it.
    pub misses: Vec<String>,
    /// The pinned upstream commit and file.
    pub pin: String,
    /// The installed mooncake distributions and the module file.
    pub installed: String,
    /// What to install to fix it.
    pub fix: String,
    /// The shim's whole report, the text `import <shim>` raises.
    pub report: String,
    /// What to try, when the runtime can tell (e.g. no venv was configured).
    pub hint: Option<String>,
}

impl fmt::Display for SpecMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)?;
        match &self.hint {
            Some(hint) => write!(f, "\nhint:      {hint}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Interpreter(m) => write!(f, "python interpreter: {m}"),
            Error::Spec(s) => s.fmt(f),
            Error::Connect(m) => write!(f, "store connection: {m}"),
            Error::Python { context, message } => write!(f, "{context}: {message}"),
            Error::Value(m) => write!(f, "value conversion: {m}"),
            Error::Handle(m) => write!(f, "invalid ref handle: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Attaches a context to a raised Python exception, keeping its type and message.
pub trait PyContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> PyContext<T> for pyo3::PyResult<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|err| {
            let message = pyo3::Python::attach(|py| describe(py, &err));
            Error::Python {
                context: what(),
                message,
            }
        })
    }
}

/// `TypeName: message`, the way Python prints the last line of a traceback.
pub fn describe(py: pyo3::Python<'_>, err: &pyo3::PyErr) -> String {
    use pyo3::types::{PyAnyMethods, PyTypeMethods};
    let name = err
        .get_type(py)
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".to_owned());
    let text = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}
