//! A node's transport stack as one sans-IO machine (after quinn-proto's `Endpoint` beside
//! its `Connection`): it owns the node's TCP connections and does everything between
//! them and IP.
//!
//! - Demultiplexing by 4-tuple; listeners and accept-on-SYN (RFC 9293 section 3.10.7.2).
//! - Ephemeral port allocation: a port is used again toward a remote endpoint once its
//!   connection there is gone, so that any number of connections fit over time.
//! - IPsec ESP in transport mode: the security associations it holds, sealing what its
//!   connections send and opening what arrives (`esp`).
//! - The application on each connection: a sender is driven from outside (`write`,
//!   `close`); a connection accepted by a listener is a sink that reads everything and
//!   closes its side once the peer has finished.
//!
//! Its driver shows it the packets addressed to its node (`At::Local`) and polls it like
//! any machine; it reports what the applications learn as `Event`s (a transfer of known
//! length fully received, everything written acknowledged, connection events), and
//! ILC-TCP's question to the node's State Manager as a signal.

pub mod lift_mh;
mod timers;

use crate::cc::Algorithm;
use crate::crosslayer::Signal;
use crate::esp::SecurityAssociation;
use crate::ids::ConnId;
use crate::machine::{At, Event, Hooks, LocalQueue, Machine, NodeView, Transmit, Verdict, Via};
use crate::packet::{Addr, Body, Endpoint, EspSizes, Packet, TcpFlags, TcpSegment};
use crate::tcp::{self, ConnReport, Connection, TcpConfig};
use crate::time::Time;
use lift_mh::{LiftOut, MhLift, SelfProtection};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use timers::Timers;

/// What a listening port accepts connections with.
#[derive(Clone, Debug, PartialEq)]
pub struct Listener {
    pub tcp: TcpConfig,
    pub cc: Algorithm,
    /// The accepting application reads data as it arrives (a sink). Off: it reads only
    /// through `Host::read`, so a full buffer closes the window.
    pub auto_read: bool,
}

impl Listener {
    pub fn new(tcp: TcpConfig, cc: Algorithm) -> Listener {
        Listener {
            tcp,
            cc,
            auto_read: true,
        }
    }
}

/// The first port `listen_any` gives out.
pub const FIRST_SERVER_PORT: u16 = 5000;
/// Where ephemeral ports start (then they wrap round through 1024..=65535).
pub const FIRST_EPHEMERAL_PORT: u16 = 40_000;

/// Ephemeral ports a host has toward one remote endpoint: 1024 to 65535.
pub const EPHEMERAL_PORTS: usize = u16::MAX as usize - 1024 + 1;

struct Entry {
    conn: Connection,
    /// The SA sealing what it sends, and that SA's last ESP sequence number.
    esp: Option<(SecurityAssociation, u32)>,
    /// MH-LIFT's state, on a host running it (`Host::enable_lift`) for an ESP connection.
    lift: Option<MhLift>,
    /// Accepted by a listener: reads everything, closes once the peer has finished.
    sink: bool,
    /// In `dirty`.
    queued: bool,
    /// Settled (`settle`) since it last changed (input, a timeout, a transmission, a
    /// full queue): settling it again would do nothing, so `settle_waiting` skips it.
    settled: bool,
    /// Bytes the application has written, and how many of them it has heard were all
    /// acknowledged (`Event::Acked`).
    written: u64,
    acked_reported: u64,
    /// Bytes the application expects to receive: `Event::Delivered` once they are in.
    expect: Option<u64>,
}

/// Up to this many connections, a host finds a segment's connection by a scan of their
/// keys rather than by hashing.
const SCAN_CONNS: usize = 8;

/// The connection is over and its TCB deleted (RFC 9293 section 3.3.2: CLOSED after
/// LAST-ACK or TIME-WAIT, or after an abort): its 4-tuple may be used again.
fn is_gone(c: &Connection) -> bool {
    matches!(c.state(), tcp::State::Closed | tcp::State::Aborted)
}

/// A demultiplexing key (local port, remote address, remote port) in one word.
fn demux_key((port, addr, remote_port): (u16, Addr, u16)) -> u64 {
    u64::from(port) | u64::from(addr.0) << 16 | u64::from(remote_port) << 48
}

