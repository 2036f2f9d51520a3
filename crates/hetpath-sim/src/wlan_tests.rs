//! The DCF against closed forms: a lone station's time per frame, and Bianchi's
//! saturation throughput (G. Bianchi, "Performance Analysis of the IEEE 802.11 Distributed
//! Coordination Function", IEEE JSAC 18(3), 2000, basic access).

use super::*;

/// `n` saturated stations sending `body`-byte frames to a sink station for `secs`
/// simulated seconds: (payload bit/s, the medium).
fn saturate(params: DcfParams, n: usize, body: u32, secs: u64, seed: u64) -> (f64, Dcf<()>) {
    let sink = n;
    let mut dcf = Dcf::new(params, n + 1, seed, "wlan");
    for i in 0..n {
        dcf.enqueue(Time::ZERO, i, sink, body, ());
    }
    let end = Time::ZERO + Dur::from_secs(secs);
    let mut out = Vec::new();
    let mut bits = 0u64;
    while let Some(t) = dcf.next_event().filter(|&t| t < end) {
        dcf.on_event(t, &mut out);
        for ev in out.drain(..) {
            match ev {
                WlanEvent::Delivered { to, .. } => {
                    assert_eq!(to, sink);
                    bits += body as u64 * 8;
                }
                // Saturated: a new frame as soon as one leaves.
                WlanEvent::Acked { station } | WlanEvent::Dropped { station, .. } => {
                    dcf.enqueue(t, station, sink, body, ())
                }
            }
        }
    }
    (bits as f64 / secs as f64, dcf)
}

/// Bianchi's saturation throughput (bit/s of payload) for `n` stations, basic access or
/// RTS/CTS as `p` has it for `body`, no propagation delay: W = CWmin + 1 and m stages up
/// to CWmax + 1 = 2^m W.
fn bianchi(p: &DcfParams, n: usize, body: u32) -> f64 {
    let w = (p.cw_min + 1) as f64;
    let m = ((p.cw_max + 1) as f64 / w).log2().round() as i32;
    // tau(p) in the form 2 / (1 + W + p W sum_{i<m} (2p)^i), defined at p = 1/2 too.
    let tau = |c: f64| {
        let sum: f64 = (0..m).map(|i| (2.0 * c).powi(i)).sum();
        2.0 / (1.0 + w + c * w * sum)
    };
    // The conditional collision probability: c = 1 - (1 - tau(c))^(n-1), by bisection.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if mid - (1.0 - (1.0 - tau(mid)).powi(n as i32 - 1)) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = tau(lo);
    let p_tr = 1.0 - (1.0 - t).powi(n as i32);
    let p_s = n as f64 * t * (1.0 - t).powi(n as i32 - 1) / p_tr;
    let secs = |d: Dur| d.as_secs_f64();
    let exchange = p.data_time(body) + p.sifs + p.ack_time() + p.difs;
    let (t_s, t_c) = if p.uses_rts(body) {
        let rts = p.air(RTS_BYTES, p.basic_rate);
        let cts = p.air(CTS_BYTES, p.basic_rate);
        (
            secs(rts + p.sifs + cts + p.sifs + exchange),
            secs(rts + p.difs),
        )
    } else {
        (secs(exchange), secs(p.data_time(body) + p.difs))
    };
    let slot = secs(p.slot);
    p_s * p_tr * (body as f64 * 8.0)
        / ((1.0 - p_tr) * slot + p_tr * p_s * t_s + p_tr * (1.0 - p_s) * t_c)
}

#[test]
fn a_lone_station_takes_the_closed_form_time_per_frame() {
    // DIFS + mean backoff (CWmin / 2 slots) + PLCP + frame + SIFS + ACK, 1500-byte frames
    // at 11 Mbit/s.
    let p = DcfParams::default();
    let body = 1500;
    let per_frame =
        p.difs + Dur(p.slot.0 * p.cw_min as u64 / 2) + p.data_time(body) + p.sifs + p.ack_time();
    let expected = body as f64 * 8.0 / per_frame.as_secs_f64();
    let (got, dcf) = saturate(p, 1, body, 200, 1);
    assert!(
        (got / expected - 1.0).abs() < 0.01,
        "{got:.0} bit/s against {expected:.0}"
    );
    let s = dcf.stats(0);
    assert_eq!((s.collisions, s.retries, s.drops), (0, 0, 0));
    assert!(
        s.transmissions - s.acks <= 1,
        "the last frame may be on the air"
    );
}

