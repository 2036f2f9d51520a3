//! The event queue: events ordered by (time, insertion sequence), so events at the same
//! instant run in the order they were scheduled and every run is reproducible
//! (docs/architecture.md, convention 5). The queue jumps from event to event; nothing ticks.
//!
//! The clock and the sequence numbers (`Queue`) are kept apart from the store of pending
//! entries (`Pending`), so that benches/event_queue can measure other stores behind the
//! same logic. The simulation's store is `FrontHeap`: a binary heap on the key packed into
//! one `u128` (one comparison per sift step instead of two, docs/performance.md, "Event
//! queue, d-ary heap") with its least entry held in front of it when that entry
//! was pushed before everything pending, and the events packed into a `u128` too
//! ("Engine speed, fourth round"). `PackedHeap` (std's heap on the packed
//! key, any event type; `EventQueue`) and `Heap` are kept for the benchmarks.

use hetpath_proto::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An entry's place in the queue: its time, then the order it was scheduled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub time: Time,
    pub seq: u64,
}

impl Key {
    /// The key as `time << 64 | seq`, which orders like the key.
    pub fn packed(self) -> u128 {
        (self.time.0 as u128) << 64 | self.seq as u128
    }

    pub fn from_packed(k: u128) -> Key {
        Key {
            time: Time((k >> 64) as u64),
            seq: k as u64,
        }
    }
}

