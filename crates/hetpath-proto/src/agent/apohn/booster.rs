//! APOHN's protocol booster (seed 000 §III.B, Fig. 2): the layer between a node's TCP and
//! its subnetwork layer.
//!
//! It takes every data segment its TCP sends and acknowledges it to that TCP at once,
//! advertising a window of one segment while its buffer has room and zero when it is full,
//! which freezes TCP. A single duplicate ACK with a positive window resumes a frozen TCP:
//! with everything acknowledged there is nothing in flight, so it is a window update and
//! never a duplicate ACK in the sense of RFC 5681 §2 (the seed's footnote 3 makes the same
//! point: three would be needed). TCP's slow start and congestion avoidance are thereby
//! bypassed: the subnetwork layer decides the rate.
//!
//! The booster keeps each datagram until the destination node confirms it (§III.C), so
//! delivery stays end to end per node: a datagram the subnetwork reports lost is sent again.
//! The buffer is shared by the node's flows; a freed place goes to the frozen flow holding
//! the fewest datagrams per unit of weight, the fair share of §III.D with QoS classes as
//! weights. How many datagrams it keeps unconfirmed is the SBP window (`window.rs`), at
//! most the buffer.

use super::window::{Window, WindowConfig};
use crate::packet::{Endpoint, Packet, TcpFlags, TcpSegment, Timestamps};
use crate::time::Time;
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoosterConfig {
    /// Datagrams held until the destination node confirms them (§III.B-C), shared by the
    /// node's flows: the most the window can reach. TCP is frozen while the held
    /// datagrams and the places promised to flows fill the window.
    pub buffer: usize,
    /// QoS weights by the flow's destination port (§III.D); other flows weigh 1.
    pub weights: Vec<(u16, u32)>,
    /// The SBP window that follows the path (`window.rs`), or `None` for a window fixed
    /// at `buffer`.
    pub window: Option<WindowConfig>,
}

impl Default for BoosterConfig {
    fn default() -> Self {
        BoosterConfig {
            // 2048 datagrams of 1500 bytes, 3 MB: twice the bandwidth-delay product of a
            // 20 Mbit/s GEO hop, so that the window, not the buffer, limits.
            buffer: 2048,
            weights: Vec::new(),
            window: Some(WindowConfig::default()),
        }
    }
}

/// What the booster has done, for the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoosterStats {
    /// Datagrams taken from TCP.
    pub taken: u64,
    /// Zero-window ACKs: TCP frozen.
    pub freezes: u64,
    /// Duplicate ACKs with a positive window: TCP resumed.
    pub resumes: u64,
    /// Datagrams the destination node confirmed.
    pub confirmed: u64,
    /// Datagrams sent again after the subnetwork reported them lost.
    pub resent: u64,
}

struct Flow {
    /// The sending TCP's end and its peer's.
    local: Endpoint,
    remote: Endpoint,
    /// Everything before this sequence number has been taken and acknowledged.
    acked: u64,
    /// The peer's next sequence number (the data segments' acknowledgement field), which
    /// the generated ACKs carry as theirs.
    peer_seq: u64,
    /// The last timestamp TCP sent, echoed as RFC 7323 requires once negotiated.
    ts: Option<Timestamps>,
    /// The largest segment seen: the one-packet window.
    mss: u64,
    held: usize,
    weight: u32,
    /// Told a positive window and has not used it yet.
    granted: bool,
    /// Told a zero window and not resumed yet.
    frozen: bool,
}

/// A datagram the booster holds until the destination node confirms it.
struct Held {
    flow: usize,
    packet: Packet,
    taken: Time,
    /// Sent again: its confirmation times no round trip (Karn's rule).
    resent: bool,
}

pub struct Booster {
    cfg: BoosterConfig,
    flows: Vec<Flow>,
    index: HashMap<(Endpoint, Endpoint), usize>,
    held: HashMap<u64, Held>,
    window: Option<Window>,
    /// Flows told a positive window that they have not used: places promised.
    grants: usize,
    next_id: u64,
    to_tcp: VecDeque<Packet>,
    /// Held datagrams due to the subnetwork layer, by id: each packet is kept once, in
    /// `held`, and copied out as it goes.
    to_subnet: VecDeque<u64>,
    stats: BoosterStats,
}

impl Booster {
    pub fn new(cfg: BoosterConfig) -> Booster {
        Booster {
            window: cfg
                .window
                .map(|w| Window::new(w, u32::try_from(cfg.buffer).unwrap_or(u32::MAX))),
            cfg,
            flows: Vec::new(),
            index: HashMap::default(),
            held: HashMap::default(),
            grants: 0,
            next_id: 0,
            to_tcp: VecDeque::new(),
            to_subnet: VecDeque::new(),
            stats: BoosterStats::default(),
        }
    }

    /// Whether the booster takes this segment from its TCP: data or a FIN, not a SYN or a
    /// RST (the handshake and resets go end to end untouched).
    pub fn boosts(seg: &TcpSegment) -> bool {
        (seg.len > 0 || seg.flags.contains(TcpFlags::FIN))
            && !seg.flags.contains(TcpFlags::SYN)
            && !seg.flags.contains(TcpFlags::RST)
    }

