//! The ROCm recipe (docker/Dockerfile.rocm: fill region and check step) built for real by
//! `docker/build.py rocm720-mi35x` on the stand-in base of scripts/make-base-images.sh: a
//! "source build" of mooncake (the 0.3.12.post1 core's native files, its *.py files missing
//! but two the build installed), the fill downloading from a PEP 503 index of the local
//! wheels on 127.0.0.1. Then the built image in containers on a network of the project's
//! own: a mooncake_master and two clients with the consumer's call shapes, and the master
//! stopped mid-run.

use mooncake_sos_manifest::model::Layer;
use mooncake_sos_tests::docker::fixtures::{
    api, from_the_smoke, scenarios_ran, sha256_hex, shim_ok, wheel_python_files, wheels_index,
};
use mooncake_sos_tests::docker::{
    Bases, Build, Client, Image, LocalIndex, Network, StoreMaster, Topology, derived_image,
    package_files, run_python,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// Files the stand-in's source build installed; the fill must leave them as they are.
const KEPT: [&str; 2] = ["mooncake/__init__.py", "mooncake/mooncake_config.py"];
const KEPT_MARK: &str = "# installed by the source build (stand-in)";
const FAIL_WITHIN: Duration = Duration::from_secs(5);

fn index() -> &'static LocalIndex {
    static INDEX: OnceLock<LocalIndex> = OnceLock::new();
    INDEX.get_or_init(wheels_index)
}

fn fill_version() -> String {
    let api = api();
    let image = api.images.iter().find(|i| i.id == "rocm").expect("rocm");
    match &image.layer {
        Layer::Fill { version, .. } => version.clone(),
        _ => panic!("[image.rocm] is not a fill"),
    }
}

fn fill() -> Build {
    Build::rocm().pip_index(index())
}

/// The shipped recipe built once for this test binary: (image, build log).
fn built() -> &'static (Image, String) {
    static BUILT: OnceLock<(Image, String)> = OnceLock::new();
    BUILT.get_or_init(|| fill().run().expect_ok())
}

/// Item 6 of issue #14: the ROCm fill passes the consumer's scenarios on its own core, in the
/// build's check step (the shim's --smoke, a master of the image's wheel on loopback).
#[test]
fn the_rocm_fill_passes_the_consumers_scenarios_on_its_core() {
    let (_image, log) = built();
    let after = from_the_smoke(log);
    assert!(after.contains(" 0 failed"), "{after}");
    // The last line says what ran: never "passed" for a scenario that did not run. The ROCm
    // stand-in has no torch: its one torch scenario is not run, the others pass.
    let ran = scenarios_ran(after);
    let torch = api().scenarios.iter().filter(|s| s.needs_torch).count();
    assert_eq!(
        ran,
        format!(
            "{} passed, {torch} not run (needs torch)",
            api().scenarios.len() - torch
        )
    );
    assert_eq!(torch, 1);
    assert!(
        after.contains(&format!(
            "mooncake-sos check: passed, the native core loaded, the consumer's scenarios (--smoke): {ran}; not proved: "
        )),
        "{ran}: {after}"
    );
}

#[test]
fn fill_restores_the_module_and_leaves_every_native_file_byte_identical() {
    let bases = Bases::get();
    let before = package_files(&bases.rocm);
    for must in [
        "mooncake/store.so",
        "mooncake/engine.so",
        "mooncake/mooncake_master",
    ] {
        assert!(
            before.native.contains_key(must),
            "{must}: {:?}",
            before.native
        );
    }
    let kept: Vec<&str> = before.python.keys().map(String::as_str).collect();
    assert_eq!(kept, KEPT, "the stand-in's source build");
    let (ok, out) = run_python(&bases.rocm, "import mooncake.structured_object_store");
    assert!(!ok && out.contains("ModuleNotFoundError"), "{out}");

    let (image, log) = built();
    assert!(
        log.contains("mooncake-sos check: every library of /usr/local/lib/python3.11/dist-packages/mooncake/store.so, /usr/local/lib/python3.11/dist-packages/mooncake/engine.so resolves: loading the native core"),
        "{log}"
    );
    assert!(log.contains(&shim_ok(&api())), "{log}");
    assert!(
        log.contains("mooncake-sos check: passed, the native core loaded"),
        "{log}"
    );
    let after = package_files(&image.tag);
    assert_eq!(after.dir, before.dir);
    assert_eq!(after.native, before.native, "a native file changed");
    for k in KEPT {
        assert_eq!(after.python[k], before.python[k], "the fill overwrote {k}");
    }
    let (ok, out) = run_python(
        &image.tag,
        &format!("print(open('{}/__init__.py').read())", after.dir),
    );
    assert!(ok && out.contains(KEPT_MARK), "{out}");
    // Every other *.py is the fill wheel's, byte for byte; nothing else appeared.
    let version = fill_version();
    let wheel: BTreeMap<String, String> = wheel_python_files(&version)
        .into_iter()
        .map(|(name, bytes)| (name, sha256_hex(&bytes)))
        .collect();
    for (name, hash) in &wheel {
        if !KEPT.contains(&name.as_str()) {
            assert_eq!(
                after.python.get(name),
                Some(hash),
                "{name} is not the wheel's"
            );
        }
    }
    let extra: Vec<_> = after
        .python
        .keys()
        .filter(|k| !wheel.contains_key(*k))
        .collect();
    assert!(extra.is_empty(), "files the wheel does not have: {extra:?}");
    // The step left nothing in /tmp; the labels name the base and the fill.
    let (ok, out) = run_python(&image.tag, "import os; print(sorted(os.listdir('/tmp')))");
    assert!(ok && out.trim() == "[]", "left in /tmp: {out}");
    let labels = image.labels();
    assert_eq!(labels["org.opencontainers.image.base.name"], bases.rocm);
    assert_eq!(labels["io.mooncake-sos.fill-version"], version);
    // The fill read the local index, not PyPI.
    let requests = index().requests();
    assert!(
        requests
            .iter()
            .any(|r| r == "/simple/mooncake-transfer-engine-non-cuda/"),
        "{requests:?}"
    );
}