/// Where a queue keeps its pending entries: any store that pops them in `Key` order.
/// Keys are unique; a pushed key may come before keys already popped (a reserved sequence
/// number queued late), and must then still come out first.
pub trait Pending<E>: Default {
    fn push(&mut self, key: Key, event: E);
    /// The smallest key held.
    fn peek(&self) -> Option<Key>;
    fn pop(&mut self) -> Option<(Key, E)>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a heap entry holds its key: as `Key`, or packed into one `u128` (`Key::packed`),
/// which orders the same and compares in one step.
pub trait HeapKey: Copy + Ord {
    fn of(key: Key) -> Self;
    fn key(self) -> Key;
}

impl HeapKey for Key {
    fn of(key: Key) -> Self {
        key
    }
    fn key(self) -> Key {
        self
    }
}

impl HeapKey for u128 {
    fn of(key: Key) -> Self {
        key.packed()
    }
    fn key(self) -> Key {
        Key::from_packed(self)
    }
}

/// A binary heap of (key, event) entries, the key held as `K`.
pub struct BinaryStore<E, K>(BinaryHeap<Entry<E, K>>);

/// The engine's store: a sift step compares one `u128` rather than a time then a
/// sequence number.
pub type PackedHeap<E> = BinaryStore<E, u128>;

/// The same heap compared on `Key` (the engine's store until `PackedHeap`; the
/// benchmark's reference).
pub type Heap<E> = BinaryStore<E, Key>;

struct Entry<E, K> {
    key: K,
    event: E,
}

impl<E, K: Ord> PartialEq for Entry<E, K> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E, K: Ord> Eq for Entry<E, K> {}
impl<E, K: Ord> PartialOrd for Entry<E, K> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E, K: Ord> Ord for Entry<E, K> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

impl<E, K: HeapKey> Default for BinaryStore<E, K> {
    fn default() -> Self {
        BinaryStore(BinaryHeap::new())
    }
}

impl<E, K: HeapKey> Pending<E> for BinaryStore<E, K> {
    fn push(&mut self, key: Key, event: E) {
        self.0.push(Entry {
            key: K::of(key),
            event,
        });
    }
    fn peek(&self) -> Option<Key> {
        self.0.peek().map(|e| e.key.key())
    }
    fn pop(&mut self) -> Option<(Key, E)> {
        self.0.pop().map(|e| (e.key.key(), e.event))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// An event that packs into one `u128` and back (`FrontHeap`).
pub trait Bits: Copy {
    fn to_bits(self) -> u128;
    fn from_bits(bits: u128) -> Self;
    /// Whether the event may be held in front of the heap (`FrontHeap`): true for the
    /// kinds often scheduled before everything pending and popped next.
    fn may_lead(&self) -> bool {
        true
    }
}

/// One `FrontHeap` entry: the packed key and the packed event.
#[derive(Clone, Copy)]
struct Slot {
    key: u128,
    bits: u128,
}

/// No entry (`FrontHeap::front`): no real key is `u128::MAX` (its sequence number would be
/// `u64::MAX`).
const NO_FRONT: u128 = u128::MAX;

/// A binary min-heap on the packed key (a pop walks the hole to a leaf, then sifts the
/// last entry up from there, as std's `BinaryHeap` does) with its least entry held
/// outside it when that entry was pushed before everything pending: an event scheduled
/// ahead of all others (a link's transmission end, an arrival) and popped next never
/// touches the heap. Events are packed into a `u128` (`Bits`), so that a pushed entry is
/// built in registers and written once, where it ends.
pub struct FrontHeap<E> {
    /// Earlier than every entry of `v`; `key == NO_FRONT` when there is none.
    front: Slot,
    v: Vec<Slot>,
    _event: std::marker::PhantomData<E>,
}

impl<E> Default for FrontHeap<E> {
    fn default() -> Self {
        FrontHeap {
            front: Slot {
                key: NO_FRONT,
                bits: 0,
            },
            v: Vec::new(),
            _event: std::marker::PhantomData,
        }
    }
}

impl<E> FrontHeap<E> {
    /// Writes `slot` into the hole at `i` after moving every parent with a larger key down.
    ///
    /// # Safety
    /// `i` is below the vector's capacity and every index below `i` holds an entry.
    #[inline(always)]
    unsafe fn sift_up_into(base: *mut Slot, mut i: usize, slot: Slot) {
        // SAFETY: the caller's contract: `i` and every parent of it are below the
        // capacity, and each parent read holds an entry.
        unsafe {
            while i > 0 {
                let parent = (i - 1) / 2;
                let p = *base.add(parent);
                if slot.key >= p.key {
                    break;
                }
                *base.add(i) = p;
                i = parent;
            }
            *base.add(i) = slot;
        }
    }

    #[inline(always)]
    fn heap_push(&mut self, slot: Slot) {
        let len = self.v.len();
        self.v.reserve(1);
        // SAFETY: the capacity exceeds `len`; indices below `len` hold entries; the slot
        // at `len` is written (by the sift) before the length covers it.
        unsafe {
            Self::sift_up_into(self.v.as_mut_ptr(), len, slot);
            self.v.set_len(len + 1);
        }
    }

    #[inline(always)]
    fn heap_pop(&mut self) -> Option<Slot> {
        let last = self.v.pop()?;
        let len = self.v.len();
        if len == 0 {
            return Some(last);
        }
        let base = self.v.as_mut_ptr();
        // SAFETY: every index read or written is below `len`; the root is copied out
        // first, so it is the hole, which each step moves down to the child copied up;
        // `last`, already out of the vector, fills the final hole.
        unsafe {
            let top = *base;
            let mut hole = 0;
            let mut child = 1;
            while child + 1 < len {
                child += usize::from((*base.add(child + 1)).key < (*base.add(child)).key);
                *base.add(hole) = *base.add(child);
                hole = child;
                child = 2 * hole + 1;
            }
            if child + 1 == len {
                *base.add(hole) = *base.add(child);
                hole = child;
            }
            Self::sift_up_into(base, hole, last);
            Some(top)
        }
    }
}

impl<E: Bits> Pending<E> for FrontHeap<E> {
    #[inline(always)]
    fn push(&mut self, key: Key, event: E) {
        let slot = Slot {
            key: key.packed(),
            bits: event.to_bits(),
        };
        if slot.key >= self.front.key {
            self.heap_push(slot);
        } else if !event.may_lead() {
            // Before the front entry, which must then wait in the heap too.
            if self.front.key != NO_FRONT {
                let old = std::mem::replace(&mut self.front.key, NO_FRONT);
                self.heap_push(Slot {
                    key: old,
                    bits: self.front.bits,
                });
            }
            self.heap_push(slot);
        } else if self.front.key != NO_FRONT {
            // Before the front entry, so before everything in the heap: it takes its place.
            let old = std::mem::replace(&mut self.front, slot);
            self.heap_push(old);
        } else if self.v.first().is_none_or(|h| slot.key < h.key) {
            self.front = slot;
        } else {
            self.heap_push(slot);
        }
    }
    #[inline(always)]
    fn peek(&self) -> Option<Key> {
        if self.front.key != NO_FRONT {
            return Some(Key::from_packed(self.front.key));
        }
        self.v.first().map(|e| Key::from_packed(e.key))
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<(Key, E)> {
        let slot = if self.front.key != NO_FRONT {
            std::mem::replace(
                &mut self.front,
                Slot {
                    key: NO_FRONT,
                    bits: 0,
                },
            )
        } else {
            self.heap_pop()?
        };
        Some((Key::from_packed(slot.key), E::from_bits(slot.bits)))
    }
    fn len(&self) -> usize {
        self.v.len() + usize::from(self.front.key != NO_FRONT)
    }
}

/// The engine's event queue.
pub type EventQueue<E> = Queue<E, PackedHeap<E>>;

/// An event queue over the store `P`: the clock, the sequence numbers and the count of
/// events run.
pub struct Queue<E, P> {
    pending: P,
    seq: u64,
    now: Time,
    executed: u64,
    /// Events asked for before the clock (run at it instead), and the first of them.
    past: Past<E>,
}

/// Events scheduled in the past: each is run at the current time, which no correct
/// caller asks for; counted always (a comparison the clamp makes anyway), reported by
/// the run's checks (`sim::invariants`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Past<E> {
    pub count: u64,
    /// The first: (the time asked for, the clock then, the event).
    pub first: Option<(Time, Time, E)>,
}

impl<E> Default for Past<E> {
    fn default() -> Self {
        Past {
            count: 0,
            first: None,
        }
    }
}

impl<E, P: Pending<E>> Default for Queue<E, P> {
    fn default() -> Self {
        Queue {
            pending: P::default(),
            seq: 0,
            now: Time::ZERO,
            executed: 0,
            past: Past::default(),
        }
    }
}

impl<E: Copy, P: Pending<E>> Queue<E, P> {
    /// `time`, or the clock if `time` is before it (noted as a past event).
    #[inline(always)]
    fn not_before_now(&mut self, time: Time, event: E) -> Time {
        if time < self.now {
            self.note_past(time, event)
        } else {
            time
        }
    }

    #[cold]
    #[inline(never)]
    fn note_past(&mut self, time: Time, event: E) -> Time {
        self.past.count += 1;
        if self.past.first.is_none() {
            self.past.first = Some((time, self.now, event));
        }
        self.now
    }

    /// The events scheduled (or run in place) at a time before the clock so far.
    pub fn past(&self) -> &Past<E> {
        &self.past
    }

    /// Schedules `event` at `time`; a time in the past is run now, and noted (`past`).
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: E) {
        let key = Key {
            time: self.not_before_now(time, event),
            seq: self.seq,
        };
        self.pending.push(key, event);
        self.seq += 1;
    }

    /// Takes the sequence number the next `schedule` would use, for an event that is
    /// queued later (`schedule_reserved`) but must keep its place among same-time events.
    #[inline(always)]
    pub fn reserve_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    /// Queues `event` at `time` with a sequence number from `reserve_seq`.
    #[inline(always)]
    pub fn schedule_reserved(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.seq, "sequence number not reserved");
        let time = self.not_before_now(time, event);
        self.pending.push(Key { time, seq }, event);
    }

