//! `Gateway`: one end of gateway mode's satellite leg, sans IO (docs/live.md, "Gateway
//! mode"). After quinn-proto: the driver hands in datagrams from the peer
//! (`handle_datagram`) and the local application's bytes (`write`, `close`, `reset`),
//! takes out sealed datagrams (`poll_transmit`) and in-order bytes (`peek`, `consume`),
//! and runs the clock (`poll_timeout`, `handle_timeout`); time is always an argument,
//! so two cores joined by a fake link run deterministically (`gateway_tests.rs`).
//!
//! Role A sits near the clients and opens connections; role B near the servers. Each
//! connection is one hetpath-proto `tcp::Connection` per side, carrying the real bytes
//! through the byte adapter (`stream.rs`); its segments travel as `Segment` frames
//! (`tcpseg.rs`) inside datagrams sealed by `seal.rs` under the keys of a session that a
//! Noise handshake made (`session.rs`, `handshake.rs`). Connections outlive a re-key.
//!
//! - **Open.** A sends `Open` (the client's and the server's addresses) in the same
//!   datagram as each transmission of its SYN, so TCP's own SYN retries make the open
//!   reliable. B asks its driver to connect to the server in the client's name (`Event::
//!   Connect`) and holds the SYN; only once the server accepted does it start its TCP,
//!   whose SYN-ACK travels with `Accept`. A refusal goes back as `Refuse` and A resets
//!   the client: "connection refused" reaches it (RFC 9293 section 3.10.7.3's RST).
//! - **Data, FIN, RST.** The application's bytes go to `SendBuffer`; TCP is told their
//!   count. A FIN follows the last byte (`close`), and the peer's FIN is reported once
//!   every byte before it was consumed (`peer_finished`): a half-close, each direction
//!   on its own. A reset, local or remote (a `Reset` frame, TCP's RST, or TCP giving up
//!   after its retries), ends the connection at once on both sides.
//! - **Peer restart.** A session with a peer of a new boot id (`Sessions::take_restart`)
//!   means its connections are gone: every connection is reset, so no client sees a
//!   short stream end cleanly. A keepalive datagram every `keepalive` makes a restarted
//!   peer known even when nothing else flows (a restarted B cannot open it and asks for
//!   a handshake), and a peer silent for `peer_timeout` resets the connections too.
//!   Connection ids are random (and never reused by their opener), so nothing recorded
//!   from an earlier run names a connection of this one. A segment for a connection the receiver does not know (it was
//!   reset or forgotten) is answered with `Reset`, as TCP answers with a RST.
//!
//! - **Shaping.** With `rate_bps`, datagrams leave no faster than the satellite link
//!   takes them, and TCP is asked for a segment only when one can leave; the shaper is
//!   also the link RAPPEP's traffic monitor watches for xcp-pep and mpcp-pep
//!   (`monitor.rs`).
//!
//! A `tcp::Connection` rather than a whole `host::Host` per gateway: the host keeps
//! every TCB forever and demultiplexes by port, while a daemon must forget finished
//! connections and names them by the frames' 64-bit ids, which its opener never reuses.

use super::frame::{self, ConnId, Frame, RefuseReason};
pub use super::gateway_types::{Event, GatewayConfig, ResetWhy, Stats};
use super::monitor::Monitor;
use super::seal::{self, OpenError, Role};
use super::session::{Received, Sessions};
use super::stream::{RecvBuffer, SendBuffer};
use super::tcpseg;
use hetpath_proto::packet::{Addr, Body, Endpoint, TcpFlags, TcpSegment};
use hetpath_proto::rap::Iface;
use hetpath_proto::tcp::{self, Connection, State, TcpConfig};
use hetpath_proto::time::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddrV4;

/// Bytes a `Segment` frame adds to its segment: type, connection id, length.
pub const FRAME_HEADER: usize = 1 + 8 + 2;
/// How long a connection that closed first lingers in TIME-WAIT to acknowledge a
/// retransmitted FIN. RFC 9293 section 3.4.2 asks 2 MSL, also against old duplicates
/// reaching a new incarnation of the same connection; connection ids are never reused
/// here, so only the lost last ACK is left: Linux's 60 s (`TCP_TIMEWAIT_LEN`) outlasts
/// the peer's backed-off retransmissions on a lossy link, where 10 s did not (the peer
/// then heard `Reset` for a connection that had delivered everything). A lingering
/// connection holds no buffers and counts toward no cap.
pub const TIME_WAIT: Dur = Dur::from_secs(60);
/// Refusals B remembers, to answer a repeated `Open` without connecting again.
const REFUSALS_KEPT: usize = 256;

