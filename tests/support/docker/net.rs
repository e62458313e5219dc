//! Containers of a built image on a network of the project's own: a `mooncake_master` and
//! clients running `tests/support/docker_client.py` (the consumer's call shapes). Two
//! topologies: a private bridge network (each container its own address) or the host's
//! loopback (`--network host`, everything on 127.0.0.1, the same programs side by side).

use super::{docker, docker_quietly, unique};
use crate::{free_port, repo_root};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant, SystemTime};

/// A bridge network of this test run, removed on drop.
pub struct Network {
    pub name: String,
}

impl Network {
    pub fn create() -> Network {
        let name = unique("net");
        docker(&["network", "create", "--driver", "bridge", &name]);
        Network { name }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        docker_quietly(&["network", "rm", &self.name]);
    }
}

pub enum Topology {
    Bridge(Network),
    Loopback,
}

impl Topology {
    fn network(&self) -> &str {
        match self {
            Topology::Bridge(n) => &n.name,
            Topology::Loopback => "host",
        }
    }
}

/// A container, removed (killed) on drop.
pub struct Container {
    pub name: String,
}

impl Container {
    pub fn ip(&self) -> String {
        docker(&[
            "inspect",
            "--format",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            &self.name,
        ])
        .trim()
        .to_owned()
    }

