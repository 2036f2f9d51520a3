//! The engine's event queue against other stores of pending events, on event mixes
//! recorded from real runs. Run: `cargo bench -p hetpath-bench --bench
//! event_queue`. Figures and how the mixes were recorded: docs/performance.md, "Event
//! queue".
//!
//! A mix (bench/data/event-mix-NAME.bin) is 16,384 consecutive pops from the middle of a
//! run with every queue call between them, in unsigned LEB128 varints: the number of
//! entries pending at the start, their delays from now in sequence order, the number of
//! calls, then per call `delay << 3 | op`, delays in ns from the clock at that call:
//! op 0 pop, 1 schedule, 2 reserve a sequence number, 3 schedule a reserved one (then its
//! distance back from the next sequence number), 4 `take_next` with the last reserved
//! one, 5 `ran_in_place` (then the number of events).

mod candidates;

use candidates::{DaryHeap, KeysSlab, MinOutside, Radix, SortedDeque};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hetpath_proto::Time;
use hetpath_sim::engine::{Heap, Key, PackedHeap, Pending, Queue};
use std::hint::black_box;

/// The size of the engine's `Ev` (16 bytes, measured), so entries weigh the same.
type Ev = [u64; 2];

type Dary4Pair = DaryHeap<Ev, 4, Key>;
type Dary4U128 = DaryHeap<Ev, 4, u128>;
type Dary8Pair = DaryHeap<Ev, 8, Key>;
type Dary8U128 = DaryHeap<Ev, 8, u128>;
type Dary2U128Bottom = DaryHeap<Ev, 2, u128, true>;
type Dary4U128Bottom = DaryHeap<Ev, 4, u128, true>;

const MIXES: [&str; 5] = [
    "dumbbell",
    "geo-clean",
    "lift-web",
    "dumbbell-100",
    "dumbbell-1000",
];

enum Call {
    Pop,
    Schedule(u64),
    Reserve,
    ScheduleReserved(u64, u64),
    TakeNext(u64),
    RanInPlace(u64, u64),
}

struct Mix {
    initial: Vec<u64>,
    calls: Vec<Call>,
    pops: u64,
}

fn load(name: &str) -> Mix {
    let path = format!(
        "{}/../../bench/data/event-mix-{name}.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut it = bytes.into_iter();
    let mut next = || {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = it.next().expect("a complete mix");
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    };
    let initial = (0..next()).map(|_| next()).collect();
    let calls: Vec<Call> = (0..next())
        .map(|_| {
            let v = next();
            let d = v >> 3;
            match v & 7 {
                0 => Call::Pop,
                1 => Call::Schedule(d),
                2 => Call::Reserve,
                3 => Call::ScheduleReserved(d, next()),
                4 => Call::TakeNext(d),
                5 => Call::RanInPlace(d, next()),
                op => panic!("{path}: unknown op {op}"),
            }
        })
        .collect();
    let pops = calls.iter().filter(|c| matches!(c, Call::Pop)).count() as u64;
    Mix {
        initial,
        calls,
        pops,
    }
}

/// Replays `mix` on a queue over `P`, handing each popped (time, event) to `seen`.
fn replay<P: Pending<Ev>>(mix: &Mix, mut seen: impl FnMut(Time, Ev)) {
    let mut q: Queue<Ev, P> = Queue::default();
    let (mut next_seq, mut reserved) = (0u64, 0u64);
    for (i, &d) in mix.initial.iter().enumerate() {
        q.schedule(Time(d), [i as u64, 0]);
        next_seq += 1;
    }
    for (i, call) in mix.calls.iter().enumerate() {
        let at = |d: u64| Time(q.now().0 + d);
        let ev = [i as u64, 1];
        match *call {
            Call::Pop => {
                let (t, e) = q
                    .pop_until(Time::MAX)
                    .expect("the mix pops a pending event");
                seen(t, e);
            }
            Call::Schedule(d) => {
                q.schedule(at(d), ev);
                next_seq += 1;
            }
            Call::Reserve => {
                reserved = q.reserve_seq();
                next_seq += 1;
            }
            Call::ScheduleReserved(d, back) => {
                q.schedule_reserved(at(d), next_seq - back.min(next_seq), ev)
            }
            Call::TakeNext(d) => {
                q.take_next(at(d), reserved, Time::MAX);
            }
            Call::RanInPlace(d, n) => {
                q.ran_in_place(at(d), n);
                next_seq += n;
            }
        }
    }
}

fn order<P: Pending<Ev>>(mix: &Mix) -> Vec<(Time, Ev)> {
    let mut out = Vec::new();
    replay::<P>(mix, |t, e| out.push((t, e)));
    out
}

fn bench_one<P: Pending<Ev>>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mix: &Mix,
) {
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut sum = 0u64;
            replay::<P>(mix, |t, e| {
                sum = sum.wrapping_mul(31).wrapping_add(t.0 ^ e[0])
            });
            black_box(sum)
        })
    });
}

