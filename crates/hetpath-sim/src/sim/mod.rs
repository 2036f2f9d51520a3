//! The simulation: nodes with static routes, link directions, TCP flows, and the event
//! loop that drives them. Protocol logic stays in `hetpath-proto`; this file only moves
//! packets between machines and wakes them when their timers say so.

mod agents;
mod mobile;

use crate::bus::NodeBus;
use crate::engine::EventQueue;
use crate::ideal::{IdealReceiver, IdealSender};
use crate::link::{LinkDir, Wakeups};
use crate::mobility::MobileHost;
use crate::results::{FlowResult, LinkResult, Series, Summary};
pub use crate::scenario::spec::Transport;
use hetpath_proto::agent::{Collaboration, StateManager};
use hetpath_proto::cc;
use hetpath_proto::crosslayer::{Advice, Signal};
use hetpath_proto::esp::SecurityAssociation;
use hetpath_proto::packet::{Addr, Body, TcpFlags, TcpSegment};
use hetpath_proto::tcp::{Connection, Endpoint, Event, State, TcpConfig};
use hetpath_proto::{Dur, Packet, Time};
use std::collections::HashMap;

/// Node `i` has address 10.0.x.y with x.y = i + 1.
const ADDR_BASE: u32 = 0x0a00_0000;
const CLIENT_PORT_BASE: u16 = 40_000;
const SERVER_PORT_BASE: u16 = 5_000;

pub fn node_addr(i: usize) -> Addr {
    Addr(ADDR_BASE + i as u32 + 1)
}

fn node_of(a: Addr) -> Option<usize> {
    a.0.checked_sub(ADDR_BASE + 1).map(|i| i as usize)
}

/// A TCP flow as configured.
#[derive(Debug, Clone)]
pub struct FlowParams {
    pub name: String,
    pub cc: String,
    pub transport: Transport,
    pub from: usize,
    pub to: usize,
    pub start: Time,
    /// Bytes to transfer; `None` is a bulk transfer that never ends.
    pub size: Option<u64>,
    pub tcp: TcpConfig,
    /// ILC-TCP: the sender asks a State Manager with this collaboration on timeouts.
    pub ilc: Option<Collaboration>,
    /// IPsec ESP in transport mode between the two end hosts: nothing on the path can read
    /// the TCP header (see `hetpath_proto::esp`).
    pub ipsec: bool,
}

struct Node {
    name: String,
    /// First-hop link direction toward each destination node.
    routes: Vec<Option<usize>>,
    /// (local port, remote address, remote port) -> connection index.
    conns: HashMap<(u16, Addr, u16), usize>,
    /// Listening port -> flow index.
    listeners: HashMap<u16, usize>,
}

struct Conn {
    conn: Connection,
    node: usize,
    flow: usize,
    is_client: bool,
    /// The earliest timer entry pending in the event queue for this connection.
    timer: Option<Time>,
    /// ILC-TCP's State Manager beside this connection, hearing its node's bus.
    sm: Option<StateManager>,
    /// The SA that seals what this end sends, with its ESP sequence number.
    esp: Option<(SecurityAssociation, u32)>,
}

struct Flow {
    params: FlowParams,
    client: Option<usize>,
    server: Option<usize>,
    /// Set for `transport = "ideal"` once the flow has started.
    ideal: Option<Ideal>,
    completion: Option<Time>,
    /// When the sender had its last byte acknowledged (by a PEP, if one splits the flow).
    sender_done: Option<Time>,
    aborted: bool,
}

/// An ideal-protocol flow in flight (see `ideal`).
struct Ideal {
    sender: IdealSender,
    receiver: IdealReceiver,
    /// The first-hop link direction, which the sender keeps busy.
    first_hop: usize,
    /// The uid of the packet it is waiting to see leave the transmitter.
    in_tx: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    TxDone(usize, u64),
    Arrive(usize, u64),
    Timer(usize),
    FlowStart(usize),
    LinkState(usize, bool),
    Sample,
    /// The mobile host's association may change now.
    Reassociate,
    /// The mobility agent at this station advertises.
    Advertise(usize),
    /// An in-network agent's timer.
    AgentTimer(usize),
}

