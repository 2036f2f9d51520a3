//! Flows: a transfer from one node to another, carried by the nodes' hosts (TCP) or by
//! machines the scenario placed for it (the ideal protocol). A flow maps to its
//! connections through a table, filled as the client connects and the server accepts,
//! and learns its progress from its machines' events.

use super::{Ev, FlowId, MachineId, NodeId, RunError, Simulation};
use hetpath_proto::cc::Algorithm;
use hetpath_proto::host::lift_mh::SelfProtection;
use hetpath_proto::host::Listener;
use hetpath_proto::machine::Event;
use hetpath_proto::packet::EspSizes;
use hetpath_proto::tcp::{self, Connection, TcpConfig};
use hetpath_proto::{ConnId, Endpoint, Time};
use rustc_hash::FxHashMap as HashMap;
use std::net::Ipv4Addr;

pub use hetpath_proto::host::EPHEMERAL_PORTS;

/// A TCP flow's stack settings.
#[derive(Debug, Clone)]
pub struct TcpFlow {
    pub tcp: TcpConfig,
    pub cc: Algorithm,
    /// IPsec ESP in transport mode between the two hosts: nothing on the path can read
    /// the TCP header (see `hetpath_proto::esp`).
    pub ipsec: Option<Ipsec>,
}

/// A flow's IPsec settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipsec {
    pub sizes: EspSizes,
    /// The receiving end runs MH-LIFT (seed 001).
    pub lift: bool,
    /// MH-LIFT's self-protection (section III), if on.
    pub lift_protection: Option<SelfProtection>,
}

/// What carries a flow.
// One per flow, read when it starts: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum FlowTransport {
    /// A connection between the two nodes' hosts.
    Tcp(TcpFlow),
    /// Machines placed for it, which report on `ConnId(0)` (`bind_stream`).
    Machines,
}

/// A flow as configured.
#[derive(Debug, Clone)]
pub struct FlowParams {
    pub name: String,
    /// The name reported for what carries it (a controller, or "ideal").
    pub label: String,
    pub from: NodeId,
    pub to: NodeId,
    pub start: Time,
    /// Bytes to transfer; `None` is a bulk transfer that never ends.
    pub size: Option<u64>,
    pub transport: FlowTransport,
}

pub(super) struct Flow {
    pub(super) params: FlowParams,
    /// The client's and the server's connections, once they exist.
    pub(super) client: Option<(MachineId, ConnId)>,
    pub(super) server: Option<(MachineId, ConnId)>,
    pub(super) started: bool,
    /// In-order bytes the receiving application has, as its machine last reported
    /// (a TCP flow's are read from its server connection: see `delivered`).
    pub(super) delivered: u64,
    pub(super) completion: Option<Time>,
    pub(super) sender_done: Option<Time>,
    /// Segments the oracle reported lost (machine-carried flows).
    pub(super) lost: u64,
    pub(super) aborted: bool,
    /// A web flow's browser and connections (`web.rs`).
    pub(super) web: Option<Box<super::web::WebFlow>>,
}

impl Simulation {
    pub fn add_flow(&mut self, p: FlowParams) -> FlowId {
        let f = FlowId(self.flows.len() as u32);
        if let FlowTransport::Tcp(_) = &p.transport {
            // Both hosts exist from the start, so that they hear their nodes' signals.
            self.host_on(p.from);
            self.host_on(p.to);
        }
        self.q.schedule(p.start, Ev::FlowStart(f));
        self.flows.push(Flow {
            params: p,
            client: None,
            server: None,
            started: false,
            delivered: 0,
            completion: None,
            sender_done: None,
            lost: 0,
            aborted: false,
            web: None,
        });
        f
    }

    /// Machine `m` reports on flow `f` as its stream `ConnId(0)`.
    pub fn bind_stream(&mut self, f: FlowId, m: MachineId) {
        self.map_stream(m, ConnId(0), f);
    }

    pub(super) fn map_stream(&mut self, m: MachineId, c: ConnId, f: FlowId) {
        if self.streams.len() <= m.index() {
            self.streams.resize_with(m.index() + 1, Vec::new);
        }
        let conns = &mut self.streams[m.index()];
        if conns.len() <= c.index() {
            conns.resize(c.index() + 1, None);
        }
        conns[c.index()] = Some(f);
    }