pub struct Host {
    addr: Addr,
    conns: Vec<Entry>,
    /// (local port, remote address, remote port) -> connection. (FxHash: fast, and the
    /// same on every run; nothing iterates it.)
    demux: HashMap<(u16, Addr, u16), ConnId>,
    /// The same keys packed (`demux_key`), by `ConnId`: a host with few connections finds
    /// one by a scan (`conn_of`), which costs less than the hash.
    keys: Vec<u64>,
    listeners: HashMap<u16, Listener>,
    next_port: u16,
    /// (local port, remote address, remote port) that another machine of the node sends
    /// TCP segments from (the ideal protocol): never an ephemeral port's choice, so that
    /// no connection of the host takes that machine's segments as its own.
    reserved: Vec<(u16, Addr, u16)>,
    /// The inbound SAs it holds (by SPI), each with the SA that answers a connection
    /// opened under it.
    sad: HashMap<u32, SecurityAssociation>,
    timers: Timers,
    /// Connections with input since they were last polled dry, in the order they got it.
    dirty: VecDeque<ConnId>,
    events: VecDeque<Event>,
    /// Its connections report every retransmission (`Machine::detailed_events`).
    detailed: bool,
    /// Sizes of the SAs it creates.
    esp_sizes: EspSizes,
    /// Runs MH-LIFT on its ESP connections (seed 001), numbering their flows from 1.
    lift: bool,
    lift_protection: Option<SelfProtection>,
    next_lift_flow: u16,
    /// LIFT packets due before any connection's next one: Setup, Teardown, and the ACK
    /// that follows its FrACK.
    lift_out: VecDeque<Packet>,
}

impl Host {
    pub fn new(addr: Addr) -> Host {
        Host {
            addr,
            conns: Vec::new(),
            demux: HashMap::default(),
            keys: Vec::new(),
            listeners: HashMap::default(),
            next_port: FIRST_EPHEMERAL_PORT,
            reserved: Vec::new(),
            sad: HashMap::default(),
            timers: Timers::default(),
            dirty: VecDeque::new(),
            events: VecDeque::new(),
            detailed: false,
            esp_sizes: EspSizes::default(),
            lift: false,
            lift_protection: None,
            next_lift_flow: 0,
            lift_out: VecDeque::new(),
        }
    }

    /// The sizes of the SAs it creates from now on (`EspSizes`; seed 001's 18 bytes are
    /// `EspSizes::Flat { icv: 8 }`).
    pub fn set_esp_sizes(&mut self, sizes: EspSizes) {
        self.esp_sizes = sizes;
    }

    /// Runs MH-LIFT between its TCP and ESP (seed 001, section II; `lift_mh.rs`) on the
    /// ESP connections it opens or accepts from now on, with section III's
    /// self-protection if given.
    pub fn enable_lift(&mut self, protection: Option<SelfProtection>) {
        self.lift = true;
        self.lift_protection = protection;
    }

    pub fn addr(&self) -> Addr {
        self.addr
    }

    /// Accepts connections on `port` (LISTEN).
    pub fn listen(&mut self, port: u16, listener: Listener) {
        self.listeners.insert(port, listener);
    }

    /// A port accepting with `listener`: the lowest that already does, or the next free
    /// port from `FIRST_SERVER_PORT`. `None` if every port is taken.
    pub fn listen_any(&mut self, listener: Listener) -> Option<u16> {
        let same = self.listeners.iter().filter(|(_, l)| **l == listener);
        if let Some(port) = same.map(|(&p, _)| p).min() {
            return Some(port);
        }
        let port = (FIRST_SERVER_PORT..=u16::MAX).find(|p| !self.listeners.contains_key(p))?;
        self.listen(port, listener);
        Some(port)
    }

    /// Holds the inbound SA `inbound`; a connection opened under it is answered under
    /// `outbound` (a pair of SAs, RFC 4301 section 4.1).
    pub fn add_sa(&mut self, inbound: u32, outbound: u32) {
        let sa = SecurityAssociation::with_sizes(outbound, self.esp_sizes);
        self.sad.insert(inbound, sa);
    }

