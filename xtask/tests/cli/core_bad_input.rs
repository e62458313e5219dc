//! Bad input to `cargo xtask core` / `matrix --core`: one clear error naming the file and
//! why, exit 2, nothing on stdout and nothing written, within a time bound.

use crate::common::cores::{
    compile_shared, cuda13_libs, cuda13_runtime_only, cuda13_wheel, make_wheel,
};
use crate::common::{Run, Sandbox, xtask};
use mooncake_sos_testkit::{wheel, wheels_dir};
use std::time::{Duration, Instant};

/// Runs xtask and checks the shape every refusal has; returns stderr.
fn refused(args: &[&str], env: &[(&str, &str)], within: Duration) -> String {
    let started = Instant::now();
    let run: Run = xtask(args, env);
    let took = started.elapsed();
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "no partial output: {run:?}");
    assert!(took < within, "took {took:?} (bound {within:?}): {run:?}");
    assert_eq!(run.stderr.matches(": error: ").count(), 1, "{run:?}");
    // A read that ran the wheel's code first says how it ran it (tests/cli/isolation.rs).
    match run.stderr.split_once('\n') {
        Some((first, rest)) if first.starts_with("the wheels' code runs ") => rest.to_owned(),
        _ => run.stderr,
    }
}

const QUICK: Duration = Duration::from_secs(30);

#[test]
fn a_pure_python_wheel_has_no_native_core() {
    let dir = tempfile::tempdir().unwrap();
    let whl = make_wheel(
        dir.path(),
        "mooncake-pure",
        "1.0",
        &[
            ("mooncake/__init__.py", b""),
            (
                "mooncake/store.py",
                b"class MooncakeDistributedStore: pass\n",
            ),
        ],
    );
    let whl = whl.display().to_string();
    let err = refused(&["core", &whl], &[], QUICK);
    assert!(
        err.starts_with(&format!(
            "{whl}: error: no native core in the wheel: no extension module for `mooncake.store`"
        )),
        "{err}"
    );
}

#[test]
fn a_corrupt_wheel_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(wheel("0.3.11.post1")).unwrap();
    let cut = dir.path().join(
        "mooncake_transfer_engine_non_cuda-0.3.11.post1-cp311-cp311-manylinux_2_35_x86_64.whl",
    );
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let cut = cut.display().to_string();
    let err = refused(&["core", &cut], &[], QUICK);
    assert!(
        err.starts_with(&format!("{cut}: error: not a wheel (zip archive)")),
        "{err}"
    );
    let missing = dir.path().join("nothing.whl").display().to_string();
    let err = refused(&["core", &missing], &[], QUICK);
    assert!(
        err.starts_with(&format!("{missing}: error: cannot read the wheel")),
        "{err}"
    );
}

#[test]
fn a_core_that_cannot_load_names_the_missing_library() {
    let whl = cuda13_wheel("0.3.11.post1").display().to_string();
    let runtime = cuda13_runtime_only();
    let err = refused(
        &[
            "core",
            "--no-cache",
            "--no-runtimes",
            "--lib-dir",
            &runtime,
            &whl,
        ],
        &[],
        Duration::from_secs(120),
    );
    assert!(
        err.starts_with(&format!(
            "{whl}: error: the native core mooncake/store.so does not import: it needs libcuda.so.1, which the dynamic loader cannot find"
        )),
        "{err}"
    );
    // With the driver stub alone, the CUDA runtime is what is missing.
    let stub = std::env::split_paths(&cuda13_libs())
        .find(|d| d.join("libcuda.so.1").exists())
        .unwrap();
    let stub = stub.display().to_string();
    let err = refused(
        &[
            "core",
            "--no-cache",
            "--no-runtimes",
            "--lib-dir",
            &stub,
            &whl,
        ],
        &[],
        Duration::from_secs(120),
    );
    assert!(err.contains("it needs libcudart.so.13, which"), "{err}");
}

