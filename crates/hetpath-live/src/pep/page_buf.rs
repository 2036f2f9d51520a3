//! `PageBuf`: a relay buffer in pages of its own, mapped when a connection first needs
//! it and unmapped when it is released, so that the daemon's memory follows the bytes in
//! flight rather than its configured maxima.
//!
//! Why not the heap: glibc serves a block of a few hundred KiB from `mmap` only while
//! it is above the dynamic mmap threshold, and that threshold rises to the size of every
//! mmapped block freed (up to 32 MiB); after one churn of connections the buffers come
//! from the heap, where freed blocks stay resident (a gateway kept 1.58 GiB after its
//! clients left). A private anonymous mapping is returned to the kernel by `munmap`
//! whatever the allocator did before, and its pages are only resident once touched.
//! Mapping and unmapping are per connection and direction, never per read: the owners
//! release a buffer only when it is empty at a periodic tick (`Relay::release_idle`,
//! `Gateway::release_idle`).

use std::ops::{Deref, DerefMut};

/// The bytes a buffer of `len` bytes occupies: `len` rounded up to whole pages. The
/// memory budget counts this (`config.rs`'s start check and the daemons' accounting).
pub fn mapped_len(len: usize) -> usize {
    let page = page_size();
    len.max(1).div_ceil(page) * page
}

#[cfg(target_os = "linux")]
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    })
}

#[cfg(not(target_os = "linux"))]
fn page_size() -> usize {
    4096
}

/// `len` zeroed bytes in a private anonymous mapping of `mapped_len(len)`.
pub struct PageBuf {
    #[cfg(target_os = "linux")]
    ptr: std::ptr::NonNull<u8>,
    #[cfg(not(target_os = "linux"))]
    heap: Box<[u8]>,
    len: usize,
    mapped: usize,
}

// SAFETY: the mapping is owned by this value alone (no aliasing pointer escapes but
// through `&self`/`&mut self` borrows), like a `Box<[u8]>`.
#[cfg(target_os = "linux")]
unsafe impl Send for PageBuf {}

impl PageBuf {
    /// Maps `len` (at least 1) zeroed bytes. Aborts, as the global allocator does, if
    /// the kernel has no memory for the mapping.
    #[cfg(target_os = "linux")]
    pub fn new(len: usize) -> PageBuf {
        let len = len.max(1);
        let mapped = mapped_len(len);
        // SAFETY: a fresh anonymous private mapping; no existing memory is named.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(mapped, page_size())
                    .expect("a page-aligned layout"),
            );
        }
        PageBuf {
            ptr: std::ptr::NonNull::new(p.cast()).expect("mmap returned a mapping"),
            len,
            mapped,
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn new(len: usize) -> PageBuf {
        let len = len.max(1);
        PageBuf {
            heap: vec![0; len].into_boxed_slice(),
            len,
            mapped: mapped_len(len),
        }
    }

    /// The bytes it occupies (whole pages).
    pub fn mapped(&self) -> usize {
        self.mapped
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    #[cfg(target_os = "linux")]
    fn deref(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    #[cfg(not(target_os = "linux"))]
    fn deref(&self) -> &[u8] {
        &self.heap
    }
}

impl DerefMut for PageBuf {
    #[cfg(target_os = "linux")]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
    #[cfg(not(target_os = "linux"))]
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.heap
    }
}

#[cfg(target_os = "linux")]
impl Drop for PageBuf {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, of this length, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.mapped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_zeroed_writable_and_counted_in_whole_pages() {
        let mut b = PageBuf::new(5000);
        assert_eq!(b.len(), 5000);
        assert!(b.iter().all(|&x| x == 0));
        b[4999] = 7;
        assert_eq!(b[4999], 7);
        assert_eq!(b.mapped() % page_size(), 0);
        assert!(b.mapped() >= 5000 && b.mapped() < 5000 + page_size());
        assert_eq!(mapped_len(0), page_size());
    }
}
