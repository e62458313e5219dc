//! Failure injection: a real mooncake_master killed (SIGKILL) while 4 threads put and get
//! through the bindings, then restarted on its ports; and puts into an embedded store that
//! runs out of space partway through a put. Nothing may come back silently wrong: every call
//! either returns byte-exact data or fails with an error naming the call.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mooncake_sos::{MooncakeBundleTransfer, Store, StoreConfig};
use mooncake_sos_runtime::pyo3::Python;
use mooncake_sos_tests::workload::{Payload, embedded_keys, get_and_compare, put};
use mooncake_sos_tests::{Master, TestEnv};

const WORKERS: usize = 4;
const FAIL_WITHIN: Duration = Duration::from_secs(5);

/// One binding call a worker made.
#[derive(Debug)]
struct Call {
    what: &'static str,
    started: Instant,
    took: Duration,
    /// Started once the master was dead (killed and reaped).
    after_kill: bool,
    error: Option<String>,
}

/// What a worker saw: every call, and any result that came back with the wrong bytes.
struct Worker {
    calls: Vec<Call>,
    mismatches: Vec<String>,
}

/// Puts, gets and cleans up until a call that started after the kill has failed.
fn work_until_a_call_after_the_kill_fails(
    module: &mooncake_sos_runtime::Module,
    t: &MooncakeBundleTransfer,
    worker: usize,
    killed: &OnceLock<Instant>,
    ops: &AtomicUsize,
) -> Worker {
    let mut w = Worker {
        calls: Vec::new(),
        mismatches: Vec::new(),
    };
    let call = |w: &mut Worker, what, f: &mut dyn FnMut() -> Result<(), String>| {
        let after_kill = killed.get().is_some();
        let started = Instant::now();
        let error = f().err();
        let failed = error.is_some();
        ops.fetch_add(1, Ordering::Relaxed);
        w.calls.push(Call {
            what,
            started,
            took: started.elapsed(),
            after_kill,
            error,
        });
        (failed, after_kill)
    };
    for item in 0.. {
        // Calls that keep succeeding on a dead master would loop forever: stop, and let the
        // caller's assertion on the first call after the kill report it.
        if w.calls.iter().filter(|c| c.after_kill).count() > 30 {
            break;
        }
        let p = Payload::new(worker, item);
        let mut handle = None;
        let (failed, after) = call(&mut w, "put", &mut || {
            handle = Some(
                Python::attach(|py| put(py, module, t, &p, Some(16384)))
                    .map_err(|e| e.to_string())?,
            );
            Ok(())
        });
        let Some(h) = handle.filter(|_| !failed) else {
            if after { break } else { continue }
        };
        let mut verdict = Ok(());
        let (failed, after) = call(&mut w, "get", &mut || {
            verdict = Python::attach(|py| get_and_compare(py, t, &h, &p, None))
                .map_err(|e| e.to_string())?;
            Ok(())
        });
        if let Err(m) = verdict {
            w.mismatches.push(m);
        }
        if failed {
            if after { break } else { continue }
        }
        let (failed, after) = call(&mut w, "cleanup", &mut || {
            Python::attach(|py| t.cleanup_dataproto(py, &h)).map_err(|e| e.to_string())
        });
        if failed && after {
            break;
        }
    }
    w
}

