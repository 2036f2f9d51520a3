//! The benchmark's event-queue stores (`benches/event_queue` of crates/hetpath-bench)
//! and the simulation's (`FrontHeap`) pop like the engine's heap: every answer of a
//! queue over each store, on random workloads with many equal times and reserved
//! sequence numbers queued late, equals the heap's.

#[path = "../../../hetpath-bench/benches/event_queue/candidates.rs"]
mod candidates;

use candidates::{DaryHeap, KeysSlab, MinOutside, Radix, SortedDeque};
use hetpath_proto::Time;
use hetpath_sim::engine::{Bits, FrontHeap, Heap, Key, PackedHeap, Pending, Queue};
use proptest::prelude::*;

/// One call on a queue; delays come from a few values so that many times are equal.
#[derive(Debug, Clone)]
enum Call {
    Schedule(u64),
    /// Reserve a sequence number and queue it after the next `n` calls.
    Reserve(u64, usize),
    Pop(u64),
    TakeNext(u64),
}

fn call() -> impl Strategy<Value = Call> {
    let delay = prop_oneof![
        Just(0u64),
        Just(1),
        Just(5),
        0..1_000u64,
        Just(u64::MAX / 4)
    ];
    prop_oneof![
        4 => delay.clone().prop_map(Call::Schedule),
        1 => (delay.clone(), 0..4usize).prop_map(|(d, n)| Call::Reserve(d, n)),
        3 => delay.clone().prop_map(Call::Pop),
        1 => delay.prop_map(Call::TakeNext),
    ]
}

/// An event for `FrontHeap`: one in three may not lead (a kind held only in the heap).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ev(u32);

impl Bits for Ev {
    fn to_bits(self) -> u128 {
        self.0 as u128
    }
    fn from_bits(bits: u128) -> Ev {
        Ev(bits as u32)
    }
    fn may_lead(&self) -> bool {
        !self.0.is_multiple_of(3)
    }
}

impl From<u32> for Ev {
    fn from(i: u32) -> Ev {
        Ev(i)
    }
}

impl From<Ev> for u32 {
    fn from(e: Ev) -> u32 {
        e.0
    }
}

/// Everything a queue answers to `calls`, then to draining it.
fn answers<E: Copy + From<u32> + Into<u32>, P: Pending<E>>(
    calls: &[Call],
) -> Vec<(Time, Option<u32>, u64)> {
    let mut q: Queue<E, P> = Queue::default();
    let mut out = Vec::new();
    let mut reserved: Vec<(usize, Time, u64, E)> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let now = q.now();
        match *c {
            Call::Schedule(d) => q.schedule(Time(now.0.saturating_add(d)), (i as u32).into()),
            Call::Reserve(d, n) => {
                let t = Time(now.0.saturating_add(d));
                reserved.push((i + n, t, q.reserve_seq(), (i as u32).into()));
            }
            Call::Pop(d) => {
                let popped = q.pop_until(Time(now.0.saturating_add(d)));
                out.push((q.now(), popped.map(|p| p.1.into()), q.pending() as u64));
            }
            Call::TakeNext(d) => {
                let seq = q.reserve_seq();
                let ran = q.take_next(Time(now.0.saturating_add(d)), seq, Time::MAX);
                out.push((q.now(), None, ran as u64));
            }
        }
        for &(_, t, seq, e) in reserved.iter().filter(|r| r.0 == i) {
            q.schedule_reserved(t, seq, e);
        }
        reserved.retain(|r| r.0 != i);
    }
    for (_, t, seq, e) in reserved {
        q.schedule_reserved(t, seq, e);
    }
    while let Some((t, e)) = q.pop_until(Time::MAX) {
        out.push((t, Some(e.into()), q.executed()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn candidates_answer_like_the_heap(calls in prop::collection::vec(call(), 0..300)) {
        let heap = answers::<u32, Heap<u32>>(&calls);
        prop_assert_eq!(&answers::<u32, KeysSlab<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, Radix<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, SortedDeque<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, PackedHeap<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 2, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 4, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 4, u128>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 8, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 8, u128>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 2, u128, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 4, u128, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, DaryHeap<u32, 8, Key, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, MinOutside<u32, Heap<u32>>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, MinOutside<u32, PackedHeap<u32>>>(&calls), &heap);
        prop_assert_eq!(&answers::<u32, MinOutside<u32, DaryHeap<u32, 4, u128>>>(&calls), &heap);
        prop_assert_eq!(&answers::<Ev, FrontHeap<Ev>>(&calls), &heap);
    }
}