#[test]
fn fill_from_a_release_without_the_api_fails_the_check_naming_it() {
    // A source build that installed no Python file: the old release's own __init__.py lands.
    let bases = Bases::get();
    let bare = derived_image(
        &bases.rocm,
        "rm /usr/local/lib/python3.11/dist-packages/mooncake/*.py",
    );
    let failure = fill()
        .arg("SGLANG_IMAGE_TAG", bare.tag_only())
        .arg("MOONCAKE_VERSION", "0.3.11.post1")
        .run()
        .expect_failure();
    assert!(failure.instruction.contains("say() {"), "{failure}");
    failure.assert_says(
        "ImportError: cannot import name 'FieldSchema' from 'mooncake.structured_object_store'",
    );
}

#[test]
fn fill_of_a_version_the_index_lacks_fails_that_step() {
    let failure = fill()
        .arg("MOONCAKE_VERSION", "0.0.0")
        .run()
        .expect_failure();
    assert!(
        failure.instruction.contains("pip install") && failure.instruction.contains("--target"),
        "{failure}"
    );
    failure
        .assert_says("No matching distribution found for mooncake-transfer-engine-non-cuda==0.0.0");
}

/// A put in one container, the handle to another, a byte-exact get there, cleanup: the
/// master holds no key afterwards.
#[test]
fn round_trip_across_containers_on_a_network_of_our_own() {
    let (image, _) = built();
    let topology = Topology::Bridge(Network::create());
    let master = StoreMaster::start(&image.tag, &topology);
    let env = [("SEED", "11"), ("MIB", "16")];
    let mut putter = Client::start(&image.tag, &topology, &master, "put", &env, None);
    let handle = putter.wait_for("handle: ", Duration::from_secs(120));
    let json: serde_json::Value = serde_json::from_str(&handle).expect("a JSON handle");
    assert_eq!(json["type"], "mooncake_dataproto_ref");
    assert_eq!(json["namespace"], "miles");
    assert!(master.key_count() > 0, "the put left no key");

    let getter = Client::start(
        &image.tag,
        &topology,
        &master,
        "get",
        &[("SEED", "11"), ("MIB", "16"), ("HANDLE", handle.as_str())],
        None,
    );
    let (ok, lines) = getter.finish(Duration::from_secs(120));
    let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    assert!(ok, "the get failed: {text:?}");
    assert!(
        text.iter().any(|l| l.starts_with("get ok: 16 MiB")),
        "{text:?}"
    );
    assert_eq!(master.key_count(), 0, "keys left after cleanup_dataproto");
    let (ok, lines) = putter.finish(Duration::from_secs(60));
    assert!(ok, "the putter: {lines:?}");
}

