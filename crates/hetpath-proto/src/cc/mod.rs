//! Congestion control: one trait, one algorithm per file, selected by name
//! (DESIGN.md convention 4).
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

use crate::packet::RouterFeedback;
use crate::time::{Dur, Time};
use std::fmt;

mod cubic;
mod hybla;
mod mpcp;
mod newreno;
mod radio;
mod reno;
mod tahoe;
mod vcp;
mod westwood;
mod xcp;

pub use cubic::Cubic;
pub use hybla::Hybla;
pub use mpcp::Mpcp;
pub use newreno::NewReno;
pub use radio::TcpRadio;
pub use reno::Reno;
pub use tahoe::Tahoe;
pub use vcp::Vcp;
pub use westwood::WestwoodPlus;
pub use xcp::Xcp;

/// Parameters every controller starts from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcConfig {
    /// Sender maximum segment size in bytes (payload).
    pub mss: u32,
    /// Initial congestion window in bytes (RFC 5681 section 3.1 / RFC 6928).
    pub initial_window: u64,
    /// Initial slow-start threshold in bytes; `u64::MAX` means "arbitrarily high".
    pub initial_ssthresh: u64,
    /// TCP-radio only: grow the window one segment per ACK (seed 003 Table 3) instead of
    /// holding it (the text of section 5.2, the default).
    pub radio_growth: bool,
    /// MPCP only: packets n over which one load-factor code is spread (2 or 3).
    pub mpcp_packets: u8,
}

impl CcConfig {
    pub fn new(mss: u32) -> CcConfig {
        CcConfig {
            mss,
            initial_window: rfc5681_initial_window(mss),
            initial_ssthresh: u64::MAX,
            radio_growth: false,
            mpcp_packets: 2,
        }
    }
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

/// Congestion feedback for router-assisted controllers (seed 004): decoded from the echo
/// on an ACK, or handed over by a RAPPEP agent from its local traffic monitor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feedback {
    /// XCP: change the window by this many bytes.
    Window(i64),
    /// A load factor: demand over capacity (1.0 keeps the bottleneck exactly full).
    Load(f64),
}

/// A congestion controller. Hooks are named after the events that call them; optional
/// hooks have empty defaults.
pub trait CongestionControl: fmt::Debug + Send {
    fn name(&self) -> &'static str;
    /// Congestion window in bytes (without fast-recovery inflation).
    fn cwnd(&self) -> u64;
    fn ssthresh(&self) -> u64;
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
}

/// The controller names accepted by `by_name`, in documentation order.
pub const NAMES: &[&str] = &[
    "tahoe",
    "reno",
    "newreno",
    "westwood+",
    "cubic",
    "hybla",
    "tcp-radio",
    "xcp",
    "vcp",
    "mpcp",
    "xcp-pep",
    "mpcp-pep",
];

/// Builds a controller from its scenario name.
pub fn by_name(name: &str, cfg: CcConfig) -> Option<Box<dyn CongestionControl>> {
    Some(match name {
        "tahoe" => Box::new(Tahoe::new(cfg)),
        "reno" => Box::new(Reno::new(cfg)),
        "newreno" => Box::new(NewReno::new(cfg)),
        "westwood+" | "westwoodplus" | "westwood" => Box::new(WestwoodPlus::new(cfg)),
        "cubic" => Box::new(Cubic::new(cfg)),
        "hybla" => Box::new(Hybla::new(cfg)),
        "tcp-radio" => Box::new(TcpRadio::new(cfg)),
        "xcp" => Box::new(Xcp::new(cfg)),
        "vcp" => Box::new(Vcp::new(cfg)),
        "mpcp" => Box::new(Mpcp::new(cfg)),
        // RAPPEP's controllers (seed 004 section III-B): feedback from the agent's
        // traffic monitor, nothing on the wire, and losses do not shrink the window.
        "xcp-pep" => Box::new(Xcp::pep(cfg)),
        "mpcp-pep" => Box::new(Mpcp::pep(cfg)),
        _ => return None,
    })
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
            radio_growth: false,
            mpcp_packets: 2,
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
    fn every_name_builds() {
        for n in NAMES {
            let cc = by_name(n, CcConfig::new(1460)).unwrap();
            assert_eq!(cc.cwnd(), rfc5681_initial_window(1460), "{n}");
        }
        assert!(by_name("vegas", CcConfig::new(1460)).is_none());
    }

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
