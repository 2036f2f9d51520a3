//! The integrated PEP's event loop (Linux): one thread, epoll through mio, edge-triggered.
//! The listener accepts TPROXY'd connections, checks them against the match again (so the
//! PEP never relays what the rules did not send it) and against the cap, and opens the
//! server leg in the client's name; each readiness event pumps that connection's `Relay`.
//! A pump that stops at its budget is pumped again before the next wait. The loop ends at
//! SIGINT or SIGTERM (a signalfd), resetting the connections it still holds.
//!
//! No silent truncation: both sockets of a relayed connection carry `SO_LINGER` {on, 0}
//! from the moment they exist, so that if the process dies (`kill -9`, a crash, the OOM
//! killer) the kernel closes them with a RST and neither end mistakes a cut stream for a
//! whole one. A leg's linger is cleared just before its FIN is passed on (the orderly
//! path), so a FIN still follows every byte written before it (an abortive close
//! discards what is queued: RFC 9293 section 3.10.5, ABORT).
//!
//! Limits: a source over `max_connections_per_source` is reset at accept; a connection
//! that moves no byte either way for `idle_timeout` is reset on both legs (checked once
//! per `SAMPLE`); out of descriptors, clients are reset rather than left in the backlog
//! (`accept.rs`).

use super::accept::Acceptor;
use super::admission::Admission;
use super::config::{Config, LogLevel};
use super::log::log;
use super::metrics::Metrics;
use super::relay::{Leg, Moved, Relay, Side, Status};
use super::sock;
use mio::net::{TcpListener, TcpStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

const LISTENER: Token = Token(0);
const SIGNALS: Token = Token(1);
/// Reads and writes one connection may do per wake-up before the others get a turn.
const BUDGET: usize = 16;
/// How often the open connections' retransmission counts are sampled.
const SAMPLE: Duration = Duration::from_secs(1);

/// A mio stream as the relay's leg.
struct Sock<'a>(&'a mut TcpStream);

impl Leg for Sock<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    /// Disarms the abortive close first: the FIN ends the data, so a close (or the
    /// process's death) from here on must not discard what is still queued.
    fn shutdown_write(&mut self) -> io::Result<()> {
        sock::clear_abort(&*self.0);
        self.0.shutdown(Shutdown::Write)
    }
    fn abort(&mut self) {
        sock::set_abort(&*self.0);
    }
}

struct Conn {
    client: TcpStream,
    server: TcpStream,
    relay: Relay,
    peer: SocketAddrV4,
    dst: SocketAddrV4,
    retrans: [u64; 2],
    /// When a byte last moved either way (the loop's clock).
    last_moved: Instant,
}

fn token(key: usize, side: Side) -> Token {
    Token(2 + 2 * key + side.index())
}

/// The daemon's state.
pub struct Daemon {
    cfg: Config,
    poll: Poll,
    listener: TcpListener,
    conns: Slab<Conn>,
    again: Vec<usize>,
    metrics: Arc<Metrics>,
    buffered: u64,
    /// Bytes mapped for the rings now (`Relay::allocated`).
    allocated: u64,
    acceptor: Acceptor,
    admission: Admission,
    /// The time the loop last woke.
    now: Instant,
}

impl Daemon {
    pub fn new(cfg: Config, listener: TcpListener, metrics: Arc<Metrics>) -> io::Result<Daemon> {
        let admission = Admission::new(&cfg, &metrics);
        Ok(Daemon {
            cfg,
            poll: Poll::new()?,
            listener,
            conns: Slab::new(),
            again: Vec::new(),
            metrics,
            buffered: 0,
            allocated: 0,
            acceptor: Acceptor::new(),
            admission,
            now: Instant::now(),
        })
    }

