//! Raw copies between store values and caller-owned addresses (the pointer-based calls of
//! the real client), kept in one place with their safety contracts.

use std::sync::Arc;

use super::buf::{Buf, Pool};
use super::status;

/// A raw address from Python, movable into a GIL-free closure.
#[derive(Clone, Copy)]
pub(super) struct Addr(pub(super) usize);

/// Copies `size` bytes from a caller-owned address into a fresh value (`None`: out of memory).
///
/// # Safety
/// `ptr..ptr+size` must be readable for the duration of the call; that is the contract of the
/// real client's `put_from`, and the module only passes addresses of buffers it holds alive.
pub(super) unsafe fn copy_from_addr(pool: &Pool, ptr: Addr, size: usize) -> Option<Arc<Buf>> {
    // SAFETY: per the function contract.
    unsafe { pool.copy(ptr.0 as *const u8, size) }.map(Arc::new)
}

/// Copies `src` into a caller-owned address.
///
/// # Safety
/// `dst..dst+src.len()` must be writable and not overlap `src` (a store value never aliases a
/// caller buffer: values are private allocations).
pub(super) unsafe fn copy_to_addr(src: &[u8], dst: Addr) {
    // SAFETY: per the function contract.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.0 as *mut u8, src.len()) }
}

pub(super) fn copy_range(
    value: Option<&[u8]>,
    base: usize,
    dst: usize,
    src: usize,
    size: usize,
) -> i64 {
    let Some(value) = value else {
        return status::OBJECT_NOT_FOUND;
    };
    let in_bounds = src.checked_add(size).is_some_and(|end| end <= value.len());
    let Some(target) = base.checked_add(dst).filter(|_| base != 0 && in_bounds) else {
        return status::INVALID_PARAMS;
    };
    // SAFETY: get_into_ranges' contract: the caller's buffer covers `dst..dst+size`.
    unsafe { copy_to_addr(&value[src..src + size], Addr(target)) };
    size as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_bounds_checked() {
        let value = b"abcdefgh";
        let mut dst = [0u8; 8];
        let base = dst.as_mut_ptr() as usize;
        assert_eq!(copy_range(Some(value), base, 2, 5, 3), 3);
        assert_eq!(&dst[2..5], b"fgh");
        assert_eq!(
            copy_range(Some(value), base, 0, 6, 3),
            status::INVALID_PARAMS
        );
        assert_eq!(
            copy_range(Some(value), base, 0, usize::MAX, 2),
            status::INVALID_PARAMS
        );
        assert_eq!(copy_range(Some(value), 0, 0, 0, 1), status::INVALID_PARAMS);
        assert_eq!(copy_range(None, base, 0, 0, 1), status::OBJECT_NOT_FOUND);
    }
}
