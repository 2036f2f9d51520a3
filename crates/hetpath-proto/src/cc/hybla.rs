//! TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", Int. J. Satell. Commun. Netw. 22(5), 2004): make a long-RTT connection grow
//! per unit of time like a reference connection with RTT0 = 25 ms, by scaling the growth
//! per ACK with rho = max(RTT/RTT0, 1). Two rule sets, chosen by `HyblaConfig::linux`.
//!
//! **The paper's** (the default):
//!
//! - slow start: cwnd += (2^rho - 1) MSS per MSS of credit;
//! - congestion avoidance: cwnd += rho^2 MSS per window of credit (rho^2*MSS/cwnd per
//!   segment), via `AvoidanceCounter::grow_by`.
//!
//! rho is recomputed on every ACK from `ack.srtt` (rho = 1 until the first sample), held in
//! 1/65536 fixed point. The slow-start exponent is min(rho, 16), as in Linux, so one MSS
//! of credit adds at most 2^16 - 1 MSS, and a slow-start increase never takes cwnd past
//! ssthresh. There is no window clamp (the receive window bounds the flight).
//!
//! **Linux's** (`linux = true`, which the `linux` profile sets), net/ipv4/tcp_hybla.c:
//!
//! - growth per ACK, whatever it acknowledges (`hybla_cong_avoid` ignores `acked`): slow
//!   start adds 2^min(rho, 16) - 1 segments, avoidance rho^2/cwnd segments, in the
//!   kernel's fixed point (rho in 1/8, 2^fraction from its eight-entry table, increments
//!   in 1/128 segment carried in `snd_cwnd_cents`, and one segment after cwnd ACKs that
//!   added nothing);
//! - the window is clamped to 65535 segments (`hybla_init` sets `snd_cwnd_clamp`) and, in
//!   slow start, to ssthresh;
//! - rho is recomputed only when srtt falls below its smallest value so far (`minrtt_us`);
//! - Hybla's rules apply only in the Open state (`hybla_state`); while a timeout's losses
//!   are repaired or SACKed data sits above SND.UNA (TCP_CA_Loss, TCP_CA_Disorder:
//!   `AckSample::open` false) the window grows as Reno's (`tcp_reno_cong_avoid`, by the
//!   ACK's credit);
//! - at establishment the window is rho segments (`hybla_init`, after the handshake's
//!   RTT sample: `on_init`), replacing the initial window.
//!
//! In both, rho is updated on every ACK but the window grows only on ACKs that say the
//! sender is cwnd-limited (`hybla_cong_avoid`'s `tcp_is_cwnd_limited`, RFC 7661);
//! loss and timeout responses are NewReno's (RFC 5681 equation (4); Linux
//! `tcp_reno_ssthresh` is the same with `ssthresh_from = "cwnd"`). The smallest window is
//! one segment, after a timeout.
//!
//! 2^rho is computed from the integer part by a shift and the fractional part as a product
//! of 2^(2^-i) factors obtained by repeated square roots: only correctly rounded IEEE 754
//! operations, so the result is bit-identical on every platform (no libm `exp2`/`powf`).

use super::*;

/// The paper's reference RTT, also Linux's default `rtt0`.
pub const RTT0: Dur = Dur::from_millis(25);

/// Linux's window clamp for Hybla, segments (`hybla_init`: `snd_cwnd_clamp = 65535`).
pub const LINUX_CLAMP_SEGMENTS: u64 = 65_535;

/// Hybla's parameters: the reference RTT (Linux's `rtt0` module parameter; ns-3 uses
/// 50 ms), and whether Linux's rules replace the paper's (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyblaConfig {
    pub rtt0: Dur,
    pub linux: bool,
}

