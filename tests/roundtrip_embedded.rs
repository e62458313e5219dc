//! Round trips on the embedded store (the default when no master is configured).

use mooncake_sos::Store;
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_tests::{TestEnv, scenarios};

fn setup() -> (mooncake_sos_runtime::Module, Store) {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    (
        module,
        Store::open(&mooncake_sos::API, None).expect("embedded store"),
    )
}

fn held(store: &Store) -> usize {
    Python::attach(|py| store.embedded_store(py).expect("embedded").usage().0)
}

#[test]
fn flat_dict_every_codec() {
    let (module, store) = setup();
    scenarios::flat_dict(&module, &store);
    assert_eq!(
        held(&store),
        0,
        "every key is removed after cleanup_dataproto"
    );
}

#[test]
fn dataproto_like_object() {
    let (module, store) = setup();
    scenarios::dataproto(&module, &store);
    assert_eq!(held(&store), 0);
}

/// Eight threads of full round trips on one embedded store: each reads back exactly its own
/// data, and nothing is left afterwards.
#[test]
fn eight_threads_of_round_trips_share_one_store() {
    let (module, store) = setup();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..3 {
                    scenarios::flat_dict(&module, &store);
                }
            });
        }
    });
    assert_eq!(held(&store), 0);
}

/// Raw store calls from eight threads: distinct values per key, read back through `get`,
/// `get_into` and `get_into_ranges`, never mixed up.
#[test]
fn eight_threads_of_raw_calls_keep_keys_apart() {
    use mooncake_sos_runtime::numpy::{PyArray1, PyArrayMethods};
    use mooncake_sos_runtime::pyo3::types::{PyAnyMethods, PyBytes, PyBytesMethods};
    let (_module, store) = setup();
    let value = |t: usize, k: usize| -> Vec<u8> {
        (0..(t * 977 + k * 131) % 70_000 + 1)
            .map(|b| (b * 31 + t * 7 + k) as u8)
            .collect()
    };
    std::thread::scope(|s| {
        for t in 0..8 {
            let store = &store;
            s.spawn(move || {
                for k in 0..40 {
                    Python::attach(|py| {
                        let obj = store.object(py);
                        let key = format!("thread{t}/key{k}");
                        let want = value(t, k);
                        let rc: i64 = obj
                            .call_method1("put", (&key, PyBytes::new(py, &want)))
                            .and_then(|r| r.extract())
                            .expect("put");
                        assert_eq!(rc, 0);
                        let got = obj.call_method1("get", (&key,)).expect("get");
                        assert_eq!(got.cast::<PyBytes>().expect("bytes").as_bytes(), &want[..]);
                        let buf = PyArray1::<u8>::zeros(py, want.len() + 8, false);
                        let ptr = buf.data() as usize;
                        let n: i64 = obj
                            .call_method1("get_into", (&key, ptr, want.len() + 8))
                            .and_then(|r| r.extract())
                            .expect("get_into");
                        assert_eq!(n, want.len() as i64);
                        let half = want.len() / 2;
                        let ranges = obj
                            .call_method1(
                                "get_into_ranges",
                                (
                                    vec![ptr],
                                    vec![vec![key.clone()]],
                                    vec![vec![vec![0usize]]],
                                    vec![vec![vec![half]]],
                                    vec![vec![vec![want.len() - half]]],
                                ),
                            )
                            .and_then(|r| r.extract::<Vec<Vec<Vec<i64>>>>())
                            .expect("get_into_ranges");
                        assert_eq!(ranges, vec![vec![vec![(want.len() - half) as i64]]]);
                        let bytes = buf.readonly();
                        let bytes = bytes.as_slice().expect("contiguous");
                        assert_eq!(&bytes[..want.len() - half], &want[half..]);
                        if k % 2 == 0 {
                            let rc: i64 = obj
                                .call_method1("remove", (&key, true))
                                .and_then(|r| r.extract())
                                .expect("remove");
                            assert_eq!(rc, 0);
                        }
                    });
                }
            });
        }
    });
    let keys = Python::attach(|py| store.embedded_store(py).expect("embedded").key_list());
    assert_eq!(keys.len(), 8 * 20);
    Python::attach(|py| {
        let emb = store.embedded_store(py).expect("embedded");
        for t in 0..8 {
            for k in (1..40).step_by(2) {
                assert_eq!(
                    &emb.value(&format!("thread{t}/key{k}")).expect("kept")[..],
                    &value(t, k)[..]
                );
            }
        }
    });
}