#[test]
fn saturation_throughput_matches_bianchi() {
    // Bianchi's analysis has every station resume one DIFS after a collision: no EIFS.
    let basic = DcfParams {
        eifs: false,
        ..DcfParams::default()
    };
    let rts = DcfParams {
        rts_threshold: Some(500),
        ..basic
    };
    let body = 1500;
    for p in [basic, rts] {
        for n in [1, 5, 10, 20, 50] {
            let (got, dcf) = saturate(p, n, body, 100, 7);
            let model = bianchi(&p, n, body);
            let err = got / model - 1.0;
            eprintln!(
                "rts {:?}, n = {n}: {got:.0} bit/s, Bianchi {model:.0} ({:+.2}%)",
                p.rts_threshold,
                err * 100.0
            );
            assert!(err.abs() < 0.03, "n = {n}: {got:.0} against {model:.0}");
            let collisions: u64 = (0..n).map(|i| dcf.stats(i).collisions).sum();
            assert_eq!(collisions > 0, n > 1);
        }
    }
}

#[test]
fn collisions_double_the_window_and_the_retry_limit_drops() {
    // Two stations that always collide: a channel cannot do that, so use a window of one
    // slot (CWmin = CWmax = 0): both count down 0 slots and meet every time.
    let p = DcfParams {
        cw_min: 0,
        cw_max: 0,
        ..DcfParams::default()
    };
    let mut dcf = Dcf::new(p, 3, 1, "wlan");
    dcf.enqueue(Time::ZERO, 0, 2, 100, 10u32);
    dcf.enqueue(Time::ZERO, 1, 2, 100, 11u32);
    let mut out = Vec::new();
    while let Some(t) = dcf.next_event() {
        dcf.on_event(t, &mut out);
    }
    let dropped: Vec<u32> = out
        .iter()
        .filter_map(|e| match e {
            WlanEvent::Dropped { payload, .. } => Some(*payload),
            _ => None,
        })
        .collect();
    assert_eq!(dropped, vec![10, 11]);
    for i in 0..2 {
        let s = dcf.stats(i);
        assert_eq!(s.transmissions, p.short_retry as u64);
        assert_eq!(
            (s.collisions, s.drops, s.acks),
            (p.short_retry as u64, 1, 0)
        );
    }
}

/// Loses the first frame it sees, then none.
#[derive(Debug)]
struct FirstLost(bool);

impl Channel for FirstLost {
    fn transmit(&mut self, _: Time, _: Dur, _: u32) -> bool {
        !std::mem::replace(&mut self.0, false)
    }
}

#[test]
fn a_corrupted_frame_is_sent_again() {
    let mut dcf = Dcf::new(DcfParams::default(), 2, 1, "wlan");
    dcf.set_channel(0, Box::new(FirstLost(true)));
    dcf.enqueue(Time::ZERO, 0, 1, 1000, "x");
    let mut out = Vec::new();
    while let Some(t) = dcf.next_event() {
        dcf.on_event(t, &mut out);
    }
    assert!(matches!(
        out[..],
        [
            WlanEvent::Delivered {
                from: 0,
                to: 1,
                payload: "x"
            },
            WlanEvent::Acked { station: 0 }
        ]
    ));
    let s = dcf.stats(0);
    assert_eq!(
        (s.transmissions, s.retries, s.collisions, s.acks),
        (2, 1, 0, 1)
    );
}

/// Slot times whose countdowns end past the last representable instant: such a
/// countdown never ends (no event is asked for past `Time::MAX`) and nothing panics,
/// whatever the seed; with the largest slot the loader allows, frames still get through.
#[test]
fn extreme_slot_times_neither_overflow_nor_panic() {
    for slot in [u64::MAX / 3, u64::MAX / 40, 1 << 60, 1_000_000_000] {
        for seed in 0..20 {
            let p = DcfParams {
                slot: Dur(slot),
                cw_min: 1023,
                cw_max: 65_535,
                ..DcfParams::default()
            };
            let mut dcf = Dcf::new(p, 3, seed, "wlan");
            for k in 0..4 {
                dcf.enqueue(Time::ZERO, k % 2, 2, 1000, k);
            }
            let mut out = Vec::new();
            let mut last = Time::ZERO;
            for _ in 0..200 {
                let Some(t) = dcf.next_event() else { break };
                assert!(
                    t >= last && t < Time::MAX,
                    "slot {slot}, seed {seed}: {t:?}"
                );
                last = t;
                dcf.on_event(t, &mut out);
            }
            if slot == 1_000_000_000 {
                let acked = out
                    .iter()
                    .filter(|e| matches!(e, WlanEvent::Acked { .. }))
                    .count();
                assert!(acked > 0, "seed {seed}: {} events", out.len());
            }
        }
    }
}

