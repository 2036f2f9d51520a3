//! A transparent split-connection PEP (I-TCP, Bakre and Badrinath 1995; PEPsal, Caini,
//! Firrincieli and Lacamera 2007; seed 004 section II-C).
//!
//! On the SYN of a connection crossing its node it answers in the responder's name and
//! opens a connection of its own to the responder in the opener's name, with the same
//! addresses and ports, so neither end sees it. Bytes move between the two legs through a
//! bounded buffer: the PEP reads from one leg only while the other leg's send buffer has
//! room, so a full buffer closes the advertised window of the leg that fills it. A FIN
//! read from one leg is passed on once everything before it has been relayed; a RST or an
//! abort on one leg resets the other. Each leg runs the PEP's own controller.
//!
//! Two PEPs on a path (one at each end of a satellite hop) form the distributed PEP: the
//! second splits the connection the first one opens. A PEP that sees only ESP packets
//! finds no TCP header to split and lets them through (see `esp`).
//!
//! RAPPEP (seed 004 section III) is this PEP with `xcp-pep` or `mpcp-pep` as controller:
//! the PEP then watches its outgoing interface (its interface 0) with a traffic monitor
//! (RTM) and hands the monitor's output to its connections' controllers (RC) on each ACK,
//! instead of reading feedback from the ACK.

use crate::cc::{Algorithm, RapMonitor};
use crate::ids::{ConnId, IfaceId};
use crate::machine::{
    At, Counter, Event, Hooks, LocalQueue, Machine, NodeView, Transmit, Verdict, Via,
};
use crate::packet::{Body, Endpoint, Packet, TcpFlags, TcpSegment, XcpHeader};
use crate::rap::{
    Feedback, Iface, LoadConfig, LoadMonitor, RateMeasure, XcpRouter, XcpRouterConfig,
};
use crate::tcp::{self, Connection, State, TcpConfig};
use crate::time::{earliest, Dur, Time};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct SplitConfig {
    /// TCP settings of both legs; `recv_buffer` is overridden by `buffer`.
    pub tcp: TcpConfig,
    /// The controller of the PEP's legs.
    pub cc: Algorithm,
    /// Bytes the PEP holds per direction and leg: the receive buffer of the leg it reads
    /// and the send buffer of the leg it writes.
    pub buffer: u64,
    /// The traffic monitor's control interval. XCP-PEP: its fixed interval, the
    /// satellite leg's round trip (seed 004 section IV: "using a fixed RTT estimate").
    /// MPCP-PEP: the load-factor measurement interval (the paper gives none).
    pub monitor_interval: Dur,
}

