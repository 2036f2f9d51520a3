//! TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", Int. J. Satell. Commun. Netw. 22(5), 2004): make a long-RTT connection grow
//! per unit of time like a reference connection with RTT0 = 25 ms, by scaling the growth
//! per ACK with rho = max(RTT/RTT0, 1):
//!
//! - slow start: cwnd += (2^rho - 1) MSS per MSS of credit;
//! - congestion avoidance: cwnd += rho^2 MSS per window of credit (rho^2*MSS/cwnd per
//!   segment), via `AvoidanceCounter::grow_by`.
//!
//! rho is recomputed on every ACK from `ack.srtt` (rho = 1 until the first sample), held in
//! 1/65536 fixed point. Linux tcp_hybla.c instead recomputes it only when srtt falls below
//! its minimum so far.
//!
//! Slow-start cap, as in Linux `hybla_cong_avoid` (net/ipv4/tcp_hybla.c): the exponent is
//! min(rho, 16), so one MSS of credit adds at most 2^16 - 1 MSS, and a slow-start increase
//! never takes cwnd past ssthresh. Linux's 65535-segment window clamp is not copied (the
//! receive window bounds the flight). Congestion avoidance is not capped, as in Linux.
//!
//! As in Linux `hybla_cong_avoid`, rho is updated on every ACK but the window grows only
//! on ACKs that say the sender is cwnd-limited (`tcp_is_cwnd_limited`, RFC 7661).
//!
//! 2^rho is computed from the integer part by a shift and the fractional part as a product
//! of 2^(2^-i) factors obtained by repeated square roots: only correctly rounded IEEE 754
//! operations, so the result is bit-identical on every platform (no libm `exp2`/`powf`). Loss and timeout responses are NewReno's (RFC 5681 equation (4)).

use super::*;

/// The paper's reference RTT, also Linux's default `rtt0`.
pub const RTT0: Dur = Dur::from_millis(25);

/// Hybla's parameter: the reference RTT (Linux's `rtt0` module parameter; ns-3 uses
/// 50 ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyblaConfig {
    pub rtt0: Dur,
}

impl Default for HyblaConfig {
    fn default() -> HyblaConfig {
        HyblaConfig { rtt0: RTT0 }
    }
}
/// Fixed-point shift for rho.
const RHO_SHIFT: u32 = 16;
const RHO_ONE: u64 = 1 << RHO_SHIFT;
/// Largest slow-start exponent (Linux tcp_hybla.c: `1 << min(ca->rho, 16U)`).
const MAX_SS_EXPONENT: u64 = 16;

#[derive(Debug, Clone)]
pub struct Hybla {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    avoid: AvoidanceCounter,
    rtt0: Dur,
    /// rho in 1/2^16 units, at least 1.
    rho: u64,
    /// (2^min(rho, 16) - 1) in 1/2^16 units, cached for `rho`.
    ss_gain: u64,
    /// Slow-start growth not yet added to cwnd, in 1/2^16 byte.
    ss_rem: u64,
}

impl Hybla {
    pub fn new(cfg: CcConfig) -> Hybla {
        Hybla::with_rtt0(cfg, RTT0)
    }

    /// A Hybla controller with a different reference RTT (Linux's `rtt0` module parameter).
    pub fn with_rtt0(cfg: CcConfig, rtt0: Dur) -> Hybla {
        Hybla {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
            rtt0: Dur(rtt0.as_nanos().max(1)),
            rho: RHO_ONE,
            ss_gain: ss_gain(RHO_ONE),
            ss_rem: 0,
        }
    }

    /// rho = max(srtt/RTT0, 1).
    pub fn rho(&self) -> f64 {
        self.rho as f64 / RHO_ONE as f64
    }