mod properties {
    use super::*;
    use crate::channel::{ChannelSpec, GilbertElliottSpec, InitialState};
    use crate::units::Duration;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the stations, frames, windows, limits and losses: every frame comes
        /// out once, delivered (then acknowledged) or dropped, each station's in the order
        /// it was queued; time never runs backwards; the counters add up.
        #[test]
        fn every_frame_comes_out_once_in_order(
            n in 2usize..7,
            frames in proptest::collection::vec((0usize..6, 0usize..6, 1u32..2400, 0u64..5_000_000), 1..120),
            cw_min in 0u32..40,
            cw_extra in 0u32..600,
            retry in 1u32..8,
            rts in proptest::option::of(0u32..2000),
            lossy in any::<bool>(),
            eifs in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let p = DcfParams {
                cw_min,
                cw_max: cw_min + cw_extra,
                short_retry: retry,
                long_retry: retry,
                rts_threshold: rts,
                eifs,
                ..DcfParams::default()
            };
            let mut dcf = Dcf::new(p, n, seed, "wlan");
            if lossy {
                for i in 0..n {
                    let ge = ChannelSpec::GilbertElliott(GilbertElliottSpec {
                        t_good: Duration(Dur::from_millis(20)),
                        t_bad: Duration(Dur::from_millis(5)),
                        loss_good: 0.05,
                        loss_bad: 1.0,
                        initial: InitialState::Stationary,
                    });
                    dcf.set_channel(i, ge.build(rng::stream(seed, &format!("ch{i}"))));
                }
            }
            // Frames offered in time order, each an id; (from, to) with to != from.
            let mut offers: Vec<(u64, usize, usize, u32, usize)> = frames
                .iter()
                .enumerate()
                .map(|(id, &(a, b, len, at))| {
                    let from = a % n;
                    let to = (from + 1 + b % (n - 1)) % n;
                    (at, from, to, len, id)
                })
                .collect();
            offers.sort();
            let mut queued: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut out = Vec::new();
            let mut seen: Vec<Vec<usize>> = vec![Vec::new(); n];
            let (mut delivered, mut dropped, mut acked) = (0u64, 0u64, 0u64);
            let mut pending_ack = vec![0u64; n];
            let mut last = Time::ZERO;
            let mut k = 0;
            loop {
                let next_offer = offers.get(k).map(|o| Time(o.0));
                let next = dcf.next_event();
                let offer_first = match (next_offer, next) {
                    (Some(o), Some(e)) => o <= e,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                if offer_first {
                    let (at, from, to, len, id) = offers[k];
                    k += 1;
                    dcf.enqueue(Time(at), from, to, len, id);
                    queued[from].push(id);
                    continue;
                }
                let t = next.expect("an event");
                prop_assert!(t >= last);
                last = t;
                dcf.on_event(t, &mut out);
                for ev in out.drain(..) {
                    match ev {
                        WlanEvent::Delivered { from, payload, .. } => {
                            seen[from].push(payload);
                            pending_ack[from] += 1;
                            delivered += 1;
                        }
                        WlanEvent::Acked { station } => {
                            prop_assert!(pending_ack[station] == 1);
                            pending_ack[station] -= 1;
                            acked += 1;
                        }
                        WlanEvent::Dropped { station, payload } => {
                            seen[station].push(payload);
                            dropped += 1;
                        }
                    }
                }
            }
            prop_assert_eq!(&seen, &queued);
            prop_assert_eq!(delivered, acked);
            let stats: Vec<StationStats> = (0..n).map(|i| dcf.stats(i)).collect();
            prop_assert_eq!(stats.iter().map(|s| s.acks).sum::<u64>(), delivered);
            prop_assert_eq!(stats.iter().map(|s| s.drops).sum::<u64>(), dropped);
            for s in &stats {
                prop_assert!(s.collisions + s.acks + s.drops <= s.transmissions + s.drops);
                prop_assert!(s.retries <= s.transmissions);
            }
        }
    }
}
