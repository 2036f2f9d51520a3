//! The simulation: nodes, link directions, the machines placed on nodes, and the event
//! loop that moves packets between them and wakes them when their timers say so.
//! Protocol logic stays in `hetpath-proto`; nothing here names a concrete machine but the
//! node's `Host`, the stack it drives flows through.
//!
//! - `mod.rs`: the state, how a scenario builds it, and the event loop;
//! - `routes.rs`: first hops per destination, computed on first use and kept;
//! - `forwarding.rs`: a packet's way through a node (hooks, delivery, queues);
//! - `machines.rs`: driving any machine through the contract (`hetpath_proto::machine`);
//! - `conn_timers.rs`: a host's per-connection timer entries, kept few in the queue;
//! - `esw.rs`: link directions that run over an ESW satellite link (`crate::esw_link`);
//! - `wlan.rs`: links between an access point and its stations over an 802.11 medium
//!   (`crate::wlan`);
//! - `flows.rs`: flows on hosts and machines, and what their events say of them;
//! - `legs.rs`: a flow's legs (the connections that carry it, split PEPs included);
//! - `mobility.rs`: the mobile host's association and its wireless links;
//! - `report.rs`: time series samples and the summary;
//! - `tracing.rs`: what the event trace records of machines' events and lost packets;
//! - `watchdog.rs`: the run stopped, naming what spins, when simulated time stops
//!   advancing;
//! - `web.rs`: web flows: a browser's pages over the hosts' TCP connections;
//! - `web_sctp.rs`: web flows over the streams of one SCTP association (reached through
//!   the machine contract's `MessagePort`);
//! - `detach.rs`: a link taken out whole, with its outage schedule, for a driver on its
//!   own clock (the live emulator);
//! - `invariants.rs`: the run-time checks (`hetpath run --check`).

mod conn_timers;
mod detach;
mod esw;
mod flows;
mod forwarding;
mod invariants;
mod legs;
mod machines;
mod mobility;
mod report;
mod routes;
mod tracing;
mod watchdog;
mod web;
mod web_sctp;
mod wlan;

pub use crate::ids::{DirId, FlowId, LinkId, MachineId, NodeId};
pub use detach::{DetachError, DetachedDir, StateChange};
pub use flows::{FlowParams, FlowTransport, Ipsec, TcpFlow, EPHEMERAL_PORTS};
pub use forwarding::node_addr;
pub use invariants::Violation;

use crate::engine::{Bits, FrontHeap, Queue};
use crate::link::{Frames, LinkDir, Wakeups};
use crate::mobility::MobileHost;
use crate::results::Series;
use crate::trace::{Loss, Trace, TraceEvent};
use hetpath_proto::{Dur, Time};
use machines::Slot;
use std::collections::HashMap;
pub use watchdog::{RunError, Stall, DEFAULT_MAX_EVENTS_PER_INSTANT};

/// What the event queue holds.
#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A link direction finished serialising (stale if its generation moved on).
    TxDone(DirId, u64),
    /// The head of a link direction's wire reaches the far node.
    Arrive(DirId, u64),
    /// A machine's deadline.
    Timer(MachineId),
    /// The deadline of one connection of a host.
    ConnTimer(MachineId, hetpath_proto::ConnId),
    FlowStart(FlowId),
    LinkState(DirId, bool),
    Sample,
    /// The mobile host's association may change now.
    Reassociate,
    /// A frame unit of side 0 (a -> b) or 1 of an ESW link (stale if it moved).
    EswSlot(u32, u8),
    /// The head of an ESW link side's wire arrives.
    EswArrive(u32, u8),
    /// What a WLAN's medium asked for: a transmission starts or ends.
    Wlan(u32),
    /// A web flow's think time ends.
    WebWake(FlowId),
}

/// The tag of each `Ev` variant in its packed form (`Bits`).
mod tag {
    pub const TX_DONE: u8 = 0;
    pub const ARRIVE: u8 = 1;
    pub const TIMER: u8 = 2;
    pub const CONN_TIMER: u8 = 3;
    pub const FLOW_START: u8 = 4;
    pub const LINK_STATE: u8 = 5;
    pub const SAMPLE: u8 = 6;
    pub const REASSOCIATE: u8 = 7;
    pub const ESW_SLOT: u8 = 8;
    pub const ESW_ARRIVE: u8 = 9;
    pub const WLAN: u8 = 10;
    pub const WEB_WAKE: u8 = 11;
}

