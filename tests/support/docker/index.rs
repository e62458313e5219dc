//! `scripts/local-index.py` as a test fixture: a PEP 503 index over local wheels on
//! 127.0.0.1, which a build on the host's network reaches as its pip index.

use crate::repo_root;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct LocalIndex {
    /// `http://127.0.0.1:PORT/simple/`
    pub url: String,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl LocalIndex {
    /// Serves the wheels of `dirs` until dropped.
    pub fn start(dirs: &[&Path]) -> LocalIndex {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("requests.log");
        let mut cmd = Command::new("python3");
        cmd.arg(repo_root().join("scripts/local-index.py"))
            .args(dirs)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("create the request log"));
        // No dies_with_this_thread: the script ends itself (removing its tree) when this
        // process ends, and a `static` index must outlive the thread that started it.
        let mut child = cmd.spawn().expect("spawn scripts/local-index.py");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // It hashes every wheel first (~150 MB).
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_default();
        let Some(url) = line.trim().strip_prefix("local-index: ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "scripts/local-index.py did not start: {line:?}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        };
        LocalIndex {
            url: url.to_owned(),
            child,
            log,
            _dir: dir,
        }
    }

    /// The paths requested so far (`GET /simple/...`, `GET /files/...`).
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split("\"GET ").nth(1)?.split(' ').next())
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for LocalIndex {
    fn drop(&mut self) {
        // SIGTERM, so it removes its temp tree.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}
