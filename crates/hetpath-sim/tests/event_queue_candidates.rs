//! The benchmark's event-queue stores (benches/event_queue) pop like the engine's heap:
//! every answer of a queue over each store, on random workloads with many equal times and
//! reserved sequence numbers queued late, equals the heap's.

#[path = "../benches/event_queue/candidates.rs"]
mod candidates;

use candidates::{DaryHeap, KeysSlab, MinOutside, Radix, SortedDeque};
use hetpath_proto::Time;
use hetpath_sim::engine::{Heap, Key, PackedHeap, Pending, Queue};
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

/// Everything a queue answers to `calls`, then to draining it.
fn answers<P: Pending<u32>>(calls: &[Call]) -> Vec<(Time, Option<u32>, u64)> {
    let mut q: Queue<u32, P> = Queue::default();
    let mut out = Vec::new();
    let mut reserved: Vec<(usize, Time, u64, u32)> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let now = q.now();
        match *c {
            Call::Schedule(d) => q.schedule(Time(now.0.saturating_add(d)), i as u32),
            Call::Reserve(d, n) => {
                let t = Time(now.0.saturating_add(d));
                reserved.push((i + n, t, q.reserve_seq(), i as u32));
            }
            Call::Pop(d) => {
                let popped = q.pop_until(Time(now.0.saturating_add(d)));
                out.push((q.now(), popped.map(|p| p.1), q.pending() as u64));
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
        out.push((t, Some(e), q.executed()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn candidates_answer_like_the_heap(calls in prop::collection::vec(call(), 0..300)) {
        let heap = answers::<Heap<u32>>(&calls);
        prop_assert_eq!(&answers::<KeysSlab<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<Radix<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<SortedDeque<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<PackedHeap<u32>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 2, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 4, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 4, u128>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 8, Key>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 8, u128>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 2, u128, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 4, u128, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<DaryHeap<u32, 8, Key, true>>(&calls), &heap);
        prop_assert_eq!(&answers::<MinOutside<u32, Heap<u32>>>(&calls), &heap);
        prop_assert_eq!(&answers::<MinOutside<u32, PackedHeap<u32>>>(&calls), &heap);
        prop_assert_eq!(&answers::<MinOutside<u32, DaryHeap<u32, 4, u128>>>(&calls), &heap);
    }
}
