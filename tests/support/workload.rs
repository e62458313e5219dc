//! The load and failure tests' workload: a distinct payload per (thread, item), put and read
//! back through the generated bindings and compared byte for byte; and the key accounting of
//! both store kinds (the embedded store lists its keys, the real master counts them in its
//! metrics), plus killing and restarting a master on its own ports.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mooncake_sos::{
    DataProtoRef, Error, FieldSchema, GetOptions, MooncakeBundleTransfer, PutOptions, Record,
    RefHandle, Rows, Store, export_ref,
};
use mooncake_sos_runtime::Module;
use mooncake_sos_runtime::numpy::PyUntypedArrayMethods;
use mooncake_sos_runtime::numpy::ndarray::Array2;
use mooncake_sos_runtime::pyo3::prelude::*;
use serde_json::json;

use crate::{Master, TestEnv};

const ROWS: usize = 3;

/// Row-aligned bytes no other (thread, item) has: a 3 x cols uint8 matrix, one bytes blob
/// per row and an owner string.
pub struct Payload {
    pub owner: String,
    pub cols: usize,
    pub data: Vec<u8>,
    pub blobs: Vec<Vec<u8>>,
}

impl Payload {
    pub fn new(thread: usize, item: usize) -> Payload {
        let seed = (thread * 1_000_003 + item * 7919) as u64;
        let cols = 1 + (seed as usize * 31) % 40_000;
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        Payload {
            owner: format!("thread{thread}/item{item}"),
            cols,
            data: (0..ROWS * cols).map(|_| next()).collect(),
            blobs: (0..ROWS)
                .map(|r| {
                    (0..(seed as usize + r * 97) % 3000)
                        .map(|_| next())
                        .collect()
                })
                .collect(),
        }
    }

    pub fn schemas() -> BTreeMap<String, FieldSchema> {
        let schema = |codec: &str, section: &str, dtype: Option<&str>| {
            let mut s = FieldSchema::new(codec.to_owned());
            s.nullable = false;
            s.metadata.insert("section".into(), json!(section));
            if let Some(d) = dtype {
                s.metadata.insert("dtype".into(), json!(d));
            }
            s
        };
        BTreeMap::from([
            ("data".to_owned(), schema("ndarray", "batch", Some("uint8"))),
            (
                "blobs".to_owned(),
                schema("bytes_ragged", "non_tensor_batch", None),
            ),
            ("owner".to_owned(), schema("auto", "meta_info", None)),
        ])
    }

    pub fn record(&self, py: Python<'_>) -> Record {
        let r = Record::new(py);
        let data = Array2::from_shape_vec((ROWS, self.cols), self.data.clone()).expect("shape");
        r.put_array(py, "data", data).expect("data");
        r.put_bytes_rows(py, "blobs", &self.blobs).expect("blobs");
        r.put_json(py, "owner", &json!(self.owner)).expect("owner");
        r
    }

    /// `Err` with what differs, so a caller can count mismatches instead of stopping.
    pub fn compare(&self, py: Python<'_>, got: &Record, rows: &[usize]) -> Result<(), String> {
        let data = got.array::<u8>(py, "data").map_err(|e| e.to_string())?;
        let want: Vec<u8> = rows
            .iter()
            .flat_map(|&r| self.data[r * self.cols..(r + 1) * self.cols].to_vec())
            .collect();
        if data.shape() != [rows.len(), self.cols] || data.as_slice().ok() != Some(&want[..]) {
            return Err(format!(
                "{}: data differs (shape {:?})",
                self.owner,
                data.shape()
            ));
        }
        let blobs = got.bytes_rows(py, "blobs").map_err(|e| e.to_string())?;
        let want: Vec<Option<Vec<u8>>> =
            rows.iter().map(|&r| Some(self.blobs[r].clone())).collect();
        if blobs != want {
            return Err(format!("{}: blobs differ", self.owner));
        }
        let owner = got.json(py, "owner").map_err(|e| e.to_string())?;
        if owner != json!(self.owner) {
            return Err(format!("{}: owner is {owner}", self.owner));
        }
        Ok(())
    }
}