/// Two clients put, get and compare in a loop; the master is stopped: each fails with an
/// error within 5 s, and no get ever returned wrong bytes.
#[test]
fn master_stopped_mid_run_fails_every_client_within_5_s() {
    let (image, _) = built();
    let topology = Topology::Bridge(Network::create());
    let master = StoreMaster::start(&image.tag, &topology);
    let env = [("SEED", "5"), ("MIB", "4"), ("DEADLINE", "3")];
    let mut clients: Vec<Client> = (0..2)
        .map(|_| Client::start(&image.tag, &topology, &master, "cycle", &env, None))
        .collect();
    for c in &mut clients {
        c.wait_for("cycle 3 ok", Duration::from_secs(120));
    }
    let stopped_at = SystemTime::now();
    master.stop();
    for c in clients {
        let (ok, lines) = c.finish(Duration::from_secs(60));
        assert!(!ok, "a client went on after the master stopped: {lines:?}");
        let (_, last) = lines.last().expect("a line");
        assert!(last.starts_with("error: "), "{lines:?}");
        assert!(
            !lines.iter().any(|(_, l)| l.contains("payload differs")),
            "{lines:?}"
        );
        // The client's own clock (the container's is the host's) says when it failed.
        let at: f64 = last
            .rsplit_once("(at ")
            .and_then(|(_, t)| t.trim_end_matches(')').parse().ok())
            .unwrap_or_else(|| panic!("no time in {last:?}"));
        let since = at
            - stopped_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64();
        assert!(
            since < FAIL_WITHIN.as_secs_f64(),
            "failed {since:.2} s after the stop: {last}"
        );
    }
}

/// (median put seconds, median get seconds) of `rounds` x `repeat` puts and gets of `mib`
/// MiB between two client containers in `topology`.
fn round_trip_times(
    image: &str,
    topology: &Topology,
    mib: usize,
    repeat: usize,
) -> (Vec<f64>, Vec<f64>) {
    let master = StoreMaster::start(image, topology);
    let (mib_s, repeat_s) = (mib.to_string(), repeat.to_string());
    let env = [
        ("SEED", "9"),
        ("MIB", mib_s.as_str()),
        ("REPEAT", repeat_s.as_str()),
        ("DEADLINE", "60"),
    ];
    let mut putter = Client::start(image, topology, &master, "put", &env, None);
    let handles = putter.wait_for_n("handle: ", repeat, Duration::from_secs(300));
    let puts: Vec<f64> = putter
        .wait_for_n("put ok: ", repeat, Duration::from_secs(1))
        .iter()
        .map(|l| seconds(l))
        .collect();
    let list = format!("[{}]", handles.join(","));
    let getter = Client::start(
        image,
        topology,
        &master,
        "get",
        &[
            ("SEED", "9"),
            ("MIB", mib_s.as_str()),
            ("HANDLE", list.as_str()),
            ("DEADLINE", "60"),
        ],
        None,
    );
    let (ok, lines) = getter.finish(Duration::from_secs(300));
    assert!(ok, "{lines:?}");
    let gets: Vec<f64> = lines
        .iter()
        .filter_map(|(_, l)| l.strip_prefix("get ok: "))
        .map(seconds)
        .collect();
    assert_eq!(gets.len(), repeat, "{lines:?}");
    assert_eq!(master.key_count(), 0);
    let (ok, _) = putter.finish(Duration::from_secs(60));
    assert!(ok);
    (puts, gets)
}

/// `... in S s...` -> S
fn seconds(line: &str) -> f64 {
    line.split(" in ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no time in {line:?}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// scripts/bench-docker.sh: 64 MiB between containers on the project's bridge network and
/// the same programs on the host's loopback, alternating, side by side in one run.
#[test]
#[ignore = "a benchmark: scripts/bench-docker.sh runs it"]
fn bench_round_trip_64_mib_across_containers_and_on_loopback() {
    const MIB: usize = 64;
    let (image, _) = built();
    let mut times: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for _ in 0..2 {
        for (name, topology) in [
            (
                "bridge network (3 containers)",
                Topology::Bridge(Network::create()),
            ),
            ("host loopback (3 containers)", Topology::Loopback),
        ] {
            let (puts, gets) = round_trip_times(&image.tag, &topology, MIB, 5);
            let entry = times.entry(name).or_default();
            entry.0.extend(puts);
            entry.1.extend(gets);
        }
    }
    let gib = MIB as f64 / 1024.0;
    println!("| topology | put median | put GiB/s | get median | get GiB/s | n |");
    println!("|---|---|---|---|---|---|");
    let mut medians = Vec::new();
    for (name, (puts, gets)) in &times {
        let (p, g) = (median(puts.clone()), median(gets.clone()));
        medians.push((p, g));
        println!(
            "| {name} | {:.1} ms | {:.2} | {:.1} ms | {:.2} | {} |",
            p * 1e3,
            gib / p,
            g * 1e3,
            gib / g,
            puts.len()
        );
    }
    let ((bp, bg), (lp, lg)) = (medians[0], medians[1]);
    println!(
        "bridge / loopback time: put {:.2}x, get {:.2}x",
        bp / lp,
        bg / lg
    );
}