/// The satellite leg's TCP endpoints inside the cores: fixed, since the frames name
/// the connection.
const END_A: Endpoint = Endpoint {
    addr: Addr(1),
    port: 1,
};
const END_B: Endpoint = Endpoint {
    addr: Addr(2),
    port: 2,
};

#[derive(Debug)]
enum Phase {
    /// A: `Open` sent, no answer yet.
    Opening,
    /// B: waiting for the driver's connect; the latest SYN from A.
    Connecting {
        syn: Option<TcpSegment>,
        connected: bool,
    },
    Open,
}

struct Conn {
    phase: Phase,
    tcp: Option<Connection>,
    client: SocketAddrV4,
    server: SocketAddrV4,
    send: SendBuffer,
    recv: RecvBuffer,
    /// Bytes of `send` told to TCP (`Connection::write`).
    handed: u64,
    app_fin: bool,
    fin_handed: bool,
    /// `write` found the buffer full: a `Writable` is owed.
    want_write: bool,
    /// In-order bytes received as last reported (`Readable`).
    seen_received: u64,
    seen_fin: bool,
    closed_reported: bool,
    /// This side's initial sequence number on the wire, random, and the peer's, from its
    /// SYN (`tcpseg::to_wire`); the cores count from 0 inside.
    isn: u64,
    peer_isn: Option<u64>,
    /// When its TCP reached CLOSED: it lingers `TIME_WAIT` more, as hetpath-proto's
    /// closed connection still acknowledges a retransmitted FIN (its ACK of ours may
    /// have been lost), and is forgotten after.
    closed_at: Option<Time>,
    /// It lingered in TIME-WAIT already (it closed first): forgotten once CLOSED.
    timed_wait: bool,
    dirty: bool,
}

/// A datagram from the peer that was not used.
#[derive(Debug, thiserror::Error)]
pub enum DatagramError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("frames: {0}")]
    Frame(#[from] frame::FrameError),
}

pub struct Gateway {
    cfg: GatewayConfig,
    tcp: TcpConfig,
    sessions: Sessions,
    conns: BTreeMap<ConnId, Conn>,
    /// Connections with work since they were last polled dry, in turn.
    dirty: VecDeque<ConnId>,
    /// Frames that answer the peer (Refuse, Reset), sent before segments.
    control: VecDeque<Frame>,
    /// Encoded frames waiting for a datagram, in units that travel together.
    ready: VecDeque<Vec<u8>>,
    ready_bytes: usize,
    events: VecDeque<Event>,
    refusals: VecDeque<(ConnId, RefuseReason)>,
    last_sent: Time,
    last_heard: Time,
    /// With `rate_bps`: when the next datagram may leave.
    next_free: Time,
    /// Bytes sent in all, headers included (the shaper's `tx_bytes`).
    tx_bytes: u64,
    /// RAPPEP's traffic monitor, for xcp-pep and mpcp-pep (`monitor.rs`).
    monitor: Option<Monitor>,
    /// Connections in `conns` closed cleanly and lingering (`closed_reported`).
    lingering: usize,
    stats: Stats,
}

/// Bytes of IPv4 and UDP header a datagram costs on the link.
const IP_UDP: u64 = 28;
/// How far behind the shaper may fall and catch up at once: the driver's wake-ups are
/// late by up to a millisecond or so.
const SHAPER_CREDIT: Dur = Dur::from_millis(2);

impl Gateway {
    pub fn new(cfg: GatewayConfig, now: Time) -> Gateway {
        let monitor = Monitor::new(&cfg.cc, cfg.monitor_interval);
        let sessions = Sessions::new(
            cfg.role,
            cfg.psk.clone(),
            cfg.aead,
            cfg.rekey_after,
            cfg.seed,
        );
        Gateway {
            tcp: cfg.tcp(),
            cfg,
            sessions,
            conns: BTreeMap::new(),
            dirty: VecDeque::new(),
            control: VecDeque::new(),
            ready: VecDeque::new(),
            ready_bytes: 0,
            events: VecDeque::new(),
            refusals: VecDeque::new(),
            last_sent: Time::ZERO,
            last_heard: now,
            next_free: Time::ZERO,
            tx_bytes: 0,
            monitor,
            lingering: 0,
            stats: Stats::default(),
        }
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.cfg
    }

