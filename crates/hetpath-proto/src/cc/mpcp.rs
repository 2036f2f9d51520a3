//! MPCP end host (Li and Yousefi'zadeh, "MPCP: Multi Packet Congestion-control
//! Protocol", ACM CCR 39(5), 2009) and RAPPEP's MPCP-PEP controller (seed 004 section
//! III-B).
//!
//! MPCP spreads a code of 2n bits over n packets (n = `MpcpConfig::packets`, 2 or 3),
//! so the sender learns the load factor to one of 4^n - 1 levels instead of VCP's three
//! (`rap::load` gives the quantisation, `rap::echo` the reassembly). It keeps VCP's
//! structure (MI in low load, AI in high load, MD in overload, the same regions, RTT
//! scaling, MD freeze and TCP-like loss response: `vcp::Core`) and uses the finer reading
//! to size its steps. The CCR paper's control law was not reachable; the one here follows
//! MLCP (Qazi and Znati, INFOCOM 2008, RAPPEP's reference [11]), the load-factor
//! generalisation of VCP:
//!
//! - MI: xi(rho) = kappa * (1 - rho) / rho, kappa = 0.25, capped at 1 (a doubling, slow
//!   start's pace). One step moves the load from rho to rho + kappa * (1 - rho), so it
//!   never overshoots 100%, and kappa = 0.25 gives VCP's xi = 0.0625 at rho = 80%. At low
//!   load this is the "aggressive MI" RAPPEP credits MPCP with. A step is taken once per
//!   reading that can show the last one: per t_rho, or per RTT when the RTT is longer
//!   (the router measures the load every t_rho; a sender's step reaches it an RTT
//!   later). Compounded over rtt/t_rho as VCP's xi is (up to 2.5 steps per RTT, a 5.7-fold
//!   window per RTT at low load) the load overshoots 100% before any reading can say so:
//!   from rho = 0.2 one RTT of readings takes it to 1.13 (0.2 * 2^2.5), and on RAPPEP's
//!   800 ms path raw MPCP overflowed R1's 1000-packet queue in every run without loss.
//! - AI: VCP's alpha = 1 MSS per t_rho.
//! - MD: beta(rho) = clamp(1/rho, 0.5, 0.875): just enough to remove the measured excess,
//!   never gentler than VCP's 0.875 nor harsher than TCP's 0.5.
//!
//! `Mpcp::pep` is RAPPEP's controller: nothing goes on the wire (`request` is `None`), the
//! agent's traffic monitor hands the exact load factor to `on_feedback` on every ACK, losses
//! leave the window alone ("RAPPEP treats all losses as wireless link effect loss and makes
//! no adjustment to cwnd"), and the parameters are not RTT-scaled ("no need to scale the
//! control parameters for heterogeneous RTT"): xi, alpha and beta apply per RTT of the flow.
//!
//! Both keep VCP's rules for cwnd validation (MI and AI only on cwnd-limited ACKs, MD
//! always) and its smallest window, one segment.

use super::vcp::{Core, Policy, BETA};
use super::*;

/// MI gain kappa in xi(rho) = kappa * (1 - rho) / rho (MLCP's form; VCP's `k_`).
pub const KAPPA: f64 = 0.25;
/// Largest MI factor per t_rho (our choice: a doubling, slow start's pace).
pub const XI_MAX: f64 = 1.0;
/// Harshest MD factor (TCP's).
pub const BETA_MIN: f64 = 0.5;
/// Packets per code: at least 1 (VCP's two bits), at most 4 (an 8-bit code).
const MAX_PACKETS: u8 = 4;

/// MLCP-style MI factor per t_rho at load factor rho.
pub fn xi(rho: f64) -> f64 {
    if rho.is_nan() || rho <= 0.0 {
        return XI_MAX;
    }
    (KAPPA * (1.0 - rho) / rho).clamp(0.0, XI_MAX)
}

/// MD factor at load factor rho (>= 1).
pub fn beta(rho: f64) -> f64 {
    if rho.is_nan() || rho <= 0.0 {
        return BETA;
    }
    (1.0 / rho).clamp(BETA_MIN, BETA)
}

/// MPCP's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpcpConfig {
    /// Packets n over which one load-factor code of 2n bits is spread (2 or 3).
    pub packets: u8,
}

impl Default for MpcpConfig {
    fn default() -> MpcpConfig {
        MpcpConfig { packets: 2 }
    }
}

#[derive(Debug, Clone)]
pub struct Mpcp {
    core: Core,
    /// Code width 2n; `None` for the PEP controller.
    bits: Option<u8>,
}

impl Mpcp {
    pub fn with_config(cfg: CcConfig, m: MpcpConfig) -> Mpcp {
        let n = m.packets.clamp(1, MAX_PACKETS);
        Mpcp {
            core: Core::new(cfg, policy(true)),
            bits: Some(2 * n),
        }
    }

