//! The bytes of one stored value: an immutable heap buffer. Large values are 2 MiB-aligned
//! and advised as transparent huge pages, because on a fresh allocation the page faults cost
//! more than the copy itself (numpy advises its large arrays the same way). Freed large
//! buffers are kept in a bounded [`Pool`] and refilled by later puts, as the real client
//! writes into a segment it mapped once.

use std::alloc::{Layout, alloc, dealloc};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Values at least this large get huge pages.
const HUGE_MIN: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

pub struct Buf {
    ptr: NonNull<u8>,
    len: usize,
    /// `None` for an empty value (nothing allocated).
    layout: Option<Layout>,
}

// SAFETY: the buffer is written once, before it is shared, and never again; it owns its memory.
unsafe impl Send for Buf {}
// SAFETY: as above, shared access is read-only.
unsafe impl Sync for Buf {}

impl Buf {
    /// A copy of `len` bytes at `src`, or `None` if the allocation fails.
    ///
    /// # Safety
    /// `src..src+len` must be readable and stay unchanged for the duration of the call.
    pub unsafe fn copy_from(src: *const u8, len: usize) -> Option<Buf> {
        if len == 0 {
            return Some(Buf {
                ptr: NonNull::dangling(),
                len,
                layout: None,
            });
        }
        let (size, align) = if len >= HUGE_MIN {
            (len.div_ceil(HUGE_PAGE) * HUGE_PAGE, HUGE_PAGE)
        } else {
            (len, 64)
        };
        let layout = Layout::from_size_align(size, align).ok()?;
        // SAFETY: layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc(layout) })?;
        #[cfg(target_os = "linux")]
        if align == HUGE_PAGE {
            // SAFETY: ptr..ptr+size is our own fresh, page-aligned allocation.
            // A hint, so its result is ignored.
            unsafe { libc::madvise(ptr.as_ptr().cast(), size, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: src is readable per the contract; dst has `size >= len` bytes and is fresh.
        unsafe { std::ptr::copy_nonoverlapping(src, ptr.as_ptr(), len) };
        Some(Buf {
            ptr,
            len,
            layout: Some(layout),
        })
    }

    /// Bytes the allocation can hold.
    pub fn capacity(&self) -> usize {
        self.layout.map_or(0, |l| l.size())
    }

    /// Reuses this (unshared) buffer for `len` bytes at `src`; `len <= capacity()`.
    ///
    /// # Safety
    /// As for [`Buf::copy_from`], and `len <= self.capacity()`.
    unsafe fn refill(mut self, src: *const u8, len: usize) -> Buf {
        // SAFETY: per the contract; self is owned, so nobody reads it meanwhile.
        unsafe { std::ptr::copy_nonoverlapping(src, self.ptr.as_ptr(), len) };
        self.len = len;
        self
    }

    /// A copy of a slice.
    pub fn from_slice(src: &[u8]) -> Option<Buf> {
        // SAFETY: a slice is readable for its length.
        unsafe { Buf::copy_from(src.as_ptr(), src.len()) }
    }
}

impl std::ops::Deref for Buf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr holds len initialized bytes (or is dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: allocated in copy_from with this very layout.
            unsafe { dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// Freed large buffers, up to `limit` bytes, for later puts to refill instead of faulting in
/// fresh pages.
pub struct Pool {
    free: Mutex<Vec<Buf>>,
    limit: usize,
}

impl Pool {
    pub fn new(limit: usize) -> Pool {
        Pool {
            free: Mutex::new(Vec::new()),
            limit,
        }
    }

    /// A copy of `len` bytes at `src`, in a pooled buffer if one fits without wasting more
    /// than half of it, else in a fresh one.
    ///
    /// # Safety
    /// As for [`Buf::copy_from`].
    pub unsafe fn copy(&self, src: *const u8, len: usize) -> Option<Buf> {
        if len >= HUGE_MIN {
            let reused = {
                let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
                let best = free
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.capacity() >= len && b.capacity() / 2 <= len)
                    .min_by_key(|(_, b)| b.capacity())
                    .map(|(i, _)| i);
                best.map(|i| free.swap_remove(i))
            };
            if let Some(buf) = reused {
                // SAFETY: per the contract; the filter above checked the capacity.
                return Some(unsafe { buf.refill(src, len) });
            }
        }
        // SAFETY: per the contract.
        unsafe { Buf::copy_from(src, len) }
    }

    /// Keeps a freed buffer if it is large and the pool has room; drops it otherwise.
    pub fn give(&self, buf: Buf) {
        if buf.capacity() < HUGE_MIN {
            return;
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let held: usize = free.iter().map(Buf::capacity).sum();
        if held + buf.capacity() <= self.limit {
            free.push(buf);
        }
    }

    /// Drops every pooled buffer.
    pub fn clear(&self) {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_refills_a_freed_buffer_and_keeps_values_apart() {
        let pool = Pool::new(64 << 20);
        let a: Vec<u8> = (0..HUGE_MIN + 5).map(|i| i as u8).collect();
        // SAFETY: slices are readable for their length.
        let first = unsafe { pool.copy(a.as_ptr(), a.len()) }.expect("alloc");
        assert_eq!(&first[..], &a[..]);
        let addr = first.as_ptr();
        pool.give(first);
        let b = vec![7u8; HUGE_MIN + 1];
        // SAFETY: as above.
        let second = unsafe { pool.copy(b.as_ptr(), b.len()) }.expect("alloc");
        assert_eq!(second.as_ptr(), addr, "the freed buffer is reused");
        assert_eq!(&second[..], &b[..]);
        // Too small to fit, or would waste more than half: a fresh buffer.
        // SAFETY: as above.
        let small = unsafe { pool.copy(b.as_ptr(), 10) }.expect("alloc");
        assert_eq!(small.len(), 10);
        assert_eq!(Buf::from_slice(&[]).map(|e| e.len()), Some(0));
    }

    #[test]
    fn pool_stays_within_its_limit() {
        let pool = Pool::new(HUGE_MIN + HUGE_PAGE);
        for _ in 0..3 {
            pool.give(Buf::from_slice(&vec![1u8; HUGE_MIN]).expect("alloc"));
        }
        let held: usize = pool
            .free
            .lock()
            .expect("the pool's lock is not poisoned")
            .iter()
            .map(Buf::capacity)
            .sum();
        assert!(held <= HUGE_MIN + HUGE_PAGE, "{held}");
        pool.clear();
    }
}
