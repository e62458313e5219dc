//! The consumer's own calls, as api.toml's `[[scenario]]` tables state them (rendered into the
//! bindings as `SCENARIOS_JSON`, the same facts the shim's `--smoke` runs), driven through the
//! generated Rust bindings: each client's store, `MooncakeBundleTransfer(store,
//! key_prefix=...)`, put with the consumer's keywords and FieldSchemas, export_ref → JSON
//! text → import_ref, get, release_result, cleanup_dataproto; after each, what must hold.

use std::collections::BTreeMap;

use mooncake_sos::{
    FieldSchema, GetOptions, MooncakeBundleTransfer, MooncakeBundleTransferOptions, PutOptions,
    Record, RefHandle, ReplicateConfig, Store, export_ref, import_ref,
};
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::pyo3::types::PyList;
use mooncake_sos_runtime::{Module, json_to_py, py_to_json};
use serde_json::Value;

use crate::scenarios::{assert_keys, ref_keys};

/// Every scenario of the manifest, as the bindings carry them.
pub fn all() -> Vec<Value> {
    let v: Value = serde_json::from_str(mooncake_sos::SCENARIOS_JSON).expect("SCENARIOS_JSON");
    v.as_array().expect("an array").clone()
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string: {v}"))
}

/// What a run of one scenario came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    NotRun(&'static str),
}

/// Whether torch can be imported here (the scenarios that need it are not run without it).
pub fn have_torch() -> bool {
    Python::attach(|py| py.import("torch").is_ok())
}

/// Runs `scenario` with `store(client name)` as each client's store; panics naming the
/// scenario and the call on any failure.
pub fn run<'s>(module: &Module, scenario: &Value, store: impl Fn(&str) -> &'s Store) -> Outcome {
    if scenario["needs_torch"] == Value::Bool(true) && !have_torch() {
        return Outcome::NotRun("needs torch");
    }
    let name = text(scenario, "name");
    let (put, get) = (&scenario["put"], &scenario["get"]);
    let (put_by, get_by) = (text(put, "by"), text(get, "by"));
    Python::attach(|py| {
        let fail =
            |call: &str, e: &dyn std::fmt::Display| -> ! { panic!("scenario {name}: {call}: {e}") };
        let options = MooncakeBundleTransferOptions {
            key_prefix: Some(text(scenario, "key_prefix").to_owned()),
            ..Default::default()
        };
        let transfer = |client: &str| {
            MooncakeBundleTransfer::new(py, module, store(client), &options)
                .unwrap_or_else(|e| fail(&format!("{client}: MooncakeBundleTransfer"), &e))
        };
        let (putter, getter) = (transfer(put_by), transfer(get_by));
        let fields = scenario["fields"].as_array().expect("fields");
        let data = Record::new(py);
        let mut schemas = BTreeMap::new();
        for f in fields {
            let field = text(f, "name");
            let value = value(py, f).unwrap_or_else(|e| fail(&format!("build {field}"), &e));
            data.put_object(py, field, value).expect("put_object");
            let mut schema = FieldSchema::new(text(f, "codec"));
            schema.nullable = f["nullable"] == Value::Bool(true);
            schema
                .metadata
                .insert("section".into(), f["section"].clone());
            if !f["dtype"].is_null() {
                schema.metadata.insert("dtype".into(), f["dtype"].clone());
            }
            schemas.insert(field.to_owned(), schema);
        }
        let opts = PutOptions {
            r#type: Some(text(put, "type").to_owned()),
            namespace: Some(text(put, "namespace").to_owned()),
            chunk_bytes: put["chunk_bytes"].as_u64(),
            config: put["replica_num"].as_u64().map(|n| ReplicateConfig {
                replica_num: n as u32,
            }),
            field_schemas: Some(schemas),
            ..Default::default()
        };
        let r = putter
            .put(py, &data, &opts)
            .unwrap_or_else(|e| fail(&format!("{put_by}: put"), &e));
        let exported = export_ref(py, module, &r).unwrap_or_else(|e| fail("export_ref", &e));
        let json_text = serde_json::to_string(&exported).expect("JSON text");
        let handle = RefHandle::from_json(&json_text).unwrap_or_else(|e| fail("import_ref", &e));
        let keys = ref_keys(py, store(put_by), &handle);
        assert!(!keys.is_empty(), "scenario {name}: the put made no key");
        assert_keys(store(put_by), &keys, true);
        let imported = import_ref(py, module, &handle).unwrap_or_else(|e| fail("import_ref", &e));
        let got_options = GetOptions {
            r#type: Some(text(get, "type").to_owned()),
            ..Default::default()
        };
        let got = getter
            .get(py, &imported, &got_options)
            .unwrap_or_else(|e| fail(&format!("{get_by}: get"), &e));
        let record = Record::from_object(&got).expect("get(type='dict') returns a dict");
        let mut names = record.names(py);
        names.sort();
        let mut want: Vec<String> = fields.iter().map(|f| text(f, "name").to_owned()).collect();
        want.sort();
        assert_eq!(names, want, "scenario {name}: the fields of the get");
        for f in fields {
            let field = text(f, "name");
            let back = record.get(py, field).expect("field");
            let back = plain(&back).unwrap_or_else(|e| fail(&format!("read {field}"), &e));
            assert_eq!(back, expected(f), "scenario {name}: field {field}");
        }
        getter
            .release_result(py, &got)
            .unwrap_or_else(|e| fail(&format!("{get_by}: release_result"), &e));
        let again = import_ref(py, module, &handle).unwrap_or_else(|e| fail("import_ref", &e));
        getter
            .cleanup_dataproto(py, &again)
            .unwrap_or_else(|e| fail(&format!("{get_by}: cleanup_dataproto"), &e));
        assert_keys(store(get_by), &keys, false);
    });
    Outcome::Passed
}

