//! A packet's way through a node: the arrival hooks, local delivery or the
//! next hop, the departure hooks of that hop, its queue; and the losses the oracle hears.

use super::routes::Routes;
use super::{DirId, MachineId, NodeId, Simulation};
use crate::link::{Frame, FrameKey};
use crate::trace::{Loss, NodeDrop, TraceEvent};
use hetpath_proto::machine::{At, Verdict, Via};
use hetpath_proto::{Addr, Dur};

/// Node `i` has address 10.0.x.y with x.y = i + 1.
const ADDR_BASE: u32 = 0x0a00_0000;

pub fn node_addr(n: NodeId) -> Addr {
    Addr(ADDR_BASE + n.0 + 1)
}

fn node_of(a: Addr) -> Option<NodeId> {
    a.0.checked_sub(ADDR_BASE + 1).map(NodeId)
}

impl Simulation {
    /// The routes of the topology as it is now (built once, filled on use).
    #[inline]
    fn routes(&self) -> &Routes {
        self.routes.get_or_init(|| {
            let wired = |d: usize| !self.is_wireless(DirId(d as u32));
            Routes::new(self.nodes.len(), &self.dirs, wired, self.home_route())
        })
    }

    pub(super) fn ensure_routes(&mut self) {
        self.routes();
    }

    /// The link directions a packet from `from` to `to` crosses, in order (as far as
    /// static routes go: none from a mobile host).
    pub fn path(&self, from: NodeId, to: NodeId) -> Vec<DirId> {
        let mut dirs = Vec::new();
        let mut at = from;
        while at != to {
            let Some(d) = self.routes().next_hop(at.0, to.0) else {
                break;
            };
            dirs.push(d);
            at = self.dirs[d.index()].params.to;
        }
        dirs
    }

    /// Bandwidth-delay product in bytes between two nodes for segments of `mss` payload
    /// bytes: the slowest nominal link rate on the round trip times the round-trip time
    /// an empty path gives one such segment and its ACK (propagation plus serialisation
    /// of a full data packet forward and a 40-byte ACK back, at nominal rates). The
    /// serialisation matters on slow links: at 16 kbit/s a 1500-byte packet takes 0.75 s.
    pub fn path_bdp(&mut self, from: NodeId, to: NodeId, mss: u32) -> u64 {
        const HEADERS: u64 = 40;
        self.ensure_routes();
        let (fwd, back) = (self.path(from, to), self.path(to, from));
        let rate = fwd
            .iter()
            .chain(&back)
            .map(|d| self.dirs[d.index()].params.rate_bps)
            .min()
            .unwrap_or(0);
        let leg = |dirs: &[DirId], bytes: u64| {
            dirs.iter().fold(Dur::ZERO, |t, d| {
                let p = &self.dirs[d.index()].params;
                t + p.delay + Dur::serialization(bytes, p.rate_bps)
            })
        };
        let rtt = leg(&fwd, mss as u64 + HEADERS) + leg(&back, HEADERS);
        (rate as u128 * rtt.0 as u128 / 8 / 1_000_000_000) as u64
    }

    /// Whether `to` is reachable from `from` over the configured links (a mobile host
    /// through its home agent one way and any base station the other).
    pub fn reachable(&mut self, from: NodeId, to: NodeId) -> bool {
        self.ensure_routes();
        let (from, to) = self.mobile_endpoints(from, to);
        from == to || self.routes().next_hop(from.0, to.0).is_some()
    }

    /// The first hop from `from` toward `to`, if any.
    pub fn first_hop(&mut self, from: NodeId, to: NodeId) -> Option<DirId> {
        self.ensure_routes();
        self.next_hop_to(from, node_addr(to))
    }

    pub(super) fn next_hop_to(&self, node: NodeId, dst: Addr) -> Option<DirId> {
        match self.mobile_uplink(node) {
            Some(uplink) => uplink,
            None => node_of(dst).and_then(|d| self.routes().next_hop(node.0, d.0)),
        }
    }

    /// A packet reaches `node`: its machines see it arrive; then it is delivered to them
    /// if it is addressed here, or forwarded. `size` is the packet's, if the caller knows
    /// it (a link direction measured it on entry).
    pub(super) fn receive(&mut self, node: NodeId, k: FrameKey, mut size: Option<u32>) {
        let n = node.index();
        if !self.nodes[n].arrival.is_empty() {
            size = None; // a machine may change the packet
            self.frame_power = self.frame_power_at(node);
            for i in 0..self.nodes[n].arrival.len() {
                let m = self.nodes[n].arrival[i];
                if self.show(m, At::Arrival, k) == Verdict::Consume {
                    self.frames.discard(k);
                    return self.frame_power = None;
                }
            }
            self.frame_power = None;
        }
        let p = &mut self.frames[k].packet;
        if p.ip.dst == node_addr(node) {
            return self.deliver_local(node, k, None);
        }
        // RFC 1812 section 5.3.1: a router decrements the TTL and discards a packet
        // whose TTL reaches zero.
        p.ip.ttl = p.ip.ttl.saturating_sub(1);
        if p.ip.ttl == 0 {
            return self.dropped_at(node, k, NodeDrop::Ttl);
        }
        self.forward(node, k, size);
    }

    /// A packet addressed to `node` goes to its machines (but the one that sent it).
    fn deliver_local(&mut self, node: NodeId, k: FrameKey, from: Option<MachineId>) {
        for i in 0..self.nodes[node.index()].local.len() {
            let m = self.nodes[node.index()].local[i];
            if Some(m) != from && self.show(m, At::Local, k) == Verdict::Consume {
                self.frames.discard(k);
                return;
            }
        }
        self.dropped_at(node, k, NodeDrop::Unclaimed);
    }