    /// Runs until a signal arrives on `signals`.
    pub fn run(&mut self, signals: &OwnedFd) -> io::Result<()> {
        let reg = self.poll.registry();
        reg.register(&mut self.listener, LISTENER, Interest::READABLE)?;
        reg.register(
            &mut SourceFd(&signals.as_raw_fd()),
            SIGNALS,
            Interest::READABLE,
        )?;
        let mut events = Events::with_capacity(256);
        let mut sampled = Instant::now();
        loop {
            let wait = if self.again.is_empty() {
                SAMPLE
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            self.now = Instant::now();
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept_all(),
                    SIGNALS => {
                        self.shutdown();
                        return Ok(());
                    }
                    Token(t) => self.service((t - 2) / 2),
                }
            }
            for key in std::mem::take(&mut self.again) {
                self.service(key);
            }
            // Clients left in the backlog while descriptors were short, now that some
            // may have been freed.
            if self.acceptor.pending() {
                self.accept_all();
            }
            if sampled.elapsed() >= SAMPLE {
                sampled = Instant::now();
                self.sample_retransmissions();
                self.release_idle();
                self.reset_idle();
            }
        }
    }

    fn accept_all(&mut self) {
        while let Some((client, peer)) = self.acceptor.next(&self.listener, &self.metrics) {
            self.admit(client, peer);
        }
    }

    fn admit(&mut self, client: TcpStream, peer: SocketAddr) {
        let m = &self.metrics;
        // Armed at once: refused now, or killed later, the client sees a RST.
        sock::set_abort(&client);
        // With TPROXY the accepted socket's local address is where the client was going.
        let (SocketAddr::V4(peer), Ok(SocketAddr::V4(dst))) = (peer, client.local_addr()) else {
            m.rejected_unmatched.fetch_add(1, Relaxed);
            return;
        };
        if !self.cfg.matching.admit(m, peer, dst) {
            return;
        }
        if self.conns.len() >= self.cfg.max_connections {
            log(
                LogLevel::Warn,
                format_args!(
                    "refused {peer} -> {dst}: max_connections ({}) reached",
                    self.cfg.max_connections
                ),
            );
            m.rejected_cap.fetch_add(1, Relaxed);
            return;
        }
        if !self
            .admission
            .admit(&self.cfg, m, self.conns.len(), peer, dst)
        {
            return;
        }
        let _ = client.set_nodelay(true);
        let _ = sock::set_buffers(&client, self.cfg.socket_buffer_bytes);
        if let Some(cc) = &self.cfg.client_congestion {
            let _ = sock::set_congestion(&client, cc);
        }
        let server = match sock::connect_as(
            peer,
            dst,
            self.cfg.server_congestion.as_deref(),
            self.cfg.socket_buffer_bytes,
        ) {
            Ok(s) => {
                sock::set_abort(&s);
                s
            }
            Err(e) => {
                log(
                    LogLevel::Warn,
                    format_args!("{peer} -> {dst}: cannot open the server leg: {e}"),
                );
                if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    m.rejected_descriptors.fetch_add(1, Relaxed);
                } else {
                    m.connect_failed.fetch_add(1, Relaxed);
                }
                self.admission.release(*peer.ip());
                return;
            }
        };
        let entry = self.conns.vacant_entry();
        let key = entry.key();
        let mut conn = Conn {
            client,
            server,
            relay: Relay::new(self.cfg.buffer_bytes, BUDGET),
            peer,
            dst,
            retrans: [0; 2],
            last_moved: self.now,
        };
        let both = Interest::READABLE | Interest::WRITABLE;
        let reg = self.poll.registry();
        if let Err(e) = reg
            .register(&mut conn.client, token(key, Side::Client), both)
            .and_then(|_| reg.register(&mut conn.server, token(key, Side::Server), both))
        {
            log(
                LogLevel::Warn,
                format_args!("{peer} -> {dst}: cannot poll: {e}"),
            );
            self.admission.release(*peer.ip());
            return;
        }
        m.buffer_limit
            .fetch_add(conn.relay.capacity() as u64, Relaxed);
        entry.insert(conn);
        m.accepted.fetch_add(1, Relaxed);
        m.active.fetch_add(1, Relaxed);
        log(LogLevel::Debug, format_args!("{peer} -> {dst}: split"));
    }

    /// Checks a pending connect, then pumps the relay.
    fn service(&mut self, key: usize) {
        let Some(c) = self.conns.get_mut(key) else {
            return;
        };
        if !c.relay.is_connected() {
            match c.server.take_error() {
                Ok(None) if c.server.peer_addr().is_ok() => c.relay.set_connected(),
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => {
                    log(
                        LogLevel::Info,
                        format_args!("{} -> {}: connect failed: {e}", c.peer, c.dst),
                    );
                    self.metrics.connect_failed.fetch_add(1, Relaxed);
                    sock::set_abort(&c.client);
                    self.close(key, false);
                    return;
                }
            }
        }
        let before = c.relay.buffered() as u64;
        let mapped_before = c.relay.allocated() as u64;
        let mut moved = Moved::default();
        let status = c.relay.pump(
            &mut Sock(&mut c.client),
            &mut Sock(&mut c.server),
            &mut moved,
        );
        let after = c.relay.buffered() as u64;
        // A pump maps rings (their first bytes) and never unmaps one.
        self.allocated += c.relay.allocated() as u64 - mapped_before;
        if moved.read != [0; 2] || moved.written != [0; 2] {
            c.last_moved = self.now;
        }
        let m = &self.metrics;
        m.memory.store(self.allocated, Relaxed);
        for i in 0..2 {
            m.bytes_in[i].fetch_add(moved.read[i], Relaxed);
            m.bytes_out[i].fetch_add(moved.written[i], Relaxed);
        }
        self.buffered = self.buffered + after - before;
        m.buffered.store(self.buffered, Relaxed);
        m.buffered_peak.fetch_max(self.buffered, Relaxed);
        match status {
            Status::Open { more } => {
                if more {
                    self.again.push(key);
                }
            }
            Status::Done => {
                log(
                    LogLevel::Debug,
                    format_args!("{} -> {}: closed", c.peer, c.dst),
                );
                self.close(key, true);
            }
            Status::Reset { from } => {
                log(
                    LogLevel::Debug,
                    format_args!("{} -> {}: reset by the {from:?} leg", c.peer, c.dst),
                );
                self.close(key, false);
            }
        }
    }

    fn close(&mut self, key: usize, completed: bool) {
        let mut c = self.conns.remove(key);
        self.admission.release(*c.peer.ip());
        let reg = self.poll.registry();
        let _ = reg.deregister(&mut c.client);
        let _ = reg.deregister(&mut c.server);
        let m = &self.metrics;
        for (i, s) in [&c.client, &c.server].into_iter().enumerate() {
            let total = sock::retransmissions(s).unwrap_or(c.retrans[i]);
            m.retrans_closed[i].fetch_add(total, Relaxed);
            m.retrans_open[i].fetch_sub(c.retrans[i].min(m.retrans_open[i].load(Relaxed)), Relaxed);
        }
        self.buffered -= c.relay.buffered() as u64;
        m.buffered.store(self.buffered, Relaxed);
        self.allocated -= c.relay.allocated() as u64;
        m.memory.store(self.allocated, Relaxed);
        m.buffer_limit.fetch_sub(c.relay.capacity() as u64, Relaxed);
        m.active.fetch_sub(1, Relaxed);
        if completed {
            m.completed.fetch_add(1, Relaxed);
        } else {
            m.reset.fetch_add(1, Relaxed);
        }
    }

    fn sample_retransmissions(&mut self) {
        let mut open = [0u64; 2];
        for (_, c) in self.conns.iter_mut() {
            for (i, s) in [&c.client, &c.server].into_iter().enumerate() {
                if let Some(r) = sock::retransmissions(s) {
                    c.retrans[i] = r;
                }
                open[i] += c.retrans[i];
            }
        }
        for (i, v) in open.into_iter().enumerate() {
            self.metrics.retrans_open[i].store(v, Relaxed);
        }
    }

    /// Unmaps the rings that hold nothing, once per `SAMPLE`: memory follows the bytes
    /// in flight, and a busy ring is not unmapped and mapped again per read.
    fn release_idle(&mut self) {
        for (_, c) in self.conns.iter_mut() {
            self.allocated -= c.relay.release_idle() as u64;
        }
        self.metrics.memory.store(self.allocated, Relaxed);
    }

    /// Resets, on both legs, every connection that moved no byte either way for
    /// `idle_timeout` (one that never carried any included).
    fn reset_idle(&mut self) {
        let limit = Duration::from_nanos(self.cfg.idle_timeout.0);
        let now = self.now;
        let idle: Vec<usize> = self
            .conns
            .iter()
            .filter(|(_, c)| now.saturating_duration_since(c.last_moved) >= limit)
            .map(|(k, _)| k)
            .collect();
        for key in idle {
            let c = &self.conns[key];
            log(
                LogLevel::Info,
                format_args!("{} -> {}: idle for {limit:?}, reset", c.peer, c.dst),
            );
            sock::set_abort(&c.client);
            sock::set_abort(&c.server);
            self.metrics.idle_timeouts.fetch_add(1, Relaxed);
            self.close(key, false);
        }
    }

    /// At exit: the connections still open are reset, so their ends see an error rather
    /// than a clean end of data.
    fn shutdown(&mut self) {
        let keys: Vec<usize> = self.conns.iter().map(|(k, _)| k).collect();
        for key in keys {
            let c = &self.conns[key];
            sock::set_abort(&c.client);
            sock::set_abort(&c.server);
            self.close(key, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener as StdListener, TcpStream as StdStream};

    /// A connected pair on loopback: the daemon's nonblocking end, armed as `admit` arms
    /// it, and a blocking peer that has not read yet.
    fn armed_pair() -> (TcpStream, StdStream) {
        let l = StdListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let peer = StdStream::connect(l.local_addr().unwrap()).unwrap();
        let (ours, _) = l.accept().unwrap();
        ours.set_nonblocking(true).unwrap();
        let ours = TcpStream::from_std(ours);
        sock::set_abort(&ours);
        (ours, peer)
    }

    /// Writes until the kernel takes no more, so that bytes are still queued at close.
    fn fill(s: &mut TcpStream) -> usize {
        let chunk = [7u8; 1 << 16];
        let mut n = 0;
        loop {
            match s.write(&chunk) {
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return n,
                Err(e) => panic!("write: {e}"),
            }
        }
    }

    /// Reads to the end: the bytes, and whether the end was a FIN (`Ok`) or an error.
    fn drain(mut s: StdStream) -> (usize, io::Result<()>) {
        let mut buf = [0u8; 1 << 16];
        let mut n = 0;
        loop {
            match s.read(&mut buf) {
                Ok(0) => return (n, Ok(())),
                Ok(k) => n += k,
                Err(e) => return (n, Err(e)),
            }
        }
    }

    #[test]
    fn a_leg_closed_while_armed_resets_its_peer() {
        let (mut ours, peer) = armed_pair();
        let sent = fill(&mut ours);
        drop(ours); // what the kernel does to the daemon's sockets when it dies
        let (got, end) = drain(peer);
        assert!(got < sent, "the peer got {got} of {sent} bytes");
        assert_eq!(end.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn a_leg_closed_after_its_fin_delivers_everything_queued() {
        let (mut ours, peer) = armed_pair();
        let sent = fill(&mut ours);
        Sock(&mut ours).shutdown_write().unwrap();
        drop(ours);
        let (got, end) = drain(peer);
        assert!(
            end.is_ok(),
            "the peer saw {end:?} after {got} of {sent} bytes"
        );
        assert_eq!(got, sent);
    }
}
