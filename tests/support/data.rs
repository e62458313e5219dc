//! A flat dict with one field per codec (except `ragged_tensor`, which needs torch) plus
//! meta_info scalars, built from Rust values, and the byte-exact check of what comes back.

use std::collections::BTreeMap;

use mooncake_sos::{FieldSchema, Record};
use mooncake_sos_runtime::numpy::ndarray::Array2;
use mooncake_sos_runtime::numpy::{PyArray, PyUntypedArrayMethods};
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::pyo3::types::PyList;
use serde_json::{Value, json};

/// Row-aligned values of every field, kept on the Rust side to compare against.
pub struct Sample {
    pub rows: usize,
    pub dense: Vec<f32>,
    pub scores: Vec<f64>,
    pub typed: Vec<Vec<i32>>,
    pub msg: Vec<Value>,
    pub text: Vec<String>,
    pub blob: Vec<Vec<u8>>,
    pub js: Vec<Value>,
    pub autof: Vec<i64>,
    /// `ragged_tensor_dict` rows without keys: with keys the codec needs torch.
    pub rtd: Vec<Value>,
    pub meta: BTreeMap<String, Value>,
}

pub const DENSE_COLS: usize = 3;

/// Field name → (codec, section, dtype, nullable).
pub const SCHEMAS: &[(&str, &str, &str, Option<&str>, bool)] = &[
    ("dense", "ndarray", "batch", Some("float32"), false),
    (
        "scores",
        "ndarray",
        "non_tensor_batch",
        Some("float64"),
        false,
    ),
    (
        "typed",
        "typed_ragged",
        "non_tensor_batch",
        Some("int32"),
        false,
    ),
    ("msg", "msgpack_ragged", "non_tensor_batch", None, false),
    ("text", "utf8_ragged", "non_tensor_batch", None, false),
    ("blob", "bytes_ragged", "non_tensor_batch", None, false),
    ("js", "json_ragged", "non_tensor_batch", None, false),
    ("autof", "auto", "non_tensor_batch", None, false),
    ("rtd", "ragged_tensor_dict", "non_tensor_batch", None, true),
    ("step", "auto", "meta_info", None, true),
    ("lr", "auto", "meta_info", None, true),
    ("name", "auto", "meta_info", None, true),
    ("flag", "auto", "meta_info", None, true),
];

impl Sample {
    pub fn new(rows: usize) -> Sample {
        Sample {
            rows,
            dense: (0..rows * DENSE_COLS)
                .map(|i| i as f32 * 0.5 - 1.0)
                .collect(),
            scores: (0..rows).map(|i| i as f64 / 3.0).collect(),
            typed: (0..rows)
                .map(|i| (0..=i as i32).map(|v| v * 7 - 3).collect())
                .collect(),
            msg: (0..rows)
                .map(|i| json!({"a": i, "b": [1, 2, "x"], "c": null}))
                .collect(),
            text: (0..rows)
                .map(|i| ["héllo", "", "日本語", "z"][i % 4].repeat(i + 1))
                .collect(),
            blob: (0..rows)
                .map(|i| (0..(i * 37) % 300).map(|b| (b * 7 + i) as u8).collect())
                .collect(),
            js: (0..rows)
                .map(|i| json!({"k": [i, null, "s"], "f": 1.25}))
                .collect(),
            autof: (0..rows).map(|i| i as i64 * 2 - 5).collect(),
            rtd: (0..rows)
                .map(|i| if i % 2 == 0 { Value::Null } else { json!({}) })
                .collect(),
            meta: BTreeMap::from([
                ("step".to_owned(), json!(7)),
                ("lr".to_owned(), json!(0.5)),
                ("name".to_owned(), json!("run-1")),
                ("flag".to_owned(), json!(true)),
            ]),
        }
    }

    pub fn schemas() -> BTreeMap<String, FieldSchema> {
        SCHEMAS
            .iter()
            .map(|(name, codec, section, dtype, nullable)| {
                let mut s = FieldSchema::new(*codec);
                s.nullable = *nullable;
                s.metadata.insert("section".into(), json!(section));
                if let Some(d) = dtype {
                    s.metadata.insert("dtype".into(), json!(d));
                }
                ((*name).to_owned(), s)
            })
            .collect()
    }

    /// The flat dict, arrays moved into numpy without copies.
    pub fn record(&self, py: Python<'_>) -> Record {
        let r = Record::new(py);
        let dense =
            Array2::from_shape_vec((self.rows, DENSE_COLS), self.dense.clone()).expect("shape");
        r.put_array(py, "dense", dense).expect("dense");
        r.put_vec(py, "scores", self.scores.clone())
            .expect("scores");
        let typed = PyList::new(
            py,
            self.typed.iter().map(|v| PyArray::from_vec(py, v.clone())),
        )
        .expect("typed");
        r.put_object(py, "typed", typed.into_any()).expect("typed");
        r.put_json(py, "msg", &Value::Array(self.msg.clone()))
            .expect("msg");
        r.put_str_rows(py, "text", &self.text).expect("text");
        r.put_bytes_rows(py, "blob", &self.blob).expect("blob");
        r.put_json(py, "js", &Value::Array(self.js.clone()))
            .expect("js");
        r.put_json(py, "autof", &json!(self.autof)).expect("autof");
        r.put_json(py, "rtd", &Value::Array(self.rtd.clone()))
            .expect("rtd");
        for (k, v) in &self.meta {
            r.put_json(py, k, v).expect("meta");
        }
        r
    }

