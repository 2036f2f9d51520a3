//! Driving machines through the one contract (`hetpath_proto::machine`): placing them on
//! nodes, showing them packets and signals, sending what they send, waking them on their
//! deadlines and when a queue they wait on drains. Every machine is driven the same way;
//! a node's `Host` is only told apart where flows are started on it (`flows.rs`).
//!
//! After any input, `drive` sends what the machine has to send, then handles its events
//! (signals reach the node's other machines at once), then keeps one timer entry for its
//! earliest deadline in the queue (for a host, one per connection).

use super::conn_timers::ConnTimers;
use super::{DirId, Ev, MachineId, NodeId, Simulation};
use crate::link::FrameKey;
use crate::trace::TraceEvent;
use hetpath_proto::crosslayer::Signal;
use hetpath_proto::host::Host;
use hetpath_proto::machine::{At, Event, LocalQueue, Machine, NodeView, Verdict, Via};
use hetpath_proto::{Addr, ConnId, IfaceId, Time};
use std::cell::RefCell;

/// A machine, owned by its slot. `Vacant` stands in while it is out being called.
pub(super) enum Owned {
    Host(Box<Host>),
    Other(Box<dyn Machine>),
    Vacant,
}

impl Owned {
    /// Turns the machine's detailed events on or off (the trace wants them).
    pub(super) fn detailed_events(&mut self, on: bool) {
        match self {
            Owned::Host(h) => h.detailed_events(on),
            Owned::Other(x) => x.detailed_events(on),
            Owned::Vacant => {}
        }
    }
}

pub(super) struct Slot {
    pub(super) machine: Owned,
    pub(super) node: NodeId,
    /// Its interfaces, by `IfaceId`.
    pub(super) ifaces: Vec<DirId>,
    /// The earliest timer entry pending in the event queue.
    timer: Option<Time>,
    /// A packet its node's queue had no room for, waiting in `frames` for that link.
    blocked: Option<(DirId, Via, FrameKey)>,
    /// Full queues it was told of when it last sent (woken when they drain).
    waiting: Vec<DirId>,
    /// Interfaces it asked to be woken on (`NodeView::wake_on`).
    watching: Vec<DirId>,
    /// In `drive`'s sending loop: a machine shown its own packet there (at its departure
    /// hook) is not driven again from inside, which could fill the queue the outer loop
    /// has just found room in.
    sending: bool,
    /// A host's connection timers in the event queue.
    conn_timers: ConnTimers,
}

impl Slot {
    /// A packet of its waits in `frames` for room in a queue.
    pub(super) fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    pub(super) fn host(&self) -> Option<&Host> {
        match &self.machine {
            Owned::Host(h) => Some(h),
            _ => None,
        }
    }
}

/// What a machine sees of its node while it is called.
struct View<'a> {
    sim: &'a Simulation,
    node: NodeId,
    ifaces: &'a [DirId],
    /// Queues found full (`ready`: false) and interfaces to watch (`wake_on`: true).
    waits: RefCell<Vec<(DirId, bool)>>,
}

impl View<'_> {
    fn note(&self, d: DirId, watch: bool) {
        let mut w = self.waits.borrow_mut();
        if !w.contains(&(d, watch)) {
            w.push((d, watch));
        }
    }
}

/// The view of a machine that looks at nothing (a host): every queue ready, interfaces
/// unknown.
struct BlindView;

impl NodeView for BlindView {
    fn iface(&self, _: IfaceId) -> hetpath_proto::iface::Iface {
        unreachable!("a host has no interfaces")
    }
    fn ready(&self, _: Addr) -> bool {
        true
    }
    fn wake_on(&self, _: IfaceId) {}
}

impl NodeView for View<'_> {
    fn iface(&self, i: IfaceId) -> hetpath_proto::iface::Iface {
        let id = self.ifaces[i.index()];
        let d = &self.sim.dirs[id.index()];
        hetpath_proto::iface::Iface {
            rate_bps: d.ip_rate_bps(),
            queue_pkts: self.sim.queue_len(id) as u64,
            queue_bytes: d.queue_bytes(),
            tx_bytes: d.stats.tx_bytes,
            transmitting: d.transmitting(),
            up: d.is_up(),
        }
    }

    fn ready(&self, dst: Addr) -> bool {
        match self.sim.next_hop_to(self.node, dst) {
            Some(d) if !self.sim.has_room(d, 1) => {
                self.note(d, false);
                false
            }
            _ => true,
        }
    }

    fn wake_on(&self, i: IfaceId) {
        self.note(self.ifaces[i.index()], true);
    }

    fn frame_power_w(&self) -> Option<f64> {
        self.sim.frame_power
    }
}