    pub fn stats(&self) -> Stats {
        let mut st = self.stats;
        st.sessions = self.sessions.stats();
        st
    }

    /// The current session's id, if one is confirmed.
    pub fn session(&self) -> Option<u64> {
        self.sessions.current()
    }

    /// Connections held (opening, connecting, open, lingering).
    /// Connections held and not finished (opening, connecting, open); those lingering
    /// after a clean close (TIME-WAIT) hold no buffers and count toward no cap.
    pub fn connections(&self) -> usize {
        self.conns.len() - self.lingering
    }

    pub fn contains(&self, conn: ConnId) -> bool {
        self.conns.contains_key(&conn)
    }

    /// Segments the satellite leg retransmitted, over every connection so far.
    pub fn retransmissions(&self) -> u64 {
        let open: u64 = self
            .conns
            .values()
            .filter_map(|c| c.tcp.as_ref())
            .map(|t| t.stats().retransmissions)
            .sum();
        self.stats.retransmissions_closed + open
    }

    /// Bytes held in the connections' buffers now (unacknowledged, and received but not
    /// consumed), and the most they can hold.
    pub fn buffered(&self) -> (u64, u64) {
        let live = || self.conns.values().filter(|c| !c.closed_reported);
        let held = live()
            .map(|c| c.send.len() as u64 + c.tcp.as_ref().map_or(0, |t| t.readable()))
            .sum();
        let limit = live()
            .map(|c| (c.send.capacity() + c.recv.capacity()) as u64)
            .sum();
        (held, limit)
    }

    /// Bytes mapped for the connections' buffers now (`stream.rs`: pages are mapped
    /// when bytes first need them).
    pub fn allocated(&self) -> u64 {
        let each = |c: &Conn| (c.send.allocated() + c.recv.allocated()) as u64;
        self.conns.values().map(each).sum()
    }

    /// Unmaps the buffers that hold nothing (all acknowledged, all handed out); the
    /// bytes freed. The driver calls it on a periodic tick, not per segment, so that a
    /// busy connection is not mapped and unmapped per read.
    pub fn release_idle(&mut self) -> u64 {
        let each = |c: &mut Conn| (c.send.release() + c.recv.release()) as u64;
        self.conns.values_mut().map(each).sum()
    }

    // ----- the application side -----

    /// A: a client's connection to `server` was intercepted; `None` at the cap (reset
    /// the client). The id is never used again by this gateway.
    pub fn open(
        &mut self,
        now: Time,
        client: SocketAddrV4,
        server: SocketAddrV4,
    ) -> Option<ConnId> {
        if self.cfg.role != Role::A || self.connections() >= self.cfg.max_connections {
            return None;
        }
        if self.connections() == 0 {
            // The peer's silence counts from the first connection that needs it.
            self.last_heard = self.last_heard.max(now);
        }
        // Random, so that no datagram of an earlier run names a connection of this one.
        let id = loop {
            let id = ConnId(self.sessions.rng().u64());
            if id.0 != 0 && !self.conns.contains_key(&id) {
                break id;
            }
        };
        let mut tcp = Connection::connect(self.tcp, &self.cfg.cc, END_A, END_B);
        tcp.set_auto_read(false);
        let c = self.new_conn(Phase::Opening, Some(tcp), client, server);
        self.conns.insert(id, c);
        self.stats.opened += 1;
        self.mark(id);
        Some(id)
    }

    fn new_conn(
        &mut self,
        phase: Phase,
        tcp: Option<Connection>,
        client: SocketAddrV4,
        server: SocketAddrV4,
    ) -> Conn {
        Conn {
            phase,
            tcp,
            client,
            server,
            send: SendBuffer::new(self.cfg.buffer),
            recv: RecvBuffer::new(self.cfg.buffer),
            handed: 0,
            app_fin: false,
            fin_handed: false,
            want_write: false,
            seen_received: 0,
            seen_fin: false,
            closed_reported: false,
            isn: tcpseg::random_isn(self.sessions.rng()),
            peer_isn: None,
            closed_at: None,
            timed_wait: false,
            dirty: false,
        }
    }

    /// B: the server accepted the connection made in the client's name.
    pub fn connected(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Phase::Connecting { connected, .. } = &mut c.phase {
            *connected = true;
        }
        self.start_b(conn);
    }