/// An event packed for the queue (`engine::FrontHeap`): the tag in bits 0..8, a 32-bit
/// handle in 8..40, a second field (a connection, a side, up or down) in 40..72, or a
/// link's generation in 64..128 (the variants that carry one have no second field).
impl Bits for Ev {
    #[inline(always)]
    fn to_bits(self) -> u128 {
        let pack = |t: u8, a: u32, b: u32| t as u128 | (a as u128) << 8 | (b as u128) << 40;
        let with_gen =
            |t: u8, d: DirId, gen: u64| t as u128 | (d.0 as u128) << 8 | (gen as u128) << 64;
        match self {
            Ev::TxDone(d, gen) => with_gen(tag::TX_DONE, d, gen),
            Ev::Arrive(d, gen) => with_gen(tag::ARRIVE, d, gen),
            Ev::Timer(m) => pack(tag::TIMER, m.0, 0),
            Ev::ConnTimer(m, c) => pack(tag::CONN_TIMER, m.0, c.0),
            Ev::FlowStart(f) => pack(tag::FLOW_START, f.0, 0),
            Ev::LinkState(d, up) => pack(tag::LINK_STATE, d.0, up as u32),
            Ev::Sample => pack(tag::SAMPLE, 0, 0),
            Ev::Reassociate => pack(tag::REASSOCIATE, 0, 0),
            Ev::EswSlot(e, side) => pack(tag::ESW_SLOT, e, side as u32),
            Ev::EswArrive(e, side) => pack(tag::ESW_ARRIVE, e, side as u32),
            Ev::Wlan(w) => pack(tag::WLAN, w, 0),
            Ev::WebWake(f) => pack(tag::WEB_WAKE, f.0, 0),
        }
    }
    #[inline(always)]
    fn from_bits(bits: u128) -> Ev {
        let a = (bits >> 8) as u32;
        let b = (bits >> 40) as u32;
        let gen = (bits >> 64) as u64;
        match bits as u8 {
            tag::TX_DONE => Ev::TxDone(DirId(a), gen),
            tag::ARRIVE => Ev::Arrive(DirId(a), gen),
            tag::TIMER => Ev::Timer(MachineId(a)),
            tag::CONN_TIMER => Ev::ConnTimer(MachineId(a), hetpath_proto::ConnId(b)),
            tag::FLOW_START => Ev::FlowStart(FlowId(a)),
            tag::LINK_STATE => Ev::LinkState(DirId(a), b != 0),
            tag::SAMPLE => Ev::Sample,
            tag::REASSOCIATE => Ev::Reassociate,
            tag::ESW_SLOT => Ev::EswSlot(a, b as u8),
            tag::ESW_ARRIVE => Ev::EswArrive(a, b as u8),
            tag::WLAN => Ev::Wlan(a),
            tag::WEB_WAKE => Ev::WebWake(FlowId(a)),
            t => unreachable!("no event has tag {t}"),
        }
    }
    /// A link's transmission end or arrival: on a fast link it is usually scheduled
    /// before everything pending and popped next. The other kinds seldom are, and an ESW
    /// link's slots run in place of being queued when they are next (`esw.rs`).
    #[inline(always)]
    fn may_lead(&self) -> bool {
        matches!(self, Ev::TxDone(..) | Ev::Arrive(..))
    }
}

/// The simulation's event queue.
type EventQueue = Queue<Ev, FrontHeap<Ev>>;

/// Progress callback: called with (now, end) about every 1% of simulated time and every
/// `PROGRESS_EVENTS` events; returning `false` stops the run early.
pub type Progress<'a> = &'a mut dyn FnMut(Time, Time) -> bool;

/// Events between two progress calls however slowly simulated time moves: a 1 ns timer
/// makes 1% of a run billions of events, and the driver must get a chance to stop it.
pub const PROGRESS_EVENTS: u32 = 4096;

struct Node {
    name: String,
    /// Its host, once a flow starts or ends here.
    host: Option<MachineId>,
    /// Its machines in placement order, and those that see arrivals and local packets.
    machines: Vec<MachineId>,
    arrival: Vec<MachineId>,
    local: Vec<MachineId>,
    /// Packets dropped here, not by a link: their TTL ran out, no route led on, or they
    /// were addressed here and no machine took them.
    ttl_drops: u64,
    no_route_drops: u64,
    unclaimed_drops: u64,
}