/// numpy arrays move in and are read back without copies; JSON values convert both ways,
/// numpy scalars included, and what JSON cannot hold is an error naming it.
#[test]
fn values_convert_without_copies_and_json_is_exact() {
    use mooncake_sos::Record;
    use mooncake_sos_runtime::numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
    use mooncake_sos_runtime::pyo3::types::PyAnyMethods;
    use mooncake_sos_runtime::{json_to_py, py_to_json};
    let _ = setup();
    Python::attach(|py| {
        let data: Vec<f64> = (0..1000).map(|i| i as f64 * 0.25).collect();
        let ptr = data.as_ptr();
        let r = Record::new(py);
        r.put_vec(py, "x", data).expect("put_vec");
        let arr = r.get(py, "x").expect("x");
        let arr = arr.cast::<PyArrayDyn<f64>>().expect("f64 array");
        assert_eq!(
            arr.data() as *const f64,
            ptr,
            "the Vec's buffer became the array's"
        );
        let view = r.array::<f64>(py, "x").expect("view");
        assert_eq!(
            view.as_slice().expect("contiguous").as_ptr(),
            ptr,
            "the view borrows it"
        );
        assert!(
            r.array::<i32>(py, "x").is_err(),
            "a dtype mismatch is an error"
        );
        assert_eq!(view.len(), 1000);

        let value = serde_json::json!({"a": [1, -2, 3.5, null, true, "s"], "b": {"c": u64::MAX}});
        let obj = json_to_py(py, &value).expect("to python");
        assert_eq!(py_to_json(&obj).expect("back"), value);
        let np = py.import("numpy").expect("numpy");
        let scalar = np
            .getattr("float32")
            .and_then(|f| f.call1((1.5,)))
            .expect("np.float32");
        assert_eq!(py_to_json(&scalar).expect("scalar"), serde_json::json!(1.5));
        let nan = py.eval(c"float('nan')", None, None).expect("nan");
        assert!(py_to_json(&nan).is_err());
        for (expression, says) in [(c"2**70", "64 bits"), (c"{1, 2}", "set is not JSON-safe")] {
            let value = py.eval(expression, None, None).expect("eval");
            let err = py_to_json(&value).expect_err("not JSON-safe");
            assert!(err.to_string().contains(says), "{expression:?}: {err}");
        }
    });
}

/// The constructor's option struct reaches Python: every key the store holds carries the
/// `key_prefix` given from Rust.
#[test]
fn constructor_options_reach_the_module() {
    use mooncake_sos::{MooncakeBundleTransfer, MooncakeBundleTransferOptions, PutOptions, Record};
    let (module, store) = setup();
    Python::attach(|py| {
        let options = MooncakeBundleTransferOptions {
            key_prefix: Some("rust-options".into()),
            default_chunk_bytes: Some(1 << 20),
        };
        let t = MooncakeBundleTransfer::new(py, &module, &store, &options).expect("transfer");
        let data = Record::new(py);
        let ids = mooncake_sos_runtime::numpy::ndarray::Array2::<i64>::zeros((4, 8));
        data.put_array(py, "input_ids", ids).unwrap();
        let put = PutOptions {
            r#type: Some("dict".into()),
            ..Default::default()
        };
        let r = t.put(py, &data, &put).unwrap_or_else(|e| panic!("{e}"));
        let keys = store.embedded_store(py).expect("embedded").key_list();
        assert!(!keys.is_empty());
        assert!(
            keys.iter().all(|k| k.starts_with("rust-options")),
            "{keys:?}"
        );
        t.cleanup_dataproto(py, &r).unwrap();
    });
    assert_eq!(held(&store), 0);
}

/// The manifest's scenarios (the consumer's calls with its values) through the bindings, every
/// client on the one embedded store: the values come back exactly and no key is left. Every
/// one runs, the one that needs torch included (the test env installs torch).
#[test]
fn the_manifests_scenarios_run_on_the_embedded_store() {
    use mooncake_sos_tests::consumer::{self, Outcome};
    let (module, store) = setup();
    let mut passed = 0;
    for s in consumer::all() {
        match consumer::run(&module, &s, |_| &store) {
            Outcome::Passed => passed += 1,
            Outcome::NotRun(why) => panic!("{}: not run ({why})", s["name"]),
        }
    }
    assert_eq!(passed, consumer::all().len(), "every scenario passed");
    assert!(
        consumer::all().iter().any(|s| s["needs_torch"] == true),
        "a torch scenario among them"
    );
    assert_eq!(held(&store), 0);
}
