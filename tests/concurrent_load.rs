//! First imports from eight threads at once, in a fresh process: four load the real module,
//! four a copy under another package name that imports the same native core. Every load
//! must give its true answer (concurrent first imports once tripped CPython's import
//! deadlock detection, seen once in CI in roundtrip_bad; this does not reproduce that race on
//! demand, it checks that concurrent first loads all answer). Its own test binary, so nothing
//! has imported the module before.

use mooncake_sos::PythonEnv;
use mooncake_sos_runtime::Contract;
use mooncake_sos_tests::TestEnv;
use std::sync::Barrier;

#[test]
fn eight_threads_load_at_once() {
    let env = TestEnv::get();
    let copy = tempfile::tempdir().unwrap();
    let pkg = copy.path().join("mccopy");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::copy(
        env.site_packages()
            .join("mooncake/structured_object_store.py"),
        pkg.join("structured_object_store.py"),
    )
    .unwrap();
    let copy_spec: &'static Contract = Box::leak(Box::new(
        mooncake_sos::API.with_module("mccopy.structured_object_store"),
    ));
    let mut penv = PythonEnv::venv(&env.venv);
    penv.extra_paths.push(copy.path().to_path_buf());
    let barrier = Barrier::new(8);
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (barrier, penv) = (&barrier, &penv);
                s.spawn(move || {
                    barrier.wait();
                    let spec = if i % 2 == 0 {
                        &mooncake_sos::API
                    } else {
                        copy_spec
                    };
                    mooncake_sos_runtime::Module::load(spec, penv)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} of 8 loads failed: {failures:#?}",
        failures.len()
    );
}
