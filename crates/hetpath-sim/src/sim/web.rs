//! Web flows on hosts: the browser of `traffic::web` on the flow's `to` node fetches
//! pages from a server on its `from` node, each channel a TCP connection the browser
//! opens (so here `to` connects and `from` listens, the reverse of a bulk flow).
//!
//! A request is `request` bytes the browser writes; the reply is exactly the object's
//! size, written by the server once the whole request is in (`Host::expect` on its
//! connection), and the object has arrived once the browser's connection has received
//! every reply byte so far in order (`Host::expect` again). Without persistence the
//! server closes after its reply and the browser once the reply is in (HTTP/1.0).
//!
//! IPsec: each connection has its own pair of SAs, as seed 001 maps "an end-to-end
//! connection" to a downlink and an uplink SA (section IV); MH-LIFT runs on the
//! browser's host, which opens the connections (`Host::connect` gives an ESP connection
//! its `MhLift` as `accept` does; its SYN goes without a LIFT header, and the Setup
//! precedes the handshake's ACK).
//!
//! Over SCTP the channels are the streams of one association instead (`web_sctp.rs`);
//! the browser and the page records are the same.

use super::flows::FlowTransport;
use super::web_sctp::PortWeb;
use super::{Ev, FlowId, MachineId, Simulation};
use crate::results::PageResult;
use crate::rng::Rng;
use crate::traffic::http::Pages;
use crate::traffic::web::{Action, Browser, PageDone, WebConfig};
use hetpath_proto::host::Listener;
use hetpath_proto::machine::Event;
use hetpath_proto::tcp::{self, SenderStats, TcpConfig};
use hetpath_proto::{ConnId, Endpoint};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// One channel's connection and what is in flight on it.
struct Chan {
    client: ConnId,
    server: Option<ConnId>,
    /// Request bytes the browser has written on it, and reply bytes it expects, in all.
    requested: u64,
    replies: u64,
    /// The reply the server owes for the request in flight.
    owed: Option<u64>,
}

/// A web flow's state in the simulation.
pub(super) struct WebFlow {
    pub(super) browser: Browser,
    /// The server's listening endpoint and the two hosts, once started.
    listen: Option<Endpoint>,
    /// The server's and the browser's machines: hosts over TCP, endpoints over SCTP.
    pub(super) hosts: Option<(MachineId, MachineId)>,
    /// Over a message transport (SCTP): what the server owes (`web_sctp.rs`).
    pub(super) port: Option<PortWeb>,
    chans: BTreeMap<u32, Chan>,
    /// Which channel a connection of the browser's or the server's host carries.
    by_client: HashMap<ConnId, u32>,
    by_server: HashMap<ConnId, u32>,
    /// The browser's port of a connection not yet accepted, and its channel.
    accepting: HashMap<u16, u32>,
    server_conns: Vec<ConnId>,
    /// Server-side timeouts and browser-node bytes sent when the page started.
    base: (u64, u64),
    pub(super) pages: Vec<PageResult>,
}

impl WebFlow {
    /// Pages completed.
    pub(super) fn done(&self) -> bool {
        self.browser.done()
    }
}

impl Simulation {
    /// Makes flow `f` (a TCP flow without a size) a web flow: `pages` drawn from `rng`.
    pub fn set_web(&mut self, f: FlowId, cfg: WebConfig, pages: Pages, rng: Rng) {
        let flow = &mut self.flows[f.index()];
        debug_assert!(flow.params.size.is_none());
        flow.web = Some(Box::new(WebFlow {
            browser: Browser::new(cfg, pages, rng),
            listen: None,
            hosts: None,
            port: None,
            chans: BTreeMap::new(),
            by_client: HashMap::default(),
            by_server: HashMap::default(),
            accepting: HashMap::default(),
            server_conns: Vec::new(),
            base: (0, 0),
            pages: Vec::new(),
        }));
    }

    pub(super) fn web(&mut self, f: FlowId) -> &mut WebFlow {
        self.flows[f.index()].web.as_mut().expect("a web flow")
    }

    /// The server's and the browser's machines.
    pub(super) fn web_machines(&self, f: FlowId) -> (MachineId, MachineId) {
        let w = self.flows[f.index()].web.as_ref().expect("a web flow");
        w.hosts.expect("started")
    }

    fn web_over_port(&self, f: FlowId) -> bool {
        self.flows[f.index()]
            .web
            .as_ref()
            .is_some_and(|w| w.port.is_some())
    }

