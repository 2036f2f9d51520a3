//! A host's per-connection timer entries in the event queue, kept few.
//!
//! A host hands over each connection's deadline as it is armed (`Host::poll_armed`), and
//! an earlier deadline supersedes a later one, which stays queued and comes up as a no-op.
//! A paced sender arms a pacing deadline before its RTO on every segment, so queued RTO
//! entries pile up (about 4,000 in the paced dumbbell, against 30 unpaced) and every event
//! pays for a deeper heap.
//!
//! So a deadline no earlier than one of the connection's queued entries is not queued at
//! once: it is deferred with the sequence number it would have had, and queued when the
//! connection's entries before it have come up. Entries then leave the queue in exactly
//! the order eager queueing gives (time, then arming order); only entries superseded
//! while deferred are never queued at all.

use super::{Ev, EventQueue};
use hetpath_proto::{ConnId, Time};

#[derive(Default)]
pub(super) struct ConnTimers {
    conns: Vec<Entries>,
}

#[derive(Default)]
struct Entries {
    /// Times of the entries in the event queue, latest first: they leave from the end.
    queued: Vec<Time>,
    /// The live deadline not queued yet, with its reserved sequence number.
    deferred: Option<(Time, u64)>,
}

impl ConnTimers {
    /// Connection `c` armed a deadline at `t` (earlier than its previous one): queue the
    /// event `ev` for it, or defer it behind an earlier queued entry.
    pub(super) fn arm(&mut self, q: &mut EventQueue, c: ConnId, t: Time, ev: Ev) {
        if self.conns.len() <= c.index() {
            self.conns.resize_with(c.index() + 1, Entries::default);
        }
        let e = &mut self.conns[c.index()];
        let seq = q.reserve_seq();
        match e.queued.last() {
            Some(&first) if first <= t => e.deferred = Some((t, seq)),
            _ => {
                e.deferred = None; // superseded by t
                e.queued.push(t);
                q.schedule_reserved(t, seq, ev);
            }
        }
    }

    /// Connection `c`'s earliest queued entry came up: queue its deferred deadline if no
    /// queued entry is left before it.
    pub(super) fn fired(&mut self, q: &mut EventQueue, c: ConnId, ev: Ev) {
        let e = &mut self.conns[c.index()];
        e.queued.pop();
        if let Some((t, seq)) = e.deferred {
            if e.queued.last().is_none_or(|&first| t < first) {
                e.deferred = None;
                e.queued.push(t);
                q.schedule_reserved(t, seq, ev);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::MachineId;

    fn ev(c: ConnId) -> Ev {
        Ev::ConnTimer(MachineId(0), c)
    }

    /// Pops every entry, telling `timers` as the simulation does.
    fn drain(q: &mut EventQueue, timers: &mut ConnTimers) -> Vec<(Time, usize)> {
        let mut out = vec![];
        while let Some((t, e)) = q.pop_until(Time::MAX) {
            let Ev::ConnTimer(_, c) = e else {
                unreachable!()
            };
            timers.fired(q, c, ev(c));
            out.push((t, c.index()));
        }
        out
    }

    #[test]
    fn a_later_deadline_waits_behind_a_queued_entry_and_keeps_its_place() {
        let (mut q, mut timers) = (EventQueue::default(), ConnTimers::default());
        let (a, b) = (ConnId(0), ConnId(1));
        timers.arm(&mut q, a, Time(100), ev(a)); // an RTO
        timers.arm(&mut q, a, Time(10), ev(a)); // pacing: earlier, queued
        assert_eq!(q.pending(), 2);
        timers.arm(&mut q, a, Time(50), ev(a)); // superseded at once below
        timers.arm(&mut q, a, Time(40), ev(a)); // deferred behind 10
        timers.arm(&mut q, b, Time(40), ev(b)); // armed after a's 40: runs after it
        assert_eq!(q.pending(), 3, "neither 50 nor 40 queued");
        assert_eq!(
            drain(&mut q, &mut timers),
            [(Time(10), 0), (Time(40), 0), (Time(40), 1), (Time(100), 0)]
        );
    }

    #[test]
    fn an_earlier_deadline_drops_the_deferred_one() {
        let (mut q, mut timers) = (EventQueue::default(), ConnTimers::default());
        let a = ConnId(0);
        timers.arm(&mut q, a, Time(10), ev(a));
        timers.arm(&mut q, a, Time(8), ev(a));
        timers.arm(&mut q, a, Time(9), ev(a)); // deferred behind 8
        timers.arm(&mut q, a, Time(5), ev(a)); // supersedes 9
        assert_eq!(
            drain(&mut q, &mut timers),
            [(Time(5), 0), (Time(8), 0), (Time(10), 0)]
        );
    }
}