/// Progress callback: called with (now, end) about every 1% of simulated time; returning
/// `false` stops the run early.
pub type Progress<'a> = &'a mut dyn FnMut(Time, Time) -> bool;

pub struct Simulation {
    pub name: String,
    pub seed: u64,
    end: Time,
    sample_interval: Dur,
    q: EventQueue<Ev>,
    nodes: Vec<Node>,
    links: Vec<LinkDir>,
    flows: Vec<Flow>,
    conns: Vec<Conn>,
    series: Series,
    next_uid: u64,
    no_route_drops: u64,
    started: bool,
    /// Indices of the flows with `transport = "ideal"` (usually none).
    ideal_flows: Vec<usize>,
    /// End as soon as every flow has completed or aborted (see `ScenarioSection`).
    pub stop_when_done: bool,
    /// Record the time series (off for sweeps, which need only the summary).
    pub sampling: bool,
    /// The mobile host, if the scenario has one (see `mobile.rs`).
    mobile: Option<MobileHost>,
    /// Each node's cross-layer bus.
    buses: Vec<NodeBus>,
    /// In-network agents (see `agents.rs`), and which of them each node's arrivals and
    /// each link direction's departures pass through.
    agents: Vec<agents::AgentSlot>,
    arrival_agents: Vec<Vec<usize>>,
    departure_agents: Vec<Vec<usize>>,
}

impl Simulation {
    pub fn new(name: &str, seed: u64, duration: Dur, sample_interval: Dur) -> Simulation {
        Simulation {
            name: name.to_string(),
            seed,
            end: Time::ZERO + duration,
            sample_interval,
            q: EventQueue::default(),
            nodes: Vec::new(),
            links: Vec::new(),
            flows: Vec::new(),
            conns: Vec::new(),
            series: Series::default(),
            next_uid: 0,
            no_route_drops: 0,
            started: false,
            ideal_flows: Vec::new(),
            stop_when_done: false,
            sampling: true,
            mobile: None,
            buses: Vec::new(),
            agents: Vec::new(),
            arrival_agents: Vec::new(),
            departure_agents: Vec::new(),
        }
    }

    pub fn add_node(&mut self, name: &str) -> usize {
        self.buses.push(NodeBus::default());
        self.nodes.push(Node {
            name: name.into(),
            routes: Vec::new(),
            conns: HashMap::new(),
            listeners: HashMap::new(),
        });
        self.nodes.len() - 1
    }

    pub fn node_name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    /// Adds one link direction; returns its index.
    pub fn add_link_dir(&mut self, dir: LinkDir) -> usize {
        self.links.push(dir);
        self.links.len() - 1
    }

    pub fn link_mut(&mut self, i: usize) -> &mut LinkDir {
        &mut self.links[i]
    }

    pub fn links(&self) -> &[LinkDir] {
        &self.links
    }

    /// Schedules a link direction to go down at `down` and up at `up`.
    pub fn add_outage(&mut self, link: usize, down: Time, up: Time) {
        self.q.schedule(down, Ev::LinkState(link, false));
        self.q.schedule(up, Ev::LinkState(link, true));
    }

    pub fn add_flow(&mut self, p: FlowParams) -> usize {
        let i = self.flows.len();
        let port = SERVER_PORT_BASE + i as u16;
        self.nodes[p.to].listeners.insert(port, i);
        self.q.schedule(p.start, Ev::FlowStart(i));
        if p.transport == Transport::Ideal {
            self.ideal_flows.push(i);
        }
        self.flows.push(Flow {
            params: p,
            client: None,
            server: None,
            ideal: None,
            completion: None,
            sender_done: None,
            aborted: false,
        });
        i
    }

