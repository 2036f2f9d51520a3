//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP Westwood: bandwidth
//! estimation for enhanced transport over wireless links", ACM MobiCom 2001; Grieco &
//! Mascolo, "Performance evaluation and comparison of Westwood+, New Reno, and Vegas TCP
//! congestion control", ACM CCR 34(2), 2004; Linux `net/ipv4/tcp_westwood.c`, the
//! implementation by the authors' group): Reno growth, but after a congestion signal
//! ssthresh is set to the estimated bandwidth-delay product instead of half the flight.
//!
//! Defaults follow the papers and Linux where they agree, and Linux where the papers
//! leave a detail open (docs/model-notes.md, Westwood+):
//!
//! - **What a sample counts** (`WestwoodPlus::acked`): the MobiCom paper's AckedCount
//!   procedure, which Linux `westwood_acked_count` implements. A duplicate ACK counts one
//!   MSS (a segment left the network) and is remembered; a cumulative ACK for more than one
//!   MSS first pays back what duplicate ACKs already counted, and counts one MSS if they
//!   covered all of it. Each segment is counted once. The alternative, `acked = "twice"`,
//!   is ns-3 `TcpWestwoodPlus`: the segment is counted when it is SACKed (duplicate ACK)
//!   and again when the cumulative ACK covers it.
//! - **Sampling period**: one sample per RTT (the "+" of Westwood+): the bytes counted in
//!   an interval divided by its length. The interval closes on the first ACK more than
//!   max(RTT, 50 ms) after it opened; RTT is the latest RTT sample (Linux
//!   `tcp_westwood_pkts_acked`, `westwood_update_window`, `TCP_WESTWOOD_RTT_MIN`). As in
//!   Linux, the window is checked before the ACK's own bytes are added, so they open the
//!   next interval.
//! - **Filter**: Linux's two cascaded 7/8 EWMA stages (`westwood_filter`), each sample
//!   once per interval; `filter_stages = 1` keeps only the first stage. The first sample
//!   fills every stage directly (Linux, since 2.6.2x), rather than ramping up from zero.
//! - **ssthresh = BWE * RTTmin** in whole segments, at least 2 (both papers; Linux
//!   `tcp_westwood_bw_rttmin`), with RTTmin the smallest RTT sample.
//! - **Three duplicate ACKs** (the papers' pseudocode): ssthresh = BWE*RTTmin and
//!   cwnd = min(cwnd, ssthresh). Linux applies the same value at the end of recovery
//!   instead (`CA_EVENT_COMPLETE_CWR`: cwnd = ssthresh = BWE*RTTmin), after reducing with
//!   Reno's half during it; not modelled.
//! - **Timeout**: ssthresh = BWE*RTTmin, cwnd = 1 segment (both papers; Linux
//!   `CA_EVENT_LOSS`). Linux also restarts RTTmin from the next RTT sample; the papers do
//!   not, and neither does this model.
//! - **Growth**: Reno (Linux `tcp_reno_cong_avoid`), only on cwnd-limited ACKs; the
//!   bandwidth estimate learns from every ACK. Smallest window: one segment.
//!
//! Integer arithmetic only: bwe is in bytes per second, ssthresh = bwe * RTTmin in u128.

use super::newreno::reno_growth;
use super::*;

/// Filter weight of the previous estimate, as a fraction FILTER_OLD / FILTER_DEN (Linux
/// `westwood_do_filter`).
const FILTER_OLD: u64 = 7;
const FILTER_DEN: u64 = 8;
const NANOS_PER_SEC: u128 = 1_000_000_000;
/// Shortest sampling interval (Linux `TCP_WESTWOOD_RTT_MIN`, HZ/20).
pub const MIN_INTERVAL: Dur = Dur::from_millis(50);

/// Default number of cascaded filter stages (Linux).
pub const DEFAULT_FILTER_STAGES: u8 = 2;

