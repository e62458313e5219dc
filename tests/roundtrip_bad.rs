//! Bad cases, each with a clear error and no hang: a module missing a symbol, a positional-only
//! parameter, a changed default or a reordered parameter (temp package trees with doctored
//! copies of the real module, checked by the shim's checker that `load` runs), handles of the wrong type/version/kind/
//! section/stage (in Rust and through Python's import_ref), and key collisions on the embedded
//! store (the real master's are in roundtrip_master: one native client per process).

use std::path::PathBuf;

use mooncake_sos::{Error, MooncakeBundleTransfer, PutOptions, PythonEnv, RefHandle, Store};
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::{Contract, Module, status};
use mooncake_sos_tests::data::Sample;
use mooncake_sos_tests::doctored::DOCTORINGS;
use mooncake_sos_tests::scenarios::{raw_get, raw_put};
use mooncake_sos_tests::{StandInNative, TestEnv};
use serde_json::{Value, json};

fn load() -> (TestEnv, Module) {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    (env, module)
}

/// The real module's source.
fn real_module(env: &TestEnv) -> String {
    let real = env
        .site_packages()
        .join("mooncake/structured_object_store.py");
    std::fs::read_to_string(&real).expect("read the real module")
}

/// A package `package` (in a temp dir to put on sys.path) holding `source` as its
/// structured_object_store.
fn tree(package: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pkg = dir.path().join(package);
    std::fs::create_dir(&pkg).expect("mkdir");
    std::fs::write(pkg.join("__init__.py"), "").expect("write");
    std::fs::write(pkg.join("structured_object_store.py"), source).expect("write");
    let root = dir.path().to_path_buf();
    (dir, root)
}

/// Loads `package.structured_object_store` (from `root`) with the shipped contract; its misses.
fn load_error(env: &TestEnv, package: &str, root: PathBuf) -> mooncake_sos_runtime::SpecMismatch {
    let module: &'static str =
        Box::leak(format!("{package}.structured_object_store").into_boxed_str());
    let contract: &'static Contract = Box::leak(Box::new(mooncake_sos::API.with_module(module)));
    let mut penv = PythonEnv::venv(&env.venv);
    penv.extra_paths.push(root);
    match Module::load(contract, &penv) {
        Ok(_) => panic!("{module} passed the check"),
        Err(Error::Spec(s)) => *s,
        Err(other) => panic!("expected a spec mismatch, got {other}"),
    }
}

/// A package `mcbroken` whose structured_object_store lacks `export_ref` and whose
/// `cleanup_dataproto` grew a required parameter.
fn broken_tree(env: &TestEnv) -> (tempfile::TempDir, PathBuf) {
    let source = real_module(env);
    assert!(
        source.contains("\nexport_ref = export_dataproto_ref\n"),
        "the pinned module defines export_ref"
    );
    let doctored = source
        .replace("\nexport_ref = export_dataproto_ref\n", "\n")
        .replace(
            "def cleanup_dataproto(self, ref",
            "def cleanup_dataproto(self, strict, ref",
        );
    assert_ne!(doctored, source);
    tree("mcbroken", &doctored)
}

#[test]
fn module_missing_a_symbol_fails_at_load() {
    let env = TestEnv::get();
    let (_dir, root) = broken_tree(&env);
    let err = load_error(&env, "mcbroken", root);
    let text = err.to_string();
    assert_eq!(err.misses.len(), 2, "{text}");
    assert_eq!(err.module, "mcbroken.structured_object_store");
    assert!(
        text.contains("mcbroken.structured_object_store does not provide the API")
            && err.misses[0].starts_with("MooncakeBundleTransfer.cleanup_dataproto: "),
        "{text}"
    );
    assert!(
        err.misses[0].contains("expected (self, ref)")
            && err.misses[0].contains("found (self, strict, ref"),
        "{text}"
    );
    assert!(err.misses[1].contains("export_ref: missing"), "{text}");
    assert!(err.pin.contains(mooncake_sos::UPSTREAM_COMMIT), "{text}");
    assert!(
        err.installed
            .contains("mooncake-transfer-engine-non-cuda 0.3.12.post1"),
        "{text}"
    );
    assert!(text.contains(&format!("fix:       {}", err.fix)), "{text}");
}