    /// Static shortest-path routes (hop count; ties go to the link declared first).
    fn compute_routes(&mut self) {
        let n = self.nodes.len();
        for src in 0..n {
            let mut first_hop: Vec<Option<usize>> = vec![None; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut frontier = std::collections::VecDeque::from([src]);
            while let Some(u) = frontier.pop_front() {
                for (li, l) in self.links.iter().enumerate() {
                    let v = l.params.to;
                    if l.params.from == u && !seen[v] && !self.is_wireless(li) {
                        seen[v] = true;
                        first_hop[v] = if u == src { Some(li) } else { first_hop[u] };
                        frontier.push_back(v);
                    }
                }
            }
            self.nodes[src].routes = first_hop;
        }
        self.route_to_home_agent();
    }

    /// The link directions a packet from `from` to `to` crosses, in order.
    fn path(&self, from: usize, to: usize) -> Vec<usize> {
        let mut links = Vec::new();
        let mut at = from;
        while at != to {
            let Some(l) = self.nodes[at].routes[to] else {
                break;
            };
            links.push(l);
            at = self.links[l].params.to;
        }
        links
    }

    /// Bandwidth-delay product in bytes between two nodes for segments of `mss` payload
    /// bytes: the slowest nominal link rate on the round trip times the round-trip time
    /// an empty path gives one such segment and its ACK (propagation plus serialisation
    /// of a full data packet forward and a 40-byte ACK back, at nominal rates). The
    /// serialisation matters on slow links: at 16 kbit/s a 1500-byte packet takes 0.75 s.
    /// The routes must have been computed (see `reachable`).
    pub fn path_bdp(&self, from: usize, to: usize, mss: u32) -> u64 {
        const HEADERS: u64 = 40;
        let (fwd, back) = (self.path(from, to), self.path(to, from));
        let rate = fwd
            .iter()
            .chain(&back)
            .map(|&l| self.links[l].params.rate_bps)
            .min()
            .unwrap_or(0);
        let leg = |links: &[usize], bytes: u64| {
            links.iter().fold(Dur::ZERO, |d, &l| {
                let p = &self.links[l].params;
                d + p.delay + Dur::serialization(bytes, p.rate_bps)
            })
        };
        let rtt = leg(&fwd, mss as u64 + HEADERS) + leg(&back, HEADERS);
        (rate as u128 * rtt.0 as u128 / 8 / 1_000_000_000) as u64
    }

    /// Whether `to` is reachable from `from` over the configured links (a mobile host
    /// through its home agent one way and any base station the other).
    pub fn reachable(&mut self, from: usize, to: usize) -> bool {
        self.compute_routes();
        let (from, to) = self.mobile_endpoints(from, to);
        from == to || self.nodes[from].routes[to].is_some()
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        self.compute_routes();
        self.start_mobility();
        if self.sampling {
            self.q.schedule(Time::ZERO, Ev::Sample);
        }
    }

    /// Runs until the end time. `progress` may stop it early (then `false` is returned).
    pub fn run(&mut self, progress: Progress) -> bool {
        self.start();
        let step = Dur((self.end.0 / 100).max(1));
        let mut next_report = Time::ZERO + step;
        while let Some((now, ev)) = self.q.pop_until(self.end) {
            self.dispatch(now, ev);
            if self.stop_when_done && self.all_done() {
                progress(self.end, self.end);
                return true;
            }
            if now >= next_report {
                next_report = now + step;
                if !progress(now, self.end) {
                    return false;
                }
            }
        }
        self.q.advance_to(self.end);
        progress(self.end, self.end);
        true
    }

    /// Every flow has a size and has completed (the receiver has every byte and the
    /// sender knows it) or aborted.
    fn all_done(&self) -> bool {
        self.flows.iter().all(|f| {
            let done = f.completion.is_some() && f.sender_done.is_some();
            f.params.size.is_some() && (done || f.aborted)
        })
    }

    fn dispatch(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::TxDone(l, gen) => {
                if gen != self.links[l].generation {
                    return; // the packet was lost when the link went down
                }
                let done = self.links[l].on_tx_done(now);
                self.wake_link(l, done.wake);
                self.unblock_agents(l);
                if let Some(p) = done.lost {
                    self.lost(&p);
                }
                self.ideal_tx_done(l, done.uid);
            }
            Ev::Arrive(l, gen) => {
                if gen != self.links[l].generation {
                    return;
                }
                let (p, next) = self.links[l].on_arrival(now);
                if let Some(t) = next {
                    self.q.schedule(t, Ev::Arrive(l, gen));
                }
                if let Some(p) = p {
                    self.receive(self.links[l].params.to, p);
                }
            }
            Ev::Timer(c) => {
                if self.conns[c].timer != Some(now) {
                    return; // superseded by an earlier entry
                }
                self.conns[c].timer = None;
                self.conns[c].conn.handle_timeout(now);
                self.touch(c);
            }
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::LinkState(l, up) => {
                let (w, lost) = self.links[l].set_up(now, up);
                self.wake_link(l, w);
                for p in &lost {
                    self.lost(p);
                }
                self.ideal_tx_done(l, None);
            }
            Ev::Sample => {
                self.sample(now);
                self.q.schedule(now + self.sample_interval, Ev::Sample);
            }
            Ev::Reassociate => self.reassociate(now),
            Ev::Advertise(s) => self.advertise(now, s),
            Ev::AgentTimer(a) => self.agent_timer(a, now),
        }
    }

