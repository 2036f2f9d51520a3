//! Mobile IPv4 (RFC 3344), the parts seed 002's experiments need, for one mobile host:
//! the home agent at its home base station, a foreign agent at every other station, and
//! the mobile node itself. Agents advertise periodically (section 2.2); the mobile node
//! detects a move when it hears a new agent (section 2.4.2.1) and registers through the
//! foreign agent with the home agent (section 3), whose binding then tunnels packets for
//! the home address to the care-of address in IP-in-IP (RFC 2003, section 4.2.3).
//!
//! Registration messages are real packets: they cross the wireless hop and the wired
//! network with its queues and delays, and they can be lost. Until the home agent has the
//! new binding, packets toward the host go to the old care-of address and are dropped
//! there, as they would be. Sans-IO: methods take `now` and return what to send.

use super::access::Access;
use hetpath_proto::crosslayer::Signal;
use hetpath_proto::packet::{Addr, Body, MipMessage, Packet};
use hetpath_proto::{Dur, Time};

/// Where a packet produced by an agent goes.
#[derive(Debug)]
pub enum Send {
    /// Routed from this node as if it had originated there.
    Route(usize, Packet),
    /// Straight onto this link direction (a wireless hop).
    Link(usize, Packet),
}

pub struct MobileIp {
    /// The host's home address (its node address) and each station's address.
    pub home_addr: Addr,
    pub station_addr: Vec<Addr>,
    /// Index of the home agent's station.
    pub home: usize,
    pub advertise_every: Dur,
    /// Home agent binding: the care-of station, `None` while the host is at home.
    binding: Option<usize>,
    /// Foreign agents: whether the host is a registered visitor at each station.
    visitor: Vec<bool>,
    /// Mobile node: the agent it is registered with, and the request in flight.
    registered: usize,
    pending: Option<(usize, Time, u64)>,
    next_id: u64,
    /// The IP layer's state as last reported (seed 002 Figure 5).
    ip_ok: bool,
}

impl MobileIp {
    /// The host starts at home, registered with nothing (none needed).
    pub fn new(
        home_addr: Addr,
        station_addr: Vec<Addr>,
        home: usize,
        advertise_every: Dur,
    ) -> MobileIp {
        let n = station_addr.len();
        MobileIp {
            home_addr,
            station_addr,
            home,
            advertise_every,
            binding: None,
            visitor: vec![false; n],
            registered: home,
            pending: None,
            next_id: 1,
            ip_ok: true,
        }
    }

    pub fn ip_ok(&self) -> bool {
        self.ip_ok
    }

    fn station_of(&self, a: Addr) -> Option<usize> {
        self.station_addr.iter().position(|&x| x == a)
    }

    /// The agent at station `s` advertises (section 2.2): heard by the host only if its
    /// link layer is associated with `s`.
    pub fn advertise(&self, s: usize, access: &Access) -> Option<Send> {
        (access.attached() == Some(s)).then(|| {
            let agent = self.station_addr[s];
            let p = Packet::new(
                agent,
                self.home_addr,
                Body::Mip(MipMessage::Advertisement { agent }),
            );
            Send::Link(access.stations[s].downlink, p)
        })
    }

    /// The mobile node hears the agent at station `s`. A new agent means a move: at home
    /// the IP layer is OK again (and deregisters); elsewhere it is not OK until the reply
    /// comes (seed 002 section 3.3.3). A request goes out unless one to the same agent is
    /// younger than an advertisement period (retransmission, section 3.6.3).
    pub fn on_advertisement(
        &mut self,
        now: Time,
        s: usize,
        access: &Access,
        out: &mut Vec<Send>,
    ) -> Option<Signal> {
        if s == self.registered {
            return None;
        }
        let signal = self.set_ip_ok(s == self.home);
        let fresh = self
            .pending
            .is_some_and(|(to, at, _)| to == s && now.since(at) < self.advertise_every);
        if !fresh {
            let id = self.next_id;
            self.next_id += 1;
            self.pending = Some((s, now, id));
            let ha = self.station_addr[self.home];
            let msg = MipMessage::Request {
                home: self.home_addr,
                home_agent: ha,
                care_of: self.station_addr[s],
                id,
            };
            let p = Packet::new(self.home_addr, self.station_addr[s], Body::Mip(msg));
            out.push(Send::Link(access.stations[s].uplink, p));
        }
        signal
    }

    fn set_ip_ok(&mut self, ok: bool) -> Option<Signal> {
        if ok == self.ip_ok {
            return None;
        }
        self.ip_ok = ok;
        Some(if ok { Signal::IpOk } else { Signal::IpNotOk })
    }

    /// A registration message reached the agent at station `s` (section 3.7 for the
    /// foreign agent's relaying, 3.8 for the home agent's binding).
    pub fn agent_receive(
        &mut self,
        s: usize,
        msg: MipMessage,
        access: &Access,
        out: &mut Vec<Send>,
    ) {
        let here = self.station_addr[s];
        let node = access.stations[s].node;
        match msg {
            MipMessage::Request { care_of, .. } if s == self.home => {
                self.binding = self.station_of(care_of).filter(|&c| c != self.home);
                let reply = reply_to(msg);
                let p = Packet::new(here, care_of, Body::Mip(reply));
                if care_of == here {
                    self.deliver_from(s, p, access, out);
                } else {
                    out.push(Send::Route(node, p));
                }
            }
            MipMessage::Request { home_agent, .. } => {
                out.push(Send::Route(
                    node,
                    Packet::new(here, home_agent, Body::Mip(msg)),
                ));
            }
            MipMessage::Reply { .. } => {
                self.visitor[s] = true;
                let p = Packet::new(here, self.home_addr, Body::Mip(msg));
                self.deliver_from(s, p, access, out);
            }
            MipMessage::Advertisement { .. } => {}
        }
    }

    /// The mobile node receives a registration reply.
    pub fn on_reply(&mut self, msg: MipMessage) -> Option<Signal> {
        let MipMessage::Reply { care_of, id, .. } = msg else {
            return None;
        };
        match (self.pending, self.station_of(care_of)) {
            (Some((s, _, want)), Some(c)) if want == id && s == c => {
                self.pending = None;
                self.registered = s;
                self.set_ip_ok(true)
            }
            _ => None,
        }
    }

    /// A packet for the home address reached the home agent's node: tunnel it to the
    /// care-of address, or deliver it on the home link if the host is at home.
    pub fn home_agent_forward(&self, p: Packet, access: &Access, out: &mut Vec<Send>) {
        let ha = self.home;
        match self.binding {
            Some(c) => {
                let outer = Packet::new(
                    self.station_addr[ha],
                    self.station_addr[c],
                    Body::Tunnel(Box::new(p)),
                );
                out.push(Send::Route(access.stations[ha].node, outer));
            }
            None => self.deliver_from(ha, p, access, out),
        }
    }

    /// A tunnelled packet reached the foreign agent at `s`: decapsulate and deliver it to
    /// a registered visitor that is on this station's link; otherwise it is lost.
    pub fn foreign_agent_decap(
        &self,
        s: usize,
        inner: Packet,
        access: &Access,
        out: &mut Vec<Send>,
    ) {
        if self.visitor[s] {
            self.deliver_from(s, inner, access, out);
        }
    }

    /// Onto station `s`'s wireless link, if the host is associated with it.
    fn deliver_from(&self, s: usize, p: Packet, access: &Access, out: &mut Vec<Send>) {
        if access.attached() == Some(s) {
            out.push(Send::Link(access.stations[s].downlink, p));
        }
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
