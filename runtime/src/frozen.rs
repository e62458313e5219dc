//! Python objects of a frozen dataclass, made once per value. A frozen dataclass cannot
//! change, so one object per Rust value (and per module) serves every call: a put whose
//! field schemas repeat, as the consumer's do on every put, skips remaking them (each is a
//! dataclass `__init__` plus its dict, ~2-5 µs).

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;

use crate::error::Result;

/// At most this many values are kept per dataclass; the oldest goes first. Lookups compare
/// values one by one, so the bound also bounds a miss's cost.
const LIMIT: usize = 64;

struct Made<T> {
    /// The module whose class made `object` (tests load copies of the module).
    module: Py<PyAny>,
    value: T,
    object: Py<PyAny>,
}

/// See the module docs; the generated bindings keep one per frozen dataclass.
pub struct FrozenObjects<T> {
    made: Mutex<Vec<Made<T>>>,
}

impl<T> Default for FrozenObjects<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> FrozenObjects<T> {
    pub const fn new() -> Self {
        FrozenObjects {
            made: Mutex::new(Vec::new()),
        }
    }
}

impl<T: PartialEq + Clone> FrozenObjects<T> {
    /// The object made earlier from a value equal to `value` by `module`, else `make()`'s.
    /// The lock is never held while Python runs.
    pub fn get_or_make<'py>(
        &self,
        module: &Bound<'py, PyAny>,
        value: &T,
        make: impl FnOnce() -> Result<Bound<'py, PyAny>>,
    ) -> Result<Bound<'py, PyAny>> {
        let py = module.py();
        {
            let made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(m) = made
                .iter()
                .find(|m| m.value == *value && m.module.bind(py).is(module))
            {
                return Ok(m.object.bind(py).clone());
            }
        }
        let object = make()?;
        let dropped = {
            let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
            let dropped = (made.len() >= LIMIT).then(|| made.remove(0));
            made.push(Made {
                module: module.clone().unbind(),
                value: value.clone(),
                object: object.clone().unbind(),
            });
            dropped
        };
        drop(dropped); // after the lock: releasing a Python object may run Python
        Ok(object)
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.made
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pyo3::types::PyList;

    #[test]
    fn equal_values_share_one_object_per_module_and_the_oldest_goes_first() {
        fn run<'py>(py: Python<'py>) {
            let objects: FrozenObjects<String> = FrozenObjects::new();
            let (a, b) = (PyList::empty(py).into_any(), PyList::empty(py).into_any());
            let made = std::cell::Cell::new(0);
            let get = |module: &Bound<'py, PyAny>, value: &str| -> Bound<'py, PyAny> {
                objects
                    .get_or_make(module, &value.to_owned(), || {
                        made.set(made.get() + 1);
                        Ok(PyList::empty(py).into_any())
                    })
                    .expect("made")
            };
            let first = get(&a, "ndarray");
            assert!(
                get(&a, "ndarray").is(&first),
                "an equal value makes nothing new"
            );
            assert!(!get(&a, "auto").is(&first));
            assert!(
                !get(&b, "ndarray").is(&first),
                "another module's class makes its own"
            );
            assert_eq!((made.get(), objects.len()), (3, 3));
            for i in 0..LIMIT {
                get(&a, &format!("v{i}"));
            }
            assert_eq!(objects.len(), LIMIT);
            assert!(
                !get(&a, "ndarray").is(&first),
                "the oldest value was dropped"
            );
            let err = objects.get_or_make(&a, &"bad".to_owned(), || {
                Err(crate::Error::Value("no".into()))
            });
            assert!(err.is_err());
            assert!(
                !objects
                    .made
                    .lock()
                    .expect("lock")
                    .iter()
                    .any(|m| m.value == "bad")
            );
        }
        Python::attach(run);
    }
}
