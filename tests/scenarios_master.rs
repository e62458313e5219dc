//! The manifest's scenarios (api.toml `[[scenario]]`, the consumer's calls with its values)
//! through the generated bindings against a real mooncake_master from the wheel: each
//! scenario on a master of its own, each of its clients a real `MooncakeDistributedStore` set
//! up with the scenario's values (the rollout manager's with `global_segment_size = 0`).
//! One test: the native clients of one process share one transfer engine.

use mooncake_sos::{Store, StoreConfig};
use mooncake_sos_tests::consumer::{self, Outcome};
use mooncake_sos_tests::{Master, TestEnv};

#[test]
fn the_manifests_scenarios_run_against_a_real_master() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let mut passed = Vec::new();
    for s in consumer::all() {
        let name = s["name"].as_str().unwrap().to_owned();
        let master = Master::start(&env);
        let clients: Vec<(String, Store)> = s["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let config = StoreConfig {
                    global_segment_size: c["global_segment_size"].as_u64().unwrap(),
                    local_buffer_size: c["local_buffer_size"].as_u64().unwrap(),
                    protocol: c["protocol"].as_str().unwrap().to_owned(),
                    ..StoreConfig::loopback(format!("127.0.0.1:{}", master.rpc_port))
                };
                let store = Store::connect(&mooncake_sos::API, &config)
                    .unwrap_or_else(|e| panic!("scenario {name}: {}: setup: {e}", c["name"]));
                (c["name"].as_str().unwrap().to_owned(), store)
            })
            .collect();
        let store = |client: &str| -> &Store {
            &clients.iter().find(|(n, _)| n == client).expect("client").1
        };
        match consumer::run(&module, &s, store) {
            Outcome::Passed => passed.push(name),
            Outcome::NotRun(why) => panic!("{name}: not run ({why})"),
        }
        // Closed while the master is up (Drop), the last client first.
        for (_, store) in clients.into_iter().rev() {
            store.close().expect("close");
        }
        drop(master);
    }
    // Every scenario of the manifest, in its order: the torch one (tensor-dict) included.
    let all: Vec<String> = consumer::all()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(passed, all);
    assert!(all.contains(&"tensor-dict".to_owned()), "{all:?}");
}