    fn wake_link(&mut self, l: usize, w: Wakeups) {
        let gen = self.links[l].generation;
        if let Some(t) = w.tx_done {
            self.q.schedule(t, Ev::TxDone(l, gen));
        }
        if let Some(t) = w.arrival {
            self.q.schedule(t, Ev::Arrive(l, gen));
        }
    }

    /// A packet reaches `node`: deliver it locally or forward it.
    fn receive(&mut self, node: usize, p: Packet) {
        let Some(p) = self.mobile_intercept(node, p) else {
            return;
        };
        let Some(mut p) = self.on_arrival_hooks(node, p) else {
            return;
        };
        if p.ip.dst == node_addr(node) {
            self.deliver(node, p);
            return;
        }
        p.ip.ttl = p.ip.ttl.saturating_sub(1);
        if p.ip.ttl == 0 {
            self.no_route_drops += 1;
            return;
        }
        self.forward(node, p);
    }

    /// The link direction `node` sends `p` on, if it has a route.
    fn next_hop(&self, node: usize, p: &Packet) -> Option<usize> {
        self.next_hop_to(node, p.ip.dst)
    }

    fn next_hop_to(&self, node: usize, dst: Addr) -> Option<usize> {
        match self.mobile_uplink(node) {
            Some(uplink) => uplink,
            None => node_of(dst).and_then(|d| self.nodes[node].routes.get(d).copied().flatten()),
        }
    }

    fn forward(&mut self, node: usize, p: Packet) {
        let Some(l) = self.next_hop(node, &p) else {
            self.no_route_drops += 1;
            return;
        };
        if let Some(p) = self.on_departure_hooks(l, p) {
            self.send_on(l, p);
        }
    }

    /// Offers a packet to link direction `l`.
    fn send_on(&mut self, l: usize, p: Packet) {
        let now = self.q.now();
        match self.links[l].enqueue(now, p) {
            Ok(w) => self.wake_link(l, w),
            Err(p) => self.lost(&p),
        }
    }

    /// A packet was lost (channel, full queue or outage): the oracle of an ideal flow
    /// learns it at once.
    fn lost(&mut self, p: &Packet) {
        let Some(seg) = p.as_tcp() else { return };
        let Some(f) = seg.src_port.checked_sub(CLIENT_PORT_BASE) else {
            return;
        };
        if let Some(ideal) = self
            .flows
            .get_mut(f as usize)
            .and_then(|f| f.ideal.as_mut())
        {
            ideal.sender.handle_loss(seg.seq);
            if ideal.in_tx == Some(p.uid) {
                ideal.in_tx = None;
            }
        }
    }

    /// A transmission ended on link `l` (`uid` left the transmitter): ideal flows whose
    /// first hop it is send their next segment.
    fn ideal_tx_done(&mut self, l: usize, uid: Option<u64>) {
        for k in 0..self.ideal_flows.len() {
            let f = self.ideal_flows[k];
            let Some(ideal) = self.flows[f].ideal.as_mut() else {
                continue;
            };
            if ideal.first_hop != l {
                continue;
            }
            if uid.is_some() && ideal.in_tx == uid {
                ideal.in_tx = None;
            }
            self.pump_ideal(f);
        }
    }