    fn update_rho(&mut self, srtt: Dur) {
        if srtt == Dur::ZERO {
            return;
        }
        let q = ((srtt.as_nanos() as u128) << RHO_SHIFT) / self.rtt0.as_nanos() as u128;
        let rho = (q.min((u64::MAX >> RHO_SHIFT) as u128) as u64).max(RHO_ONE);
        if rho != self.rho {
            self.rho = rho;
            self.ss_gain = ss_gain(rho);
        }
    }

    fn reset_growth(&mut self) {
        self.avoid.reset();
        self.ss_rem = 0;
    }
}

/// (2^min(rho, 16) - 1) in fixed point, rho in fixed point.
fn ss_gain(rho: u64) -> u64 {
    let rho = rho.min(MAX_SS_EXPONENT << RHO_SHIFT);
    let whole = rho >> RHO_SHIFT;
    let frac = rho & (RHO_ONE - 1);
    let mut factor = 1.0f64;
    let mut root = 2.0f64;
    for bit in (0..RHO_SHIFT).rev() {
        root = root.sqrt(); // 2^(2^-(RHO_SHIFT - bit))
        if frac & (1 << bit) != 0 {
            factor *= root;
        }
    }
    let pow = (1u64 << whole) as f64 * factor;
    ((pow - 1.0) * RHO_ONE as f64).round() as u64
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.update_rho(ack.srtt);
        if !ack.cwnd_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let acc = self.ss_rem as u128 + ack.credit as u128 * self.ss_gain as u128;
            let inc = (acc >> RHO_SHIFT).min(u64::MAX as u128) as u64;
            self.ss_rem = (acc & (RHO_ONE as u128 - 1)) as u64;
            self.cwnd = self.cwnd.saturating_add(inc).min(self.ssthresh);
        } else {
            let step = ((self.rho as u128 * self.rho as u128 * self.mss as u128) >> (2 * RHO_SHIFT))
                .min(u64::MAX as u128) as u64;
            self.cwnd = self.avoid.grow_by(self.cwnd, ack.credit, step);
        }
    }
    /// NewReno: RFC 5681 equation (4); recovery ends with cwnd = ssthresh.
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        self.cwnd = self.ssthresh;
        self.reset_growth();
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        }
        self.cwnd = self.mss as u64;
        self.reset_growth();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const M: u64 = MSS as u64;

    /// One round: every segment of the current window is acknowledged by its own ACK.
    fn round(cc: &mut Hybla, srtt_ms: u64) {
        for i in 0..cc.cwnd() / M {
            cc.on_ack(&ack(i, M, srtt_ms));
        }
    }

    fn rho_of(srtt_ms: f64) -> f64 {
        (srtt_ms / 25.0).max(1.0)
    }

    #[test]
    fn reference_rtt_is_plain_slow_start() {
        let mut cc = Hybla::new(cfg());
        for i in 0..2 {
            cc.on_ack(&ack(i, M, 25));
        }
        assert_eq!(cc.rho(), 1.0);
        assert_eq!(cc.cwnd(), 4 * M);
        // Shorter than RTT0 still gives rho = 1.
        cc.on_ack(&ack(3, M, 5));
        assert_eq!((cc.rho(), cc.cwnd()), (1.0, 5 * M));
    }

    #[test]
    fn slow_start_gain_per_ack_is_two_to_rho_minus_one() {
        for srtt_ms in [50.0, 60.0, 100.0, 137.0, 600.0] {
            let mut cc = Hybla::new(cfg());
            cc.on_ack(&ack(0, M, srtt_ms as u64));
            let rho = rho_of(srtt_ms);
            assert!((cc.rho() - rho).abs() < 1e-4, "rho {} vs {rho}", cc.rho());
            let want = 2.0 * M as f64 + (2f64.powf(rho.min(16.0)) - 1.0) * M as f64;
            assert!(
                (cc.cwnd() as f64 - want).abs() <= want * 1e-6 + 1.0,
                "srtt {srtt_ms}: {} vs {want}",
                cc.cwnd()
            );
        }
    }

    #[test]
    fn long_rtt_grows_much_faster_per_round() {
        // After the same number of ACK rounds, 600 ms (rho = 24, exponent capped at 16) is
        // far ahead of 25 ms (rho = 1, doubling per round).
        let mut near = Hybla::new(cfg());
        let mut far = Hybla::new(cfg());
        for _ in 0..2 {
            round(&mut near, 25);
            round(&mut far, 600);
        }
        assert_eq!(near.cwnd(), 2 * M * 2 * 2);
        // Each segment of credit becomes 2^16 segments: cwnd_{n+1} = cwnd_n * 2^16.
        assert_eq!(far.cwnd(), 2 * M * (1 << 16) * (1 << 16));
        // At 100 ms (rho = 4) a round multiplies the window by 2^4.
        let mut mid = Hybla::new(cfg());
        round(&mut mid, 100);
        assert_eq!(mid.cwnd(), 2 * M * 16);
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut cc = Hybla::new(CcConfig {
            initial_ssthresh: 20 * M,
            ..cfg()
        });
        cc.on_ack(&ack(0, M, 200)); // rho = 8: +255 MSS, clamped.
        assert_eq!(cc.cwnd(), 20 * M);
    }

    #[test]
    fn avoidance_adds_rho_squared_per_window() {
        for srtt_ms in [25u64, 10, 50, 75, 60, 600] {
            let mut cc = Hybla::new(CcConfig {
                initial_window: 50 * M,
                initial_ssthresh: 50 * M,
                ..cfg()
            });
            for i in 0..50 {
                cc.on_ack(&ack(i, M, srtt_ms));
            }
            let rho = rho_of(srtt_ms as f64);
            let want = 50.0 * M as f64 + rho * rho * M as f64;
            assert!(
                (cc.cwnd() as f64 - want).abs() <= 2.0,
                "srtt {srtt_ms}: {} vs {want}",
                cc.cwnd()
            );
        }
    }

    #[test]
    fn custom_reference_rtt() {
        let mut cc = Hybla::with_rtt0(
            CcConfig {
                initial_window: 10 * M,
                initial_ssthresh: 10 * M,
                ..cfg()
            },
            Dur::from_millis(50),
        );
        round(&mut cc, 150); // rho = 3
        assert_eq!(cc.rho(), 3.0);
        assert_eq!(cc.cwnd(), 19 * M);
    }

    #[test]
    fn before_any_rtt_rho_is_one() {
        let mut cc = Hybla::new(cfg());
        let mut a = ack(0, M, 0);
        a.rtt = None;
        cc.on_ack(&a);
        assert_eq!((cc.rho(), cc.cwnd()), (1.0, 3 * M));
    }

    #[test]
    fn grows_only_when_cwnd_limited_but_tracks_rho() {
        for ssthresh in [u64::MAX, 10 * M] {
            let mut cc = Hybla::new(CcConfig {
                initial_window: 10 * M,
                initial_ssthresh: ssthresh,
                ..cfg()
            });
            for i in 0..20 {
                cc.on_ack(&AckSample {
                    cwnd_limited: false,
                    ..ack(i, M, 100)
                });
            }
            assert_eq!(cc.cwnd(), 10 * M);
            assert_eq!(cc.rho(), 4.0);
            // Nothing was banked: a window of cwnd-limited credit adds rho^2 = 16 segments
            // in avoidance (and 15 per ACK in slow start).
            for i in 0..10 {
                cc.on_ack(&ack(20 + i, M, 100));
            }
            let want = if ssthresh == u64::MAX { 160 } else { 26 };
            assert_eq!(cc.cwnd(), want * M);
        }
    }

    #[test]
    fn loss_and_rto_are_newreno() {
        let mut cc = Hybla::new(cfg());
        cc.on_congestion_event(&loss(0, 20 * M, 600));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, 10 * M));
        assert_eq!(cc.recovery_style(), RecoveryStyle::NewReno);
        cc.on_rto(&loss(0, 3 * M, 600));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 2 * M));
    }
}