/// RAPPEP's traffic monitor (RTM, seed 004 section III-B), on the outgoing rate.
enum Monitor {
    Xcp(XcpRouter),
    Load(LoadMonitor),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leg {
    /// Toward the connection's opener: the PEP speaks as the responder.
    Near,
    /// Toward the responder: the PEP speaks as the opener.
    Far,
}

struct Split {
    near: Connection,
    far: Connection,
    /// A FIN read from this leg has been passed to the other.
    near_fin_relayed: bool,
    far_fin_relayed: bool,
    /// XCP-PEP: the monitor's feedback for each far-leg segment, by its end sequence
    /// number, applied when an ACK covers the segment (as an echo would be).
    pending: VecDeque<(u64, i64)>,
    /// Something may have changed since the last `relay`: the split was opened, or a leg
    /// sent (which may leave an event to pass on).
    unrelayed: bool,
}

pub struct SplitPep {
    cfg: SplitConfig,
    splits: Vec<Split>,
    /// (source, destination) of an arriving segment -> its split and leg.
    index: HashMap<(Endpoint, Endpoint), (usize, Leg)>,
    monitor: Option<Monitor>,
    /// The split polled first for the next packet to send.
    turn: usize,
    /// The legs with work, by leg number (`2i`: split `i`'s near leg, `2i + 1`: its far
    /// leg): only they are polled (see `poll_transmit`).
    work: LegSet,
    /// Each leg's `poll_timeout` as it was polled dry, which holds while it has no work,
    /// and the earliest of those of the legs without work (`next_stale`: to be found
    /// again before anyone asks). A leg with work is asked when needed.
    deadlines: Vec<Option<Time>>,
    next_deadline: Option<Time>,
    next_stale: bool,
    /// Its legs' TCP events, for the driver: leg `ConnId(2i)` is split `i`'s near leg,
    /// `ConnId(2i + 1)` its far leg (the order of `report_connections`).
    events: VecDeque<Event>,
    /// Its legs report every retransmission (`Machine::detailed_events`).
    detailed: bool,
}

/// What XCP-PEP's senders ask for: as much as the monitor will give.
const UNLIMITED_DEMAND: i64 = i64::MAX / 4;

impl SplitPep {
    /// A PEP whose traffic monitor, if its controller needs one, watches its interface 0.
    pub fn new(cfg: SplitConfig) -> SplitPep {
        let monitor = match cfg.cc.rap_monitor() {
            Some(RapMonitor::Xcp) => Some(Monitor::Xcp(XcpRouter::new(XcpRouterConfig {
                measure: RateMeasure::Departures,
                fixed_interval: Some(cfg.monitor_interval),
                ..Default::default()
            }))),
            Some(RapMonitor::Load) => Some(Monitor::Load(LoadMonitor::new(LoadConfig {
                measure: RateMeasure::Departures,
                interval: cfg.monitor_interval,
                ..Default::default()
            }))),
            None => None,
        };
        SplitPep {
            cfg,
            splits: Vec::new(),
            index: HashMap::default(),
            monitor,
            turn: 0,
            work: LegSet::default(),
            deadlines: Vec::new(),
            next_deadline: None,
            next_stale: false,
            events: VecDeque::new(),
            detailed: false,
        }
    }

    /// Both legs of every connection split so far, as (near, far).
    pub fn connections(&self) -> impl Iterator<Item = (&Connection, &Connection)> {
        self.splits.iter().map(|s| (&s.near, &s.far))
    }

    fn open(&mut self, opener: Endpoint, responder: Endpoint, syn: &TcpSegment) {
        let tcp = TcpConfig {
            recv_buffer: self.cfg.buffer,
            ..self.cfg.tcp
        };
        let cc = &self.cfg.cc;
        let mut near = Connection::accept(tcp, cc, responder, opener, syn);
        let mut far = Connection::connect(tcp, cc, opener, responder);
        near.set_auto_read(false);
        far.set_auto_read(false);
        near.set_detailed_events(self.detailed);
        far.set_detailed_events(self.detailed);
        let i = self.splits.len();
        self.index.insert((opener, responder), (i, Leg::Near));
        self.index.insert((responder, opener), (i, Leg::Far));
        self.splits.push(Split {
            near,
            far,
            near_fin_relayed: false,
            far_fin_relayed: false,
            pending: VecDeque::new(),
            unrelayed: true,
        });
        self.deadlines.extend([None, None]);
        self.touch(2 * i);
        self.touch(2 * i + 1);
    }

    /// Leg `k`: split `k / 2`'s near leg if `k` is even, else its far leg.
    fn leg(&mut self, k: usize) -> &mut Connection {
        let s = &mut self.splits[k / 2];
        if k.is_multiple_of(2) {
            &mut s.near
        } else {
            &mut s.far
        }
    }

    /// Leg `k` had an input: it has work (and its noted deadline no longer holds).
    fn touch(&mut self, k: usize) {
        if self.work.contains(k) {
            return;
        }
        self.work.insert(k);
        let t = self.deadlines[k];
        if t.is_some() && t == self.next_deadline {
            self.next_stale = true;
        }
    }

    /// Leg `k` was polled dry: it has no work until an input or its deadline.
    fn rest(&mut self, k: usize) {
        self.work.remove(k);
        let t = self.leg(k).poll_timeout();
        self.deadlines[k] = t;
        self.next_deadline = earliest(self.next_deadline, t);
    }

    /// Leg `k`'s deadline.
    fn deadline(&self, k: usize) -> Option<Time> {
        if !self.work.contains(k) {
            return self.deadlines[k];
        }
        let s = &self.splits[k / 2];
        let leg = if k.is_multiple_of(2) { &s.near } else { &s.far };
        leg.poll_timeout()
    }