    /// Hands the next segment of an ideal flow to its first hop, unless one is pending.
    fn pump_ideal(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let Some(ideal) = flow.ideal.as_mut() else {
            return;
        };
        if ideal.in_tx.is_some() || !self.links[ideal.first_hop].is_up() {
            return;
        }
        let Some((seq, len)) = ideal.sender.poll_segment() else {
            return;
        };
        let seg = TcpSegment {
            src_port: CLIENT_PORT_BASE + f as u16,
            dst_port: SERVER_PORT_BASE + f as u16,
            seq,
            flags: TcpFlags::ACK,
            len,
            ..Default::default()
        };
        let mut p = Packet::tcp(node_addr(flow.params.from), node_addr(flow.params.to), seg);
        p.uid = self.next_uid;
        self.next_uid += 1;
        ideal.in_tx = Some(p.uid);
        let from = flow.params.from;
        self.forward(from, p);
    }

    fn deliver(&mut self, node: usize, mut p: Packet) {
        if let Body::Esp(esp) = p.body {
            // Only the flow's two hosts hold its SAs.
            let Some(seg) = self
                .security_association(node, esp.spi)
                .and_then(|sa| sa.open(esp))
            else {
                return;
            };
            p.body = Body::Tcp(seg);
        }
        let Body::Tcp(seg) = &p.body else { return };
        let now = self.q.now();
        let key = (seg.dst_port, p.ip.src, seg.src_port);
        if let Some(&c) = self.nodes[node].conns.get(&key) {
            self.conns[c].conn.handle_segment(now, seg);
            self.touch(c);
            return;
        }
        let Some(&f) = self.nodes[node].listeners.get(&seg.dst_port) else {
            return;
        };
        let flow = &mut self.flows[f];
        if let Some(ideal) = flow.ideal.as_mut() {
            ideal.receiver.handle_segment(seg.seq, seg.len);
            if flow.completion.is_none() && ideal.receiver.complete() {
                flow.completion = Some(now);
                flow.sender_done = Some(now);
            }
            return;
        }
        let is_syn = seg.flags.contains(TcpFlags::SYN) && !seg.flags.contains(TcpFlags::ACK);
        if !is_syn || self.flows[f].server.is_some() {
            return;
        }
        let params = &self.flows[f].params;
        let local = Endpoint {
            addr: node_addr(node),
            port: seg.dst_port,
        };
        let remote = Endpoint {
            addr: p.ip.src,
            port: seg.src_port,
        };
        // The receiving side runs the same controller; it only sends ACKs here.
        let cc =
            cc::by_name(&params.cc, params.tcp.cc_config()).expect("validated controller name");
        let conn = Connection::accept(params.tcp, cc, local, remote, seg);
        let c = self.register(conn, node, f, false, None);
        self.flows[f].server = Some(c);
        self.touch(c);
    }

    /// The SA with `spi` if `node` is one of its endpoints: flow f's client seals with
    /// SPI 0x1000 + 2f + 1, its server with 0x1000 + 2f.
    fn security_association(&self, node: usize, spi: u32) -> Option<SecurityAssociation> {
        let f = spi.checked_sub(0x1000)? as usize / 2;
        let p = &self.flows.get(f)?.params;
        (p.ipsec && (p.from == node || p.to == node)).then(|| SecurityAssociation::new(spi))
    }

    fn register(
        &mut self,
        conn: Connection,
        node: usize,
        flow: usize,
        is_client: bool,
        ilc: Option<Collaboration>,
    ) -> usize {
        let key = (conn.local().port, conn.remote().addr, conn.remote().port);
        let bus = self.buses[node];
        self.conns.push(Conn {
            conn,
            node,
            flow,
            is_client,
            timer: None,
            sm: ilc.map(|mode| StateManager::new(mode, bus.link_ok, bus.ip_ok)),
            esp: self.flows[flow].params.ipsec.then(|| {
                (
                    SecurityAssociation::new(0x1000 + 2 * flow as u32 + is_client as u32),
                    0,
                )
            }),
        });
        let c = self.conns.len() - 1;
        self.nodes[node].conns.insert(key, c);
        c
    }

