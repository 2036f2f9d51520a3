//! Mobile IPv4 (RFC 3344), the parts seed 002's experiments need, for one mobile host:
//! a `StationAgent` on every base station (the home agent on the host's home station, a
//! foreign agent elsewhere) and the `MobileNode` on the host.
//!
//! Agents advertise periodically (section 2.2); the mobile node detects a move when it
//! hears a new agent (section 2.4.2.1) and registers through the foreign agent with the
//! home agent (section 3), whose binding then tunnels packets for the home address to the
//! care-of address in IP-in-IP (RFC 2003, section 4.2.3). Registration messages are real
//! packets: they cross the wireless hop and the wired network, and they can be lost.
//! Until the home agent has the new binding, packets toward the host go to the old
//! care-of address and are dropped there, as they would be.
//!
//! The mobile node also carries the host's link-layer monitor (seed 002 Figure 4): every
//! frame's received power, which the driver measures, says whether the link is
//! deteriorating, and the monitor reports LINK_OK / LINK_NOT_OK on the node's bus beside
//! the IP layer's IP_OK / IP_NOT_OK.
//!
//! Interfaces: a station agent's interface 0 is its wireless hop to the host; the mobile
//! node's interface k is its wireless hop to station k (up while associated with it).

use crate::crosslayer::Signal;
use crate::ids::IfaceId;
use crate::machine::{At, Event, Hooks, LocalQueue, Machine, NodeView, Transmit, Verdict, Via};
use crate::packet::{Addr, Body, MipMessage, Packet};
use crate::time::{Dur, Time};
use std::collections::VecDeque;

/// The wireless hop of a station agent.
const TO_HOST: IfaceId = IfaceId(0);

/// What every Mobile IP entity of the scenario knows.
#[derive(Clone, Debug)]
pub struct MobileIpConfig {
    /// The host's home address.
    pub home_addr: Addr,
    /// Each base station's address, by station index.
    pub stations: Vec<Addr>,
    /// The index of the home agent's station.
    pub home: usize,
    /// Agent advertisement period (section 2.2).
    pub advertise_every: Dur,
    /// The home agent's time to process a registration request before it binds the
    /// care-of address and replies (section 3.8 gives none; zero: at once).
    pub registration_delay: Dur,
}

/// The home or a foreign agent on base station `index`.
pub struct StationAgent {
    cfg: MobileIpConfig,
    index: usize,
    next_advert: Time,
    /// Home agent: the care-of address the home address is bound to, if away.
    binding: Option<Addr>,
    /// Foreign agent: the host is a registered visitor here.
    visitor: bool,
    /// Home agent: requests being processed, each due at its time (in arrival order,
    /// since the delay is one for all).
    processing: VecDeque<(Time, MipMessage)>,
    out: VecDeque<Transmit>,
}

impl StationAgent {
    /// The agent of station `index`, advertising first at `first_advert` (a seeded phase
    /// chosen by the scenario) and then every period.
    pub fn new(cfg: MobileIpConfig, index: usize, first_advert: Time) -> StationAgent {
        StationAgent {
            cfg,
            index,
            next_advert: first_advert,
            binding: None,
            visitor: false,
            processing: VecDeque::new(),
            out: VecDeque::new(),
        }
    }

    fn addr(&self) -> Addr {
        self.cfg.stations[self.index]
    }

    fn is_home(&self) -> bool {
        self.index == self.cfg.home
    }

    /// Onto the wireless hop, if the host is associated here.
    fn deliver(&mut self, p: Packet, node: &dyn NodeView) {
        if node.iface(TO_HOST).up {
            self.out.push_back(Transmit {
                packet: p,
                via: Via::Iface(TO_HOST),
            });
        }
    }

