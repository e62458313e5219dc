//! The runtime under load: 8 threads put and read back distinct payloads at once through the
//! generated bindings, on the embedded store and on a real mooncake_master. Every result must
//! be byte-exact, the store must hold exactly the keys the live refs name while they are all
//! alive, and nothing after cleanup.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use mooncake_sos::{MooncakeBundleTransfer, RefHandle, Store};
use mooncake_sos_runtime::Module;
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_tests::scenarios::ref_keys;
use mooncake_sos_tests::workload::{OPS_PER_ITEM, Payload, embedded_keys, get_and_compare, put};
use mooncake_sos_tests::{Master, TestEnv};

const THREADS: usize = 8;
/// Per thread: 8 x 40 items x 4 operations = 1,280 operations per store kind.
const ITEMS: usize = 40;

struct Outcome {
    ops: usize,
    mismatches: Vec<String>,
    /// Every key the refs named, read from their manifests while they were alive.
    keys: Vec<String>,
}

/// `f()`, with a panic turned into an error: a thread must reach the barriers whatever
/// happens, or the others wait for it forever.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())),
    }
}

/// Runs the workload; `held()` is how many keys the store holds, asked once while every
/// payload of every thread is alive.
fn run(module: &Module, store: &Store, held: &(dyn Fn() -> usize + Sync)) -> Outcome {
    let transfer = Python::attach(|py| {
        MooncakeBundleTransfer::new(py, module, store, &Default::default()).expect("transfer")
    });
    let ops = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let mismatches = Mutex::new(Vec::new());
    let keys = Mutex::new(Vec::new());
    let all_live = Barrier::new(THREADS);
    let counted = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (transfer, ops, failures, mismatches, keys) =
                (&transfer, &ops, &failures, &mismatches, &keys);
            let (all_live, counted) = (&all_live, &counted);
            s.spawn(move || {
                let bump = || ops.fetch_add(1, Ordering::Relaxed);
                let fail = |e: String| failures.lock().unwrap().push(e);
                let mismatch = |m: String| mismatches.lock().unwrap().push(m);
                let mut live: Vec<(Payload, RefHandle)> = Vec::new();
                for item in 0..ITEMS {
                    let p = Payload::new(thread, item);
                    // Some items in many small chunks, the rest in the default chunking.
                    let chunk = (item % 3 == 0).then_some(8192);
                    let done = guarded(|| {
                        Python::attach(|py| {
                            let h = put(py, module, transfer, &p, chunk)
                                .map_err(|e| format!("put {}: {e}", p.owner))?;
                            bump();
                            get_and_compare(py, transfer, &h, &p, None)
                                .map_err(|e| format!("get {}: {e}", p.owner))?
                                .unwrap_or_else(mismatch);
                            bump();
                            // Never wait for a lock while holding the GIL inside a call
                            // that releases it: read first, then lock.
                            let named = ref_keys(py, store, &h);
                            keys.lock().unwrap().extend(named);
                            Ok(h)
                        })
                    });
                    match done {
                        Ok(h) => live.push((p, h)),
                        Err(e) => {
                            fail(e);
                            break;
                        }
                    }
                }
                if all_live.wait().is_leader() {
                    let named = keys.lock().unwrap().len();
                    match guarded(|| Ok(held())) {
                        Ok(n) if n == named => {}
                        Ok(n) => fail(format!("{n} keys held with every ref alive, {named} named")),
                        Err(e) => fail(format!("counting keys: {e}")),
                    }
                }
                counted.wait();
                for (p, h) in &live {
                    let done = guarded(|| {
                        Python::attach(|py| {
                            get_and_compare(py, transfer, h, p, Some(vec![2, 0]))
                                .map_err(|e| format!("get rows {}: {e}", p.owner))?
                                .unwrap_or_else(mismatch);
                            bump();
                            transfer
                                .cleanup_dataproto(py, h)
                                .map_err(|e| format!("cleanup {}: {e}", p.owner))?;
                            bump();
                            Ok(())
                        })
                    });
                    done.unwrap_or_else(fail);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    let mut keys = keys.into_inner().unwrap();
    let named = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), named, "two refs named the same store key");
    Outcome {
        ops: ops.into_inner(),
        mismatches: mismatches.into_inner().unwrap(),
        keys,
    }
}

fn assert_clean_run(what: &str, out: &Outcome, started: Instant) {
    assert_eq!(
        out.ops,
        THREADS * ITEMS * OPS_PER_ITEM,
        "{what}: operations"
    );
    assert!(
        out.mismatches.is_empty(),
        "{what}: {} results differ: {:?}",
        out.mismatches.len(),
        out.mismatches
    );
    eprintln!(
        "{what}: {} operations from {THREADS} threads, {} store keys, 0 mismatches, {:.1?}",
        out.ops,
        out.keys.len(),
        started.elapsed()
    );
}

#[test]
fn eight_threads_on_the_embedded_store() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::embedded().expect("embedded store");
    let started = Instant::now();
    let out = run(&module, &store, &|| embedded_keys(&store).len());
    assert_clean_run("embedded store", &out, started);
    let left = embedded_keys(&store);
    assert!(left.is_empty(), "keys left after cleanup: {left:?}");
}

#[test]
fn eight_threads_on_a_real_master() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let master = Master::start(&env);
    let store = Store::connect(&mooncake_sos::API, &master.store_config())
        .unwrap_or_else(|e| panic!("connect: {e}\nlog: {}", master.log.display()));
    let started = Instant::now();
    let out = run(&module, &store, &|| master.key_count() as usize);
    assert_clean_run("real master", &out, started);
    let left: Vec<&String> = out
        .keys
        .iter()
        .filter(|k| store.contains(k).expect("is_exist"))
        .collect();
    assert!(left.is_empty(), "keys left after cleanup: {left:?}");
    assert_eq!(master.key_count(), 0, "the master still counts keys");
    store.close().expect("close");
}
