//! Stores the engine's `Heap` is measured against (benches/event_queue, issue 19). Each
//! pops in `Key` order like the heap (tests/event_queue_candidates.rs).

use hetpath_sim::engine::{Heap, Key, Pending};
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

fn pack(k: Key) -> u128 {
    (k.time.0 as u128) << 64 | k.seq as u128
}

fn unpack(k: u128) -> Key {
    Key {
        time: hetpath_proto::Time((k >> 64) as u64),
        seq: k as u64,
    }
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
        let k = pack(key);
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
            return Some(unpack(self.last));
        }
        let b = self.lowest()?;
        self.buckets[b].iter().map(|e| e.0).min().map(unpack)
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
        Some((unpack(k), event))
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