    /// `docker exec NAME ARGS`: (ok, stdout).
    pub fn exec(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new("docker")
            .args(["exec", &self.name])
            .args(args)
            .output()
            .expect("docker exec");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    pub fn logs(&self) -> String {
        let out = Command::new("docker")
            .args(["logs", "--tail", "20", &self.name])
            .output()
            .expect("docker logs");
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        docker_quietly(&["rm", "-f", &self.name]);
    }
}

/// `mooncake_master` from the image's own package, with the http metadata server.
pub struct StoreMaster {
    pub container: Container,
    /// `ip:port` of its RPC service, as clients reach it.
    pub addr: String,
    /// `http://ip:port/metadata`.
    pub metadata: String,
    metrics_port: u16,
}

const FIND_MASTER: &str = "import importlib.util, os; print(os.path.join(list(importlib.util.find_spec('mooncake').submodule_search_locations)[0], 'mooncake_master'))";

impl StoreMaster {
    pub fn start(image: &str, topology: &Topology) -> StoreMaster {
        let (rpc, http, metrics) = match topology {
            Topology::Bridge(_) => (50051, 8080, 9003),
            Topology::Loopback => (free_port(), free_port(), free_port()),
        };
        let bind = match topology {
            Topology::Bridge(_) => "$(hostname -i)",
            Topology::Loopback => "127.0.0.1",
        };
        let script = format!(
            "exec \"$(python3 -c \"{FIND_MASTER}\")\" -rpc_address={bind} -rpc_port={rpc} \
             -enable_http_metadata_server=true -http_metadata_server_host={bind} \
             -http_metadata_server_port={http} -metrics_port={metrics}"
        );
        let container = Container {
            name: unique("master"),
        };
        docker(&[
            "run",
            "-d",
            "--name",
            &container.name,
            "--network",
            topology.network(),
            image,
            "sh",
            "-c",
            &script,
        ]);
        let ip = match topology {
            Topology::Bridge(_) => container.ip(),
            Topology::Loopback => "127.0.0.1".to_owned(),
        };
        let master = StoreMaster {
            addr: format!("{ip}:{rpc}"),
            metadata: format!("http://{ip}:{http}/metadata"),
            metrics_port: metrics,
            container,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while master.metrics().is_none() {
            assert!(
                Instant::now() < deadline,
                "the master did not serve its metrics within 60 s:\n{}",
                master.container.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        master
    }

    /// The Prometheus text of its metrics port, read inside its container.
    fn metrics(&self) -> Option<String> {
        let url = format!("http://127.0.0.1:{}/metrics", self.metrics_port);
        let (ok, text) = self
            .container
            .exec(&["curl", "-sf", "--max-time", "5", &url]);
        ok.then_some(text)
    }

    /// `master_key_count`: keys the master holds.
    pub fn key_count(&self) -> u64 {
        let text = self.metrics().expect("the master's metrics");
        text.lines()
            .find_map(|l| {
                l.strip_prefix("master_key_count ")?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no master_key_count in:\n{text}")) as u64
    }

    /// `docker stop` (SIGTERM, SIGKILL after 1 s).
    pub fn stop(&self) {
        docker(&["stop", "--time", "1", &self.container.name]);
    }
}

/// `python3 docker_client.py ROLE` in its own container, its stdout read line by line (each
/// line with the time it arrived); killed on drop.
pub struct Client {
    container: Container,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(SystemTime, String)>,
    seen: Vec<(SystemTime, String)>,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

/// Settings every client gets, besides the caller's.
fn client_env(master: &StoreMaster, topology: &Topology) -> Vec<(String, String)> {
    let mut env = vec![
        ("MASTER".to_owned(), master.addr.clone()),
        ("METADATA".to_owned(), master.metadata.clone()),
        // Every byte over the transfer engine's TCP transport, none by local memcpy.
        ("MC_STORE_MEMCPY".to_owned(), "0".to_owned()),
    ];
    if let Topology::Loopback = topology {
        env.push(("LOCAL_HOSTNAME".to_owned(), "127.0.0.1".to_owned()));
        env.push(("MC_TCP_BIND_ADDRESS".to_owned(), "127.0.0.1".to_owned()));
    }
    env
}

impl Client {
    /// `wrapper`: a shell line run before the program (it ends with `exec "$@"`), e.g. to put
    /// a driver stub on LD_LIBRARY_PATH.
    pub fn start(
        image: &str,
        topology: &Topology,
        master: &StoreMaster,
        role: &str,
        env: &[(&str, &str)],
        wrapper: Option<&str>,
    ) -> Client {
        let dir = tempfile::tempdir().expect("temp dir");
        let stderr = dir.path().join("stderr");
        let container = Container {
            name: unique(&format!("client-{role}")),
        };
        let script = repo_root().join("tests/support/docker_client.py");
        let mut cmd = Command::new("docker");
        cmd.args(["run", "-i", "--rm", "--name", &container.name])
            .args(["--network", topology.network()])
            .arg("-v")
            .arg(format!("{}:/mc/client.py:ro", script.display()));
        for (k, v) in client_env(master, topology) {
            cmd.arg("-e").arg(format!("{k}={v}"));
        }
        for (k, v) in env {
            cmd.arg("-e").arg(format!("{k}={v}"));
        }
        cmd.arg(image);
        if let Some(w) = wrapper {
            cmd.args(["sh", "-c", w, "sh"]);
        }
        cmd.args(["python3", "/mc/client.py", role])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        let mut child = cmd.spawn().expect("docker run");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send((SystemTime::now(), line)).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            container,
            child,
            lines,
            seen: Vec::new(),
            stderr,
            _dir: dir,
        }
    }

    /// The rest of the first line starting with `prefix`; panics if the client ends or
    /// `timeout` passes first.
    pub fn wait_for(&mut self, prefix: &str, timeout: Duration) -> String {
        self.wait_for_n(prefix, 1, timeout).remove(0)
    }

    /// The rest of the first `n` lines starting with `prefix`, as wait_for.
    pub fn wait_for_n(&mut self, prefix: &str, n: usize, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let found: Vec<String> = self
                .seen
                .iter()
                .filter_map(|(_, l)| l.strip_prefix(prefix).map(str::to_owned))
                .take(n)
                .collect();
            if found.len() == n {
                return found;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => {
                    let report = self.report();
                    panic!(
                        "client {}: no line `{prefix}...` within {timeout:?}\n{report}",
                        self.container.name
                    )
                }
            }
        }
    }

    /// Tells a `put` client to leave.
    pub fn release(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"done\n");
        }
    }

    /// Waits for the client to end: (exited 0, every line it printed).
    pub fn finish(mut self, timeout: Duration) -> (bool, Vec<(SystemTime, String)>) {
        self.release();
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let report = self.report();
                panic!(
                    "client {} still running after {timeout:?}\n{report}",
                    self.container.name
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // The reader thread ends at EOF: collect the rest.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status.success(), std::mem::take(&mut self.seen))
    }

    /// What it printed so far, and the tail of its stderr (the native client's log).
    pub fn report(&mut self) -> String {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(15).collect();
        let out: Vec<&str> = self.seen.iter().map(|(_, l)| l.as_str()).collect();
        format!(
            "stdout:\n{}\nstderr (last lines):\n{}",
            out.join("\n"),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