    /// Opens a connection to `remote` from an ephemeral port (active OPEN). With `esp`
    /// = (outbound SPI, inbound SPI) it is carried in ESP. `None` if no port is free
    /// toward `remote`.
    pub fn connect(
        &mut self,
        remote: Endpoint,
        tcp: TcpConfig,
        cc: &Algorithm,
        esp: Option<(u32, u32)>,
    ) -> Option<ConnId> {
        let port = self.ephemeral_port(remote)?;
        let local = Endpoint {
            addr: self.addr,
            port,
        };
        let conn = Connection::connect(tcp, cc, local, remote);
        let seal = esp.map(|(out, inbound)| {
            self.add_sa(inbound, out);
            (
                SecurityAssociation::with_sizes(out, self.esp_sizes),
                inbound,
            )
        });
        Some(self.insert(conn, seal, false))
    }

    /// Keeps `local` toward `remote` out of the ephemeral ports: another machine of the
    /// node sends segments between them.
    pub fn reserve(&mut self, local: u16, remote: Endpoint) {
        self.reserved.push((local, remote.addr, remote.port));
    }

    /// A port free toward `remote`, cycling from `FIRST_EPHEMERAL_PORT` (the traditional
    /// sequential choice RFC 6056 section 2.2 describes, skipping a 4-tuple in use). A
    /// port is free when no connection from it to `remote` is left: none was opened, or
    /// it is gone (`is_gone`), as a real host uses a port again once its TIME-WAIT is
    /// over. `None` if all 64,512 ports are in use toward `remote` at once.
    fn ephemeral_port(&mut self, remote: Endpoint) -> Option<u16> {
        for _ in 0..EPHEMERAL_PORTS {
            let p = self.next_port;
            self.next_port = if p == u16::MAX { 1024 } else { p + 1 };
            let key = (p, remote.addr, remote.port);
            let free = match self.demux.get(&key) {
                None => !self.reserved.contains(&key),
                Some(&c) => is_gone(&self.conns[c.index()].conn),
            };
            if free {
                return Some(p);
            }
        }
        None
    }

    /// `seal`: the outbound SA and the inbound SPI, for a connection carried in ESP.
    fn insert(
        &mut self,
        mut conn: Connection,
        seal: Option<(SecurityAssociation, u32)>,
        sink: bool,
    ) -> ConnId {
        let lift = match seal {
            Some((_, inbound)) if self.lift => {
                self.next_lift_flow = self.next_lift_flow.wrapping_add(1);
                Some(
                    MhLift::new(self.next_lift_flow, inbound).with_protection(self.lift_protection),
                )
            }
            _ => None,
        };
        conn.set_detailed_events(self.detailed);
        let c = ConnId(self.conns.len() as u32);
        let key = (conn.local().port, conn.remote().addr, conn.remote().port);
        self.demux.insert(key, c);
        self.keys.push(demux_key(key));
        self.conns.push(Entry {
            conn,
            esp: seal.map(|(sa, _)| (sa, 0)),
            lift,
            sink,
            queued: false,
            settled: false,
            written: 0,
            acked_reported: 0,
            expect: None,
        });
        self.mark(c);
        c
    }

    /// Queues `bytes` more bytes on `c`. `Event::Acked` tells when all that was written
    /// is acknowledged.
    pub fn write(&mut self, c: ConnId, bytes: u64) {
        let e = &mut self.conns[c.index()];
        e.conn.write(bytes);
        e.written = e.written.saturating_add(bytes);
        self.mark(c);
    }

    /// The application on `c` expects `bytes` in all (a transfer of known length):
    /// `Event::Delivered` tells when they are in.
    pub fn expect(&mut self, c: ConnId, bytes: u64) {
        self.conns[c.index()].expect = Some(bytes);
    }

    /// No more data on `c`: its FIN follows the last byte.
    pub fn close(&mut self, c: ConnId) {
        self.conns[c.index()].conn.close();
        self.mark(c);
    }

    /// Hands each connection's deadline to the driver as its own timer (`poll_armed`,
    /// `handle_conn_timeout`) instead of reporting the earliest through `poll_timeout`:
    /// for a driver that orders every deadline among its other events, as a per-connection
    /// timer in a real stack would be.
    pub fn keyed_timers(&mut self) {
        self.timers.keyed();
    }

