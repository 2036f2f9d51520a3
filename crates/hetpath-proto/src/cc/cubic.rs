//! CUBIC congestion control (RFC 9438).
//!
//! In congestion avoidance the window follows W_cubic(t) = C*(t-K)^3 + W_max (section 4.2,
//! Figure 1), with K = cbrt((W_max - cwnd_epoch)/C) (Figure 2). W_max, cwnd_epoch and K are
//! computed in segments as the RFC does; the window itself stays in bytes. t is measured
//! from the epoch start (the first ACK of the congestion-avoidance stage) using `ack.now`.
//! Each ACK moves cwnd towards target = W_cubic(t + RTT), clamped to [cwnd, 1.5*cwnd], by
//! (target - cwnd)/cwnd per segment of credit (sections 4.4 concave, 4.5 convex). RTT is
//! the smoothed RTT (`ack.srtt`, falling back to `ack.min_rtt`); Linux uses the minimum RTT.
//!
//! The Reno-friendly region (section 4.3): W_est starts at cwnd_epoch and grows by
//! alpha_cubic*segments_acked/cwnd with alpha_cubic = 3(1-beta)/(1+beta), switching to 1
//! once W_est reaches cwnd_prior; whenever W_cubic(t) < W_est, cwnd = W_est.
//!
//! Loss: ssthresh = max(cwnd*beta_cubic, 2 MSS), cwnd = ssthresh (section 4.6, with cwnd in
//! place of flight_size as the RFC allows), with fast convergence (section 4.7). Timeout:
//! the same ssthresh, cwnd = 1 MSS, and the next epoch uses K = 0, W_max = cwnd_epoch
//! (section 4.8). The first epoch after a slow start that ended without loss does the same
//! (section 4.10). C and beta_cubic are parameters (`CubicConfig`).
//!
//! Slow start is RFC 5681's, ended early by HyStart when `CcConfig::hystart` asks for it
//! (`hystart.rs`): Linux's (`Classic`: ssthresh = cwnd on an ACK train or a delay rise) or
//! HyStart++ (`Rfc9406`: Conservative Slow Start, then ssthresh = cwnd). The detector sees
//! every ACK before the window grows, as Linux's `cubictcp_acked` runs before
//! `cubictcp_cong_avoid`, whether or not the sender is cwnd-limited.
//!
//! Not cwnd-limited (`AckSample::cwnd_limited` false, RFC 9438 section 4 and 5.8, Linux
//! `tcp_is_cwnd_limited` in `cubictcp_cong_avoid`): the window does not grow, neither does
//! W_est, and the epoch's clock stops: t does not advance from the first such ACK to the
//! next cwnd-limited one (the epoch start moves forward by that span, never past now).
//! Section 5.8 says t MUST NOT include periods in which cwnd was not updated because of the
//! application; Linux excludes only idle time (below) and lets t run while the flow is
//! application-limited with data in flight, then catches up at up to 1.5x per RTT.
//! Idle restart (Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`): a segment sent when
//! nothing else is in flight (`on_sent` with `in_flight <= bytes`, the sender passing the
//! pipe with this segment in it) moves the epoch start forward by the time since the
//! previous segment was sent, never past now; this is the only part that applies while
//! `cwnd_validation` is off (every ACK then says cwnd-limited). Smallest window: one
//! segment, after a timeout.
//!
//! Per-ACK cost is O(1): f64 is used only for the cubic function and K (one `cbrt` per
//! epoch); window growth uses integer remainders so no fraction of a byte is lost.

use super::hystart::HyStart;
use super::*;

/// beta_cubic is held as a fraction of this denominator, for byte arithmetic.
const BETA_DEN: u64 = 1_000_000;

