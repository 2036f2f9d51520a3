//! VCP end host (Xia, Subramanian, Stoica, Kalyanaraman, "One More Bit Is Enough",
//! SIGCOMM 2005, section 3), checked against the authors' ns-2 sender
//! `vcp-src.cc`. The load-factor engine here (`Core`) is shared with MPCP (`mpcp.rs`).
//!
//! Every data segment asks for the lowest code (01, low load); routers raise it
//! (`rap::load`), the receiver echoes the latest one and the sender reads it as a load
//! factor. The latest reading picks the policy applied on each ACK:
//!
//! - low load (rho < 80%): MI, cwnd *= 1 + xi per t_rho, xi = 0.0625, applied per RTT as
//!   xi_s = (1 + xi)^(rtt/t_rho) - 1: each MSS of credit adds xi_s MSS;
//! - high load (80% <= rho < 100%): AI, alpha = 1 MSS per t_rho, per RTT
//!   alpha_s = alpha * (rtt/t_rho)^2 so that every flow gains rate at the same pace:
//!   each MSS of credit adds alpha_s * MSS / cwnd;
//! - overload: MD, cwnd *= beta = 0.875. The router's reading still reflects the old rate
//!   for up to t_rho, so (ns-2 `md_wait_timer_`) further overload readings are ignored for
//!   t_rho and then answered with AI for one RTT: at most one MD per t_rho + RTT.
//!
//! rtt/t_rho is capped at 2.5 (ns-2 `MAX_RTT_BY_TRHO`; rtt = 500 ms, where ns-2's AI
//! scaling also stops being quadratic); before the first RTT sample rtt is taken as 100 ms
//! (ns-2 `TYPICAL_RTT`). There is no slow start: MI replaces it (section 3; seed 004
//! section II-A).
//!
//! Cwnd validation (RFC 7661 section 4.3): MI and AI apply only on ACKs that say the
//! sender is cwnd-limited; MD (from an overload reading) always does. Smallest window:
//! one segment.
//!
//! Losses are handled as TCP does (ns-2 falls back to `TcpAgent::slowdown`): a loss
//! episode halves the flight (RFC 5681 equation (4)), a timeout leaves one segment, and
//! growth resumes by MI/AI. Powers are computed with square roots only (as in `hybla`), so
//! results are bit-identical on every platform.

use super::*;
use crate::rap::load::{LOW_LOAD_END, OVERLOAD, T_RHO};

/// VCP's MI factor per t_rho (section 3; ns-2 `k_ * (1/0.8 - 1)` with `k_` = 0.25).
pub const XI: f64 = 0.0625;
/// AI step per t_rho, in MSS (section 3; ns-2 `alpha_`).
pub const ALPHA: f64 = 1.0;
/// MD factor (section 3; ns-2 `beta_`).
pub const BETA: f64 = 0.875;
/// Largest rtt/t_rho used in the scaling (ns-2 `MAX_RTT_BY_TRHO`).
pub const MAX_RTT_RATIO: f64 = 2.5;
/// RTT assumed before the first sample (ns-2 `TYPICAL_RTT`).
pub const DEFAULT_RTT: Dur = Dur::from_millis(100);
/// Upper bound on the window, bytes: keeps the state finite.
const MAX_CWND: f64 = (1u64 << 50) as f64;

/// The control law a load-factor sender applies in each region.
#[derive(Clone, Copy, Debug)]
pub(super) struct Policy {
    /// MI factor per t_rho at load factor rho (< 80%).
    pub xi: fn(f64) -> f64,
    /// MD factor at load factor rho (>= 100%).
    pub beta: fn(f64) -> f64,
    /// Scale MI and AI to the flow's RTT (section 3); unscaled, they apply per RTT.
    pub rtt_scaled: bool,
    /// With `rtt_scaled`, compound MI over at most one t_rho per RTT: one MI step per
    /// reading that can reflect the last one (MPCP's stand-in law, `mpcp.rs`). VCP's
    /// section 3 compounds over rtt/t_rho, which its small xi keeps below 100%.
    pub mi_once_per_feedback: bool,
    /// Losses shrink the window as in TCP; RAPPEP's controllers ignore them.
    pub loss_responsive: bool,
}

fn vcp_xi(_: f64) -> f64 {
    XI
}

fn vcp_beta(_: f64) -> f64 {
    BETA
}

/// Where the MD rule stands at some instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MdPhase {
    /// No MD recently: an overload reading triggers one.
    Ready,
    /// Within t_rho of the last MD: overload readings are ignored.
    Freeze,
    /// The RTT after that: overload readings are answered with AI.
    Additive,
}

