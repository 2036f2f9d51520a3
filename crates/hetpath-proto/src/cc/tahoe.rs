//! Tahoe congestion control (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988, as
//! written down in RFC 5681): slow start and congestion avoidance (section 3.1), fast
//! retransmit without fast recovery. Every congestion signal, three duplicate ACKs or a
//! timeout, sets ssthresh by equation (4) and collapses the window to the loss window of one
//! segment; the sender then goes back N in slow start (`RecoveryStyle::Tahoe`). The window
//! grows only on ACKs that say the sender is cwnd-limited (RFC 7661 section 4.3).
//! Smallest window: one segment, the loss window.

use super::newreno::reno_growth;
use super::*;

#[derive(Debug, Clone)]
pub struct Tahoe {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    avoid: AvoidanceCounter,
}

impl Tahoe {
    pub fn new(cfg: CcConfig) -> Tahoe {
        Tahoe {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
        }
    }

    /// RFC 5681 section 3.1: ssthresh from equation (4), cwnd to the loss window (1 SMSS).
    fn collapse(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        }
        self.cwnd = self.mss as u64;
        self.avoid.reset();
    }
}

impl CongestionControl for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
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
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::Tahoe
    }
    fn on_ack(&mut self, ack: &AckSample) {
        if !ack.cwnd_limited {
            return;
        }
        reno_growth(
            &mut self.cwnd,
            self.ssthresh,
            &mut self.avoid,
            ack.credit,
            self.mss,
        );
    }
    /// Fast retransmit without fast recovery: the same response as a timeout.
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.collapse(ev);
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        self.collapse(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const M: u64 = MSS as u64;

    #[test]
    fn slow_start_doubles_per_round() {
        let mut cc = Tahoe::new(cfg());
        for i in 0..2 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 4 * M);
    }

    #[test]
    fn avoidance_adds_one_mss_per_round() {
        let mut cc = Tahoe::new(CcConfig {
            initial_window: 8 * M,
            initial_ssthresh: 8 * M,
            ..cfg()
        });
        for i in 0..8 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 9 * M);
    }

    #[test]
    fn grows_only_when_cwnd_limited() {
        let mut cc = Tahoe::new(cfg());
        let app_limited = AckSample {
            cwnd_limited: false,
            ..ack(0, M, 100)
        };
        cc.on_ack(&app_limited);
        cc.on_ack(&app_limited);
        assert_eq!(cc.cwnd(), 2 * M);
        cc.on_ack(&ack(1, M, 100));
        assert_eq!(cc.cwnd(), 3 * M);
    }

    #[test]
    fn loss_collapses_to_one_segment() {
        let mut cc = Tahoe::new(cfg());
        assert_eq!(cc.recovery_style(), RecoveryStyle::Tahoe);
        cc.on_congestion_event(&loss(0, 20 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 10 * M));
    }

    #[test]
    fn rto_collapses_with_two_segment_floor() {
        let mut cc = Tahoe::new(cfg());
        cc.on_rto(&loss(0, 3 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 2 * M));
    }

    #[test]
    fn after_loss_slow_start_then_linear() {
        let mut cc = Tahoe::new(cfg());
        cc.on_congestion_event(&loss(0, 16 * M, 100));
        let ssthresh = cc.ssthresh();
        // Slow start from one segment: each ACKed segment adds one MSS until ssthresh.
        let mut acks = 0;
        while cc.cwnd() < ssthresh {
            cc.on_ack(&ack(acks, M, 100));
            acks += 1;
        }
        assert_eq!(cc.cwnd(), ssthresh);
        assert_eq!(acks, (ssthresh - M) / M);
        // Then one MSS per window of credit.
        for i in 0..ssthresh / M {
            cc.on_ack(&ack(100 + i, M, 100));
        }
        assert_eq!(cc.cwnd(), ssthresh + M);
    }
}
