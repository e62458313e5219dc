//! Harness for the verify / matrix / bump tests: the real wheels from the test set-up, the
//! real `xtask` binary (built once per test binary), a scratch copy of the repository for
//! commands that write, and a one-file HTTP server on 127.0.0.1 for `--fetch`.

use crate::SETUP_HINT;
use crate::repo_root;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

pub const MODULE: &str = "mooncake.structured_object_store";

/// `$MC_TEST_WHEELS`, the directory of real mooncake-transfer-engine-non-cuda wheels.
pub fn wheels_dir() -> PathBuf {
    let dir = std::env::var_os("MC_TEST_WHEELS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("MC_TEST_WHEELS is not set: {SETUP_HINT}"));
    assert!(
        dir.is_dir(),
        "{} is not a directory: {SETUP_HINT}",
        dir.display()
    );
    dir
}

/// The real wheel of that version.
pub fn wheel(version: &str) -> PathBuf {
    let prefix = format!("mooncake_transfer_engine_non_cuda-{version}-");
    std::fs::read_dir(wheels_dir())
        .expect("list MC_TEST_WHEELS")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.whl in MC_TEST_WHEELS: {SETUP_HINT}"))
}

/// The module out of that wheel, written to `dir/structured_object_store-<version>.py`.
pub fn module_of(version: &str, dir: &Path) -> PathBuf {
    let source = mooncake_sos_upstream::source::ModuleSource::read_wheel(&wheel(version), MODULE)
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(format!("structured_object_store-{version}.py"));
    std::fs::write(&path, source.text).expect("write the module");
    path
}

fn xtask_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--package", "xtask"])
            .current_dir(repo_root())
            .status()
            .expect("run cargo build -p xtask");
        assert!(status.success(), "cargo build -p xtask failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"));
        target
            .join("debug")
            .join(format!("xtask{}", std::env::consts::EXE_SUFFIX))
    })
}

/// The finished run of `xtask ARGS`.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout's lines, without the closing summary line.
    pub fn report(&self) -> Vec<&str> {
        let mut lines: Vec<&str> = self.stdout.lines().collect();
        lines.pop();
        lines
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs the real `xtask` binary; `env` adds variables.
pub fn xtask(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(xtask_binary());
    cmd.args(args).current_dir(repo_root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run xtask");
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// A scratch repository: api.toml with docker/ and generated/, where regen may write.
pub fn repo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(repo_root().join("api.toml"), dir.path().join("api.toml"))
        .expect("copy api.toml");
    for sub in ["docker", "generated"] {
        copy_tree(&repo_root().join(sub), &dir.path().join(sub));
    }
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("file type").is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&src, &dst);
            }
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Every file under `dir` with its bytes, for "nothing was written" checks.
pub fn snapshot(dir: &Path) -> HashMap<PathBuf, Vec<u8>> {
    let mut out = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

/// An HTTP/1.1 server on 127.0.0.1 serving fixed files (404 otherwise) until dropped.
pub struct FileServer {
    pub base_url: String,
    pub requests: Arc<AtomicUsize>,
    port: u16,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    pub fn start(files: HashMap<String, Vec<u8>>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (count, stopped) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut request_line = String::new();
                let _ = reader.read_line(&mut request_line);
                // Drain the headers.
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                count.fetch_add(1, Ordering::SeqCst);
                let path = request_line.split(' ').nth(1).unwrap_or_default();
                let response = match files.get(path) {
                    Some(body) => {
                        let mut r =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                                .into_bytes();
                        r.extend_from_slice(body);
                        r
                    }
                    None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
                };
                let _ = stream.write_all(&response);
            }
        });
        FileServer {
            base_url: format!("http://127.0.0.1:{port}"),
            requests,
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// 1-based line of the first line containing `needle`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in the module"))
        + 1
}

/// A module carrying exactly the API api.toml declares; each test breaks one thing in it.
/// Quote style and spacing differ from api.toml on purpose (`"bundle"` vs `'bundle'`).
pub const GOOD: &str = r#"from dataclasses import dataclass, field
from typing import Any

DEFAULT_BUNDLE_CHUNK_BYTES = 64 << 20


@dataclass(frozen=True)
class FieldSchema:
    codec: str
    nullable: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)


def export_dataproto_ref(ref):
    return {}


def export_other_ref(ref):
    return {}


def import_dataproto_ref(handle):
    return handle


class MooncakeBundleTransfer:
    def __init__(self, store, key_prefix: str = "bundle", default_chunk_bytes: int = DEFAULT_BUNDLE_CHUNK_BYTES, buffer_pool=None):
        self.store = store

    @staticmethod
    def release_result(result) -> None:
        pass

    def put(self, data, *, type="dataproto", namespace="default", partition="default", stage="default", chunk_bytes=None, policy=None, config=None, field_schemas=None):
        pass

    def get(self, ref, *, type="dataproto", fields=None, batch_fields=None, non_tensor_fields=None, meta_info_keys=None, data_cls=None, destinations=None, rows=None):
        pass

    def cleanup_dataproto(self, ref) -> None:
        pass


export_ref = export_dataproto_ref
import_ref = import_dataproto_ref
"#;

/// Writes `GOOD` with `edits` applied (each `from` must occur) and runs verify on it.
pub fn verify_edited(edits: &[(&str, &str)]) -> (String, String, Run) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = GOOD.to_owned();
    for (from, to) in edits {
        assert!(text.contains(from), "edit {from:?} does not apply");
        text = text.replacen(from, to, 1);
    }
    let path = dir.path().join("structured_object_store.py");
    std::fs::write(&path, &text).unwrap();
    let file = path.display().to_string();
    let run = xtask(&["verify", "--module", &file], &[]);
    (file, text, run)
}
