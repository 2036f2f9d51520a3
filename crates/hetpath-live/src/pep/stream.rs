//! The byte adapter between real streams and hetpath-proto's TCP, which moves byte
//! *counts*: a segment says where its payload sits (`seq`) and how long it is, never
//! what it holds. The gateway keeps the bytes beside the counts.
//!
//! - `SendBuffer`: what the local application wrote and the peer has not acknowledged,
//!   by stream offset. The payload of each segment the connection emits is cut from it
//!   (`slice`), retransmissions included; a cumulative ACK frees the bytes below it
//!   (`release_to`). It never grows: the application is read only while it has room.
//! - `RecvBuffer`: the peer's payloads placed at their offsets (`store`), out of order
//!   or not, and handed out exactly as far as the connection says the data is in order
//!   (`peek`, `consume`). Its capacity is the connection's receive buffer, so everything
//!   TCP accepts (RCV.NXT up to the window's right edge, RFC 9293 section 3.8.6) has a
//!   place: the receiver never accepts beyond `read + capacity`.
//!
//! Both map their pages only when bytes first need them and unmap them when asked
//! (`release`) while they hold nothing (`page_buf.rs`), so memory follows the bytes in
//! flight, not `capacity` times the connections.
//!
//! Stream offset 0 is the first data byte (TCP sequence number 1: the SYN is 0).

use super::page_buf::PageBuf;

/// A fixed ring addressed by absolute stream offset (`offset % capacity`), its pages
/// (`PageBuf`) mapped by the first bytes put and unmapped by `release`: an idle
/// connection holds no buffer, and memory follows the bytes held.
struct Ring {
    buf: Option<PageBuf>,
    cap: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring {
            buf: None,
            cap: cap.max(1),
        }
    }

    fn cap(&self) -> usize {
        self.cap
    }

    fn allocated(&self) -> usize {
        self.buf.as_ref().map_or(0, PageBuf::mapped)
    }

    /// Unmaps the pages (the owner knows nothing is held); returns the bytes freed.
    fn release(&mut self) -> usize {
        self.buf.take().map_or(0, |b| b.mapped())
    }

    fn pos(&self, off: u64) -> usize {
        (off % self.cap as u64) as usize
    }

    /// Copies `bytes` to offsets `off..` (the caller keeps within one capacity).
    fn put(&mut self, off: u64, bytes: &[u8]) {
        let p = self.pos(off);
        let cap = self.cap;
        let buf = self.buf.get_or_insert_with(|| PageBuf::new(cap));
        let first = bytes.len().min(cap - p);
        buf[p..p + first].copy_from_slice(&bytes[..first]);
        buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
    }

    /// Appends offsets `off..off + len` to `out` (the caller keeps within one capacity,
    /// of bytes it put).
    fn get(&self, off: u64, len: usize, out: &mut Vec<u8>) {
        let Some(buf) = &self.buf else {
            debug_assert_eq!(len, 0, "bytes asked of an unmapped ring");
            return;
        };
        let p = self.pos(off);
        let first = len.min(self.cap - p);
        out.extend_from_slice(&buf[p..p + first]);
        out.extend_from_slice(&buf[..len - first]);
    }

    /// The contiguous run from `off`, at most `len` long (empty while unmapped: nothing
    /// was put).
    fn run(&self, off: u64, len: usize) -> &[u8] {
        let Some(buf) = &self.buf else {
            return &[];
        };
        let p = self.pos(off);
        &buf[p..p + len.min(self.cap - p)]
    }
}

/// Written and not yet acknowledged: offsets `base..base + len`.
pub struct SendBuffer {
    ring: Ring,
    base: u64,
    len: usize,
}