    /// Ends every `&mut` call: the earliest deadline of the legs without work is found
    /// again if the leg that had it got work.
    fn settle(&mut self) {
        if std::mem::take(&mut self.next_stale) {
            let rest = self.deadlines.iter().enumerate();
            let rest = rest.filter(|&(k, _)| !self.work.contains(k));
            self.next_deadline = rest.fold(None, |a, (_, &t)| earliest(a, t));
        }
    }

    /// The number of the leg that sent `p`: a packet leaving on a leg goes the other way
    /// from the segments arriving on it, so its reversed endpoints find the leg in `index`.
    fn sender_of(&self, p: &Packet) -> Option<usize> {
        let Body::Tcp(seg) = &p.body else {
            return None;
        };
        let (src, dst) = seg.endpoints(p.ip.src, p.ip.dst);
        let &(i, leg) = self.index.get(&(dst, src))?;
        Some(2 * i + (leg == Leg::Far) as usize)
    }

    /// The monitor hands its output to the far leg's controller on each ACK.
    fn feed_back(&mut self, i: usize, now: Time, seg: &TcpSegment) {
        if !seg.flags.contains(TcpFlags::ACK) {
            return;
        }
        let s = &mut self.splits[i];
        match &self.monitor {
            Some(Monitor::Xcp(_)) => {
                let mut sum = 0i64;
                while s.pending.front().is_some_and(|&(end, _)| end <= seg.ack) {
                    sum = sum.saturating_add(s.pending.pop_front().expect("front").1);
                }
                if sum != 0 {
                    s.far.handle_feedback(now, Feedback::Window(sum));
                }
            }
            Some(Monitor::Load(m)) => s.far.handle_feedback(now, Feedback::Load(m.load())),
            None => {}
        }
    }

    /// The monitor sees a packet leave on the watched interface.
    fn observe(&mut self, now: Time, p: &Packet, iface: &Iface) {
        let size = p.size();
        match &mut self.monitor {
            Some(Monitor::Load(m)) => m.on_packet(now, size, iface),
            Some(Monitor::Xcp(router)) => {
                let Body::Tcp(seg) = &p.body else { return };
                let (src, dst) = seg.endpoints(p.ip.src, p.ip.dst);
                let Some(&(i, Leg::Far)) = self.index.get(&(dst, src)) else {
                    return;
                };
                if seg.len == 0 {
                    return;
                }
                let far = &self.splits[i].far;
                let mut h = XcpHeader {
                    cwnd: far.sender().cwnd(),
                    rtt: self.cfg.monitor_interval,
                    feedback: UNLIMITED_DEMAND,
                };
                router.on_packet(now, size, &mut h, iface);
                let end = seg.seq + seg.len as u64;
                let pending = &mut self.splits[i].pending;
                // A retransmission replaces nothing: feedback follows the first copy.
                if pending.back().is_none_or(|&(e, _)| e < end) {
                    pending.push_back((end, h.feedback));
                }
            }
            None => {}
        }
    }

    /// Moves bytes, FINs and resets between the two legs of split `i`. Relaying again with
    /// nothing changed in between is a no-op: a pump reads all it may, so the next reads
    /// nothing, and its zero-byte read repeats the same window check (`Receiver::read`),
    /// whose ACK, if it asked for one, was either not sent yet or sent with that window.
    fn relay(&mut self, i: usize) {
        let buffer = self.cfg.buffer;
        let s = &mut self.splits[i];
        pump(&mut s.near, &mut s.far, buffer, &mut s.near_fin_relayed);
        pump(&mut s.far, &mut s.near, buffer, &mut s.far_fin_relayed);
        if s.near.state() == State::Aborted {
            s.far.reset();
        }
        if s.far.state() == State::Aborted {
            s.near.reset();
        }
        // The relay reads state; the legs' events go to the driver, for the results.
        for (k, leg) in [(0, &mut s.near), (1, &mut s.far)] {
            while let Some(event) = leg.poll_event() {
                let conn = ConnId(2 * i as u32 + k);
                self.events.push_back(Event::Tcp { conn, event });
            }
        }
        s.unrelayed = false;
        self.touch(2 * i);
        self.touch(2 * i + 1);
    }