pub struct Simulation {
    pub name: String,
    pub seed: u64,
    end: Time,
    sample_interval: Dur,
    q: EventQueue,
    nodes: Vec<Node>,
    dirs: Vec<LinkDir>,
    links: Vec<[DirId; 2]>,
    /// Every frame in a link direction or crossing a node without machines; taken out
    /// when a machine or a link model that keeps its own frames (ESW, WLAN) gets it.
    frames: Frames,
    /// ESW links, and per link direction the ESW link and side it runs over, if any.
    esw: Vec<esw::EswSlot>,
    esw_of: Vec<Option<(u32, u8)>>,
    /// WLANs, and per link direction the WLAN stations it runs between, if any.
    wlans: Vec<wlan::Wlan>,
    wlan_of: Vec<Option<wlan::WlanDir>>,
    machines: Vec<Slot>,
    /// Per link direction: the machines watching it, with its index among their interfaces.
    departure: Vec<Vec<(MachineId, hetpath_proto::IfaceId)>>,
    /// Per link direction: the machines told what its link layer did with each packet
    /// (`At::LinkAcked`, `At::LinkDropped`).
    link_status: Vec<Vec<(MachineId, hetpath_proto::IfaceId)>>,
    /// Per link direction: machines to wake when it next finishes a transmission (or, for
    /// `wake_on`, changes state). Entries may be stale; the slots say who still waits.
    waiters: Vec<Vec<MachineId>>,
    /// Machines shown every lost packet (`At::Lost`).
    oracles: Vec<MachineId>,
    flows: Vec<flows::Flow>,
    /// Which flow each machine's connections or streams carry, by machine and `ConnId`.
    streams: Vec<Vec<Option<FlowId>>>,
    /// Events drained from a machine, reused from drive to drive.
    scratch: Vec<hetpath_proto::machine::Event>,
    /// `wake_waiters`' buffer, reused (a host at a full queue waits once per packet).
    woken: Vec<MachineId>,
    /// The buffer of a machine view's full queues and watched interfaces, reused.
    waits: Vec<(DirId, bool)>,
    /// Server-side connections not yet accepted: (node, local, remote) -> flow.
    expected: HashMap<(NodeId, hetpath_proto::Endpoint, hetpath_proto::Endpoint), FlowId>,
    series: Series,
    next_uid: u64,
    /// SPIs handed out so far.
    spis: u32,
    /// Built on first use; reset when a node, link or the mobile host is added.
    routes: std::cell::OnceCell<routes::Routes>,
    started: bool,
    /// End as soon as every flow has completed or aborted (see `ScenarioSection`).
    pub stop_when_done: bool,
    /// Record the time series (off for sweeps, which need only the summary).
    pub sampling: bool,
    /// Events that may run without simulated time advancing (`watchdog.rs`).
    pub max_events_per_instant: u64,
    /// Why the run stopped, if it failed (`run` returned false).
    failure: Option<RunError>,
    /// The mobile host, if the scenario has one (see `mobility.rs`).
    mobile: Option<MobileHost>,
    /// The received power of the frame being shown to the mobile host's machines.
    frame_power: Option<f64>,
    /// The event trace, when asked for (`enable_trace`), and the flows by their
    /// connections' (source, destination), to name the flow of a lost packet.
    trace: Option<Box<Trace>>,
    trace_flows: HashMap<(hetpath_proto::Endpoint, hetpath_proto::Endpoint), FlowId>,
    /// Every outage scheduled, (direction, down, up), for `detach_link`.
    outages: Vec<(DirId, Time, Time)>,
    /// (node, local port, remote) its host must not open a connection between
    /// (`reserve_port`).
    reserved_ports: Vec<(NodeId, u16, hetpath_proto::Endpoint)>,
    /// Check the run's invariants when it ends (`hetpath run --check`; `checked`).
    pub check: bool,
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
            dirs: Vec::new(),
            links: Vec::new(),
            frames: Frames::default(),
            esw: Vec::new(),
            esw_of: Vec::new(),
            wlans: Vec::new(),
            wlan_of: Vec::new(),
            machines: Vec::new(),
            departure: Vec::new(),
            link_status: Vec::new(),
            waiters: Vec::new(),
            oracles: Vec::new(),
            flows: Vec::new(),
            streams: Vec::new(),
            scratch: Vec::new(),
            woken: Vec::new(),
            waits: Vec::new(),
            expected: HashMap::new(),
            series: Series::default(),
            next_uid: 0,
            spis: 0,
            routes: std::cell::OnceCell::new(),
            started: false,
            stop_when_done: false,
            sampling: true,
            max_events_per_instant: DEFAULT_MAX_EVENTS_PER_INSTANT,
            failure: None,
            mobile: None,
            frame_power: None,
            trace: None,
            trace_flows: HashMap::new(),
            outages: Vec::new(),
            reserved_ports: Vec::new(),
            check: false,
        }
    }

    /// Keep an event trace of the run (`trace`); call before it starts.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Box::default());
        for slot in &mut self.machines {
            slot.machine.detailed_events(true);
        }
    }

    /// The event trace, if it was enabled.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// Records `ev` if the trace is on.
    #[inline]
    fn record(&mut self, ev: TraceEvent, node: NodeId, flow: Option<FlowId>, link: Option<DirId>) {
        if let Some(t) = &mut self.trace {
            t.push(self.q.now(), ev, (node, flow, link), None);
        }
    }

    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.nodes.push(Node {
            name: name.into(),
            host: None,
            machines: Vec::new(),
            arrival: Vec::new(),
            local: Vec::new(),
            ttl_drops: 0,
            unclaimed_drops: 0,
            no_route_drops: 0,
        });
        self.routes.take();
        NodeId(self.nodes.len() as u32 - 1)
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n.index()].name
    }

    /// A link direction in a message: `link "sat" gw -> terminal`.
    fn dir_label(&self, d: DirId) -> String {
        let p = &self.dirs[d.index()].params;
        format!(
            "link {:?} {} -> {}",
            p.name,
            self.node_name(p.from),
            self.node_name(p.to)
        )
    }

    /// Adds a link as its two directions (each `from` -> `to` in its own parameters).
    pub fn add_link(&mut self, ab: LinkDir, ba: LinkDir) -> LinkId {
        let pair = [self.add_dir(ab), self.add_dir(ba)];
        self.links.push(pair);
        LinkId(self.links.len() as u32 - 1)
    }

    fn add_dir(&mut self, dir: LinkDir) -> DirId {
        self.dirs.push(dir);
        self.departure.push(Vec::new());
        self.link_status.push(Vec::new());
        self.waiters.push(Vec::new());
        self.routes.take();
        DirId(self.dirs.len() as u32 - 1)
    }

    /// The two directions of a link, a -> b first.
    pub fn link_dirs(&self, l: LinkId) -> [DirId; 2] {
        self.links[l.index()]
    }

    pub fn dir(&self, d: DirId) -> &LinkDir {
        &self.dirs[d.index()]
    }

    pub fn dir_mut(&mut self, d: DirId) -> &mut LinkDir {
        &mut self.dirs[d.index()]
    }

    /// Every link direction, in the order added.
    pub fn dirs(&self) -> impl Iterator<Item = (DirId, &LinkDir)> {
        self.dirs
            .iter()
            .enumerate()
            .map(|(i, d)| (DirId(i as u32), d))
    }

    /// Schedules a link direction to go down at `down` and up at `up`.
    pub fn add_outage(&mut self, d: DirId, down: Time, up: Time) {
        self.q.schedule(down, Ev::LinkState(d, false));
        self.q.schedule(up, Ev::LinkState(d, true));
        self.outages.push((d, down, up));
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        self.ensure_routes();
        self.start_mobility();
        if self.sampling {
            self.q.schedule(Time::ZERO, Ev::Sample);
        }
    }

    /// Runs until the end time. `progress` may stop it early, the run fails if simulated
    /// time stops advancing (`max_events_per_instant`), or something else cannot go on
    /// (all ephemeral ports in use); either way `false` is returned, and `failure` says
    /// why it failed.
    pub fn run(&mut self, progress: Progress) -> bool {
        self.start();
        let step = Dur((self.end.0 / 100).max(1));
        let mut next_report = Time::ZERO + step;
        let mut left = PROGRESS_EVENTS;
        // The watchdog: the instant last seen at a progress check, and the events run
        // when it was first seen (fewer events than ran there: never a false alarm).
        let mut instant = (Time::ZERO, self.q.executed());
        // Flows before this one are done (`first_unfinished`).
        let mut unfinished = 0;
        while let Some((now, ev)) = self.q.pop_until(self.end) {
            self.dispatch(now, ev);
            if self.stop_when_done {
                unfinished = self.first_unfinished(unfinished);
                if unfinished == self.flows.len() {
                    progress(self.end, self.end);
                    return self.failure.is_none();
                }
            }
            left -= 1;
            if now >= next_report || left == 0 {
                left = PROGRESS_EVENTS;
                if now >= next_report {
                    next_report = now + step;
                }
                if now > instant.0 {
                    instant = (now, self.q.executed());
                } else if self.q.executed() - instant.1 > self.max_events_per_instant {
                    let stall = self.stalled(now, self.max_events_per_instant);
                    self.failure.get_or_insert(stall);
                    return false;
                }
                if !progress(now, self.end) {
                    return false;
                }
            }
        }
        self.q.advance_to(self.end);
        progress(self.end, self.end);
        self.failure.is_none()
    }

    fn dispatch(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::TxDone(d, gen) => {
                if gen != self.dirs[d.index()].generation {
                    return; // the packet was lost when the link went down
                }
                let done = self.dirs[d.index()].on_tx_done(now);
                self.wake_link(d, done.wake);
                if let Some(k) = done.lost {
                    let f = self.frames.remove(k);
                    self.lost(f, d, Loss::Channel);
                }
                self.wake_waiters(d, true);
            }
            Ev::Arrive(d, gen) => {
                if gen != self.dirs[d.index()].generation {
                    return;
                }
                let (k, next) = self.dirs[d.index()].on_arrival_sized(now);
                if let Some(t) = next {
                    self.q.schedule(t, Ev::Arrive(d, gen));
                }
                if let Some((k, size)) = k {
                    self.receive(self.dirs[d.index()].params.to, k, Some(size));
                }
            }
            Ev::Timer(m) => self.machine_timer(m, now),
            Ev::ConnTimer(m, c) => self.conn_timer(m, c, now),
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::LinkState(d, up) => {
                let node = self.dirs[d.index()].params.from;
                let state = if up {
                    TraceEvent::LinkUp
                } else {
                    TraceEvent::LinkDown
                };
                self.record(state, node, None, Some(d));
                let (w, lost) = self.dirs[d.index()].set_up(now, up);
                self.wake_link(d, w);
                self.lost_keys(lost, d, Loss::Outage);
                self.wake_waiters(d, false);
            }
            Ev::Sample => {
                self.sample(now);
                let next = now + self.sample_interval;
                if next > now {
                    // saturated at Time::MAX: rescheduling would sample there forever
                    self.q.schedule(next, Ev::Sample);
                }
            }
            Ev::Reassociate => self.reassociate(now),
            Ev::EswSlot(e, side) => self.esw_slot(e, side),
            Ev::EswArrive(e, side) => self.esw_arrive(e, side),
            Ev::Wlan(w) => self.wlan_event(w),
            Ev::WebWake(f) => self.web_wake(f),
        }
    }

    /// Queues what link direction `d` asked for, and shows its capture tap the packet
    /// whose transmission started.
    fn wake_link(&mut self, d: DirId, w: Wakeups) {
        let dir = &mut self.dirs[d.index()];
        if let (Some(tap), Some(k)) = (&mut dir.capture, w.started) {
            tap(self.q.now(), &self.frames[k]);
        }
        let gen = dir.generation;
        if let Some(t) = w.tx_done {
            self.q.schedule(t, Ev::TxDone(d, gen));
        }
        if let Some(t) = w.arrival {
            self.q.schedule(t, Ev::Arrive(d, gen));
        }
    }

    pub fn now(&self) -> Time {
        self.q.now()
    }
    /// Why the run failed, if it did (`run` then returned false).
    pub fn failure(&self) -> Option<&RunError> {
        self.failure.as_ref()
    }
    pub fn events_executed(&self) -> u64 {
        self.q.executed()
    }
    pub fn series(&self) -> &Series {
        &self.series
    }
}
