//! Round trips against a real mooncake_master (from the PyPI wheel), started on free
//! loopback ports and stopped afterwards; the fail-fast of a master that is not running; and
//! where the native core is first imported.

use std::time::{Duration, Instant};

use mooncake_sos::{MooncakeBundleTransfer, Store, StoreConfig};
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::{StoreKind, status};
use mooncake_sos_tests::scenarios::{self, raw_get, raw_put};
use mooncake_sos_tests::{Master, StandInNative, TestEnv, free_port};

/// One master and one client for all scenarios: the native client is one per process here.
#[test]
fn real_master_round_trips() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let master = Master::start(&env);
    // replica_num goes to every put as config=ReplicateConfig(replica_num=1).
    let config = StoreConfig {
        replica_num: Some(1),
        ..master.store_config()
    };
    let store = Store::connect(&mooncake_sos::API, &config)
        .unwrap_or_else(|e| panic!("connect: {e}\nlog: {}", master.log.display()));
    assert_eq!(store.kind(), StoreKind::Distributed);
    scenarios::flat_dict(&module, &store);
    scenarios::dataproto(&module, &store);
    key_collision_is_refused_by_the_master_and_keeps_the_first_value(&store);
    colliding_transfer_keys_on_the_master_return_the_first_puts_data(&module, &store);
    // Dropping the Store closes the native client while the master is up, even with a
    // transfer still holding the store object; left open, it would be torn down by the
    // process's exit handlers. (A second test cannot do this in parallel: clients in one
    // process share one transfer engine, and closing one breaks the other.)
    assert_eq!(master.mounted_bytes(), config.global_segment_size);
    let transfer =
        Python::attach(|py| MooncakeBundleTransfer::new(py, &module, &store, &Default::default()))
            .expect("transfer");
    drop(store);
    assert_eq!(master.mounted_bytes(), 0, "the segment is still mounted");
    drop(transfer);
}

/// Two puts of one key on the real master: the second changes nothing, a get returns the
/// first value.
fn key_collision_is_refused_by_the_master_and_keeps_the_first_value(store: &Store) {
    Python::attach(|py| {
        assert_eq!(raw_put(py, store, "collision-k", b"first"), status::OK);
        // The real client reports the master's OBJECT_ALREADY_EXISTS as success (0): the
        // second value is dropped silently. The embedded store says -705 instead (a known
        // difference, see RELIABILITY.md); both keep the first value.
        assert_eq!(raw_put(py, store, "collision-k", b"second"), status::OK);
        assert_eq!(raw_get(py, store, "collision-k"), b"first");
        let removed: i64 = store
            .object(py)
            .call_method1("remove", ("collision-k", true))
            .and_then(|r| r.extract())
            .expect("remove");
        assert_eq!(removed, status::OK);
    });
}

/// Two transfer puts that pick the same object id (the module's uuid4 pinned) on the real
/// master: the second "succeeds" (the real client reports a collision as 0) and its ref never
/// reads its own data; the first ref still reads the first put's. The embedded store refuses it instead (roundtrip_bad.rs): a known
/// difference, see RELIABILITY.md.
fn colliding_transfer_keys_on_the_master_return_the_first_puts_data(
    module: &mooncake_sos_runtime::Module,
    store: &Store,
) {
    use mooncake_sos::{GetOptions, Record};
    use mooncake_sos_tests::data::puts_with_one_object_id;
    Python::attach(|py| {
        let t =
            MooncakeBundleTransfer::new(py, module, store, &Default::default()).expect("transfer");
        let (first_sample, first, second) = puts_with_one_object_id(py, module, &t);
        let (first, second) = (first.expect("first put"), second.expect("second put"));
        let get = GetOptions {
            r#type: Some("dict".into()),
            ..Default::default()
        };
        // The second ref never reads its own data: where its sizes differ from the first's,
        // a get fails on the size; where they match, it would read the first put's bytes.
        match t.get(py, &second, &get) {
            Err(e) => assert!(
                e.to_string().contains(
                    "batch_get_into failed for bundle/default/00000000000000000000000000000007/"
                ),
                "{e}"
            ),
            Ok(got) => first_sample.check(
                py,
                &Record::from_object(&got).expect("dict"),
                &[0, 1, 2],
                None,
            ),
        }
        let got = t.get(py, &first, &get).expect("get first");
        first_sample.check(
            py,
            &Record::from_object(&got).expect("dict"),
            &[0, 1, 2],
            None,
        );
        t.cleanup_dataproto(py, &first).expect("cleanup");
    });
}

