//! ESW links in the simulation (`crate::esw_link`): a link direction whose packets go to
//! an `EswLink` side instead of its `LinkDir` queue. The `LinkDir` stays for routing, the
//! capture tap and the IP-level counters; the cells, the slots and the ARQ live in the
//! `EswLink`, whose slot and arrival events the queue carries as `Ev::EswSlot` and
//! `Ev::EswArrive`.

use super::{DirId, Ev, LinkId, Simulation};
use crate::esw_link::{EswLink, EswStats, Outcome};
use crate::link::{Frame, LinkDir};
use crate::trace::Loss;
use hetpath_proto::{Dur, Time};

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

    /// The datagrams direction `d`'s ESW link side holds (its backlog and ARQ window);
    /// 0 for a direction that is not an ESW link's.
    pub(super) fn esw_held(&self, d: DirId) -> u64 {
        self.esw_of
            .get(d.index())
            .copied()
            .flatten()
            .map_or(0, |(e, side)| {
                self.esw[e as usize].link.held(side as usize) as u64
            })
    }

    /// Direction `d` of ESW link `e` takes a packet (from `send_on`).
    pub(super) fn esw_offer(&mut self, e: u32, side: u8, d: DirId, f: Frame) {
        let now = self.q.now();
        let size = f.packet.size() as u64;
        // The tap sees a packet the link takes, as the link starts on it.
        let copy = self.dirs[d.index()].capture.is_some().then(|| f.clone());
        self.dirs[d.index()].stats.offered += 1;
        match self.esw[e as usize].link.offer(now, side as usize, f) {
            Ok(mut out) => {
                let dir = &mut self.dirs[d.index()];
                dir.stats.tx_packets += 1;
                dir.stats.tx_bytes += size;
                if let (Some(tap), Some(f)) = (&mut dir.capture, copy) {
                    tap(now, &f);
                }
                self.esw_apply(e, &mut out, None);
            }
            Err(f) => {
                self.dirs[d.index()].stats.drops += 1;
                self.lost(f, d, Loss::Queue);
            }
        }
    }

    /// A slot of `side` of ESW link `e`, and the ones after it in place (`esw_run`).
    pub(super) fn esw_slot(&mut self, e: u32, side: u8) {
        self.esw_run(e, side, Next::Slot);
    }

    /// The head of `side`'s wire arrives, and the cells after it in place (`esw_run`).
    pub(super) fn esw_arrive(&mut self, e: u32, side: u8) {
        self.esw_run(e, side, Next::Arrival);
    }

    /// Runs a slot or an arrival of `side`, then, while nothing comes out of the link
    /// and the same side's next one is the run's next event, that one in place of
    /// queuing it (`EventQueue::take_next`): a side sending into a shadowed channel runs
    /// thousands of slots with nothing else happening. The run is the same as with every
    /// one queued; `INLINE_MAX` bounds a stretch so the run loop still reports progress.
    fn esw_run(&mut self, e: u32, side: u8, what: Next) {
        const INLINE_MAX: u32 = 4096;
        let mut out = Outcome::default();
        let mut stretch = 0;
        while stretch < INLINE_MAX {
            stretch += 1;
            let now = self.q.now();
            let link = &mut self.esw[e as usize].link;
            match what {
                // Slots whose only outcome is the next slot run in the link itself.
                Next::Slot => {
                    let until = self
                        .q
                        .next_time()
                        .unwrap_or(Time::MAX)
                        .min(self.end + Dur(1));
                    let max = INLINE_MAX - stretch + 1;
                    let (n, last) = link.run_slots(now, side as usize, until, max, &mut out);
                    self.q.ran_in_place(last, n as u64 - 1);
                    stretch += n - 1;
                }
                Next::Arrival => link.on_arrival(now, side as usize, &mut out),
            }
            let Some((t, seq)) = self.esw_apply(e, &mut out, Some((side as usize, what))) else {
                return;
            };
            if stretch >= INLINE_MAX || !self.q.take_next(t, seq, self.end) {
                self.q.schedule_reserved(t, seq, what.event(e, side));
                return;
            }
        }
    }

    /// Schedules what the link asked for, then reports its losses and hands up what it
    /// delivered (which may send on the link again), leaving `out` empty. When nothing
    /// was lost or delivered, the `keep` kind of event of its side is not scheduled but
    /// returned, with the sequence number it would have had, for the caller to run in
    /// place.
    fn esw_apply(
        &mut self,
        e: u32,
        out: &mut Outcome,
        keep: Option<(usize, Next)>,
    ) -> Option<(Time, u64)> {
        let keep = keep.filter(|_| out.is_quiet());
        let mut kept = None;
        for (side, slot) in out.slot.iter_mut().enumerate() {
            let Some(t) = slot.take() else { continue };
            if keep == Some((side, Next::Slot)) {
                kept = Some((t, self.q.reserve_seq()));
            } else {
                self.q.schedule(t, Ev::EswSlot(e, side as u8));
            }
        }
        if let Some((side, t)) = out.arrival.take() {
            if keep == Some((side, Next::Arrival)) {
                kept = Some((t, self.q.reserve_seq()));
            } else {
                self.q.schedule(t, Ev::EswArrive(e, side as u8));
            }
        }
        let dirs = self.esw[e as usize].dirs;
        for (side, f) in out.lost.drain(..) {
            let d = dirs[side];
            self.dirs[d.index()].stats.lost_packets += 1;
            self.lost(f, d, Loss::Channel);
        }
        for (side, f) in out.delivered.drain(..) {
            let dir = &mut self.dirs[dirs[side].index()];
            dir.stats.delivered += 1;
            let to = dir.params.to;
            let k = self.frames.insert(f);
            self.receive(to, k, None);
        }
        kept
    }
}

/// The two kinds of ESW link event.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Next {
    Slot,
    Arrival,
}

impl Next {
    fn event(self, e: u32, side: u8) -> Ev {
        match self {
            Next::Slot => Ev::EswSlot(e, side),
            Next::Arrival => Ev::EswArrive(e, side),
        }
    }
}
