//! TCP Westwood+ (Grieco & Mascolo, "Performance evaluation and comparison of Westwood+,
//! New Reno, and Vegas TCP congestion control", ACM CCR 34(2), 2004; Mascolo, Grieco,
//! Ferorelli, Camarda, Piscitelli, "Performance evaluation of Westwood+ TCP congestion
//! control", Performance Evaluation 55, 2004): Reno growth, but after a congestion signal
//! ssthresh is set to the estimated bandwidth-delay product instead of half the flight.
//!
//! Bandwidth estimation (the "+" of Westwood+): one sample per RTT, the bytes delivered in
//! the last RTT-long interval divided by its duration, then a low-pass filter. Delivered
//! bytes are those newly acknowledged, plus one MSS per duplicate ACK (a segment has left
//! the network); a later cumulative ACK that covers segments already counted this way only
//! counts what was not counted yet (but at least the one segment that triggered it).
//!
//! Filter: bwe <- 7/8 * bwe + 1/8 * sample, the single EWMA stage of Linux tcp_westwood.c
//! (`westwood_do_filter`; Linux cascades two such stages, we use one). The first sample
//! seeds the filter directly, as Linux does, rather than ramping up from zero.
//!
//! The interval length is the smoothed RTT (the last nonzero `ack.srtt`, else the ACK's own
//! RTT sample), so a sample covers one RTT as the papers describe. Linux additionally never
//! closes an interval shorter than 50 ms (against noisy samples on short paths); that floor
//! is not applied here. RTTmin is the smallest `ack.rtt` seen.
//!
//! Integer arithmetic only: bwe is in bytes per second, ssthresh = bwe * RTTmin in u128.

use super::newreno::reno_growth;
use super::*;

/// Filter weight of the previous estimate, as a fraction FILTER_OLD / FILTER_DEN.
const FILTER_OLD: u64 = 7;
const FILTER_DEN: u64 = 8;
const NANOS_PER_SEC: u128 = 1_000_000_000;

#[derive(Debug, Clone)]
pub struct WestwoodPlus {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    avoid: AvoidanceCounter,
    /// Filtered bandwidth estimate in bytes per second; None before the first sample.
    bwe: Option<u64>,
    /// Smallest RTT sample seen.
    rtt_min: Option<Dur>,
    /// Length of a sampling interval (the latest smoothed RTT); zero before any RTT.
    interval: Dur,
    /// Start of the current sampling interval; None before the first ACK.
    win_start: Option<Time>,
    /// Bytes delivered since `win_start`.
    win_bytes: u64,
    /// Bytes counted from duplicate ACKs that no cumulative ACK has covered yet.
    dup_counted: u64,
}

impl WestwoodPlus {
    pub fn new(cfg: CcConfig) -> WestwoodPlus {
        WestwoodPlus {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
            bwe: None,
            rtt_min: None,
            interval: Dur::ZERO,
            win_start: None,
            win_bytes: 0,
            dup_counted: 0,
        }
    }

    /// Bandwidth estimate in bytes per second, once one exists.
    pub fn bandwidth_estimate(&self) -> Option<u64> {
        self.bwe
    }

    /// Counts `bytes` delivered at `now`, closing the sampling interval once it is an RTT
    /// long. The ACK that opens the first interval is not counted: its bytes were delivered
    /// before the interval began.
    fn deliver(&mut self, now: Time, bytes: u64) {
        let Some(start) = self.win_start else {
            self.win_start = Some(now);
            return;
        };
        self.win_bytes = self.win_bytes.saturating_add(bytes);
        let elapsed = now.since(start);
        if self.interval == Dur::ZERO || elapsed < self.interval || elapsed == Dur::ZERO {
            return;
        }
        let sample = (self.win_bytes as u128 * NANOS_PER_SEC / elapsed.as_nanos() as u128)
            .min(u64::MAX as u128) as u64;
        self.bwe = Some(match self.bwe {
            None => sample,
            Some(old) => {
                ((old as u128 * FILTER_OLD as u128
                    + sample as u128 * (FILTER_DEN - FILTER_OLD) as u128)
                    / FILTER_DEN as u128) as u64
            }
        });
        self.win_start = Some(now);
        self.win_bytes = 0;
    }