/// CUBIC's parameters (RFC 9438 section 5: both are configurable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// C, in segments per second cubed (section 5.1: 0.4).
    pub c: f64,
    /// beta_cubic, the multiplicative decrease factor (section 4.6: 0.7); kept to 1e-6.
    pub beta: f64,
    /// Linux `tcp_cubic.c`'s rules where they differ from the RFC: the Reno-friendly
    /// estimate always grows by alpha_cubic (`tcp_friendliness`'s `beta_scale`; no switch
    /// to 1 at cwnd_prior, section 4.3), and the target looks ahead by the minimum RTT
    /// (`bictcp_update`'s `delay_min`), not the smoothed one, and ssthresh is truncated
    /// to whole segments.
    pub linux: bool,
}

impl Default for CubicConfig {
    fn default() -> CubicConfig {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            linux: false,
        }
    }
}

/// State of one congestion-avoidance stage.
#[derive(Debug, Clone)]
struct Epoch {
    /// t_epoch.
    start: Time,
    /// K in seconds.
    k: f64,
    /// The plateau of this stage's curve, in segments.
    w_max: f64,
    /// W_est in bytes, and the remainder of its growth (units of 1/(alpha_den*cwnd) byte).
    w_est: u64,
    est_rem: u128,
    /// Remainder of the cubic growth (units of 1/cwnd byte).
    grow_rem: u128,
    /// The clock of t is stopped since this ACK: the flow is not cwnd-limited (section 5.8).
    paused_at: Option<Time>,
}

impl Epoch {
    /// Excludes the span since `from` from t: the start moves forward, never past `now`.
    fn skip(&mut self, from: Time, now: Time) {
        self.start = (self.start + now.since(from)).min(now);
    }
}

#[derive(Debug, Clone)]
pub struct Cubic {
    c: f64,
    /// beta_cubic = beta_num / BETA_DEN, and as f64.
    beta_num: u64,
    beta: f64,
    /// alpha_cubic = 3(1-beta)/(1+beta) (section 4.3) = alpha_num / alpha_den.
    alpha_num: u64,
    alpha_den: u64,
    linux: bool,
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    /// W_max in segments as set by the last loss (fast convergence applied); zero while
    /// undefined (no loss yet, or reset by a timeout).
    w_max: f64,
    /// cwnd in bytes when ssthresh was last set (section 4.3); zero before that.
    cwnd_prior: u64,
    epoch: Option<Epoch>,
    hystart: HyStart,
    /// When the last segment was sent (Linux `lsndtime`), for the idle restart.
    last_sent: Option<Time>,
}

impl Cubic {
    pub fn new(cfg: CcConfig) -> Cubic {
        Cubic::with_config(cfg, CubicConfig::default())
    }

    pub fn with_config(cfg: CcConfig, p: CubicConfig) -> Cubic {
        let beta_num = (p.beta * BETA_DEN as f64).round() as u64;
        Cubic {
            c: p.c,
            beta_num,
            beta: beta_num as f64 / BETA_DEN as f64,
            alpha_num: 3 * (BETA_DEN - beta_num),
            alpha_den: BETA_DEN + beta_num,
            linux: p.linux,
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            w_max: 0.0,
            cwnd_prior: 0,
            epoch: None,
            hystart: {
                let mut h = HyStart::new(cfg.hystart, cfg.mss);
                h.set_paced(cfg.paced);
                h
            },
            last_sent: None,
        }
    }

    fn segments(&self, bytes: u64) -> f64 {
        bytes as f64 / self.mss as f64
    }

    fn start_epoch(&mut self, now: Time) -> Epoch {
        let cwnd_epoch = self.segments(self.cwnd);
        if self.cwnd_prior == 0 {
            // Slow start ended without a loss (section 4.10): cwnd_prior = cwnd.
            self.cwnd_prior = self.cwnd;
        }
        let (w_max, k) = if self.w_max > cwnd_epoch {
            (self.w_max, ((self.w_max - cwnd_epoch) / self.c).cbrt())
        } else {
            // No usable W_max (first stage, after a timeout, or the window already regained
            // it): K = 0 and W_max = cwnd_epoch (sections 4.8, 4.10).
            (cwnd_epoch, 0.0)
        };
        Epoch {
            start: now,
            k,
            w_max,
            w_est: self.cwnd,
            est_rem: 0,
            grow_rem: 0,
            paused_at: None,
        }
    }

