//! 802.11 WLANs in the simulation (`crate::wlan`): a medium shared by an access point
//! and its stations, each station joined to the access point by a link whose two
//! directions route, capture and count at the IP level while their packets go to the
//! medium's queues. The medium asks for one event at a time (`Ev::Wlan`).

use super::{DirId, Ev, LinkId, Simulation};
use crate::ids::NodeId;
use crate::link::{Frame, LinkDir};
use crate::trace::Loss;
use crate::wlan::{Dcf, StationStats, WlanEvent};
use hetpath_proto::Time;

/// A WLAN medium and, per station, its node's link to the access point.
pub(super) struct Wlan {
    pub(super) name: String,
    dcf: Dcf<(DirId, Frame)>,
    /// The interface queue of each station, in packets (the frame on the air included).
    queue: usize,
    /// The event asked for and queued, if any (others are stale).
    scheduled: Option<Time>,
    /// Each station's node, the access point first.
    nodes: Vec<NodeId>,
}

/// Where a link direction's packets go: WLAN `w`, from station `from` to station `to`.
#[derive(Debug, Clone, Copy)]
pub(super) struct WlanDir {
    w: u32,
    from: u16,
    to: u16,
}

impl Simulation {
    /// Adds a WLAN: `links[i]` joins the access point (a) to station `i + 1` (b); station
    /// 0 of `dcf` is the access point. Each station's interface queue holds `queue`
    /// packets. Returns the links' ids.
    pub fn add_wlan(
        &mut self,
        name: &str,
        dcf: Dcf<(DirId, Frame)>,
        links: Vec<(LinkDir, LinkDir)>,
        queue: usize,
    ) -> Vec<LinkId> {
        let w = self.wlans.len() as u32;
        let mut nodes = Vec::new();
        let mut ids = Vec::new();
        for (i, (ab, ba)) in links.into_iter().enumerate() {
            if nodes.is_empty() {
                nodes.push(ab.params.from);
            }
            nodes.push(ab.params.to);
            let id = self.add_link(ab, ba);
            let [down, upd] = self.link_dirs(id);
            self.wlan_of.resize(self.dirs.len(), None);
            let st = (i + 1) as u16;
            self.wlan_of[down.index()] = Some(WlanDir { w, from: 0, to: st });
            self.wlan_of[upd.index()] = Some(WlanDir { w, from: st, to: 0 });
            ids.push(id);
        }
        self.wlans.push(Wlan {
            name: name.to_string(),
            dcf,
            queue,
            scheduled: None,
            nodes,
        });
        ids
    }

    /// Every WLAN station's 802.11 counters: (WLAN, station node, counters).
    pub fn wlan_stats(&self) -> Vec<(&str, NodeId, StationStats)> {
        self.wlans
            .iter()
            .flat_map(|w| {
                w.nodes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (w.name.as_str(), n, w.dcf.stats(i)))
            })
            .collect()
    }

    /// Direction `d`, over a WLAN, takes a packet (from `send_on`).
    pub(super) fn wlan_offer(&mut self, wd: WlanDir, d: DirId, f: Frame) {
        let now = self.q.now();
        let wlan = &mut self.wlans[wd.w as usize];
        if wlan.dcf.queued(wd.from as usize) >= wlan.queue {
            self.dirs[d.index()].stats.drops += 1;
            return self.lost(f, d, Loss::Queue);
        }
        let size = f.packet.size();
        let dir = &mut self.dirs[d.index()];
        dir.stats.tx_packets += 1;
        dir.stats.tx_bytes += size as u64;
        if let Some(tap) = &mut dir.capture {
            tap(now, &f);
        }
        wlan.dcf
            .enqueue(now, wd.from as usize, wd.to as usize, size, (d, f));
        let queued = wlan.dcf.queued(wd.from as usize) as u64;
        let stats = &mut self.dirs[d.index()].stats;
        stats.max_queue_pkts = stats.max_queue_pkts.max(queued);
        self.wlan_schedule(wd.w);
    }

    /// WLAN `w`'s event: hands up what arrived, reports what was dropped.
    pub(super) fn wlan_event(&mut self, w: u32) {
        let now = self.q.now();
        let wlan = &mut self.wlans[w as usize];
        if wlan.scheduled != Some(now) {
            return; // superseded
        }
        wlan.scheduled = None;
        let mut out = Vec::new();
        wlan.dcf.on_event(now, &mut out);
        self.wlan_schedule(w);
        for ev in out {
            match ev {
                WlanEvent::Delivered {
                    payload: (d, f), ..
                } => {
                    // The direction's utilization: the air time of its delivered frames
                    // with their ACKs (failed attempts are the medium's, not its).
                    let p = *self.wlans[w as usize].dcf.params();
                    let air = p.data_time(f.packet.size()) + p.sifs + p.ack_time();
                    let dir = &mut self.dirs[d.index()];
                    dir.stats.busy = dir.stats.busy + air;
                    let to = dir.params.to;
                    self.receive(to, f);
                }
                WlanEvent::Dropped {
                    payload: (d, f), ..
                } => {
                    self.dirs[d.index()].stats.lost_packets += 1;
                    self.lost(f, d, Loss::Channel);
                }
                WlanEvent::Acked { .. } => {}
            }
        }
    }

    /// Queues the medium's next event if it is new.
    fn wlan_schedule(&mut self, w: u32) {
        let wlan = &mut self.wlans[w as usize];
        match wlan.dcf.next_event() {
            Some(t) if wlan.scheduled != Some(t) => {
                wlan.scheduled = Some(t);
                self.q.schedule(t, Ev::Wlan(w));
            }
            _ => {}
        }
    }
}
