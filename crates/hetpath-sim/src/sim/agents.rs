//! In-network agents on nodes (`hetpath_proto::agent::Agent`): the simulator shows them
//! the packets at their hooks, routes what they send, and wakes them on their timers.

use super::{Ev, Simulation};
use hetpath_proto::agent::{Agent, Hook};
use hetpath_proto::packet::Addr;
use hetpath_proto::rap::Iface;
use hetpath_proto::{Packet, Time};

pub(super) struct AgentSlot {
    pub(super) agent: Box<dyn Agent>,
    pub(super) node: usize,
    /// The link direction it watches, if any.
    iface: Option<usize>,
    /// The earliest timer entry pending in the event queue.
    timer: Option<Time>,
    /// A packet its node's outgoing queue had no room for, waiting for that link.
    blocked: Option<(usize, Packet)>,
    /// Links whose full queue it was told of when it last sent: it has more for them.
    waiting: Vec<usize>,
}

/// Stands in a slot while its agent is out being polled.
struct Vacant;

impl Agent for Vacant {
    fn hooks(&self) -> (bool, bool) {
        (false, false)
    }
    fn handle_packet(&mut self, _: Time, _: Hook, p: Packet, _: &Iface) -> Option<Packet> {
        Some(p)
    }
}

impl Simulation {
    /// Places `agent` on `node`, watching outgoing link direction `iface` (which must
    /// leave `node`). Returns its index.
    pub fn add_agent(&mut self, node: usize, iface: Option<usize>, agent: Box<dyn Agent>) -> usize {
        let a = self.agents.len();
        let (arrival, departure) = agent.hooks();
        if arrival {
            self.arrival_agents.resize(self.nodes.len(), Vec::new());
            self.arrival_agents[node].push(a);
        }
        if let (true, Some(l)) = (departure, iface) {
            debug_assert_eq!(self.links[l].params.from, node);
            self.departure_agents.resize(self.links.len(), Vec::new());
            self.departure_agents[l].push(a);
        }
        self.agents.push(AgentSlot {
            agent,
            node,
            iface,
            timer: None,
            blocked: None,
            waiting: Vec::new(),
        });
        a
    }

    /// The agents of one kind on `node`, for results and tests.
    pub fn agents_on(&self, node: usize) -> impl Iterator<Item = &dyn Agent> {
        self.agents
            .iter()
            .filter(move |s| s.node == node)
            .map(|s| s.agent.as_ref())
    }

    fn iface_of(&self, a: usize) -> Iface {
        self.agents[a].iface.map_or(Iface::default(), |l| {
            let l = &self.links[l];
            Iface {
                rate_bps: l.ip_rate_bps(),
                queue_bytes: l.queue_bytes(),
                tx_bytes: l.stats.tx_bytes,
            }
        })
    }

    /// Shows a packet arriving at `node` to its agents; `None` if one kept it.
    pub(super) fn on_arrival_hooks(&mut self, node: usize, p: Packet) -> Option<Packet> {
        self.run_hooks(node, Hook::Arrival, p)
    }

    /// Shows a packet routed onto link direction `l` to the agents watching it.
    pub(super) fn on_departure_hooks(&mut self, l: usize, p: Packet) -> Option<Packet> {
        self.run_hooks(l, Hook::Departure, p)
    }

    fn run_hooks(&mut self, at: usize, hook: Hook, mut p: Packet) -> Option<Packet> {
        let list = match hook {
            Hook::Arrival => &self.arrival_agents,
            Hook::Departure => &self.departure_agents,
        };
        let n = list.get(at).map_or(0, Vec::len);
        for k in 0..n {
            let a = match hook {
                Hook::Arrival => self.arrival_agents[at][k],
                Hook::Departure => self.departure_agents[at][k],
            };
            let now = self.q.now();
            let iface = self.iface_of(a);
            let kept = self.agents[a].agent.handle_packet(now, hook, p, &iface);
            self.touch_agent(a);
            p = kept?;
        }
        Some(p)
    }

    pub(super) fn agent_timer(&mut self, a: usize, now: Time) {
        if self.agents[a].timer != Some(now) {
            return; // superseded by an earlier entry
        }
        self.agents[a].timer = None;
        let iface = self.iface_of(a);
        self.agents[a].agent.handle_timeout(now, &iface);
        self.touch_agent(a);
    }

    /// A transmission ended on link `l`: agents held back by its full queue go on.
    pub(super) fn unblock_agents(&mut self, l: usize) {
        for a in 0..self.agents.len() {
            let s = &self.agents[a];
            if s.blocked.as_ref().is_some_and(|b| b.0 == l) || s.waiting.contains(&l) {
                self.touch_agent(a);
            }
        }
    }

    /// The agent's next packet, told which destinations its node's queues have room for;
    /// notes the full links in `waiting`.
    fn poll_agent(&mut self, a: usize, now: Time) -> Option<Packet> {
        let node = self.agents[a].node;
        let mut agent = std::mem::replace(&mut self.agents[a].agent, Box::new(Vacant));
        let full = std::cell::RefCell::new(std::mem::take(&mut self.agents[a].waiting));
        let ready = |dst: Addr| match self.next_hop_to(node, dst) {
            Some(l) if !self.links[l].has_room(1) => {
                let mut full = full.borrow_mut();
                if !full.contains(&l) {
                    full.push(l);
                }
                false
            }
            _ => true,
        };
        let p = agent.poll_transmit(now, &ready);
        self.agents[a].agent = agent;
        self.agents[a].waiting = full.into_inner();
        p
    }

    /// After any input to an agent: route what it sends and keep its timer queued.
    ///
    /// What an agent sends leaves from its own node, so it is flow-controlled by its
    /// outgoing queues as a local socket is (Linux: a packet the qdisc refuses stays in
    /// the socket and is sent later, rather than lost): it is told which queues are full
    /// and woken when one of them finishes a transmission. Should it send into a full
    /// queue anyway (a byte-limited queue with a few bytes left), the packet waits and
    /// the agent is asked for nothing more until that link has room.
    fn touch_agent(&mut self, a: usize) {
        let now = self.q.now();
        let node = self.agents[a].node;
        self.agents[a].waiting.clear();
        loop {
            let p = match self.agents[a].blocked.take() {
                Some((_, p)) => p,
                None => match self.poll_agent(a, now) {
                    Some(mut p) => {
                        p.uid = self.next_uid;
                        self.next_uid += 1;
                        p
                    }
                    None => break,
                },
            };
            if let Some(l) = self.next_hop(node, &p) {
                if !self.links[l].has_room(p.size()) {
                    self.agents[a].blocked = Some((l, p));
                    break;
                }
            }
            self.forward(node, p);
        }
        if let Some(t) = self.agents[a].agent.poll_timeout() {
            let held = self.agents[a].blocked.is_some() || !self.agents[a].waiting.is_empty();
            if t <= now && held {
                // Due work is sending (an ACK, a retransmission) into a full queue: that
                // queue's next transmission wakes the agent; a timer now would spin.
                return;
            }
            let t = t.max(now);
            if self.agents[a].timer.is_none_or(|s| t < s) {
                self.agents[a].timer = Some(t);
                self.q.schedule(t, Ev::AgentTimer(a));
            }
        }
    }
}