    /// RAPPEP's MPCP-PEP controller (seed 004 section III-B).
    pub fn pep(cfg: CcConfig) -> Mpcp {
        Mpcp {
            core: Core::new(cfg, policy(false)),
            bits: None,
        }
    }
}

fn policy(raw: bool) -> Policy {
    Policy {
        xi,
        beta,
        rtt_scaled: raw,
        mi_once_per_feedback: true,
        loss_responsive: raw,
    }
}

impl CongestionControl for Mpcp {
    fn name(&self) -> &'static str {
        if self.bits.is_some() {
            "mpcp"
        } else {
            "mpcp-pep"
        }
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
    /// The lowest level on 2n bits; routers raise it (`rap::load::load_code`).
    fn request(&self, _srtt: Dur) -> Option<RouterFeedback> {
        self.bits.map(|bits| RouterFeedback::Load { code: 1, bits })
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
    use super::super::Vcp;
    use super::*;
    use crate::rap::{load_code, load_of};

    const M: u64 = MSS as u64;

    fn window(cwnd_mss: u64) -> CcConfig {
        CcConfig {
            initial_window: cwnd_mss * M,
            ..cfg()
        }
    }

    fn mpcp(cwnd_mss: u64, packets: u8) -> Mpcp {
        Mpcp::with_config(window(cwnd_mss), MpcpConfig { packets })
    }

    fn at(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    /// One RTT of ACKs starting at `t_ms`, the reading `lf` arriving before each.
    fn round(cc: &mut dyn CongestionControl, t_ms: u64, srtt_ms: u64, lf: f64) {
        let n = cc.cwnd() / M;
        for i in 0..n {
            let t = t_ms + i * srtt_ms / n.max(1);
            cc.on_feedback(at(t), Feedback::Load(lf));
            cc.on_ack(&ack(t, M, srtt_ms));
        }
    }

    fn gain(cc: &mut dyn CongestionControl, srtt_ms: u64, lf: f64) -> f64 {
        let before = cc.cwnd() as f64;
        round(cc, 0, srtt_ms, lf);
        cc.cwnd() as f64 / before
    }

    #[test]
    fn requests_carry_2n_bits_and_pep_sends_nothing() {
        for (n, bits) in [(2, 4), (3, 6)] {
            let cc = mpcp(2, n);
            assert_eq!(
                cc.request(Dur::ZERO),
                Some(RouterFeedback::Load { code: 1, bits })
            );
            assert_eq!(cc.name(), "mpcp");
        }
        let pep = Mpcp::pep(cfg());
        assert_eq!(
            (pep.request(Dur::from_millis(5)), pep.name()),
            (None, "mpcp-pep")
        );
    }

    #[test]
    fn finer_levels_give_larger_mi_at_lower_load() {
        // n = 2, rtt = t_rho: the MI factor of each low-load level, codes 1..=8.
        let gains: Vec<f64> = (1..=8)
            .map(|code| gain(&mut mpcp(100, 2), 200, load_of(code, 4)))
            .collect();
        for w in gains.windows(2) {
            assert!(w[0] >= w[1], "{gains:?}");
        }
        // Codes 1 and 2 (rho 0.05, 0.15) are capped at a doubling; above that each level is
        // strictly gentler, and rho = 0.35 gives xi = 0.25 * 0.65 / 0.35.
        assert!((gains[0] - 2.0).abs() < 0.01 && (gains[1] - 2.0).abs() < 0.01);
        assert!(gains[2] > gains[3] && gains[3] > gains[4] && gains[6] > gains[7]);
        assert!(
            (gains[3] - (1.0 + 0.25 * 0.65 / 0.35)).abs() < 0.01,
            "{gains:?}"
        );
        // VCP reads every low-load level as 1 + 0.0625; MPCP at rho = 0.75 is still faster.
        let vcp = gain(&mut Vcp::new(window(100)), 200, load_of(1, 2));
        assert!((vcp - 1.0625).abs() < 0.001);
        assert!(gains[7] > vcp);
        // n = 3 resolves 0.7875 (code 32) apart from 0.7125 (code 29): different steps.
        let a = gain(&mut mpcp(100, 3), 200, load_of(29, 6));
        let b = gain(&mut mpcp(100, 3), 200, load_of(32, 6));
        assert!(a > b && b > 1.0, "{a} {b}");
    }

    /// One MI step per reading that can show the last one: at an RTT above t_rho the
    /// window grows by at most 1 + xi(rho) per RTT, so a low reading cannot take the load
    /// past 100% before the next. Compounded over rtt/t_rho = 2.5 (RAPPEP's 800 ms path)
    /// it grew 5.7-fold per RTT from rho = 0.05 and overflowed R1's queue.
    #[test]
    fn mi_takes_one_step_per_round_trip_on_a_long_path() {
        for (rho, code) in [(0.05, 1), (0.35, 4)] {
            let lf = load_of(code, 4);
            assert!((lf - rho).abs() < 1e-9, "{lf}");
            let g = gain(&mut mpcp(100, 2), 800, lf);
            assert!((g - (1.0 + xi(rho))).abs() < 0.01, "rho {rho}: {g}");
            assert!(
                rho * g <= rho + KAPPA * (1.0 - rho) + 1e-3,
                "rho {rho}: {g}"
            );
        }
        // Below t_rho the step is spread over the RTTs of one t_rho, as VCP's is.
        let g = gain(&mut mpcp(100, 2), 100, load_of(4, 4));
        assert!((g - (1.0 + xi(0.35)).sqrt()).abs() < 0.01, "{g}");
        // VCP itself still compounds over rtt/t_rho (section 3): 1.0625^2.5 at 800 ms.
        let vcp = gain(&mut Vcp::new(window(100)), 800, load_of(1, 2));
        assert!((vcp - 1.0625f64.powf(2.5)).abs() < 0.002, "{vcp}");
    }

    #[test]
    fn high_load_is_vcp_ai() {
        let mut cc = mpcp(20, 2);
        round(&mut cc, 0, 200, load_of(load_code(0.93, 4), 4));
        assert!((cc.cwnd() as f64 - 21_000.0).abs() < 60.0, "{}", cc.cwnd());
    }

    #[test]
    fn md_factor_follows_the_overload() {
        for (lf, want) in [(1.05, 0.875), (1.6, 0.625), (3.0, 0.5)] {
            let mut cc = Mpcp::pep(window(80));
            cc.on_feedback(at(0), Feedback::Load(lf));
            assert_eq!(cc.cwnd(), (80_000.0 * want) as u64, "{lf}");
            // Frozen for t_rho: a second overload reading does nothing.
            cc.on_feedback(at(150), Feedback::Load(lf));
            cc.on_ack(&ack(150, M, 100));
            assert_eq!(cc.cwnd(), (80_000.0 * want) as u64, "{lf}");
        }
    }

    #[test]
    fn pep_ignores_losses_and_raw_reacts() {
        let mut pep = Mpcp::pep(window(40));
        pep.on_congestion_event(&loss(0, 40 * M, 600));
        pep.on_rto(&loss(1, 40 * M, 600));
        assert_eq!((pep.cwnd(), pep.ssthresh()), (40 * M, u64::MAX));
        let mut raw = mpcp(40, 2);
        raw.on_congestion_event(&loss(0, 40 * M, 600));
        assert_eq!(raw.cwnd(), 20 * M);
        raw.on_rto(&loss(1, 20 * M, 600));
        assert_eq!((raw.cwnd(), raw.ssthresh()), (M, 10 * M));
    }

    #[test]
    fn pep_is_not_rtt_scaled() {
        // rho = 0.5: xi = 0.25. PEP applies it per RTT whatever the RTT; raw MPCP per t_rho.
        for srtt in [50, 600] {
            let mut pep = Mpcp::pep(window(40));
            assert!((gain(&mut pep, srtt, 0.5) - 1.25).abs() < 1e-3, "{srtt}");
        }
        let mut raw = mpcp(40, 2);
        let g = gain(&mut raw, 50, 0.5);
        assert!((g - 1.25f64.powf(0.25)).abs() < 1e-3, "{g}");
        // AI: one MSS per RTT.
        let mut pep = Mpcp::pep(window(40));
        round(&mut pep, 0, 50, 0.9);
        assert!(
            (pep.cwnd() as f64 - 41_000.0).abs() < 30.0,
            "{}",
            pep.cwnd()
        );
    }

    #[test]
    fn packets_out_of_range_are_clamped_and_inputs_sane() {
        let bits = |n| match mpcp(2, n).request(Dur::ZERO) {
            Some(RouterFeedback::Load { bits, .. }) => bits,
            _ => 0,
        };
        assert_eq!((bits(0), bits(9)), (2, 8));
        assert_eq!((xi(0.0), xi(f64::NAN), xi(2.0)), (XI_MAX, XI_MAX, 0.0));
        assert_eq!((beta(f64::INFINITY), beta(0.0)), (BETA_MIN, BETA));
        let mut cc = mpcp(2, 2);
        for lf in [f64::NAN, -1.0, f64::INFINITY, 0.0] {
            cc.on_feedback(at(0), Feedback::Load(lf));
            cc.on_ack(&ack(0, u64::MAX, 0));
            assert!(cc.cwnd() >= M, "{lf}");
        }
    }
}
