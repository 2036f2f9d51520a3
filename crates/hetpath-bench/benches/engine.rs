//! Engine benchmarks (criterion): the event queue alone, then whole scenarios.
//! Run: `cargo bench -p hetpath-bench --bench engine`. Figures go in docs/performance.md.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hetpath_proto::{Dur, Time};
use hetpath_sim::engine::EventQueue;
use std::hint::black_box;

/// A steady state like a simulation's: a few hundred pending events, each pop schedules
/// one new event a pseudo-random delay ahead.
fn queue_hold(c: &mut Criterion) {
    const N: u64 = 1_000_000;
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(N));
    g.bench_function("hold_512_pending", |b| {
        b.iter_batched(
            || {
                let mut q = EventQueue::default();
                for i in 0..512u64 {
                    q.schedule(Time(i * 1_000), i);
                }
                q
            },
            |mut q| {
                let mut x = 0x2545_f491_4f6c_dd1du64;
                for _ in 0..N {
                    let (t, e) = q.pop_until(Time::MAX).unwrap();
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    q.schedule(t + Dur(x % 1_000_000), black_box(e));
                }
                q
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn scenario(c: &mut Criterion, name: &str) {
    let path = format!(
        "{}/../../scenarios/examples/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let events = {
        let mut s = hetpath_sim::load(&text, &path, None).unwrap();
        s.run(&mut |_, _| true);
        s.events_executed()
    };
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut s = hetpath_sim::load(&text, &path, None).unwrap();
            s.run(&mut |_, _| true);
            s.events_executed()
        })
    });
    g.finish();
}

fn scenarios(c: &mut Criterion) {
    for name in [
        "geo-clean",
        "geo-loss",
        "dumbbell",
        "geo-pep",
        "lift-web",
        "sctp-web",
        "geo-wlan",
        "geo-wlan-apohn",
    ] {
        scenario(c, name);
    }
}

criterion_group!(benches, queue_hold, scenarios);
criterion_main!(benches);
