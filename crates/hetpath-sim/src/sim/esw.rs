//! ESW links in the simulation (`crate::esw_link`): a link direction whose packets go to
//! an `EswLink` side instead of its `LinkDir` queue. The `LinkDir` stays for routing, the
//! capture tap and the IP-level counters; the cells, the slots and the ARQ live in the
//! `EswLink`, whose slot and arrival events the queue carries as `Ev::EswSlot` and
//! `Ev::EswArrive`.

use super::{DirId, Ev, LinkId, Simulation};
use crate::esw_link::{EswLink, EswStats, Outcome};
use crate::link::{Frame, LinkDir};
use crate::trace::Loss;

/// An ESW link and the two directions it carries (a -> b first).
pub(super) struct EswSlot {
    pub(super) link: EswLink,
    pub(super) dirs: [DirId; 2],
}

impl Simulation {
    /// Adds a link whose two directions run over `link` (`ab` and `ba` give the routing
    /// and the names; their queues and channels are not used).
    pub fn add_esw_link(&mut self, ab: LinkDir, ba: LinkDir, link: EswLink) -> LinkId {
        let id = self.add_link(ab, ba);
        let dirs = self.link_dirs(id);
        let e = self.esw.len() as u32;
        self.esw_of.resize(self.dirs.len(), None);
        for (side, d) in dirs.iter().enumerate() {
            self.esw_of[d.index()] = Some((e, side as u8));
        }
        self.esw.push(EswSlot { link, dirs });
        id
    }

    /// The ESW counters of direction `d`, if it runs over an ESW link.
    pub fn esw_stats(&self, d: DirId) -> Option<EswStats> {
        let (e, side) = self.esw_of.get(d.index()).copied().flatten()?;
        Some(self.esw[e as usize].link.stats(side as usize))
    }

    /// Direction `d` of ESW link `e` takes a packet (from `send_on`).
    pub(super) fn esw_offer(&mut self, e: u32, side: u8, d: DirId, f: Frame) {
        let now = self.q.now();
        let size = f.packet.size() as u64;
        // The tap sees a packet the link takes, as the link starts on it.
        let copy = self.dirs[d.index()].capture.is_some().then(|| f.clone());
        match self.esw[e as usize].link.offer(now, side as usize, f) {
            Ok(out) => {
                let dir = &mut self.dirs[d.index()];
                dir.stats.tx_packets += 1;
                dir.stats.tx_bytes += size;
                if let (Some(tap), Some(f)) = (&mut dir.capture, copy) {
                    tap(now, &f);
                }
                self.esw_apply(e, out);
            }
            Err(f) => {
                self.dirs[d.index()].stats.drops += 1;
                self.lost(f, d, Loss::Queue);
            }
        }
    }

    pub(super) fn esw_slot(&mut self, e: u32, side: u8) {
        let now = self.q.now();
        let out = self.esw[e as usize].link.on_slot(now, side as usize);
        self.esw_apply(e, out);
    }

    pub(super) fn esw_arrive(&mut self, e: u32, side: u8) {
        let now = self.q.now();
        let out = self.esw[e as usize].link.on_arrival(now, side as usize);
        self.esw_apply(e, out);
    }

    /// Schedules what the link asked for, then reports its losses and hands up what it
    /// delivered (which may send on the link again).
    fn esw_apply(&mut self, e: u32, out: Outcome) {
        for (side, t) in out.slots {
            self.q.schedule(t, Ev::EswSlot(e, side as u8));
        }
        if let Some((side, t)) = out.arrival {
            self.q.schedule(t, Ev::EswArrive(e, side as u8));
        }
        let dirs = self.esw[e as usize].dirs;
        for (side, f) in out.lost {
            let d = dirs[side];
            self.dirs[d.index()].stats.lost_packets += 1;
            self.lost(f, d, Loss::Channel);
        }
        for (side, f) in out.delivered {
            let to = self.dirs[dirs[side].index()].params.to;
            self.receive(to, f);
        }
    }
}