    fn start_flow(&mut self, f: usize) {
        let p = &self.flows[f].params;
        if p.transport == Transport::Ideal {
            let size = p.size.expect("validated: ideal flows have a size");
            let first_hop = self.nodes[p.from].routes[p.to].expect("validated: reachable");
            let (sender, receiver) = (
                IdealSender::new(p.tcp.mss, size),
                IdealReceiver::new(p.tcp.mss, size),
            );
            self.flows[f].ideal = Some(Ideal {
                sender,
                receiver,
                first_hop,
                in_tx: None,
            });
            return self.pump_ideal(f);
        }
        let local = Endpoint {
            addr: node_addr(p.from),
            port: CLIENT_PORT_BASE + f as u16,
        };
        let remote = Endpoint {
            addr: node_addr(p.to),
            port: SERVER_PORT_BASE + f as u16,
        };
        let cc = cc::by_name(&p.cc, p.tcp.cc_config()).expect("validated controller name");
        let tcp = TcpConfig {
            ask_on_timeout: p.ilc.is_some(),
            ..p.tcp
        };
        let mut conn = Connection::connect(tcp, cc, local, remote);
        match p.size {
            Some(n) => {
                conn.write(n);
                conn.close();
            }
            None => conn.write(u64::MAX / 4),
        }
        let (from, ilc) = (p.from, p.ilc);
        let c = self.register(conn, from, f, true, ilc);
        self.flows[f].client = Some(c);
        self.touch(c);
    }

    /// After any input to a connection: send what it wants to send, react to its events,
    /// and make sure its next timer is in the queue.
    fn touch(&mut self, c: usize) {
        let now = self.q.now();
        let node = self.conns[c].node;
        while let Some(mut p) = self.conns[c].conn.poll_transmit(now) {
            if let (Some((sa, seq)), Body::Tcp(seg)) = (&mut self.conns[c].esp, &p.body) {
                *seq = seq.wrapping_add(1);
                p.body = Body::Esp(sa.seal(*seq, seg.clone()));
            }
            p.uid = self.next_uid;
            self.next_uid += 1;
            self.forward(node, p);
        }
        let mut again = false;
        while let Some(ev) = self.conns[c].conn.poll_event() {
            let f = self.conns[c].flow;
            match ev {
                Event::Aborted => self.flows[f].aborted = true,
                // The receiving application closes its side once the sender is done.
                Event::PeerFinished if !self.conns[c].is_client => {
                    self.conns[c].conn.close();
                    again = true;
                }
                // ILC-TCP: the State Manager answers at once (seed 002 Figure 6); a
                // connection without one proceeds normally.
                Event::WhatShouldTcpDo => {
                    let advice = self.conns[c]
                        .sm
                        .as_mut()
                        .map_or(Advice::ProceedNormally, |sm| sm.what_should_tcp_do());
                    self.conns[c].conn.handle_advice(now, advice);
                    again = true;
                }
                _ => {}
            }
        }
        let f = self.conns[c].flow;
        let flow = &mut self.flows[f];
        let conn = &self.conns[c].conn;
        if self.conns[c].is_client {
            if flow.sender_done.is_none()
                && flow
                    .params
                    .size
                    .is_some_and(|n| conn.sender().bytes_acked() >= n)
            {
                flow.sender_done = Some(now);
            }
        } else if flow.completion.is_none()
            && flow.params.size.is_some_and(|n| conn.bytes_received() >= n)
        {
            flow.completion = Some(now);
        }
        if again {
            return self.touch(c);
        }
        if let Some(t) = self.conns[c].conn.poll_timeout() {
            if self.conns[c].timer.is_none_or(|s| t < s) {
                self.conns[c].timer = Some(t);
                self.q.schedule(t, Ev::Timer(c));
            }
        }
    }

    /// A layer of `node` reports `signal`: the bus notes it and every State Manager on the
    /// node hears it; a RESTORE it triggers reaches its connection at once.
    fn publish(&mut self, node: usize, signal: Signal) {
        self.buses[node].note(signal);
        for c in 0..self.conns.len() {
            if self.conns[c].node != node {
                continue;
            }
            let Some(sm) = self.conns[c].sm.as_mut() else {
                continue;
            };
            sm.handle_signal(signal);
            if sm.poll_restore() {
                self.conns[c].conn.handle_restore();
                self.touch(c);
            }
        }
    }

