//! The real PyPI wheels `scripts/setup-test-env.sh` downloads into `$MC_TEST_WHEELS`.

use crate::{SETUP_HINT, env_path};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The distribution whose wheels the tests use (`--no-deps`; numpy and msgpack beside it).
pub const DIST: &str = "mooncake-transfer-engine-non-cuda";
/// The upstream module inside those wheels.
pub const MODULE_MEMBER: &str = "mooncake/structured_object_store.py";

/// `$MC_TEST_WHEELS`: the mooncake wheels plus numpy and msgpack, for offline installs.
pub fn wheels_dir() -> PathBuf {
    let dir = env_path("MC_TEST_WHEELS");
    assert!(
        dir.is_dir(),
        "{} is not a directory: {SETUP_HINT}",
        dir.display()
    );
    dir
}

/// The local wheel of `DIST==version`.
pub fn wheel(version: &str) -> PathBuf {
    let prefix = format!("{}-{version}-", DIST.replace('-', "_"));
    std::fs::read_dir(wheels_dir())
        .expect("read MC_TEST_WHEELS")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.whl in MC_TEST_WHEELS: {SETUP_HINT}"))
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
