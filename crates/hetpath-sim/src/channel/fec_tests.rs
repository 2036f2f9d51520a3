//! Tests of the `fec` model (kept apart so that fec.rs stays readable).

use super::super::testutil::*;
use super::*;
use crate::channel::fec_math::{binomial_tail, mixed_failure_table};
use crate::rng::stream;
use crate::units::Duration;

fn iid(n: u32, k: u32, depth: u32, ber: f64) -> FecSpec {
    FecSpec {
        n,
        k,
        depth,
        ber: Some(ber),
        inner: None,
    }
}

fn bursty(depth: u32, t_good_us: u64, t_bad_us: u64, loss_good: f64, loss_bad: f64) -> FecSpec {
    let ge = GilbertElliottSpec {
        t_good: Duration(Dur::from_micros(t_good_us)),
        t_bad: Duration(Dur::from_micros(t_bad_us)),
        loss_good,
        loss_bad,
        initial: InitialState::Stationary,
    };
    FecSpec {
        n: 255,
        k: 223,
        depth,
        ber: None,
        inner: Some(FecInner::GilbertElliott(ge)),
    }
}

/// Transmission time in ns of `bytes` at `coded_bps` reduced by the code rate.
fn airtime(s: &FecSpec, bytes: u32, coded_bps: f64) -> u64 {
    (f64::from(bytes) * 8.0 * f64::from(s.n) / f64::from(s.k) / coded_bps * 1e9).round() as u64
}

#[test]
fn fec_rate_factor_is_k_over_n() {
    for (n, k) in [(255, 223), (255, 239), (204, 188), (15, 11)] {
        let ch = ChannelSpec::Fec(iid(n, k, 1, 1e-5)).build(stream(1, "f"));
        assert_eq!(ch.rate_factor(), f64::from(k) / f64::from(n));
        assert_eq!(
            bursty(4, 1000, 10, 0.0, 1.0)
                .build(stream(1, "f"))
                .rate_factor(),
            223.0 / 255.0
        );
    }
}

#[test]
fn fec_codeword_geometry() {
    let s = |d| iid(255, 223, d, 0.0);
    assert_eq!(s(1).t(), 16);
    assert_eq!(s(1).codewords(1500), 7); // ceil(1500/223)
    assert_eq!(s(8).codewords(1500), 8); // spread over the 8 codewords of a frame
    assert_eq!(s(16).codewords(1500), 16);
    assert_eq!(s(8).codewords(40), 8);
    assert_eq!(s(8).codewords(3), 3); // 3 bytes touch 3 codewords
    assert_eq!(s(4).codewords(9000), 41);
    assert_eq!(s(4).codewords(0), 0);
}

#[test]
fn fec_zero_error_rate_loses_nothing() {
    let inner_ber = FecSpec {
        inner: Some(FecInner::Ber(BerSpec { ber: 0.0 })),
        ber: None,
        ..iid(255, 223, 8, 0.0)
    };
    for s in [
        iid(255, 223, 1, 0.0),
        iid(255, 223, 8, 0.0),
        inner_ber,
        bursty(8, 100, 100, 0.0, 0.0),
    ] {
        assert_eq!(s.expected_loss(1500).unwrap_or(0.0), 0.0);
        assert_eq!(
            loss_rate(
                &mut s.build(stream(1, "f")),
                100_000,
                2_000_000,
                1_500_000,
                1500
            ),
            0.0,
            "{s:?}"
        );
    }
}

#[test]
fn fec_codeword_failure_matches_bitwise_simulation() {
    // Flip every bit of every symbol independently (the slow, literal model) and count
    // codewords with more than t symbol errors; compare with the exact binomial tail.
    let s = iid(15, 7, 1, 0.02);
    let want = s.codeword_failure().unwrap();
    let mut rng = stream(4, "bits");
    const WORDS: u64 = 100_000;
    let failed = (0..WORDS)
        .filter(|_| {
            let bad_symbols = (0..s.n)
                .filter(|_| (0..8).any(|_| uniform(&mut rng) < 0.02))
                .count();
            bad_symbols as u32 > s.t()
        })
        .count();
    let measured = failed as f64 / WORDS as f64;
    assert_within_se(
        "codeword failure",
        measured,
        want,
        want * (1.0 - want),
        WORDS as f64,
    );
}

#[test]
fn fec_iid_packet_loss_matches_binomial_tail() {
    // RS(255,223), ber 5e-3: p_s = 0.0393, P_cw = 0.02497, 1500 B over 8 codewords: 0.1832.
    const N: u64 = 1_000_000;
    for (depth, bytes) in [(8, 1500), (1, 1500), (1, 40), (4, 9000)] {
        let s = iid(255, 223, depth, 5e-3);
        let want = s.expected_loss(bytes).unwrap();
        let measured = loss_rate(&mut s.build(stream(2, "f")), N, 1, 1, bytes);
        assert_within_se(
            &format!("D={depth} L={bytes}"),
            measured,
            want,
            want * (1.0 - want),
            N as f64,
        );
    }
    assert!((iid(255, 223, 8, 5e-3).expected_loss(1500).unwrap() - 0.183161197).abs() < 1e-8);
}

