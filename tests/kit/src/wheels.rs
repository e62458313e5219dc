//! The real PyPI wheels `scripts/setup-test-env.sh` downloads into `$MC_TEST_WHEELS`.

use crate::{SETUP_HINT, env_path};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The distribution whose wheels the tests use (`--no-deps`; numpy and msgpack beside it).
pub const DIST: &str = "mooncake-transfer-engine-non-cuda";
/// The upstream module inside those wheels.
pub const MODULE_MEMBER: &str = "mooncake/structured_object_store.py";

/// The directory in environment variable `name`.
fn env_dir(name: &str) -> PathBuf {
    let dir = env_path(name);
    assert!(
        dir.is_dir(),
        "{} is not a directory: {SETUP_HINT}",
        dir.display()
    );
    dir
}

/// `$MC_TEST_WHEELS`: the mooncake wheels plus numpy and msgpack, for offline installs.
pub fn wheels_dir() -> PathBuf {
    env_dir("MC_TEST_WHEELS")
}

/// A `<prefix>*.whl` in the directory of environment variable `var`.
pub fn wheel_in(var: &str, prefix: &str) -> PathBuf {
    std::fs::read_dir(env_dir(var))
        .unwrap_or_else(|e| panic!("read {var}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".whl"))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.whl in {var}: {SETUP_HINT}"))
}

/// The local wheel of `DIST==version`.
pub fn wheel(version: &str) -> PathBuf {
    wheel_in(
        "MC_TEST_WHEELS",
        &format!("{}-{version}-", DIST.replace('-', "_")),
    )
}

/// One file of a wheel, by its path in the archive.
pub fn wheel_member(wheel: &Path, member: &str) -> Vec<u8> {
    let file = std::fs::File::open(wheel).unwrap_or_else(|e| panic!("{}: {e}", wheel.display()));
    let mut archive =
        zip::ZipArchive::new(file).unwrap_or_else(|e| panic!("{}: {e}", wheel.display()));
    let mut entry = archive
        .by_name(member)
        .unwrap_or_else(|e| panic!("{member} in {}: {e}", wheel.display()));
    let mut bytes = Vec::new();
    entry
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("{member} in {}: {e}", wheel.display()));
    bytes
}

/// The module out of that release's wheel, written to `dir/structured_object_store-<version>.py`.
pub fn module_of(version: &str, dir: &Path) -> PathBuf {
    let path = dir.join(format!("structured_object_store-{version}.py"));
    std::fs::write(&path, wheel_member(&wheel(version), MODULE_MEMBER)).expect("write the module");
    path
}