    /// Legs whose deadline has come have work: the pacer lets a held segment go then,
    /// even before `handle_timeout` (another event at that time may come first).
    fn wake_due(&mut self, now: Time) {
        if self.next_deadline.is_none_or(|t| t > now) {
            return;
        }
        for k in 0..self.deadlines.len() {
            if !self.work.contains(k) && self.deadlines[k].is_some_and(|t| t <= now) {
                self.touch(k);
            }
        }
    }
}

/// A set of leg numbers, walked in order from any of them.
#[derive(Default)]
struct LegSet(Vec<u64>);

impl LegSet {
    fn insert(&mut self, k: usize) {
        let w = k / 64;
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (k % 64);
    }
    fn remove(&mut self, k: usize) {
        if let Some(w) = self.0.get_mut(k / 64) {
            *w &= !(1 << (k % 64));
        }
    }
    fn contains(&self, k: usize) -> bool {
        self.0.get(k / 64).is_some_and(|w| w & (1 << (k % 64)) != 0)
    }
    /// The first leg in the set from `k` on and before `end`.
    fn next(&self, k: usize, end: usize) -> Option<usize> {
        let mut w = k / 64;
        let mut bits = self.0.get(w)? & (!0u64 << (k % 64));
        while bits == 0 {
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = *self.0.get(w)?;
        }
        let j = w * 64 + bits.trailing_zeros() as usize;
        (j < end).then_some(j)
    }
}

/// Relays what `to` has room for; passes the FIN on once `from` is drained.
fn pump(from: &mut Connection, to: &mut Connection, buffer: u64, fin_relayed: &mut bool) {
    let room = buffer.saturating_sub(to.send_backlog());
    let n = from.read(room.min(from.readable()));
    if n > 0 {
        to.write(n);
    }
    if !*fin_relayed && from.peer_finished() && from.readable() == 0 {
        to.close();
        *fin_relayed = true;
    }
}

/// The interface a RAPPEP monitor watches.
const WATCHED: IfaceId = IfaceId(0);

impl Machine for SplitPep {
    fn hooks(&self) -> Hooks {
        Hooks {
            arrival: true,
            departure: self.monitor.is_some(),
            ..Hooks::default()
        }
    }

    /// The leg that sent `p` decides (`TcpConfig::local_queue`, from the agent's `tcp`
    /// table over `[tcp]`), as a host's connection does; under `Cwr` it reduces its
    /// window (Linux 2.6 `tcp_transmit_skb`: `tcp_enter_cwr` on NET_XMIT_DROP, the
    /// segment staying in the write queue).
    fn handle_full_queue(&mut self, now: Time, p: &Packet) -> LocalQueue {
        let Some(k) = self.sender_of(p) else {
            return LocalQueue::Drop;
        };
        let leg = self.leg(k);
        let mode = leg.config().local_queue;
        if mode == LocalQueue::Cwr {
            leg.handle_local_congestion(now);
            self.touch(k);
            self.settle();
        }
        mode
    }

    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, node: &dyn NodeView) -> Verdict {
        if let At::Departure(i) = at {
            self.observe(now, p, &node.iface(i));
            return Verdict::Pass;
        }
        // ESP, tunnels and anything else without a readable TCP header pass untouched.
        let Body::Tcp(seg) = &p.body else {
            return Verdict::Pass;
        };
        let (src, dst) = seg.endpoints(p.ip.src, p.ip.dst);
        if let Some(&(i, leg)) = self.index.get(&(src, dst)) {
            match leg {
                Leg::Near => self.splits[i].near.handle_segment(now, seg),
                Leg::Far => {
                    self.feed_back(i, now, seg);
                    self.splits[i].far.handle_segment(now, seg);
                }
            }
            self.relay(i);
            self.settle();
            return Verdict::Consume;
        }
        if seg.flags.contains(TcpFlags::SYN) && !seg.flags.contains(TcpFlags::ACK) {
            self.open(src, dst, seg);
            self.settle();
            return Verdict::Consume;
        }
        // A connection that began before the PEP did, or a stray segment: not ours.
        Verdict::Pass
    }