/// A window driven by load-factor readings (VCP, MPCP and MPCP-PEP).
#[derive(Clone, Debug)]
pub(super) struct Core {
    policy: Policy,
    mss: f64,
    cwnd: f64,
    ssthresh: u64,
    /// Latest load factor read, if any (the sender starts in low load, as ns-2).
    load: Option<f64>,
    /// Smoothed RTT of the last ACK.
    rtt: Dur,
    last_md: Option<Time>,
}

impl Core {
    pub fn new(cfg: CcConfig, policy: Policy) -> Core {
        let mss = cfg.mss.max(1) as f64;
        Core {
            policy,
            mss,
            cwnd: (cfg.initial_window as f64).clamp(mss, MAX_CWND),
            ssthresh: cfg.initial_ssthresh,
            load: None,
            rtt: DEFAULT_RTT,
            last_md: None,
        }
    }

    pub fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// rtt/t_rho, capped; 1 when the parameters are not RTT-scaled.
    fn rtt_ratio(&self) -> f64 {
        if !self.policy.rtt_scaled {
            return 1.0;
        }
        (self.rtt.as_secs_f64() / T_RHO.as_secs_f64()).min(MAX_RTT_RATIO)
    }

    fn md_phase(&self, now: Time) -> MdPhase {
        let Some(t) = self.last_md else {
            return MdPhase::Ready;
        };
        let since = now.since(t);
        if since < T_RHO {
            MdPhase::Freeze
        } else if since < T_RHO + self.rtt {
            MdPhase::Additive
        } else {
            MdPhase::Ready
        }
    }

    fn set_cwnd(&mut self, cwnd: f64) {
        if !cwnd.is_nan() {
            self.cwnd = cwnd.clamp(self.mss, MAX_CWND);
        }
    }

    /// A load factor arrived. NaN (no reading) is ignored; an overload reading may MD now.
    pub fn on_feedback(&mut self, now: Time, lf: f64) {
        if lf.is_nan() {
            return;
        }
        self.load = Some(lf.max(0.0));
        self.maybe_md(now);
    }

    /// Section 3.2: MD once, then ignore overload for t_rho (ns-2 `md_wait_timer_`).
    fn maybe_md(&mut self, now: Time) {
        match self.load {
            Some(rho) if rho >= OVERLOAD && self.md_phase(now) == MdPhase::Ready => {
                let beta = (self.policy.beta)(rho);
                self.set_cwnd(self.cwnd * beta);
                self.last_md = Some(now);
            }
            _ => {}
        }
    }

    /// One segment.
    pub fn min_window(&self) -> u64 {
        self.mss as u64
    }

    /// MI or AI for `credit` bytes acknowledged, as the latest reading says; no growth
    /// unless cwnd-limited.
    pub fn on_ack(&mut self, ack: &AckSample) {
        if ack.srtt > Dur::ZERO {
            self.rtt = ack.srtt;
        }
        let rho = self.load.unwrap_or(0.0);
        let credit = ack.credit as f64;
        let increase = rho < OVERLOAD || self.md_phase(ack.now) == MdPhase::Additive;
        if increase && !ack.cwnd_limited {
            return;
        }
        if rho < LOW_LOAD_END {
            let xi = (self.policy.xi)(rho).max(0.0);
            let r = if self.policy.mi_once_per_feedback {
                self.rtt_ratio().min(1.0)
            } else {
                self.rtt_ratio()
            };
            let xi_s = pow(1.0 + xi, r) - 1.0;
            self.set_cwnd(self.cwnd + xi_s * credit);
        } else if increase {
            let r = self.rtt_ratio();
            let alpha_s = ALPHA * r * r * self.mss;
            self.set_cwnd(self.cwnd + alpha_s * credit / self.cwnd);
        } else {
            // Overload: MD if the last one is old enough, nothing while frozen.
            self.maybe_md(ack.now);
        }
    }

    /// Loss episode: RFC 5681 equation (4), unless the policy ignores losses.
    pub fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if self.policy.loss_responsive {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss as u32);
            self.set_cwnd(self.ssthresh as f64);
        }
    }

    /// Timeout: one segment (RFC 5681 section 3.1), unless the policy ignores losses.
    pub fn on_rto(&mut self, ev: &CongestionEvent) {
        if self.policy.loss_responsive {
            if !ev.repeat {
                self.ssthresh = half_flight(ev.bytes_in_flight, self.mss as u32);
            }
            self.set_cwnd(self.mss);
        }
    }
}