    /// A registration message for this agent (section 3.7 for a foreign agent's
    /// relaying, 3.8 for the home agent's binding).
    fn receive(&mut self, now: Time, msg: MipMessage, node: &dyn NodeView) {
        let here = self.addr();
        match msg {
            MipMessage::Request { .. }
                if self.is_home() && self.cfg.registration_delay > Dur::ZERO =>
            {
                self.processing
                    .push_back((now + self.cfg.registration_delay, msg));
            }
            MipMessage::Request { .. } if self.is_home() => self.register(msg, node),
            MipMessage::Request { home_agent, .. } => {
                let p = Packet::new(here, home_agent, Body::Mip(msg));
                self.out.push_back(Transmit::route(p));
            }
            MipMessage::Reply { .. } => {
                self.visitor = true;
                let p = Packet::new(here, self.cfg.home_addr, Body::Mip(msg));
                self.deliver(p, node);
            }
            MipMessage::Advertisement { .. } => {}
        }
    }

    /// The home agent binds the home address to the request's care-of address (none if
    /// it is this station: the host is home) and replies (section 3.8).
    fn register(&mut self, msg: MipMessage, node: &dyn NodeView) {
        let MipMessage::Request { care_of, .. } = msg else {
            return;
        };
        let here = self.addr();
        let known = self.cfg.stations.contains(&care_of);
        self.binding = (known && care_of != here).then_some(care_of);
        let p = Packet::new(here, care_of, Body::Mip(reply_to(msg)));
        if care_of == here {
            self.deliver(p, node);
        } else {
            self.out.push_back(Transmit::route(p));
        }
    }
}

impl Machine for StationAgent {
    fn hooks(&self) -> Hooks {
        Hooks {
            arrival: true,
            ..Hooks::default()
        }
    }

    /// Home and foreign agents are routers (RFC 3344 section 1.6): what they forward into
    /// a full queue is dropped there and counted with the queue's drops, never held, so
    /// `[mobile] queue` bounds the way to the host as any link's queue does.
    fn handle_full_queue(&mut self, _now: Time, _packet: &Packet) -> LocalQueue {
        LocalQueue::Drop
    }

    fn handle_packet(
        &mut self,
        now: Time,
        _at: At,
        p: &mut Packet,
        node: &dyn NodeView,
    ) -> Verdict {
        let mine = p.ip.dst == self.addr();
        match &p.body {
            Body::Mip(msg) if mine => self.receive(now, *msg, node),
            // A tunnelled packet for a registered visitor: decapsulated and delivered;
            // otherwise lost.
            Body::Tunnel(_) if mine => {
                if let (true, Body::Tunnel(inner)) = (self.visitor, p.take().body) {
                    self.deliver(*inner, node);
                }
            }
            // The home agent intercepts packets for the home address: tunnelled to the
            // care-of address, or delivered on the home link if the host is at home.
            _ if self.is_home() && p.ip.dst == self.cfg.home_addr => match self.binding {
                Some(care_of) => {
                    let outer = Packet::new(self.addr(), care_of, Body::Tunnel(Box::new(p.take())));
                    self.out.push_back(Transmit::route(outer));
                }
                None => self.deliver(p.take(), node),
            },
            _ => return Verdict::Pass,
        }
        Verdict::Consume
    }

    /// Finishes the registrations that are due; advertises (heard by the host only if
    /// it is associated here).
    fn handle_timeout(&mut self, now: Time, node: &dyn NodeView) {
        while let Some(&(due, msg)) = self.processing.front() {
            if due > now {
                break;
            }
            self.processing.pop_front();
            self.register(msg, node);
        }
        if now < self.next_advert {
            return;
        }
        let agent = self.addr();
        let p = Packet::new(
            agent,
            self.cfg.home_addr,
            Body::Mip(MipMessage::Advertisement { agent }),
        );
        self.deliver(p, node);
        self.next_advert = now + self.cfg.advertise_every;
    }

    fn poll_transmit(&mut self, _now: Time, _node: &dyn NodeView) -> Option<Transmit> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(match self.processing.front() {
            Some(&(due, _)) => due.min(self.next_advert),
            None => self.next_advert,
        })
    }
}