    pub(super) fn start_flow(&mut self, f: FlowId) {
        self.flows[f.index()].started = true;
        if self.flows[f.index()].web.is_some() {
            return self.start_web(f);
        }
        let p = self.flows[f.index()].params.clone();
        let FlowTransport::Tcp(t) = &p.transport else {
            return; // its machines start on their own deadlines
        };
        let (client, server) = (self.host_on(p.from), self.host_on(p.to));
        // The receiving side runs the same controller; it only sends ACKs here. ILC-TCP
        // freezes the mobile sender (seed 002 section 3.1), so the server never asks a State
        // Manager: its node may have none to answer.
        let server_tcp = TcpConfig { ilc: None, ..t.tcp };
        let listener = Listener::new(server_tcp, t.cc.clone());
        let Some(port) = self.host_mut(server).listen_any(listener) else {
            self.flows[f.index()].aborted = true;
            let at = self.q.now().as_secs_f64();
            let name = &self.nodes[p.to.index()].name;
            return self.fail(RunError::PortsExhausted(format!(
                "at {at:.9} s, node '{name}' has a listener on every port from 5000 up: no port \
                 is left for another kind of server connection"
            )));
        };
        let remote = Endpoint {
            addr: super::node_addr(p.to),
            port,
        };
        let esp = t.ipsec.map(|ips| {
            let out = self.next_spi();
            let back = self.next_spi();
            let s = self.host_mut(server);
            s.set_esp_sizes(ips.sizes);
            if ips.lift {
                s.enable_lift(ips.lift_protection);
            }
            s.add_sa(out, back);
            self.host_mut(client).set_esp_sizes(ips.sizes);
            (out, back)
        });
        let host = self.host_mut(client);
        let Some(c) = host.connect(remote, t.tcp, &t.cc, esp) else {
            self.flows[f.index()].aborted = true;
            return self.no_free_port(p.from, remote);
        };
        match p.size {
            Some(n) => {
                host.write(c, n);
                host.close(c);
            }
            None => host.write(c, u64::MAX / 4),
        }
        let local = host.connection(c).local();
        if self.trace.is_some() {
            self.trace_flows.insert((local, remote), f);
            self.trace_flows.insert((remote, local), f);
        }
        self.map_stream(client, c, f);
        self.expected.insert((p.to, remote, local), f);
        self.flows[f.index()].client = Some((client, c));
        self.drive(client);
    }

    /// Node `from` has every ephemeral port in use toward `remote` at once: the run
    /// cannot open the connection, so it ends here with that as its failure.
    pub(super) fn no_free_port(&mut self, from: NodeId, remote: Endpoint) {
        let at = self.q.now();
        self.fail(RunError::PortsExhausted(format!(
            "at {:.9} s, node '{}' has all {EPHEMERAL_PORTS} ephemeral ports in use toward {}:{} \
             (connections open or in TIME-WAIT); a host opens at most that many to one \
             endpoint at once (shorten tcp.time_wait, or spread the flows over more nodes)",
            at.as_secs_f64(),
            self.nodes[from.index()].name,
            Ipv4Addr::from(remote.addr.0),
            remote.port,
        )));
    }

    /// The run cannot go on: it ends now, and `failure` says why (the first reason).
    pub(super) fn fail(&mut self, why: RunError) {
        self.failure.get_or_insert(why);
        self.end = self.q.now();
    }

    /// Flows that can never all be open: more than `EPHEMERAL_PORTS` bulk TCP transfers
    /// (no size: they never close) from one node to the same server port. Found before
    /// the run, as (client node, server node, how many); the loader refuses them.
    pub fn port_overcommit(&self) -> Option<(NodeId, NodeId, usize)> {
        let bulk = |f: &&Flow| f.params.size.is_none() && f.web.is_none();
        let mut per_pair: HashMap<(NodeId, NodeId), Vec<&Flow>> = HashMap::default();
        for f in self.flows.iter().filter(bulk) {
            if let FlowTransport::Tcp(_) = f.params.transport {
                per_pair
                    .entry((f.params.from, f.params.to))
                    .or_default()
                    .push(f);
            }
        }
        let mut pairs: Vec<_> = per_pair
            .into_iter()
            .filter(|(_, v)| v.len() > EPHEMERAL_PORTS)
            .collect();
        pairs.sort_by_key(|(k, _)| *k);
        for ((from, to), flows) in pairs {
            // Flows with equal listeners share the server's port (`Host::listen_any`).
            let mut ports: Vec<(Listener, usize)> = Vec::new();
            for f in flows {
                let FlowTransport::Tcp(t) = &f.params.transport else {
                    continue;
                };
                let l = Listener::new(TcpConfig { ilc: None, ..t.tcp }, t.cc.clone());
                match ports.iter().position(|(x, _)| *x == l) {
                    Some(k) => ports[k].1 += 1,
                    None if ports.len() < 64 => ports.push((l, 1)),
                    // Too many kinds to count at load: the run itself fails naming the
                    // host if its ports run out (`no_free_port`).
                    None => continue,
                }
            }
            if let Some(&(_, n)) = ports.iter().find(|(_, n)| *n > EPHEMERAL_PORTS) {
                return Some((from, to, n));
            }
        }
        None
    }

