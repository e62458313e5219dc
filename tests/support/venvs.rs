//! Throwaway venvs of one release: its wheel (and numpy, msgpack) installed offline from
//! `$MC_TEST_WHEELS`, optionally with another release's module overlaid, as the CUDA image does.

use crate::TestEnv;
use crate::process::run_logged;
use mooncake_sos_testkit::{SETUP_HINT, wheel, wheels_dir};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A venv in a temporary directory (removed on drop) and its paths.
pub struct ReleaseVenv {
    pub dir: tempfile::TempDir,
    pub env: TestEnv,
    pub site_packages: PathBuf,
}

impl ReleaseVenv {
    /// The `-non-cuda` wheel of `version`, numpy and msgpack; no network.
    pub fn new(version: &str) -> ReleaseVenv {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let python = PathBuf::from(std::env::var_os("MC_TEST_PYTHON").expect(SETUP_HINT));
        let mut make = Command::new(&python);
        make.args(["-m", "venv", "--without-pip"]).arg(&venv);
        let (st, log) = run_logged(make, Duration::from_secs(60)).unwrap();
        assert!(st.is_some_and(|s| s.success()), "venv: {log}");
        let mut pip = Command::new(&python);
        pip.args(["-m", "pip", "--python"])
            .arg(venv.join("bin/python"))
            .args(["install", "-q", "--no-deps", "--no-index", "--find-links"])
            .arg(wheels_dir())
            .arg(wheel(version))
            .args(["numpy", "msgpack"]);
        let (st, log) = run_logged(pip, Duration::from_secs(300)).unwrap();
        assert!(st.is_some_and(|s| s.success()), "pip: {log}");
        let site_packages = std::fs::read_dir(venv.join("lib"))
            .unwrap()
            .find_map(|e| Some(e.ok()?.path().join("site-packages")))
            .unwrap();
        let env = TestEnv {
            python: venv.join("bin/python"),
            master: site_packages.join("mooncake/mooncake_master"),
            venv,
        };
        ReleaseVenv {
            dir,
            env,
            site_packages,
        }
    }

    /// Writes `contents` at `member` (a path below site-packages), over what is there.
    pub fn overlay(&self, member: &str, contents: &[u8]) {
        std::fs::write(self.site_packages.join(member), contents).unwrap();
    }
}