#[test]
fn a_core_that_is_not_a_shared_object_fails_to_import_with_the_loaders_words() {
    let dir = tempfile::tempdir().unwrap();
    let whl = make_wheel(
        dir.path(),
        "mooncake-broken",
        "1.0",
        &[
            ("mooncake/__init__.py", b""),
            ("mooncake/store.so", b"not an ELF file"),
        ],
    );
    let whl = whl.display().to_string();
    let err = refused(&["core", "--no-cache", &whl], &[], Duration::from_secs(120));
    assert!(
        err.starts_with(&format!(
            "{whl}: error: the native core mooncake/store.so (`mooncake.store`) does not import:"
        )),
        "{err}"
    );
    assert!(err.contains("ImportError"), "{err}");
}

/// A 0.3.14-style layout (`mooncake/store/` a package, the core `mooncake/_store*.so`) whose
/// core never finishes importing: the deadline ends it.
#[test]
fn a_core_that_hangs_on_import_is_killed_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let so = compile_shared(
        dir.path(),
        "hang",
        "#include <unistd.h>\nvoid *PyInit__store(void) { for (;;) pause(); }\n",
    );
    let whl = make_wheel(
        dir.path(),
        "mooncake-hangs",
        "1.0",
        &[
            ("mooncake/__init__.py", b""),
            (
                "mooncake/store/__init__.py",
                b"from mooncake._store import *\n",
            ),
            ("mooncake/_store.cpython-311-x86_64-linux-gnu.so", &so),
        ],
    );
    let whl = whl.display().to_string();
    let err = refused(
        &["core", "--no-cache", "--core-timeout", "8", &whl],
        &[],
        Duration::from_secs(60),
    );
    assert!(
        err.starts_with(&format!(
            "{whl}: error: reading the native core mooncake/_store.cpython-311-x86_64-linux-gnu.so took over 8 s"
        )),
        "{err}"
    );
}

#[test]
fn record_writes_nothing_when_any_wheel_fails() {
    let repo = Sandbox::new();
    let before = repo.snapshot();
    let manifest = repo.root().join("api.toml").display().to_string();
    let good = wheel("0.3.11.post1").display().to_string();
    let missing = repo.root().join("gone.whl").display().to_string();
    let err = refused(
        &["core", "--record", "--manifest", &manifest, &good, &missing],
        &[],
        Duration::from_secs(120),
    );
    assert!(
        err.starts_with(&format!("{missing}: error: cannot read the wheel")),
        "{err}"
    );
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn malformed_and_old_records_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("core.json");
    std::fs::write(&record, "{\n  \"format\": 3,\n  \"wheel\": 7\n}\n").unwrap();
    let wheels = wheels_dir().display().to_string();
    let record = record.display().to_string();
    let err = refused(&["matrix", &wheels, "--core", &record], &[], QUICK);
    assert!(err.starts_with(&format!("{record}:3:")), "{err}");
    assert!(
        err.contains(": error: not a core record: invalid type: integer `7`"),
        "{err}"
    );
    // A record of the first format (no `modules`) says how to write it again.
    std::fs::write(&record, "{\"format\": 1, \"wheel\": {}}\n").unwrap();
    let err = refused(&["matrix", &wheels, "--core", &record], &[], QUICK);
    assert!(
        err.starts_with(&format!(
            "{record}:1:1: error: core record of format 1 (this build reads 3): write it again with `cargo xtask core --record WHEEL`"
        )),
        "{err}"
    );
}

#[test]
fn a_missing_interpreter_is_named_not_waited_for() {
    let whl = wheel("0.3.11.post1").display().to_string();
    let err = refused(
        &[
            "core",
            "--no-cache",
            "--core-python",
            "/nonexistent/python3",
            &whl,
        ],
        &[],
        QUICK,
    );
    assert!(
        err.starts_with(&format!(
            "{whl}: error: reading the native core mooncake/store.so: cannot run \"/nonexistent/python3\""
        )),
        "{err}"
    );
}