    /// W_cubic(t) of Figure 1, in bytes.
    fn w_cubic(&self, ep: &Epoch, t: f64) -> f64 {
        let d = t - ep.k;
        (self.c * d * d * d + ep.w_max) * self.mss as f64
    }

    /// ssthresh = max(cwnd * beta_cubic, 2 MSS) (section 4.6). Linux counts the window in
    /// whole segments and truncates (`cubictcp_recalc_ssthresh`): 7 segments give 4.
    fn reduced(&self) -> u64 {
        let (b, d) = (self.beta_num as u128, BETA_DEN as u128);
        let mss = self.mss.max(1) as u128;
        if self.linux {
            let segs = (self.cwnd as u128 / mss * b / d).max(2);
            return (segs * mss).min(u64::MAX as u128) as u64;
        }
        let cwnd = self.cwnd as u128;
        ((cwnd / d * b + cwnd % d * b / d).min(u64::MAX as u128) as u64).max(2 * self.mss as u64)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// One segment, the loss window after a timeout.
    fn min_window(&self) -> u64 {
        self.mss.max(1) as u64
    }
    fn on_ack(&mut self, ack: &AckSample) {
        if self.hystart.on_ack(ack, self.cwnd, self.ssthresh) {
            self.ssthresh = self.cwnd;
        }
        if !ack.cwnd_limited {
            // Section 5.8: no growth, and t stops until the window is used again.
            if let Some(ep) = &mut self.epoch {
                ep.paused_at.get_or_insert(ack.now);
            }
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 slow start (RFC 9438 section 4.10), or HyStart++'s.
            let inc = self.hystart.slow_start_increase(ack.credit);
            self.cwnd = self.cwnd.saturating_add(inc);
            return;
        }
        let mut ep = match self.epoch.take() {
            Some(ep) => ep,
            None => self.start_epoch(ack.now),
        };
        if let Some(from) = ep.paused_at.take() {
            ep.skip(from, ack.now);
        }
        let cwnd = self.cwnd.max(1);
        // Section 4.3, Figure 4: W_est += alpha_cubic * segments_acked / cwnd.
        let alpha = if ep.w_est >= self.cwnd_prior && !self.linux {
            self.alpha_den
        } else {
            self.alpha_num
        };
        ep.est_rem += alpha as u128 * self.mss as u128 * ack.credit as u128;
        let den = self.alpha_den as u128 * cwnd as u128;
        let inc = div(ep.est_rem, den);
        ep.est_rem -= inc * den;
        ep.w_est = ep.w_est.saturating_add(inc.min(u64::MAX as u128) as u64);

        let t = ack.now.since(ep.start).as_secs_f64();
        if self.w_cubic(&ep, t) < ep.w_est as f64 {
            // Reno-friendly region.
            self.cwnd = self.cwnd.max(ep.w_est);
        } else {
            // Concave (cwnd < W_max) and convex regions, sections 4.4 and 4.5.
            let rtt = match (self.linux, ack.srtt > Dur::ZERO) {
                (true, _) if ack.min_rtt > Dur::ZERO => ack.min_rtt,
                (_, true) => ack.srtt,
                _ => ack.min_rtt,
            };
            let target = self
                .w_cubic(&ep, t + rtt.as_secs_f64())
                .min(1.5 * cwnd as f64);
            let target = (target.max(0.0) as u64).max(cwnd);
            ep.grow_rem += (target - cwnd) as u128 * ack.credit as u128;
            let inc = div(ep.grow_rem, cwnd as u128);
            ep.grow_rem -= inc * cwnd as u128;
            self.cwnd = self.cwnd.saturating_add(inc.min(u64::MAX as u128) as u64);
        }
        self.epoch = Some(ep);
    }
    fn on_recovery_ack(&mut self, ack: &AckSample) {
        self.hystart.on_recovery_ack(ack);
    }
    /// Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`: sending again after idle.
    fn on_sent(&mut self, now: Time, bytes: u64, in_flight: u64) {
        if in_flight <= bytes {
            if let (Some(ep), Some(last)) = (&mut self.epoch, self.last_sent) {
                // While t is stopped (section 5.8) the idle time is excluded already.
                if ep.paused_at.is_none() {
                    ep.skip(last, now);
                }
            }
        }
        self.last_sent = Some(now);
    }
    /// Sections 4.6 and 4.7.
    fn on_congestion_event(&mut self, _ev: &CongestionEvent) {
        let cwnd_seg = self.segments(self.cwnd);
        self.w_max = if cwnd_seg < self.w_max {
            cwnd_seg * (1.0 + self.beta) / 2.0
        } else {
            cwnd_seg
        };
        self.cwnd_prior = self.cwnd;
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
        self.epoch = None;
        self.hystart.on_congestion();
    }
    /// Section 4.8.
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.cwnd_prior = self.cwnd;
            self.ssthresh = self.reduced();
        }
        self.cwnd = self.mss as u64;
        self.w_max = 0.0;
        self.epoch = None;
        self.hystart.on_rto(ev);
    }
}

