//! NewReno congestion control: RFC 5681 slow start and congestion avoidance, with the
//! RFC 6582 recovery style (the partial-ACK logic is in `tcp::recovery`).
//!
//! The window grows only on ACKs that say the sender is cwnd-limited (RFC 7661 section 4.3,
//! Linux `tcp_reno_cong_avoid`'s `tcp_is_cwnd_limited` check). Smallest window: one
//! segment, the loss window after a timeout.

use super::*;

#[derive(Debug, Clone)]
pub struct NewReno {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    avoid: AvoidanceCounter,
}

impl NewReno {
    pub fn new(cfg: CcConfig) -> NewReno {
        NewReno {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
        }
    }
}

/// The RFC 5681 window growth shared by the Reno family: slow start below ssthresh
/// (equation (2)), then one MSS per window of credit (equation (3)).
pub(crate) fn reno_growth(
    cwnd: &mut u64,
    ssthresh: u64,
    avoid: &mut AvoidanceCounter,
    credit: u64,
    mss: u32,
) {
    if *cwnd < ssthresh {
        *cwnd = cwnd.saturating_add(credit);
    } else {
        *cwnd = avoid.grow(*cwnd, credit, mss);
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
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
    /// RFC 6582 section 3.2 step 2 (via RFC 5681 equation (4)); fast recovery ends with
    /// cwnd = ssthresh (step 5's second option).
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        self.cwnd = self.ssthresh;
        self.avoid.reset();
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        }
        self.cwnd = self.mss as u64;
        self.avoid.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn slow_start_doubles_per_round() {
        let mut cc = NewReno::new(cfg());
        // One round: every segment of a 2-MSS window is acked one by one.
        for i in 0..2 {
            cc.on_ack(&ack(i, MSS as u64, 100));
        }
        assert_eq!(cc.cwnd(), 4 * MSS as u64);
    }

    #[test]
    fn avoidance_adds_one_mss_per_round() {
        let mut cc = NewReno::new(CcConfig {
            initial_ssthresh: 10 * MSS as u64,
            initial_window: 10 * MSS as u64,
            ..cfg()
        });
        for i in 0..10 {
            cc.on_ack(&ack(i, MSS as u64, 100));
        }
        assert_eq!(cc.cwnd(), 11 * MSS as u64);
    }

    #[test]
    fn grows_only_when_cwnd_limited() {
        for ssthresh in [u64::MAX, 10 * MSS as u64] {
            let mut cc = NewReno::new(CcConfig {
                initial_window: 10 * MSS as u64,
                initial_ssthresh: ssthresh,
                ..cfg()
            });
            let idle = AckSample {
                cwnd_limited: false,
                ..ack(0, MSS as u64, 100)
            };
            for _ in 0..20 {
                cc.on_ack(&idle);
            }
            assert_eq!(cc.cwnd(), 10 * MSS as u64);
            // The credit offered while application-limited was not banked either.
            for i in 0..10 {
                cc.on_ack(&ack(i, MSS as u64, 100));
            }
            let want = if ssthresh == u64::MAX { 20 } else { 11 };
            assert_eq!(cc.cwnd(), want * MSS as u64);
        }
    }

    #[test]
    fn loss_halves_flight_and_rto_collapses() {
        let mut cc = NewReno::new(cfg());
        cc.on_congestion_event(&loss(0, 20 * MSS as u64, 100));
        assert_eq!(
            (cc.cwnd(), cc.ssthresh()),
            (10 * MSS as u64, 10 * MSS as u64)
        );
        cc.on_rto(&loss(0, 3 * MSS as u64, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (MSS as u64, 2 * MSS as u64));
    }

    #[test]
    fn repeated_timeout_holds_ssthresh() {
        // RFC 5681 section 3.1: a second timeout of the same data only collapses cwnd.
        let mut cc = NewReno::new(cfg());
        cc.on_rto(&loss(0, 20 * MSS as u64, 100));
        cc.on_rto(&CongestionEvent {
            repeat: true,
            ..loss(1, MSS as u64, 100)
        });
        assert_eq!((cc.cwnd(), cc.ssthresh()), (MSS as u64, 10 * MSS as u64));
    }
}
