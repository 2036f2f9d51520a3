//! 802.11 WLANs in the simulation (`crate::wlan`): a medium shared by an access point
//! and its stations, each station joined to the access point by a link whose two
//! directions route, capture and count at the IP level while their packets go to the
//! medium's queues. The medium asks for one event at a time (`Ev::Wlan`).

use super::{DirId, Ev, LinkId, Simulation};
use crate::ids::NodeId;
use crate::link::{Frame, LinkDir};
use crate::trace::Loss;
use crate::wlan::{Dcf, StationStats, WlanEvent};
use hetpath_proto::machine::At;
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
    /// Each station's link directions onto the medium (the access point has one per
    /// station; they share its queue).
    dirs: Vec<Vec<DirId>>,
    /// Per station, the frame handed up and awaiting its MAC ACK, kept only when a
    /// machine on its direction asked for the link status.
    unacked: Vec<Option<(DirId, Frame)>>,
    /// `wlan_event`'s buffer of the medium's outcomes, kept between events.
    out: Vec<WlanEvent<(DirId, Frame)>>,
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
        let mut dirs = vec![Vec::new()];
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
            dirs[0].push(down);
            dirs.push(vec![upd]);
            ids.push(id);
        }
        self.wlans.push(Wlan {
            name: name.to_string(),
            dcf,
            queue,
            scheduled: None,
            unacked: vec![None; nodes.len()],
            out: Vec::new(),
            nodes,
            dirs,
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

    /// The packets of direction `d` in its WLAN's medium (queued, or on the air and not
    /// yet handed up); 0 for a direction that is not a WLAN's.
    pub(super) fn wlan_held(&self, d: DirId) -> u64 {
        let Some(wd) = self.wlan_of.get(d.index()).copied().flatten() else {
            return 0;
        };
        let dcf = &self.wlans[wd.w as usize].dcf;
        dcf.payloads(wd.from as usize)
            .filter(|(dir, _)| *dir == d)
            .count() as u64
    }

    /// Whether link direction `d` goes over a WLAN's medium.
    pub fn is_wlan(&self, d: DirId) -> bool {
        self.wlan_of.get(d.index()).is_some_and(|w| w.is_some())
    }

    /// The packets in direction `d`'s interface queue: over a WLAN, the medium's queue of
    /// its station, not the `LinkDir`'s (which a WLAN direction never fills).
    pub(super) fn queue_len(&self, d: DirId) -> usize {
        match self.wlan_of.get(d.index()).copied().flatten() {
            Some(wd) => self.wlans[wd.w as usize].dcf.queued(wd.from as usize),
            None => self.dirs[d.index()].queue_len(),
        }
    }

    /// Whether direction `d`'s queue takes a packet of `size` bytes now.
    pub(super) fn has_room(&self, d: DirId, size: u32) -> bool {
        match self.wlan_of.get(d.index()).copied().flatten() {
            Some(wd) => {
                let wlan = &self.wlans[wd.w as usize];
                wlan.dcf.queued(wd.from as usize) < wlan.queue
            }
            None => self.dirs[d.index()].has_room(size),
        }
    }

    /// Direction `d`, over a WLAN, takes a packet (from `send_on`).
    pub(super) fn wlan_offer(&mut self, wd: WlanDir, d: DirId, f: Frame) {
        let now = self.q.now();
        self.dirs[d.index()].stats.offered += 1;
        if !self.dirs[d.index()].is_up() {
            // The mobile host is not associated with this access point (a machine that
            // sends without asking whether its interface is up).
            return self.wlan_gone(d, f);
        }
        let wlan = &mut self.wlans[wd.w as usize];
        if wlan.dcf.queued(wd.from as usize) >= wlan.queue {
            self.dirs[d.index()].stats.drops += 1;
            self.link_status(d, &f, false);
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
        let mut out = std::mem::take(&mut wlan.out);
        wlan.dcf.on_event(now, &mut out);
        self.wlan_schedule(w);
        for ev in out.drain(..) {
            match ev {
                WlanEvent::Delivered {
                    payload: (d, f), ..
                } if !self.dirs[d.index()].is_up() => {
                    // On the air as the mobile host left: lost with the association.
                    self.wlan_gone(d, f);
                }
                WlanEvent::Delivered {
                    payload: (d, f), ..
                } => {
                    // The direction's utilization: the air time of its delivered frames
                    // with their ACKs (failed attempts are the medium's, not its).
                    let p = *self.wlans[w as usize].dcf.params();
                    let air = p.data_time(f.packet.size()) + p.sifs + p.ack_time();
                    let dir = &mut self.dirs[d.index()];
                    dir.stats.busy = dir.stats.busy + air;
                    dir.stats.delivered += 1;
                    let to = dir.params.to;
                    if !self.link_status[d.index()].is_empty() {
                        let from = self.wlan_of[d.index()].expect("a WLAN direction").from;
                        self.wlans[w as usize].unacked[from as usize] = Some((d, f.clone()));
                    }
                    let k = self.frames.insert(f);
                    self.receive(to, k, None);
                }
                WlanEvent::Dropped {
                    station,
                    payload: (d, f),
                } => {
                    self.dirs[d.index()].stats.lost_packets += 1;
                    self.link_status(d, &f, false);
                    self.lost(f, d, Loss::Channel);
                    self.wlan_room(w, station);
                }
                WlanEvent::Acked { station } => {
                    if let Some((d, p)) = self.wlans[w as usize].unacked[station].take() {
                        self.link_status(d, &p, true);
                    }
                    self.wlan_room(w, station);
                }
            }
        }
        self.wlans[w as usize].out = out;
    }

    /// Direction `d` lost its peer (the mobile host left the access point): the frames
    /// its station still holds for it are dropped, counted as outage losses (`purge`,
    /// IEEE 802.11-2016 section 11.3.3). Nothing for a direction that is not a WLAN's.
    pub(super) fn wlan_disassociate(&mut self, d: DirId) {
        let Some(wd) = self.wlan_of.get(d.index()).copied().flatten() else {
            return;
        };
        let now = self.q.now();
        let mut gone = Vec::new();
        self.wlans[wd.w as usize]
            .dcf
            .purge(now, wd.from as usize, |(dir, _)| *dir == d, &mut gone);
        for (d, f) in gone {
            self.wlan_gone(d, f);
        }
        self.wlan_schedule(wd.w);
        self.wlan_room(wd.w, wd.from as usize);
    }

    /// A frame of direction `d` lost because its peer is not associated: an outage loss.
    fn wlan_gone(&mut self, d: DirId, f: Frame) {
        let stats = &mut self.dirs[d.index()].stats;
        stats.lost_packets += 1;
        stats.outage_losses += 1;
        self.link_status(d, &f, false);
        self.lost(f, d, Loss::Outage);
    }

    /// The machines on direction `d` that asked learn what its MAC did with `p`.
    fn link_status(&mut self, d: DirId, f: &Frame, acked: bool) {
        let n = self.link_status[d.index()].len();
        if n > 0 {
            self.show_aside(f.clone(), n, |s, j| {
                let (m, i) = s.link_status[d.index()][j];
                (
                    m,
                    if acked {
                        At::LinkAcked(i)
                    } else {
                        At::LinkDropped(i)
                    },
                )
            });
        }
    }

    /// A station's queue lost its head frame: machines waiting on its directions go on.
    fn wlan_room(&mut self, w: u32, station: usize) {
        for k in 0..self.wlans[w as usize].dirs[station].len() {
            let d = self.wlans[w as usize].dirs[station][k];
            self.wake_waiters(d, true);
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