impl Simulation {
    /// Places a machine on `node` with interfaces `ifaces` (link directions leaving the
    /// node). Its first deadline is queued at once.
    pub fn add_machine(
        &mut self,
        node: NodeId,
        ifaces: Vec<DirId>,
        machine: Box<dyn Machine>,
    ) -> MachineId {
        self.place(node, ifaces, Owned::Other(machine))
    }

    /// The node's host, created on first use.
    pub(super) fn host_on(&mut self, node: NodeId) -> MachineId {
        if let Some(h) = self.nodes[node.index()].host {
            return h;
        }
        let mut host = Box::new(Host::new(super::node_addr(node)));
        // Each connection's deadline is its own entry in the event queue, ordered among
        // the other events by when it was set, as a per-connection timer would be.
        host.keyed_timers();
        for &(n, local, remote) in &self.reserved_ports {
            if n == node {
                host.reserve(local, remote);
            }
        }
        let h = self.place(node, Vec::new(), Owned::Host(host));
        self.nodes[node.index()].host = Some(h);
        h
    }

    /// Another machine on `node` sends TCP segments from `local` to `remote` (the ideal
    /// protocol): the node's host, now or once it exists, never opens a connection
    /// between them, which would take that machine's segments as its own.
    pub fn reserve_port(&mut self, node: NodeId, local: u16, remote: hetpath_proto::Endpoint) {
        self.reserved_ports.push((node, local, remote));
        if let Some(h) = self.nodes[node.index()].host {
            self.host_mut(h).reserve(local, remote);
        }
    }

    /// A machine in a message: "the host on node 'a'", "the split-pep on node 'r'".
    pub(super) fn machine_label(&self, m: MachineId) -> String {
        let slot = &self.machines[m.index()];
        let kind = match &slot.machine {
            Owned::Host(_) => "host",
            Owned::Other(x) => x.kind(),
            Owned::Vacant => "machine",
        };
        format!("the {kind} on node '{}'", self.node_name(slot.node))
    }

    pub(super) fn host_mut(&mut self, m: MachineId) -> &mut Host {
        match &mut self.machines[m.index()].machine {
            Owned::Host(h) => h,
            _ => unreachable!("machine {m:?} is a host"),
        }
    }

    fn place(&mut self, node: NodeId, ifaces: Vec<DirId>, mut machine: Owned) -> MachineId {
        if self.trace.is_some() {
            machine.detailed_events(true);
        }
        let m = MachineId(self.machines.len() as u32);
        let (hooks, first) = match &machine {
            Owned::Host(h) => (h.hooks(), h.poll_timeout()),
            Owned::Other(x) => (x.hooks(), x.poll_timeout()),
            Owned::Vacant => unreachable!(),
        };
        let n = &mut self.nodes[node.index()];
        n.machines.push(m);
        if hooks.arrival {
            n.arrival.push(m);
        }
        if hooks.local {
            n.local.push(m);
        }
        if hooks.departure {
            for (i, d) in ifaces.iter().enumerate() {
                debug_assert_eq!(self.dirs[d.index()].params.from, node);
                self.departure[d.index()].push((m, IfaceId(i as u32)));
            }
        }
        if hooks.link_status {
            for (i, d) in ifaces.iter().enumerate() {
                self.link_status[d.index()].push((m, IfaceId(i as u32)));
            }
        }
        if hooks.losses {
            self.oracles.push(m);
        }
        self.machines.push(Slot {
            machine,
            node,
            ifaces,
            timer: None,
            blocked: None,
            waiting: Vec::new(),
            watching: Vec::new(),
            sending: false,
            conn_timers: ConnTimers::default(),
        });
        if let Some(t) = first {
            self.arm(m, t);
        }
        m
    }

    /// Calls `f` on machine `m` with its view of the node; notes what it found full or
    /// asked to watch.
    fn call<R>(&mut self, m: MachineId, f: impl FnOnce(&mut dyn Machine, &dyn NodeView) -> R) -> R {
        if let Owned::Host(h) = &mut self.machines[m.index()].machine {
            // A host looks at nothing of its node (its packets go by the routes and meet
            // full queues as any packet does) and calls nothing back: no need to take it
            // out of its slot.
            return f(h.as_mut(), &BlindView);
        }
        let mut owned = std::mem::replace(&mut self.machines[m.index()].machine, Owned::Vacant);
        // The view's list starts from a kept buffer: a machine that asks `ready` of a full
        // queue at every poll (a split PEP) would allocate and free one per call.
        let waits = std::mem::take(&mut self.waits);
        let slot = &self.machines[m.index()];
        let view = View {
            sim: self,
            node: slot.node,
            ifaces: &slot.ifaces,
            waits: RefCell::new(waits),
        };
        let r = match &mut owned {
            Owned::Host(h) => f(h.as_mut(), &view),
            Owned::Other(x) => f(x.as_mut(), &view),
            Owned::Vacant => unreachable!("machine {m:?} called while out"),
        };
        let mut waits = view.waits.into_inner();
        self.machines[m.index()].machine = owned;
        if !waits.is_empty() {
            self.note_waits(m, &waits);
            waits.clear();
        }
        self.waits = waits;
        r
    }

