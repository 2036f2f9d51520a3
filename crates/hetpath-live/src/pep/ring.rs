//! `Ring`: a fixed-capacity byte queue, allocated once. One per relay direction, it is
//! the PEP's only userspace buffer for a connection: when it is full the relay stops
//! reading, so memory per connection never grows (back-pressure closes the sender's
//! window in the kernel instead).

use std::io;

/// A byte ring of fixed capacity.
pub struct Ring {
    buf: Box<[u8]>,
    head: usize,
    len: usize,
}

impl Ring {
    /// A ring holding at most `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Ring {
        Ring {
            buf: vec![0; capacity.max(1)].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// Fills free space with one call of `read` (into the first contiguous free run).
    /// Returns what `read` returned; the ring keeps exactly the bytes it reported.
    pub fn fill_with(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let cap = self.buf.len();
        let tail = (self.head + self.len) % cap;
        let end = if tail >= self.head && self.len < cap {
            cap
        } else {
            self.head
        };
        let free = &mut self.buf[tail..end];
        if free.is_empty() {
            return Ok(0);
        }
        let n = read(free)?.min(free.len());
        self.len += n;
        Ok(n)
    }

    /// Drains with one call of `write` (from the first contiguous filled run).
    pub fn drain_with(
        &mut self,
        write: impl FnOnce(&[u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let cap = self.buf.len();
        let end = (self.head + self.len).min(cap);
        let data = &self.buf[self.head..end];
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
}