#[test]
fn master_not_running_fails_within_5s() {
    let env = TestEnv::get();
    mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let config = StoreConfig::loopback(format!("127.0.0.1:{}", free_port()));
    let started = Instant::now();
    let err = match Store::connect(&mooncake_sos::API, &config) {
        Ok(_) => panic!("connected to a master that is not running"),
        Err(e) => e.to_string(),
    };
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(
        err.contains("not reachable") && err.contains(&config.master_server_addr),
        "{err}"
    );
}

/// The native core is first imported on the runtime's own Python thread, which outlives the
/// load (see `python::import_native`), never on the caller's thread, whose Python thread state
/// ends with its outermost `attach`: pybind11 keeps the state of the thread that first loads
/// it, and a `get` on a thread whose kept state had been freed crashed this binary (SIGSEGV)
/// in about one run in four when these tests overlapped.
#[test]
fn the_native_core_is_first_imported_on_a_thread_that_lives_on() {
    use mooncake_sos_runtime::pyo3::types::PyAnyMethods;
    use mooncake_sos_runtime::{Module, python::LASTING_THREAD};
    let recorder = StandInNative::new(
        &TestEnv::get(),
        "mcrecord_native",
        "import threading\nfrom mooncake.store import *  # noqa: F403\n\
         IMPORTED_ON = threading.get_native_id()\n",
    );
    let (contract, penv) = (recorder.contract, recorder.python.clone());
    let native_id = |py: Python<'_>| -> u64 {
        py.import("threading")
            .and_then(|t| t.call_method0("get_native_id"))
            .and_then(|id| id.extract())
            .expect("get_native_id")
    };
    let loader = std::thread::spawn(move || {
        Module::load(contract, &penv).unwrap_or_else(|e| panic!("{e}"));
        Python::attach(native_id)
    })
    .join()
    .expect("the loading thread");
    let importer: u64 = Python::attach(|py| {
        py.import("mcrecord_native")
            .and_then(|m| m.getattr("IMPORTED_ON"))
            .and_then(|id| id.extract())
            .expect("IMPORTED_ON")
    });
    assert_ne!(importer, loader, "imported on the loading thread");
    let name = std::fs::read_to_string(format!("/proc/self/task/{importer}/comm"))
        .expect("the importing thread still runs after the loading thread ended");
    assert_eq!(name.trim(), LASTING_THREAD);
}

/// The runtime sets up the store api.toml declares and nothing else: a setup key the manifest
/// declares that StoreConfig cannot carry, and a replicate field it does not declare writable,
/// are errors naming them, before any connection is tried.
#[test]
fn the_store_is_set_up_as_the_manifest_declares() {
    let env = TestEnv::get();
    mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let api = &mooncake_sos::API;
    assert_eq!(api.store.class, "MooncakeDistributedStore");
    assert_eq!(api.store.setup_keys.len(), 7);
    // A key StoreConfig has no field for, and one it keeps for the runtime alone (never a
    // setup value): both refused, naming the key, before any connection is tried.
    let no_fields = mooncake_sos_runtime::Contract {
        store: mooncake_sos_runtime::NativeStore {
            config_fields: &[],
            ..api.store
        },
        ..*api
    };
    // No master listens there: the key is refused first.
    let config = StoreConfig::loopback(format!("127.0.0.1:{}", free_port()));
    for key in ["master_addr", "tcp_bind_address"] {
        let keys: &'static [&'static str] = Box::leak(Box::new(["local_hostname", key]));
        let renamed = mooncake_sos_runtime::Contract {
            store: mooncake_sos_runtime::NativeStore {
                setup_keys: keys,
                ..no_fields.store
            },
            ..no_fields
        };
        let err = match Store::connect(&renamed, &config) {
            Ok(_) => panic!("set up a store with the key {key}"),
            Err(e) => e.to_string(),
        };
        let says = format!("MooncakeDistributedStore.setup: api.toml declares the key `{key}`");
        assert!(err.contains(&says), "{err}");
    }
    let err = Python::attach(|py| no_fields.replicate_config(py, "replica_num", 1).map(drop))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mooncake.store.ReplicateConfig.replica_num: api.toml declares no such"),
        "{err}"
    );
    // A manifest without a store role names what it lacks.
    let storeless = mooncake_sos_runtime::Contract {
        store: mooncake_sos_runtime::NativeStore {
            class: "",
            ..api.store
        },
        ..*api
    };
    let err = match Store::connect(&storeless, &config) {
        Ok(_) => panic!("set up a store api.toml does not declare"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("api.toml declares no native store"), "{err}");
    let made = Python::attach(|py| {
        api.replicate_config(py, "replica_num", 2)
            .map(|c| c.getattr("replica_num").unwrap().extract::<u32>().unwrap())
    });
    assert_eq!(made.unwrap(), 2);
}
