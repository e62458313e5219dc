//! The store object a transfer writes through: the native store api.toml declares, set up from
//! a typed config, or the embedded store when no master is configured.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::{Deserialize, Serialize};

use crate::embedded::EmbeddedStore;
use crate::error::{Error, PyContext, Result};
use crate::liveness::{Liveness, connect};
use crate::load_check::{Contract, NativeStore};

/// What a store is set up from: the keys api.toml declares for the store's `setup(config:
/// dict)`, and what the runtime itself needs (the replica count, the bind address, a timeout:
/// not serialized, so never a value `setup` could be given).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    pub local_hostname: String,
    /// `"P2PHANDSHAKE"` or `http://host:port/metadata`.
    pub metadata_server: String,
    pub global_segment_size: u64,
    pub local_buffer_size: u64,
    /// `"rdma"` or `"tcp"`.
    pub protocol: String,
    pub rdma_devices: String,
    /// `host:port` of mooncake_master's RPC port.
    pub master_server_addr: String,
    /// Copies per object, passed per put as `ReplicateConfig.replica_num`; `None` = default.
    #[serde(skip_serializing)]
    pub replica_num: Option<u32>,
    /// Sets `MC_TCP_BIND_ADDRESS` before setup (needed on loopback with http metadata, or the
    /// transfer engine advertises the machine's external address).
    #[serde(skip_serializing)]
    pub tcp_bind_address: Option<String>,
    /// How long the master (and an http metadata server) may take to accept a TCP connection.
    #[serde(default = "default_probe_ms", skip_serializing)]
    pub probe_timeout_ms: u64,
}

fn default_probe_ms() -> u64 {
    2000
}

impl StoreConfig {
    /// A loopback TCP config for a master at `master_server_addr`, with P2P handshake metadata
    /// and the consumer's test sizes.
    pub fn loopback(master_server_addr: impl Into<String>) -> Self {
        StoreConfig {
            local_hostname: "127.0.0.1".into(),
            metadata_server: "P2PHANDSHAKE".into(),
            global_segment_size: 512 << 20,
            local_buffer_size: 256 << 20,
            protocol: "tcp".into(),
            rdma_devices: String::new(),
            master_server_addr: master_server_addr.into(),
            replica_num: None,
            tcp_bind_address: Some("127.0.0.1".into()),
            probe_timeout_ms: default_probe_ms(),
        }
    }

    /// What `setup` takes: exactly the keys api.toml declares, each from this config's field
    /// of that name. A declared key this config does not carry is an error naming it.
    fn setup_values(&self, store: &NativeStore) -> Result<Vec<(&'static str, serde_json::Value)>> {
        let serde_json::Value::Object(mut fields) =
            serde_json::to_value(self).map_err(|e| Error::Value(e.to_string()))?
        else {
            return Err(Error::Value("StoreConfig is not a JSON object".into()));
        };
        let mut values = Vec::with_capacity(store.setup_keys.len());
        for &key in store.setup_keys {
            match fields.remove(key) {
                Some(value) => values.push((key, value)),
                None => {
                    return Err(Error::Connect(format!(
                        "{}.{}: api.toml declares the key `{key}`, which StoreConfig does not \
                         carry",
                        store.class, store.setup
                    )));
                }
            }
        }
        Ok(values)
    }
}

/// Which kind of store a [`Store`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Embedded,
    Distributed,
}

/// A store object ready to hand to `MooncakeBundleTransfer`.
pub struct Store {
    obj: Py<PyAny>,
    kind: StoreKind,
    replicate: Option<Py<PyAny>>,
    embedded: Option<Py<EmbeddedStore>>,
    /// Watches the master (distributed stores only); shared with every transfer made over it.
    liveness: Option<Arc<Liveness>>,
    /// Set by the first `close` (explicit or on drop): the native close runs once.
    closed: AtomicBool,
}

impl Store {
    /// A fresh embedded store (no limit on bytes held).
    pub fn embedded() -> Result<Store> {
        Store::embedded_with_capacity(usize::MAX)
    }

    /// An embedded store that refuses writes past `capacity` bytes, as a full real store does
    /// (NO_AVAILABLE_HANDLE): how tests make a put fail halfway.
    pub fn embedded_with_capacity(capacity: usize) -> Result<Store> {
        Python::attach(|py| {
            let store = Py::new(py, EmbeddedStore::with_capacity(capacity))
                .context(|| "create EmbeddedStore".into())?;
            Ok(Store {
                obj: store.clone_ref(py).into_any(),
                kind: StoreKind::Embedded,
                replicate: None,
                embedded: Some(store),
                liveness: None,
                closed: AtomicBool::new(false),
            })
        })
    }