/// The value as the consumer passes it: numpy arrays, torch tensors, plain data.
fn value<'py>(py: Python<'py>, f: &Value) -> PyResult<Bound<'py, PyAny>> {
    let rows = json_to_py(py, &f["value"])?;
    let dtype = f["dtype"].as_str();
    let asarray = |v: &Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        py.import("numpy")?
            .getattr("asarray")?
            .call((v, dtype.unwrap_or("float64")), None)
    };
    let per_row = |each: &dyn Fn(&Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>>| {
        let out = PyList::empty(py);
        for row in rows.try_iter()? {
            let row = row?;
            out.append(if row.is_none() { row } else { each(&row)? })?;
        }
        Ok::<_, PyErr>(out.into_any())
    };
    match text(f, "codec") {
        "ndarray" => asarray(&rows),
        "typed_ragged" => per_row(&asarray),
        "ragged_tensor_dict" => {
            let torch = py.import("torch")?;
            let kind = torch.getattr(dtype.unwrap_or("float32"))?;
            per_row(&|row| {
                let d = mooncake_sos_runtime::pyo3::types::PyDict::new(py);
                for item in row.call_method0("items")?.try_iter()? {
                    let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                    let kw = [("dtype", kind.clone())];
                    let kw = mooncake_sos_runtime::pyo3::types::IntoPyDict::into_py_dict(kw, py)?;
                    d.set_item(k, torch.getattr("tensor")?.call((v,), Some(&kw))?)?;
                }
                Ok(d.into_any())
            })
        }
        _ => Ok(rows),
    }
}

/// What must come back: the values as written, float32 elements at float32 precision.
fn expected(f: &Value) -> Value {
    fn round(v: &Value, f32_elements: bool) -> Value {
        match v {
            Value::Array(items) => {
                Value::Array(items.iter().map(|x| round(x, f32_elements)).collect())
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), round(x, f32_elements)))
                    .collect(),
            ),
            Value::Number(n) if f32_elements && n.is_f64() => {
                Value::from(f64::from(n.as_f64().expect("f64") as f32))
            }
            other => other.clone(),
        }
    }
    let dtype = f["dtype"].as_str();
    assert_ne!(dtype, Some("float16"), "float16 rows: not handled here");
    round(&f["value"], dtype == Some("float32"))
}

/// A result value as JSON, arrays and tensors through `tolist()`.
fn plain(obj: &Bound<'_, PyAny>) -> mooncake_sos::Result<Value> {
    if obj.hasattr("tolist").unwrap_or(false) && !obj.is_instance_of::<PyList>() {
        let list = obj
            .call_method0("tolist")
            .map_err(|e| mooncake_sos::Error::Value(e.to_string()))?;
        return plain(&list);
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return list
            .iter()
            .map(|x| plain(&x))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if let Ok(d) = obj.cast::<mooncake_sos_runtime::pyo3::types::PyDict>() {
        let mut m = serde_json::Map::new();
        for (k, v) in d.iter() {
            m.insert(k.to_string(), plain(&v)?);
        }
        return Ok(Value::Object(m));
    }
    py_to_json(obj)
}
