//! TCP endpoint configuration. Defaults follow the RFCs; every value is a scenario key.

use super::freeze::RestoreMode;
use crate::cc::rfc5681_initial_window;
use crate::time::Dur;

/// Delayed acknowledgements (RFC 1122 section 4.2.3.2, RFC 5681 section 4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayedAck {
    /// Acknowledge at the latest every `count` in-order segments (of any size).
    pub count: u32,
    /// Acknowledge at the latest this long after the first unacknowledged segment.
    pub timeout: Dur,
}

/// Retransmission timer and retry limits (RFC 6298; RFC 9293 section 3.8.3 for the
/// limits, which Linux calls `tcp_syn_retries` and `tcp_retries2`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoConfig {
    /// RTO before any RTT sample (RFC 6298 section 2.1: 1 s).
    pub initial: Dur,
    /// Lower bound (RFC 6298 section 2.4: 1 s).
    pub min: Dur,
    /// Upper bound (RFC 6298 section 2.5: at least 60 s).
    pub max: Dur,
    /// Clock granularity G of RFC 6298 section 2.
    pub granularity: Dur,
    /// Double the RTO on each expiry (RFC 6298 section 5.5). Off: RTO = min(RTO, max).
    pub backoff: bool,
    /// SYN (or SYN-ACK) retransmissions before the connection is aborted.
    pub syn_retries: u32,
    /// Consecutive retransmission timeouts of data before the connection is aborted.
    pub data_retries: u32,
    /// Add Linux 2.2's margin to the RFC 6298 value (`tcp_set_rto` in the 2.2 kernels
    /// that seed 003 ran): rto += rto/4 + rto >> (cwnd - 1), cwnd in segments.
    pub linux22: bool,
}

impl Default for RtoConfig {
    fn default() -> RtoConfig {
        RtoConfig {
            initial: Dur::from_secs(1),
            min: Dur::from_secs(1),
            max: Dur::from_secs(60),
            granularity: Dur::from_millis(1),
            backoff: true,
            syn_retries: 6,
            data_retries: 15,
            linux22: false,
        }
    }
}

/// Everything that shapes one TCP endpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes) this endpoint sends.
    pub mss: u32,
    /// Initial congestion window in bytes.
    pub initial_window: u64,
    /// Initial slow-start threshold in bytes (`u64::MAX`: arbitrarily high).
    pub initial_ssthresh: u64,
    /// Negotiate and use SACK (RFC 2018) and SACK-based recovery (RFC 6675).
    pub sack: bool,
    pub delayed_ack: Option<DelayedAck>,
    /// Appropriate Byte Counting limit L in segments (RFC 3465); `None` counts one MSS
    /// of window growth per ACK.
    pub abc_limit: Option<u32>,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 section 3.2: 3).
    pub dupthresh: u32,
    pub rto: RtoConfig,
    /// Receive buffer in bytes; the advertised window is what is free of it.
    pub recv_buffer: u64,
    /// How long TIME-WAIT lasts: 2 MSL (RFC 9293 section 3.4.2: MSL = 2 minutes).
    pub time_wait: Dur,
    /// ILC-TCP (seed 002 section 3.3.4): on a retransmission timeout, ask the node's
    /// State Manager (`Event::WhatShouldTcpDo`) before acting, obey its answer, and
    /// resend this way on RESTORE (see `tcp/freeze.rs`). `None`: standard TCP.
    pub ilc: Option<RestoreMode>,
}

impl TcpConfig {
    pub fn new(mss: u32) -> TcpConfig {
        TcpConfig {
            mss,
            initial_window: rfc5681_initial_window(mss),
            initial_ssthresh: u64::MAX,
            sack: true,
            delayed_ack: Some(DelayedAck {
                count: 2,
                timeout: Dur::from_millis(200),
            }),
            abc_limit: Some(2),
            dupthresh: 3,
            rto: RtoConfig::default(),
            recv_buffer: 16 << 20,
            time_wait: Dur::from_secs(240),
            ilc: None,
        }
    }

    /// Window scale shift needed to advertise the whole receive buffer (RFC 7323 2.3).
    pub fn window_scale(&self) -> u8 {
        let mut shift = 0;
        while shift < 14 && (self.recv_buffer >> shift) > 65_535 {
            shift += 1;
        }
        shift
    }

    pub fn cc_config(&self) -> crate::cc::CcConfig {
        crate::cc::CcConfig {
            mss: self.mss,
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh,
        }
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::new(1460)
    }
}