#[derive(Debug, Clone)]
pub struct WestwoodPlus {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    avoid: AvoidanceCounter,
    /// ns-3 accounting: count SACKed data again when the cumulative ACK covers it.
    count_twice: bool,
    /// 1 or 2 cascaded 7/8 stages.
    filter_stages: u8,
    /// First filter stage (Linux `bw_ns_est`), bytes per second; None before a sample.
    bwe_ns: Option<u64>,
    /// Output of the last stage (Linux `bw_est`): the estimate ssthresh uses.
    bwe: Option<u64>,
    /// Smallest RTT sample seen.
    rtt_min: Option<Dur>,
    /// Latest RTT sample (else SRTT): the nominal interval length; zero before any RTT.
    rtt: Dur,
    /// Start of the current sampling interval; None before the first ACK.
    win_start: Option<Time>,
    /// Bytes counted since `win_start` (Linux `bk`).
    win_bytes: u64,
    /// Bytes counted from duplicate ACKs not yet paid back by a cumulative ACK (Linux
    /// `accounted`).
    accounted: u64,
}

impl WestwoodPlus {
    /// The defaults: each segment counted once, two filter stages.
    pub fn new(cfg: CcConfig) -> WestwoodPlus {
        WestwoodPlus::with_options(cfg, false, DEFAULT_FILTER_STAGES)
    }

    /// `count_twice`: ns-3's accounting (SACKed data counted again on the cumulative ACK);
    /// `filter_stages`: 1 or 2 cascaded 7/8 stages (clamped to that range).
    pub fn with_options(cfg: CcConfig, count_twice: bool, filter_stages: u8) -> WestwoodPlus {
        WestwoodPlus {
            mss: cfg.mss,
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh,
            avoid: AvoidanceCounter::default(),
            count_twice,
            filter_stages: filter_stages.clamp(1, 2),
            bwe_ns: None,
            bwe: None,
            rtt_min: None,
            rtt: Dur::ZERO,
            win_start: None,
            win_bytes: 0,
            accounted: 0,
        }
    }

    /// Bandwidth estimate in bytes per second, once one exists.
    pub fn bandwidth_estimate(&self) -> Option<u64> {
        self.bwe
    }

    /// Closes the sampling interval if it has lasted more than max(RTT, 50 ms), then adds
    /// `bytes`. The ACK that opens the first interval is not counted: its bytes were
    /// delivered before the interval began (Linux `first_ack`).
    fn deliver(&mut self, now: Time, bytes: u64) {
        let Some(start) = self.win_start else {
            self.win_start = Some(now);
            return;
        };
        let elapsed = now.since(start);
        if self.rtt > Dur::ZERO && elapsed > self.rtt.max(MIN_INTERVAL) {
            let sample = (self.win_bytes as u128 * NANOS_PER_SEC / elapsed.as_nanos() as u128)
                .min(u64::MAX as u128) as u64;
            self.filter(sample);
            self.win_start = Some(now);
            self.win_bytes = 0;
        }
        self.win_bytes = self.win_bytes.saturating_add(bytes);
    }

    fn filter(&mut self, sample: u64) {
        let step = |old: u64, new: u64| {
            ((old as u128 * FILTER_OLD as u128 + new as u128 * (FILTER_DEN - FILTER_OLD) as u128)
                / FILTER_DEN as u128) as u64
        };
        let ns = self.bwe_ns.map_or(sample, |old| step(old, sample));
        self.bwe_ns = Some(ns);
        self.bwe = Some(if self.filter_stages == 1 {
            ns
        } else {
            self.bwe.map_or(ns, |old| step(old, ns))
        });
    }

    /// max(2, bwe*RTTmin/MSS) segments, or RFC 5681 equation (4) before there is an
    /// estimate.
    fn bdp_ssthresh(&self, flight: u64) -> u64 {
        let mss = self.mss as u64;
        match (self.bwe, self.rtt_min) {
            (Some(bwe), Some(rtt)) => {
                let bdp = bwe as u128 * rtt.as_nanos() as u128 / NANOS_PER_SEC;
                let segs = (bdp / mss.max(1) as u128).min((u64::MAX / mss.max(1)) as u128) as u64;
                segs.max(2) * mss
            }
            _ => half_flight(flight, self.mss),
        }
    }