/// The stricter rules, on the Rust path: a positional-only parameter, a changed default and a
/// reordered parameter in a copy of the real module each fail `load` with exactly that miss
/// (tests/shim.rs proves the same on Python's import).
#[test]
fn a_positional_only_parameter_a_changed_default_and_a_reordered_parameter_fail_at_load() {
    let env = TestEnv::get();
    let source = real_module(&env);
    for (i, d) in DOCTORINGS.iter().enumerate() {
        let package = format!("mcdoctored{i}");
        let (_dir, root) = tree(&package, &d.apply(&source));
        let err = load_error(&env, &package, root);
        assert_eq!(err.misses.len(), 1, "{}: {err}", d.what);
        assert!(
            err.misses[0].starts_with(d.miss),
            "{}: want {:?}, got {err}",
            d.what,
            d.miss
        );
    }
}

#[test]
fn the_real_module_passes_the_check() {
    let (env, module) = load();
    // The module that passed is the venv's real file, not some other one on sys.path.
    let file: String = Python::attach(|py| {
        module
            .bind(py)
            .getattr("__file__")
            .and_then(|f| f.extract())
            .expect("__file__")
    });
    let real = env
        .site_packages()
        .join("mooncake/structured_object_store.py");
    assert_eq!(
        std::fs::canonicalize(&file).expect("the module's file"),
        std::fs::canonicalize(&real).expect("the real file")
    );
}

/// A handle exported from a real put on the embedded store.
fn exported_handle(module: &Module) -> Value {
    Python::attach(|py| {
        let store = Store::embedded().expect("store");
        let t =
            MooncakeBundleTransfer::new(py, module, &store, &Default::default()).expect("transfer");
        let put = PutOptions {
            r#type: Some("dict".into()),
            field_schemas: Some(Sample::schemas()),
            ..Default::default()
        };
        let r = t.put(py, &Sample::new(2).record(py), &put).expect("put");
        mooncake_sos::export_ref(py, module, &r).expect("export_ref")
    })
}

fn bad_variants(good: &Value) -> Vec<(&'static str, Value, &'static str)> {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        v
    };
    let first_field = good["field_index"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("a field");
    let ff = first_field.clone();
    let ff2 = first_field.clone();
    vec![
        (
            "type",
            with(&|v| v["type"] = json!("something_else")),
            "not a Mooncake DataProto ref handle",
        ),
        (
            "version",
            with(&|v| v["version"] = json!(2)),
            "unsupported DataProto ref handle version",
        ),
        (
            "kind",
            with(&|v| v["kind"] = json!("flat")),
            "unsupported DataProto ref handle kind",
        ),
        (
            "section",
            with(&move |v| v["field_index"][&ff]["section"] = json!("meta_info")),
            "invalid DataProto field section",
        ),
        (
            "stage",
            with(&move |v| v["field_index"][&ff2]["stage"] = json!("nope")),
            "references unknown stage",
        ),
    ]
}

#[test]
fn bad_handles_are_refused_in_rust_and_in_python() {
    let (_env, module) = load();
    let good = exported_handle(&module);
    RefHandle::from_value(good.clone()).expect("the exported handle is valid");
    for (what, bad, message) in bad_variants(&good) {
        let text = serde_json::to_string(&bad).expect("json");
        match RefHandle::from_json(&text) {
            Err(Error::Handle(m)) => assert!(m.contains(message), "{what}: {m}"),
            other => panic!("{what}: RefHandle accepted a bad handle: {other:?}"),
        }
        // The same handle through upstream's import_ref gives the same verdict.
        let err = Python::attach(|py| {
            let loaded = py
                .import("json")
                .and_then(|j| j.call_method1("loads", (text.as_str(),)))
                .expect("loads");
            mooncake_sos::import_ref(py, &module, &loaded)
                .err()
                .map(|e| e.to_string())
        });
        let err = err.unwrap_or_else(|| panic!("{what}: import_ref accepted a bad handle"));
        assert!(
            err.contains("ValueError") && err.contains(message),
            "{what}: {err}"
        );
    }
    assert!(matches!(
        RefHandle::from_json("{not json"),
        Err(Error::Handle(_))
    ));
}