    /// Routes a packet from `node` (it arrived there, or a machine there sent it).
    #[inline]
    pub(super) fn forward(&mut self, node: NodeId, k: FrameKey, size: Option<u32>) {
        let hop = self.next_hop_to(node, self.frames[k].packet.ip.dst);
        self.leave_by(node, hop, k, size);
    }

    /// The packet leaves `node` by `hop`, or is dropped there for want of a route.
    #[inline]
    fn leave_by(&mut self, node: NodeId, hop: Option<DirId>, k: FrameKey, size: Option<u32>) {
        let Some(d) = hop else {
            return self.dropped_at(node, k, NodeDrop::NoRoute);
        };
        self.depart(d, k, size);
    }

    /// `node` drops the packet itself (no link lost it): counted against the node for the
    /// summary's `nodes`, and traced.
    #[cold]
    fn dropped_at(&mut self, node: NodeId, k: FrameKey, why: NodeDrop) {
        if self.trace.is_some() {
            let flow = self.flow_of(&self.frames[k].packet);
            self.record(TraceEvent::Dropped(why), node, flow, None);
        }
        self.frames.discard(k);
        let n = &mut self.nodes[node.index()];
        match why {
            NodeDrop::Ttl => n.ttl_drops += 1,
            NodeDrop::NoRoute => n.no_route_drops += 1,
            NodeDrop::Unclaimed => n.unclaimed_drops += 1,
        }
    }

    /// A machine's packet leaves its node as it asked, by `hop` (`hop_of` its `via`);
    /// `size` is its size if the caller measured it.
    #[inline]
    pub(super) fn send_from(
        &mut self,
        m: MachineId,
        via: Via,
        k: FrameKey,
        hop: Option<DirId>,
        size: Option<u32>,
    ) {
        let node = self.machines[m.index()].node;
        if via == Via::Route && self.frames[k].packet.ip.dst == node_addr(node) {
            // between layers of one node (APOHN's booster answers its TCP)
            return self.deliver_local(node, k, Some(m));
        }
        self.leave_by(node, hop, k, size);
    }

    /// The link direction `via` a packet would leave by (for a machine's flow control).
    pub(super) fn hop_of(&self, m: MachineId, via: Via, dst: Addr) -> Option<DirId> {
        let slot = &self.machines[m.index()];
        match via {
            Via::Route => self.next_hop_to(slot.node, dst),
            Via::Iface(i) => Some(slot.ifaces[i.index()]),
        }
    }

    /// The machines watching `d` see the packet; then it joins the queue.
    #[inline]
    fn depart(&mut self, d: DirId, k: FrameKey, mut size: Option<u32>) {
        for i in 0..self.departure[d.index()].len() {
            let (m, iface) = self.departure[d.index()][i];
            size = None; // a machine may change the packet
            if self.show(m, At::Departure(iface), k) == Verdict::Consume {
                self.frames.discard(k);
                return;
            }
        }
        self.send_on(d, k, size);
    }

    /// Offers a packet to link direction `d`'s queue.
    #[inline]
    fn send_on(&mut self, d: DirId, k: FrameKey, size: Option<u32>) {
        if let Some(&Some((e, side))) = self.esw_of.get(d.index()) {
            let f = self.frames.remove(k);
            return self.esw_offer(e, side, d, f);
        }
        if let Some(&Some(wd)) = self.wlan_of.get(d.index()) {
            let f = self.frames.remove(k);
            return self.wlan_offer(wd, d, f);
        }
        let now = self.q.now();
        let size = size.unwrap_or_else(|| self.frames[k].packet.size());
        match self.dirs[d.index()].enqueue(now, k, size) {
            Ok(w) => self.wake_link(d, w),
            Err(k) => {
                let f = self.frames.remove(k);
                self.lost(f, d, Loss::Queue)
            }
        }
    }

    /// Frames a link direction lost (an outage, a station gone): out of `frames`, to
    /// the trace and the oracles.
    pub(super) fn lost_keys(&mut self, keys: Vec<FrameKey>, d: DirId, why: Loss) {
        for k in keys {
            let f = self.frames.remove(k);
            self.lost(f, d, why);
        }
    }

    /// A packet was lost on link direction `d` (full queue, channel, outage): the trace
    /// and the oracle machines learn it.
    pub(super) fn lost(&mut self, f: Frame, d: DirId, why: Loss) {
        if self.trace.is_some() {
            let flow = self.flow_of(&f.packet);
            self.record(
                TraceEvent::Lost(why),
                self.dirs[d.index()].params.from,
                flow,
                Some(d),
            );
        }
        if !self.oracles.is_empty() {
            self.show_aside(f, self.oracles.len(), |s, j| (s.oracles[j], At::Lost));
        }
    }

    /// Shows a frame the network no longer carries (a lost one, a copy for a link layer's
    /// report) to `n` machines, the j-th and its hook being `who(j)`: it is in `frames`
    /// only while they see it, and they leave it as it is (their verdicts are ignored).
    pub(super) fn show_aside(
        &mut self,
        f: Frame,
        n: usize,
        who: impl Fn(&Self, usize) -> (MachineId, At),
    ) {
        let k = self.frames.insert(f);
        for j in 0..n {
            let (m, at) = who(self, j);
            self.show(m, at, k);
        }
        self.frames.discard(k);
    }
}
