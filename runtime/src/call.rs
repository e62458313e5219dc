//! One call into the module, built step by step, for the generated bindings: positional
//! arguments, keyword options (a `None` option is left out so the module's own default
//! applies), the master's liveness checked first, and every error named after the call.
//! A step that fails keeps its error, and [`Call::invoke`] returns it, so a generated method
//! is one chain of steps.

use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::Module;
use crate::error::{Error, PyContext, Result};
use crate::liveness::Liveness;
use crate::load_check::Contract;
use crate::store::Store;
use crate::value::{ReplicateConfig, ToPy};

/// What is called, as errors name it.
#[derive(Clone, Copy, Debug)]
enum Label {
    /// `Class.method`
    Method(&'static str, &'static str),
    /// `name(...)`: a module-level function, or a class being constructed.
    Function(&'static str),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Method(class, method) => write!(f, "{class}.{method}"),
            Label::Function(name) => write!(f, "{name}(...)"),
        }
    }
}

/// A call being built; see the module docs.
pub struct Call<'a, 'py> {
    py: Python<'py>,
    /// The module, which argument conversions need (dataclasses are made from it).
    module: Bound<'py, PyAny>,
    label: Label,
    target: Option<Bound<'py, PyAny>>,
    args: Vec<Bound<'py, PyAny>>,
    kwargs: Option<Bound<'py, PyDict>>,
    /// The store's replicate config, the default of a `config` option.
    replicate: Option<&'a Py<PyAny>>,
    /// What makes a caller's replicate config (the module's contract).
    contract: Option<&'static Contract>,
    liveness: Option<&'a Liveness>,
    /// For a constructor: the store the new [`Instance`] works over.
    store: Option<&'a Store>,
    error: Option<Error>,
}

impl<'a, 'py> Call<'a, 'py> {
    fn new(
        py: Python<'py>,
        module: Bound<'py, PyAny>,
        label: Label,
        target: PyResult<Bound<'py, PyAny>>,
    ) -> Self {
        let mut call = Call {
            py,
            module,
            label,
            target: None,
            args: Vec::new(),
            kwargs: None,
            replicate: None,
            contract: None,
            liveness: None,
            store: None,
            error: None,
        };
        match target.context(|| label.to_string()) {
            Ok(t) => call.target = Some(t),
            Err(e) => call.error = Some(e),
        }
        call
    }

    /// `module.<name>(...)`, for a module bound in `py` (what [`ToPy`] conversions are given).
    pub fn function(py: Python<'py>, module: &Bound<'py, PyAny>, name: &'static str) -> Self {
        Call::new(
            py,
            module.clone(),
            Label::Function(name),
            module.getattr(name),
        )
    }

    /// The contract a caller's replicate config is made by.
    pub fn with_contract(mut self, contract: &'static Contract) -> Self {
        self.contract = Some(contract);
        self
    }

    /// Appends a positional argument.
    pub fn arg(mut self, value: &(impl ToPy + ?Sized)) -> Self {
        if self.error.is_none() {
            match value.to_py(self.py, &self.module) {
                Ok(v) => self.args.push(v),
                Err(e) => self.error = Some(e),
            }
        }
        self
    }

    /// Adds `name=value`.
    pub fn kw(self, name: &str, value: &(impl ToPy + ?Sized)) -> Self {
        self.opt(name, Some(value))
    }

    /// Adds `name=value` when `value` is `Some`; `None` leaves the module's default.
    pub fn opt<T: ToPy + ?Sized>(mut self, name: &str, value: Option<&T>) -> Self {
        if let (None, Some(v)) = (&self.error, value) {
            let set = v
                .to_py(self.py, &self.module)
                .and_then(|v| self.set(name, v));
            if let Err(e) = set {
                self.error = Some(e);
            }
        }
        self
    }

