//! Conversions between Rust values and the Python objects the module takes and returns:
//! numpy arrays without copies (an owned `ndarray::Array` or `Vec` moves into numpy; a
//! returned array is read through a borrowed view), bytes, strings and JSON values.

use std::collections::BTreeMap;

use numpy::ndarray::{ArrayD, Dimension};
use numpy::{
    Element, PyArray, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::error::{Error, PyContext, Result};

/// JSON → Python (`None`, bool, int, float, str, list, dict).
pub fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, v) in map {
                d.set_item(k, json_to_py(py, v)?)?;
            }
            d.into_any()
        }
    })
}

/// Python → JSON. numpy scalars and arrays become numbers and lists, as upstream's
/// `_json_safe_value` does; anything else that is not JSON-safe is an error naming its type.
pub fn py_to_json(obj: &Bound<'_, PyAny>) -> Result<serde_json::Value> {
    use serde_json::Value;
    let type_name = || {
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    };
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(Error::Value(format!(
            "integer {obj} does not fit in 64 bits"
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| Error::Value(format!("float {obj} is not representable in JSON")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(
            s.to_str().context(|| "decode str".into())?.to_owned(),
        ));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            let key = k
                .extract::<String>()
                .map_err(|_| Error::Value(format!("dict key {k} is not a str")))?;
            map.insert(key, py_to_json(&v)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = obj.extract().context(|| "sequence items".into())?;
        return items
            .iter()
            .map(py_to_json)
            .collect::<Result<Vec<_>>>()
            .map(Value::Array);
    }
    // numpy scalar (np.generic) or array: .item() / .tolist() give plain Python values.
    if obj.is_instance_of::<PyUntypedArray>() {
        let plain = obj
            .call_method0("tolist")
            .context(|| "ndarray.tolist".into())?;
        return py_to_json(&plain);
    }
    let numpy_generic = obj
        .py()
        .import("numpy")
        .and_then(|np| np.getattr("generic"))
        .and_then(|g| obj.is_instance(&g))
        .unwrap_or(false);
    if numpy_generic {
        let plain = obj
            .call_method0("item")
            .context(|| "numpy scalar .item()".into())?;
        return py_to_json(&plain);
    }
    Err(Error::Value(format!("{} is not JSON-safe", type_name())))
}

/// A Rust value that can be passed as an argument of a module call.
pub trait ToPy {
    fn to_py<'py>(&self, py: Python<'py>, module: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>>;
}

macro_rules! to_py_via_into {
    ($($t:ty),*) => {$(
        impl ToPy for $t {
            fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
                self.clone().into_pyobject(py).map(|o| o.to_owned().into_any()).map_err(|e| {
                    let e: PyErr = e.into();
                    Error::Value(crate::error::describe(py, &e))
                })
            }
        }
    )*};
}
to_py_via_into!(
    String,
    bool,
    i64,
    u64,
    i32,
    u32,
    usize,
    f64,
    Vec<String>,
    Vec<i64>,
    Vec<usize>
);

impl ToPy for serde_json::Value {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        json_to_py(py, self).context(|| "JSON value".into())
    }
}

impl<T: ToPy> ToPy for BTreeMap<String, T> {
    fn to_py<'py>(&self, py: Python<'py>, m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        let d = PyDict::new(py);
        for (k, v) in self {
            d.set_item(k, v.to_py(py, m)?)
                .context(|| format!("dict item {k}"))?;
        }
        Ok(d.into_any())
    }
}

impl ToPy for Py<PyAny> {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone())
    }
}

/// Rows to read: `rows=slice(start, end, step)` or `rows=[i, j, ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rows {
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        step: Option<i64>,
    },
    Indices(Vec<i64>),
}

impl ToPy for Rows {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        match self {
            Rows::Indices(ix) => Ok(PyList::new(py, ix)
                .context(|| "rows list".into())?
                .into_any()),
            Rows::Slice { start, end, step } => py
                .import("builtins")
                .and_then(|b| b.getattr("slice"))
                .and_then(|s| s.call1((*start, *end, *step)))
                .context(|| "rows slice".into()),
        }
    }
}

/// A flat dict of named fields, built from Rust values without copying arrays.
pub struct Record {
    dict: Py<PyDict>,
}

impl Record {
    pub fn new(py: Python<'_>) -> Record {
        Record {
            dict: PyDict::new(py).unbind(),
        }
    }

    /// Wraps an existing Python dict (e.g. a `get(type="dict")` result).
    pub fn from_object(obj: &Bound<'_, PyAny>) -> Result<Record> {
        let d = obj
            .cast::<PyDict>()
            .map_err(|_| Error::Value(format!("expected a dict, got {}", obj.get_type())))?;
        Ok(Record {
            dict: d.clone().unbind(),
        })
    }

