//! `[[scenario]]`: the consumer's calls with its real values, run by the shim's `--smoke`
//! against the installed core and a master it starts, and by the Rust scenario tests through
//! the bindings. Every scenario is the consumer's one call sequence (docs/manifest.md, `[[scenario]]`):
//! each client `setup({...})`, `MooncakeBundleTransfer(store, key_prefix=...)` on each, `put`
//! by one client, `export_ref` → JSON text → `import_ref` and `get` by another (or the same),
//! `release_result`, `cleanup_dataproto`; after each, what must hold.

use super::python::PyData;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Lowercase words joined by `-`.
    pub name: String,
    /// `torch`: a run without it reports the scenario as not run.
    pub needs_torch: bool,
    pub key_prefix: String,
    pub clients: Vec<Client>,
    pub put: Put,
    pub get: Get,
    pub fields: Vec<Field>,
}

/// A client's `setup` values; the run adds `local_hostname`, `metadata_server`,
/// `master_server_addr` (the master it starts) and `rdma_devices = ""`.
#[derive(Clone, Debug, Serialize)]
pub struct Client {
    pub name: String,
    pub global_segment_size: u64,
    pub local_buffer_size: u64,
    /// `tcp`: the run is on loopback.
    pub protocol: String,
}

/// The attribute of the replicate-config class (`native_roles.config`) that holds a put's
/// number of copies: what a scenario's `replica_num` sets, and what the runtime writes for a
/// store's or a caller's replica count (it is told this name; it names none itself).
pub const REPLICA_FIELD: &str = "replica_num";

#[derive(Clone, Debug, Serialize)]
pub struct Put {
    /// Index into `clients`.
    pub by: usize,
    /// `dict`.
    pub kind: String,
    pub namespace: String,
    pub chunk_bytes: Option<u64>,
    /// `config=ReplicateConfig()` with this `replica_num`; `None`: `config=None`.
    pub replica_num: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Get {
    /// Index into `clients`: it gets, releases and cleans up.
    pub by: usize,
    pub kind: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Field {
    pub name: String,
    pub codec: String,
    /// `batch`, `non_tensor_batch` or `meta_info`: the FieldSchema's metadata["section"].
    pub section: String,
    /// metadata["dtype"], when the consumer sets it; the rows' element type.
    pub dtype: Option<String>,
    pub nullable: bool,
    /// The rows (a list) or, in meta_info, the value.
    pub value: PyData,
}

/// Codecs a scenario field may use, and whether their values need torch.
pub const CODECS: &[(&str, bool)] = &[
    ("auto", false),
    ("ndarray", false),
    ("typed_ragged", false),
    ("msgpack_ragged", false),
    ("utf8_ragged", false),
    ("json_ragged", false),
    ("ragged_tensor_dict", true),
];

/// Element types both numpy and torch name the same way.
pub const DTYPES: &[&str] = &[
    "bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
];

pub const SECTIONS: &[&str] = &["batch", "non_tensor_batch", "meta_info"];