    /// Adds `name=config`: the given one, else the store's (from its replica count), else none.
    pub fn config(mut self, name: &str, value: Option<&ReplicateConfig>) -> Self {
        if self.error.is_some() {
            return self;
        }
        let value = match (value, self.replicate) {
            (Some(c), _) => match self.contract {
                Some(contract) => contract.replicas(self.py, c.replica_num).map(Some),
                None => Err(Error::Value(format!(
                    "{}: a replicate config needs the module's contract",
                    self.label
                ))),
            },
            (None, Some(store_default)) => Ok(Some(store_default.bind(self.py).clone())),
            (None, None) => Ok(None),
        };
        match value.and_then(|v| v.map_or(Ok(()), |v| self.set(name, v))) {
            Ok(()) => self,
            Err(e) => {
                self.error = Some(e);
                self
            }
        }
    }

    fn set(&mut self, name: &str, value: Bound<'py, PyAny>) -> Result<()> {
        let label = self.label;
        self.kwargs
            .get_or_insert_with(|| PyDict::new(self.py))
            .set_item(name, value)
            .context(|| format!("{label}: keyword {name}"))
    }

    /// Makes the call. A store's master is checked first (a peek, or a connect with the
    /// interpreter released), and a failed call is explained by a dead master if it is one.
    pub fn invoke(self) -> Result<Bound<'py, PyAny>> {
        let (py, label) = (self.py, self.label);
        if let Some(e) = self.error {
            return Err(e);
        }
        let target = self
            .target
            .ok_or_else(|| Error::Interpreter(format!("{label}: no target")))?;
        if let Some(l) = self.liveness
            && !l.watching()
        {
            py.detach(|| l.check(&label))?;
        }
        let args = PyTuple::new(py, self.args).context(|| format!("{label} arguments"))?;
        match target
            .call(args, self.kwargs.as_ref())
            .context(|| label.to_string())
        {
            Ok(out) => Ok(out),
            Err(e) => Err(match self.liveness {
                Some(l) => py.detach(|| l.explain(&label, e)),
                None => e,
            }),
        }
    }

    /// Makes a constructor call started by [`Instance::construct`] and wraps the result.
    pub fn instance(self) -> Result<Instance> {
        let (py, module, label, store) = (self.py, self.module.clone(), self.label, self.store);
        let Some(contract) = self.contract else {
            return Err(Error::Interpreter(format!(
                "{label}: made without the module's contract (use Instance::construct)"
            )));
        };
        let obj = self.invoke()?;
        let Label::Function(class) = label else {
            return Err(Error::Interpreter(format!("{label} is not a constructor")));
        };
        Ok(Instance {
            class,
            contract,
            obj: obj.unbind(),
            module: module.unbind(),
            replicate: store
                .and_then(|s| s.replicate_config(py))
                .map(Bound::unbind),
            liveness: store.and_then(Store::liveness),
        })
    }
}

/// An object of one of the module's classes, made over a [`Store`]: what a generated class
/// wrapper holds. Calls through it check the store's master first.
pub struct Instance {
    class: &'static str,
    contract: &'static Contract,
    obj: Py<PyAny>,
    module: Py<PyAny>,
    replicate: Option<Py<PyAny>>,
    liveness: Option<std::sync::Arc<Liveness>>,
}

impl Instance {
    /// `class(store, ...)`: add options, then finish with [`Call::instance`].
    pub fn construct<'a, 'py>(
        py: Python<'py>,
        module: &Module,
        class: &'static str,
        store: &'a Store,
    ) -> Call<'a, 'py> {
        let bound = module.bind(py);
        let target = bound.getattr(class);
        let mut call = Call::new(py, bound, Label::Function(class), target);
        call.args.push(store.object(py));
        call.store = Some(store);
        call.contract = Some(module.contract());
        call
    }

    /// `obj.<method>(...)`.
    pub fn call<'a, 'py>(&'a self, py: Python<'py>, method: &'static str) -> Call<'a, 'py> {
        let target = self.obj.bind(py).getattr(method);
        let mut call = Call::new(
            py,
            self.module.bind(py).clone(),
            Label::Method(self.class, method),
            target,
        );
        call.replicate = self.replicate.as_ref();
        call.contract = Some(self.contract);
        call.liveness = self.liveness.as_deref();
        call
    }

    /// The Python object.
    pub fn object<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.obj.bind(py).clone()
    }
}
