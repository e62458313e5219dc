//! Round trips both store kinds run: the flat dict of every codec, through export_ref → JSON
//! text → import_ref (via Python and via `RefHandle`), with field subsets, row slices and
//! index lists, release_result and cleanup_dataproto; and a DataProto-like object.

use mooncake_sos::{
    DataProtoRef, GetOptions, MooncakeBundleTransfer, PutOptions, Record, RefHandle, Rows, Store,
    export_ref, import_ref,
};
use mooncake_sos_runtime::numpy::PyUntypedArrayMethods;
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::pyo3::types::{PyBytes, PyDict};
use mooncake_sos_runtime::{Module, ToPy};
use serde_json::Value;

use crate::data::Sample;

fn dict_get(py: Python<'_>, t: &MooncakeBundleTransfer, r: &impl ToPy, opts: GetOptions) -> Record {
    let opts = GetOptions {
        r#type: Some("dict".into()),
        ..opts
    };
    let got = t.get(py, r, &opts).unwrap_or_else(|e| panic!("get: {e}"));
    Record::from_object(&got).expect("get(type='dict') returns a dict")
}

/// `put(key, value)` on the native store object: the status it returns.
pub fn raw_put(py: Python<'_>, store: &Store, key: &str, value: &[u8]) -> i64 {
    store
        .object(py)
        .call_method1("put", (key, PyBytes::new(py, value)))
        .and_then(|r| r.extract())
        .unwrap_or_else(|e| panic!("store.put {key}: {e}"))
}

/// `get(key)` on the native store object: the bytes it returns.
pub fn raw_get(py: Python<'_>, store: &Store, key: &str) -> Vec<u8> {
    let got = store
        .object(py)
        .call_method1("get", (key,))
        .unwrap_or_else(|e| panic!("store.get {key}: {e}"));
    got.cast::<PyBytes>()
        .unwrap_or_else(|e| panic!("store.get {key}: not bytes: {e}"))
        .as_bytes()
        .to_vec()
}

/// Every store key a handle's stages own: manifests, their payload chunks, cleanup keys.
pub fn ref_keys(py: Python<'_>, store: &Store, handle: &RefHandle) -> Vec<String> {
    let mut keys = Vec::new();
    for mk in handle.manifest_keys() {
        let bytes = raw_get(py, store, mk);
        let manifest: Value = serde_json::from_slice(&bytes).expect("manifest JSON");
        let mut payloads = vec![&manifest["meta"]];
        if let Some(buffers) = manifest["buffers"].as_object() {
            payloads.extend(buffers.values());
        }
        for payload in payloads {
            for chunk in payload["chunks"].as_array().into_iter().flatten() {
                keys.push(chunk["key"].as_str().expect("chunk key").to_owned());
            }
        }
        for k in manifest["cleanup_keys"].as_array().into_iter().flatten() {
            keys.push(k.as_str().expect("cleanup key").to_owned());
        }
        keys.push(mk.to_owned());
    }
    keys.sort();
    keys.dedup();
    keys
}

pub fn assert_keys(store: &Store, keys: &[String], present: bool) {
    for k in keys {
        assert_eq!(
            store.contains(k).expect("is_exist"),
            present,
            "key {k} present={present} expected"
        );
    }
}