    pub fn dict<'py>(&self, py: Python<'py>) -> Bound<'py, PyDict> {
        self.dict.bind(py).clone()
    }

    fn set(&self, py: Python<'_>, name: &str, value: Bound<'_, PyAny>) -> Result<()> {
        self.dict
            .bind(py)
            .set_item(name, value)
            .context(|| format!("set field {name}"))
    }

    /// Moves an owned n-d array into numpy (the buffer is handed over, not copied).
    pub fn put_array<T: Element, D: Dimension>(
        &self,
        py: Python<'_>,
        name: &str,
        array: numpy::ndarray::Array<T, D>,
    ) -> Result<()> {
        self.set(py, name, PyArray::from_owned_array(py, array).into_any())
    }

    /// Moves a Vec into a 1-d numpy array without copying.
    pub fn put_vec<T: Element>(&self, py: Python<'_>, name: &str, data: Vec<T>) -> Result<()> {
        self.set(py, name, PyArray::from_vec(py, data).into_any())
    }

    /// A list of bytes objects (one per row), e.g. for `bytes_ragged`.
    pub fn put_bytes_rows(&self, py: Python<'_>, name: &str, rows: &[Vec<u8>]) -> Result<()> {
        let list =
            PyList::new(py, rows.iter().map(|r| PyBytes::new(py, r))).context(|| name.into())?;
        self.set(py, name, list.into_any())
    }

    /// A list of str (one per row), e.g. for `utf8_ragged`.
    pub fn put_str_rows(&self, py: Python<'_>, name: &str, rows: &[String]) -> Result<()> {
        let list = PyList::new(py, rows).context(|| name.into())?;
        self.set(py, name, list.into_any())
    }

    /// Any JSON value: a scalar for meta_info, a list for JSON/msgpack rows.
    pub fn put_json(&self, py: Python<'_>, name: &str, value: &serde_json::Value) -> Result<()> {
        self.set(py, name, json_to_py(py, value).context(|| name.into())?)
    }

    /// Any Python object.
    pub fn put_object(&self, py: Python<'_>, name: &str, value: Bound<'_, PyAny>) -> Result<()> {
        self.set(py, name, value)
    }

    pub fn get<'py>(&self, py: Python<'py>, name: &str) -> Result<Bound<'py, PyAny>> {
        self.dict
            .bind(py)
            .get_item(name)
            .context(|| format!("field {name}"))?
            .ok_or_else(|| Error::Value(format!("field {name} is missing")))
    }

    /// A borrowed, read-only view of a numpy field (no copy); errors on a dtype mismatch.
    pub fn array<'py, T: Element>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> Result<PyReadonlyArrayDyn<'py, T>> {
        let obj = self.get(py, name)?;
        let arr = obj.cast::<PyArrayDyn<T>>().map_err(|_| {
            Error::Value(format!(
                "field {name}: expected a numpy array of {}, got {}",
                std::any::type_name::<T>(),
                describe_array(&obj)
            ))
        })?;
        arr.try_readonly()
            .map_err(|e| Error::Value(format!("field {name}: {e}")))
    }

    /// An owned copy of a numpy field.
    pub fn array_owned<T: Element + Clone>(&self, py: Python<'_>, name: &str) -> Result<ArrayD<T>> {
        Ok(self.array::<T>(py, name)?.as_array().to_owned())
    }

    /// Rows of bytes (a list of bytes or `None`).
    pub fn bytes_rows(&self, py: Python<'_>, name: &str) -> Result<Vec<Option<Vec<u8>>>> {
        self.get(py, name)?.extract().map_err(|e: PyErr| {
            Error::Value(format!("field {name}: {}", crate::error::describe(py, &e)))
        })
    }

    /// Rows of str (a list of str or `None`).
    pub fn str_rows(&self, py: Python<'_>, name: &str) -> Result<Vec<Option<String>>> {
        self.get(py, name)?.extract().map_err(|e: PyErr| {
            Error::Value(format!("field {name}: {}", crate::error::describe(py, &e)))
        })
    }

    /// Any field as JSON (numpy values become numbers and lists).
    pub fn json(&self, py: Python<'_>, name: &str) -> Result<serde_json::Value> {
        py_to_json(&self.get(py, name)?)
    }

    /// Field names, in insertion order.
    pub fn names(&self, py: Python<'_>) -> Vec<String> {
        self.dict
            .bind(py)
            .keys()
            .iter()
            .filter_map(|k| k.extract().ok())
            .collect()
    }
}

fn describe_array(obj: &Bound<'_, PyAny>) -> String {
    match obj.cast::<PyUntypedArray>() {
        Ok(a) => format!("array of dtype {}", a.dtype()),
        Err(_) => obj.get_type().to_string(),
    }
}

/// `TypeError` helper for generated conversions.
pub fn type_error(message: String) -> PyErr {
    PyTypeError::new_err(message)
}

impl<T> ToPy for Bound<'_, T> {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        Ok(self.clone().into_any().unbind().into_bound(py))
    }
}

impl ToPy for Record {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        Ok(self.dict(py).into_any())
    }
}

/// The replicate config a caller gives a put: its replica count written to the config class
/// and field api.toml declares ([`Contract::replicas`](crate::Contract::replicas) makes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicateConfig {
    pub replica_num: u32,
}
