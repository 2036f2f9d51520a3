//! Reno congestion control: RFC 5681 slow start and congestion avoidance (section 3.1) with
//! the fast retransmit / fast recovery of section 3.2, where recovery ends on the first ACK
//! of new data (`RecoveryStyle::Reno`; the recovery itself is in `tcp::recovery`). The window
//! arithmetic is NewReno's, so Reno delegates to it and only changes the recovery style
//! (including no growth on ACKs that are not cwnd-limited, Linux `tcp_reno_cong_avoid`,
//! and its smallest window, one segment).

use super::*;

#[derive(Debug, Clone)]
pub struct Reno(NewReno);

impl Reno {
    pub fn new(cfg: CcConfig) -> Reno {
        Reno(NewReno::new(cfg))
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn cwnd(&self) -> u64 {
        self.0.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn min_window(&self) -> u64 {
        self.0.min_window()
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::Reno
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.0.on_ack(ack)
    }
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.0.on_congestion_event(ev)
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        self.0.on_rto(ev)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const M: u64 = MSS as u64;

    #[test]
    fn slow_start_doubles_per_round() {
        let mut cc = Reno::new(cfg());
        for i in 0..2 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 4 * M);
    }

    #[test]
    fn avoidance_adds_one_mss_per_round() {
        let mut cc = Reno::new(CcConfig {
            initial_window: 10 * M,
            initial_ssthresh: 10 * M,
            ..cfg()
        });
        for i in 0..10 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 11 * M);
    }

    #[test]
    fn avoidance_with_byte_counting_credit() {
        // ABC (RFC 3465): one ACK crediting 2 MSS counts twice as much as a per-ACK credit.
        let mut cc = Reno::new(CcConfig {
            initial_window: 10 * M,
            initial_ssthresh: 10 * M,
            ..cfg()
        });
        for i in 0..5 {
            cc.on_ack(&ack(i, 2 * M, 100));
        }
        assert_eq!(cc.cwnd(), 11 * M);
    }

    #[test]
    fn grows_only_when_cwnd_limited() {
        let mut cc = Reno::new(CcConfig {
            initial_window: 10 * M,
            initial_ssthresh: 10 * M,
            ..cfg()
        });
        for i in 0..10 {
            cc.on_ack(&AckSample {
                cwnd_limited: false,
                ..ack(i, M, 100)
            });
        }
        assert_eq!(cc.cwnd(), 10 * M);
        for i in 0..10 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 11 * M);
    }

    #[test]
    fn loss_halves_flight_with_reno_recovery() {
        let mut cc = Reno::new(cfg());
        assert_eq!(cc.recovery_style(), RecoveryStyle::Reno);
        cc.on_congestion_event(&loss(0, 20 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, 10 * M));
    }

    #[test]
    fn rto_collapses_to_loss_window() {
        let mut cc = Reno::new(cfg());
        cc.on_rto(&loss(0, 30 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 15 * M));
        cc.on_rto(&loss(0, 3 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 2 * M));
    }
}