/// What the load test counts: one put, one whole get, one row get, one cleanup per item.
pub const OPS_PER_ITEM: usize = 4;

pub fn put_options(chunk_bytes: Option<u64>) -> PutOptions {
    PutOptions {
        r#type: Some("dict".into()),
        namespace: Some("load".into()),
        chunk_bytes,
        field_schemas: Some(Payload::schemas()),
        ..Default::default()
    }
}

pub fn put(
    py: Python<'_>,
    module: &Module,
    t: &MooncakeBundleTransfer,
    p: &Payload,
    chunk_bytes: Option<u64>,
) -> Result<RefHandle, Error> {
    let r: DataProtoRef = t.put(py, &p.record(py), &put_options(chunk_bytes))?;
    RefHandle::from_value(export_ref(py, module, &r)?)
}

/// Reads `rows` of a handle back (all rows when `None`) and compares them with `p`.
pub fn get_and_compare(
    py: Python<'_>,
    t: &MooncakeBundleTransfer,
    h: &RefHandle,
    p: &Payload,
    rows: Option<Vec<i64>>,
) -> Result<Result<(), String>, Error> {
    let picked: Vec<usize> = match &rows {
        None => (0..ROWS).collect(),
        Some(r) => r
            .iter()
            .map(|&i| i.rem_euclid(ROWS as i64) as usize)
            .collect(),
    };
    let opts = GetOptions {
        r#type: Some("dict".into()),
        rows: rows.map(Rows::Indices),
        ..Default::default()
    };
    let got = t.get(py, h, &opts)?;
    let record = Record::from_object(&got)?;
    let verdict = p.compare(py, &record, &picked);
    t.release_result(py, &got)?;
    Ok(verdict)
}

/// Keys held by an embedded store.
pub fn embedded_keys(store: &Store) -> Vec<String> {
    Python::attach(|py| {
        store
            .embedded_store(py)
            .expect("an embedded store")
            .key_list()
    })
}

impl Master {
    /// `master_key_count` from the master's Prometheus metrics.
    pub fn key_count(&self) -> u64 {
        self.metric("master_key_count")
    }

    /// Bytes of client segments mounted on the master (0 once every client has closed).
    pub fn mounted_bytes(&self) -> u64 {
        self.metric("master_total_capacity_bytes")
    }

    /// An unlabelled gauge or counter from the master's Prometheus metrics.
    fn metric(&self, name: &str) -> u64 {
        let text = http_get(self.metrics_port, "/metrics")
            .unwrap_or_else(|e| panic!("metrics on port {}: {e}", self.metrics_port));
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|v| v as u64)
            .unwrap_or_else(|| panic!("no {name} in the metrics:\n{text}"))
    }

    /// SIGKILL, no goodbye: what a crashed master looks like to its clients.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a fresh master on the same ports (its state is gone: it keeps keys in memory).
    pub fn restart(&mut self, env: &TestEnv) {
        self.kill();
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.log)
            .expect("master log");
        let err = log.try_clone().expect("log");
        self.child = Command::new(&env.master)
            .args([
                "-rpc_address=127.0.0.1".to_owned(),
                format!("-rpc_port={}", self.rpc_port),
                "-enable_http_metadata_server=true".to_owned(),
                "-http_metadata_server_host=127.0.0.1".to_owned(),
                format!("-http_metadata_server_port={}", self.http_port),
                format!("-metrics_port={}", self.metrics_port),
            ])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .expect("restart mooncake_master");
        let deadline = Instant::now() + Duration::from_secs(15);
        for port in [self.rpc_port, self.http_port, self.metrics_port] {
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "restarted master: port {port} closed"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// A GET that reads exactly Content-Length bytes: the metrics server keeps connections open.
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut got = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        let text = String::from_utf8_lossy(&got);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|n| body.len() >= n) {
                return Ok(body.to_owned());
            }
        }
        match s.read(&mut buf)? {
            0 => return Ok(text.into_owned()),
            n => got.extend_from_slice(&buf[..n]),
        }
    }
}
