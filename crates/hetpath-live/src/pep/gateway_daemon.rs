//! Gateway mode's event loop (Linux): the thin driver around the sans-IO `Gateway`
//! core. One thread, epoll through mio, edge-triggered: the UDP socket to the peer
//! gateway, the kernel-TCP sockets of the local leg (A: the clients' connections,
//! intercepted with TPROXY as in integrated mode; B: the server connections it opens in
//! the clients' names with `IP_TRANSPARENT`), SIGINT/SIGTERM, and an absolute timerfd
//! armed at the core's next deadline (`timer.rs`).
//!
//! Every local socket has `SO_LINGER` 0 from the start, so if the daemon dies its
//! connections end with a RST, never with a FIN that would pass a truncated stream off
//! as complete; a connection that finished cleanly gets the default back before its
//! close.
//!
//! Limits, as in integrated mode: A resets a source over `max_connections_per_source`
//! at accept; a local socket that moves no byte either way for `idle_timeout` is reset
//! and its connection reset on the satellite leg, so the other gateway resets its end
//! too; out of descriptors, A resets new clients (`accept.rs`) and B refuses the
//! connect.

use super::accept::Acceptor;
use super::admission::Admission;
use super::config::{Config, LogLevel};
use super::frame::{ConnId, RefuseReason};
use super::gateway::{Event, Gateway};
use super::log::log;
use super::metrics::Metrics;
use super::session::SessionStats;
use super::sock;
use super::timer::{monotonic_ns, Timer};
use hetpath_proto::time::Time;
use mio::net::{TcpListener, TcpStream, UdpSocket};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

const LISTENER: Token = Token(0);
const SIGNALS: Token = Token(1);
const UDP: Token = Token(2);
const TIMER: Token = Token(3);
const FIRST_SOCKET: usize = 4;
/// Reads one socket may do per wake-up before the others get a turn.
const BUDGET: usize = 16;
/// The most bytes read from a socket at once.
const CHUNK: usize = 64 << 10;
/// How often the metrics are refreshed.
const METRICS_EVERY: Duration = Duration::from_millis(200);
/// Kernel buffers of the UDP socket: bursts of a window leave at once.
const UDP_BUFFER: usize = 4 << 20;
/// How often buffers that hold nothing are unmapped (`Gateway::release_idle`): memory
/// follows the bytes in flight, and a busy buffer is not unmapped and mapped per read.
const RELEASE_EVERY: Duration = Duration::from_secs(1);
/// Session trouble (handshakes failing, a peer on a stale session) is logged as a
/// warning at most this often, with the count since the last warning.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// A local kernel-TCP socket and its connection on the satellite leg.
struct Local {
    stream: TcpStream,
    conn: ConnId,
    /// B: the connect to the server is in progress, until this deadline.
    connecting: Option<Instant>,
    /// The send buffer was full: reading waits for `Event::Writable`.
    paused: bool,
    eof: bool,
    shut: bool,
    name: String,
    /// A: the client's address, counted in `admission`'s per-source share.
    source: Option<Ipv4Addr>,
    /// When a byte last moved either way (the loop's clock).
    last_moved: Instant,
}

pub struct GatewayDaemon {
    cfg: Config,
    core: Gateway,
    poll: Poll,
    listener: Option<TcpListener>,
    udp: UdpSocket,
    peer: SocketAddr,
    socks: Slab<Local>,
    by_conn: HashMap<ConnId, usize>,
    again: Vec<usize>,
    /// Datagrams the UDP socket would not take yet (EAGAIN), oldest first.
    unsent: VecDeque<Vec<u8>>,
    metrics: Arc<Metrics>,
    /// The core's time zero, in `monotonic_ns`.
    start_ns: u64,
    timer: Timer,
    scratch: Vec<u8>,
    peak: u64,
    /// The session counters as last warned about, and when.
    warned: SessionStats,
    warned_at: Option<Instant>,
    released: Instant,
    acceptor: Acceptor,
    admission: Admission,
    /// The time the loop last woke.
    now: Instant,
}

