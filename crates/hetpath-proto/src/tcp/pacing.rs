//! Pacing: spacing a sender's segments at a rate derived from its window and smoothed
//! RTT, as Linux does with `sk_pacing_rate` and the fq qdisc (or its internal pacing),
//! instead of sending each window as one burst. A segment may leave no earlier than the
//! previous one's departure plus its size at that rate (Linux's earliest departure time,
//! `tcp_update_skb_after_send`).
//!
//! A rate-based controller (`CongestionControl::pacing_rate`, SaTPEP) gives the rate
//! itself: the sender then has a pacer whatever `TcpConfig::pacing` says, and spaces
//! segments at that rate (`on_sent_at_rate`).

use super::config::Pacing;
use crate::time::{Dur, Time};

#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    /// The ratios of window-derived pacing; `None`: only a controller's rate paces.
    cfg: Option<Pacing>,
    /// When the next segment may leave.
    next: Time,
    /// A segment was held back: the sender must be woken at `next`.
    holding: bool,
}

impl Pacer {
    pub fn new(cfg: Option<Pacing>) -> Pacer {
        Pacer {
            cfg,
            next: Time::ZERO,
            holding: false,
        }
    }

    /// May a segment leave now? If not, the sender is due a wake-up (`deadline`).
    pub fn ready(&mut self, now: Time) -> bool {
        if now >= self.next {
            return true;
        }
        self.holding = true;
        false
    }

    /// A segment of `wire_bytes` left at `now`. The rate is ratio% * max(cwnd, flight) /
    /// srtt, with the slow-start ratio while cwnd < ssthresh / 2 (Linux
    /// `tcp_update_pacing_rate`). Without an RTT sample, or without `Pacing`, nothing is
    /// paced.
    pub fn on_sent(
        &mut self,
        now: Time,
        wire_bytes: u64,
        window: u64,
        ssthresh: u64,
        srtt: Option<Dur>,
    ) {
        let Some(cfg) = self.cfg else {
            return;
        };
        let Some(srtt) = srtt.filter(|s| *s > Dur::ZERO) else {
            return;
        };
        let ratio = if window < ssthresh / 2 {
            cfg.ss_ratio
        } else {
            cfg.ca_ratio
        };
        // gap = bytes / (ratio/100 * window / srtt), in nanoseconds.
        let gap = (wire_bytes as u128 * srtt.as_nanos() as u128 * 100)
            / (ratio.max(1) as u128 * window.max(1) as u128);
        self.next = self.next.max(now) + Dur(gap.min(u64::MAX as u128) as u64);
    }

    /// A segment of `wire_bytes` left at `now`, paced at a rate the controller set: the
    /// next may leave one serialisation time at `rate_bps` later.
    pub fn on_sent_at_rate(&mut self, now: Time, wire_bytes: u64, rate_bps: u64) {
        self.next = self.next.max(now) + Dur::serialization(wire_bytes, rate_bps.max(1));
    }

    /// When a held-back segment may leave.
    pub fn deadline(&self) -> Option<Time> {
        self.holding.then_some(self.next)
    }

    pub fn on_timeout(&mut self, now: Time) {
        if now >= self.next {
            self.holding = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_spread_over_the_rtt_divided_by_the_ratio() {
        let mut p = Pacer::new(Some(Pacing::LINUX));
        let srtt = Some(Dur::from_millis(100));
        // Congestion avoidance (window >= ssthresh / 2): 10 x 1000 bytes in 100 ms / 1.2.
        let mut now = Time::ZERO;
        for _ in 0..10 {
            assert!(p.ready(now));
            p.on_sent(now, 1000, 10_000, 10_000, srtt);
            now = p.next;
        }
        let expect = 100e6 / 1.2;
        assert!((now.0 as f64 - expect).abs() < 10.0, "{now:?}");
        assert!(!p.ready(Time(now.0 - 1)));
        assert_eq!(p.deadline(), Some(now));
        // Slow start (window < ssthresh / 2) paces twice as fast as the window per RTT.
        let mut q = Pacer::new(Some(Pacing::LINUX));
        q.on_sent(Time::ZERO, 1000, 10_000, 100_000, srtt);
        assert_eq!(q.next, Time(5_000_000));
        // No RTT sample yet: nothing is paced.
        let mut r = Pacer::new(Some(Pacing::LINUX));
        r.on_sent(Time::ZERO, 1000, 10_000, 10_000, None);
        assert!(r.ready(Time::ZERO));
    }

    #[test]
    fn a_controller_rate_spaces_segments_by_their_serialisation_time() {
        // No window-derived pacing configured: the window path paces nothing...
        let mut p = Pacer::new(None);
        p.on_sent(
            Time::ZERO,
            1500,
            10_000,
            10_000,
            Some(Dur::from_millis(100)),
        );
        assert!(p.ready(Time::ZERO));
        // ... and the rate path spaces 1500 bytes at 20 Mbit/s by 600 us, whatever the RTT.
        let mut now = Time::ZERO;
        for _ in 0..10 {
            assert!(p.ready(now));
            p.on_sent_at_rate(now, 1500, 20_000_000);
            now = p.next;
        }
        assert_eq!(now, Time(10 * 600_000));
        assert!(!p.ready(Time(now.0 - 1)));
        // A sender idle for a while does not bank credit: the next gap starts from now.
        p.on_timeout(Time(now.0 + 5_000_000));
        p.on_sent_at_rate(Time(now.0 + 5_000_000), 1500, 20_000_000);
        assert_eq!(p.next, Time(now.0 + 5_600_000));
    }
}
