//! Harness for the native-core tests: the cuda13 cores and the CUDA 13 libraries the set-up
//! script downloads, wheels made up on the spot, and a reader sharing the cores cache.

use mooncake_sos_testkit::SETUP_HINT;
use std::path::{Path, PathBuf};
use std::process::Command;

fn env_path(name: &str) -> PathBuf {
    let value = std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| panic!("{name} is not set: {SETUP_HINT}"));
    PathBuf::from(value)
}

/// `$MC_TEST_CORE_WHEELS`: the cuda13 wheels and the CUDA 13 runtime wheel.
pub fn core_wheels_dir() -> PathBuf {
    let dir = env_path("MC_TEST_CORE_WHEELS");
    assert!(
        dir.is_dir(),
        "{} is not a directory: {SETUP_HINT}",
        dir.display()
    );
    dir
}

/// The `mooncake-transfer-engine-cuda13` wheel of that version.
pub fn cuda13_wheel(version: &str) -> PathBuf {
    cuda13_wheel_in(&core_wheels_dir(), "MC_TEST_CORE_WHEELS", version)
}

/// The cuda13 0.3.14 wheel, in `$MC_TEST_OTHER_WHEELS`.
pub fn cuda13_0_3_14_wheel() -> PathBuf {
    let var = "MC_TEST_OTHER_WHEELS";
    cuda13_wheel_in(&env_path(var), var, "0.3.14")
}

/// The cuda13 wheel of that version in `dir`, `$VAR`.
fn cuda13_wheel_in(dir: &Path, var: &str, version: &str) -> PathBuf {
    let prefix = format!("mooncake_transfer_engine_cuda13-{version}-");
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("list {var}: {e}: {SETUP_HINT}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.whl in {var}: {SETUP_HINT}"))
}

/// `$MC_TEST_CUDA13_LIBS`: libcudart.so.13's directory, then the libcuda.so.1 stub's.
pub fn cuda13_libs() -> String {
    let libs = env_path("MC_TEST_CUDA13_LIBS");
    let text = libs.to_string_lossy().into_owned();
    for dir in std::env::split_paths(&text) {
        assert!(dir.is_dir(), "{} is missing: {SETUP_HINT}", dir.display());
    }
    text
}

/// The CUDA 13 runtime's directory alone (no driver stub).
pub fn cuda13_runtime_only() -> String {
    let libs = cuda13_libs();
    std::env::split_paths(&libs)
        .find(|d| d.join("libcudart.so.13").exists())
        .unwrap_or_else(|| panic!("no libcudart.so.13 in MC_TEST_CUDA13_LIBS: {SETUP_HINT}"))
        .display()
        .to_string()
}

/// Writes a wheel `dir/<dist>-<version>-py3-none-any.whl` holding `files` (path, bytes) and
/// a dist-info with METADATA, WHEEL and RECORD, built with the test venv's zipfile.
pub fn make_wheel(dir: &Path, dist: &str, version: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let stem = format!("{}-{version}", dist.replace('-', "_"));
    let tree = tempfile::tempdir().expect("tempdir");
    let info = format!("{stem}.dist-info");
    let mut all: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(n, b)| ((*n).to_owned(), b.to_vec()))
        .collect();
    all.push((
        format!("{info}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n\n").into_bytes(),
    ));
    all.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: mooncake-sos tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            .to_vec(),
    ));
    let mut record: String = all.iter().map(|(n, _)| format!("{n},,\n")).collect();
    record.push_str(&format!("{info}/RECORD,,\n"));
    all.push((format!("{info}/RECORD"), record.into_bytes()));
    let mut names = Vec::new();
    for (name, bytes) in &all {
        let path = tree.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        names.push(name.clone());
    }
    let wheel = dir.join(format!("{stem}-py3-none-any.whl"));
    let script = "import sys, zipfile\n\
        with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
        \x20   for name in sys.argv[3:]:\n\
        \x20       z.write(sys.argv[2] + '/' + name, name)\n";
    let status = Command::new(env_path("MC_TEST_PYTHON"))
        .args(["-c", script])
        .arg(&wheel)
        .arg(tree.path())
        .args(&names)
        .status()
        .expect("run python");
    assert!(status.success(), "building {} failed", wheel.display());
    wheel
}

/// Builds a shared object from C source with gcc (a stand-in extension module).
pub fn compile_shared(dir: &Path, name: &str, c_source: &str) -> Vec<u8> {
    let src = dir.join(format!("{name}.c"));
    let out = dir.join(format!("{name}.so"));
    std::fs::write(&src, c_source).unwrap();
    let status = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("run gcc");
    assert!(status.success(), "gcc failed on {}", src.display());
    std::fs::read(&out).unwrap()
}

/// A reader sharing `cargo xtask core`'s cache (`target/mooncake-sos/cores`).
pub fn reader() -> mooncake_sos_native::Reader {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| mooncake_sos_testkit::repo_root().join("target"));
    mooncake_sos_native::Reader {
        cache_dir: Some(target.join("mooncake-sos/cores")),
        ..mooncake_sos_native::Reader::new()
    }
}