    fn sample(&mut self, now: Time) {
        for (i, f) in self.flows.iter().enumerate() {
            if f.client.is_none() && f.ideal.is_none() {
                continue; // not started yet
            }
            let conn = f.client.map(|c| &self.conns[c].conn);
            let delivered = self.delivered(f);
            self.series.push_flow(now, i, conn, delivered);
        }
        for (i, l) in self.links.iter().enumerate() {
            self.series.push_link(now, i, l);
        }
    }

    /// Bytes the flow's receiving application has (TCP: in order; ideal: distinct).
    fn delivered(&self, f: &Flow) -> u64 {
        match (&f.ideal, f.server) {
            (Some(ideal), _) => ideal.receiver.bytes_received(),
            (None, Some(s)) => self.conns[s].conn.bytes_received(),
            (None, None) => 0,
        }
    }

    /// The window-scale shift each TCP endpoint announces, keyed by (address, port), so
    /// that captures encode window fields as the endpoints would.
    pub fn window_scales(&self) -> HashMap<(Addr, u16), u8> {
        let mut m = HashMap::new();
        for (i, f) in self.flows.iter().enumerate() {
            let shift = f.params.tcp.window_scale();
            m.insert(
                (node_addr(f.params.from), CLIENT_PORT_BASE + i as u16),
                shift,
            );
            m.insert((node_addr(f.params.to), SERVER_PORT_BASE + i as u16), shift);
        }
        m
    }

    pub fn now(&self) -> Time {
        self.q.now()
    }
    pub fn events_executed(&self) -> u64 {
        self.q.executed()
    }
    pub fn series(&self) -> &Series {
        &self.series
    }

    /// Per-flow and per-link results at the current time.
    pub fn summary(&self, wall_time_s: f64) -> Summary {
        let now = self.q.now();
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let p = &f.params;
                let client = f.client.map(|c| &self.conns[c].conn);
                let delivered = self.delivered(f);
                let end = f.completion.unwrap_or(now);
                let elapsed = end.since(p.start).as_secs_f64();
                let mut stats = client.map(|c| *c.stats()).unwrap_or_default();
                if let Some(ideal) = &f.ideal {
                    stats.retransmissions = ideal.sender.losses;
                }
                FlowResult {
                    name: p.name.clone(),
                    cc: if f.ideal.is_some() {
                        "ideal".into()
                    } else {
                        p.cc.clone()
                    },
                    from: self.nodes[p.from].name.clone(),
                    to: self.nodes[p.to].name.clone(),
                    start_s: p.start.as_secs_f64(),
                    size_bytes: p.size,
                    bytes_delivered: delivered,
                    goodput_bps: if elapsed > 0.0 {
                        delivered as f64 * 8.0 / elapsed
                    } else {
                        0.0
                    },
                    completion_s: f.completion.map(|t| t.since(p.start).as_secs_f64()),
                    sender_done_s: f.sender_done.map(|t| t.since(p.start).as_secs_f64()),
                    retransmissions: stats.retransmissions,
                    fast_retransmits: stats.fast_retransmits,
                    timeouts: stats.timeouts,
                    freezes: stats.freezes,
                    aborted: f.aborted || client.is_some_and(|c| c.state() == State::Aborted),
                }
            })
            .collect();
        let span = now.as_secs_f64();
        let links = self
            .links
            .iter()
            .map(|l| LinkResult {
                name: l.params.name.clone(),
                from: self.nodes[l.params.from].name.clone(),
                to: self.nodes[l.params.to].name.clone(),
                rate_bps: l.params.rate_bps,
                utilization: if span > 0.0 {
                    (l.stats.busy.as_secs_f64() / span).min(1.0)
                } else {
                    0.0
                },
                stats: l.stats,
            })
            .collect();
        Summary {
            scenario: self.name.clone(),
            seed: self.seed,
            sim_time_s: span,
            wall_time_s,
            events: self.q.executed(),
            flows,
            links,
        }
    }
}
