//! Round trips against a real mooncake_master (from the PyPI wheel), started on free
//! loopback ports and stopped afterwards; and the fail-fast of a master that is not running.

use std::time::{Duration, Instant};

use mooncake_sos::{MooncakeBundleTransfer, Store, StoreConfig};
use mooncake_sos_runtime::StoreKind;
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_tests::{Master, TestEnv, free_port, scenarios};

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
    let store = Store::connect(&config)
        .unwrap_or_else(|e| panic!("connect: {e}\nlog: {}", master.log.display()));
    assert_eq!(store.kind(), StoreKind::Distributed);
    scenarios::flat_dict(&module, &store);
    scenarios::dataproto(&module, &store);
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

#[test]
fn master_not_running_fails_within_5s() {
    let env = TestEnv::get();
    mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let config = StoreConfig::loopback(format!("127.0.0.1:{}", free_port()));
    let started = Instant::now();
    let err = match Store::connect(&config) {
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