#[test]
fn fec_bursty_with_equal_state_rates_is_iid() {
    // Symbol error rate e in both states: the burst path (tally + mixed table) must give
    // the i.i.d. answer 1 - (1 - P(Bin(n, e) > t))^c whatever the bursts do.
    const N: u64 = 200_000;
    let e = 0.04;
    let s = bursty(8, 300, 200, e, e);
    let p_cw = binomial_tail(255, e, 16);
    let want = 1.0 - (1.0 - p_cw).powi(8);
    let dur = airtime(&s, 1500, 10e6);
    let measured = loss_rate(&mut s.build(stream(3, "f")), N, dur, dur, 1500);
    assert_within_se(
        "bursty, equal rates",
        measured,
        want,
        want * (1.0 - want),
        N as f64,
    );
}

fn tally_ok(depth: u64, c: u64, ranges: &[(u64, u64)]) -> f64 {
    let fail = mixed_failure_table(255, 16, 0.0, 1.0);
    let mut lanes = vec![0u16; depth as usize];
    let mut t = Tally {
        lanes: &mut lanes,
        fail: &fail,
        n: 255,
        depth,
        c,
        frame: u64::MAX,
        ok: 1.0,
        touched: 0,
    };
    for &(a, b) in ranges {
        t.add(a, b);
    }
    let ok = t.finish(0.0);
    assert!(lanes.iter().all(|&l| l == 0), "lanes are left clear");
    ok
}

#[test]
fn fec_tally_spreads_bursts_over_codewords() {
    // Hard errors, t = 16. Without interleaving 17 bad symbols break a codeword.
    assert_eq!(tally_ok(1, 7, &[(100, 116)]), 1.0);
    assert_eq!(tally_ok(1, 7, &[(100, 117)]), 0.0);
    // A burst crossing a codeword boundary splits: 16 + 16 symbols, both decode.
    assert_eq!(tally_ok(1, 7, &[(255 - 16, 255 + 16)]), 1.0);
    // Depth 8: a burst of 8 x 16 = 128 symbols gives each codeword 16; 129 breaks one.
    assert_eq!(tally_ok(8, 8, &[(5, 5 + 128)]), 1.0);
    assert_eq!(tally_ok(8, 8, &[(5, 5 + 129)]), 0.0);
    // Two bursts in one frame add up per codeword: 64 + 64 decodes, 64 + 72 does not.
    assert_eq!(tally_ok(8, 8, &[(0, 64), (1000, 1064)]), 1.0);
    assert_eq!(tally_ok(8, 8, &[(0, 64), (1000, 1072), (1500, 1501)]), 0.0);
    // The last frame of a 41-codeword packet at depth 4 has 1 codeword: no spreading.
    let last = 40 * 255;
    assert_eq!(tally_ok(4, 41, &[(last, last + 16)]), 1.0);
    assert_eq!(tally_ok(4, 41, &[(last, last + 17)]), 0.0);
    // A burst over a frame boundary: 4 x 16 before and 4 x 16 after decode.
    assert_eq!(tally_ok(4, 41, &[(4 * 255 - 64, 4 * 255 + 64)]), 1.0);
}

#[test]
fn fec_interleaving_reduces_burst_loss() {
    // Bursts of 30 us mean (about 40 symbols at 10 Mbit/s coded) every 5 ms: without
    // interleaving most bursts exceed t = 16 symbols of one codeword; at depth 8 a burst
    // must exceed 128 symbols.
    const N: u64 = 100_000;
    let rate = |depth| {
        let s = bursty(depth, 5000, 30, 0.0, 1.0);
        let dur = airtime(&s, 1500, 10e6);
        loss_rate(&mut s.build(stream(5, "f")), N, dur, dur, 1500)
    };
    let (d1, d8) = (rate(1), rate(8));
    let se = |p: f64| (p * (1.0 - p) / N as f64).sqrt();
    assert!(
        d8 + 5.0 * se(d8) < d1 - 5.0 * se(d1),
        "depth 1: {d1}, depth 8: {d8}"
    );
    assert!(d1 > 0.1 && d8 < d1 / 4.0, "depth 1: {d1}, depth 8: {d8}");
}

#[test]
fn fec_deterministic_and_forkable() {
    for s in [iid(255, 223, 8, 5e-3), bursty(8, 2000, 50, 0.001, 0.5)] {
        let dur = airtime(&s, 1500, 10e6);
        let a = outcomes(&mut s.build(stream(1, "f")), 20_000, dur, dur, 1500);
        assert_eq!(
            a,
            outcomes(&mut s.build(stream(1, "f")), 20_000, dur, dur, 1500)
        );
        assert_ne!(
            a,
            outcomes(&mut s.build(stream(2, "f")), 20_000, dur, dur, 1500)
        );
        let mut m = s.build(stream(3, "f"));
        outcomes(&mut m, 99, dur, dur, 1500);
        let mut f = m.fork().unwrap();
        let later = |ch: &mut dyn Channel| -> Vec<bool> {
            (0..5000u64)
                .map(|i| ch.transmit(Time(1_000_000_000 + i * 2 * dur), Dur(dur), 1500))
                .collect()
        };
        assert_eq!(later(f.as_mut()), later(&mut m));
    }
}
