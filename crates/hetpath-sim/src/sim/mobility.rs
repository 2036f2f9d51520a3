//! The simulation's side of mobility: routing toward the mobile host through its home
//! agent, its association changes as events (with what they do to the wireless links),
//! and the received power of the frames it hears. Mobile IP and the host's link-layer
//! reports are machines (`hetpath_proto::agent::mobile_ip`); motion, coverage and
//! association are in `crate::mobility`.

use super::{DirId, Ev, NodeId, Simulation};
use crate::mobility::MobileHost;
use crate::trace::Loss;
use hetpath_proto::crosslayer::Signal;
use hetpath_proto::Time;

impl Simulation {
    /// Adds the mobile host (built by the scenario loader). Its wireless links must
    /// already be added; they start down until the host associates.
    pub fn set_mobile(&mut self, m: MobileHost) {
        self.mobile = Some(m);
        self.routes.take();
    }

    pub fn mobile(&self) -> Option<&MobileHost> {
        self.mobile.as_ref()
    }

    /// Wireless links carry no static routes: the mobility agents decide their use.
    pub(super) fn is_wireless(&self, d: DirId) -> bool {
        self.mobile.as_ref().is_some_and(|m| {
            m.access
                .stations
                .iter()
                .any(|s| s.downlink == d || s.uplink == d)
        })
    }

    /// Packets for the mobile host's home address are routed to its home agent
    /// (RFC 3344 section 1.6: the home network): (mobile host, home agent).
    pub(super) fn home_route(&self) -> Option<(u32, u32)> {
        let m = self.mobile.as_ref()?;
        Some((m.node.0, m.access.stations[m.home].node.0))
    }

    /// For reachability checks: the mobile host sends through its home station and is
    /// reached through its home agent.
    pub(super) fn mobile_endpoints(&self, from: NodeId, to: NodeId) -> (NodeId, NodeId) {
        let Some(m) = &self.mobile else {
            return (from, to);
        };
        let ha = m.access.stations[m.home].node;
        let map = |n: NodeId| if n == m.node { ha } else { n };
        (map(from), map(to))
    }

    /// The first hop of a packet the mobile host sends: its station's uplink, or none
    /// while detached. `None` for any other node.
    pub(super) fn mobile_uplink(&self, node: NodeId) -> Option<Option<DirId>> {
        let m = self.mobile.as_ref().filter(|m| m.node == node)?;
        Some(m.access.attached().map(|s| m.access.stations[s].uplink))
    }

    /// The received power of a frame reaching `node` now, if it is the mobile host.
    pub(super) fn frame_power_at(&self, node: NodeId) -> Option<f64> {
        let m = self.mobile.as_ref().filter(|m| m.node == node)?;
        m.access.frame_power_w(self.q.now())
    }

    pub(super) fn start_mobility(&mut self) {
        let Some(m) = &self.mobile else { return };
        let dirs: Vec<DirId> = m
            .access
            .stations
            .iter()
            .flat_map(|s| [s.downlink, s.uplink])
            .collect();
        for t in m.access.change_times(self.end) {
            self.q.schedule(t, Ev::Reassociate);
        }
        for d in dirs {
            self.dirs[d.index()].set_up(Time::ZERO, false);
        }
    }

    /// The host's link layer (re)associates: the old station's link pair goes down and
    /// drops what it held (over a WLAN, what the access point and the host's MAC held
    /// for each other: 802.11 hands no frame over between access points), the new one
    /// comes up, and the host's node hears of it.
    pub(super) fn reassociate(&mut self, now: Time) {
        let Some(m) = self.mobile.as_mut() else {
            return;
        };
        let Some((old, new)) = m.access.reassociate(now) else {
            return;
        };
        let pair = |s: Option<usize>| {
            s.map(|s| {
                let st = &m.access.stations[s];
                [st.downlink, st.uplink]
            })
        };
        let (old_pair, new_pair, node) = (pair(old), pair(new), m.node);
        for d in old_pair.into_iter().flatten() {
            let (_, mut lost) = self.dirs[d.index()].set_up(now, false);
            lost.extend(self.dirs[d.index()].flush());
            self.lost_keys(lost, d, Loss::Outage);
        }
        for d in new_pair.into_iter().flatten() {
            let (w, _) = self.dirs[d.index()].set_up(now, true);
            self.wake_link(d, w);
        }
        // Over a WLAN the frames wait in the medium's queues instead. Purged once the
        // new pair is up: the room it frees wakes senders, whose frames go there.
        for d in old_pair.into_iter().flatten() {
            self.wlan_disassociate(d);
        }
        if old.is_some() {
            self.publish(node, Signal::Disassociated, None);
        }
        if new.is_some() {
            self.publish(node, Signal::Associated, None);
        }
    }
}