    /// Keyed timers: the next (connection, deadline) entry made since the last call.
    pub fn poll_armed(&mut self) -> Option<(ConnId, Time)> {
        self.timers.pop_armed()
    }

    /// Keyed timers: `c`'s entry for `now` came up. A superseded entry is a no-op.
    pub fn handle_conn_timeout(&mut self, now: Time, c: ConnId) {
        if self.timers.take_due(c, now) {
            self.conns[c.index()].conn.handle_timeout(now);
            self.mark(c);
        }
    }

    /// The application on `c` reads up to `max` bytes; returns how many it got.
    pub fn read(&mut self, c: ConnId, max: u64) -> u64 {
        let n = self.conns[c.index()].conn.read(max);
        self.mark(c);
        n
    }

    /// The application aborts `c`: a reset goes to the peer.
    pub fn reset(&mut self, c: ConnId) {
        self.conns[c.index()].conn.reset();
        self.mark(c);
    }

    pub fn connection(&self, c: ConnId) -> &Connection {
        &self.conns[c.index()].conn
    }

    /// Every connection, with its handle.
    pub fn connections(&self) -> impl Iterator<Item = (ConnId, &Connection)> {
        self.conns
            .iter()
            .enumerate()
            .map(|(i, e)| (ConnId(i as u32), &e.conn))
    }

    fn mark(&mut self, c: ConnId) {
        let e = &mut self.conns[c.index()];
        e.settled = false;
        if !e.queued {
            e.queued = true;
            self.dirty.push_back(c);
        }
    }

    /// A segment for this host, from `src` to `dst` (in the ESP packet `(SPI, sequence
    /// number)` of an inbound SA).
    fn segment(
        &mut self,
        now: Time,
        src: Addr,
        dst: Addr,
        seg: &TcpSegment,
        esp: Option<(u32, u32)>,
    ) -> bool {
        let spi = esp.map(|(spi, _)| spi);
        let found = self.conn_of((seg.dst_port, src, seg.src_port));
        // A SYN for a connection that is gone opens a new one (its port was reused).
        let found = found.filter(|&c| {
            !seg.flags.contains(TcpFlags::SYN) || !is_gone(&self.conns[c.index()].conn)
        });
        match found {
            Some(c) => {
                let e = &mut self.conns[c.index()];
                if let (Some(l), Some((_, esp_seq))) = (&mut e.lift, esp) {
                    if let Some(teardown) = l.on_received(now, seg, esp_seq) {
                        let p = Packet::new(self.addr, src, Body::Lift(teardown, None));
                        self.lift_out.push_back(p);
                    }
                }
                e.conn.handle_segment(now, seg);
                self.mark(c);
                true
            }
            // Nothing listens, or not a SYN: not taken (no RST is modelled), so that
            // the node counts it as unclaimed.
            None => self.accept(src, dst, seg, spi).is_some(),
        }
    }

    /// Whether `segment` would take `seg` from `src`: a connection of its own, or a
    /// listener's SYN.
    fn takes(&self, src: Addr, seg: &TcpSegment) -> bool {
        let syn = seg.flags.contains(TcpFlags::SYN);
        let conn = self.conn_of((seg.dst_port, src, seg.src_port));
        conn.is_some_and(|c| !syn || !is_gone(&self.conns[c.index()].conn))
            || (syn
                && !seg.flags.contains(TcpFlags::ACK)
                && self.listeners.contains_key(&seg.dst_port))
    }

    /// The connection that sent `p` (plain, or in ESP it sealed itself).
    fn sender_of(&self, p: &Packet) -> Option<ConnId> {
        let seg = match &p.body {
            Body::Tcp(seg) => seg,
            Body::Esp(esp) | Body::Lift(_, Some(esp)) => &esp.inner,
            _ => return None,
        };
        self.conn_of((seg.src_port, p.ip.dst, seg.dst_port))
    }

    /// The connection of (local port, remote address, remote port), as `demux` has it.
    #[inline]
    fn conn_of(&self, key: (u16, Addr, u16)) -> Option<ConnId> {
        if self.keys.len() <= SCAN_CONNS {
            // The last match, as the map keeps the last connection inserted under a key.
            let packed = demux_key(key);
            let k = self.keys.iter().rposition(|&x| x == packed)?;
            return Some(ConnId(k as u32));
        }
        self.demux.get(&key).copied()
    }

