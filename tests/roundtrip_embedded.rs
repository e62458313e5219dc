//! Round trips on the embedded store (the default when no master is configured).

use mooncake_sos::Store;
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_tests::{TestEnv, scenarios};

fn setup() -> (mooncake_sos_runtime::Module, Store) {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    (module, Store::open(None).expect("embedded store"))
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