/// The mobile host's Mobile IP client and link-layer monitor.
pub struct MobileNode {
    cfg: MobileIpConfig,
    /// Received power below which a weakening link is about to fail (watts).
    warn_w: f64,
    /// The agent it is registered with, and the request in flight.
    registered: usize,
    pending: Option<(usize, Time, u64)>,
    /// Retransmissions of the pending request so far: each waits twice as long as the
    /// one before (section 3.6.3).
    resent: u32,
    next_id: u64,
    /// The IP layer's state as last reported (seed 002 Figure 5).
    ip_ok: bool,
    /// The link layer's state as last reported (Figure 4), and the power of the last
    /// frame from the current station, for the trend.
    link_ok: bool,
    last_power: Option<f64>,
    out: VecDeque<Transmit>,
    signals: VecDeque<Signal>,
}

impl MobileNode {
    /// The host starts at home, registered with nothing (none needed).
    pub fn new(cfg: MobileIpConfig, warn_w: f64) -> MobileNode {
        MobileNode {
            registered: cfg.home,
            cfg,
            warn_w,
            pending: None,
            resent: 0,
            next_id: 1,
            ip_ok: true,
            link_ok: true,
            last_power: None,
            out: VecDeque::new(),
            signals: VecDeque::new(),
        }
    }

    /// A frame reached the host with received power `power` (when its driver measures
    /// it). The quality is "deteriorating" (Figure 4: LINK_NOT_OK) when a frame is below
    /// the warning threshold and weaker than the one before it (seed 002 section 4: "low
    /// powered frames are an indication of impending link disconnection"); any other
    /// frame means the link is good (LINK_OK after a problem), so a host entering a new
    /// cell at its weak edge is not held back until it is near the station
    /// (docs/model-notes.md).
    fn on_frame(&mut self, power: Option<f64>) {
        let deteriorating = power.is_some_and(|p| {
            let falling = self.last_power.replace(p).is_some_and(|before| p < before);
            p < self.warn_w && falling
        });
        match (deteriorating, self.link_ok) {
            (true, true) => self.set_link_ok(false),
            (false, false) => self.set_link_ok(true),
            _ => {}
        }
    }

    fn set_link_ok(&mut self, ok: bool) {
        self.link_ok = ok;
        self.signals.push_back(if ok {
            Signal::LinkOk
        } else {
            Signal::LinkNotOk
        });
    }

    fn set_ip_ok(&mut self, ok: bool) {
        if ok != self.ip_ok {
            self.ip_ok = ok;
            self.signals
                .push_back(if ok { Signal::IpOk } else { Signal::IpNotOk });
        }
    }

    /// It hears the agent at station `s`. A new agent means a move: at home the IP layer
    /// is OK again (and deregisters); elsewhere it is not OK until the reply comes (seed
    /// 002 section 3.3.3). A request goes out unless one to the same agent is younger
    /// than its retransmission timeout (section 3.6.3): an advertisement period, doubled
    /// at each retransmission ("each successive retransmission timeout period SHOULD be
    /// at least twice the previous period"), so that a reply slower than the period (a
    /// slow home agent, `registration_delay`) still answers the latest request.
    fn on_advertisement(&mut self, now: Time, s: usize) {
        if s == self.registered {
            return;
        }
        self.set_ip_ok(s == self.cfg.home);
        let again = self.pending.is_some_and(|(to, _, _)| to == s);
        let timeout = self
            .cfg
            .advertise_every
            .saturating_mul(1 << self.resent.min(20));
        let fresh = self
            .pending
            .is_some_and(|(to, at, _)| to == s && now.since(at) < timeout);
        if fresh {
            return;
        }
        self.resent = if again { self.resent + 1 } else { 0 };
        let id = self.next_id;
        self.next_id += 1;
        self.pending = Some((s, now, id));
        let msg = MipMessage::Request {
            home: self.cfg.home_addr,
            home_agent: self.cfg.stations[self.cfg.home],
            care_of: self.cfg.stations[s],
            id,
        };
        let p = Packet::new(self.cfg.home_addr, self.cfg.stations[s], Body::Mip(msg));
        // A newer request supersedes one still waiting for room in the host's queue (only
        // requests wait there), so what waits is one request, whatever the period.
        self.out.clear();
        self.out.push_back(Transmit {
            packet: p,
            via: Via::Iface(IfaceId(s as u32)),
        });
    }