#[test]
fn a_master_killed_mid_run_fails_fast_and_a_restart_serves_new_calls() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let mut master = Master::start(&env);
    // P2P handshake metadata, the consumer's default: the client needs only the master.
    let config = StoreConfig::loopback(format!("127.0.0.1:{}", master.rpc_port));
    let store = Store::connect(&mooncake_sos::API, &config)
        .unwrap_or_else(|e| panic!("connect: {e}\nlog: {}", master.log.display()));
    let t =
        Python::attach(|py| MooncakeBundleTransfer::new(py, &module, &store, &Default::default()))
            .expect("transfer");
    let kept = Payload::new(99, 0);
    let kept_ref = Python::attach(|py| {
        let h = put(py, &module, &t, &kept, None).expect("put before the kill");
        get_and_compare(py, &t, &h, &kept, None)
            .expect("get")
            .expect("byte-exact");
        h
    });

    let ops = AtomicUsize::new(0);
    let killed = OnceLock::new();
    let (killed_at, workers) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (module, t, killed, ops) = (&module, &t, &killed, &ops);
                s.spawn(move || work_until_a_call_after_the_kill_fails(module, t, w, killed, ops))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while ops.load(Ordering::Relaxed) < 60 {
            assert!(Instant::now() < deadline, "the workers made no progress");
            std::thread::sleep(Duration::from_millis(10));
        }
        master.kill();
        let killed_at = *killed.get_or_init(Instant::now);
        let workers: Vec<Worker> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        (killed_at, workers)
    });
    let mut in_flight = Duration::ZERO;
    for (i, w) in workers.iter().enumerate() {
        for c in w
            .calls
            .iter()
            .filter(|c| !c.after_kill && c.started + c.took > killed_at)
        {
            let waited = (c.started + c.took).duration_since(killed_at);
            in_flight = in_flight.max(waited);
            eprintln!(
                "worker {i}: {} in flight at the kill ended {waited:.2?} after it: {:?}",
                c.what, c.error
            );
        }
        let next = w
            .calls
            .iter()
            .find(|c| c.after_kill)
            .unwrap_or_else(|| panic!("worker {i} made no call after the kill"));
        let error = next
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("worker {i}: {} after the kill succeeded", next.what));
        eprintln!(
            "worker {i}: next call, {}, failed in {:.2?}: {error}",
            next.what, next.took
        );
    }
    for (i, w) in workers.iter().enumerate() {
        assert!(
            w.mismatches.is_empty(),
            "worker {i} got wrong data: {:?}",
            w.mismatches
        );
        let next = w
            .calls
            .iter()
            .find(|c| c.after_kill)
            .expect("a call after the kill");
        let error = next.error.as_deref().unwrap_or_default();
        assert!(
            next.took < FAIL_WITHIN,
            "worker {i}: the next call took {:?}: {error}",
            next.took
        );
        assert!(
            error.contains("MooncakeBundleTransfer."),
            "worker {i}: unclear error: {error}"
        );
    }
    assert!(
        in_flight < Duration::from_secs(90),
        "a call in flight at the kill hung for {in_flight:?}"
    );

    // A ref the dead master held: an error, not empty or stale data.
    let started = Instant::now();
    let dead = Python::attach(|py| get_and_compare(py, &t, &kept_ref, &kept, None));
    assert!(
        started.elapsed() < FAIL_WITHIN,
        "get with the master down took {:?}",
        started.elapsed()
    );
    match dead {
        Err(e) => eprintln!("get with the master down: {e}"),
        Ok(v) => panic!("get with the master down returned data: {v:?}"),
    }

    master.restart(&env);
    let restarted = Instant::now();
    // The client re-mounts its segment on its next heartbeat; until then puts are refused.
    let first = loop {
        let p = Payload::new(50, 0);
        match Python::attach(|py| put(py, &module, &t, &p, None)) {
            Ok(h) => break (p, h),
            Err(e) => {
                assert!(
                    restarted.elapsed() < Duration::from_secs(30),
                    "no put works 30 s after the restart: {e}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    let recovered = restarted.elapsed();
    let mut items = vec![first];
    for item in 1..20 {
        let p = Payload::new(50, item);
        let h = Python::attach(|py| put(py, &module, &t, &p, Some(16384)))
            .expect("put after the restart");
        items.push((p, h));
    }
    for (p, h) in &items {
        Python::attach(|py| {
            get_and_compare(py, &t, h, p, None)
                .expect("get after the restart")
                .expect("byte-exact");
            get_and_compare(py, &t, h, p, Some(vec![1]))
                .expect("get rows")
                .expect("byte-exact");
            t.cleanup_dataproto(py, h)
                .expect("cleanup after the restart");
        });
    }
    // The restarted master starts empty: the old ref is gone, and says so.
    let lost = Python::attach(|py| get_and_compare(py, &t, &kept_ref, &kept, None));
    assert!(
        lost.is_err(),
        "a ref from before the restart read back: {lost:?}"
    );
    assert_eq!(master.key_count(), 0, "keys left on the restarted master");
    eprintln!(
        "after the restart: first put after {recovered:.2?}, 20 items round-tripped, 0 keys left"
    );
    drop(store);
}

/// Puts into embedded stores too small for the payload, at 41 capacities from 0 to one byte
/// short: each put fails partway through its chunk writes, returns no ref, and leaves no key.
#[test]
fn a_put_that_runs_out_of_space_halfway_returns_no_ref_and_leaks_no_key() {
    let env = TestEnv::get();
    let module = mooncake_sos::load(&env.python_env()).unwrap_or_else(|e| panic!("{e}"));
    let p = Payload::new(7, 3);
    let chunk = Some(4096);
    let (keys, bytes) = Python::attach(|py| {
        let store = Store::embedded().expect("store");
        let t = MooncakeBundleTransfer::new(py, &module, &store, &Default::default())
            .expect("transfer");
        let h = put(py, &module, &t, &p, chunk).expect("put");
        let usage = store.embedded_store(py).expect("embedded").usage();
        t.cleanup_dataproto(py, &h).expect("cleanup");
        usage
    });
    assert!(keys > 10, "the payload spans many keys: {keys}");
    let mut messages = std::collections::BTreeSet::<String>::new();
    let steps = 40;
    for i in 0..=steps {
        let capacity = (bytes - 1) * i / steps;
        let store = Store::embedded_with_capacity(capacity).expect("store");
        let outcome = Python::attach(|py| {
            let t = MooncakeBundleTransfer::new(py, &module, &store, &Default::default())
                .expect("transfer");
            put(py, &module, &t, &p, chunk)
        });
        match outcome {
            Ok(h) => {
                panic!("a put into {capacity} of the {bytes} bytes it needs returned a ref: {h:?}")
            }
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains("MooncakeBundleTransfer.put"),
                    "unclear error: {text}"
                );
                // Where it failed: the key after `bundle/<namespace>/<ref id>/`.
                let point = text
                    .split("failed for ")
                    .nth(1)
                    .and_then(|k| k.splitn(4, '/').nth(3));
                messages.insert(point.unwrap_or(&text).to_owned());
            }
        }
        let left = embedded_keys(&store);
        assert!(
            left.is_empty(),
            "capacity {capacity}: {} keys leaked: {left:?}",
            left.len()
        );
        // The store is not poisoned: what fits still goes in and comes back.
        let small = Payload::new(0, 0);
        if capacity > 4 * (small.data.len() + small.blobs.concat().len()) + 65536 {
            Python::attach(|py| {
                let t = MooncakeBundleTransfer::new(py, &module, &store, &Default::default())
                    .expect("transfer");
                let h = put(py, &module, &t, &small, None).expect("a small put after a failed one");
                get_and_compare(py, &t, &h, &small, None)
                    .expect("get")
                    .expect("byte-exact");
                t.cleanup_dataproto(py, &h).expect("cleanup");
            });
            assert!(embedded_keys(&store).is_empty());
        }
    }
    eprintln!(
        "{} failed puts ({keys} keys, {bytes} bytes when whole), 0 refs, 0 keys left; \
         failed at {} different writes: {messages:?}",
        steps + 1,
        messages.len()
    );
    assert!(
        messages.len() >= 8,
        "the puts failed at too few points: {messages:?}"
    );
}