    /// Passive open on a SYN to a listening port.
    fn accept(
        &mut self,
        src: Addr,
        dst: Addr,
        seg: &TcpSegment,
        spi: Option<u32>,
    ) -> Option<ConnId> {
        let l = self.listeners.get(&seg.dst_port)?;
        if !seg.flags.contains(TcpFlags::SYN) || seg.flags.contains(TcpFlags::ACK) {
            return None;
        }
        let (remote, local) = seg.endpoints(src, dst);
        let mut conn = Connection::accept(l.tcp, &l.cc, local, remote, seg);
        conn.set_auto_read(l.auto_read);
        let seal = spi.and_then(|s| Some((*self.sad.get(&s)?, s)));
        let c = self.insert(conn, seal, true);
        self.events.push_back(Event::Accepted {
            conn: c,
            local,
            remote,
        });
        Some(c)
    }

    /// Its driver holds back what it sends (a full first-hop queue): the connections with
    /// work still hear their events and keep their timers, so a retransmission timeout
    /// still fires while they wait, as a socket's does.
    pub fn settle_waiting(&mut self) {
        for k in 0..self.dirty.len() {
            let c = self.dirty[k];
            if !self.conns[c.index()].settled {
                self.settle(c);
            }
        }
    }

    /// After `c` has nothing more to send: the application reacts to its events, the
    /// progress is reported and the next deadline noted. True if it has more to send.
    fn settle(&mut self, c: ConnId) -> bool {
        let e = &mut self.conns[c.index()];
        let mut again = false;
        while let Some(ev) = e.conn.poll_event() {
            match ev {
                tcp::Event::PeerFinished if e.sink => {
                    e.conn.close();
                    again = true;
                }
                tcp::Event::WhatShouldTcpDo => self
                    .events
                    .push_back(Event::Signal(Signal::WhatShouldTcpDo(c))),
                _ => {}
            }
            self.events.push_back(Event::Tcp { conn: c, event: ev });
        }
        if let Some(n) = e.expect {
            let bytes = e.conn.bytes_received();
            if bytes >= n {
                e.expect = None;
                self.events.push_back(Event::Delivered { conn: c, bytes });
            }
        }
        if e.written > e.acked_reported && e.conn.sender().bytes_acked() >= e.written {
            e.acked_reported = e.written;
            self.events.push_back(Event::Acked {
                conn: c,
                bytes: e.written,
            });
        }
        if !again {
            if let Some(t) = e.conn.poll_timeout() {
                self.timers.arm(c, t);
            }
        }
        // Closing (`again`) changed it: the next settle has work.
        e.settled = !again;
        again
    }
}

impl Machine for Host {
    fn hooks(&self) -> Hooks {
        Hooks {
            local: true,
            ..Hooks::default()
        }
    }

    /// The connection that sent `p` decides (`TcpConfig::local_queue`); under `Cwr` it
    /// reduces its window. Either way it goes to the back of the line, so that the
    /// connections of a host take turns at a full queue as flows do under fq.
    fn handle_full_queue(&mut self, now: Time, p: &Packet) -> LocalQueue {
        let Some(c) = self.sender_of(p) else {
            return LocalQueue::Drop;
        };
        self.conns[c.index()].settled = false;
        let conn = &mut self.conns[c.index()].conn;
        let mode = conn.config().local_queue;
        if mode == LocalQueue::Cwr {
            conn.handle_local_congestion(now);
        }
        if let Some(k) = self.dirty.iter().position(|&x| x == c) {
            if k + 1 < self.dirty.len() {
                self.dirty.remove(k);
                self.dirty.push_back(c);
            }
        }
        mode
    }