    /// Feeds the bandwidth and RTTmin estimators with a cumulative ACK.
    fn observe(&mut self, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
            self.rtt = rtt;
        } else if self.rtt == Dur::ZERO {
            self.rtt = ack.srtt;
        }
        let counted = if self.count_twice {
            ack.bytes_acked
        } else {
            self.acked_count(ack.bytes_acked)
        };
        self.deliver(ack.now, counted);
    }

    /// MobiCom 2001 section 2.3 AckedCount (Linux `westwood_acked_count`) for a cumulative
    /// ACK of `cumul` bytes: what duplicate ACKs counted already is paid back first.
    fn acked_count(&mut self, cumul: u64) -> u64 {
        let mss = self.mss as u64;
        if cumul <= mss {
            return cumul;
        }
        if self.accounted >= cumul {
            self.accounted -= cumul;
            mss
        } else {
            let c = cumul - self.accounted;
            self.accounted = 0;
            c
        }
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
    /// One segment, the loss window after a timeout.
    fn min_window(&self) -> u64 {
        self.mss.max(1) as u64
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.observe(ack);
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
    /// ACKs during recovery still measure delivery (and pay back the duplicate ACKs).
    fn on_recovery_ack(&mut self, ack: &AckSample) {
        self.observe(ack);
    }
    /// A duplicate ACK: one segment has left the network.
    fn on_dup_ack(&mut self, now: Time, mss: u32) {
        if !self.count_twice {
            self.accounted = self.accounted.saturating_add(mss as u64);
        }
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
    fn grows_only_when_cwnd_limited_but_still_measures() {
        let mut cc = WestwoodPlus::new(cfg());
        for i in 0..300 {
            let mut a = ack(i, M, 100);
            a.cwnd_limited = false;
            cc.on_ack(&a);
        }
        assert_eq!(cc.cwnd(), 2 * M);
        assert!(cc.bandwidth_estimate().is_some());
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

    /// A steady ACK stream at a known rate: the estimate converges to the rate, for both
    /// filter settings, and ssthresh is rate * RTTmin in whole segments.
    #[test]
    fn steady_stream_converges_and_sets_ssthresh_to_bwe_times_rtt_min() {
        for stages in [1, 2] {
            let mut cc = WestwoodPlus::with_options(
                CcConfig {
                    initial_window: 200 * M,
                    initial_ssthresh: 200 * M,
                    ..cfg()
                },
                false,
                stages,
            );
            // One MSS every 500 us = 2 MB/s for 10 s; RTT samples between 80 and 130 ms.
            let gap_ns = 500_000;
            let rtts = [120, 95, 80, 130, 101];
            let end = stream(&mut cc, 0, gap_ns, 20_000, &rtts, 110);
            let rate = M as f64 * 1e9 / gap_ns as f64;
            let bwe = cc.bandwidth_estimate().unwrap() as f64;
            assert!(
                (bwe - rate).abs() <= rate * 1e-3,
                "{stages}: bwe {bwe} vs {rate}"
            );
            cc.on_congestion_event(&loss(end / 1_000_000, 150 * M, 110));
            // 2 MB/s * 80 ms = 160 segments (159 if the estimate is a hair low).
            assert!(
                cc.ssthresh().abs_diff(160 * M) <= M,
                "{stages}: {}",
                cc.ssthresh()
            );
            assert_eq!(cc.ssthresh() % M, 0);
            // cwnd (200 MSS) was above the BDP, so it drops to ssthresh.
            assert_eq!(cc.cwnd(), cc.ssthresh());
        }
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
    fn first_sample_fills_every_stage() {
        let mut cc = WestwoodPlus::new(cfg());
        // ACK at 0 opens the window (not counted); ACKs at 1..=100 ms are counted; the ACK
        // at 101 ms is the first more than 100 ms after the start and closes it.
        stream(&mut cc, 0, 1_000_000, 101, &[100], 100);
        assert_eq!(cc.bandwidth_estimate(), None);
        cc.on_ack(&ack_at(101_000_000, M, 100, 100));
        let first = 100 * M * 1_000_000_000 / 101_000_000;
        assert_eq!((cc.bwe_ns, cc.bwe), (Some(first), Some(first)));
    }

    /// A rate step lasting one interval moves the first stage 1/8 of the way and the
    /// second 1/8 of the first stage's move (Linux `westwood_filter`); with one stage the
    /// estimate is the first stage.
    #[test]
    fn filter_is_cascaded_seven_eighths() {
        for stages in [1u8, 2] {
            let mut cc = WestwoodPlus::with_options(cfg(), false, stages);
            // 1 MB/s: intervals of 101 ACKs close at 101, 202, ... ms.
            let k = 60;
            let end = stream(&mut cc, 0, 1_000_000, k * 101 + 1, &[100], 100);
            let (ns0, est0) = (cc.bwe_ns.unwrap(), cc.bwe.unwrap());
            assert!(est0.abs_diff(1_000_000) < 100, "{est0}");
            // 2 MB/s for exactly one interval: ACKs every 0.5 ms, the 201st closes it.
            stream(&mut cc, end + 500_000, 500_000, 201, &[100], 100);
            let ns = (7 * ns0 + 2_000_000) / 8;
            let est = if stages == 1 { ns } else { (7 * est0 + ns) / 8 };
            assert_eq!((cc.bwe_ns, cc.bwe), (Some(ns), Some(est)), "{stages}");
        }
    }

    #[test]
    fn intervals_are_at_least_50_ms() {
        let mut cc = WestwoodPlus::new(cfg());
        // RTT 10 ms, ACKs every ms: nothing is sampled until more than 50 ms have passed.
        stream(&mut cc, 0, 1_000_000, 51, &[10], 10);
        assert_eq!(cc.bandwidth_estimate(), None);
        cc.on_ack(&ack_at(51_000_000, M, 10, 10));
        assert_eq!(
            cc.bandwidth_estimate(),
            Some(50 * M * 1_000_000_000 / 51_000_000)
        );
    }

    /// MobiCom 2001 AckedCount / Linux `westwood_acked_count`: 99 duplicate ACKs and the
    /// cumulative ACK for the hole plus those 99 segments count 100 segments; ns-3's
    /// accounting counts the 99 twice.
    #[test]
    fn dup_acks_count_once_or_twice() {
        for (twice, want) in [(false, 100 * M), (true, 199 * M)] {
            let mut cc = WestwoodPlus::with_options(cfg(), twice, 2);
            cc.on_ack(&ack_at(0, M, 1000, 1000)); // opens the window
            for i in 1..100 {
                cc.on_dup_ack(Time(i * 1_000_000), MSS);
            }
            cc.on_recovery_ack(&ack_at(100_000_000, 100 * M, 1000, 1000));
            assert_eq!(cc.win_bytes, want, "twice = {twice}");
            assert_eq!(cc.accounted, 0);
        }
    }

    /// A partial ACK no larger than what duplicate ACKs counted counts one segment and
    /// pays back its whole size; the rest is paid back by the next cumulative ACK.
    #[test]
    fn partial_ack_after_dup_acks_pays_back() {
        let mut cc = WestwoodPlus::new(cfg());
        cc.on_ack(&ack_at(0, M, 1000, 1000));
        for i in 1..=3 {
            cc.on_dup_ack(Time(i * 1_000_000), MSS);
        }
        cc.on_recovery_ack(&ack_at(4_000_000, 2 * M, 1000, 1000));
        assert_eq!((cc.win_bytes, cc.accounted), (4 * M, M));
        cc.on_recovery_ack(&ack_at(5_000_000, 3 * M, 1000, 1000));
        assert_eq!((cc.win_bytes, cc.accounted), (6 * M, 0));
        // A one-segment ACK never touches the account.
        cc.on_dup_ack(Time(6_000_000), MSS);
        cc.on_ack(&ack_at(7_000_000, M, 1000, 1000));
        assert_eq!((cc.win_bytes, cc.accounted), (8 * M, M));
    }

    #[test]
    fn rto_uses_bdp_and_loss_window() {
        let mut cc = WestwoodPlus::new(CcConfig {
            initial_window: 100 * M,
            ..cfg()
        });
        let end = stream(&mut cc, 0, 250_000, 8000, &[60, 40, 50], 70);
        cc.on_rto(&loss(end / 1_000_000, 50 * M, 70));
        assert_eq!(cc.cwnd(), M);
        // 4 MB/s * 40 ms = 160 segments (159 if the estimate is a hair low).
        assert!(cc.ssthresh().abs_diff(160 * M) <= M, "{}", cc.ssthresh());
        // A repeated timeout keeps ssthresh.
        let before = cc.ssthresh();
        cc.on_rto(&CongestionEvent {
            repeat: true,
            ..loss(end / 1_000_000 + 2000, M, 70)
        });
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, before));
    }
}
