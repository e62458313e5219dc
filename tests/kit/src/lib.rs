//! What the tests of every crate share, once: the repository root, the environment
//! `scripts/setup-test-env.sh` exports (the real wheels, the venv's python), a static file
//! server on 127.0.0.1, and a scratch copy of the repository's regen inputs.

mod file_server;
mod markdown;
mod sandbox;
mod simple_index;
mod wheels;

pub use file_server::FileServer;
pub use markdown::{Rendered, render_markdown};
pub use sandbox::{Files, Sandbox, copy_tree};
pub use simple_index::SimpleIndex;
pub use wheels::{DIST, MODULE_MEMBER, module_of, wheel, wheel_in, wheel_member, wheels_dir};

use std::path::{Path, PathBuf};

/// The message every test prints when the environment is missing: nothing is skipped.
pub const SETUP_HINT: &str = "run the README's test command (scripts/test.sh), or \
     `eval \"$(bash scripts/setup-test-env.sh)\"` before cargo test";

/// The checkout under test: where api.toml lives, and the build context of docker/*. Found
/// at run time (cargo test sets CARGO_MANIFEST_DIR to the tested package, one level below
/// the root), so a test binary built by another checkout in a shared target directory
/// still reads this one.
pub fn repo_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .expect("CARGO_MANIFEST_DIR or a working directory");
    start
        .ancestors()
        .find(|dir| dir.join("api.toml").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("no api.toml in {} or above it", start.display()))
}

/// The path in environment variable `name`, which must exist.
pub fn env_path(name: &str) -> PathBuf {
    let path = std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{name} is not set: {SETUP_HINT}"));
    assert!(
        path.exists(),
        "{name}={} does not exist: {SETUP_HINT}",
        path.display()
    );
    path
}

/// `$MC_TEST_PYTHON`: the test venv's interpreter (the real wheel installed).
pub fn python() -> PathBuf {
    env_path("MC_TEST_PYTHON")
}