    /// max(2*MSS, bwe*RTTmin), or RFC 5681 equation (4) before there is an estimate.
    fn bdp_ssthresh(&self, flight: u64) -> u64 {
        match (self.bwe, self.rtt_min) {
            (Some(bwe), Some(rtt)) => {
                let bdp = bwe as u128 * rtt.as_nanos() as u128 / NANOS_PER_SEC;
                (bdp.min(u64::MAX as u128) as u64).max(2 * self.mss as u64)
            }
            _ => half_flight(flight, self.mss),
        }
    }
}

impl WestwoodPlus {
    /// Feeds the bandwidth and RTTmin estimators with a cumulative ACK.
    fn observe(&mut self, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        }
        if ack.srtt > Dur::ZERO {
            self.interval = ack.srtt;
        } else if let Some(rtt) = ack.rtt {
            self.interval = rtt;
        }
        // Segments this ACK covers that duplicate ACKs already counted are not counted
        // again, except for the segment that made the cumulative ACK advance.
        let recount = self
            .dup_counted
            .min(ack.bytes_acked.saturating_sub(self.mss as u64));
        self.dup_counted -= recount;
        self.deliver(ack.now, ack.bytes_acked - recount);
    }
}

impl CongestionControl for WestwoodPlus {
    fn name(&self) -> &'static str {
        "westwood+"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.observe(ack);
        reno_growth(
            &mut self.cwnd,
            self.ssthresh,
            &mut self.avoid,
            ack.credit,
            self.mss,
        );
    }
    /// ACKs during recovery still measure delivery (and clear the duplicate-ACK credit).
    fn on_recovery_ack(&mut self, ack: &AckSample) {
        self.observe(ack);
    }
    fn on_dup_ack(&mut self, now: Time, mss: u32) {
        self.dup_counted = self.dup_counted.saturating_add(mss as u64);
        self.deliver(now, mss as u64);
    }
    /// Three duplicate ACKs: ssthresh = BWE*RTTmin; if cwnd > ssthresh, cwnd = ssthresh.
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.ssthresh = self.bdp_ssthresh(ev.bytes_in_flight);
        self.cwnd = self.cwnd.min(self.ssthresh);
        self.avoid.reset();
    }
    /// Timeout: ssthresh = BWE*RTTmin; cwnd = 1 segment.
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if !ev.repeat {
            self.ssthresh = self.bdp_ssthresh(ev.bytes_in_flight);
        }
        self.cwnd = self.mss as u64;
        self.avoid.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const M: u64 = MSS as u64;

    fn ack_at(now_ns: u64, bytes: u64, rtt_ms: u64, srtt_ms: u64) -> AckSample {
        let mut a = ack(0, bytes, srtt_ms);
        a.now = Time(now_ns);
        a.rtt = Some(Dur::from_millis(rtt_ms));
        a
    }

    /// Feeds one MSS-sized ACK every `gap_ns` for `count` ACKs starting at `t0_ns`; RTT
    /// samples cycle through `rtts_ms`. Returns the time of the last ACK.
    fn stream(
        cc: &mut WestwoodPlus,
        t0_ns: u64,
        gap_ns: u64,
        count: u64,
        rtts_ms: &[u64],
        srtt_ms: u64,
    ) -> u64 {
        let mut t = t0_ns;
        for i in 0..count {
            t = t0_ns + i * gap_ns;
            cc.on_ack(&ack_at(t, M, rtts_ms[i as usize % rtts_ms.len()], srtt_ms));
        }
        t
    }

    #[test]
    fn slow_start_and_avoidance_are_reno() {
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_ssthresh: 4 * M,
            ..cfg()
        });
        assert_eq!(cc.recovery_style(), RecoveryStyle::NewReno);
        assert_eq!(cc.name(), "westwood+");
        for i in 0..2 {
            cc.on_ack(&ack(i, M, 100));
        }
        assert_eq!(cc.cwnd(), 4 * M);
        for i in 0..4 {
            cc.on_ack(&ack(10 + i, M, 100));
        }
        assert_eq!(cc.cwnd(), 5 * M);
    }

    #[test]
    fn loss_before_estimate_falls_back_to_half_flight() {
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_window: 30 * M,
            ..cfg()
        });
        cc.on_congestion_event(&loss(0, 20 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10 * M, 10 * M));
        cc.on_rto(&loss(0, 3 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 2 * M));
    }

    #[test]
    fn loss_sets_ssthresh_to_bwe_times_rtt_min() {
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_window: 200 * M,
            initial_ssthresh: 200 * M,
            ..cfg()
        });
        // One MSS every 500 us = 2 MB/s for 2 s; RTT samples between 80 and 130 ms.
        let gap_ns = 500_000;
        let rtts = [120, 95, 80, 130, 101];
        let end = stream(&mut cc, 0, gap_ns, 4000, &rtts, 110);
        let rate = M as f64 * 1e9 / gap_ns as f64;
        let rtt_min = *rtts.iter().min().unwrap() as f64 * 1e-3;
        let bwe = cc.bandwidth_estimate().unwrap() as f64;
        assert!((bwe - rate).abs() <= rate * 1e-3, "bwe {bwe} vs {rate}");
        cc.on_congestion_event(&loss(end / 1_000_000, 150 * M, 110));
        let want = rate * rtt_min;
        assert!(
            (cc.ssthresh() as f64 - want).abs() <= want * 0.01,
            "ssthresh {} vs {want}",
            cc.ssthresh()
        );
        // cwnd (200 MSS) was above the BDP, so it drops to ssthresh.
        assert_eq!(cc.cwnd(), cc.ssthresh());
    }

    #[test]
    fn loss_below_bdp_keeps_cwnd() {
        // A random loss while cwnd is below the estimated BDP does not shrink the window.
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_window: 20 * M,
            initial_ssthresh: 20 * M,
            ..cfg()
        });
        stream(&mut cc, 0, 500_000, 1000, &[100], 100);
        let cwnd = cc.cwnd();
        cc.on_congestion_event(&loss(600, cwnd, 100));
        assert!(cc.ssthresh() > cwnd);
        assert_eq!(cc.cwnd(), cwnd);
    }

    #[test]
    fn filter_moves_one_eighth_per_sample() {
        let mut cc = WestwoodPlus::new(cfg());
        // 1 MB/s with 100 ms intervals: ACKs at 0, 1, ..., 400 ms close intervals at
        // 100, 200, 300, 400 ms.
        let end = stream(&mut cc, 0, 1_000_000, 401, &[100], 100);
        assert_eq!(cc.bandwidth_estimate(), Some(1_000_000));
        // Double the rate for exactly one interval (200 ACKs in the next 100 ms).
        stream(&mut cc, end + 500_000, 500_000, 200, &[100], 100);
        // bwe = 7/8 * 1 MB/s + 1/8 * 2 MB/s.
        assert_eq!(
            cc.bandwidth_estimate(),
            Some(7 * 1_000_000 / 8 + 2_000_000 / 8)
        );
    }

    #[test]
    fn dup_acks_count_as_delivered_once() {
        let mut cc = WestwoodPlus::new(cfg());
        // Cumulative ACKs every 1 ms open the window; then 99 duplicate ACKs at 1 ms spacing
        // and a cumulative ACK for those 99 segments plus the retransmitted hole.
        stream(&mut cc, 0, 1_000_000, 101, &[100], 100);
        assert_eq!(cc.bandwidth_estimate(), Some(1_000_000));
        for i in 1..100 {
            cc.on_dup_ack(Time((100 + i) * 1_000_000), MSS);
        }
        cc.on_ack(&ack_at(200_000_000, 100 * M, 100, 100));
        // 99 dup ACKs + the hole = 100 segments in 100 ms: still 1 MB/s, not 1.99 MB/s.
        assert_eq!(cc.bandwidth_estimate(), Some(1_000_000));
        assert_eq!(cc.dup_counted, 0);
    }

    #[test]
    fn rto_uses_bdp_and_loss_window() {
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_window: 100 * M,
            ..cfg()
        });
        let end = stream(&mut cc, 0, 250_000, 2000, &[60, 40, 50], 70);
        let want = (M * 1_000_000_000 / 250_000) * 40 / 1000; // 4 MB/s * 40 ms
        cc.on_rto(&loss(end / 1_000_000, 50 * M, 70));
        assert_eq!(cc.cwnd(), M);
        assert!(
            cc.ssthresh().abs_diff(want) <= want / 100,
            "{} vs {want}",
            cc.ssthresh()
        );
    }
}