#[test]
fn embedded_store_refuses_a_key_collision_and_keeps_the_first_value() {
    let _ = load();
    Python::attach(|py| {
        let store = Store::embedded().expect("store");
        assert_eq!(raw_put(py, &store, "k", b"first"), status::OK);
        assert_eq!(
            raw_put(py, &store, "k", b"second"),
            status::OBJECT_ALREADY_EXISTS
        );
        assert_eq!(raw_get(py, &store, "k"), b"first");
    });
}

#[test]
fn colliding_transfer_keys_on_the_embedded_store_fail_the_second_put_and_keep_the_first() {
    let (_env, module) = load();
    Python::attach(|py| {
        let store = Store::embedded().expect("store");
        let t = MooncakeBundleTransfer::new(py, &module, &store, &Default::default())
            .expect("transfer");
        let (sample, first, second) =
            mooncake_sos_tests::data::puts_with_one_object_id(py, &module, &t);
        let first = first.expect("first put");
        let err = match second {
            Ok(_) => panic!("a colliding put succeeded"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("failed") && err.contains(&status::OBJECT_ALREADY_EXISTS.to_string()),
            "{err}"
        );
        let got = t
            .get(
                py,
                &first,
                &mooncake_sos::GetOptions {
                    r#type: Some("dict".into()),
                    ..Default::default()
                },
            )
            .expect("get first");
        let got = mooncake_sos::Record::from_object(&got).expect("dict");
        sample.check(py, &got, &[0, 1, 2], None);
        t.cleanup_dataproto(py, &first).expect("cleanup");
        assert_eq!(store.embedded_store(py).expect("embedded").usage(), (0, 0));
    });
}

/// A native core whose pybind11 docstrings lack an overload, and an instance lacking an
/// attribute: both reported, with what was found. The stand-in is the real core with those two
/// things doctored (every other requirement is the real core's).
#[test]
fn native_requirements_are_checked() {
    let fake = StandInNative::new(
        &TestEnv::get(),
        "mcfake_native",
        "from mooncake.store import *  # noqa: F403\nimport mooncake.store as _real\n\n\
         class MooncakeDistributedStore(_real.MooncakeDistributedStore):\n    def setup(self, *a):\n        \
         \"\"\"setup(self: mcfake_native.MooncakeDistributedStore, local_hostname: str) -> int\"\"\"\n\n\
         class ReplicateConfig:\n    def __init__(self):\n        \
         \"\"\"__init__(self: mcfake_native.ReplicateConfig) -> None\"\"\"\n",
    );
    let err = match Module::load(fake.contract, &fake.python) {
        Err(Error::Spec(s)) => s,
        Err(other) => panic!("expected a spec mismatch, got {other}"),
        Ok(_) => panic!("a native core without the overload passed"),
    };
    assert_eq!(err.misses.len(), 2, "{err}");
    assert!(
        err.misses[0]
            .contains("expected overload (self, config: dict), found (local_hostname: str)"),
        "{err}"
    );
    assert!(
        err.misses[1].contains("mcfake_native.ReplicateConfig.replica_num: missing"),
        "{err}"
    );
}

/// A module that is not installed at all: one miss naming the import error, the pin and
/// what is installed.
#[test]
fn a_missing_module_names_the_import_error() {
    let env = TestEnv::get();
    let contract: &'static Contract = Box::leak(Box::new(
        mooncake_sos::API.with_module("no_such_pkg.structured_object_store"),
    ));
    let err = match Module::load(contract, &env.python_env()) {
        Err(Error::Spec(s)) => s,
        Err(other) => panic!("expected a spec mismatch, got {other}"),
        Ok(_) => panic!("loaded a module that does not exist"),
    };
    assert!(err.misses[0].contains("ModuleNotFoundError"), "{err}");
    assert!(
        err.to_string()
            .contains("installed: mooncake-transfer-engine-non-cuda 0.3.12.post1"),
        "{err}"
    );
}