    /// The flow starts: the server listens, the browser fetches its first page.
    pub(super) fn start_web(&mut self, f: FlowId) {
        if self.web_over_port(f) {
            // The endpoints are placed; the browser's starts the association now.
            let mut out = Vec::new();
            let now = self.q.now();
            self.web(f).browser.start(now, &mut out);
            return self.web_apply(f, out);
        }
        let p = self.flows[f.index()].params.clone();
        let FlowTransport::Tcp(t) = &p.transport else {
            unreachable!("web flows run over TCP (checked by the loader)");
        };
        let (server, browser) = (self.host_on(p.from), self.host_on(p.to));
        // The server sends the data: it keeps the stack's ILC-TCP setting (its State
        // Manager sits on `from`); the browser only requests.
        let listener = Listener::new(t.tcp, t.cc.clone());
        let port = self
            .host_mut(server)
            .listen_any(listener)
            .expect("a free port on the server");
        if let Some(ips) = t.ipsec {
            self.host_mut(server).set_esp_sizes(ips.sizes);
            let b = self.host_mut(browser);
            b.set_esp_sizes(ips.sizes);
            if ips.lift {
                b.enable_lift(ips.lift_protection);
            }
        }
        let now = self.q.now();
        let w = self.web(f);
        w.listen = Some(Endpoint {
            addr: super::node_addr(p.from),
            port,
        });
        w.hosts = Some((server, browser));
        let mut out = Vec::new();
        w.browser.start(now, &mut out);
        self.web_apply(f, out);
    }

    /// The think time of flow `f` may be over.
    pub(super) fn web_wake(&mut self, f: FlowId) {
        let mut out = Vec::new();
        let now = self.q.now();
        self.web(f).browser.wake(now, &mut out);
        self.web_apply(f, out);
    }

    /// The server host `m` accepted `conn` from `remote` for flow `f`.
    pub(super) fn web_accepted(&mut self, f: FlowId, m: MachineId, conn: ConnId, remote: Endpoint) {
        let w = self.web(f);
        let Some(k) = w.accepting.remove(&remote.port) else {
            return;
        };
        w.by_server.insert(conn, k);
        w.server_conns.push(conn);
        let chan = w.chans.get_mut(&k).expect("a channel waits for it");
        chan.server = Some(conn);
        let requested = chan.requested;
        self.flows[f.index()].client = Some((m, conn));
        self.host_mut(m).expect(conn, requested);
    }

    /// What host `m` reported on a connection of web flow `f`.
    pub(super) fn web_event(&mut self, f: FlowId, m: MachineId, ev: Event) {
        if self.web_over_port(f) {
            return self.port_event(f, m, ev);
        }
        let (server, _) = self.web(f).hosts.expect("started");
        match ev {
            Event::Delivered { conn, .. } if m == server => {
                let w = self.web(f);
                let Some(k) = w.by_server.get(&conn).copied() else {
                    return;
                };
                let persistent = w.browser.config().persistent;
                let Some(reply) = w.chans.get_mut(&k).and_then(|c| c.owed.take()) else {
                    return;
                };
                let h = self.host_mut(server);
                h.write(conn, reply);
                if !persistent {
                    h.close(conn);
                }
                self.drive(server);
            }
            Event::Delivered { conn, .. } => {
                let now = self.q.now();
                let w = self.web(f);
                let Some(k) = w.by_client.get(&conn).copied() else {
                    return;
                };
                if !w.chans.contains_key(&k) {
                    return;
                }
                let mut out = Vec::new();
                w.browser.on_complete(now, k, &mut out);
                self.web_apply(f, out);
            }
            Event::Tcp {
                event: tcp::Event::Aborted,
                ..
            } => self.flows[f.index()].aborted = true,
            _ => {}
        }
    }

    /// Carries out what the browser asked.
    pub(super) fn web_apply(&mut self, f: FlowId, actions: Vec<Action>) {
        let (server, browser) = self.web(f).hosts.expect("started");
        let port = self.web_over_port(f);
        for a in actions {
            match a {
                Action::PageStart { .. } => {
                    let base = (self.web_timeouts(f), self.web_up_bytes(f));
                    self.web(f).base = base;
                }
                Action::Fetch {
                    chan,
                    request,
                    reply,
                } if port => self.port_fetch(f, chan, request, reply),
                Action::Fetch {
                    chan,
                    request,
                    reply,
                } => self.web_fetch(f, chan, request, reply),
                // The association serves the whole flow: nothing to close.
                Action::Close { .. } if port => {}
                Action::Close { chan } => {
                    if let Some(c) = self.web(f).chans.remove(&chan) {
                        self.host_mut(browser).close(c.client);
                    }
                }
                Action::WakeAt(t) => self.q.schedule(t, Ev::WebWake(f)),
                Action::PageDone(d) => self.web_page_done(f, d),
            }
        }
        self.drive(browser);
        self.drive(server);
    }