impl GatewayDaemon {
    /// `listener`: gateway A's TPROXY listener; B has none. The core's time zero is now.
    pub fn new(
        cfg: Config,
        core: Gateway,
        listener: Option<TcpListener>,
        udp: UdpSocket,
        metrics: Arc<Metrics>,
    ) -> io::Result<GatewayDaemon> {
        let g = cfg.gateway.as_ref().expect("gateway mode");
        let peer = SocketAddr::V4(g.peer);
        sock::force_buffers(&udp, UDP_BUFFER);
        metrics.gateway.store(true, Relaxed);
        let admission = Admission::new(&cfg, &metrics);
        Ok(GatewayDaemon {
            cfg,
            core,
            poll: Poll::new()?,
            listener,
            udp,
            peer,
            socks: Slab::new(),
            by_conn: HashMap::new(),
            again: Vec::new(),
            unsent: VecDeque::new(),
            metrics,
            start_ns: monotonic_ns(),
            timer: Timer::new()?,
            scratch: vec![0; CHUNK],
            peak: 0,
            warned: SessionStats::default(),
            warned_at: None,
            released: Instant::now(),
            acceptor: Acceptor::new(),
            admission,
            now: Instant::now(),
        })
    }

    fn now(&self) -> Time {
        Time(monotonic_ns().saturating_sub(self.start_ns))
    }

    /// Runs until a signal arrives on `signals`.
    pub fn run(&mut self, signals: &OwnedFd) -> io::Result<()> {
        let reg = self.poll.registry();
        if let Some(l) = &mut self.listener {
            reg.register(l, LISTENER, Interest::READABLE)?;
        }
        reg.register(
            &mut SourceFd(&signals.as_raw_fd()),
            SIGNALS,
            Interest::READABLE,
        )?;
        reg.register(&mut self.udp, UDP, Interest::READABLE | Interest::WRITABLE)?;
        reg.register(&mut SourceFd(&self.timer.fd()), TIMER, Interest::READABLE)?;
        let mut events = Events::with_capacity(256);
        let mut refreshed = Instant::now();
        loop {
            self.pump();
            let wait = if self.again.is_empty() {
                self.wait_time()?
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
                    TIMER => self.timer.drain(),
                    UDP => {
                        if ev.is_readable() {
                            self.receive_all();
                        }
                        if ev.is_writable() {
                            self.send_unsent();
                        }
                    }
                    Token(t) => self.service(t - FIRST_SOCKET),
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
            let now = self.now();
            if self.core.poll_timeout().is_some_and(|t| t <= now) {
                self.core.handle_timeout(now);
            }
            self.connect_timeouts();
            if self.released.elapsed() >= RELEASE_EVERY {
                self.released = Instant::now();
                self.core.release_idle();
            }
            if refreshed.elapsed() >= METRICS_EVERY {
                refreshed = Instant::now();
                self.refresh_metrics();
                self.reset_idle();
            }
        }
    }

    /// Arms the timer at the core's next deadline; the poll's own timeout is the next
    /// connect deadline or the metrics' refresh (zero if the core's deadline passed).
    fn wait_time(&mut self) -> io::Result<Duration> {
        let now = self.now();
        let mut wait = METRICS_EVERY;
        match self.core.poll_timeout() {
            Some(t) if t <= now => return Ok(Duration::ZERO),
            Some(t) => self.timer.arm(Some(self.start_ns + t.0))?,
            None => self.timer.arm(None)?,
        }
        let at = Instant::now();
        for (_, s) in &self.socks {
            if let Some(d) = s.connecting {
                wait = wait.min(d.saturating_duration_since(at));
            }
        }
        Ok(wait)
    }

    /// The core's events acted on and its datagrams sent, until it has neither.
    fn pump(&mut self) {
        loop {
            let mut any = false;
            while let Some(ev) = self.core.poll_event() {
                any = true;
                self.on_event(ev);
            }
            if self.unsent.is_empty() {
                let now = self.now();
                while let Some(d) = self.core.poll_transmit(now) {
                    any = true;
                    if !self.send(d) {
                        break;
                    }
                }
            }
            if !any {
                return;
            }
        }
    }

    /// Sends one datagram; false (and kept) if the socket is full.
    fn send(&mut self, d: Vec<u8>) -> bool {
        match self.udp.send_to(&d, self.peer) {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.unsent.push_back(d);
                false
            }
            Err(e) => {
                // No route to the peer, or an ICMP error from an earlier datagram: the
                // datagram is lost, as on the path; TCP repairs it.
                log(LogLevel::Debug, format_args!("to the peer: {e}"));
                true
            }
        }
    }