    /// Legs take turns, as sockets sharing a device queue do: polling from the first
    /// every time would let it starve the others whenever the queue is full. The walk
    /// starts at split `turn`'s near leg and goes round the legs in order, as if polling
    /// every one, but polls only the legs with work (`work`): a leg polled dry stays dry
    /// until an input (a segment, a timer, the relay, a local congestion) or until its
    /// deadline comes (`wake_due`), since the only clock its `poll_transmit` reads is the
    /// pacer's, which holds a segment back only with a deadline. A poll that sends
    /// nothing changes nothing a second time: it arms the persist timer only if unarmed,
    /// notes the same window use (`CwndUsage::on_attempt`) and keeps the pacer holding.
    fn poll_transmit_into(
        &mut self,
        now: Time,
        node: &dyn NodeView,
        out: &mut Packet,
    ) -> Option<Via> {
        let n = self.splits.len();
        self.wake_due(now);
        // A waiting leg is flow-controlled by its queue and does not try; a leg that
        // reduces its window (`Cwr`) or loses the packet (`Drop`) tries, as a Linux socket
        // before TCP Small Queues does, and `handle_full_queue` says what happens. Under
        // `Wait` every leg on the walk still asks its node, with work or not: the question
        // notes a full queue for a wake-up (`NodeView::ready`).
        let wait = self.cfg.tcp.local_queue == LocalQueue::Wait;
        let start = 2 * self.turn;
        for (mut k, end) in [(start, 2 * n), (0, start)] {
            loop {
                let next = if wait {
                    (k < end).then_some(k)
                } else {
                    self.work.next(k, end)
                };
                let Some(j) = next else { break };
                k = j + 1;
                if wait && !node.ready(self.leg(j).remote().addr) {
                    continue;
                }
                if !self.work.contains(j) {
                    continue;
                }
                if self.leg(j).poll_transmit_into(now, out) {
                    self.turn = (j / 2 + 1) % n;
                    self.splits[j / 2].unrelayed = true;
                    self.settle();
                    return Some(Via::Route);
                }
                self.rest(j);
            }
        }
        self.settle();
        None
    }

    fn poll_transmit(&mut self, now: Time, node: &dyn NodeView) -> Option<Transmit> {
        Transmit::polled(|out| self.poll_transmit_into(now, node, out))
    }

    fn poll_timeout(&self) -> Option<Time> {
        debug_assert!(!self.next_stale, "settled after every call");
        let monitor = match &self.monitor {
            Some(Monitor::Xcp(r)) => r.poll_timeout(),
            Some(Monitor::Load(m)) => m.poll_timeout(),
            None => None,
        };
        let mut t = earliest(monitor, self.next_deadline);
        let mut k = 0;
        while let Some(j) = self.work.next(k, self.deadlines.len()) {
            t = earliest(t, self.deadline(j));
            k = j + 1;
        }
        t
    }

    /// Runs the legs' due timers. A split is relayed if a timer ran or something else may
    /// have changed since its last relay (`unrelayed`); another relay would be a no-op.
    fn handle_timeout(&mut self, now: Time, node: &dyn NodeView) {
        match &mut self.monitor {
            Some(Monitor::Xcp(r)) => r.handle_timeout(now, &node.iface(WATCHED)),
            Some(Monitor::Load(m)) => m.handle_timeout(now, &node.iface(WATCHED)),
            None => {}
        }
        for i in 0..self.splits.len() {
            let mut relay = self.splits[i].unrelayed;
            for k in [2 * i, 2 * i + 1] {
                if self.deadline(k).is_some_and(|t| t <= now) {
                    self.leg(k).handle_timeout(now);
                    relay = true;
                }
            }
            if relay {
                self.relay(i);
            }
        }
        self.settle();
    }
    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    fn detailed_events(&mut self, on: bool) {
        self.detailed = on;
        for s in &mut self.splits {
            s.near.set_detailed_events(on);
            s.far.set_detailed_events(on);
        }
    }
    fn kind(&self) -> &'static str {
        "split-pep"
    }
    fn counters(&self, out: &mut Vec<Counter>) {
        out.push(("connections_split", self.splits.len() as u64));
    }
    fn report_connections(&self, out: &mut Vec<tcp::ConnReport>) {
        for s in &self.splits {
            out.extend([s.near.report(), s.far.report()]);
        }
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
