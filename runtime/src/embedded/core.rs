//! The Rust side of the embedded store: construction, the locked map, insert and delete.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::buf::{Buf, Pool};
use super::{DEFAULT_RECYCLE_BYTES, EmbeddedStore, Inner, status};

impl EmbeddedStore {
    /// A store holding at most `capacity` bytes of values (`usize::MAX` for no limit).
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_limits(capacity, DEFAULT_RECYCLE_BYTES)
    }

    /// As [`with_capacity`](Self::with_capacity), keeping up to `recycle_bytes` of freed large
    /// buffers for later puts (0 returns every freed buffer to the allocator at once).
    pub fn with_limits(capacity: usize, recycle_bytes: usize) -> Self {
        EmbeddedStore {
            inner: RwLock::new(Inner::default()),
            capacity,
            pool: Pool::new(recycle_bytes),
        }
    }

    /// Gives back every recycled buffer to the allocator.
    pub fn trim(&self) {
        self.pool.clear();
    }

    pub(super) fn read(&self) -> RwLockReadGuard<'_, Inner> {
        // A poisoned lock still holds a consistent map: every mutation is a single insert/remove.
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn lookup(&self, key: &str) -> Option<Arc<Buf>> {
        self.read().map.get(key).cloned()
    }

    /// Inserts unless the key exists or the store is full; the value is built before locking.
    pub fn insert(&self, key: &str, value: Option<Arc<Buf>>) -> i64 {
        let Some(value) = value else {
            return status::NO_AVAILABLE_HANDLE;
        };
        if value.is_empty() {
            // The real client refuses empty values too (its allocator has nothing to hand out).
            return status::INVALID_PARAMS;
        }
        let mut inner = self.write();
        if inner.map.contains_key(key) {
            return status::OBJECT_ALREADY_EXISTS;
        }
        if inner.bytes.saturating_add(value.len()) > self.capacity {
            return status::NO_AVAILABLE_HANDLE;
        }
        inner.bytes += value.len();
        inner.map.insert(key.to_owned(), value);
        status::OK
    }

    /// Removes a key; `OBJECT_NOT_FOUND` if it was not there.
    pub fn delete(&self, key: &str) -> i64 {
        let removed = {
            let mut inner = self.write();
            let removed = inner.map.remove(key);
            if let Some(v) = &removed {
                inner.bytes -= v.len();
            }
            removed
        };
        match removed {
            Some(v) => {
                // Recycle only if no reader still holds it (outside the lock: it may free).
                if let Ok(buf) = Arc::try_unwrap(v) {
                    self.pool.give(buf);
                }
                status::OK
            }
            None => status::OBJECT_NOT_FOUND,
        }
    }

    /// The stored bytes of a key (shared, not copied).
    pub fn value(&self, key: &str) -> Option<Arc<Buf>> {
        self.lookup(key)
    }

    /// Every key currently held, sorted.
    pub fn key_list(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.read().map.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// Number of keys and total value bytes.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.read();
        (inner.map.len(), inner.bytes)
    }
}

impl Default for EmbeddedStore {
    fn default() -> Self {
        Self::with_capacity(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(bytes: &[u8]) -> Option<Arc<Buf>> {
        Buf::from_slice(bytes).map(Arc::new)
    }

    #[test]
    fn insert_refuses_collisions_empty_values_and_overflow() {
        let store = EmbeddedStore::with_capacity(8);
        assert_eq!(store.insert("a", value(b"12345")), status::OK);
        assert_eq!(
            store.insert("a", value(b"x")),
            status::OBJECT_ALREADY_EXISTS
        );
        assert_eq!(store.insert("b", value(b"")), status::INVALID_PARAMS);
        assert_eq!(
            store.insert("c", value(b"6789")),
            status::NO_AVAILABLE_HANDLE
        );
        assert_eq!(store.insert("d", None), status::NO_AVAILABLE_HANDLE);
        assert_eq!(store.usage(), (1, 5));
        assert_eq!(
            store.value("a").as_deref().map(|b| &b[..]),
            Some(&b"12345"[..])
        );
        assert_eq!(store.delete("a"), status::OK);
        assert_eq!(store.delete("a"), status::OBJECT_NOT_FOUND);
        assert_eq!(
            store.insert("c", value(b"6789")),
            status::OK,
            "space is given back"
        );
        assert_eq!(store.key_list(), ["c"]);
    }
}