    fn send_unsent(&mut self) {
        while let Some(d) = self.unsent.pop_front() {
            if !self.send(d) {
                // `send` put it at the back: it was the front.
                let d = self.unsent.pop_back().expect("just kept");
                self.unsent.push_front(d);
                return;
            }
        }
    }

    fn receive_all(&mut self) {
        let mut buf = [0u8; 65_536];
        loop {
            match self.udp.recv_from(&mut buf) {
                Ok((n, from)) => {
                    let now = self.now();
                    if let Err(e) = self.core.handle_datagram(now, &buf[..n]) {
                        log(
                            LogLevel::Debug,
                            format_args!("datagram from {from} dropped: {e}"),
                        );
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // ICMP errors from earlier sends surface here; the next read goes on.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => {
                    log(LogLevel::Warn, format_args!("receiving from the peer: {e}"));
                    return;
                }
            }
        }
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Connect {
                conn,
                client,
                server,
            } => self.connect(conn, client, server),
            Event::Accepted { conn } => {
                if let Some(s) = self.local(conn) {
                    log(LogLevel::Debug, format_args!("{}: accepted", s.name));
                }
            }
            Event::Refused { conn, reason } => {
                if let Some(key) = self.by_conn.get(&conn).copied() {
                    log(
                        LogLevel::Info,
                        format_args!(
                            "{}: refused by the far gateway ({reason:?})",
                            self.socks[key].name
                        ),
                    );
                    self.drop_local(key, false);
                }
            }
            Event::Readable { conn } => {
                if let Some(key) = self.by_conn.get(&conn).copied() {
                    self.write_local(key);
                }
            }
            Event::Writable { conn } => {
                if let Some(key) = self.by_conn.get(&conn).copied() {
                    self.socks[key].paused = false;
                    self.read_local(key);
                }
            }
            Event::Reset { conn, why } => {
                if let Some(key) = self.by_conn.get(&conn).copied() {
                    log(
                        LogLevel::Info,
                        format_args!("{}: reset ({why:?})", self.socks[key].name),
                    );
                    self.drop_local(key, false);
                }
            }
            Event::Closed { conn } => {
                if let Some(key) = self.by_conn.get(&conn).copied() {
                    self.write_local(key);
                    if let Some(s) = self.socks.get(key) {
                        log(LogLevel::Debug, format_args!("{}: closed", s.name));
                        self.drop_local(key, true);
                    }
                }
            }
        }
    }

    fn local(&self, conn: ConnId) -> Option<&Local> {
        self.by_conn.get(&conn).map(|&k| &self.socks[k])
    }

    /// Registers a local socket for `conn`.
    fn insert(&mut self, local: Local) -> Option<usize> {
        let entry = self.socks.vacant_entry();
        let key = entry.key();
        let conn = local.conn;
        let mut local = local;
        let r = self.poll.registry().register(
            &mut local.stream,
            Token(FIRST_SOCKET + key),
            Interest::READABLE | Interest::WRITABLE,
        );
        if let Err(e) = r {
            log(
                LogLevel::Warn,
                format_args!("{}: cannot poll: {e}", local.name),
            );
            return None;
        }
        entry.insert(local);
        self.by_conn.insert(conn, key);
        Some(key)
    }