    /// Pops the next event if it is due at or before `limit`, advancing the clock.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        if self.pending.peek()?.time > limit {
            return None;
        }
        let (key, event) = self.pending.pop()?;
        self.now = key.time;
        self.executed += 1;
        Some((key.time, event))
    }

    /// Lets the caller run an event in place, without queuing it, when it is the one
    /// `pop_until(limit)` would give next: its (time, reserved `seq`) comes before every
    /// queued event's and the time is not after `limit`. The clock and the count then move
    /// as if it had been scheduled and popped, so a run is the same either way. Returns
    /// whether it may.
    #[inline(always)]
    pub fn take_next(&mut self, time: Time, seq: u64, limit: Time) -> bool {
        let time = time.max(self.now);
        if time > limit || self.pending.peek().is_some_and(|k| k < Key { time, seq }) {
            return false;
        }
        self.now = time;
        self.executed += 1;
        true
    }

    /// The time of the next queued event, if any.
    #[inline(always)]
    pub fn next_time(&self) -> Option<Time> {
        self.pending.peek().map(|k| k.time)
    }

    /// Counts `n` events the caller ran in place, the last at `time` (`take_next`'s
    /// condition held for each), and moves the clock there.
    pub fn ran_in_place(&mut self, time: Time, n: u64) {
        self.now = self.now.max(time);
        self.executed += n;
        self.seq += n;
    }

    pub fn now(&self) -> Time {
        self.now
    }
    /// Moves the clock forward (used when a run ends at a time with no event).
    pub fn advance_to(&mut self, t: Time) {
        self.now = self.now.max(t);
    }
    pub fn executed(&self) -> u64 {
        self.executed
    }
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), 'c');
        q.schedule(Time(1), 'a');
        q.schedule(Time(5), 'd');
        q.schedule(Time(1), 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|e| e.1)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), Time(5));
        assert_eq!(q.executed(), 4);
    }

    #[test]
    fn packing_keeps_the_order() {
        let keys = [
            Key {
                time: Time(0),
                seq: u64::MAX,
            },
            Key {
                time: Time(1),
                seq: 0,
            },
            Key {
                time: Time(1),
                seq: 7,
            },
            Key {
                time: Time::MAX,
                seq: 3,
            },
        ];
        for w in keys.windows(2) {
            assert!(w[0].packed() < w[1].packed());
        }
        for k in keys {
            assert_eq!(Key::from_packed(k.packed()), k);
        }
    }

    #[test]
    fn respects_limit_and_clamps_past() {
        let mut q = EventQueue::default();
        q.schedule(Time(10), 1);
        assert!(q.pop_until(Time(9)).is_none());
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), 1)));
        q.schedule(Time(3), 2);
        assert_eq!(q.pop_until(Time::MAX), Some((Time(10), 2)));
    }

    /// An event asked for before the clock runs at it, and is noted: the first with the
    /// time asked for and the clock then, and how many.
    #[test]
    fn notes_events_scheduled_in_the_past() {
        let mut q = EventQueue::default();
        q.schedule(Time(10), 'a');
        q.pop_until(Time::MAX);
        q.schedule(Time(10), 'b');
        assert_eq!(q.past().count, 0, "at the clock is not in the past");
        q.schedule(Time(4), 'c');
        let seq = q.reserve_seq();
        q.schedule_reserved(Time(2), seq, 'd');
        assert_eq!(q.past().count, 2);
        assert_eq!(q.past().first, Some((Time(4), Time(10), 'c')));
    }
}
