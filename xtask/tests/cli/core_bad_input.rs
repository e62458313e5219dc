//! Bad input to `cargo xtask core` / `matrix --core`: one clear error naming the file and
//! why, exit 2, nothing on stdout and nothing written, within a time bound.

use crate::common::cores::{
    compile_shared, cuda13_libs, cuda13_runtime_only, cuda13_wheel, make_wheel,
};
use crate::common::{Run, Sandbox, lone_file, write_file, xtask};
use mooncake_sos_testkit::{wheel, wheels_dir};
use std::time::{Duration, Instant};

/// Runs xtask and checks the shape every refusal has.
fn refused(args: &[&str], within: Duration) -> Refusal {
    let started = Instant::now();
    let run: Run = xtask(args, &[]);
    let took = started.elapsed();
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "no partial output: {run:?}");
    assert!(took < within, "took {took:?} (bound {within:?}): {run:?}");
    assert_eq!(run.stderr.matches(": error: ").count(), 1, "{run:?}");
    // A read that ran the wheel's code first says how it ran it (tests/cli/isolation.rs).
    Refusal(match run.stderr.split_once('\n') {
        Some((first, rest)) if first.starts_with("the wheels' code runs ") => rest.to_owned(),
        _ => run.stderr,
    })
}

/// A refusal's stderr, bar the line saying how the wheel's code ran.
struct Refusal(String);

impl Refusal {
    /// The error is `LOCATION: error: WHAT...`; returns stderr.
    fn says(self, location: &str, what: &str) -> String {
        let want = format!("{location}: error: {what}");
        assert!(self.0.starts_with(&want), "want {want:?}: {}", self.0);
        self.0
    }
}

/// A made-up wheel `DIST-1.0` in a temp dir of its own (which must outlive the path): an empty
/// `mooncake/__init__.py` and `files`.
fn mooncake_wheel(dist: &str, files: &[(&str, &[u8])]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![("mooncake/__init__.py", &b""[..])];
    all.extend_from_slice(files);
    let whl = make_wheel(dir.path(), dist, "1.0", &all);
    (dir, whl.display().to_string())
}

const QUICK: Duration = Duration::from_secs(30);
const SLOW: Duration = Duration::from_secs(120);

#[test]
fn a_pure_python_wheel_has_no_native_core() {
    let store = b"class MooncakeDistributedStore: pass\n";
    let (_dir, whl) = mooncake_wheel("mooncake-pure", &[("mooncake/store.py", store)]);
    refused(&["core", &whl], QUICK).says(
        &whl,
        "no native core in the wheel: no extension module for `mooncake.store`",
    );
}

#[test]
fn a_corrupt_wheel_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(wheel("0.3.11.post1")).unwrap();
    let cut = write_file(
        dir.path(),
        "mooncake_transfer_engine_non_cuda-0.3.11.post1-cp311-cp311-manylinux_2_35_x86_64.whl",
        &whole[..whole.len() / 2],
    );
    let cut = cut.display().to_string();
    refused(&["core", &cut], QUICK).says(&cut, "not a wheel (zip archive)");
    let missing = dir.path().join("nothing.whl").display().to_string();
    refused(&["core", &missing], QUICK).says(&missing, "cannot read the wheel");
}

#[test]
fn a_core_that_cannot_load_names_the_missing_library() {
    let whl = cuda13_wheel("0.3.11.post1").display().to_string();
    let with_libs_from = |lib_dir: &str| {
        refused(
            &[
                "core",
                "--no-cache",
                "--no-runtimes",
                "--lib-dir",
                lib_dir,
                &whl,
            ],
            SLOW,
        )
    };
    with_libs_from(&cuda13_runtime_only()).says(
        &whl,
        "the native core mooncake/store.so does not import: it needs libcuda.so.1, which the dynamic loader cannot find",
    );
    // With the driver stub alone, the CUDA runtime is what is missing.
    let stub = std::env::split_paths(&cuda13_libs())
        .find(|d| d.join("libcuda.so.1").exists())
        .unwrap();
    let err = with_libs_from(&stub.display().to_string()).0;
    assert!(err.contains("it needs libcudart.so.13, which"), "{err}");
}

#[test]
fn a_core_that_is_not_a_shared_object_fails_to_import_with_the_loaders_words() {
    let (_dir, whl) = mooncake_wheel(
        "mooncake-broken",
        &[("mooncake/store.so", b"not an ELF file")],
    );
    let err = refused(&["core", "--no-cache", &whl], SLOW).says(
        &whl,
        "the native core mooncake/store.so (`mooncake.store`) does not import:",
    );
    assert!(err.contains("ImportError"), "{err}");
}

