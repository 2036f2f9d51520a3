//! Congestion control: one trait, one algorithm per file, selected by name or by an
//! `Algorithm` that carries the algorithm's own parameters (docs/architecture.md).
//!
//! The controller owns `cwnd` and `ssthresh` and nothing else. Loss *recovery* (which
//! segment to retransmit, window inflation during fast recovery, the SACK scoreboard) lives
//! in `tcp::recovery`; a controller only says which recovery style it was defined with
//! (`recovery_style`) and how its window reacts to events.
//!
//! Window growth is counted in "credit" bytes that the sender computes per ACK: one MSS per
//! ACK (classic per-ACK counting, RFC 5681 section 3.1) or the bytes newly acknowledged,
//! capped at L*MSS (Appropriate Byte Counting, RFC 3465). Controllers never look at the
//! counting mode, so every controller supports both.
//!
//! A rate-based controller (SaTPEP) names the rate its sender is paced at
//! (`pacing_rate`); the sender's pacer then spaces segments at that rate.
//!
//! Router-assisted controllers (XCP, VCP, MPCP) stamp their request on data (`request`)
//! and read the receiver's echo (`on_echo`); the echo itself is the receiving
//! connection's (`rap::Echo`), as every receiver returns what the routers wrote.

use crate::packet::RouterFeedback;
use crate::rap::{self, Feedback};
use crate::time::{Dur, Time};
use std::fmt;

mod algorithm;
mod cubic;
mod hybla;
mod hystart;
mod mpcp;
mod newreno;
#[cfg(test)]
mod proptests;
mod radio;
mod reno;
mod satpep;
mod tahoe;
mod vcp;
mod westwood;
mod xcp;

pub use algorithm::{Algorithm, RapMonitor, NAMES};
pub use cubic::{Cubic, CubicConfig};
pub use hybla::{Hybla, HyblaConfig};
pub use mpcp::{Mpcp, MpcpConfig};
pub use newreno::NewReno;
pub use radio::{RadioConfig, TcpRadio};
pub use reno::Reno;
pub use satpep::{Satpep, SatpepConfig, UNLIMITED_WINDOW};
pub use tahoe::Tahoe;
pub use vcp::Vcp;
pub use westwood::WestwoodPlus;
pub use xcp::Xcp;

/// Parameters every controller starts from; each algorithm's own are in its `*Config`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcConfig {
    /// Sender maximum segment size in bytes (payload).
    pub mss: u32,
    /// Initial congestion window in bytes (RFC 5681 section 3.1 / RFC 6928).
    pub initial_window: u64,
    /// Initial slow-start threshold in bytes; `u64::MAX` means "arbitrarily high".
    pub initial_ssthresh: u64,
    /// How slow start ends before a loss (used by CUBIC, the only controller with HyStart
    /// in Linux and ns-3).
    pub hystart: Hystart,
    /// The sender paces its segments (HyStart's ACK-train test and RFC 9406's L depend on
    /// it).
    pub paced: bool,
}

impl CcConfig {
    pub fn new(mss: u32) -> CcConfig {
        CcConfig {
            mss,
            initial_window: rfc5681_initial_window(mss),
            initial_ssthresh: u64::MAX,
            hystart: Hystart::Off,
            paced: false,
        }
    }
}

/// Leaving slow start on rising delay rather than on loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hystart {
    /// RFC 5681 slow start: only a loss ends it.
    #[default]
    Off,
    /// Ha and Rhee's HyStart as Linux `tcp_cubic.c` runs it: ACK-train and delay-increase
    /// detection set ssthresh = cwnd.
    Classic,
    /// HyStart++ (RFC 9406): delay increase starts Conservative Slow Start.
    Rfc9406,
    /// ns-3.44 `TcpCubic`'s HyStart: the smoothed RTT, a threshold of clamp(delay_min,
    /// 4 ms, 1 s) and a train spanning the whole delay_min (`hystart.rs`).
    Ns3,
}

/// The initial window of RFC 5681 section 3.1: 2, 3 or 4 segments depending on SMSS.
pub fn rfc5681_initial_window(mss: u32) -> u64 {
    let mss = mss as u64;
    if mss > 2190 {
        2 * mss
    } else if mss > 1095 {
        3 * mss
    } else {
        4 * mss
    }
}