    /// A segment `seg` of the node's TCP that `boosts` accepts, as the packet `p` that
    /// carries it (the segment itself, or ESP around it: the datagram stays sealed). It
    /// is always taken, even beyond the buffer (TCP's first window leaves before any
    /// booster ACK), since refusing it would let TCP see a loss.
    pub fn take(&mut self, now: Time, seg: &TcpSegment, p: Packet) {
        let (local, remote) = seg.endpoints(p.ip.src, p.ip.dst);
        let f = self.flow(local, remote, seg);
        let end = seg.seq + seg.seq_len();
        let flow = &mut self.flows[f];
        flow.peer_seq = seg.ack;
        flow.ts = seg.ts;
        flow.mss = flow.mss.max(seg.len as u64);
        if end <= flow.acked {
            // Already taken (TCP sent it again): acknowledge again, hold nothing.
            let win = if flow.frozen { 0 } else { flow.mss };
            return self.ack(f, win);
        }
        flow.acked = end;
        flow.held += 1;
        if std::mem::take(&mut flow.granted) {
            self.grants -= 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.held.insert(
            id,
            Held {
                flow: f,
                packet: p,
                taken: now,
                resent: false,
            },
        );
        self.to_subnet.push_back(id);
        self.stats.taken += 1;
        if self.room() {
            self.grant(f);
        } else {
            self.flows[f].frozen = true;
            self.stats.freezes += 1;
            self.ack(f, 0);
        }
    }

    /// The destination node confirmed datagram `id`: its place frees, and a frozen flow
    /// may resume. Unknown ids (confirmed twice) are ignored.
    pub fn confirmed(&mut self, now: Time, id: u64) {
        let Some(h) = self.held.remove(&id) else {
            return;
        };
        self.flows[h.flow].held -= 1;
        if let Some(w) = &mut self.window {
            let rtt = (!h.resent).then(|| now.since(h.taken));
            w.on_confirmed(id, rtt, self.next_id);
        }
        self.stats.confirmed += 1;
        self.resume();
    }

    /// The subnetwork lost datagram `id` on its way: it goes again, under the same id.
    pub fn lost(&mut self, id: u64) {
        if let Some(h) = self.held.get_mut(&id) {
            h.resent = true;
            self.to_subnet.push_back(id);
            self.stats.resent += 1;
        }
    }

    /// The next ACK for the node's TCP.
    pub fn poll_tcp(&mut self) -> Option<Packet> {
        self.to_tcp.pop_front()
    }

    /// The next datagram for the subnetwork layer, with its id (a copy: the booster
    /// keeps it until it is confirmed).
    pub fn poll_subnet(&mut self) -> Option<(u64, Packet)> {
        while let Some(id) = self.to_subnet.pop_front() {
            if let Some(h) = self.held.get(&id) {
                return Some((id, h.packet.clone()));
            }
        }
        None
    }

    /// Datagrams held until confirmed.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    pub fn stats(&self) -> BoosterStats {
        self.stats
    }

    /// Datagrams the booster lets be unconfirmed now.
    pub fn window(&self) -> usize {
        self.window
            .as_ref()
            .map_or(self.cfg.buffer, |w| w.size() as usize)
    }

    fn room(&self) -> bool {
        self.held.len() + self.grants < self.window()
    }

    /// Gives freed places to frozen flows, fewest held per weight first (ties: the flow
    /// that came first), one duplicate ACK with a positive window each.
    fn resume(&mut self) {
        while self.room() {
            let Some(f) = (0..self.flows.len())
                .filter(|&f| self.flows[f].frozen)
                .min_by_key(|&f| {
                    let flow = &self.flows[f];
                    // held / weight, compared without division
                    (flow.held as u128 * 1_000_000 / flow.weight as u128, f)
                })
            else {
                return;
            };
            self.flows[f].frozen = false;
            self.stats.resumes += 1;
            self.grant(f);
        }
    }

    fn grant(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        flow.granted = true;
        self.grants += 1;
        let win = flow.mss;
        self.ack(f, win);
    }

    /// An ACK of everything taken, from the peer's end, with window `win`.
    fn ack(&mut self, f: usize, win: u64) {
        let flow = &self.flows[f];
        let seg = TcpSegment {
            src_port: flow.remote.port,
            dst_port: flow.local.port,
            seq: flow.peer_seq,
            ack: flow.acked,
            flags: TcpFlags::ACK,
            window: win,
            ts: flow.ts.map(|t| Timestamps {
                val: t.ecr,
                ecr: t.val,
            }),
            ..TcpSegment::default()
        };
        self.to_tcp
            .push_back(Packet::tcp(flow.remote.addr, flow.local.addr, seg));
    }

    fn flow(&mut self, local: Endpoint, remote: Endpoint, seg: &TcpSegment) -> usize {
        if let Some(&f) = self.index.get(&(local, remote)) {
            return f;
        }
        let weight = self
            .cfg
            .weights
            .iter()
            .find(|(port, _)| *port == remote.port)
            .map_or(1, |w| w.1.max(1));
        self.flows.push(Flow {
            local,
            remote,
            acked: seg.seq,
            peer_seq: seg.ack,
            ts: seg.ts,
            mss: seg.len as u64,
            held: 0,
            weight,
            granted: false,
            frozen: false,
        });
        self.index.insert((local, remote), self.flows.len() - 1);
        self.flows.len() - 1
    }
}