impl SendBuffer {
    pub fn new(capacity: usize) -> SendBuffer {
        SendBuffer {
            ring: Ring::new(capacity),
            base: 0,
            len: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.ring.cap()
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Room for more.
    pub fn space(&self) -> usize {
        self.capacity() - self.len
    }

    /// Bytes written in all (the offset of the next one).
    pub fn end(&self) -> u64 {
        self.base + self.len as u64
    }

    /// Appends as much of `bytes` as fits; returns how much.
    pub fn push(&mut self, bytes: &[u8]) -> usize {
        let n = bytes.len().min(self.space());
        self.ring.put(self.end(), &bytes[..n]);
        self.len += n;
        n
    }

    /// Appends offsets `off..off + len` to `out`; false (and nothing appended) if any of
    /// them is not held (acknowledged already, or never written).
    pub fn slice(&self, off: u64, len: usize, out: &mut Vec<u8>) -> bool {
        let held = off >= self.base && off.saturating_add(len as u64) <= self.end();
        if held {
            self.ring.get(off, len, out);
        }
        held
    }

    /// The peer acknowledged everything below `off`.
    pub fn release_to(&mut self, off: u64) {
        let off = off.min(self.end());
        if off > self.base {
            self.len -= (off - self.base) as usize;
            self.base = off;
        }
    }

    /// Bytes mapped for it now (whole pages; 0 when released).
    pub fn allocated(&self) -> usize {
        self.ring.allocated()
    }

    /// Unmaps its pages if everything written was acknowledged; the bytes freed.
    pub fn release(&mut self) -> usize {
        if self.len > 0 {
            return 0;
        }
        self.ring.release()
    }
}

/// Received bytes from offset `read` (the next one the application gets) up to
/// `read + capacity`, in place.
pub struct RecvBuffer {
    ring: Ring,
    read: u64,
    /// One past the highest offset ever placed: above `read`, bytes are held (in order
    /// or not), so the pages must stay.
    stored_end: u64,
}

impl RecvBuffer {
    pub fn new(capacity: usize) -> RecvBuffer {
        RecvBuffer {
            ring: Ring::new(capacity),
            read: 0,
            stored_end: 0,
        }
    }

    /// Bytes mapped for it now (whole pages; 0 when released).
    pub fn allocated(&self) -> usize {
        self.ring.allocated()
    }

    /// Unmaps its pages if every byte placed was handed out (none held, in order or
    /// above a gap); the bytes freed.
    pub fn release(&mut self) -> usize {
        if self.stored_end > self.read {
            return 0;
        }
        self.ring.release()
    }

    pub fn capacity(&self) -> usize {
        self.ring.cap()
    }

    /// The offset of the next byte handed out.
    pub fn read_offset(&self) -> u64 {
        self.read
    }

    /// Places `bytes` at offsets `off..`, clipped to the window `read..read + capacity`
    /// (what lies below was handed out already, what lies above TCP does not accept).
    /// Returns the bytes placed.
    pub fn store(&mut self, off: u64, bytes: &[u8]) -> usize {
        let lo = off.max(self.read);
        let hi = off
            .saturating_add(bytes.len() as u64)
            .min(self.read + self.capacity() as u64);
        if lo >= hi {
            return 0;
        }
        let from = (lo - off) as usize;
        let n = (hi - lo) as usize;
        self.ring.put(lo, &bytes[from..from + n]);
        self.stored_end = self.stored_end.max(hi);
        n
    }

    /// The next bytes in order, at most `avail` (what the connection says is readable):
    /// one contiguous run, so possibly fewer.
    pub fn peek(&self, avail: u64) -> &[u8] {
        let n = avail.min(self.capacity() as u64) as usize;
        self.ring.run(self.read, n)
    }

    /// The application took `n` bytes.
    pub fn consume(&mut self, n: u64) {
        self.read += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_buffer_wraps_slices_and_releases() {
        let mut s = SendBuffer::new(8);
        assert_eq!(s.push(b"abcdef"), 6);
        s.release_to(4);
        assert_eq!(s.push(b"ghijklmn"), 6, "room for 6 after releasing 4");
        let mut out = Vec::new();
        assert!(s.slice(5, 6, &mut out));
        assert_eq!(out, b"fghijk");
        assert!(!s.slice(3, 2, &mut out), "released");
        assert!(!s.slice(10, 3, &mut out), "not written");
        assert_eq!(s.space(), 0);
    }

    #[test]
    fn recv_buffer_clips_to_its_window_and_hands_out_in_order() {
        let mut r = RecvBuffer::new(8);
        assert_eq!(r.store(4, b"efghijkl"), 4, "clipped at read + capacity");
        assert_eq!(r.store(0, b"abcd"), 4);
        assert_eq!(r.peek(8), b"abcdefgh");
        r.consume(6);
        assert_eq!(r.store(8, b"ijklmn"), 6);
        assert_eq!(r.peek(8), b"gh", "one contiguous run");
        r.consume(2);
        assert_eq!(r.peek(6), b"ijklmn");
        assert_eq!(r.store(0, b"zz"), 0, "below what was handed out");
    }

    #[test]
    fn send_buffer_maps_on_the_first_push_and_unmaps_once_all_is_acknowledged() {
        let mut s = SendBuffer::new(100_000);
        assert_eq!((s.allocated(), s.space()), (0, 100_000));
        assert_eq!(s.push(b"abcdef"), 6);
        let mapped = s.allocated();
        assert!(mapped >= 100_000);
        s.release_to(4);
        assert_eq!(s.release(), 0, "two bytes unacknowledged");
        s.release_to(6);
        assert_eq!(s.release(), mapped);
        assert_eq!(s.allocated(), 0);
        assert_eq!(s.push(b"gh"), 2, "mapped again");
        let mut out = Vec::new();
        assert!(s.slice(6, 2, &mut out));
        assert_eq!(out, b"gh");
    }

    #[test]
    fn recv_buffer_keeps_its_pages_while_bytes_above_a_gap_are_held() {
        let mut r = RecvBuffer::new(8);
        assert_eq!(r.allocated(), 0);
        assert_eq!(r.peek(0), b"");
        assert_eq!(r.store(4, b"ef"), 2, "out of order");
        assert_eq!(r.release(), 0, "held above the gap");
        assert_eq!(r.store(0, b"abcd"), 4);
        r.consume(4);
        assert_eq!(r.release(), 0, "ef not handed out yet");
        assert_eq!(r.peek(2), b"ef");
        r.consume(2);
        let mapped = r.allocated();
        assert!(mapped > 0);
        assert_eq!(r.release(), mapped);
        assert_eq!(r.peek(0), b"");
        assert_eq!(r.store(6, b"gh"), 2, "mapped again at the same offsets");
        assert_eq!(r.peek(2), b"gh");
    }
}