/// How the sender recovers from a loss detected by duplicate ACKs, as the algorithm was
/// published. With SACK negotiated, fast-recovery styles use RFC 6675 instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryStyle {
    /// Fast retransmit, then slow start from one segment (go-back-N); no fast recovery.
    Tahoe,
    /// Fast recovery that ends on the first ACK of new data (RFC 5681 section 3.2).
    Reno,
    /// Fast recovery that ends when the recovery point is acknowledged; partial ACKs
    /// retransmit the next hole (RFC 6582).
    NewReno,
}

/// An ACK that acknowledged new data, as seen by the controller.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub bytes_acked: u64,
    /// Bytes to count for window growth (see module doc).
    pub credit: u64,
    /// RTT measured on this ACK, if Karn's rule allowed one.
    pub rtt: Option<Dur>,
    /// Smoothed RTT after this ACK (RFC 6298), or zero before the first sample.
    pub srtt: Dur,
    /// Smallest RTT seen on the connection, or zero before the first sample.
    pub min_rtt: Dur,
    /// Bytes still outstanding after this ACK.
    pub bytes_in_flight: u64,
    /// The sender used its whole window recently (RFC 7661, Linux `tcp_is_cwnd_limited`).
    /// Always true unless `TcpConfig::cwnd_validation` is on; a controller must not grow
    /// the window on an ACK that says false (RFC 9438 section 4, RFC 7661 section 4.3).
    pub cwnd_limited: bool,
    /// Linux's TCP_CA_Open: no timeout's losses are still being repaired (SND.UNA is at or
    /// past the point the last loss episode or timeout set, Linux `high_seq`) and no
    /// SACKed data sits above SND.UNA (TCP_CA_Disorder). Only Hybla's Linux rules read it
    /// (`hybla_state`).
    pub open: bool,
}

/// A congestion signal: entry into loss recovery, or a retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub now: Time,
    /// FlightSize when the loss was detected (RFC 5681 section 3.1, equation (4)).
    pub bytes_in_flight: u64,
    pub srtt: Dur,
    pub min_rtt: Dur,
    /// A retransmission timeout for data that has already timed out: RFC 5681 section 3.1
    /// holds ssthresh constant then, and only the window collapses.
    pub repeat: bool,
}

/// A congestion controller. Hooks are named after the events that call them; optional
/// hooks have empty defaults.
///
/// Every controller states in its doc comment its smallest window (`min_window`) and how
/// it honours `AckSample::cwnd_limited` (RFC 7661): a window-based controller does not
/// grow on an ACK that says the sender is not cwnd-limited; a controller whose window
/// moves on router feedback applies no increase while the latest ACK said so; a
/// controller whose window never limits (rate-based) says why there is nothing to
/// validate. `cc::proptests` checks both rules for every name in `NAMES`.
pub trait CongestionControl: fmt::Debug + Send {
    fn name(&self) -> &'static str;
    /// Congestion window in bytes (without fast-recovery inflation).
    fn cwnd(&self) -> u64;
    fn ssthresh(&self) -> u64;
    /// The smallest window this controller ever holds, bytes (often one MSS, after a
    /// timeout).
    fn min_window(&self) -> u64;
    /// The connection is established; `srtt` is the handshake's RTT sample, or zero
    /// (Linux calls the controller's `init` here, `tcp_init_transfer`).
    fn on_init(&mut self, _srtt: Dur) {}
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
    /// A cumulative ACK advanced the window outside fast recovery.
    fn on_ack(&mut self, ack: &AckSample);
    /// A cumulative ACK arrived during fast recovery: the window must not grow, but
    /// estimators (Westwood+'s bandwidth) may learn from it.
    fn on_recovery_ack(&mut self, _ack: &AckSample) {}
    /// A duplicate ACK arrived (one more segment has left the network).
    fn on_dup_ack(&mut self, _now: Time, _mss: u32) {}
    /// A segment left the sender (new data or retransmission).
    fn on_sent(&mut self, _now: Time, _bytes: u64, _in_flight: u64) {}
    /// Loss detected by duplicate ACKs or SACK: set `ssthresh` and the window that fast
    /// recovery ends with. Tahoe-style controllers set the loss window instead.
    fn on_congestion_event(&mut self, ev: &CongestionEvent);
    /// Fast recovery ended with a full ACK.
    fn on_recovery_exit(&mut self, _now: Time) {}
    /// The retransmission timer expired (RFC 5681 section 3.1: ssthresh from equation (4),
    /// cwnd to the loss window of one segment).
    fn on_rto(&mut self, ev: &CongestionEvent);
    /// Router-assisted: the congestion header to stamp on an outgoing data segment.
    fn request(&self, _srtt: Dur) -> Option<RouterFeedback> {
        None
    }
    /// Router-assisted: feedback arrived (echoed on an ACK, or from a local monitor).
    fn on_feedback(&mut self, _now: Time, _fb: Feedback) {}
    /// Router-assisted, sending side: an ACK came back carrying the receiver's echo.
    fn on_echo(&mut self, now: Time, fb: &RouterFeedback) {
        self.on_feedback(now, rap::decode(fb));
    }
    /// Rate-based: the rate the sender paces its segments at, bits per second, set by the
    /// controller itself (SaTPEP). The sender then paces whatever `TcpConfig::pacing`
    /// says; `None` (every window-based controller) leaves pacing to `TcpConfig::pacing`.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
}

