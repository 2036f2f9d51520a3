//! Stores the engine's `PackedHeap` and the std heap on `Key` (`Heap`) are measured
//! against (benches/event_queue). Each pops in `Key` order like the heap
//! (crates/hetpath-sim/tests/it/event_queue_candidates.rs).

use hetpath_sim::engine::{Heap, HeapKey, Key, Pending};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A binary heap of 24-byte (key, slot) entries with the events in a slab: sifting moves
/// less than the engine's 32-byte entries, at the cost of one more indirection.
pub struct KeysSlab<E> {
    heap: BinaryHeap<Reverse<(Key, u32)>>,
    events: Vec<Option<E>>,
    free: Vec<u32>,
}

impl<E> Default for KeysSlab<E> {
    fn default() -> Self {
        KeysSlab {
            heap: BinaryHeap::new(),
            events: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<E> Pending<E> for KeysSlab<E> {
    fn push(&mut self, key: Key, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.events[s as usize] = Some(event);
                s
            }
            None => {
                self.events.push(Some(event));
                (self.events.len() - 1) as u32
            }
        };
        self.heap.push(Reverse((key, slot)));
    }
    fn peek(&self) -> Option<Key> {
        self.heap.peek().map(|e| e.0 .0)
    }
    fn pop(&mut self) -> Option<(Key, E)> {
        let Reverse((key, slot)) = self.heap.pop()?;
        self.free.push(slot);
        let event = self.events[slot as usize].take().expect("a queued slot");
        Some((key, event))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// A radix heap on the key packed as `time << 64 | seq`. It needs every key pushed to be
/// at least the last one popped, which the engine's clock gives (times are clamped to
/// now, and new sequence numbers grow) except for a reserved sequence number queued late:
/// such keys wait in a small heap that pops first.
pub struct Radix<E> {
    /// Bucket 0 holds the key equal to `last`; bucket b > 0 the keys whose highest bit
    /// that differs from `last` is bit b - 1.
    buckets: Vec<Vec<(u128, E)>>,
    /// Bit b - 1 is set when bucket b > 0 holds keys.
    occupied: u128,
    last: u128,
    early: Heap<E>,
    len: usize,
}

impl<E> Default for Radix<E> {
    fn default() -> Self {
        Radix {
            buckets: (0..=128).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: 0,
            early: Heap::default(),
            len: 0,
        }
    }
}

impl<E> Radix<E> {
    fn put(&mut self, k: u128, event: E) {
        let b = 128 - (k ^ self.last).leading_zeros() as usize;
        self.buckets[b].push((k, event));
        if b > 0 {
            self.occupied |= 1 << (b - 1);
        }
    }

    /// The lowest non-empty bucket above 0.
    fn lowest(&self) -> Option<usize> {
        (self.occupied != 0).then(|| self.occupied.trailing_zeros() as usize + 1)
    }
}

impl<E> Pending<E> for Radix<E> {
    fn push(&mut self, key: Key, event: E) {
        let k = key.packed();
        if k < self.last {
            self.early.push(key, event);
        } else {
            self.put(k, event);
        }
        self.len += 1;
    }

    fn peek(&self) -> Option<Key> {
        if let Some(k) = self.early.peek() {
            return Some(k);
        }
        if !self.buckets[0].is_empty() {
            return Some(Key::from_packed(self.last));
        }
        let b = self.lowest()?;
        self.buckets[b]
            .iter()
            .map(|e| e.0)
            .min()
            .map(Key::from_packed)
    }

    fn pop(&mut self) -> Option<(Key, E)> {
        if let Some(e) = self.early.pop() {
            self.len -= 1;
            return Some(e);
        }
        if self.buckets[0].is_empty() {
            // Move the lowest bucket down around its minimum, which lands in bucket 0.
            let b = self.lowest()?;
            self.occupied &= !(1 << (b - 1));
            let mut moving = std::mem::take(&mut self.buckets[b]);
            self.last = moving
                .iter()
                .map(|e| e.0)
                .min()
                .expect("an occupied bucket");
            for (k, event) in moving.drain(..) {
                self.put(k, event);
            }
            self.buckets[b] = moving;
        }
        let (k, event) = self.buckets[0].pop()?;
        self.len -= 1;
        Some((Key::from_packed(k), event))
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The entries in a ring sorted by key: new events mostly go at or near the back, so an
/// insertion moves few entries while few are pending; it is O(pending) in general.
pub struct SortedDeque<E>(VecDeque<(Key, E)>);

impl<E> Default for SortedDeque<E> {
    fn default() -> Self {
        SortedDeque(VecDeque::new())
    }
}

impl<E> Pending<E> for SortedDeque<E> {
    fn push(&mut self, key: Key, event: E) {
        if self.0.back().is_none_or(|b| b.0 < key) {
            self.0.push_back((key, event));
        } else {
            let i = self.0.partition_point(|e| e.0 < key);
            self.0.insert(i, (key, event));
        }
    }
    fn peek(&self) -> Option<Key> {
        self.0.front().map(|e| e.0)
    }
    fn pop(&mut self) -> Option<(Key, E)> {
        self.0.pop_front()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A key a `DaryHeap` may hold (`HeapKey`: the `Key` itself, or packed into one `u128`)
/// whose comparison the heap can rely on.
///
/// # Safety
/// `cmp` must not panic: the heap moves entries through a hole while comparing.
pub unsafe trait SortKey: HeapKey {}

// SAFETY: the derived lexicographic comparison of two integers does not panic.
unsafe impl SortKey for Key {}

// SAFETY: comparing two integers does not panic.
unsafe impl SortKey for u128 {}

/// An implicit min-heap with `D` children per node: half (D = 4) or a third (D = 8) of a
/// binary heap's depth, at the cost of choosing the least of up to `D` children per level.
/// A pop moves the last entry into the root's place and sifts it down; with `TO_BOTTOM`
/// (as std's `BinaryHeap` does) it first walks the hole down to a leaf without comparing
/// that entry, which usually belongs near the bottom, then sifts it up from there.
pub struct DaryHeap<E, const D: usize, K, const TO_BOTTOM: bool = false> {
    entries: Vec<(K, E)>,
}

impl<E, const D: usize, K, const TO_BOTTOM: bool> Default for DaryHeap<E, D, K, TO_BOTTOM> {
    fn default() -> Self {
        DaryHeap {
            entries: Vec::new(),
        }
    }
}

impl<E, const D: usize, K: SortKey, const TO_BOTTOM: bool> DaryHeap<E, D, K, TO_BOTTOM> {
    /// Moves the entry at `i` up past every parent with a larger key.
    fn sift_up(&mut self, mut i: usize) {
        let base = self.entries.as_mut_ptr();
        // SAFETY: every index is below len; the entry read out is written back once, to
        // the hole, after the moves (no comparison between them panics: `SortKey`).
        unsafe {
            let moving = std::ptr::read(base.add(i));
            while i > 0 {
                let parent = (i - 1) / D;
                if moving.0 >= (*base.add(parent)).0 {
                    break;
                }
                std::ptr::copy_nonoverlapping(base.add(parent), base.add(i), 1);
                i = parent;
            }
            std::ptr::write(base.add(i), moving);
        }
    }

    /// Moves the entry at `i` down past every least child with a smaller key (with
    /// `TO_BOTTOM`, from the root only: the walk back up stops at the root).
    fn sift_down(&mut self, mut i: usize) {
        let len = self.entries.len();
        let base = self.entries.as_mut_ptr();
        // SAFETY: as in `sift_up`; children are read only below len.
        unsafe {
            let moving = std::ptr::read(base.add(i));
            loop {
                let first = D * i + 1;
                let mut least = first;
                if first + D <= len {
                    for c in first + 1..first + D {
                        if (*base.add(c)).0 < (*base.add(least)).0 {
                            least = c;
                        }
                    }
                } else if first < len {
                    for c in first + 1..len {
                        if (*base.add(c)).0 < (*base.add(least)).0 {
                            least = c;
                        }
                    }
                } else {
                    break;
                }
                if !TO_BOTTOM && (*base.add(least)).0 >= moving.0 {
                    break;
                }
                std::ptr::copy_nonoverlapping(base.add(least), base.add(i), 1);
                i = least;
            }
            std::ptr::write(base.add(i), moving);
        }
        if TO_BOTTOM {
            self.sift_up(i);
        }
    }
}

impl<E, const D: usize, K: SortKey, const TO_BOTTOM: bool> Pending<E>
    for DaryHeap<E, D, K, TO_BOTTOM>
{
    fn push(&mut self, key: Key, event: E) {
        self.entries.push((K::of(key), event));
        self.sift_up(self.entries.len() - 1);
    }
    fn peek(&self) -> Option<Key> {
        self.entries.first().map(|e| e.0.key())
    }
    fn pop(&mut self) -> Option<(Key, E)> {
        let mut last = self.entries.pop()?;
        if !self.entries.is_empty() {
            std::mem::swap(&mut last, &mut self.entries[0]);
            self.sift_down(0);
        }
        Some((last.0.key(), last.1))
    }
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Any store with its minimum held outside it when that minimum was pushed while nothing
/// earlier was pending: an event scheduled before all others and popped next never
/// touches the store.
pub struct MinOutside<E, P> {
    /// When set, earlier than every key in `rest`.
    front: Option<(Key, E)>,
    rest: P,
}

impl<E, P: Default> Default for MinOutside<E, P> {
    fn default() -> Self {
        MinOutside {
            front: None,
            rest: P::default(),
        }
    }
}

impl<E, P: Pending<E>> Pending<E> for MinOutside<E, P> {
    fn push(&mut self, key: Key, event: E) {
        match &self.front {
            Some((f, _)) if key < *f => {
                let (k, e) = self.front.replace((key, event)).expect("a front entry");
                self.rest.push(k, e);
            }
            Some(_) => self.rest.push(key, event),
            None if self.rest.peek().is_none_or(|k| key < k) => self.front = Some((key, event)),
            None => self.rest.push(key, event),
        }
    }
    fn peek(&self) -> Option<Key> {
        match &self.front {
            Some((k, _)) => Some(*k),
            None => self.rest.peek(),
        }
    }
    fn pop(&mut self) -> Option<(Key, E)> {
        self.front.take().or_else(|| self.rest.pop())
    }
    fn len(&self) -> usize {
        self.rest.len() + usize::from(self.front.is_some())
    }
}