    /// Asserts that `got` holds exactly `fields` (all when `None`) for `rows`, byte for byte.
    pub fn check(&self, py: Python<'_>, got: &Record, rows: &[usize], fields: Option<&[&str]>) {
        let want: Vec<&str> = match fields {
            Some(f) => f.to_vec(),
            None => SCHEMAS.iter().map(|s| s.0).collect(),
        };
        let mut names = got.names(py);
        names.sort();
        let mut expected: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        // meta_info always comes back whole, whatever the field subset.
        expected.extend(
            self.meta
                .keys()
                .filter(|k| !want.contains(&k.as_str()))
                .cloned(),
        );
        expected.sort();
        assert_eq!(names, expected, "field names of the result");
        for name in want {
            match name {
                "dense" => {
                    let a = got.array::<f32>(py, "dense").expect("dense array");
                    assert_eq!(a.shape(), &[rows.len(), DENSE_COLS]);
                    let flat: Vec<f32> = a.as_array().iter().copied().collect();
                    let exp: Vec<f32> = rows
                        .iter()
                        .flat_map(|&r| self.dense[r * DENSE_COLS..(r + 1) * DENSE_COLS].to_vec())
                        .collect();
                    assert_eq!(bits(&flat), bits(&exp), "dense bytes");
                }
                "text" => {
                    let exp: Vec<Option<String>> =
                        rows.iter().map(|&r| Some(self.text[r].clone())).collect();
                    assert_eq!(got.str_rows(py, "text").expect("text"), exp);
                }
                "blob" => {
                    let exp: Vec<Option<Vec<u8>>> =
                        rows.iter().map(|&r| Some(self.blob[r].clone())).collect();
                    assert_eq!(got.bytes_rows(py, "blob").expect("blob"), exp);
                }
                "scores" => {
                    let exp: Vec<Value> = rows.iter().map(|&r| json!(self.scores[r])).collect();
                    assert_eq!(got.json(py, name).expect(name), Value::Array(exp), "{name}");
                }
                "typed" | "msg" | "js" | "autof" | "rtd" => {
                    let pick =
                        |v: Vec<Value>| Value::Array(rows.iter().map(|&r| v[r].clone()).collect());
                    let exp = match name {
                        "typed" => pick(self.typed.iter().map(|v| json!(v)).collect()),
                        "msg" => pick(self.msg.clone()),
                        "js" => pick(self.js.clone()),
                        "autof" => pick(self.autof.iter().map(|v| json!(v)).collect()),
                        _ => pick(self.rtd.clone()),
                    };
                    assert_eq!(got.json(py, name).expect(name), exp, "{name}");
                }
                meta => assert_eq!(&got.json(py, meta).expect(meta), &self.meta[meta], "{meta}"),
            }
        }
        for (k, v) in &self.meta {
            assert_eq!(&got.json(py, k).expect(k), v, "meta_info {k}");
        }
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// Two transfer puts through `transfer`, `Sample::new(3)` then `Sample::new(4)`, with the
/// module's uuid4 pinned so both pick the same object id (restored after): what a key
/// collision looks like to the module. Returns the first sample (to check against) and the
/// two results.
pub fn puts_with_one_object_id(
    py: Python<'_>,
    module: &mooncake_sos_runtime::Module,
    transfer: &mooncake_sos::MooncakeBundleTransfer,
) -> (
    Sample,
    mooncake_sos::Result<mooncake_sos::DataProtoRef>,
    mooncake_sos::Result<mooncake_sos::DataProtoRef>,
) {
    let globals = mooncake_sos_runtime::pyo3::types::PyDict::new(py);
    globals.set_item("m", module.bind(py)).expect("set");
    py.run(
        c"import types, uuid\nsaved = m.uuid\nm.uuid = types.SimpleNamespace(uuid4=lambda: uuid.UUID(int=7))",
        Some(&globals),
        None,
    )
    .expect("patch uuid");
    let put = mooncake_sos::PutOptions {
        r#type: Some("dict".into()),
        field_schemas: Some(Sample::schemas()),
        ..Default::default()
    };
    let first_sample = Sample::new(3);
    let first = transfer.put(py, &first_sample.record(py), &put);
    let second = transfer.put(py, &Sample::new(4).record(py), &put);
    py.run(c"m.uuid = saved", Some(&globals), None)
        .expect("restore uuid");
    (first_sample, first, second)
}