/// `a / b`, in 64-bit arithmetic when both fit (every window in practice): the
/// remainders are 128-bit only so that no product can overflow, and this runs per ACK.
#[inline]
fn div(a: u128, b: u128) -> u128 {
    if (a | b) >> 64 == 0 {
        (a as u64 / b as u64) as u128
    } else {
        a / b
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    proptest::proptest! {
        #[test]
        fn the_64_bit_division_is_the_128_bit_one(a: u128, b in 1u128.., small: bool) {
            let (a, b) = if small { (a >> 64, (b >> 64).max(1)) } else { (a, b) };
            proptest::prop_assert_eq!(div(a, b), a / b);
        }
    }

    /// The RFC 9438 defaults the tests reason with.
    const C: f64 = 0.4;
    const BETA: f64 = 0.7;

    const M: u64 = MSS as u64;

    fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
        C * (t - k).powi(3) + w_max
    }

    /// One round trip: cwnd/MSS single-segment ACKs evenly spread over (t0, t0 + rtt].
    fn round(cc: &mut Cubic, t0_ns: u64, rtt_ms: u64) -> u64 {
        let rtt_ns = rtt_ms * 1_000_000;
        let n = (cc.cwnd() / M).max(1);
        for i in 1..=n {
            let mut a = ack(0, M, rtt_ms);
            a.now = Time(t0_ns + rtt_ns * i / n);
            cc.on_ack(&a);
        }
        t0_ns + rtt_ns
    }

    fn in_avoidance(segments: u64) -> Cubic {
        Cubic::new(CcConfig {
            initial_window: segments * M,
            initial_ssthresh: segments * M,
            ..cfg()
        })
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let mut cc = Cubic::new(cfg());
        for i in 0..2 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 4 * M);
    }

    #[test]
    fn first_avoidance_stage_tracks_reno() {
        // No loss yet: K = 0, W_max = cwnd_epoch and alpha_cubic = 1 (W_est >= cwnd_prior).
        // At 100 ms RTT the cubic curve adds only C*t^3 = 0.4 segments in the first second,
        // so the Reno-friendly estimate governs and CUBIC grows like NewReno fed the same ACKs.
        let cfg = CcConfig {
            initial_window: 10 * M,
            initial_ssthresh: 10 * M,
            ..cfg()
        };
        let (mut cc, mut reno) = (Cubic::new(cfg), NewReno::new(cfg));
        for i in 0..=100 {
            let a = ack(i * 10, M, 100);
            cc.on_ack(&a);
            reno.on_ack(&a);
        }
        let ep = cc.epoch.as_ref().unwrap();
        assert_eq!((ep.k, ep.w_max), (0.0, 10.0));
        assert!(reno.cwnd() >= 17 * M);
        assert!(
            cc.cwnd().abs_diff(reno.cwnd()) <= M,
            "cubic {} reno {}",
            cc.cwnd(),
            reno.cwnd()
        );
    }

    #[test]
    fn loss_multiplies_by_beta_with_fast_convergence() {
        let mut cc = in_avoidance(100);
        cc.on_congestion_event(&loss(0, 100 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70 * M, 70 * M));
        assert_eq!(cc.w_max, 100.0);
        // A second loss below W_max: W_max = cwnd*(1+beta)/2 (section 4.7).
        cc.on_congestion_event(&loss(0, 70 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (49 * M, 49 * M));
        assert!((cc.w_max - 70.0 * (1.0 + BETA) / 2.0).abs() < 1e-9);
        cc.on_ack(&ack(1, M, 100));
        let k = cc.epoch.as_ref().unwrap().k;
        assert!((k - ((cc.w_max - 49.0) / C).cbrt()).abs() < 1e-9);
        // Floor of 2 MSS.
        let mut small = in_avoidance(2);
        small.on_congestion_event(&loss(0, 2 * M, 100));
        assert_eq!(small.ssthresh(), 2 * M);
    }

    #[test]
    fn rto_resets_epoch_to_loss_window() {
        let mut cc = in_avoidance(40);
        cc.on_congestion_event(&loss(0, 40 * M, 100));
        cc.on_rto(&loss(5, 28 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 28 * M * 7 / 10));
        assert!(cc.epoch.is_none());
        // Slow start back to ssthresh, then an epoch with K = 0 and W_max = cwnd_epoch.
        let mut ms = 10;
        while cc.cwnd() < cc.ssthresh() {
            cc.on_ack(&ack(ms, M, 100));
            ms += 1;
        }
        assert!(cc.epoch.is_none());
        let cwnd_epoch = cc.cwnd() as f64 / M as f64;
        cc.on_ack(&ack(ms, M, 100));
        let ep = cc.epoch.as_ref().unwrap();
        assert_eq!((ep.k, ep.w_max), (0.0, cwnd_epoch));
    }

    #[test]
    fn concave_step_aims_one_rtt_ahead() {
        // Section 4.4: each segment acked adds (W_cubic(t + RTT) - cwnd)/cwnd segments.
        let (w_max, rtt_ms) = (100.0, 100);
        let mut cc = in_avoidance(100);
        cc.on_congestion_event(&loss(0, 100 * M, rtt_ms));
        cc.on_ack(&ack(0, M, rtt_ms)); // the epoch starts: t = 0
        let before = cc.cwnd() as f64;
        cc.on_ack(&ack(1000, M, rtt_ms)); // t = 1 s, where W_cubic(t) is far above W_est
        let k = (w_max * (1.0 - BETA) / C).cbrt();
        let target = w_cubic(1.0 + rtt_ms as f64 * 1e-3, k, w_max) * M as f64;
        let want = before + (target - before) / before * M as f64;
        assert!(
            (cc.cwnd() as f64 - want).abs() <= 1.0,
            "{} vs {want}",
            cc.cwnd()
        );
    }

    #[test]
    fn target_is_clamped_to_one_and_a_half_cwnd() {
        // Far into the convex region the curve is huge; the target is capped at 1.5*cwnd,
        // so a segment of credit adds half a segment.
        let mut cc = in_avoidance(10);
        cc.on_ack(&ack(0, M, 100));
        let before = cc.cwnd();
        cc.on_ack(&ack(100_000, M, 100));
        assert_eq!(cc.cwnd() - before, M / 2);
    }

    #[test]
    fn returns_to_w_max_at_k_and_plateaus() {
        let (w_max, rtt_ms) = (100.0, 100);
        let mut cc = in_avoidance(w_max as u64);
        cc.on_congestion_event(&loss(0, 100 * M, rtt_ms));
        let k = (w_max * (1.0 - BETA) / C).cbrt();
        // cwnd lags the curve by at most about one round of its steepest slope (at t = 0).
        let tol = 3.0 * C * k * k * rtt_ms as f64 * 1e-3 + 1.0;
        let mut t = 0;
        let mut samples = Vec::new();
        while (t as f64) < (k + 2.0) * 1e9 {
            t = round(&mut cc, t, rtt_ms);
            let secs = t as f64 * 1e-9;
            let cwnd = cc.cwnd() as f64 / M as f64;
            let want = w_cubic(secs, k, w_max);
            assert!(
                (cwnd - want).abs() <= tol,
                "t={secs:.1} cwnd={cwnd:.2} curve={want:.2}"
            );
            samples.push((secs, cwnd));
        }
        let at = |s: f64| {
            samples
                .iter()
                .min_by(|a, b| (a.0 - s).abs().total_cmp(&(b.0 - s).abs()))
                .unwrap()
                .1
        };
        // Back at W_max around t = K ...
        assert!((at(k) - w_max).abs() <= 1.5, "cwnd at K = {}", at(k));
        // ... on a plateau: the second around K adds little, the first second a lot.
        let plateau = at(k + 0.5) - at(k - 0.5);
        let first = at(1.0) - at(0.0);
        assert!(
            plateau < w_cubic(k + 0.5, k, w_max) - w_cubic(k - 0.5, k, w_max) + 1.0,
            "{plateau}"
        );
        assert!(
            first > (w_cubic(1.0, k, w_max) - w_cubic(0.0, k, w_max)) * 0.8,
            "{first}"
        );
        assert!(first > 10.0 * plateau.max(0.1));
    }

    #[test]
    fn reno_friendly_region_on_short_rtt() {
        // Short RTT: Reno's per-round growth outpaces the cubic curve, so W_est governs.
        let mut cc = in_avoidance(20);
        cc.on_congestion_event(&loss(0, 20 * M, 10));
        let start = cc.cwnd();
        let mut t = 0;
        for _ in 0..5 {
            t = round(&mut cc, t, 10);
        }
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        let grown = (cc.cwnd() - start) as f64 / M as f64;
        assert!(
            (grown - 5.0 * alpha).abs() <= 0.25,
            "grew {grown} segments, want {}",
            5.0 * alpha
        );
        // Once W_est reaches cwnd_prior, alpha becomes 1: one MSS per round.
        let (grown, t) = ten_rounds_past_cwnd_prior(&mut cc, t);
        assert!((grown - 10.0).abs() <= 0.5, "grew {grown} segments");
        let ep = cc.epoch.as_ref().unwrap();
        assert!(cc.w_cubic(ep, t as f64 * 1e-9) < cc.cwnd() as f64);
    }

    /// Rounds of 10 ms from `t` until cwnd regains cwnd_prior, then ten more: the
    /// segments those ten added, and the time after them.
    fn ten_rounds_past_cwnd_prior(cc: &mut Cubic, mut t: u64) -> (f64, u64) {
        while cc.cwnd() < cc.cwnd_prior {
            t = round(cc, t, 10);
        }
        let from = cc.cwnd();
        for _ in 0..10 {
            t = round(cc, t, 10);
        }
        ((cc.cwnd() - from) as f64 / M as f64, t)
    }

    fn linux(segments: u64) -> Cubic {
        let cfg = CcConfig {
            initial_window: segments * M,
            initial_ssthresh: segments * M,
            ..cfg()
        };
        Cubic::with_config(
            cfg,
            CubicConfig {
                linux: true,
                ..CubicConfig::default()
            },
        )
    }

    #[test]
    fn linux_keeps_the_reno_friendly_rate_past_cwnd_prior() {
        // tcp_friendliness grows the estimate by alpha_cubic per round for good: ten rounds
        // past cwnd_prior add 10 * 0.53 segments, where the RFC's switch to 1 adds 10.
        let mut cc = linux(20);
        cc.on_congestion_event(&loss(0, 20 * M, 10));
        let (grown, _) = ten_rounds_past_cwnd_prior(&mut cc, 0);
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        assert!((grown - 10.0 * alpha).abs() <= 0.5, "grew {grown} segments");
    }

    #[test]
    fn linux_truncates_ssthresh_to_whole_segments() {
        // cubictcp_recalc_ssthresh: 7 * 717 / 1024 = 4 segments; the RFC's 4.9 in bytes.
        let mut cc = linux(7);
        cc.on_congestion_event(&loss(0, 7 * M, 50));
        assert_eq!(cc.ssthresh(), 4 * M);
        let mut rfc = in_avoidance(7);
        rfc.on_congestion_event(&loss(0, 7 * M, 50));
        assert_eq!(rfc.ssthresh(), 7 * M * 7 / 10);
        let mut tiny = linux(2);
        tiny.on_congestion_event(&loss(0, 2 * M, 50));
        assert_eq!(tiny.ssthresh(), 2 * M, "never below two segments");
    }

    /// Slow start from 4 segments over a 100 ms path whose RTT rises to `late_ms` once the
    /// window reaches 32 segments; ACKs 5 ms apart, the flight what the window released.
    /// Returns the ACK time after the last round.
    fn slow_start(cc: &mut Cubic, late_ms: u64, rounds: usize) -> u64 {
        let mut t = 0;
        for _ in 0..rounds {
            let n = cc.cwnd() / M;
            let rtt = if n >= 32 { late_ms } else { 100 };
            for i in 0..n {
                t += 5;
                let mut a = ack(t, M, rtt);
                a.bytes_in_flight = (n + 1 + i) * M;
                cc.on_ack(&a);
            }
        }
        t
    }

    fn with_hystart(h: Hystart) -> Cubic {
        Cubic::new(CcConfig {
            initial_window: 4 * M,
            hystart: h,
            ..cfg()
        })
    }

    #[test]
    fn hystart_classic_ends_slow_start_and_starts_a_k0_epoch() {
        let mut cc = with_hystart(Hystart::Classic);
        slow_start(&mut cc, 120, 5);
        // Found on the ninth sample of the first round that saw only 120 ms (hystart.rs
        // tests, `classic_leaves_slow_start_when_rtt_rises`).
        assert_eq!(cc.ssthresh(), 54 * M);
        assert_eq!(cc.cwnd_prior, 54 * M);
        let ep = cc.epoch.as_ref().unwrap();
        assert_eq!((ep.k, ep.w_max), (0.0, 54.0));
        // The rest of that window grew in congestion avoidance, not slow start.
        assert!(cc.cwnd() < 56 * M, "{}", cc.cwnd());
    }

    #[test]
    fn hystart_off_or_flat_rtt_keeps_slow_start() {
        for (h, late) in [
            (Hystart::Off, 200),
            (Hystart::Classic, 100),
            (Hystart::Rfc9406, 100),
        ] {
            let mut cc = with_hystart(h);
            slow_start(&mut cc, late, 6);
            assert_eq!(
                (cc.cwnd(), cc.ssthresh()),
                ((4 * M) << 6, u64::MAX),
                "{h:?}"
            );
        }
    }

    #[test]
    fn hystart_rfc9406_grows_a_quarter_in_css() {
        let mut cc = with_hystart(Hystart::Rfc9406);
        let t = slow_start(&mut cc, 120, 4);
        assert!(cc.hystart.in_css());
        assert_eq!(cc.ssthresh(), u64::MAX);
        let before = cc.cwnd();
        let mut a = ack(t + 5, M, 120);
        a.bytes_in_flight = 60 * M;
        cc.on_ack(&a);
        assert_eq!(cc.cwnd() - before, M / 4);
        // A loss ends HyStart++ for good.
        cc.on_congestion_event(&loss(t + 6, cc.cwnd(), 120));
        assert!(!cc.hystart.in_css());
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let idle = |ms| AckSample {
            cwnd_limited: false,
            ..ack(ms, M, 100)
        };
        // Slow start.
        let mut cc = Cubic::new(cfg());
        for i in 0..10 {
            cc.on_ack(&idle(i));
        }
        assert_eq!(cc.cwnd(), 2 * M);
        cc.on_ack(&ack(10, M, 100));
        assert_eq!(cc.cwnd(), 3 * M);
        // Congestion avoidance, in the convex region where every ACK would add M/2.
        let mut cc = in_avoidance(10);
        cc.on_ack(&ack(0, M, 100));
        let (cwnd, w_est) = (cc.cwnd(), cc.epoch.as_ref().unwrap().w_est);
        for i in 1..100 {
            cc.on_ack(&idle(i * 1000));
        }
        assert_eq!(cc.cwnd(), cwnd);
        assert_eq!(cc.epoch.as_ref().unwrap().w_est, w_est);
        cc.on_ack(&ack(100_000, M, 100));
        assert!(cc.cwnd() > cwnd);
    }

    #[test]
    fn application_limited_time_is_not_in_t() {
        // Section 5.8: t stops from the first ACK that is not cwnd-limited to the next one
        // that is. A flow application-limited from 1 s to 9 s is where a flow that was
        // never limited is at 1 s, and behind one whose clock ran: at t = 1 s an ACK moves
        // cwnd (70 segments) a quarter of a segment towards W_cubic(1.1 s) = 88 segments,
        // at t = 9 s half a segment, towards 1.5 cwnd.
        let start = || {
            let mut cc = in_avoidance(100);
            cc.on_congestion_event(&loss(0, 100 * M, 100));
            cc.on_ack(&ack(0, M, 100)); // t = 0
            cc
        };
        let (mut paused, mut plain, mut running) = (start(), start(), start());
        for i in 0..8 {
            paused.on_ack(&AckSample {
                cwnd_limited: false,
                ..ack(1000 + i * 1000, M, 100)
            });
        }
        paused.on_ack(&ack(9000, M, 100));
        plain.on_ack(&ack(1000, M, 100));
        running.on_ack(&ack(9000, M, 100));
        assert_eq!(paused.epoch.as_ref().unwrap().start, Time(8_000_000_000));
        assert_eq!(paused.cwnd(), plain.cwnd());
        assert!(running.cwnd() > paused.cwnd() + M / 5);
    }

    #[test]
    fn sending_after_idle_shifts_the_epoch() {
        // Linux CA_EVENT_TX_START: a segment sent with nothing in flight moves the epoch
        // start by the time since the previous segment was sent.
        let start = || {
            let mut cc = in_avoidance(100);
            cc.on_congestion_event(&loss(0, 100 * M, 100));
            cc.on_ack(&ack(0, M, 100));
            cc.on_sent(Time(500_000_000), M, 50 * M);
            cc
        };
        let mut idle = start();
        idle.on_sent(Time(3_500_000_000), M, M); // 3 s after the last send, flight empty
        assert_eq!(idle.epoch.as_ref().unwrap().start, Time(3_000_000_000));
        idle.on_ack(&ack(4000, M, 100)); // t = 1 s
        let mut busy = start();
        busy.on_sent(Time(3_500_000_000), M, 40 * M); // data in flight: no shift
        assert_eq!(busy.epoch.as_ref().unwrap().start, Time::ZERO);
        let mut plain = start();
        plain.on_ack(&ack(1000, M, 100));
        assert_eq!(idle.cwnd(), plain.cwnd());
        // Never past now: the epoch began (2 s) after the last segment was sent (0 s).
        let mut late = in_avoidance(100);
        late.on_sent(Time::ZERO, M, M);
        late.on_ack(&ack(2000, M, 100));
        late.on_sent(Time(3_000_000_000), M, M);
        assert_eq!(late.epoch.as_ref().unwrap().start, Time(3_000_000_000));
    }
}
