//! The XCP end host (Katabi, Handley, Rohrs, SIGCOMM 2002, section 3.3): the window is
//! driven by the routers' explicit feedback, not by ACK counting.
//!
//! - Every data segment carries H_cwnd = cwnd, H_rtt = srtt (zero before the first
//!   sample, section 3.3) and H_feedback = the desired window change. A bulk sender wants
//!   as much as the path allows, so it asks for `REQUEST` bytes per packet, the
//!   window-unit form of ns-2's `MAX_THROUGHPUT - throughput` with MAX_THROUGHPUT = 1e24
//!   B/s (xcp/xcp-end-sys.cc `XcpEndsys::send`); every XCP router lowers it.
//! - Feedback echoed on an ACK: cwnd = max(cwnd + H_feedback, s) (section 3.3), with
//!   s = one MSS, and at most `MAX_CWND` so that a path without an XCP router (nothing
//!   lowers the request) leaves the window limited by the receive window, not overflowing.
//! - No slow start and no growth on ACKs: ns-2's XCP agents make `opencwnd` a no-op
//!   (xcp/xcp-end-sys.h).
//! - Losses, raw XCP: "XCP still needs to respond to losses although they are rare. It
//!   does this in a similar manner to TCP" (section 3.3). ns-2's XCP agents inherit Reno's
//!   and NewReno's loss handling; here NewReno's as in this crate: ssthresh = FlightSize/2
//!   (RFC 5681 equation (4)), cwnd = ssthresh after fast retransmit, one MSS after an RTO.
//!   Feedback alone regrows the window.
//! - Cwnd validation (RFC 7661 section 4.3, applied to feedback): positive feedback is not
//!   applied while the latest ACK said the sender is not cwnd-limited, so an
//!   application-limited flow does not bank window it has not used; negative feedback
//!   always is. Routers allocate by H_cwnd, which such a flow does not fill. Every ACK
//!   says cwnd-limited while `cwnd_validation` is off. Smallest window: one segment (s).
//! - `pep` (RAPPEP's XCP PEP, seed 004 section III-B): nothing goes on the wire (the
//!   agent's traffic monitor hands the feedback to `on_feedback` locally), and "RAPPEP
//!   treats all losses as wireless link effect loss and makes no adjustment to cwnd".

use super::*;
use crate::packet::XcpHeader;

/// Largest window, bytes (1 TiB: far above any simulated bandwidth-delay product).
pub const MAX_CWND: u64 = 1 << 40;
/// H_feedback a sender asks for on every packet: "unlimited" (see the module doc).
pub const REQUEST: i64 = MAX_CWND as i64;

#[derive(Debug, Clone)]
pub struct Xcp {
    mss: u32,
    cwnd: u64,
    ssthresh: u64,
    /// RAPPEP: no header on the wire, losses ignored.
    pep: bool,
    /// The latest ACK said the sender is cwnd-limited (`AckSample::cwnd_limited`).
    cwnd_limited: bool,
}

impl Xcp {
    /// Raw XCP: stamps the congestion header and reacts to losses like TCP.
    pub fn new(cfg: CcConfig) -> Xcp {
        Xcp {
            mss: cfg.mss,
            cwnd: cfg.initial_window.clamp(cfg.mss.max(1) as u64, MAX_CWND),
            ssthresh: u64::MAX,
            pep: false,
            cwnd_limited: true,
        }
    }

    /// RAPPEP's XCP PEP (seed 004 section III-B).
    pub fn pep(cfg: CcConfig) -> Xcp {
        Xcp {
            pep: true,
            ..Xcp::new(cfg)
        }
    }

    /// cwnd = max(cwnd + h, s), capped at `MAX_CWND` (section 3.3); an increase only while
    /// cwnd-limited.
    fn apply(&mut self, h: i64) {
        if h > 0 && !self.cwnd_limited {
            return;
        }
        let w = self.cwnd as i128 + h as i128;
        self.cwnd = w.clamp(self.mss.max(1) as i128, MAX_CWND as i128) as u64;
    }
}

