//! The embedded store: an in-process key/value store written in Rust and handed to
//! `MooncakeBundleTransfer` as its store object. It speaks the real client's conventions
//! (status codes, pointer-based zero-copy calls) so the module takes its fast paths, including
//! `get_into_ranges`, which `get(rows=[i, j])` needs.
//!
//! Values are immutable `Arc<Buf>`: a reader clones the Arc under a short lock and copies
//! outside it, with the GIL released, so 8+ threads can read and write at once and no write
//! can change bytes another key (or a reader in flight) sees.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod buf;
mod copy;
mod core;
pub use buf::Buf;
use buf::Pool;
use copy::{Addr, copy_from_addr, copy_range, copy_to_addr};

/// Status codes of the real client (`mooncake-store` `ErrorCode`).
pub mod status {
    pub const OK: i64 = 0;
    /// Bad argument, also "buffer too small" (what the real `get_into` answers).
    pub const INVALID_PARAMS: i64 = -600;
    pub const OBJECT_NOT_FOUND: i64 = -704;
    /// A put of a key already held. The real client answers 0 and keeps the first object;
    /// the embedded store says so instead, so a collision cannot pass unnoticed.
    pub const OBJECT_ALREADY_EXISTS: i64 = -705;
    /// Out of space (the real client's NO_AVAILABLE_HANDLE).
    pub const NO_AVAILABLE_HANDLE: i64 = -200;
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Arc<Buf>>,
    bytes: usize,
}

/// In-process store with the `MooncakeDistributedStore` calling conventions.
#[pyclass(frozen, name = "EmbeddedStore", module = "mooncake_sos")]
pub struct EmbeddedStore {
    inner: RwLock<Inner>,
    capacity: usize,
    pool: Pool,
}

/// Freed large buffers kept for reuse by default (enough for two 1 GiB payloads' chunks).
pub const DEFAULT_RECYCLE_BYTES: usize = 2 << 30;

fn config_ok(config: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    // A ReplicateConfig means nothing in one process; accept it, as the real client would.
    let _ = config;
    Ok(())
}

#[pymethods]
impl EmbeddedStore {
    #[new]
    #[pyo3(signature = (capacity_bytes=None))]
    fn py_new(capacity_bytes: Option<usize>) -> Self {
        Self::with_capacity(capacity_bytes.unwrap_or(usize::MAX))
    }

