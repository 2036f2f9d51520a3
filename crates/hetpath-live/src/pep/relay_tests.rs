//! The relay's rules on scripted legs, without sockets: bytes in order, FIN after the
//! data and each direction on its own (half-close), RST both ways, back-pressure.

use super::*;
use crate::pep::page_buf;
use std::collections::VecDeque;

/// A scripted leg: `inbox` is what the peer sent (then `fin`, or an error), `accept`
/// how many more bytes the peer's window takes.
#[derive(Default)]
struct Fake {
    inbox: VecDeque<u8>,
    fin: bool,
    reset: bool,
    accept: usize,
    got: Vec<u8>,
    shut: bool,
    aborted: bool,
    reads: usize,
}

impl Leg for Fake {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.inbox.is_empty() {
            if self.reset {
                return Err(io::ErrorKind::ConnectionReset.into());
            }
            return if self.fin {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = buf.len().min(self.inbox.len()).min(7);
        for b in &mut buf[..n] {
            *b = self.inbox.pop_front().unwrap();
        }
        Ok(n)
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        assert!(!self.shut, "write after FIN");
        if self.reset {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let n = buf.len().min(self.accept);
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.accept -= n;
        self.got.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shut = true;
        Ok(())
    }
    fn abort(&mut self) {
        self.aborted = true;
    }
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn leg(bytes: &[u8], accept: usize) -> Fake {
    Fake {
        inbox: bytes.iter().copied().collect(),
        accept,
        ..Fake::default()
    }
}

fn pump_until_idle(r: &mut Relay, c: &mut Fake, s: &mut Fake) -> Status {
    let mut m = Moved::default();
    for _ in 0..10_000 {
        match r.pump(c, s, &mut m) {
            Status::Open { more: true } => continue,
            st => return st,
        }
    }
    panic!("relay did not settle");
}

#[test]
fn bytes_cross_in_order_both_ways_and_fins_close_it() {
    let up = data(5000, 1);
    let down = data(3000, 2);
    let mut c = leg(&up, usize::MAX);
    let mut s = leg(&down, usize::MAX);
    c.fin = true;
    s.fin = true;
    let mut r = Relay::new(64, 8);
    r.set_connected();
    assert_eq!(pump_until_idle(&mut r, &mut c, &mut s), Status::Done);
    assert_eq!(s.got, up);
    assert_eq!(c.got, down);
    assert!(c.shut && s.shut && !c.aborted && !s.aborted);
}

#[test]
fn half_close_passes_the_fin_after_the_data_and_the_other_way_goes_on() {
    let up = data(500, 3);
    let mut c = leg(&up, usize::MAX);
    c.fin = true;
    let mut s = leg(&[], usize::MAX);
    let mut r = Relay::new(64, 8);
    r.set_connected();
    assert_eq!(
        pump_until_idle(&mut r, &mut c, &mut s),
        Status::Open { more: false }
    );
    assert_eq!(s.got, up);
    assert!(s.shut, "the client's FIN reached the server after its data");
    assert!(
        !c.shut,
        "the server has not closed: the client's way in stays open"
    );
    // The server answers after the client's half-close, then closes.
    let down = data(900, 4);
    s.inbox.extend(down.iter().copied());
    s.fin = true;
    assert_eq!(pump_until_idle(&mut r, &mut c, &mut s), Status::Done);
    assert_eq!(c.got, down);
    assert!(c.shut);
}

#[test]
fn a_fin_waits_for_the_bytes_before_it() {
    let up = data(300, 5);
    let mut c = leg(&up, usize::MAX);
    c.fin = true;
    let mut s = leg(&[], 100);
    let mut r = Relay::new(1000, 8);
    r.set_connected();
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(s.got.len(), 100);
    assert!(!s.shut, "no FIN before the last byte");
    s.accept = usize::MAX;
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(s.got, up);
    assert!(s.shut);
}

#[test]
fn a_reset_from_the_client_resets_the_server_and_back() {
    for from in [Side::Client, Side::Server] {
        let mut c = leg(&data(50, 6), usize::MAX);
        let mut s = leg(&data(50, 7), usize::MAX);
        match from {
            Side::Client => c.reset = true,
            Side::Server => s.reset = true,
        }
        let mut r = Relay::new(64, 8);
        r.set_connected();
        assert_eq!(
            pump_until_idle(&mut r, &mut c, &mut s),
            Status::Reset { from }
        );
        match from {
            Side::Client => assert!(s.aborted && !s.shut),
            Side::Server => assert!(c.aborted && !c.shut),
        }
    }
}

#[test]
fn a_peer_that_refuses_writes_counts_as_its_reset() {
    // The server closed and answered our data with a RST: the write fails.
    let mut c = leg(&data(50, 8), usize::MAX);
    let mut s = leg(&[], usize::MAX);
    s.reset = true;
    s.inbox.clear();
    let mut r = Relay::new(64, 8);
    r.set_connected();
    let st = pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(st, Status::Reset { from: Side::Server });
    assert!(c.aborted);
}

#[test]
fn a_stalled_receiver_stops_the_reads_at_the_ring() {
    let up = data(100_000, 9);
    let mut c = leg(&up, usize::MAX);
    let mut s = leg(&[], 0);
    let mut r = Relay::new(4096, 8);
    r.set_connected();
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(r.buffered(), 4096, "the ring is full");
    let reads = c.reads;
    let left = c.inbox.len();
    for _ in 0..100 {
        pump_until_idle(&mut r, &mut c, &mut s);
    }
    assert_eq!(
        c.reads, reads,
        "no read while the ring is full: the client's window closes"
    );
    assert_eq!(c.inbox.len(), left);
    assert!(r.buffered() <= r.capacity());
    // The receiver drains; everything arrives in order.
    s.accept = usize::MAX;
    c.fin = true;
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(s.got, up);
}

#[test]
fn before_the_connect_completes_client_bytes_wait_in_the_ring() {
    let up = data(200, 10);
    let mut c = leg(&up, usize::MAX);
    let mut s = leg(&[], usize::MAX);
    let mut r = Relay::new(128, 8);
    assert_eq!(
        pump_until_idle(&mut r, &mut c, &mut s),
        Status::Open { more: false }
    );
    assert!(s.got.is_empty());
    assert_eq!(r.buffered(), 128);
    r.set_connected();
    c.fin = true;
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(s.got, up);
}

#[test]
fn the_budget_returns_control_with_work_left() {
    let up = data(10_000, 11);
    let mut c = leg(&up, usize::MAX);
    let mut s = leg(&[], usize::MAX);
    let mut r = Relay::new(64, 2);
    r.set_connected();
    let mut m = Moved::default();
    assert_eq!(r.pump(&mut c, &mut s, &mut m), Status::Open { more: true });
    assert!(m.read[0] > 0 && m.written[1] > 0);
}

#[test]
fn memory_follows_the_bytes_held_not_the_capacity() {
    let mut r = Relay::new(64 << 10, 8);
    r.set_connected();
    // Accepted, connected, nothing sent yet: nothing mapped.
    let mut c = leg(&[], usize::MAX);
    let mut s = leg(&[], usize::MAX);
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(r.allocated(), 0, "an idle connection holds no buffer");
    // A download to a client that never reads: one ring fills and stays mapped.
    let down = data(200_000, 12);
    s.inbox.extend(down.iter().copied());
    c.accept = 0;
    c.inbox.extend(data(300, 13));
    pump_until_idle(&mut r, &mut c, &mut s);
    let ring = page_buf::mapped_len(64 << 10);
    assert_eq!(r.allocated(), 2 * ring, "both directions carried bytes");
    assert_eq!(
        r.release_idle(),
        ring,
        "the request's ring drained: released"
    );
    assert_eq!(r.allocated(), ring, "the full ring is kept");
    // The client reads everything: the ring empties and is released at the next tick.
    c.accept = usize::MAX;
    pump_until_idle(&mut r, &mut c, &mut s);
    assert_eq!(c.got.len(), down.len());
    assert_eq!(r.release_idle(), ring);
    assert_eq!(r.allocated(), 0);
}