    /// SPIs for the flows' security associations, from 0x1000 up (RFC 4303 section 2.1:
    /// 1 to 255 are reserved).
    pub(super) fn next_spi(&mut self) -> u32 {
        self.spis += 1;
        0x1000 + self.spis
    }

    /// What machine `m` reported, for the flow it concerns.
    pub(super) fn on_flow_event(&mut self, m: MachineId, ev: Event) {
        let now = self.q.now();
        let conn = match ev {
            Event::Accepted {
                conn,
                local,
                remote,
            } => {
                let node = self.machines[m.index()].node;
                if let Some(f) = self.expected.remove(&(node, local, remote)) {
                    self.trace_event(m, &ev, Some(f));
                    self.map_stream(m, conn, f);
                    if self.flows[f.index()].web.is_some() {
                        return self.web_accepted(f, m, conn, remote);
                    }
                    self.flows[f.index()].server = Some((m, conn));
                    if let Some(n) = self.flows[f.index()].params.size {
                        self.host_mut(m).expect(conn, n);
                    }
                }
                return;
            }
            Event::Delivered { conn, .. }
            | Event::Acked { conn, .. }
            | Event::Lost { conn }
            | Event::Tcp { conn, .. } => conn,
            Event::Signal(_) => return,
        };
        let flow = self
            .streams
            .get(m.index())
            .and_then(|c| c.get(conn.index()).copied().flatten());
        self.trace_event(m, &ev, flow);
        let Some(f) = flow else {
            return; // a PEP leg's event, say: for the trace only
        };
        if self.flows[f.index()].web.is_some() {
            return self.web_event(f, m, ev);
        }
        let flow = &mut self.flows[f.index()];
        let size = flow.params.size;
        match ev {
            Event::Delivered { bytes, .. } => {
                flow.delivered = bytes;
                if flow.completion.is_none() && size.is_some_and(|n| bytes >= n) {
                    flow.completion = Some(now);
                }
            }
            Event::Acked { bytes, .. }
                if flow.sender_done.is_none() && size.is_some_and(|n| bytes >= n) =>
            {
                flow.sender_done = Some(now);
            }
            Event::Lost { .. } => flow.lost += 1,
            Event::Tcp {
                event: tcp::Event::Aborted,
                ..
            } => flow.aborted = true,
            _ => {}
        }
    }

    /// The first flow from index `from` on that is not done, or the number of flows if
    /// all are. Done: it has a size and has completed (the receiver has every byte and the
    /// sender knows it) or aborted; a web flow, its pages. A flow done stays done, so the
    /// run loop starts each search where the last one stopped, rather than going over
    /// every flow after every event.
    pub(super) fn first_unfinished(&self, from: usize) -> usize {
        let done = |f: &Flow| {
            if let Some(w) = &f.web {
                return w.done() || f.aborted;
            }
            let done = f.completion.is_some() && f.sender_done.is_some();
            f.params.size.is_some() && (done || f.aborted)
        };
        let rest = self.flows.get(from..).unwrap_or_default();
        from + rest.iter().take_while(|f| done(f)).count()
    }

    /// In-order bytes the flow's receiving application has.
    pub(super) fn delivered(&self, f: &Flow) -> u64 {
        match f.server {
            Some((m, c)) => self.machines[m.index()]
                .host()
                .map_or(0, |h| h.connection(c).bytes_received()),
            None => f.delivered,
        }
    }

    /// The flow's sending connection, if it has one.
    pub(super) fn client_conn(&self, f: &Flow) -> Option<&Connection> {
        let (m, c) = f.client?;
        self.machines[m.index()].host().map(|h| h.connection(c))
    }
}