    /// Forgets a local socket: reset (RST) unless `clean`.
    fn drop_local(&mut self, key: usize, clean: bool) {
        let Some(mut s) = self.socks.try_remove(key) else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut s.stream);
        self.by_conn.remove(&s.conn);
        if let Some(src) = s.source {
            self.admission.release(src);
        }
        if clean {
            sock::clear_abort(&s.stream);
        } else {
            sock::set_abort(&s.stream);
        }
    }

    // ----- A: intercepted clients -----

    fn accept_all(&mut self) {
        loop {
            let Some(l) = &self.listener else { return };
            let Some((client, peer)) = self.acceptor.next(l, &self.metrics) else {
                return;
            };
            self.admit(client, peer);
        }
    }

    fn admit(&mut self, client: TcpStream, peer: SocketAddr) {
        let m = &self.metrics;
        sock::set_abort(&client);
        // With TPROXY the accepted socket's local address is where the client was going.
        let (SocketAddr::V4(peer), Ok(SocketAddr::V4(dst))) = (peer, client.local_addr()) else {
            m.rejected_unmatched.fetch_add(1, Relaxed);
            return;
        };
        if !self.cfg.matching.admit(m, peer, dst) {
            return;
        }
        // The cap first, as in integrated mode: at it, a client is refused for the cap.
        let at_cap = self.core.connections() >= self.cfg.max_connections;
        if !at_cap
            && !self
                .admission
                .admit(&self.cfg, m, self.core.connections(), peer, dst)
        {
            return;
        }
        let Some(conn) = self.core.open(self.now(), peer, dst) else {
            if !at_cap {
                self.admission.release(*peer.ip());
            }
            log(
                LogLevel::Warn,
                format_args!(
                    "refused {peer} -> {dst}: max_connections ({}) reached",
                    self.cfg.max_connections
                ),
            );
            m.rejected_cap.fetch_add(1, Relaxed);
            return;
        };
        let _ = client.set_nodelay(true);
        let _ = sock::set_buffers(&client, self.cfg.socket_buffer_bytes);
        if let Some(cc) = &self.cfg.client_congestion {
            let _ = sock::set_congestion(&client, cc);
        }
        let local = Local {
            stream: client,
            conn,
            connecting: None,
            paused: false,
            eof: false,
            shut: false,
            name: format!("{peer} -> {dst} [{}]", conn.0),
            source: Some(*peer.ip()),
            last_moved: self.now,
        };
        log(LogLevel::Debug, format_args!("{}: opening", local.name));
        match self.insert(local) {
            Some(key) => self.read_local(key),
            None => self.core.reset(conn),
        }
    }

    // ----- B: server connections in the clients' names -----

    fn connect(&mut self, conn: ConnId, client: SocketAddrV4, server: SocketAddrV4) {
        let g = self.cfg.gateway.as_ref().expect("gateway mode");
        let name = format!("{client} -> {server} [{}]", conn.0);
        let stream = match sock::connect_as(
            client,
            server,
            self.cfg.server_congestion.as_deref(),
            self.cfg.socket_buffer_bytes,
        ) {
            Ok(s) => s,
            Err(e) => {
                log(LogLevel::Info, format_args!("{name}: cannot connect: {e}"));
                if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    self.metrics.rejected_descriptors.fetch_add(1, Relaxed);
                }
                self.core.refuse(conn, reason(&e));
                return;
            }
        };
        sock::set_abort(&stream);
        let local = Local {
            stream,
            conn,
            connecting: Some(Instant::now() + Duration::from_nanos(g.connect_timeout.0)),
            paused: false,
            eof: false,
            shut: false,
            name,
            source: None,
            last_moved: self.now,
        };
        if self.insert(local).is_none() {
            self.core.refuse(conn, RefuseReason::Unreachable);
        }
    }

    fn connect_timeouts(&mut self) {
        let now = Instant::now();
        let late: Vec<usize> = self
            .socks
            .iter()
            .filter(|(_, s)| s.connecting.is_some_and(|d| d <= now))
            .map(|(k, _)| k)
            .collect();
        for key in late {
            let conn = self.socks[key].conn;
            log(
                LogLevel::Info,
                format_args!("{}: connect timed out", self.socks[key].name),
            );
            self.drop_local(key, false);
            self.core.refuse(conn, RefuseReason::Timeout);
        }
    }

    // ----- both: moving bytes -----

    fn service(&mut self, key: usize) {
        let Some(s) = self.socks.get_mut(key) else {
            return;
        };
        if s.connecting.is_some() {
            match s.stream.take_error() {
                Ok(None) if s.stream.peer_addr().is_ok() => {
                    s.connecting = None;
                    s.last_moved = self.now;
                    log(LogLevel::Debug, format_args!("{}: connected", s.name));
                    self.core.connected(s.conn);
                }
                Ok(None) => return,
                Ok(Some(e)) | Err(e) => {
                    log(
                        LogLevel::Info,
                        format_args!("{}: connect failed: {e}", s.name),
                    );
                    let conn = s.conn;
                    self.drop_local(key, false);
                    self.core.refuse(conn, reason(&e));
                    return;
                }
            }
        }
        self.read_local(key);
        self.write_local(key);
    }

    /// Socket to core, while the send buffer has room.
    fn read_local(&mut self, key: usize) {
        let Some(s) = self.socks.get_mut(key) else {
            return;
        };
        if s.eof || s.paused || s.connecting.is_some() {
            return;
        }
        for _ in 0..BUDGET {
            let space = self.core.send_space(s.conn).min(CHUNK);
            if space == 0 {
                s.paused = true;
                return;
            }
            match s.stream.read(&mut self.scratch[..space]) {
                Ok(0) => {
                    s.eof = true;
                    self.core.close(s.conn);
                    return;
                }
                Ok(n) => {
                    s.last_moved = self.now;
                    let took = self.core.write(s.conn, &self.scratch[..n]);
                    debug_assert_eq!(took, n, "read no more than the space");
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    log(LogLevel::Debug, format_args!("{}: {e}", s.name));
                    let conn = s.conn;
                    self.drop_local(key, false);
                    self.core.reset(conn);
                    return;
                }
            }
        }
        self.again.push(key);
    }

    /// Core to socket, as far as the socket takes; then the peer's FIN.
    fn write_local(&mut self, key: usize) {
        let Some(s) = self.socks.get_mut(key) else {
            return;
        };
        if s.connecting.is_some() {
            return;
        }
        loop {
            let b = self.core.peek(s.conn);
            if b.is_empty() {
                break;
            }
            match s.stream.write(b) {
                Ok(n) => {
                    s.last_moved = self.now;
                    self.core.consume(s.conn, n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    log(LogLevel::Debug, format_args!("{}: {e}", s.name));
                    let conn = s.conn;
                    self.drop_local(key, false);
                    self.core.reset(conn);
                    return;
                }
            }
        }
        if !s.shut && self.core.peer_finished(s.conn) {
            s.shut = true;
            // The FIN ends the data: from here a close (or the process's death) must
            // deliver what is queued, not reset it.
            sock::clear_abort(&s.stream);
            if let Err(e) = s.stream.shutdown(Shutdown::Write) {
                log(LogLevel::Debug, format_args!("{}: shutdown: {e}", s.name));
                let conn = s.conn;
                self.drop_local(key, false);
                self.core.reset(conn);
            }
        }
    }

    fn refresh_metrics(&mut self) {
        let m = &self.metrics;
        let st = self.core.stats();
        // The local leg: the clients' on A, the servers' on B.
        let leg = if self.cfg.is_gateway_b() { 1 } else { 0 };
        m.active.store(self.core.connections() as u64, Relaxed);
        m.accepted.store(st.accepted, Relaxed);
        m.completed.store(st.completed, Relaxed);
        m.reset.store(st.reset, Relaxed);
        m.connect_failed.store(st.refused, Relaxed);
        m.bytes_in[leg].store(st.app_bytes_in, Relaxed);
        m.bytes_out[leg].store(st.app_bytes_out, Relaxed);
        m.sat_retransmissions
            .store(self.core.retransmissions(), Relaxed);
        m.sat_datagrams_out.store(st.datagrams_sent, Relaxed);
        m.sat_datagrams_in.store(st.datagrams_received, Relaxed);
        m.sat_datagrams_rejected
            .store(st.datagrams_rejected, Relaxed);
        m.sat_bytes_out.store(st.bytes_sent, Relaxed);
        m.sat_bytes_in.store(st.bytes_received, Relaxed);
        m.peer_restarts.store(st.peer_restarts, Relaxed);
        let ss = st.sessions;
        m.handshakes.store(ss.handshakes, Relaxed);
        m.handshake_failures.store(ss.handshake_failures, Relaxed);
        m.handshakes_replayed.store(ss.handshakes_replayed, Relaxed);
        m.handshakes_limited.store(ss.handshakes_limited, Relaxed);
        m.stale_datagrams.store(ss.stale_datagrams, Relaxed);
        let (held, limit) = self.core.buffered();
        self.peak = self.peak.max(held);
        m.buffered.store(held, Relaxed);
        m.buffer_limit.store(limit, Relaxed);
        m.buffered_peak.store(self.peak, Relaxed);
        m.memory.store(self.core.allocated(), Relaxed);
        self.warn_sessions(ss);
    }

    /// Warns, at most once per `WARN_EVERY`, of handshakes failing or refused and of
    /// datagrams of sessions not held since the last warning (they are also counted in
    /// the metrics); the first session is logged at info.
    fn warn_sessions(&mut self, ss: SessionStats) {
        if self.warned_at.is_some_and(|t| t.elapsed() < WARN_EVERY) {
            return;
        }
        let was = self.warned;
        let failed = ss.handshake_failures - was.handshake_failures;
        let refused = (ss.handshakes_replayed - was.handshakes_replayed)
            + (ss.handshakes_limited - was.handshakes_limited);
        let stale = ss.stale_datagrams - was.stale_datagrams;
        if was.handshakes == 0 && ss.handshakes > 0 {
            log(
                LogLevel::Info,
                format_args!("session with the peer gateway established"),
            );
        }
        if failed > 0 {
            log(
                LogLevel::Warn,
                format_args!(
                    "{failed} handshake message(s) failed or went unanswered (peer down, or not the same key_file and aead?)"
                ),
            );
        }
        if refused > 0 {
            log(
                LogLevel::Warn,
                format_args!(
                    "{refused} handshake initiation(s) refused (replayed, or over the rate limit)"
                ),
            );
        }
        if stale > 0 {
            log(
                LogLevel::Warn,
                format_args!(
                    "{stale} datagram(s) of a session this gateway does not hold (the peer on a stale session after a restart of either, or a replay)"
                ),
            );
        }
        if failed + refused + stale > 0 {
            self.warned_at = Some(Instant::now());
        }
        self.warned = ss;
    }

    /// Resets every local socket that moved no byte either way for `idle_timeout` (one
    /// that never carried any included), and its connection on the satellite leg, so
    /// the other gateway resets its end too. A connect in progress has its own deadline.
    fn reset_idle(&mut self) {
        let limit = Duration::from_nanos(self.cfg.idle_timeout.0);
        let now = self.now;
        let idle: Vec<usize> = self
            .socks
            .iter()
            .filter(|(_, s)| {
                s.connecting.is_none() && now.saturating_duration_since(s.last_moved) >= limit
            })
            .map(|(k, _)| k)
            .collect();
        for key in idle {
            let conn = self.socks[key].conn;
            log(
                LogLevel::Info,
                format_args!("{}: idle for {limit:?}, reset", self.socks[key].name),
            );
            self.metrics.idle_timeouts.fetch_add(1, Relaxed);
            self.drop_local(key, false);
            self.core.reset(conn);
        }
    }

    /// At exit: the connections still open are reset on both sides (the peer hears it
    /// in a last datagram), so no end sees a clean end of a cut stream.
    fn shutdown(&mut self) {
        let keys: Vec<usize> = self.socks.iter().map(|(k, _)| k).collect();
        for key in keys {
            let conn = self.socks[key].conn;
            self.drop_local(key, false);
            self.core.reset(conn);
        }
        let now = self.now();
        while let Some(d) = self.core.poll_transmit(now) {
            let _ = self.udp.send_to(&d, self.peer);
        }
        self.refresh_metrics();
    }
}

/// What a failed connect tells A.
fn reason(e: &io::Error) -> RefuseReason {
    match e.raw_os_error() {
        Some(libc::ECONNREFUSED) => RefuseReason::Refused,
        Some(libc::ETIMEDOUT) => RefuseReason::Timeout,
        _ => RefuseReason::Unreachable,
    }
}