    fn web_fetch(&mut self, f: FlowId, k: u32, request: u64, reply: u64) {
        let (server, browser) = self.web(f).hosts.expect("started");
        if !self.web(f).chans.contains_key(&k) {
            self.web_open(f, k);
        }
        let chan = self.web(f).chans.get_mut(&k).expect("opened");
        chan.requested += request;
        chan.replies += reply;
        chan.owed = Some(reply);
        let (client, srv) = (chan.client, chan.server);
        let (requested, replies) = (chan.requested, chan.replies);
        let b = self.host_mut(browser);
        b.write(client, request);
        b.expect(client, replies);
        if let Some(c) = srv {
            self.host_mut(server).expect(c, requested);
        }
    }

    /// A new connection for channel `k`, opened by the browser.
    fn web_open(&mut self, f: FlowId, k: u32) {
        let p = &self.flows[f.index()].params;
        let FlowTransport::Tcp(t) = &p.transport else {
            unreachable!("checked in start_web");
        };
        // ILC-TCP freezes the data sender; the browser never asks a State Manager.
        let tcp = TcpConfig { ilc: None, ..t.tcp };
        let (cc, ipsec, server_node) = (t.cc.clone(), t.ipsec, p.from);
        let (server, browser) = self.web(f).hosts.expect("started");
        let remote = self.web(f).listen.expect("started");
        let esp = ipsec.map(|_| {
            let (up, down) = (self.next_spi(), self.next_spi());
            self.host_mut(server).add_sa(up, down);
            (up, down)
        });
        let b = self.host_mut(browser);
        let Some(c) = b.connect(remote, tcp, &cc, esp) else {
            let node = self.flows[f.index()].params.to;
            self.flows[f.index()].aborted = true;
            return self.no_free_port(node, remote);
        };
        let b = self.host_mut(browser);
        let local = b.connection(c).local();
        if self.trace.is_some() {
            self.trace_flows.insert((local, remote), f);
            self.trace_flows.insert((remote, local), f);
        }
        self.map_stream(browser, c, f);
        self.expected.insert((server_node, remote, local), f);
        let w = self.web(f);
        w.by_client.insert(c, k);
        w.accepting.insert(local.port, k);
        w.chans.insert(
            k,
            Chan {
                client: c,
                server: None,
                requested: 0,
                replies: 0,
                owed: None,
            },
        );
    }

    fn web_page_done(&mut self, f: FlowId, d: PageDone) {
        let (timeouts, up) = (self.web_timeouts(f), self.web_up_bytes(f));
        let name = self.flows[f.index()].params.name.clone();
        let flow = &mut self.flows[f.index()];
        flow.delivered += d.bytes;
        let w = flow.web.as_mut().expect("a web flow");
        w.pages.push(PageResult {
            flow: name,
            page: d.page,
            start_s: d.start.as_secs_f64(),
            time_s: d.end.since(d.start).as_secs_f64(),
            objects: d.objects,
            bytes: d.bytes,
            timeouts: timeouts - w.base.0,
            up_bytes: up - w.base.1,
        });
        if w.done() {
            flow.completion = Some(d.end);
        }
    }

    /// Retransmission timeouts of the flow's server-side connections so far (over SCTP,
    /// the server endpoint's T3-rtx expirations).
    fn web_timeouts(&mut self, f: FlowId) -> u64 {
        if self.web_over_port(f) {
            return self.port_timeouts(f);
        }
        self.web_stats(&self.flows[f.index()])
            .map_or(0, |s| s.timeouts)
    }

    /// The sum of the counters of a web flow's server-side connections (its data
    /// senders); `None` for another flow, and over SCTP (reported as an SCTP flow).
    pub(super) fn web_stats(&self, flow: &super::flows::Flow) -> Option<SenderStats> {
        let w = flow.web.as_ref().filter(|w| w.port.is_none())?;
        let mut sum = SenderStats::default();
        if let Some((server, _)) = w.hosts {
            let h = self.machines[server.index()].host().expect("a host");
            for &c in &w.server_conns {
                let s = h.connection(c).stats();
                sum.segments_sent += s.segments_sent;
                sum.bytes_sent += s.bytes_sent;
                sum.retransmissions += s.retransmissions;
                sum.fast_retransmits += s.fast_retransmits;
                sum.timeouts += s.timeouts;
                sum.window_probes += s.window_probes;
                sum.freezes += s.freezes;
            }
        }
        Some(sum)
    }

    /// IP bytes the browser's node has transmitted on all its link directions.
    fn web_up_bytes(&self, f: FlowId) -> u64 {
        let node = self.flows[f.index()].params.to;
        self.dirs
            .iter()
            .filter(|d| d.params.from == node)
            .map(|d| d.stats.tx_bytes)
            .sum()
    }
}