impl Default for HyblaConfig {
    fn default() -> HyblaConfig {
        HyblaConfig {
            rtt0: RTT0,
            linux: false,
        }
    }
}
/// Fixed-point shift for rho.
const RHO_SHIFT: u32 = 16;
const RHO_ONE: u64 = 1 << RHO_SHIFT;
/// Largest slow-start exponent (Linux tcp_hybla.c: `1 << min(ca->rho, 16U)`).
const MAX_SS_EXPONENT: u64 = 16;
/// Linux `hybla_fraction`: 2^(i/8) in 1/128 units, i = 0..7.
const LINUX_FRACTIONS: [u64; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

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
    /// Linux's rules, with their own state.
    linux: Option<LinuxState>,
}

/// What Linux's `struct hybla` adds (names as there).
#[derive(Debug, Clone, Copy, Default)]
struct LinuxState {
    /// rho in 1/8 units, at least 8.
    rho_3ls: u64,
    /// The smallest srtt seen; rho is recomputed only below it.
    minrtt: Option<Dur>,
    /// Growth not yet added, in 1/128 segment.
    cents: u64,
    /// ACKs in avoidance that added less than a segment (`snd_cwnd_cnt`).
    cnt: u64,
}

impl Hybla {
    pub fn new(cfg: CcConfig) -> Hybla {
        Hybla::with_config(cfg, HyblaConfig::default())
    }

    /// A Hybla controller with a different reference RTT (Linux's `rtt0` module parameter).
    pub fn with_rtt0(cfg: CcConfig, rtt0: Dur) -> Hybla {
        Hybla::with_config(
            cfg,
            HyblaConfig {
                rtt0,
                ..HyblaConfig::default()
            },
        )
    }

    pub fn with_config(cfg: CcConfig, h: HyblaConfig) -> Hybla {
        let mut hybla = Hybla {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
            rtt0: Dur(h.rtt0.as_nanos().max(1)),
            rho: RHO_ONE,
            ss_gain: ss_gain(RHO_ONE),
            ss_rem: 0,
            linux: h.linux.then(|| LinuxState {
                rho_3ls: 8,
                ..LinuxState::default()
            }),
        };
        hybla.clamp();
        hybla
    }

    /// Linux's `snd_cwnd_clamp`, under its rules.
    fn clamp(&mut self) {
        if self.linux.is_some() {
            self.cwnd = self.cwnd.min(LINUX_CLAMP_SEGMENTS * self.mss());
        }
    }

    /// rho = max(srtt/RTT0, 1) (in Linux's rules, from the smallest srtt, to 1/8).
    pub fn rho(&self) -> f64 {
        match &self.linux {
            Some(l) => l.rho_3ls as f64 / 8.0,
            None => self.rho as f64 / RHO_ONE as f64,
        }
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
        if let Some(l) = &mut self.linux {
            l.cnt = 0; // tcp_enter_loss, tcp_init_cwnd_reduction
        }
    }

    fn mss(&self) -> u64 {
        self.mss.max(1) as u64
    }