/// Builds a controller from its scenario name with its default parameters.
pub fn by_name(name: &str, cfg: CcConfig) -> Option<Box<dyn CongestionControl>> {
    Algorithm::by_name(name).map(|a| a.build(cfg))
}

/// RFC 5681 equation (4): ssthresh = max(FlightSize / 2, 2*SMSS).
pub fn half_flight(flight: u64, mss: u32) -> u64 {
    (flight / 2).max(2 * mss as u64)
}

/// Congestion-avoidance growth of one MSS per window's worth of credit: the byte-counting
/// form of cwnd += MSS*MSS/cwnd (RFC 5681 equation (3)) without its rounding loss.
#[derive(Clone, Copy, Debug, Default)]
pub struct AvoidanceCounter {
    acc: u64,
}

impl AvoidanceCounter {
    /// Adds `credit` bytes and returns the new window.
    pub fn grow(&mut self, cwnd: u64, credit: u64, mss: u32) -> u64 {
        self.grow_by(cwnd, credit, mss as u64)
    }
    /// Like `grow`, but each window's worth of credit adds `step` bytes (Hybla's rho^2*MSS).
    pub fn grow_by(&mut self, mut cwnd: u64, credit: u64, step: u64) -> u64 {
        self.acc = self.acc.saturating_add(credit);
        while self.acc >= cwnd.max(1) {
            self.acc -= cwnd.max(1);
            cwnd = cwnd.saturating_add(step.max(1));
        }
        cwnd
    }
    pub fn reset(&mut self) {
        self.acc = 0;
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers shared by the controllers' bare-state tests.
    use super::*;

    pub const MSS: u32 = 1000;

    pub fn cfg() -> CcConfig {
        CcConfig {
            mss: MSS,
            initial_window: 2 * MSS as u64,
            initial_ssthresh: u64::MAX,
            hystart: Hystart::Off,
            paced: false,
        }
    }

    pub fn ack(now_ms: u64, bytes: u64, srtt_ms: u64) -> AckSample {
        AckSample {
            now: Time(now_ms * 1_000_000),
            bytes_acked: bytes,
            credit: bytes,
            rtt: Some(Dur::from_millis(srtt_ms)),
            srtt: Dur::from_millis(srtt_ms),
            min_rtt: Dur::from_millis(srtt_ms),
            bytes_in_flight: 0,
            cwnd_limited: true,
            open: true,
        }
    }

    pub fn loss(now_ms: u64, flight: u64, srtt_ms: u64) -> CongestionEvent {
        CongestionEvent {
            now: Time(now_ms * 1_000_000),
            bytes_in_flight: flight,
            srtt: Dur::from_millis(srtt_ms),
            min_rtt: Dur::from_millis(srtt_ms),
            repeat: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avoidance_adds_one_mss_per_window() {
        let mut c = AvoidanceCounter::default();
        let mut cwnd = 10_000;
        for _ in 0..10 {
            cwnd = c.grow(cwnd, 1000, 1000);
        }
        assert_eq!(cwnd, 11_000);
    }
}