/// base^exp for base >= 1 and 0 <= exp <= 64, from multiplications and square roots only
/// (correctly rounded IEEE 754 operations, so the result is the same everywhere).
pub(super) fn pow(base: f64, exp: f64) -> f64 {
    if base.is_nan() || exp.is_nan() || base <= 1.0 || exp <= 0.0 {
        return 1.0;
    }
    let exp = exp.min(64.0);
    let whole = exp.floor();
    let mut frac = exp - whole;
    let mut result = 1.0f64;
    for _ in 0..whole as u32 {
        result *= base;
    }
    let mut root = base;
    for _ in 0..40 {
        root = root.sqrt(); // base^(2^-k)
        frac *= 2.0;
        if frac >= 1.0 {
            result *= root;
            frac -= 1.0;
        }
    }
    result
}

#[derive(Debug, Clone)]
pub struct Vcp {
    core: Core,
}

impl Vcp {
    pub fn new(cfg: CcConfig) -> Vcp {
        let policy = Policy {
            xi: vcp_xi,
            beta: vcp_beta,
            rtt_scaled: true,
            mi_once_per_feedback: false,
            loss_responsive: true,
        };
        Vcp {
            core: Core::new(cfg, policy),
        }
    }
}

impl CongestionControl for Vcp {
    fn name(&self) -> &'static str {
        "vcp"
    }
    fn cwnd(&self) -> u64 {
        self.core.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.core.ssthresh()
    }
    /// One segment.
    fn min_window(&self) -> u64 {
        self.core.min_window()
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.core.on_ack(ack);
    }
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.core.on_congestion_event(ev);
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        self.core.on_rto(ev);
    }
    /// Section 3.1: the sender marks every data packet 01 (low load).
    fn request(&self, _srtt: Dur) -> Option<RouterFeedback> {
        Some(RouterFeedback::Load { code: 1, bits: 2 })
    }
    fn on_feedback(&mut self, now: Time, fb: Feedback) {
        if let Feedback::Load(lf) = fb {
            self.core.on_feedback(now, lf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::rap::load_of;

    const M: u64 = MSS as u64;
    const LOW: f64 = 0.4;
    const HIGH: f64 = 0.9;
    const OVER: f64 = 1.1;

    fn vcp(cwnd_mss: u64) -> Vcp {
        Vcp::new(CcConfig {
            initial_window: cwnd_mss * M,
            ..cfg()
        })
    }

    fn at(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    /// One RTT of ACKs, one per segment of the window, starting at `t_ms`, each preceded
    /// by feedback `lf` as a VCP echo is.
    fn round(cc: &mut Vcp, t_ms: u64, srtt_ms: u64, lf: f64) {
        let n = cc.cwnd() / M;
        for i in 0..n {
            let t = t_ms + i * srtt_ms / n.max(1);
            cc.on_feedback(at(t), Feedback::Load(lf));
            cc.on_ack(&ack(t, M, srtt_ms));
        }
    }

    fn close(got: u64, want: f64, tol: f64) {
        assert!(
            (got as f64 - want).abs() <= want * tol + 1.0,
            "{got} vs {want:.1}"
        );
    }

    #[test]
    fn request_is_low_load_on_two_bits() {
        let cc = vcp(2);
        assert_eq!(
            cc.request(Dur::ZERO),
            Some(RouterFeedback::Load { code: 1, bits: 2 })
        );
        assert_eq!(cc.name(), "vcp");
        // The echoed codes read back into the three regions.
        assert_eq!(
            [load_of(1, 2), load_of(2, 2), load_of(3, 2)],
            [LOW, HIGH, OVER]
        );
    }

    #[test]
    fn low_load_is_mi_scaled_to_rtt() {
        // rtt = t_rho: one RTT multiplies by 1 + xi.
        let mut cc = vcp(16);
        round(&mut cc, 0, 200, LOW);
        close(cc.cwnd(), 16_000.0 * 1.0625, 1e-9);
        // rtt = t_rho / 4: one RTT multiplies by 1.0625^(1/4), four by 1.0625.
        let mut cc = vcp(16);
        round(&mut cc, 0, 50, LOW);
        close(cc.cwnd(), 16_000.0 * 1.0625f64.powf(0.25), 1e-6);
        // rtt = 1 s: the ratio is capped at 2.5.
        let mut cc = vcp(16);
        round(&mut cc, 0, 1000, LOW);
        close(cc.cwnd(), 16_000.0 * 1.0625f64.powf(2.5), 1e-6);
    }

    #[test]
    fn starts_in_mi_without_feedback() {
        let mut cc = vcp(4);
        for i in 0..4 {
            cc.on_ack(&ack(i, M, 200));
        }
        close(cc.cwnd(), 4000.0 * 1.0625, 1e-9);
    }

    #[test]
    fn high_load_is_ai_scaled_by_rtt_squared() {
        // rtt = t_rho: +1 MSS per RTT.
        let mut cc = vcp(20);
        round(&mut cc, 0, 200, HIGH);
        close(cc.cwnd(), 21_000.0, 0.003);
        // rtt = t_rho / 2: +1/4 MSS per RTT, so +1 MSS per 200 ms as well.
        let mut cc = vcp(20);
        round(&mut cc, 0, 100, HIGH);
        close(cc.cwnd(), 20_250.0, 0.001);
    }

    #[test]
    fn overload_is_one_md_then_freeze_then_ai() {
        let mut cc = vcp(40);
        // t = 0..100 ms: a whole RTT of overload readings gives one MD.
        round(&mut cc, 0, 100, OVER);
        assert_eq!(cc.cwnd(), 35_000);
        // Still within t_rho of the MD: frozen.
        round(&mut cc, 100, 90, OVER);
        assert_eq!(cc.cwnd(), 35_000);
        // t_rho .. t_rho + rtt after the MD: AI (rtt 100 ms: +1/4 MSS per RTT).
        for i in 0..35 {
            cc.on_feedback(at(200 + i), Feedback::Load(OVER));
            cc.on_ack(&ack(200 + i, M, 100));
        }
        close(cc.cwnd(), 35_250.0, 0.001);
        // After t_rho + rtt, overload means MD again.
        let before = cc.cwnd() as f64;
        cc.on_feedback(at(300), Feedback::Load(OVER));
        close(cc.cwnd(), before * BETA, 1e-6);
    }

    #[test]
    fn mi_and_ai_wait_for_a_cwnd_limited_ack_but_md_does_not() {
        let idle = |t| AckSample {
            cwnd_limited: false,
            ..ack(t, M, 100)
        };
        for lf in [LOW, HIGH] {
            let mut cc = vcp(10);
            cc.on_feedback(at(0), Feedback::Load(lf));
            cc.on_ack(&idle(0));
            assert_eq!(cc.cwnd(), 10 * M, "load {lf}");
        }
        let mut cc = vcp(40);
        cc.on_feedback(at(0), Feedback::Load(OVER));
        cc.on_ack(&idle(0));
        assert_eq!(cc.cwnd(), 35_000);
    }

    #[test]
    fn low_and_high_load_act_during_the_freeze() {
        let mut cc = vcp(16);
        cc.on_feedback(at(0), Feedback::Load(OVER));
        assert_eq!(cc.cwnd(), 14_000);
        round(&mut cc, 10, 200, LOW);
        close(cc.cwnd(), 14_000.0 * 1.0625, 1e-9);
    }

    #[test]
    fn losses_are_tcp_like() {
        let mut cc = vcp(20);
        cc.on_congestion_event(&loss(0, 20 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, 10 * M));
        cc.on_rto(&loss(10, 10 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 5 * M));
        // Growth resumes by MI from one segment (no slow start).
        cc.on_ack(&ack(20, M, 200));
        close(cc.cwnd(), 1062.5, 1e-9);
    }

    #[test]
    fn hostile_inputs_keep_the_window_sane() {
        let mut cc = vcp(2);
        for lf in [f64::NAN, f64::INFINITY, -3.0, 1e300, 0.0] {
            cc.on_feedback(at(0), Feedback::Load(lf));
            let mut a = ack(0, u64::MAX, 0);
            a.srtt = Dur::ZERO;
            cc.on_ack(&a);
            cc.on_ack(&ack(1, M, u64::MAX / 2_000_000));
            assert!(
                cc.cwnd() >= M && cc.cwnd() <= 1 << 50,
                "{lf}: {}",
                cc.cwnd()
            );
        }
        for _ in 0..200 {
            cc.on_feedback(at(0), Feedback::Load(50.0));
            cc.on_ack(&ack(0, M, 100));
        }
        cc.on_rto(&loss(0, 0, 0));
        assert_eq!(cc.cwnd(), M);
        cc.on_feedback(at(0), Feedback::Window(-1_000_000));
        assert_eq!(cc.cwnd(), M);
    }

    #[test]
    fn pow_matches_libm() {
        for (b, e) in [
            (1.0625, 0.25),
            (1.0625, 2.5),
            (2.0, 1.7),
            (1.5, 0.0),
            (3.0, 3.0),
        ] {
            assert!((pow(b, e) - f64::powf(b, e)).abs() < 1e-12 * f64::powf(b, e));
        }
        assert_eq!(pow(0.5, 2.0), 1.0);
        assert_eq!(pow(f64::NAN, 2.0), 1.0);
    }
}