    /// B: starts TCP once both the connect and A's SYN are there.
    fn start_b(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Phase::Connecting {
            syn: Some(syn),
            connected: true,
        } = &c.phase
        else {
            return;
        };
        let mut tcp = Connection::accept(self.tcp, &self.cfg.cc, END_B, END_A, syn);
        tcp.set_auto_read(false);
        c.tcp = Some(tcp);
        c.phase = Phase::Open;
        self.stats.accepted += 1;
        feed(c);
        self.mark(conn);
    }

    /// B: the server could not be reached; A will reset its client.
    pub fn refuse(&mut self, conn: ConnId, reason: RefuseReason) {
        if self.conns.remove(&conn).is_some() {
            self.stats.refused += 1;
            self.control.push_back(Frame::Refuse { conn, reason });
            self.remember_refusal(conn, reason);
        }
    }

    fn remember_refusal(&mut self, conn: ConnId, reason: RefuseReason) {
        if self.refusals.len() == REFUSALS_KEPT {
            self.refusals.pop_front();
        }
        self.refusals.push_back((conn, reason));
    }

    /// Room in `conn`'s send buffer.
    pub fn send_space(&self, conn: ConnId) -> usize {
        self.conns.get(&conn).map_or(0, |c| c.send.space())
    }

    /// The local application's bytes for the peer; returns how many were taken (all
    /// that fit). When it takes fewer than offered, `Writable` follows once there is
    /// room: stop reading the socket until then.
    pub fn write(&mut self, conn: ConnId, bytes: &[u8]) -> usize {
        let Some(c) = self.conns.get_mut(&conn) else {
            return 0;
        };
        if c.app_fin {
            return 0;
        }
        let n = c.send.push(bytes);
        if n < bytes.len() || c.send.space() == 0 {
            c.want_write = true;
        }
        self.stats.app_bytes_in += n as u64;
        feed(c);
        self.mark(conn);
        n
    }

