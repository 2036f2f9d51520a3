//! `Relay`: one split connection's byte pump between its two legs, sans IO.
//!
//! The rules are `hetpath_proto::agent::split::SplitPep`'s, on real sockets: each
//! direction has one bounded `Ring`; the relay reads from a leg only while the ring toward
//! the other leg has room, so a stalled receiver fills the kernel's buffers and closes the
//! sender's window, and nothing grows. A FIN (a read of 0 bytes) is passed on as a
//! half-close once everything before it has been written; the other direction goes on.
//! A reset (a read or write error) on one leg aborts the other with a RST. Until the
//! server leg's connect completes, bytes from the client only collect in its ring.
//!
//! Legs are anything `Leg`: the daemon's nonblocking sockets, or scripted fakes in the
//! tests (`relay_tests.rs`).

use super::ring::Ring;
use std::io;

/// A leg as the relay needs it: nonblocking reads and writes (`WouldBlock` when not
/// ready), a half-close, and an abort that sends a RST.
pub trait Leg {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// Sends a FIN (`shutdown(SHUT_WR)`).
    fn shutdown_write(&mut self) -> io::Result<()>;
    /// Resets the connection (`SO_LINGER` 0, then close): the peer sees a RST.
    fn abort(&mut self);
}

/// The two legs: the accepted one (toward the client) and the connected one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// Where a connection stands after a pump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still relaying. `more`: the pump stopped at its budget with work left (call again
    /// without waiting for readiness: the driver's events are edge-triggered).
    Open { more: bool },
    /// Both directions finished with a FIN: close both legs normally.
    Done,
    /// `from` failed (RST, or an error); the other leg has been aborted.
    Reset { from: Side },
}

/// Counters a pump moved, for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Bytes read from each leg (`Side::index`).
    pub read: [u64; 2],
    /// Bytes written to each leg.
    pub written: [u64; 2],
}

/// One direction: bytes read from `from`, held in the ring, written to the other leg.
struct Pipe {
    ring: Ring,
    /// The source sent its FIN.
    eof: bool,
    /// The FIN has been passed on.
    fin_sent: bool,
}

/// One split connection's relay state.
pub struct Relay {
    /// `pipes[s]` carries bytes read from side `s`.
    pipes: [Pipe; 2],
    connected: bool,
    budget: usize,
}

/// What one direction's step found.
enum Step {
    Progress(bool),
    Failed(Side),
}

impl Relay {
    /// A relay with `buffer` bytes per direction; `budget` bounds the reads and writes
    /// of one pump so that one busy connection cannot starve the others.
    pub fn new(buffer: usize, budget: usize) -> Relay {
        let pipe = || Pipe {
            ring: Ring::new(buffer),
            eof: false,
            fin_sent: false,
        };
        Relay {
            pipes: [pipe(), pipe()],
            connected: false,
            budget: budget.max(1),
        }
    }

    /// The server leg's connect completed.
    pub fn set_connected(&mut self) {
        self.connected = true;
    }

    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Bytes held in both rings.
    pub fn buffered(&self) -> usize {
        self.pipes.iter().map(|p| p.ring.len()).sum()
    }

    /// The most both rings can hold.
    pub fn capacity(&self) -> usize {
        self.pipes.iter().map(|p| p.ring.capacity()).sum()
    }

    /// Bytes mapped for both rings now (`Ring::allocated`).
    pub fn allocated(&self) -> usize {
        self.pipes.iter().map(|p| p.ring.allocated()).sum()
    }

    /// Unmaps the rings that hold no bytes; returns the bytes freed. Called on a
    /// periodic tick, not at every drain, so that a busy direction is not mapped and
    /// unmapped per read.
    pub fn release_idle(&mut self) -> usize {
        self.pipes.iter_mut().map(|p| p.ring.release()).sum()
    }

    /// Moves what can move now, in both directions, until nothing is ready or the budget
    /// is spent. On a failure the other leg is aborted here.
    pub fn pump<'a>(
        &mut self,
        client: &mut (dyn Leg + 'a),
        server: &mut (dyn Leg + 'a),
        moved: &mut Moved,
    ) -> Status {
        let mut ops = 0;
        loop {
            let mut progress = false;
            for from in [Side::Client, Side::Server] {
                if from == Side::Client && !self.connected {
                    // Collect the client's first bytes; the server leg is not there yet.
                    match read_into(&mut self.pipes[0], client, from, moved) {
                        Ok(p) => progress |= p,
                        Err(()) => {
                            server.abort();
                            return Status::Reset { from: Side::Client };
                        }
                    }
                    continue;
                }
                if !self.connected {
                    continue;
                }
                let (src, dst): (&mut (dyn Leg + 'a), &mut (dyn Leg + 'a)) = match from {
                    Side::Client => (&mut *client, &mut *server),
                    Side::Server => (&mut *server, &mut *client),
                };
                match step(&mut self.pipes[from.index()], src, dst, from, moved) {
                    Step::Progress(p) => progress |= p,
                    Step::Failed(side) => {
                        let other = match side.other() {
                            Side::Client => &mut *client,
                            Side::Server => &mut *server,
                        };
                        other.abort();
                        return Status::Reset { from: side };
                    }
                }
            }
            if self.pipes.iter().all(|p| p.fin_sent) {
                return Status::Done;
            }
            if !progress {
                return Status::Open { more: false };
            }
            ops += 1;
            if ops >= self.budget {
                return Status::Open { more: true };
            }
        }
    }
}

/// Reads once from `src` into the pipe if it has room. `Err` when `src` failed.
fn read_into<L: Leg + ?Sized>(
    pipe: &mut Pipe,
    src: &mut L,
    from: Side,
    moved: &mut Moved,
) -> Result<bool, ()> {
    if pipe.eof || pipe.ring.is_full() {
        return Ok(false);
    }
    match pipe.ring.fill_with(|b| src.read(b)) {
        Ok(0) => {
            pipe.eof = true;
            Ok(true)
        }
        Ok(n) => {
            moved.read[from.index()] += n as u64;
            Ok(true)
        }
        Err(e) if retry(&e) => Ok(false),
        Err(_) => Err(()),
    }
}

/// One read and one write of a direction, and its FIN once drained.
fn step<L: Leg + ?Sized, M: Leg + ?Sized>(
    pipe: &mut Pipe,
    src: &mut L,
    dst: &mut M,
    from: Side,
    moved: &mut Moved,
) -> Step {
    let to = from.other();
    let mut progress = match read_into(pipe, src, from, moved) {
        Ok(p) => p,
        Err(()) => return Step::Failed(from),
    };
    if !pipe.ring.is_empty() {
        match pipe.ring.drain_with(|b| dst.write(b)) {
            Ok(0) => return Step::Failed(to),
            Ok(n) => {
                moved.written[to.index()] += n as u64;
                progress = true;
            }
            Err(e) if retry(&e) => {}
            Err(_) => return Step::Failed(to),
        }
    }
    if pipe.eof && pipe.ring.is_empty() && !pipe.fin_sent {
        if dst.shutdown_write().is_err() {
            return Step::Failed(to);
        }
        pipe.fin_sent = true;
        progress = true;
    }
    Step::Progress(progress)
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
#[path = "relay_tests.rs"]
mod tests;