    /// `put(key, value: Buffer, config=None) -> int`.
    #[pyo3(signature = (key, value, config=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &str,
        value: &Bound<'_, PyAny>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<i64> {
        config_ok(config)?;
        let buffer = PyUntypedBuffer::get(value)?;
        if !buffer.is_c_contiguous() {
            return Err(PyValueError::new_err(format!(
                "put {key}: value buffer is not C-contiguous"
            )));
        }
        let (addr, size) = (Addr(buffer.buf_ptr() as usize), buffer.len_bytes());
        // SAFETY: `buffer` keeps the exporter's memory alive and unmoved until it is dropped,
        // after this copy.
        let data = py.detach(|| unsafe { copy_from_addr(&self.pool, addr, size) });
        drop(buffer);
        Ok(self.insert(key, data))
    }

    /// `put_from(key, buffer_ptr, size, config=None) -> int`.
    #[pyo3(signature = (key, buffer_ptr, size, config=None))]
    fn put_from(
        &self,
        py: Python<'_>,
        key: &str,
        buffer_ptr: usize,
        size: usize,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<i64> {
        config_ok(config)?;
        if buffer_ptr == 0 {
            return Ok(status::INVALID_PARAMS);
        }
        // SAFETY: put_from's contract, see copy_from_addr.
        let data = py.detach(|| unsafe { copy_from_addr(&self.pool, Addr(buffer_ptr), size) });
        Ok(self.insert(key, data))
    }

    /// `batch_put_from(keys, buffer_ptrs, sizes, config=None) -> list[int]`.
    #[pyo3(signature = (keys, buffer_ptrs, sizes, config=None))]
    fn batch_put_from(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        buffer_ptrs: Vec<usize>,
        sizes: Vec<usize>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<i64>> {
        config_ok(config)?;
        per_entry(
            "batch_put_from",
            &keys,
            &buffer_ptrs,
            &sizes,
            |key, ptr, size| {
                if ptr == 0 {
                    return status::INVALID_PARAMS;
                }
                // SAFETY: put_from's contract, per entry.
                let data = py.detach(|| unsafe { copy_from_addr(&self.pool, Addr(ptr), size) });
                self.insert(key, data)
            },
        )
    }

    /// `get(key) -> bytes`; `b""` for a missing key, like the real client.
    fn get<'py>(&self, py: Python<'py>, key: &str) -> Bound<'py, PyBytes> {
        match self.lookup(key) {
            Some(v) => PyBytes::new(py, &v),
            None => PyBytes::new(py, b""),
        }
    }

    /// `get_into(key, buffer_ptr, size) -> int`: bytes written, or a negative status.
    fn get_into(&self, py: Python<'_>, key: &str, buffer_ptr: usize, size: usize) -> i64 {
        self.read_into(py, key, Addr(buffer_ptr), size)
    }

    /// `batch_get_into(keys, buffer_ptrs, sizes) -> list[int]`.
    fn batch_get_into(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        buffer_ptrs: Vec<usize>,
        sizes: Vec<usize>,
    ) -> PyResult<Vec<i64>> {
        per_entry(
            "batch_get_into",
            &keys,
            &buffer_ptrs,
            &sizes,
            |key, ptr, size| self.read_into(py, key, Addr(ptr), size),
        )
    }

    /// `get_into_ranges(buffer_ptrs, all_keys, all_dst_offsets, all_src_offsets, all_sizes)`:
    /// per buffer, per key, per range: bytes copied or a negative status.
    fn get_into_ranges(
        &self,
        py: Python<'_>,
        buffer_ptrs: Vec<usize>,
        all_keys: Vec<Vec<String>>,
        all_dst_offsets: Vec<Vec<Vec<usize>>>,
        all_src_offsets: Vec<Vec<Vec<usize>>>,
        all_sizes: Vec<Vec<Vec<usize>>>,
    ) -> PyResult<Vec<Vec<Vec<i64>>>> {
        let n = buffer_ptrs.len();
        same_len(
            "get_into_ranges",
            &[
                n,
                all_keys.len(),
                all_dst_offsets.len(),
                all_src_offsets.len(),
                all_sizes.len(),
            ],
        )?;
        let mut out = Vec::with_capacity(n);
        for b in 0..n {
            let keys = &all_keys[b];
            same_len(
                "get_into_ranges keys",
                &[
                    keys.len(),
                    all_dst_offsets[b].len(),
                    all_src_offsets[b].len(),
                    all_sizes[b].len(),
                ],
            )?;
            let mut per_key = Vec::with_capacity(keys.len());
            for (k, key) in keys.iter().enumerate() {
                let (dst, src, sizes) = (
                    &all_dst_offsets[b][k],
                    &all_src_offsets[b][k],
                    &all_sizes[b][k],
                );
                same_len(
                    "get_into_ranges ranges",
                    &[dst.len(), src.len(), sizes.len()],
                )?;
                let value = self.lookup(key);
                let base = buffer_ptrs[b];
                let results = py.detach(|| {
                    (0..sizes.len())
                        .map(|r| {
                            copy_range(
                                value.as_deref().map(|b| &b[..]),
                                base,
                                dst[r],
                                src[r],
                                sizes[r],
                            )
                        })
                        .collect::<Vec<i64>>()
                });
                per_key.push(results);
            }
            out.push(per_key);
        }
        Ok(out)
    }

    /// `remove(key, force=False) -> int`: 0, or -704 if already missing.
    #[pyo3(signature = (key, force=false))]
    fn remove(&self, key: &str, force: bool) -> i64 {
        let _ = force; // no leases in one process
        self.delete(key)
    }

    /// `batch_remove(keys, force=False) -> list[int]`.
    #[pyo3(signature = (keys, force=false))]
    fn batch_remove(&self, keys: Vec<String>, force: bool) -> Vec<i64> {
        let _ = force;
        keys.iter().map(|k| self.delete(k)).collect()
    }

    /// `is_exist(key) -> int`: 1 or 0.
    fn is_exist(&self, key: &str) -> i64 {
        i64::from(self.read().map.contains_key(key))
    }

    /// `batch_is_exist(keys) -> list[int]`.
    fn batch_is_exist(&self, keys: Vec<String>) -> Vec<i64> {
        let inner = self.read();
        keys.iter()
            .map(|k| i64::from(inner.map.contains_key(k)))
            .collect()
    }

    /// `get_size(key) -> int`: value length or -704.
    fn get_size(&self, key: &str) -> i64 {
        self.lookup(key)
            .map_or(status::OBJECT_NOT_FOUND, |v| v.len() as i64)
    }

    /// Registration is a no-op here (no NIC to pin memory for) but must exist: the module only
    /// takes its zero-copy paths when register/unregister are callable.
    fn register_buffer(&self, buffer_ptr: usize, size: usize) -> i64 {
        if buffer_ptr == 0 && size > 0 {
            status::INVALID_PARAMS
        } else {
            status::OK
        }
    }

    fn unregister_buffer(&self, buffer_ptr: usize) -> i64 {
        let _ = buffer_ptr;
        status::OK
    }

    /// Every key held, sorted (for tests and debugging; the real client has no such call).
    fn keys(&self) -> Vec<String> {
        self.key_list()
    }

    fn __len__(&self) -> usize {
        self.read().map.len()
    }
}

impl EmbeddedStore {
    fn read_into(&self, py: Python<'_>, key: &str, dst: Addr, size: usize) -> i64 {
        let Some(value) = self.lookup(key) else {
            return status::OBJECT_NOT_FOUND;
        };
        if dst.0 == 0 || size < value.len() {
            return status::INVALID_PARAMS;
        }
        // SAFETY: get_into's contract: `dst..dst+size` is writable, and size >= value.len().
        py.detach(|| unsafe { copy_to_addr(&value, dst) });
        value.len() as i64
    }
}

/// `each(key, buffer_ptr, size)` per entry of a batch call's three parallel lists.
fn per_entry(
    call: &str,
    keys: &[String],
    buffer_ptrs: &[usize],
    sizes: &[usize],
    mut each: impl FnMut(&str, usize, usize) -> i64,
) -> PyResult<Vec<i64>> {
    same_len(call, &[keys.len(), buffer_ptrs.len(), sizes.len()])?;
    Ok(keys
        .iter()
        .zip(buffer_ptrs.iter().zip(sizes))
        .map(|(key, (&ptr, &size))| each(key, ptr, size))
        .collect())
}

fn same_len(call: &str, lens: &[usize]) -> PyResult<()> {
    if lens.windows(2).all(|w| w[0] == w[1]) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{call}: argument lists differ in length: {lens:?}"
        )))
    }
}