impl CongestionControl for Xcp {
    fn name(&self) -> &'static str {
        if self.pep {
            "xcp-pep"
        } else {
            "xcp"
        }
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// One segment (s, section 3.3).
    fn min_window(&self) -> u64 {
        self.mss.max(1) as u64
    }
    /// Feedback, not ACK counting, moves the window; the ACK says whether it may grow.
    fn on_ack(&mut self, ack: &AckSample) {
        self.cwnd_limited = ack.cwnd_limited;
    }
    fn on_recovery_ack(&mut self, ack: &AckSample) {
        self.cwnd_limited = ack.cwnd_limited;
    }
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if self.pep {
            return;
        }
        self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        self.cwnd = self.ssthresh.min(MAX_CWND);
    }
    fn on_rto(&mut self, ev: &CongestionEvent) {
        if self.pep {
            return;
        }
        if !ev.repeat {
            self.ssthresh = half_flight(ev.bytes_in_flight, self.mss);
        }
        self.cwnd = self.mss.max(1) as u64;
    }
    fn request(&self, srtt: Dur) -> Option<RouterFeedback> {
        if self.pep {
            return None;
        }
        Some(RouterFeedback::Xcp(XcpHeader {
            cwnd: self.cwnd,
            rtt: srtt,
            feedback: REQUEST,
        }))
    }
    fn on_feedback(&mut self, _now: Time, fb: Feedback) {
        if let Feedback::Window(h) = fb {
            self.apply(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    const M: u64 = MSS as u64;

    fn now() -> Time {
        Time(1_000_000)
    }

    #[test]
    fn request_carries_window_rtt_and_demand() {
        let cc = Xcp::new(cfg());
        let want = XcpHeader {
            cwnd: 2 * M,
            rtt: Dur::from_millis(80),
            feedback: REQUEST,
        };
        assert_eq!(
            cc.request(Dur::from_millis(80)),
            Some(RouterFeedback::Xcp(want))
        );
        // No RTT sample yet: H_rtt = 0 tells the routers so.
        let Some(RouterFeedback::Xcp(h)) = cc.request(Dur::ZERO) else {
            panic!("no header");
        };
        assert_eq!(h.rtt, Dur::ZERO);
        assert_eq!(cc.name(), "xcp");
        let pep = Xcp::pep(cfg());
        assert_eq!(
            (pep.request(Dur::from_millis(80)), pep.name()),
            (None, "xcp-pep")
        );
    }

    #[test]
    fn feedback_moves_window_with_one_mss_floor() {
        let mut cc = Xcp::new(cfg());
        cc.on_feedback(now(), Feedback::Window(3_500));
        assert_eq!(cc.cwnd(), 2 * M + 3_500);
        cc.on_feedback(now(), Feedback::Window(-1_500));
        assert_eq!(cc.cwnd(), 2 * M + 2_000);
        cc.on_feedback(now(), Feedback::Window(-1_000_000));
        assert_eq!(cc.cwnd(), M);
        // Load factors are not XCP's; ACKs do not grow the window.
        cc.on_feedback(now(), Feedback::Load(0.1));
        cc.on_ack(&ack(2, M, 100));
        assert_eq!(cc.cwnd(), M);
        // An unlowered request (no XCP router on the path) stops at the cap.
        cc.on_feedback(now(), Feedback::Window(i64::MAX));
        assert_eq!(cc.cwnd(), MAX_CWND);
        cc.on_feedback(now(), Feedback::Window(i64::MIN));
        assert_eq!(cc.cwnd(), M);
    }

    #[test]
    fn raw_xcp_reacts_to_losses_like_newreno() {
        let mut cc = Xcp::new(CcConfig {
            initial_window: 40 * M,
            ..cfg()
        });
        cc.on_congestion_event(&loss(10, 40 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (20 * M, 20 * M));
        cc.on_rto(&loss(20, 20 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (M, 10 * M));
        // No slow start afterwards: only feedback reopens the window.
        cc.on_ack(&ack(30, M, 100));
        assert_eq!(cc.cwnd(), M);
        cc.on_feedback(now(), Feedback::Window(5 * M as i64));
        assert_eq!(cc.cwnd(), 6 * M);
    }

    #[test]
    fn pep_ignores_losses() {
        let mut cc = Xcp::pep(CcConfig {
            initial_window: 40 * M,
            ..cfg()
        });
        cc.on_congestion_event(&loss(10, 40 * M, 100));
        cc.on_rto(&loss(20, 40 * M, 100));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (40 * M, u64::MAX));
        // The local monitor's feedback still drives it.
        cc.on_feedback(now(), Feedback::Window(-(10 * M as i64)));
        assert_eq!(cc.cwnd(), 30 * M);
    }

    #[test]
    fn positive_feedback_waits_for_a_cwnd_limited_ack() {
        let mut cc = Xcp::new(CcConfig {
            initial_window: 10 * M,
            ..cfg()
        });
        cc.on_ack(&AckSample {
            cwnd_limited: false,
            ..ack(1, M, 100)
        });
        cc.on_feedback(now(), Feedback::Window(5 * M as i64));
        assert_eq!(cc.cwnd(), 10 * M, "an unused window is not grown");
        cc.on_feedback(now(), Feedback::Window(-(2 * M as i64)));
        assert_eq!(cc.cwnd(), 8 * M, "but it is cut");
        cc.on_ack(&ack(2, M, 100));
        cc.on_feedback(now(), Feedback::Window(5 * M as i64));
        assert_eq!(cc.cwnd(), 13 * M);
    }
}
