//! `Ring`: a fixed-capacity byte queue. One per relay direction, it is the PEP's only
//! userspace buffer for a connection: when it is full the relay stops reading, so memory
//! per connection never grows past its capacity (back-pressure closes the sender's
//! window in the kernel instead). Its pages (`PageBuf`) are mapped by the first read
//! that brings bytes and unmapped by `release` once it is empty, so an idle direction
//! holds no memory.

use super::page_buf::PageBuf;
use std::io;

/// Bytes the first read into an unmapped ring may bring: read on the stack, so that a
/// read that finds nothing (`WouldBlock`) maps nothing. Small, since an idle direction
/// is read (and this cleared) at every pump: the next reads go to the mapped ring.
const FIRST_READ: usize = 4 << 10;

/// A byte ring of fixed capacity, mapped while it holds bytes.
pub struct Ring {
    buf: Option<PageBuf>,
    cap: usize,
    head: usize,
    len: usize,
}

impl Ring {
    /// A ring holding at most `capacity` bytes (at least 1); nothing is mapped yet.
    pub fn new(capacity: usize) -> Ring {
        Ring {
            buf: None,
            cap: capacity.max(1),
            head: 0,
            len: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The bytes mapped for it now (whole pages; 0 when released).
    pub fn allocated(&self) -> usize {
        self.buf.as_ref().map_or(0, PageBuf::mapped)
    }

    /// Unmaps its pages if it holds no bytes; returns the bytes freed.
    pub fn release(&mut self) -> usize {
        if self.len > 0 {
            return 0;
        }
        self.head = 0;
        self.buf.take().map_or(0, |b| b.mapped())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.cap
    }

    /// Fills free space with one call of `read` (into the first contiguous free run).
    /// Returns what `read` returned; the ring keeps exactly the bytes it reported.
    pub fn fill_with(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let Some(buf) = &mut self.buf else {
            return self.first_fill(read);
        };
        let cap = self.cap;
        let tail = (self.head + self.len) % cap;
        let end = if tail >= self.head && self.len < cap {
            cap
        } else {
            self.head
        };
        let free = &mut buf[tail..end];
        if free.is_empty() {
            return Ok(0);
        }
        let n = read(free)?.min(free.len());
        self.len += n;
        Ok(n)
    }

    /// An unmapped (so empty) ring's fill: read on the stack, and map only for bytes.
    #[cold]
    fn first_fill(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let mut stack = [0u8; FIRST_READ];
        let room = &mut stack[..FIRST_READ.min(self.cap)];
        let n = read(room)?.min(room.len());
        if n > 0 {
            let mut buf = PageBuf::new(self.cap);
            buf[..n].copy_from_slice(&room[..n]);
            self.buf = Some(buf);
            self.head = 0;
            self.len = n;
        }
        Ok(n)
    }

    /// Drains with one call of `write` (from the first contiguous filled run).
    pub fn drain_with(
        &mut self,
        write: impl FnOnce(&[u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let Some(buf) = &self.buf else {
            return Ok(0);
        };
        let cap = self.cap;
        let end = (self.head + self.len).min(cap);
        let data = &buf[self.head..end];
        if data.is_empty() {
            return Ok(0);
        }
        let n = write(data)?.min(data.len());
        self.head = (self.head + n) % cap;
        self.len -= n;
        if self.len == 0 {
            self.head = 0;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_keeps_order() {
        let mut r = Ring::new(5);
        let mut out = Vec::new();
        let mut next = 0u8;
        for step in 0..50 {
            let want = step % 4 + 1;
            let _ = r.fill_with(|b| {
                let n = want.min(b.len());
                for x in &mut b[..n] {
                    *x = next;
                    next = next.wrapping_add(1);
                }
                Ok(n)
            });
            assert!(r.len() <= 5);
            let _ = r.drain_with(|b| {
                let n = (step % 3).min(b.len());
                out.extend_from_slice(&b[..n]);
                Ok(n)
            });
        }
        while !r.is_empty() {
            r.drain_with(|b| {
                out.extend_from_slice(b);
                Ok(b.len())
            })
            .unwrap();
        }
        let expected: Vec<u8> = (0..out.len()).map(|i| i as u8).collect();
        assert_eq!(out, expected);
    }

    fn put(r: &mut Ring, bytes: &[u8]) -> usize {
        r.fill_with(|b| {
            let n = bytes.len().min(b.len());
            b[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
        .unwrap()
    }

    #[test]
    fn a_ring_maps_with_its_first_bytes_and_unmaps_only_when_empty() {
        let mut r = Ring::new(100_000);
        assert_eq!(r.allocated(), 0, "nothing mapped before a byte arrives");
        let nothing = r.fill_with(|_| Err(io::ErrorKind::WouldBlock.into()));
        assert!(nothing.is_err());
        assert_eq!(r.allocated(), 0, "a read that found nothing maps nothing");
        assert_eq!(put(&mut r, b"hello"), 5);
        let mapped = r.allocated();
        assert!(mapped >= 100_000, "{mapped}");
        assert_eq!(r.release(), 0, "bytes held: kept");
        assert_eq!(r.allocated(), mapped);
        let mut out = Vec::new();
        r.drain_with(|b| {
            out.extend_from_slice(b);
            Ok(b.len())
        })
        .unwrap();
        assert_eq!(out, b"hello");
        assert_eq!(r.release(), mapped);
        assert_eq!(r.allocated(), 0);
        assert_eq!(r.drain_with(|_| panic!("nothing to drain")).unwrap(), 0);
        assert_eq!(put(&mut r, b"again"), 5, "mapped again by the next bytes");
        assert_eq!(r.allocated(), mapped);
    }

    #[test]
    fn the_first_read_is_bounded_by_a_small_capacity() {
        let mut r = Ring::new(3);
        assert_eq!(put(&mut r, b"abcdef"), 3);
        assert!(r.is_full());
    }
}