    /// The paper's growth for one ACK's credit.
    fn paper_growth(&mut self, ack: &AckSample) {
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

    /// Linux `hybla_cong_avoid` after its cwnd-limited check: one ACK, whatever it covers.
    fn linux_growth(&mut self, ack: &AckSample, mut l: LinuxState) -> LinuxState {
        let mss = self.mss();
        if !ack.open {
            // `hybla_en` is false outside TCP_CA_Open: `tcp_reno_cong_avoid`.
            let mut credit = ack.credit;
            if self.cwnd < self.ssthresh {
                let grown = self.cwnd.saturating_add(credit).min(self.ssthresh);
                credit -= grown - self.cwnd;
                self.cwnd = grown;
            }
            if credit > 0 {
                self.cwnd = self.avoid.grow(self.cwnd, credit, self.mss);
            }
            return l;
        }
        let rho = l.rho_3ls >> 3;
        let slow_start = self.cwnd < self.ssthresh;
        let increment = if slow_start {
            let fraction = LINUX_FRACTIONS[(l.rho_3ls - (rho << 3)) as usize];
            (1u64 << rho.min(MAX_SS_EXPONENT)) * fraction - 128
        } else {
            let rho2_7ls = l.rho_3ls.saturating_mul(l.rho_3ls).saturating_mul(2);
            let inc = rho2_7ls / (self.cwnd / mss).max(1);
            if inc < 128 {
                l.cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        self.cwnd = self
            .cwnd
            .saturating_add((increment >> 7).saturating_mul(mss));
        l.cents += odd;
        if l.cents >= 128 {
            // `odd` < 128, so one step carries it all.
            self.cwnd = self.cwnd.saturating_add(mss);
            l.cents -= 128;
            l.cnt = 0;
        }
        if increment == 0 && odd == 0 && l.cnt >= self.cwnd / mss {
            self.cwnd = self.cwnd.saturating_add(mss);
            l.cnt = 0;
        }
        if slow_start {
            self.cwnd = self.cwnd.min(self.ssthresh);
        }
        l
    }

    fn linux_rho(&self, srtt: Dur) -> u64 {
        let q = (8 * srtt.as_nanos() as u128) / self.rtt0.as_nanos() as u128;
        (q.min(u64::MAX as u128) as u64).max(8)
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
    /// One segment, after a timeout.
    fn min_window(&self) -> u64 {
        self.mss()
    }
    /// Linux `hybla_init`: rho from the handshake's srtt, and a window of rho segments.
    /// Without a handshake sample srtt is zero there, and so stays `minrtt_us`: rho
    /// remains 1.
    fn on_init(&mut self, srtt: Dur) {
        let Some(mut l) = self.linux else {
            return;
        };
        l.rho_3ls = self.linux_rho(srtt);
        l.minrtt = Some(srtt);
        self.cwnd = (l.rho_3ls >> 3).min(LINUX_CLAMP_SEGMENTS) * self.mss();
        self.linux = Some(l);
    }
    fn on_ack(&mut self, ack: &AckSample) {
        let Some(mut l) = self.linux else {
            self.update_rho(ack.srtt);
            if ack.cwnd_limited {
                self.paper_growth(ack);
            }
            return;
        };
        if ack.srtt > Dur::ZERO && l.minrtt.is_none_or(|m| ack.srtt < m) {
            l.rho_3ls = self.linux_rho(ack.srtt);
            l.minrtt = Some(ack.srtt);
        }
        if ack.cwnd_limited {
            l = self.linux_growth(ack, l);
            self.clamp();
        }
        self.linux = Some(l);
    }
    /// NewReno: RFC 5681 equation (4); recovery ends with cwnd = ssthresh.
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        self.cwnd = self.ssthresh;
        self.clamp();
        self.reset_growth();
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        }
        self.cwnd = self.mss();
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

    fn linux(cfg: CcConfig) -> Hybla {
        Hybla::with_config(
            cfg,
            HyblaConfig {
                linux: true,
                ..HyblaConfig::default()
            },
        )
    }

    #[test]
    fn linux_grows_per_ack_whatever_it_covers() {
        // rho = 4: 2^4 - 1 = 15 segments per ACK, even for an ACK of two segments (the
        // paper's rules count 15 per segment of credit).
        let mut cc = linux(cfg());
        cc.on_ack(&ack(0, 2 * M, 100));
        assert_eq!(cc.cwnd(), 17 * M);
        let mut paper = Hybla::new(cfg());
        paper.on_ack(&ack(0, 2 * M, 100));
        assert_eq!(paper.cwnd(), 32 * M);
        // rho = 2.375 (19/8): 2^2 * 165/128 - 1 in the kernel's table, 4 segments and
        // 20/128 carried.
        let mut cc = linux(cfg());
        cc.on_ack(&ack(0, M, 60));
        assert_eq!((cc.rho(), cc.cwnd()), (2.375, 6 * M));
    }

    #[test]
    fn linux_clamps_at_65535_segments() {
        // 550 ms: rho = 22, exponent 16: one ACK adds 65535 segments, then the clamp.
        let mut cc = linux(cfg());
        cc.on_ack(&ack(0, M, 550));
        assert_eq!(cc.cwnd(), LINUX_CLAMP_SEGMENTS * M);
        for i in 1..10 {
            cc.on_ack(&ack(i, 2 * M, 550));
        }
        assert_eq!(cc.cwnd(), LINUX_CLAMP_SEGMENTS * M);
        // A loss halves it (ssthresh from cwnd under the `linux` profile).
        cc.on_congestion_event(&loss(10, cc.cwnd(), 550));
        assert_eq!(cc.cwnd(), LINUX_CLAMP_SEGMENTS * M / 2);
    }

    #[test]
    fn linux_recomputes_rho_only_below_the_smallest_srtt() {
        let mut cc = linux(CcConfig {
            initial_ssthresh: 2 * M,
            ..cfg()
        });
        cc.on_ack(&ack(0, M, 100));
        cc.on_ack(&ack(1, M, 200));
        assert_eq!(cc.rho(), 4.0);
        cc.on_ack(&ack(2, M, 50));
        assert_eq!(cc.rho(), 2.0);
    }

    #[test]
    fn linux_grows_as_reno_outside_the_open_state() {
        let mut cc = linux(cfg());
        cc.on_ack(&AckSample {
            open: false,
            ..ack(0, 2 * M, 550)
        });
        assert_eq!(cc.cwnd(), 4 * M, "slow start by the credit");
        let mut cc = linux(CcConfig {
            initial_window: 10 * M,
            initial_ssthresh: 10 * M,
            ..cfg()
        });
        for i in 0..10 {
            cc.on_ack(&AckSample {
                open: false,
                ..ack(i, M, 550)
            });
        }
        assert_eq!(cc.cwnd(), 11 * M, "one segment per window in avoidance");
    }

    #[test]
    fn linux_avoidance_adds_about_rho_squared_per_window() {
        let mut cc = linux(CcConfig {
            initial_window: 50 * M,
            initial_ssthresh: 50 * M,
            ..cfg()
        });
        for i in 0..50 {
            cc.on_ack(&ack(i, M, 100));
        }
        // rho^2 = 16 per window, less the kernel's truncation of 2048/cwnd per ACK.
        let added = cc.cwnd() / M - 50;
        assert!((14..=16).contains(&added), "{added}");
        // Without cwnd-limited ACKs nothing moves.
        let before = cc.cwnd();
        for i in 0..50 {
            cc.on_ack(&AckSample {
                cwnd_limited: false,
                ..ack(50 + i, M, 100)
            });
        }
        assert_eq!(cc.cwnd(), before);
    }

    #[test]
    fn linux_starts_with_rho_segments() {
        let mut cc = linux(CcConfig {
            initial_window: 10 * M,
            ..cfg()
        });
        cc.on_init(Dur::from_millis(550));
        assert_eq!((cc.rho(), cc.cwnd()), (22.0, 22 * M));
        // Below 50 ms, rho is 1: one segment (the kernel replaces IW 10).
        let mut cc = linux(cfg());
        cc.on_init(Dur::from_millis(10));
        assert_eq!(cc.cwnd(), M);
        // No handshake sample (a resent SYN): rho stays 1, as `minrtt_us` stays 0.
        let mut cc = linux(cfg());
        cc.on_init(Dur::ZERO);
        cc.on_ack(&ack(0, M, 600));
        assert_eq!((cc.rho(), cc.cwnd()), (1.0, 2 * M));
        // The paper's rules keep the initial window.
        let mut paper = Hybla::new(cfg());
        paper.on_init(Dur::from_millis(550));
        assert_eq!(paper.cwnd(), 2 * M);
    }
}
