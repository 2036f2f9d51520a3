//! SaTPEP's satellite protocol (Velenis, Kalogeras and Maglaris, "SaTPEP: a TCP
//! Performance Enhancing Proxy for Satellite Links", IFIP Networking 2002), as seed 000
//! (APOHN, section IV.B) describes its use: data crosses the satellite hop between the two
//! halves of a split connection "using a rate-based protocol implementing a negative
//! acknowledgement scheme".
//!
//! The abstract of the SaTPEP paper says the proxy monitors the satellite link's
//! utilisation and gives each connection a window reflecting the available bandwidth,
//! and that loss recovery is based on negative acknowledgements; the full text was not
//! reachable here. With one connection on a link of dedicated capacity (seed 000's GEO
//! hop), the available bandwidth is the link's rate, so the model is:
//!
//! - the sender is paced at the configured `rate` (`pacing_rate`): one segment (payload
//!   and 40 bytes of IP and TCP headers) per its serialisation time at that rate, from the
//!   first segment on, with no slow start;
//! - the window never limits: it is `UNLIMITED_WINDOW`, so the flight is bounded only by
//!   the peer's receive window (the far PEP's buffer) and the sender's own send buffer;
//! - a loss does not change the rate or the window (`on_congestion_event` and `on_rto` do
//!   nothing): a NACK-based rate protocol repairs losses by selective retransmission and
//!   does not back off. The repair itself is the TCP sender's SACK recovery (RFC 6675),
//!   which plays the part of the NACKs: a SACK hole is a negative acknowledgement, and the
//!   retransmission goes out, paced, ahead of new data.
//!
//! Smallest window: `UNLIMITED_WINDOW`, always. Cwnd validation (RFC 7661) has nothing to
//! act on: the window never limits and never moves, so an ACK that says the sender is not
//! cwnd-limited (it never is) changes nothing; the rate is fixed by configuration, not
//! grown by ACKs, so there is no rate to validate either.
//!
//! What this leaves out: SaTPEP's own header and NACK format (the leg is TCP on the wire,
//! with SACK blocks on its ACKs), and the link monitor that shares the rate among several
//! connections (here each connection is paced at the full `rate`).

use super::*;

/// The window of a SaTPEP connection: 1 TiB, far above any receive window, so that only
/// the peer's window and the pacing rate bound what is sent.
pub const UNLIMITED_WINDOW: u64 = 1 << 40;

/// SaTPEP's parameter: the rate it sends at, bits per second (the satellite link's
/// dedicated capacity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatpepConfig {
    pub rate_bps: u64,
}

impl Default for SatpepConfig {
    /// Seed 000's GEO forward channel, 20 Mbit/s (section IV.A). Scenarios must give the
    /// rate; the default only serves `Algorithm::by_name`.
    fn default() -> SatpepConfig {
        SatpepConfig {
            rate_bps: 20_000_000,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Satpep {
    rate_bps: u64,
}

impl Satpep {
    pub fn new(_cfg: CcConfig, satpep: SatpepConfig) -> Satpep {
        Satpep {
            rate_bps: satpep.rate_bps.max(1),
        }
    }
}

impl CongestionControl for Satpep {
    fn name(&self) -> &'static str {
        "satpep"
    }
    fn cwnd(&self) -> u64 {
        UNLIMITED_WINDOW
    }
    /// Never in slow start.
    fn ssthresh(&self) -> u64 {
        UNLIMITED_WINDOW
    }
    fn min_window(&self) -> u64 {
        UNLIMITED_WINDOW
    }
    /// The rate, not the ACKs, sets the pace.
    fn on_ack(&mut self, _ack: &AckSample) {}
    /// Losses are repaired, not responded to.
    fn on_congestion_event(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent) {}
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.rate_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    fn satpep() -> Satpep {
        Satpep::new(
            cfg(),
            SatpepConfig {
                rate_bps: 6_000_000,
            },
        )
    }

    #[test]
    fn paces_at_its_rate_with_an_open_window_from_the_start() {
        let cc = satpep();
        assert_eq!(cc.pacing_rate(), Some(6_000_000));
        assert_eq!(cc.cwnd(), UNLIMITED_WINDOW);
        assert!(cc.cwnd() >= cc.ssthresh(), "no slow start");
    }

    #[test]
    fn losses_and_timeouts_change_neither_window_nor_rate() {
        let mut cc = satpep();
        cc.on_congestion_event(&loss(10, 500 * MSS as u64, 600));
        assert_eq!(cc.cwnd(), UNLIMITED_WINDOW);
        cc.on_rto(&loss(20, 500 * MSS as u64, 600));
        cc.on_rto(&CongestionEvent {
            repeat: true,
            ..loss(30, MSS as u64, 600)
        });
        assert_eq!(
            (cc.cwnd(), cc.ssthresh()),
            (UNLIMITED_WINDOW, UNLIMITED_WINDOW)
        );
        assert_eq!(cc.pacing_rate(), Some(6_000_000));
    }

    #[test]
    fn acks_do_not_move_the_window() {
        let mut cc = satpep();
        for i in 0..100 {
            cc.on_ack(&ack(i, MSS as u64, 600));
            cc.on_dup_ack(Time(i), MSS);
        }
        assert_eq!(cc.cwnd(), UNLIMITED_WINDOW);
    }

    #[test]
    fn a_zero_rate_is_raised_to_one_bit_per_second() {
        let cc = Satpep::new(cfg(), SatpepConfig { rate_bps: 0 });
        assert_eq!(cc.pacing_rate(), Some(1));
    }
}