/// A 0.3.14-style layout (`mooncake/store/` a package, the core `mooncake/_store*.so`) whose
/// core never finishes importing: the deadline ends it.
#[test]
fn a_core_that_hangs_on_import_is_killed_at_the_deadline() {
    let scratch = tempfile::tempdir().unwrap();
    let hangs = "#include <unistd.h>\nvoid *PyInit__store(void) { for (;;) pause(); }\n";
    let so = compile_shared(scratch.path(), "hang", hangs);
    let (_dir, whl) = mooncake_wheel(
        "mooncake-hangs",
        &[
            (
                "mooncake/store/__init__.py",
                b"from mooncake._store import *\n",
            ),
            ("mooncake/_store.cpython-311-x86_64-linux-gnu.so", &so),
        ],
    );
    let args = ["core", "--no-cache", "--core-timeout", "8", &whl];
    refused(&args, Duration::from_secs(60)).says(
        &whl,
        "reading the native core mooncake/_store.cpython-311-x86_64-linux-gnu.so took over 8 s",
    );
}

#[test]
fn record_writes_nothing_when_any_wheel_fails() {
    let repo = Sandbox::new();
    let before = repo.snapshot();
    let manifest = repo.root().join("api.toml").display().to_string();
    let good = wheel("0.3.11.post1").display().to_string();
    let missing = repo.root().join("gone.whl").display().to_string();
    let args = ["core", "--record", "--manifest", &manifest, &good, &missing];
    refused(&args, SLOW).says(&missing, "cannot read the wheel");
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn malformed_and_old_records_are_located() {
    let (_dir, record) = lone_file("core.json", "{\n  \"format\": 3,\n  \"wheel\": 7\n}\n");
    let wheels = wheels_dir().display().to_string();
    let err = refused(&["matrix", &wheels, "--core", &record], QUICK).0;
    assert!(err.starts_with(&format!("{record}:3:")), "{err}");
    assert!(
        err.contains(": error: not a core record: invalid type: integer `7`"),
        "{err}"
    );
    // A record of the first format (no `modules`) says how to write it again.
    std::fs::write(&record, "{\"format\": 1, \"wheel\": {}}\n").unwrap();
    refused(&["matrix", &wheels, "--core", &record], QUICK).says(
        &format!("{record}:1:1"),
        "core record of format 1 (this build reads 3): write it again with `cargo xtask core --record WHEEL`",
    );
    // A format written as a string is named as one (before: "no format").
    std::fs::write(&record, "{\"format\": \"3\", \"wheel\": {}}\n").unwrap();
    refused(&["matrix", &wheels, "--core", &record], QUICK).says(
        &format!("{record}:1:1"),
        "core record of format \"3\" (a string, not a number) (this build reads 3): write it \
         again with `cargo xtask core --record WHEEL`",
    );
}

/// A key written twice in a record (JSON keeps the last) is refused where it repeats: a
/// reviewer reading the first would not see what the tool reads. Before, the last won.
#[test]
fn a_record_naming_a_key_twice_is_refused_at_the_second() {
    let text = std::fs::read_to_string(
        mooncake_sos_testkit::repo_root()
            .join("cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json"),
    )
    .unwrap();
    // The wheel's version written twice: the first is what a reader of the file sees.
    let doubled = text.replacen(
        "\"version\": \"0.3.12.post1\",",
        "\"version\": \"0.3.12.post1\",\n    \"version\": \"9.9.9\",",
        1,
    );
    assert_ne!(doubled, text);
    let line = doubled.lines().position(|l| l.contains("9.9.9")).unwrap() + 1;
    let (_dir, record) = lone_file("core.json", &doubled);
    let wheels = wheels_dir().display().to_string();
    refused(&["matrix", &wheels, "--core", &record], QUICK).says(
        &format!("{record}:{line}:13"),
        "not a core record: the key \"version\" twice in one object",
    );
}

#[test]
fn a_missing_interpreter_is_named_not_waited_for() {
    let whl = wheel("0.3.11.post1").display().to_string();
    let args = [
        "core",
        "--no-cache",
        "--core-python",
        "/nonexistent/python3",
        &whl,
    ];
    refused(&args, QUICK).says(
        &whl,
        "reading the native core mooncake/store.so: cannot run \"/nonexistent/python3\"",
    );
}
