//! Congestion control of RFC 4960 section 7.2, in bytes: slow start, congestion
//! avoidance with partial_bytes_acked, and the reductions of section 7.2.3.
//!
//! Bytes are user data bytes of DATA chunks (`SctpConfig` explains why), `mtu` the path
//! MTU the formulas name.

/// What the sender learned from one SACK, for the window update of sections 7.2.1 and
/// 7.2.2.
#[derive(Clone, Copy, Debug)]
pub(super) struct SackInput {
    /// The SACK advanced the Cumulative TSN Ack Point.
    pub cum_advanced: bool,
    /// Bytes of chunks newly acknowledged, by the cumulative ack or gap blocks.
    pub bytes_acked: u64,
    /// Flight size before the SACK arrived.
    pub flight_before: u64,
    pub in_fast_recovery: bool,
    /// Nothing is outstanding any more.
    pub all_acked: bool,
}

/// The window state of section 7.2, exposed read-only as `CcState`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    mtu: u64,
    pub(super) cwnd: u64,
    pub(super) ssthresh: u64,
    pub(super) partial_bytes_acked: u64,
}

impl Window {
    /// cwnd from `initial_cwnd` (section 7.2.1); ssthresh unbounded until the peer's
    /// a_rwnd is known (`set_initial_ssthresh`).
    pub(super) fn new(mtu: u32, initial_cwnd: u64) -> Window {
        Window {
            mtu: mtu as u64,
            cwnd: initial_cwnd,
            ssthresh: u64::MAX,
            partial_bytes_acked: 0,
        }
    }

    /// Section 7.2.1: "The initial value of ssthresh MAY be arbitrarily high (for
    /// example, implementations MAY use the size of the receiver advertised window)".
    pub(super) fn set_initial_ssthresh(&mut self, a_rwnd: u32) {
        self.ssthresh = a_rwnd as u64;
    }

    pub(super) fn on_sack(&mut self, s: SackInput) {
        if self.cwnd <= self.ssthresh {
            // Section 7.2.1: grow only if cwnd was fully used, the SACK advanced the
            // Cumulative TSN Ack Point and we are not in Fast Recovery; then by at most
            // min(bytes acknowledged, MTU). "Fully used" is read as a flight size of at
            // least cwnd before the SACK: the sender stops only there (rule B of
            // section 6.1 lets it pass cwnd by less than one packet).
            if s.cum_advanced && s.flight_before >= self.cwnd && !s.in_fast_recovery {
                self.cwnd += s.bytes_acked.min(self.mtu);
            }
        } else if s.cum_advanced {
            // Section 7.2.2: count every byte newly acknowledged; one MTU per cwnd of
            // acknowledged bytes, if the window was full before this SACK.
            self.partial_bytes_acked += s.bytes_acked;
            if self.partial_bytes_acked >= self.cwnd && s.flight_before >= self.cwnd {
                self.partial_bytes_acked -= self.cwnd;
                self.cwnd += self.mtu;
            }
        }
        if s.all_acked {
            // Section 7.2.2: "When all of the data transmitted by the sender has been
            // acknowledged by the receiver, partial_bytes_acked is initialized to 0."
            self.partial_bytes_acked = 0;
        }
    }

    /// Section 7.2.3 on fast retransmit: ssthresh = max(cwnd / 2, 4 * MTU),
    /// cwnd = ssthresh.
    pub(super) fn on_fast_retransmit(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(4 * self.mtu);
        self.cwnd = self.ssthresh;
        self.partial_bytes_acked = 0;
    }

    /// Section 7.2.3 on T3-rtx expiry: ssthresh = max(cwnd / 2, 4 * MTU), cwnd = 1 MTU.
    pub(super) fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(4 * self.mtu);
        self.cwnd = self.mtu;
        self.partial_bytes_acked = 0;
    }

    /// Section 7.2.1: a sender that has sent nothing for an RTO adjusts cwnd to
    /// max(cwnd / 2, 4 * MTU) per RTO. Applied lazily, `rtos` idle RTOs at once; this
    /// model only ever lowers cwnd by it (the formula would raise a cwnd below 4 MTU).
    pub(super) fn on_idle(&mut self, rtos: u64) {
        for _ in 0..rtos.min(64) {
            let lowered = (self.cwnd / 2).max(4 * self.mtu);
            if lowered >= self.cwnd {
                break;
            }
            self.cwnd = lowered;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1282;

    fn sack(bytes_acked: u64, flight_before: u64) -> SackInput {
        SackInput {
            cum_advanced: true,
            bytes_acked,
            flight_before,
            in_fast_recovery: false,
            all_acked: false,
        }
    }

    #[test]
    fn slow_start_needs_a_full_window() {
        let mut w = Window::new(MTU as u32, 4380);
        w.set_initial_ssthresh(65536);
        w.on_sack(sack(2400, 4000));
        assert_eq!(w.cwnd, 4380, "window not fully used");
        w.on_sack(sack(600, 4800));
        assert_eq!(w.cwnd, 4980, "min(600, MTU)");
        w.on_sack(sack(2400, 4980));
        assert_eq!(w.cwnd, 4980 + MTU, "min(2400, MTU)");
        w.on_sack(SackInput {
            in_fast_recovery: true,
            ..sack(2400, 10_000)
        });
        assert_eq!(w.cwnd, 4980 + MTU, "not in fast recovery");
    }

    #[test]
    fn congestion_avoidance_one_mtu_per_window() {
        let mut w = Window::new(MTU as u32, 10_000);
        w.set_initial_ssthresh(5000);
        w.on_sack(sack(6000, 10_000));
        assert_eq!((w.cwnd, w.partial_bytes_acked), (10_000, 6000));
        w.on_sack(sack(6000, 10_000));
        assert_eq!((w.cwnd, w.partial_bytes_acked), (10_000 + MTU, 2000));
        w.on_sack(SackInput {
            all_acked: true,
            ..sack(600, 3000)
        });
        assert_eq!(w.partial_bytes_acked, 0);
    }

    #[test]
    fn reductions() {
        let mut w = Window::new(MTU as u32, 20_000);
        w.on_fast_retransmit();
        assert_eq!((w.cwnd, w.ssthresh), (10_000, 10_000));
        w.on_fast_retransmit();
        assert_eq!((w.cwnd, w.ssthresh), (4 * MTU, 4 * MTU), "floor of 4 MTU");
        w.on_timeout();
        assert_eq!((w.cwnd, w.ssthresh), (MTU, 4 * MTU));
        let mut idle = Window::new(MTU as u32, 40_000);
        idle.on_idle(2);
        assert_eq!(idle.cwnd, 10_000);
        idle.on_idle(5);
        assert_eq!(idle.cwnd, 4 * MTU);
    }
}