    fn note_waits(&mut self, m: MachineId, waits: &[(DirId, bool)]) {
        for &(d, watch) in waits {
            let w = &mut self.waiters[d.index()];
            if !w.contains(&m) {
                w.push(m);
            }
            let slot = &mut self.machines[m.index()];
            let list = if watch {
                &mut slot.watching
            } else {
                &mut slot.waiting
            };
            if !list.contains(&d) {
                list.push(d);
            }
        }
    }

    /// Shows machine `m` the packet of frame `k` where it lies, then drives it. On
    /// `Consume` the caller takes the frame out.
    pub(super) fn show(&mut self, m: MachineId, at: At, k: FrameKey) -> Verdict {
        let now = self.q.now();
        let v = match &mut self.machines[m.index()].machine {
            // The hot paths of a host are called directly (see `call`).
            Owned::Host(h) => h.handle_packet(now, at, &mut self.frames[k].packet, &BlindView),
            _ => {
                // The view borrows the whole simulation and never looks at `frames`: the
                // store steps aside for the call (a move of its handle, not of frames).
                let mut frames = std::mem::take(&mut self.frames);
                let p = &mut frames[k].packet;
                let v = self.call(m, |x, view| x.handle_packet(now, at, p, view));
                self.frames = frames;
                v
            }
        };
        self.drive(m);
        v
    }

    /// Polls machine `m` for a packet, written into the vacant place `k` of `frames`.
    fn poll_transmit(&mut self, m: MachineId, now: Time, k: FrameKey) -> Option<Via> {
        match &mut self.machines[m.index()].machine {
            Owned::Host(h) => h.poll_transmit_into(now, &BlindView, self.frames.packet_at(k)),
            _ => {
                // As in `show`: the store steps aside while the view borrows the simulation.
                let mut frames = std::mem::take(&mut self.frames);
                let out = frames.packet_at(k);
                let via = self.call(m, |x, view| x.poll_transmit_into(now, view, out));
                self.frames = frames;
                via
            }
        }
    }

    /// A layer of `node` (or one of its machines, `from`) reports `signal`: every other
    /// machine on the node hears it at once.
    pub(super) fn publish(&mut self, node: NodeId, signal: Signal, from: Option<MachineId>) {
        self.record(TraceEvent::Signal(signal), node, None, None);
        let now = self.q.now();
        for k in 0..self.nodes[node.index()].machines.len() {
            let m = self.nodes[node.index()].machines[k];
            if Some(m) != from {
                self.call(m, |x, view| x.handle_signal(now, signal, view));
                self.drive(m);
            }
        }
    }

    pub(super) fn machine_timer(&mut self, m: MachineId, now: Time) {
        if self.machines[m.index()].timer != Some(now) {
            return; // superseded by an earlier entry
        }
        self.machines[m.index()].timer = None;
        self.call(m, |x, view| x.handle_timeout(now, view));
        self.drive(m);
    }

    /// Host `m`'s timer entry for connection `c` came up.
    pub(super) fn conn_timer(&mut self, m: MachineId, c: ConnId, now: Time) {
        let slot = &mut self.machines[m.index()];
        slot.conn_timers.fired(&mut self.q, c, Ev::ConnTimer(m, c));
        self.host_mut(m).handle_conn_timeout(now, c);
        self.drive(m);
    }

    /// Link direction `d` finished a transmission (`tx_done`) or changed state: the
    /// machines held back by its full queue, and those watching it, go on.
    pub(super) fn wake_waiters(&mut self, d: DirId, tx_done: bool) {
        if self.waiters[d.index()].is_empty() {
            return;
        }
        // Swapped with a kept buffer, so that neither list is freed and grown again.
        let mut list = std::mem::take(&mut self.woken);
        std::mem::swap(&mut list, &mut self.waiters[d.index()]);
        list.sort_unstable();
        for &m in &list {
            let s = &self.machines[m.index()];
            let held = s.blocked.as_ref().is_some_and(|b| b.0 == d) || s.waiting.contains(&d);
            if (tx_done && held) || s.watching.contains(&d) {
                self.drive(m);
            } else if held && !self.waiters[d.index()].contains(&m) {
                // A state change frees no room: it still waits for a transmission.
                self.waiters[d.index()].push(m);
            }
        }
        list.clear();
        self.woken = list;
    }