    /// The native store `contract` declares, set up from `config`. The master's port is
    /// connected to first (and then watched, see [`Liveness`]): a master that is not running
    /// fails here within `probe_timeout_ms`, whereas the native `setup` retries for about 90 s
    /// while holding the GIL.
    pub fn connect(contract: &Contract, config: &StoreConfig) -> Result<Store> {
        let (module, native) = (contract.native_module, &contract.store);
        if native.class.is_empty() || native.setup.is_empty() {
            return Err(Error::Connect(format!(
                "api.toml declares no native store to set up: `native_roles` needs `store = \
                 \"Class\"` and that class a [[native]] method with `dict_keys` (found class \
                 {:?}, setup {:?})",
                native.class, native.setup
            )));
        }
        // What api.toml declares and StoreConfig cannot carry fails before any connection.
        let setup_values = config.setup_values(native)?;
        let timeout = Duration::from_millis(config.probe_timeout_ms);
        let liveness = Liveness::connect(&config.master_server_addr, timeout)?;
        if let Some(hostport) = http_hostport(&config.metadata_server) {
            probe("metadata server", &hostport, timeout)?;
        }
        Python::attach(|py| {
            if let Some(addr) = &config.tcp_bind_address {
                py.import("os")
                    .and_then(|os| os.getattr("environ"))
                    .and_then(|env| env.set_item("MC_TCP_BIND_ADDRESS", addr))
                    .context(|| "set MC_TCP_BIND_ADDRESS".into())?;
            }
            crate::python::import_native(py, module);
            let store = crate::load_check::native_class(py, module, native.class)
                .and_then(|cls| cls.call0())
                .context(|| format!("{module}.{}()", native.class))?;
            let started = Instant::now();
            let setup = PyDict::new(py);
            for (key, value) in &setup_values {
                crate::value::json_to_py(py, value)
                    .and_then(|v| setup.set_item(key, v))
                    .context(|| format!("{}.{} key {key}", native.class, native.setup))?;
            }
            let rc: i64 = store
                .call_method1(native.setup, (setup,))
                .and_then(|r| r.extract())
                .context(|| format!("{}.{}", native.class, native.setup))?;
            if rc != 0 {
                return Err(Error::Connect(format!(
                    "{}.{} returned {rc} after {:.1?} (master {}, metadata {})",
                    native.class,
                    native.setup,
                    started.elapsed(),
                    config.master_server_addr,
                    config.metadata_server
                )));
            }
            let replicate = match config.replica_num {
                None => None,
                Some(n) => Some(contract.replicas(py, n)?.unbind()),
            };
            Ok(Store {
                obj: store.unbind(),
                kind: StoreKind::Distributed,
                replicate,
                embedded: None,
                liveness: Some(Arc::new(liveness)),
                closed: AtomicBool::new(false),
            })
        })
    }

    /// The embedded store when `config` is `None`, else a connection.
    pub fn open(contract: &Contract, config: Option<&StoreConfig>) -> Result<Store> {
        match config {
            None => Store::embedded(),
            Some(c) => Store::connect(contract, c),
        }
    }

    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// How to tell the master is gone (distributed stores only).
    pub fn liveness(&self) -> Option<Arc<Liveness>> {
        self.liveness.clone()
    }

    /// The Python store object.
    pub fn object<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.obj.bind(py).clone()
    }

    /// The `ReplicateConfig` built from `replica_num`, to pass as a put's `config`.
    pub fn replicate_config<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.replicate.as_ref().map(|r| r.bind(py).clone())
    }

    /// The Rust side of the embedded store, if this is one.
    /// (`py` is not needed, a frozen pyclass being readable without the GIL; it is kept so
    /// callers' signatures stay stable.)
    pub fn embedded_store(&self, _py: Python<'_>) -> Option<&EmbeddedStore> {
        self.embedded.as_ref().map(|s| s.get())
    }

    /// `is_exist(key)` on either kind of store.
    pub fn contains(&self, key: &str) -> Result<bool> {
        Python::attach(|py| {
            let found: i64 = self
                .obj
                .bind(py)
                .call_method1("is_exist", (key,))
                .and_then(|r| r.extract())
                .context(|| format!("is_exist({key:?})"))?;
            Ok(found == 1)
        })
    }

    /// Closes a distributed store: unmounts its segment and stops the native client's
    /// threads. A no-op for the embedded store and after the first close; dropping the
    /// `Store` closes it too, so transfers still holding its object fail from then on.
    pub fn close(&self) -> Result<()> {
        if self.kind == StoreKind::Embedded || self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if let Some(liveness) = &self.liveness {
            liveness.stop();
        }
        Python::attach(|py| {
            self.obj
                .bind(py)
                .call_method0("close")
                .map(|_| ())
                .context(|| "MooncakeDistributedStore.close".into())
        })
    }
}

impl Drop for Store {
    /// The interpreter is never finalized, so an unclosed native client would be torn down
    /// by the process's exit handlers, racing its own heartbeat threads and the native
    /// library's static destructors after the master may be gone: the likely source of a
    /// SIGSEGV one CI run saw as the failures test binary exited.
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            eprintln!("mooncake-sos: closing the store on drop: {e}");
        }
    }
}

/// `host:port` of an `http://host:port/...` metadata URL.
fn http_hostport(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://")?;
    let hostport = rest.split('/').next()?;
    Some(if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:80")
    })
}

/// Connects to `addr` within `timeout` or says why not.
pub fn probe(what: &str, addr: &str, timeout: Duration) -> Result<()> {
    connect(what, addr, timeout).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_give_their_host_and_port() {
        for (url, hostport) in [
            ("http://127.0.0.1:8080/metadata", Some("127.0.0.1:8080")),
            ("http://meta/metadata", Some("meta:80")),
            ("P2PHANDSHAKE", None),
        ] {
            assert_eq!(http_hostport(url).as_deref(), hostport, "{url}");
        }
    }

    #[test]
    fn config_json_has_the_consumer_keys() {
        let c: StoreConfig = serde_json::from_value(serde_json::json!({
            "local_hostname": "127.0.0.1", "metadata_server": "P2PHANDSHAKE",
            "global_segment_size": 1, "local_buffer_size": 2, "protocol": "tcp",
            "rdma_devices": "", "master_server_addr": "127.0.0.1:50051", "replica_num": 2
        }))
        .expect("parses");
        assert_eq!((c.replica_num, c.probe_timeout_ms), (Some(2), 2000));
        let unknown = serde_json::json!({"local_hostname": "x", "bogus": 1});
        assert!(serde_json::from_value::<StoreConfig>(unknown).is_err());
    }
}
