//! Round-trip time estimation and the retransmission timer value (RFC 6298).

use super::config::{RtoConfig, RtoFormula};
use crate::time::Dur;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RtoConfig,
    srtt: Option<Dur>,
    rttvar: Dur,
    min_rtt: Option<Dur>,
    latest: Option<Dur>,
    /// RTO before backoff.
    base_rto: Dur,
    /// Number of consecutive expiries (the backoff exponent).
    backoffs: u32,
}

impl RttEstimator {
    pub fn new(cfg: RtoConfig) -> RttEstimator {
        RttEstimator {
            cfg,
            srtt: None,
            rttvar: Dur::ZERO,
            min_rtt: None,
            latest: None,
            base_rto: cfg.initial.min(cfg.max),
            backoffs: 0,
        }
    }

    /// RFC 6298 section 2.2 (first sample) and 2.3 (later samples), alpha = 1/8,
    /// beta = 1/4, K = 4, then the bounds of sections 2.4 and 2.5. `cwnd_segments` is
    /// the sender's window when the sample arrives (read only by the Linux 2.2 formula).
    pub fn on_sample(&mut self, r: Dur, cwnd_segments: u64) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(srtt) => {
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = Dur((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Dur((7 * srtt.0 + r.0) / 8));
            }
        }
        let var = self
            .cfg
            .granularity
            .max(Dur(self.rttvar.0.saturating_mul(4)));
        let srtt = self.srtt.unwrap_or_default();
        let rto = match self.cfg.formula {
            RtoFormula::Rfc6298 => srtt + var,
            RtoFormula::Linux22 => {
                // Linux 2.2 tcp_set_rto: rto += rto/4 + rto >> (snd_cwnd - 1), a margin
                // for delayed ACKs that is largest at small windows.
                let rto = srtt + var;
                let shift = cwnd_segments.clamp(1, 64) - 1;
                Dur(rto.0 + rto.0 / 4 + rto.0.checked_shr(shift as u32).unwrap_or(0))
            }
            RtoFormula::Linux => srtt + var.max(self.cfg.min),
        };
        self.base_rto = rto.max(self.cfg.min).min(self.cfg.max);
    }

    /// The timer value to arm now: the base RTO, doubled per expiry when backoff is on
    /// (RFC 6298 section 5.5), never above `max` (section 2.5).
    pub fn rto(&self) -> Dur {
        if self.cfg.backoff {
            let k = self.backoffs.min(40);
            Dur(self.base_rto.0.saturating_mul(1u64 << k)).min(self.cfg.max)
        } else {
            self.base_rto.min(self.cfg.max)
        }
    }

    pub fn on_timeout(&mut self) {
        self.backoffs = self.backoffs.saturating_add(1);
    }

    /// The handshake completed after a SYN (or SYN-ACK) timed out, so without an RTT
    /// sample: RFC 6298 section 5.7 re-initializes an RTO below 3 s to 3 s for the data,
    /// lest a path slower than the 1 s initial RTO time out spuriously on its first
    /// window.
    pub fn after_syn_timeout(&mut self) {
        if self.srtt.is_none() {
            self.base_rto = self.base_rto.max(Dur::from_secs(3)).min(self.cfg.max);
        }
    }

    /// A valid RTT sample arrived (or the handshake completed): the backoff ends (RFC 6298
    /// section 5, Karn's algorithm).
    pub fn reset_backoff(&mut self) {
        self.backoffs = 0;
    }

    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RtoConfig {
        RtoConfig {
            min: Dur::from_millis(200),
            ..RtoConfig::default()
        }
    }

    #[test]
    fn first_sample_sets_srtt_and_var() {
        let mut e = RttEstimator::new(cfg());
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.on_sample(Dur::from_millis(600), 10);
        // RTO = 600 + 4 * 300 = 1800 ms.
        assert_eq!(e.rto(), Dur::from_millis(1800));
        e.on_sample(Dur::from_millis(600), 10);
        // rttvar = 3/4 * 300 = 225; RTO = 600 + 900.
        assert_eq!(e.rto(), Dur::from_millis(1500));
    }

    #[test]
    fn linux22_margin_grows_at_small_windows() {
        // Base 1800 ms as above; + 1/4 + base >> (cwnd - 1).
        let lx = RtoConfig {
            formula: RtoFormula::Linux22,
            ..cfg()
        };
        let mut big = RttEstimator::new(lx);
        big.on_sample(Dur::from_millis(600), 64);
        assert_eq!(big.rto(), Dur::from_millis(2250));
        let mut small = RttEstimator::new(lx);
        small.on_sample(Dur::from_millis(600), 3);
        assert_eq!(small.rto(), Dur::from_millis(1800 + 450 + 450));
    }

    #[test]
    fn linux_keeps_the_minimum_above_a_steady_rtt() {
        // A steady 600 ms path: RTTVAR decays towards 0, so RFC 6298 with a 200 ms
        // minimum leaves RTO just above SRTT; Linux keeps SRTT + 200 ms.
        let steady = |formula| {
            let mut e = RttEstimator::new(RtoConfig { formula, ..cfg() });
            for _ in 0..100 {
                e.on_sample(Dur::from_millis(600), 10);
            }
            e.rto()
        };
        assert!(steady(RtoFormula::Rfc6298) < Dur::from_millis(602));
        assert_eq!(steady(RtoFormula::Linux), Dur::from_millis(800));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let mut e = RttEstimator::new(RtoConfig {
            max: Dur::from_secs(5),
            ..cfg()
        });
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), Dur::from_secs(4));
        e.on_timeout();
        assert_eq!(e.rto(), Dur::from_secs(5));
    }

    #[test]
    fn no_backoff_keeps_rto() {
        let mut e = RttEstimator::new(RtoConfig {
            backoff: false,
            ..cfg()
        });
        for _ in 0..10 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), Dur::from_secs(1));
    }
}