/// The flat-dict round trip of every codec; returns nothing but asserts all of it.
pub fn flat_dict(module: &Module, store: &Store) {
    Python::attach(|py| {
        let t =
            MooncakeBundleTransfer::new(py, module, store, &Default::default()).expect("transfer");
        let sample = Sample::new(6);
        let put = PutOptions {
            r#type: Some("dict".into()),
            namespace: Some("rt".into()),
            field_schemas: Some(Sample::schemas()),
            ..Default::default()
        };
        let r: DataProtoRef = t
            .put(py, &sample.record(py), &put)
            .unwrap_or_else(|e| panic!("put: {e}"));
        let text = serde_json::to_string(&export_ref(py, module, &r).expect("export_ref"))
            .expect("JSON text");

        // Through RefHandle: parsed and validated in Rust, handed back to Python.
        let handle = RefHandle::from_json(&text).expect("valid handle");
        assert_eq!((handle.batch_size, handle.namespace.as_str()), (6, "rt"));
        let keys = ref_keys(py, store, &handle);
        assert!(
            keys.len() >= 3,
            "a ref owns a manifest, a meta and payload keys: {keys:?}"
        );
        assert_keys(store, &keys, true);
        let all: Vec<usize> = (0..6).collect();
        let imported = import_ref(py, module, &handle).expect("import_ref(RefHandle)");
        let got = dict_get(py, &t, &imported, GetOptions::default());
        sample.check(py, &got, &all, None);
        t.release_result(py, &got).expect("release_result");

        // Through Python: json.loads of the same text.
        let loaded = py
            .import("json")
            .and_then(|j| j.call_method1("loads", (text.as_str(),)))
            .expect("json.loads");
        let imported = import_ref(py, module, &loaded).expect("import_ref(dict)");
        let got = dict_get(py, &t, &imported, GetOptions::default());
        sample.check(py, &got, &all, None);

        // Subsets, slices, index lists.
        let fields = ["text", "dense", "blob"];
        let opts = GetOptions {
            fields: Some(fields.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        sample.check(py, &dict_get(py, &t, &handle, opts), &all, Some(&fields));
        // Upstream slices structured non-tensor fields with step 1 only.
        let slice = Rows::Slice {
            start: Some(1),
            end: Some(5),
            step: None,
        };
        sample.check(
            py,
            &dict_get(
                py,
                &t,
                &handle,
                GetOptions {
                    rows: Some(slice),
                    ..Default::default()
                },
            ),
            &[1, 2, 3, 4],
            None,
        );
        let indices = GetOptions {
            rows: Some(Rows::Indices(vec![4, 0, 2])),
            ..Default::default()
        };
        sample.check(py, &dict_get(py, &t, &handle, indices), &[4, 0, 2], None);
        let both = GetOptions {
            fields: Some(vec!["typed".into(), "js".into()]),
            rows: Some(Rows::Indices(vec![-1, 1])),
            ..Default::default()
        };
        let got = dict_get(py, &t, &imported, both);
        sample.check(py, &got, &[5, 1], Some(&["typed", "js"]));
        t.release_result(py, &got).expect("release_result");

        t.cleanup_dataproto(py, &handle).expect("cleanup_dataproto");
        assert_keys(store, &keys, false);
    });
}

/// A DataProto-like object (batch / non_tensor_batch / meta_info attributes).
pub fn dataproto(module: &Module, store: &Store) {
    Python::attach(|py| {
        let t =
            MooncakeBundleTransfer::new(py, module, store, &Default::default()).expect("transfer");
        let np = py.import("numpy").expect("numpy");
        let batch = PyDict::new(py);
        let ids: Vec<i64> = (0..12).map(|i| i * 3 - 4).collect();
        let arr = mooncake_sos_runtime::numpy::PyArray::from_vec(py, ids.clone());
        batch
            .set_item(
                "input_ids",
                arr.call_method1("reshape", (4, 3)).expect("reshape"),
            )
            .expect("set");
        let non_tensor = PyDict::new(py);
        let words = ["a", "bb", "", "dddd"];
        let obj = np.getattr("array").and_then(|f| {
            let kw = PyDict::new(py);
            kw.set_item("dtype", "object")?;
            f.call((words.to_vec(),), Some(&kw))
        });
        non_tensor
            .set_item("words", obj.expect("object array"))
            .expect("set");
        let meta = PyDict::new(py);
        meta.set_item("epoch", 3).expect("set");
        let ns = py
            .import("types")
            .and_then(|m| m.getattr("SimpleNamespace"))
            .expect("SimpleNamespace");
        let kw = PyDict::new(py);
        kw.set_item("batch", batch).expect("set");
        kw.set_item("non_tensor_batch", non_tensor).expect("set");
        kw.set_item("meta_info", meta).expect("set");
        let data = ns.call((), Some(&kw)).expect("DataProto-like");

        let r = t
            .put(py, &data, &PutOptions::default())
            .unwrap_or_else(|e| panic!("put dataproto: {e}"));
        let handle =
            RefHandle::from_value(export_ref(py, module, &r).expect("export")).expect("handle");
        assert_eq!(handle.field_index["input_ids"].section, "batch");
        assert_eq!(handle.field_index["words"].section, "non_tensor_batch");
        let keys = ref_keys(py, store, &handle);
        let got = t
            .get(py, &handle, &GetOptions::default())
            .expect("get dataproto");
        let section = |name: &str| {
            Record::from_object(&got.get_item(name).expect(name)).expect("section dict")
        };
        let b = section("batch");
        let ids_back = b.array::<i64>(py, "input_ids").expect("input_ids");
        assert_eq!(ids_back.shape(), &[4, 3]);
        assert_eq!(ids_back.as_array().iter().copied().collect::<Vec<_>>(), ids);
        let w: Vec<String> = section("non_tensor_batch")
            .get(py, "words")
            .and_then(|v| {
                v.call_method0("tolist")
                    .and_then(|l| l.extract())
                    .map_err(|e| mooncake_sos::Error::Value(e.to_string()))
            })
            .expect("words");
        assert_eq!(w, words);
        assert_eq!(
            section("meta_info").json(py, "epoch").expect("epoch"),
            serde_json::json!(3)
        );
        let rows = GetOptions {
            rows: Some(Rows::Indices(vec![3, 1])),
            ..Default::default()
        };
        let part = t.get(py, &handle, &rows).expect("get rows");
        let b = Record::from_object(&part.get_item("batch").expect("batch")).expect("dict");
        let sel: Vec<i64> = b
            .array::<i64>(py, "input_ids")
            .expect("ids")
            .as_array()
            .iter()
            .copied()
            .collect();
        assert_eq!(sel, [&ids[9..12], &ids[3..6]].concat());
        t.release_result(py, &got).expect("release");
        t.cleanup_dataproto(py, &handle).expect("cleanup");
        assert_keys(store, &keys, false);
    });
}