    fn handle_packet(&mut self, now: Time, _at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        let (src, dst) = (p.ip.src, p.ip.dst);
        // A TCP segment, opened if it came in ESP under an SA held here; anything else
        // (another protocol, another host's SA) is not for the stack.
        match &p.body {
            Body::Tcp(seg) => {
                if !self.segment(now, src, dst, seg, None) {
                    return Verdict::Pass;
                }
            }
            Body::Esp(esp) if self.sad.contains_key(&esp.spi) => {
                if !self.takes(src, &esp.inner) {
                    return Verdict::Pass; // as a plain segment no connection takes
                }
                let Body::Esp(esp) = p.take().body else {
                    unreachable!("matched above")
                };
                let (spi, seq) = (esp.spi, esp.seq);
                let seg = SecurityAssociation::new(spi)
                    .open(esp)
                    .expect("the SPI is the SA's");
                self.segment(now, src, dst, &seg, Some((spi, seq)));
            }
            _ => return Verdict::Pass,
        }
        Verdict::Consume
    }

    fn handle_signal(&mut self, now: Time, signal: Signal, _node: &dyn NodeView) {
        let c = match signal {
            Signal::Advise(c, advice) => {
                self.conns[c.index()].conn.handle_advice(now, advice);
                c
            }
            Signal::Restore(c) => {
                self.conns[c.index()].conn.handle_restore();
                c
            }
            _ => return,
        };
        self.mark(c);
    }

    fn handle_timeout(&mut self, now: Time, _node: &dyn NodeView) {
        while let Some(c) = self.timers.pop_due(now) {
            self.conns[c.index()].conn.handle_timeout(now);
            self.mark(c);
        }
    }

    /// The packet is built in `out` (`Machine::poll_transmit_into`): the connection
    /// writes its segment there, and ESP and LIFT wrap it where it lies.
    fn poll_transmit_into(
        &mut self,
        now: Time,
        _node: &dyn NodeView,
        out: &mut Packet,
    ) -> Option<Via> {
        if let Some(p) = self.lift_out.pop_front() {
            *out = p;
            return Some(Via::Route);
        }
        while let Some(&c) = self.dirty.front() {
            let e = &mut self.conns[c.index()];
            if e.conn.poll_transmit_into(now, out) {
                e.settled = false;
                let p = out;
                if let Some((sa, seq)) = &mut e.esp {
                    if let Body::Tcp(seg) =
                        std::mem::replace(&mut p.body, Body::Raw { proto: 0, len: 0 })
                    {
                        let mut seal = |seg| {
                            *seq = seq.wrapping_add(1);
                            sa.seal(*seq, seg)
                        };
                        let Some(lift) = &mut e.lift else {
                            p.body = Body::Esp(seal(seg));
                            return Some(Via::Route);
                        };
                        // MH-LIFT: its Setup first, then (FrACK, ACK) or the one packet.
                        let ip = p.ip;
                        let mut bodies = Vec::with_capacity(3);
                        let wrapped = lift.wrap(&seg);
                        if !matches!(wrapped, LiftOut::Plain) {
                            if let Some(setup) = lift.poll_setup() {
                                bodies.push(Body::Lift(setup, None));
                            }
                        }
                        match wrapped {
                            LiftOut::Plain => bodies.push(Body::Esp(seal(seg))),
                            LiftOut::Ack(h) => bodies.push(Body::Lift(h, Some(seal(seg)))),
                            LiftOut::Pair {
                                frack,
                                frack_header,
                                ack_header,
                            } => {
                                bodies.push(Body::Lift(frack_header, Some(seal(frack))));
                                bodies.push(Body::Lift(ack_header, Some(seal(seg))));
                            }
                        }
                        let mut bodies = bodies.into_iter();
                        p.body = bodies.next().expect("one packet at least");
                        self.lift_out.extend(bodies.map(|body| Packet { ip, body }));
                    }
                }
                return Some(Via::Route);
            }
            if !self.settle(c) {
                self.dirty.pop_front();
                self.conns[c.index()].queued = false;
            }
        }
        self.timers.prune();
        None
    }

    fn poll_transmit(&mut self, now: Time, node: &dyn NodeView) -> Option<Transmit> {
        Transmit::polled(|out| self.poll_transmit_into(now, node, out))
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    fn report_connections(&self, out: &mut Vec<ConnReport>) {
        out.extend(self.connections().map(|(_, c)| c.report()));
    }
    fn detailed_events(&mut self, on: bool) {
        self.detailed = on;
        for e in &mut self.conns {
            e.conn.set_detailed_events(on);
        }
    }
}
