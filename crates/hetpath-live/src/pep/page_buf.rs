//! `PageBuf`: a relay buffer in pages of its own, mapped when a connection first needs
//! it and unmapped when it is released, so that the daemon's memory follows the bytes in
//! flight rather than its configured maxima.
//!
//! Why not the heap: glibc serves a block of a few hundred KiB from `mmap` only while
//! it is above the dynamic mmap threshold, and that threshold rises to the size of every
//! mmapped block freed (up to 32 MiB); after one churn of connections the buffers come
//! from the heap, where freed blocks stay resident (a gateway kept 1.58 GiB after its
//! clients left). A private anonymous mapping (memmap2's `map_anon`) is returned to the kernel by `munmap`
//! whatever the allocator did before, and its pages are only resident once touched.
//! Mapping and unmapping are per connection and direction, never per read: the owners
//! release a buffer only when it is empty at a periodic tick (`Relay::release_idle`,
//! `Gateway::release_idle`).

use memmap2::MmapMut;
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

/// `len` zeroed bytes in a private anonymous mapping (memmap2) of `mapped_len(len)`,
/// unmapped when dropped.
pub struct PageBuf {
    map: MmapMut,
    len: usize,
}

impl PageBuf {
    /// Maps `len` (at least 1) zeroed bytes. Aborts, as the global allocator does, if
    /// the kernel has no memory for the mapping.
    pub fn new(len: usize) -> PageBuf {
        let len = len.max(1);
        let Ok(map) = MmapMut::map_anon(mapped_len(len)) else {
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(mapped_len(len), page_size())
                    .expect("a page-aligned layout"),
            );
        };
        PageBuf { map, len }
    }

    /// The bytes it occupies (whole pages).
    pub fn mapped(&self) -> usize {
        self.map.len()
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[..self.len]
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
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