    /// A registration reply.
    fn on_reply(&mut self, msg: MipMessage) {
        let MipMessage::Reply { care_of, id, .. } = msg else {
            return;
        };
        let c = self.cfg.stations.iter().position(|&a| a == care_of);
        if let (Some((s, _, want)), Some(c)) = (self.pending, c) {
            if want == id && s == c {
                self.pending = None;
                self.registered = s;
                self.set_ip_ok(true);
            }
        }
    }
}

impl Machine for MobileNode {
    fn hooks(&self) -> Hooks {
        Hooks {
            arrival: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(
        &mut self,
        now: Time,
        _at: At,
        p: &mut Packet,
        node: &dyn NodeView,
    ) -> Verdict {
        self.on_frame(node.frame_power_w());
        match p.body {
            Body::Mip(MipMessage::Advertisement { agent }) => {
                if let Some(s) = self.cfg.stations.iter().position(|&a| a == agent) {
                    self.on_advertisement(now, s);
                }
                Verdict::Consume
            }
            Body::Mip(msg) => {
                self.on_reply(msg);
                Verdict::Consume
            }
            _ => Verdict::Pass,
        }
    }

    /// Association changes: losing a station is LINK_NOT_OK at once (LINK_OK waits for
    /// a frame), and the power trend starts afresh.
    fn handle_signal(&mut self, _now: Time, signal: Signal, _node: &dyn NodeView) {
        match signal {
            Signal::Disassociated => {
                self.last_power = None;
                if self.link_ok {
                    self.set_link_ok(false);
                }
            }
            Signal::Associated => self.last_power = None,
            _ => {}
        }
    }

    fn poll_transmit(&mut self, _now: Time, _node: &dyn NodeView) -> Option<Transmit> {
        self.out.pop_front()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.signals.pop_front().map(Event::Signal)
    }
}

fn reply_to(req: MipMessage) -> MipMessage {
    match req {
        MipMessage::Request {
            home,
            home_agent,
            care_of,
            id,
        } => MipMessage::Reply {
            home,
            home_agent,
            care_of,
            id,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NoNode;

    fn cfg() -> MobileIpConfig {
        MobileIpConfig {
            home_addr: Addr(1),
            stations: vec![Addr(10), Addr(11)],
            home: 0,
            advertise_every: Dur::from_nanos(1),
            registration_delay: Dur::ZERO,
        }
    }

    fn advert(agent: Addr) -> Packet {
        Packet::new(
            agent,
            Addr(1),
            Body::Mip(MipMessage::Advertisement { agent }),
        )
    }

    /// A station agent forwards as a router: at a full queue its packet is dropped, so
    /// nothing it forwards or advertises piles up inside it.
    #[test]
    fn a_station_agent_drops_at_a_full_queue() {
        let mut a = StationAgent::new(cfg(), 0, Time::ZERO);
        assert_eq!(
            a.handle_full_queue(Time::ZERO, &advert(Addr(10))),
            LocalQueue::Drop
        );
    }

    /// Advertisements from a foreign agent, one per nanosecond (the period), while the
    /// host's queue holds its requests back: one request waits, the newest. Requests go
    /// out at 0, 1, 3, 7, ..., 511 ns: each retransmission waits twice as long as the one
    /// before (RFC 3344 section 3.6.3), so the tenth is the newest.
    #[test]
    fn a_waiting_registration_request_is_superseded_not_queued_behind() {
        let mut m = MobileNode::new(cfg(), 0.0);
        for t in 0..1000 {
            let mut p = advert(Addr(11));
            m.handle_packet(
                Time::ZERO + Dur::from_nanos(t),
                At::Arrival,
                &mut p,
                &NoNode,
            );
        }
        let first = m.poll_transmit(Time::ZERO, &NoNode).expect("a request");
        assert!(matches!(
            first.packet.body,
            Body::Mip(MipMessage::Request { id: 10, .. })
        ));
        assert!(m.poll_transmit(Time::ZERO, &NoNode).is_none());
    }
}