    /// The local application finished sending: a FIN follows its last byte.
    pub fn close(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.app_fin = true;
            feed(c);
            self.mark(conn);
        }
    }

    /// The local application's side failed: the peer resets its own. Gone.
    pub fn reset(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            self.forget(conn, &c);
            self.stats.reset += 1;
            self.control.push_back(Frame::Reset { conn });
        }
    }

    /// The next in-order bytes from the peer (one contiguous run; empty if none).
    pub fn peek(&self, conn: ConnId) -> &[u8] {
        match self.conns.get(&conn) {
            Some(Conn {
                tcp: Some(t), recv, ..
            }) => recv.peek(t.readable()),
            _ => &[],
        }
    }

    /// The application took `n` of the bytes `peek` showed; the window reopens.
    pub fn consume(&mut self, conn: ConnId, n: usize) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let Some(t) = &mut c.tcp else {
            return;
        };
        let got = t.read(n as u64);
        c.recv.consume(got);
        self.stats.app_bytes_out += got;
        self.mark(conn);
    }

    /// The peer finished sending and every byte before its FIN was consumed: pass the
    /// FIN on (shut the socket's write side).
    pub fn peer_finished(&self, conn: ConnId) -> bool {
        self.conns
            .get(&conn)
            .and_then(|c| c.tcp.as_ref())
            .is_some_and(|t| t.peer_finished() && t.readable() == 0)
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ----- the peer side -----

    /// One datagram from the peer. Nothing changes unless it authenticates.
    pub fn handle_datagram(&mut self, now: Time, datagram: &[u8]) -> Result<(), DatagramError> {
        let received = match self.sessions.receive(now, datagram) {
            Ok(r) => r,
            Err(e) => {
                self.stats.datagrams_rejected += 1;
                return Err(e.into());
            }
        };
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        if self.sessions.take_restart() {
            self.stats.peer_restarts += 1;
            self.reset_all(ResetWhy::PeerRestarted, false);
        }
        let Received::Data(plaintext) = received else {
            return Ok(());
        };
        self.last_heard = now;
        let frames = match frame::decode(&plaintext) {
            Ok(f) => f,
            Err(e) => {
                self.stats.datagrams_rejected += 1;
                return Err(e.into());
            }
        };
        for f in frames {
            self.on_frame(now, f);
        }
        Ok(())
    }

    fn on_frame(&mut self, now: Time, f: Frame) {
        match f {
            Frame::Open {
                conn,
                client,
                server,
            } => self.on_open(conn, client, server),
            Frame::Accept { conn } => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    if matches!(c.phase, Phase::Opening) {
                        c.phase = Phase::Open;
                        self.stats.accepted += 1;
                        self.events.push_back(Event::Accepted { conn });
                    }
                }
            }
            Frame::Refuse { conn, reason } => {
                if let Some(c) = self.conns.get(&conn) {
                    if matches!(c.phase, Phase::Opening) {
                        let c = self.conns.remove(&conn).expect("just found");
                        self.forget(conn, &c);
                        self.stats.refused += 1;
                        self.events.push_back(Event::Refused { conn, reason });
                    }
                }
            }
            Frame::Segment { conn, bytes } => self.on_segment(now, conn, &bytes),
            Frame::Reset { conn } => {
                // Both FINs were exchanged and acknowledged: nothing can be lost any
                // more, and the peer, having forgotten the connection, answered a late
                // duplicate. The bytes still unread are delivered.
                let over = self
                    .conns
                    .get(&conn)
                    .and_then(|c| c.tcp.as_ref())
                    .is_some_and(|t| matches!(t.state(), State::TimeWait | State::Closed));
                if over {
                    return;
                }
                if let Some(c) = self.conns.remove(&conn) {
                    self.forget(conn, &c);
                    self.stats.reset += 1;
                    self.events.push_back(Event::Reset {
                        conn,
                        why: ResetWhy::Peer,
                    });
                }
            }
        }
    }

    fn on_open(&mut self, conn: ConnId, client: SocketAddrV4, server: SocketAddrV4) {
        if self.cfg.role != Role::B || self.conns.contains_key(&conn) {
            return; // A opens nothing for B; a repeated Open is the same connection
        }
        if let Some(&(_, reason)) = self.refusals.iter().find(|(c, _)| *c == conn) {
            self.control.push_back(Frame::Refuse { conn, reason });
            return;
        }
        let allowed = self
            .cfg
            .allow
            .as_ref()
            .is_none_or(|m| m.allows(*client.ip(), *server.ip(), server.port()));
        if !allowed || self.connections() >= self.cfg.max_connections {
            self.stats.opened += 1;
            self.stats.refused += 1;
            self.control.push_back(Frame::Refuse {
                conn,
                reason: RefuseReason::Policy,
            });
            self.remember_refusal(conn, RefuseReason::Policy);
            return;
        }
        let phase = Phase::Connecting {
            syn: None,
            connected: false,
        };
        let c = self.new_conn(phase, None, client, server);
        self.conns.insert(conn, c);
        self.stats.opened += 1;
        self.events.push_back(Event::Connect {
            conn,
            client,
            server,
        });
    }

    fn on_segment(&mut self, now: Time, conn: ConnId, bytes: &[u8]) {
        let Ok((mut seg, payload)) = tcpseg::decode(bytes) else {
            self.stats.datagrams_rejected += 1;
            return;
        };
        let (own, peer) = match self.cfg.role {
            Role::A => (END_A, END_B),
            Role::B => (END_B, END_A),
        };
        seg.src_port = peer.port;
        seg.dst_port = own.port;
        let syn = seg.flags.contains(TcpFlags::SYN);
        let Some(c) = self.conns.get_mut(&conn) else {
            // Unknown: reset, or gone. A bare SYN without its Open is answered by the
            // Open's retransmission; a RST needs no answer. A SYN-ACK is answered: a
            // connection b opened for a delayed `Open` of one a has forgotten.
            let bare_syn = syn && !seg.flags.contains(TcpFlags::ACK);
            if !bare_syn && !seg.flags.contains(TcpFlags::RST) {
                self.control.push_back(Frame::Reset { conn });
            }
            return;
        };
        if syn {
            c.peer_isn.get_or_insert(seg.seq);
        }
        // Before the peer's SYN nothing of it can be placed (TCP in SYN-SENT drops such a
        // segment too); one outside this connection's sequence space is dropped.
        let Some(peer_isn) = c.peer_isn else {
            return;
        };
        if !tcpseg::from_wire(&mut seg, peer_isn, c.isn) {
            return;
        }
        if let Phase::Connecting { syn: held, .. } = &mut c.phase {
            if syn {
                *held = Some(seg);
                self.start_b(conn);
            }
            return;
        }
        let Some(t) = &mut c.tcp else {
            return;
        };
        let done = matches!(t.state(), State::TimeWait | State::Closed);
        if seg.len > 0 && seg.seq >= 1 && !done {
            c.recv.store(seg.seq - 1, payload);
        }
        t.handle_segment(now, &seg);
        if let Some(m) = &mut self.monitor {
            m.on_ack(now, conn, &seg, t);
        }
        notify(conn, c, &mut self.events);
        self.mark(conn);
    }

    // ----- the clock -----

    /// The earliest time `handle_timeout` has work (or a keepalive is due).
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut t = self.sessions.poll_timeout().unwrap_or(Time::MAX);
        // Nothing but handshakes leaves before a session is confirmed.
        if self.sessions.can_send() {
            t = t.min(self.last_sent + self.cfg.keepalive);
            let work = !(self.dirty.is_empty() && self.ready.is_empty() && self.control.is_empty());
            if self.cfg.rate_bps.is_some() && work {
                t = t.min(self.next_free);
            }
        }
        if let Some(d) = self.monitor.as_ref().and_then(Monitor::poll_timeout) {
            t = t.min(d);
        }
        if self.connections() > 0 {
            t = t.min(self.last_heard + self.cfg.peer_timeout);
        }
        for c in self.conns.values() {
            if let Some(d) = c.tcp.as_ref().and_then(|t| t.poll_timeout()) {
                t = t.min(d);
            }
            if let Some(d) = c.closed_at {
                t = t.min(d + TIME_WAIT);
            }
        }
        Some(t)
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.sessions.handle_timeout(now);
        if self
            .monitor
            .as_ref()
            .and_then(Monitor::poll_timeout)
            .is_some_and(|d| d <= now)
        {
            let iface = self.iface(now);
            if let Some(m) = &mut self.monitor {
                m.handle_timeout(now, &iface);
            }
        }
        if self.connections() > 0 && now >= self.last_heard + self.cfg.peer_timeout {
            self.reset_all(ResetWhy::PeerSilent, true);
            return;
        }
        let over: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.closed_at.is_some_and(|d| now >= d + TIME_WAIT))
            .map(|(id, _)| *id)
            .collect();
        for id in over {
            let c = self.conns.remove(&id).expect("listed");
            self.forget(id, &c);
        }
        let due: Vec<ConnId> = self
            .conns
            .iter_mut()
            .filter_map(|(id, c)| {
                let t = c.tcp.as_mut()?;
                if t.poll_timeout().is_some_and(|d| d <= now) {
                    t.handle_timeout(now);
                    Some(*id)
                } else {
                    None
                }
            })
            .collect();
        for id in due {
            self.mark(id);
        }
    }

    // ----- transmission -----

    /// The next sealed datagram for the peer, or `None` when there is nothing to send
    /// now. Call until `None` after anything that may have given a connection work.
    ///
    /// With `rate_bps` the datagrams are spaced at that rate (a token bucket of
    /// `SHAPER_CREDIT`), and no connection is asked for a segment before its turn: TCP
    /// sends when the link can take it, and a window larger than the path's queue
    /// (Hybla's, above all, whose pacing follows cwnd rather than what is in flight)
    /// waits here instead of overflowing the satellite modem's queue.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        // Handshake messages first: small, rare, and nothing else leaves without them.
        if let Some(d) = self.sessions.poll_transmit() {
            self.tx_bytes += d.len() as u64 + IP_UDP;
            self.stats.datagrams_sent += 1;
            self.stats.bytes_sent += d.len() as u64;
            return Some(d);
        }
        if !self.sessions.can_send() || (self.cfg.rate_bps.is_some() && now < self.next_free) {
            return None;
        }
        let budget = self.cfg.max_datagram - seal::OVERHEAD;
        while self.ready_bytes < budget {
            if let Some(f) = self.control.pop_front() {
                let mut unit = Vec::with_capacity(f.encoded_len());
                f.encode(&mut unit).expect("control frames are short");
                self.push_ready(unit);
            } else if !self.next_unit(now) {
                break;
            }
        }
        let mut plain = Vec::with_capacity(budget);
        while let Some(u) = self.ready.front() {
            if plain.len() + u.len() > budget {
                break;
            }
            let u = self.ready.pop_front().expect("front exists");
            self.ready_bytes -= u.len();
            plain.extend_from_slice(&u);
        }
        // A keepalive is an empty datagram; one goes at once on a session A just began,
        // so that B confirms it.
        let started = self.sessions.take_started();
        if plain.is_empty() && now < self.last_sent + self.cfg.keepalive && !started {
            return None;
        }
        let mut out = Vec::with_capacity(plain.len() + seal::OVERHEAD);
        self.sessions.seal(&plain, &mut out).ok()?;
        self.last_sent = now;
        let wire = out.len() as u64 + IP_UDP;
        if let Some(rate) = self.cfg.rate_bps {
            let start = self
                .next_free
                .max(Time(now.0.saturating_sub(SHAPER_CREDIT.0)));
            self.next_free = start + Dur::serialization(wire, rate);
        }
        self.tx_bytes += wire;
        if self.monitor.is_some() {
            let iface = self.iface(now);
            if let Some(m) = &mut self.monitor {
                m.on_datagram(now, wire as u32, &iface);
            }
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += out.len() as u64;
        Some(out)
    }

    fn push_ready(&mut self, unit: Vec<u8>) {
        self.ready_bytes += unit.len();
        self.ready.push_back(unit);
    }

    /// Polls the connections in turn for their next segment and queues its frames;
    /// false when none has one.
    fn next_unit(&mut self, now: Time) -> bool {
        while let Some(&id) = self.dirty.front() {
            let Some(c) = self.conns.get_mut(&id) else {
                self.dirty.pop_front();
                continue;
            };
            let pkt = c.tcp.as_mut().and_then(|t| t.poll_transmit(now));
            let Some(pkt) = pkt else {
                self.dirty.pop_front();
                c.dirty = false;
                self.settle(now, id);
                continue;
            };
            // Round robin: one segment, then the next connection's turn.
            self.dirty.pop_front();
            self.dirty.push_back(id);
            let Body::Tcp(seg) = pkt.body else {
                continue;
            };
            match self.unit(id, &seg) {
                Some(unit) => {
                    if self.monitor.is_some() {
                        let iface = self.iface(now);
                        let cwnd = self.conns[&id]
                            .tcp
                            .as_ref()
                            .map_or(0, |t| t.sender().cwnd());
                        let wire = (unit.len() + seal::OVERHEAD) as u32 + IP_UDP as u32;
                        if let Some(m) = &mut self.monitor {
                            m.on_segment(now, id, &seg, cwnd, wire, &iface);
                        }
                    }
                    self.push_ready(unit)
                }
                None => {
                    let c = self.conns.remove(&id).expect("polled above");
                    self.forget(id, &c);
                    self.stats.reset += 1;
                    self.control.push_back(Frame::Reset { conn: id });
                    self.events.push_back(Event::Reset {
                        conn: id,
                        why: ResetWhy::Internal,
                    });
                }
            }
            return true;
        }
        false
    }

    /// The frames carrying `seg`: its payload from the send buffer, and `Open` (A) or
    /// `Accept` (B) with a SYN. `None` if the payload is not held.
    fn unit(&self, id: ConnId, seg: &TcpSegment) -> Option<Vec<u8>> {
        let c = &self.conns[&id];
        let mut unit = Vec::new();
        if seg.flags.contains(TcpFlags::SYN) {
            let f = match self.cfg.role {
                Role::A => Frame::Open {
                    conn: id,
                    client: c.client,
                    server: c.server,
                },
                Role::B => Frame::Accept { conn: id },
            };
            f.encode(&mut unit).expect("short frame");
        }
        let mut payload = Vec::new();
        if seg.len > 0
            && !c
                .send
                .slice(seg.seq.checked_sub(1)?, seg.len as usize, &mut payload)
        {
            return None;
        }
        let budget = self.cfg.max_datagram - seal::OVERHEAD;
        let room = budget.checked_sub(unit.len() + FRAME_HEADER)?;
        let mut body = Vec::with_capacity(tcpseg::BASE + payload.len() + 64);
        let wire = tcpseg::to_wire(seg, c.isn, c.peer_isn.unwrap_or(0));
        if !tcpseg::encode(&wire, &payload, room, &mut body) {
            return None;
        }
        Frame::Segment {
            conn: id,
            bytes: body,
        }
        .encode(&mut unit)
        .ok()?;
        Some(unit)
    }

    fn mark(&mut self, id: ConnId) {
        if let Some(c) = self.conns.get_mut(&id) {
            if !c.dirty {
                c.dirty = true;
                self.dirty.push_back(id);
            }
        }
    }

    /// After a connection was polled dry: what its TCP reported, buffers freed, bytes
    /// arrived, and whether it is over.
    fn settle(&mut self, now: Time, id: ConnId) {
        let c = self.conns.get_mut(&id).expect("settled while held");
        let Some(t) = &mut c.tcp else {
            return;
        };
        let mut aborted = false;
        while let Some(ev) = t.poll_event() {
            if ev == tcp::Event::Aborted {
                aborted = true;
            }
        }
        if aborted {
            let c = self.conns.remove(&id).expect("held");
            self.forget(id, &c);
            self.stats.reset += 1;
            // The peer may not know yet (our retries ran out): tell it.
            self.control.push_back(Frame::Reset { conn: id });
            self.events.push_back(Event::Reset {
                conn: id,
                why: ResetWhy::Aborted,
            });
            return;
        }
        notify(id, c, &mut self.events);
        let Some(t) = &c.tcp else {
            return;
        };
        let done = matches!(t.state(), State::TimeWait | State::Closed) && t.readable() == 0;
        if done && !c.closed_reported {
            c.closed_reported = true;
            // Everything was sent, acknowledged and consumed: the buffers go now, not
            // after TIME-WAIT (a late duplicate's payload is never stored).
            c.send = SendBuffer::new(1);
            c.recv = RecvBuffer::new(1);
            self.lingering += 1;
            self.stats.completed += 1;
            self.events.push_back(Event::Closed { conn: id });
        }
        if done && t.state() == State::Closed && c.closed_at.is_none() {
            c.closed_at = Some(now);
            if c.timed_wait {
                let c = self.conns.remove(&id).expect("held");
                self.forget(id, &c);
            }
        } else if t.state() == State::TimeWait {
            c.timed_wait = true;
        }
    }

    /// A connection leaves: its retransmissions stay counted.
    fn forget(&mut self, id: ConnId, c: &Conn) {
        if c.closed_reported {
            self.lingering -= 1;
        }
        if let Some(t) = &c.tcp {
            self.stats.retransmissions_closed += t.stats().retransmissions;
        }
        if let Some(m) = &mut self.monitor {
            m.forget(id);
        }
    }

    /// The shaper as the link a traffic monitor watches (`rap::Iface`).
    fn iface(&self, now: Time) -> Iface {
        Iface {
            rate_bps: self.cfg.rate_bps.unwrap_or(0),
            queue_pkts: self.ready.len() as u64,
            queue_bytes: self.ready_bytes as u64,
            tx_bytes: self.tx_bytes,
            transmitting: now < self.next_free,
            up: true,
        }
    }

    /// Every connection is reset (the peer restarted or went silent); with `tell`, the
    /// peer hears it too.
    fn reset_all(&mut self, why: ResetWhy, tell: bool) {
        for (conn, c) in std::mem::take(&mut self.conns) {
            self.forget(conn, &c);
            if c.closed_reported {
                continue; // it completed; nothing of it is lost
            }
            self.stats.reset += 1;
            if tell {
                self.control.push_back(Frame::Reset { conn });
            }
            self.events.push_back(Event::Reset { conn, why });
        }
        self.dirty.clear();
        self.ready.clear();
        self.ready_bytes = 0;
        self.refusals.clear();
        if !tell {
            self.control.clear();
        }
    }
}

