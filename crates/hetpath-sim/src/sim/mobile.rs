//! The simulation's side of mobility: routing toward the mobile host through its home
//! agent, the host's association changes and the agents' advertisements as events, and
//! the Mobile IP agents as hooks on the packet path of the nodes they live on. The
//! machines themselves are in `crate::mobility`.

use super::{Ev, Simulation};
use crate::mobility::mobile_ip::Send;
use crate::mobility::MobileHost;
use crate::rng;
use hetpath_proto::packet::{Body, MipMessage};
use hetpath_proto::{Dur, Packet, Time};

impl Simulation {
    /// Adds the mobile host (built by the scenario loader). Its wireless links must
    /// already be added; they start down until the host associates.
    pub fn set_mobile(&mut self, m: MobileHost) {
        self.mobile = Some(m);
    }

    pub fn mobile(&self) -> Option<&MobileHost> {
        self.mobile.as_ref()
    }

    /// Wireless links carry no static routes: the mobility agents decide their use.
    pub(super) fn is_wireless(&self, link: usize) -> bool {
        self.mobile.as_ref().is_some_and(|m| {
            m.access
                .stations
                .iter()
                .any(|s| s.downlink == link || s.uplink == link)
        })
    }

    /// Packets for the mobile host's home address are routed to its home agent
    /// (RFC 3344 section 1.6: the home network).
    pub(super) fn route_to_home_agent(&mut self) {
        let Some(m) = &self.mobile else { return };
        let (mh, ha) = (m.node, m.access.stations[m.mip.home].node);
        for n in 0..self.nodes.len() {
            let via = self.nodes[n].routes[ha];
            if n != mh {
                self.nodes[n].routes[mh] = via;
            }
        }
    }

    /// For reachability checks: the mobile host sends through its home station and is
    /// reached through its home agent.
    pub(super) fn mobile_endpoints(&self, from: usize, to: usize) -> (usize, usize) {
        let Some(m) = &self.mobile else {
            return (from, to);
        };
        let ha = m.access.stations[m.mip.home].node;
        let map = |n: usize| if n == m.node { ha } else { n };
        (map(from), map(to))
    }

    /// The first hop of a packet the mobile host sends: its station's uplink, or none
    /// while detached. `None` for any other node.
    pub(super) fn mobile_uplink(&self, node: usize) -> Option<Option<usize>> {
        let m = self.mobile.as_ref().filter(|m| m.node == node)?;
        Some(m.access.attached().map(|s| m.access.stations[s].uplink))
    }

    pub(super) fn start_mobility(&mut self) {
        let Some(m) = &self.mobile else { return };
        let links: Vec<usize> = m
            .access
            .stations
            .iter()
            .flat_map(|s| [s.downlink, s.uplink])
            .collect();
        let times = m.access.change_times(self.end);
        let period = m.mip.advertise_every;
        let phases: Vec<Time> = m
            .access
            .stations
            .iter()
            .map(|s| {
                let name = &self.nodes[s.node].name;
                let mut r = rng::stream(self.seed, &format!("mobile/advertise/{name}"));
                Time::ZERO + Dur::from_secs_f64(period.as_secs_f64() * rng::uniform(&mut r))
            })
            .collect();
        for l in links {
            self.links[l].set_up(Time::ZERO, false);
        }
        for t in times {
            self.q.schedule(t, Ev::Reassociate);
        }
        for (s, t) in phases.into_iter().enumerate() {
            self.q.schedule(t, Ev::Advertise(s));
        }
    }

    /// The host's link layer (re)associates: the old station's link pair goes down and
    /// drops what it held, the new one comes up.
    pub(super) fn reassociate(&mut self, now: Time) {
        let Some(m) = self.mobile.as_mut() else {
            return;
        };
        let Some((old, new, signal)) = m.access.reassociate(now) else {
            return;
        };
        let pair = |s: Option<usize>| {
            s.map(|s| {
                let st = &m.access.stations[s];
                [st.downlink, st.uplink]
            })
        };
        let (old, new, node) = (pair(old), pair(new), m.node);
        for l in old.into_iter().flatten() {
            let (_, mut lost) = self.links[l].set_up(now, false);
            lost.extend(self.links[l].flush());
            for p in &lost {
                self.lost(p);
            }
        }
        for l in new.into_iter().flatten() {
            let (w, _) = self.links[l].set_up(now, true);
            self.wake_link(l, w);
        }
        if let Some(sig) = signal {
            self.publish(node, sig);
        }
    }

    pub(super) fn advertise(&mut self, now: Time, s: usize) {
        let Some(m) = self.mobile.as_ref() else {
            return;
        };
        let period = m.mip.advertise_every;
        if let Some(send) = m.mip.advertise(s, &m.access) {
            self.send_all(vec![send]);
        }
        self.q.schedule(now + period, Ev::Advertise(s));
    }

    /// The mobility hooks on a node's packet path. Returns the packet if normal delivery
    /// or forwarding should go on; `None` if an agent took it.
    pub(super) fn mobile_intercept(&mut self, node: usize, p: Packet) -> Option<Packet> {
        let now = self.q.now();
        let Some(m) = self.mobile.as_mut() else {
            return Some(p);
        };
        let mut out = Vec::new();
        let mut signals = Vec::new();
        let station = m.access.stations.iter().position(|s| s.node == node);
        let pass = if node == m.node {
            // Every frame the host hears tells its link layer how strong the link is.
            if let Some(s) = m.access.attached() {
                signals.extend(m.access.on_frame(now, s));
            }
            match p.body {
                Body::Mip(MipMessage::Advertisement { agent }) => {
                    let s = m.mip.station_addr.iter().position(|&a| a == agent);
                    if let Some(s) = s {
                        signals.extend(m.mip.on_advertisement(now, s, &m.access, &mut out));
                    }
                    None
                }
                Body::Mip(msg) => {
                    signals.extend(m.mip.on_reply(msg));
                    None
                }
                _ => Some(p),
            }
        } else if let Some(s) = station {
            let mine = p.ip.dst == m.mip.station_addr[s];
            match p.body {
                Body::Mip(msg) if mine => {
                    m.mip.agent_receive(s, msg, &m.access, &mut out);
                    None
                }
                Body::Tunnel(inner) if mine => {
                    m.mip.foreign_agent_decap(s, *inner, &m.access, &mut out);
                    None
                }
                _ if s == m.mip.home && p.ip.dst == m.mip.home_addr => {
                    m.mip.home_agent_forward(p, &m.access, &mut out);
                    None
                }
                _ => Some(p),
            }
        } else {
            Some(p)
        };
        let host = m.node;
        self.send_all(out);
        for sig in signals {
            self.publish(host, sig);
        }
        pass
    }

    fn send_all(&mut self, out: Vec<Send>) {
        for o in out {
            let uid = self.next_uid;
            self.next_uid += 1;
            match o {
                Send::Route(node, mut p) => {
                    p.uid = uid;
                    self.forward(node, p);
                }
                Send::Link(l, mut p) => {
                    p.uid = uid;
                    self.send_on(l, p);
                }
            }
        }
    }
}