    /// After any input to a machine: send what it sends, handle its events, and keep its
    /// earliest deadline queued.
    ///
    /// What a machine sends leaves from its own node, so it meets its node's queues as
    /// a local socket does. At a full queue the machine decides (`handle_full_queue`):
    /// a packet that waits (`Wait`, `Cwr`; Linux: a packet the qdisc refuses stays in the
    /// socket and is sent later) holds the machine back, which is asked for nothing more
    /// until that queue finishes a transmission; otherwise the queue drops the packet.
    pub(super) fn drive(&mut self, m: MachineId) {
        let now = self.q.now();
        let slot = &mut self.machines[m.index()];
        if slot.sending {
            return; // the outer loop goes on polling it
        }
        slot.waiting.clear();
        slot.watching.clear();
        slot.sending = true;
        loop {
            // A frame is written into `frames` as it is polled and stays there, waiting or
            // not, until a machine is shown it or it leaves the network.
            let (via, k) = match self.machines[m.index()].blocked.take() {
                Some((_, via, k)) => (via, k),
                None => {
                    let k = self.frames.vacant();
                    let Some(via) = self.poll_transmit(m, now, k) else {
                        break;
                    };
                    self.frames.occupy(k, self.next_uid);
                    self.next_uid += 1;
                    (via, k)
                }
            };
            let p = &self.frames[k].packet;
            let hop = self.hop_of(m, via, p.ip.dst);
            let mut size = None;
            if let Some(d) = hop {
                let s = p.size();
                size = Some(s);
                if !self.has_room(d, s) && self.full_queue_holds(m, now, k) {
                    self.machines[m.index()].blocked = Some((d, via, k));
                    self.note_waits(m, &[(d, false)]);
                    break;
                }
            }
            self.send_from(m, via, k, hop, size);
        }
        self.machines[m.index()].sending = false;
        let slot = &mut self.machines[m.index()];
        if let (Owned::Host(h), Some(_)) = (&mut slot.machine, &slot.blocked) {
            h.settle_waiting();
        }
        // Drained first: handling a signal may call back into this machine.
        let mut events = std::mem::take(&mut self.scratch);
        self.call(m, |x, _| {
            events.extend(std::iter::from_fn(|| x.poll_event()))
        });
        for ev in events.drain(..) {
            match ev {
                Event::Signal(s) => {
                    let node = self.machines[m.index()].node;
                    self.publish(node, s, Some(m));
                }
                other => self.on_flow_event(m, other),
            }
        }
        self.scratch = events;
        let slot = &mut self.machines[m.index()];
        if let Owned::Host(h) = &mut slot.machine {
            let held = slot.blocked.is_some();
            while let Some((c, t)) = h.poll_armed() {
                if held && t <= now {
                    // As for any machine below: a connection's due work while its host
                    // is held at a full queue is sending (the ACK its delayed-ACK timer
                    // asked for), and that queue's next transmission wakes the host. An
                    // entry queued at `now` would fire, be armed again by
                    // `settle_waiting`, and fire again without end at this instant. It
                    // is taken here instead, so that the connection's later deadlines
                    // are armed anew once it has sent.
                    h.handle_conn_timeout(t, c);
                    continue;
                }
                slot.conn_timers.arm(&mut self.q, c, t, Ev::ConnTimer(m, c));
            }
            return;
        }
        let deadline = self.call(m, |x, _| x.poll_timeout());
        if let Some(t) = deadline {
            let s = &self.machines[m.index()];
            if t <= now && (s.blocked.is_some() || !s.waiting.is_empty()) {
                // Due work is sending (an ACK, a retransmission) into a full queue: that
                // queue's next transmission wakes the machine; a timer now would spin.
                return;
            }
            self.arm(m, t.max(now));
        }
    }

    /// Machine `m`'s packet found its queue full: whether it waits there (or is dropped).
    fn full_queue_holds(&mut self, m: MachineId, now: Time, k: FrameKey) -> bool {
        let p = &self.frames[k].packet;
        let mode = match &mut self.machines[m.index()].machine {
            Owned::Host(h) => h.handle_full_queue(now, p),
            Owned::Other(x) => x.handle_full_queue(now, p),
            Owned::Vacant => unreachable!("machine {m:?} driven while out"),
        };
        mode != LocalQueue::Drop
    }

    /// Makes sure machine `m` is woken at `t`: a new entry only if it is earlier than the
    /// pending one. A later deadline is found when the earlier entry fires (and the
    /// machine's `handle_timeout` is a no-op), which avoids a cancellable heap.
    fn arm(&mut self, m: MachineId, t: Time) {
        let slot = &mut self.machines[m.index()];
        if slot.timer.is_none_or(|s| t < s) {
            slot.timer = Some(t);
            self.q.schedule(t, Ev::Timer(m));
        }
    }
}