/// What an arriving segment may have changed for the application: acknowledged bytes
/// leave the send buffer (`Writable` if it was full), new in-order bytes or the peer's
/// FIN are `Readable`. Reported at once, not when the connection is next polled, which
/// the shaper may delay.
fn notify(id: ConnId, c: &mut Conn, events: &mut VecDeque<Event>) {
    let Some(t) = &c.tcp else {
        return;
    };
    c.send.release_to(t.sender().bytes_acked());
    if c.want_write && c.send.space() > 0 {
        c.want_write = false;
        events.push_back(Event::Writable { conn: id });
    }
    let received = t.bytes_received();
    let fin = t.peer_finished();
    if received > c.seen_received || fin != c.seen_fin {
        c.seen_received = received;
        c.seen_fin = fin;
        events.push_back(Event::Readable { conn: id });
    }
}

/// Tells TCP the bytes written since, and the FIN once everything is told.
fn feed(c: &mut Conn) {
    let Some(t) = &mut c.tcp else {
        return;
    };
    if c.closed_reported {
        return; // done: its buffers went with the FIN's ACK (`settle`)
    }
    let n = c.send.end() - c.handed;
    if n > 0 {
        t.write(n);
        c.handed += n;
    }
    if c.app_fin && !c.fin_handed {
        t.close();
        c.fin_handed = true;
    }
}

#[cfg(test)]
#[path = "gateway_tests.rs"]
mod tests;
