//! The deadlines of a host's connections: one pending entry per connection, in a heap
//! ordered by (time, arming order); entries superseded by an earlier deadline stay in
//! place and are skipped when they come up. A host reports only the earliest deadline to
//! its driver, whatever its number of connections; or, for a driver that keeps one timer
//! per connection (`keyed`), each new entry as it is made.

use crate::ids::ConnId;
use crate::time::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Time, u64, ConnId)>>,
    /// Each connection's earliest pending entry.
    pending: Vec<Option<Time>>,
    seq: u64,
    /// Keyed mode: new entries go here for the driver to queue, instead of the heap.
    outbox: Option<VecDeque<(ConnId, Time)>>,
}

impl Timers {
    /// Makes sure `c` is woken by `t`: a new entry only if it is earlier than the pending
    /// one (a later deadline is found when the earlier entry fires and does nothing).
    pub fn arm(&mut self, c: ConnId, t: Time) {
        if self.pending.len() <= c.index() {
            self.pending.resize(c.index() + 1, None);
        }
        if self.pending[c.index()].is_none_or(|p| t < p) {
            self.pending[c.index()] = Some(t);
            match &mut self.outbox {
                Some(out) => out.push_back((c, t)),
                None => {
                    self.heap.push(Reverse((t, self.seq, c)));
                    self.seq += 1;
                }
            }
        }
    }

    /// Hands each new entry to the driver (`pop_armed`) instead of keeping a heap.
    pub fn keyed(&mut self) {
        self.outbox.get_or_insert_with(VecDeque::new);
    }

    /// The next entry made and not yet handed out (keyed mode).
    pub fn pop_armed(&mut self) -> Option<(ConnId, Time)> {
        self.outbox.as_mut()?.pop_front()
    }

    /// Keyed mode: the entry of `c` at `now` came up; true if it is still `c`'s pending
    /// one (not superseded), which is then cleared.
    pub fn take_due(&mut self, c: ConnId, now: Time) -> bool {
        let live = self.pending.get(c.index()) == Some(&Some(now));
        if live {
            self.pending[c.index()] = None;
        }
        live
    }

    /// The earliest entry, live or not.
    pub fn next(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.0 .0)
    }

    /// The next connection whose pending entry is due by `now`, in (time, arming) order.
    pub fn pop_due(&mut self, now: Time) -> Option<ConnId> {
        while let Some(&Reverse((t, _, c))) = self.heap.peek() {
            if t > now {
                return None;
            }
            self.heap.pop();
            if self.pending[c.index()] == Some(t) {
                self.pending[c.index()] = None;
                return Some(c);
            }
        }
        None
    }

    /// Drops superseded entries from the top, so that `next` names a live deadline.
    pub fn prune(&mut self) {
        while let Some(&Reverse((t, _, c))) = self.heap.peek() {
            if self.pending[c.index()] == Some(t) {
                return;
            }
            self.heap.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_deadlines_supersede_and_order_is_time_then_arming() {
        let mut t = Timers::default();
        t.arm(ConnId(0), Time(50));
        t.arm(ConnId(1), Time(20));
        t.arm(ConnId(0), Time(20)); // earlier: a second entry for 0
        t.arm(ConnId(1), Time(30)); // later: ignored, 1 stays at 20
        assert_eq!(t.next(), Some(Time(20)));
        assert_eq!(t.pop_due(Time(20)), Some(ConnId(1)));
        assert_eq!(t.pop_due(Time(20)), Some(ConnId(0)));
        assert_eq!(t.pop_due(Time(20)), None);
        // 0's entry at 50 is stale now.
        t.prune();
        assert_eq!(t.next(), None);
        t.arm(ConnId(0), Time(70));
        assert_eq!(t.pop_due(Time(60)), None);
        assert_eq!(t.pop_due(Time(70)), Some(ConnId(0)));
    }

    #[test]
    fn keyed_mode_hands_out_each_entry_and_says_which_are_live() {
        let mut t = Timers::default();
        t.keyed();
        t.arm(ConnId(0), Time(50));
        t.arm(ConnId(0), Time(20));
        t.arm(ConnId(0), Time(30));
        let armed: Vec<_> = std::iter::from_fn(|| t.pop_armed()).collect();
        assert_eq!(armed, [(ConnId(0), Time(50)), (ConnId(0), Time(20))]);
        assert_eq!(t.next(), None, "no heap in keyed mode");
        assert!(!t.take_due(ConnId(0), Time(50)), "superseded");
        assert!(t.take_due(ConnId(0), Time(20)));
        assert!(!t.take_due(ConnId(0), Time(20)), "taken once");
    }
}