fn mixes(c: &mut Criterion) {
    for name in MIXES {
        let mix = load(name);
        let heap = order::<Heap<Ev>>(&mix);
        assert_eq!(order::<KeysSlab<Ev>>(&mix), heap, "keys+slab on {name}");
        assert_eq!(order::<Radix<Ev>>(&mix), heap, "radix on {name}");
        assert_eq!(
            order::<SortedDeque<Ev>>(&mix),
            heap,
            "sorted deque on {name}"
        );
        assert_eq!(order::<PackedHeap<Ev>>(&mix), heap, "u128 heap on {name}");
        assert_eq!(order::<Dary4Pair>(&mix), heap, "4-ary on {name}");
        assert_eq!(order::<Dary4U128>(&mix), heap, "4-ary u128 on {name}");
        assert_eq!(order::<Dary8Pair>(&mix), heap, "8-ary on {name}");
        assert_eq!(order::<Dary8U128>(&mix), heap, "8-ary u128 on {name}");
        assert_eq!(
            order::<Dary2U128Bottom>(&mix),
            heap,
            "2-ary to bottom on {name}"
        );
        assert_eq!(
            order::<Dary4U128Bottom>(&mix),
            heap,
            "4-ary to bottom on {name}"
        );
        assert_eq!(
            order::<MinOutside<Ev, PackedHeap<Ev>>>(&mix),
            heap,
            "min outside the u128 heap on {name}"
        );
        assert_eq!(
            order::<MinOutside<Ev, Heap<Ev>>>(&mix),
            heap,
            "min outside the heap on {name}"
        );
        assert_eq!(
            order::<MinOutside<Ev, Dary4U128>>(&mix),
            heap,
            "min outside a 4-ary heap on {name}"
        );
        let mut g = c.benchmark_group(format!("event_mix/{name}"));
        g.throughput(Throughput::Elements(mix.pops));
        bench_one::<Heap<Ev>>(&mut g, "binary_heap", &mix);
        bench_one::<KeysSlab<Ev>>(&mut g, "keys_slab", &mix);
        bench_one::<Radix<Ev>>(&mut g, "radix", &mix);
        bench_one::<SortedDeque<Ev>>(&mut g, "sorted_deque", &mix);
        bench_one::<PackedHeap<Ev>>(&mut g, "binary_heap_u128", &mix);
        bench_one::<Dary4Pair>(&mut g, "dary4_pair", &mix);
        bench_one::<Dary4U128>(&mut g, "dary4_u128", &mix);
        bench_one::<Dary8Pair>(&mut g, "dary8_pair", &mix);
        bench_one::<Dary8U128>(&mut g, "dary8_u128", &mix);
        bench_one::<Dary2U128Bottom>(&mut g, "dary2_u128_bottom", &mix);
        bench_one::<Dary4U128Bottom>(&mut g, "dary4_u128_bottom", &mix);
        bench_one::<MinOutside<Ev, PackedHeap<Ev>>>(&mut g, "min_outside_binary_u128", &mix);
        bench_one::<MinOutside<Ev, Heap<Ev>>>(&mut g, "min_outside_binary", &mix);
        bench_one::<MinOutside<Ev, Dary4U128>>(&mut g, "min_outside_dary4_u128", &mix);
        g.finish();
    }
}

criterion_group!(benches, mixes);
criterion_main!(benches);
