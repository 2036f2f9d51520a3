//! TCP-radio (de Cola and Marchese, seed 003, section 5.2 and Table 3): a window set to
//! the bandwidth-delay product at connection opening and never reduced.
//!
//! * Setup: IW = bandwidth-delay product (computed by the scenario, `iw = "bdp"`),
//!   ssthresh infinite.
//! * Fast retransmit/recovery: retransmit and send new data, with no window reduction at
//!   the end of recovery. Entry on one duplicate ACK is the endpoint's `dupthresh = 1`.
//! * Timeout: the window is not cut to one segment; after the retransmission the
//!   transfer "continues with the maximum rate possible". Backoff and the retry limits are
//!   the endpoint's RTO settings (TCP-radio keeps backoff; TCP-radio-newRTO turns it off).
//!
//! Growth: Table 3 writes `cwnd = cwnd + 1` per ACK while the text says "the congestion
//! window value is no longer increased when the acknowledgments arrive". The text is the
//! default (`growth = false`); `growth = true` follows the table, adding one segment per
//! ACK (docs/model-notes.md), and only on ACKs that say the sender is cwnd-limited
//! (RFC 7661; seed 003 does not say, and with `cwnd_validation` off every ACK does).
//!
//! Smallest window: the initial one (at least one segment), since nothing reduces it.

use super::*;

/// TCP-radio's parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadioConfig {
    /// Grow one segment per ACK (Table 3) instead of holding the window (the text).
    pub growth: bool,
}

#[derive(Debug, Clone)]
pub struct TcpRadio {
    cwnd: u64,
    /// The window it started with, which it never goes below.
    initial: u64,
    growth: bool,
}

impl TcpRadio {
    pub fn new(cfg: CcConfig) -> TcpRadio {
        TcpRadio::with_config(cfg, RadioConfig::default())
    }

    pub fn with_config(cfg: CcConfig, r: RadioConfig) -> TcpRadio {
        let cwnd = cfg.initial_window.max(cfg.mss.max(1) as u64);
        TcpRadio {
            cwnd,
            initial: cwnd,
            growth: r.growth,
        }
    }
}

impl CongestionControl for TcpRadio {
    fn name(&self) -> &'static str {
        "tcp-radio"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Table 3: ssthresh = Infinity, and nothing lowers it.
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn min_window(&self) -> u64 {
        self.initial
    }
    fn on_ack(&mut self, ack: &AckSample) {
        if self.growth && ack.cwnd_limited {
            self.cwnd = self.cwnd.saturating_add(ack.credit);
        }
    }
    /// Section 5.2: "at the end of the recovery phase, the congestion window value is not
    /// reduced".
    fn on_congestion_event(&mut self, _: &CongestionEvent) {}
    /// Section 5.2: "when a timer expires the congestion window is not reduced to one
    /// segment".
    fn on_rto(&mut self, _: &CongestionEvent) {}
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn window_survives_losses_and_timeouts() {
        let mut cc = TcpRadio::new(CcConfig {
            initial_window: 50 * MSS as u64,
            ..cfg()
        });
        cc.on_congestion_event(&loss(10, 50 * MSS as u64, 2000));
        assert_eq!(cc.cwnd(), 50 * MSS as u64);
        cc.on_rto(&loss(20, 50 * MSS as u64, 2000));
        assert_eq!(cc.cwnd(), 50 * MSS as u64);
        assert_eq!(cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn growth_follows_the_parameter() {
        let mut fixed = TcpRadio::new(CcConfig {
            initial_window: 10 * MSS as u64,
            ..cfg()
        });
        let mut growing = TcpRadio::with_config(
            CcConfig {
                initial_window: 10 * MSS as u64,
                ..cfg()
            },
            RadioConfig { growth: true },
        );
        for i in 0..5 {
            fixed.on_ack(&ack(i, MSS as u64, 2000));
            growing.on_ack(&ack(i, MSS as u64, 2000));
        }
        assert_eq!(fixed.cwnd(), 10 * MSS as u64);
        assert_eq!(growing.cwnd(), 15 * MSS as u64);
    }

    #[test]
    fn growth_waits_for_a_cwnd_limited_ack() {
        let mut cc = TcpRadio::with_config(
            CcConfig {
                initial_window: 10 * MSS as u64,
                ..cfg()
            },
            RadioConfig { growth: true },
        );
        cc.on_ack(&AckSample {
            cwnd_limited: false,
            ..ack(0, MSS as u64, 2000)
        });
        assert_eq!(cc.cwnd(), 10 * MSS as u64);
        assert_eq!(cc.min_window(), 10 * MSS as u64);
    }
}
