//! First imports from eight threads at once, in a fresh process: four load the real module,
//! two a copy under another package name that imports the same native core, two a broken copy. Every load
//! must give its true answer (concurrent first imports once tripped CPython's import
//! deadlock detection, seen once in CI in roundtrip_bad; this does not reproduce that race on
//! demand, it checks that concurrent first loads all answer): the real module and the copy
//! pass, a broken copy (no `export_ref`) fails naming it. Its own test binary, so nothing
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
    let source = std::fs::read_to_string(
        env.site_packages()
            .join("mooncake/structured_object_store.py"),
    )
    .unwrap();
    std::fs::write(pkg.join("structured_object_store.py"), &source).unwrap();
    let broken = copy.path().join("mcbroken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("__init__.py"), "").unwrap();
    let doctored = source.replace("\nexport_ref = export_dataproto_ref\n", "\n");
    assert_ne!(doctored, source, "the real module defines export_ref");
    std::fs::write(broken.join("structured_object_store.py"), doctored).unwrap();
    let copy_spec: &'static Contract = Box::leak(Box::new(
        mooncake_sos::API.with_module("mccopy.structured_object_store"),
    ));
    let broken_spec: &'static Contract = Box::leak(Box::new(
        mooncake_sos::API.with_module("mcbroken.structured_object_store"),
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
                    let spec = match i % 4 {
                        0 | 1 => &mooncake_sos::API,
                        2 => copy_spec,
                        _ => broken_spec,
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
    for (i, result) in results.iter().enumerate() {
        match (i % 4, result) {
            (3, Err(e)) => assert!(
                e.contains("mcbroken.structured_object_store") && e.contains("export_ref: missing"),
                "load {i}: {e}"
            ),
            (3, Ok(())) => panic!("load {i}: the broken copy passed"),
            (_, Err(e)) => panic!("load {i} failed: {e}"),
            (_, Ok(())) => {}
        }
    }
}
