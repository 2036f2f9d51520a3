//! TCP endpoint configuration. Defaults follow the RFCs; every value is a scenario key.

use super::freeze::RestoreMode;
use crate::cc::{rfc5681_initial_window, Hystart};
use crate::iface::LocalQueue;
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
    pub formula: RtoFormula,
}

/// How the RTO is computed from SRTT and RTTVAR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoFormula {
    /// RFC 6298 section 2: max(SRTT + max(G, 4 RTTVAR), min).
    #[default]
    Rfc6298,
    /// Linux 2.2's margin on top (`tcp_set_rto` in the 2.2 kernels that seed 003 ran):
    /// rto += rto/4 + rto >> (cwnd - 1), cwnd in segments.
    Linux22,
    /// Current Linux: the minimum bounds the variance term, not the sum: SRTT + max(4
    /// RTTVAR, min) (`tcp_rtt_estimator`: rttvar_us = max(mdev_max_us, rto_min), and
    /// `__tcp_set_rto`), so that the RTO stays above the RTT by at least `min`.
    Linux,
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
            formula: RtoFormula::Rfc6298,
        }
    }
}

/// Pacing at a rate of `ratio` percent of cwnd/srtt, as Linux computes
/// `sk_pacing_rate` for the fq qdisc (`tcp_update_pacing_rate`, net/ipv4/tcp_input.c:
/// `tcp_pacing_ss_ratio` 200 while cwnd < ssthresh / 2, `tcp_pacing_ca_ratio` 120 after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    pub ss_ratio: u32,
    pub ca_ratio: u32,
}

impl Pacing {
    /// Linux's sysctl defaults.
    pub const LINUX: Pacing = Pacing {
        ss_ratio: 200,
        ca_ratio: 120,
    };
    /// Hybla's packet spacing: one window per smoothed RTT, in every phase (Caini and
    /// Firrincieli 2004).
    pub const HYBLA: Pacing = Pacing {
        ss_ratio: 100,
        ca_ratio: 100,
    };
}

/// What ssthresh is computed from when a loss is detected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsthreshFrom {
    /// FlightSize = SND.NXT - SND.UNA, SACKed data included (RFC 5681 section 3.1, eq. 4).
    #[default]
    FlightSize,
    /// The RFC 6675 pipe: only what is still counted in the network (ns-3
    /// `BytesInFlight`).
    Pipe,
    /// The congestion window (Linux `tcp_reno_ssthresh`: cwnd / 2).
    Cwnd,
}

/// What an ACK's byte count for window growth (`abc_limit`) counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AbcCounts {
    /// Bytes the cumulative ACK newly covers, SACKed ones included (RFC 3465 section 2:
    /// "bytes acknowledged by each incoming ACK").
    #[default]
    Acked,
    /// RFC 6937 DeliveredData: bytes newly cumulatively acked that were not SACKed
    /// before, plus bytes newly SACKed by this ACK, so each byte counts once, when it is
    /// first known delivered (Linux `tcp_cong_avoid(sk, ack, acked_sacked)`; ns-3
    /// `TcpSocketBase::ProcessAck` feeds `currentDelivered` to `IncreaseWindow`). After a
    /// timeout, the ACK that fills the hole then counts the retransmission, not the window
    /// of SACKed data behind it.
    Delivered,
}

/// What the ACK that ends fast recovery gives the controller to grow by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitCredit {
    /// Nothing: it ends recovery and cwnd stays at ssthresh (RFC 6582 section 3.2 step 3,
    /// RFC 6675 section 5 (A), RFC 6937).
    #[default]
    None,
    /// The bytes it cumulatively acknowledges, SACKed ones included: ns-3.44
    /// `TcpSocketBase::ProcessAck` recomputes `segsAcked` as (ackNumber - SND.UNA) / MSS
    /// when it leaves CA_RECOVERY and passes it to `IncreaseWindow` in CA_OPEN.
    Acked,
}

/// How the window is brought down during fast recovery with SACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 6675: cwnd = ssthresh at once, sending whenever pipe < cwnd.
    #[default]
    Rfc6675,
    /// Proportional Rate Reduction (RFC 6937) with its Slow Start Reduction Bound, the
    /// bound Linux and ns-3 use.
    PrrSsrb,
    /// PRR with the Conservative Reduction Bound (RFC 6937 section 3.1).
    PrrCrb,
}

/// How a SACK sender learns that a retransmission was lost too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LostRetransmit {
    /// Only by the retransmission timer (RFC 6675 section 5.1: a retransmitted segment
    /// is not deemed lost again by IsLost).
    #[default]
    Timeout,
    /// Also once a segment sent after it has been delivered (RFC 8985 section 6.2, RACK,
    /// Linux's default since 4.18, `net.ipv4.tcp_recovery = 1`), with no reordering
    /// window. Only this part of RACK is modelled: first transmissions are still deemed
    /// lost by RFC 6675 IsLost (docs/model-notes.md, "Lost retransmissions").
    Rack,
}

/// When NewReno (without SACK) restarts the retransmission timer on a partial ACK (RFC
/// 6582 section 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewRenoTimer {
    /// On every partial ACK, as on any ACK of new data (RFC 6298 section 5.3): recovery
    /// goes on one hole per round trip however many holes the window has.
    #[default]
    SlowButSteady,
    /// Only on the first partial ACK of an episode, so that a window with many losses
    /// ends in a timeout rather than in one round trip per loss (ns-2's
    /// `newreno_changes1_`).
    Impatient,
}

/// When a receiver that may delay its ACKs acknowledges at once anyway, beyond what RFC
/// 5681 section 4.2 requires (out-of-order data, a filled hole).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuickAck {
    /// Nothing more: every `delayed_ack.count`-th segment, or the timer.
    #[default]
    Off,
    /// Linux's quick-ACK mode (`tcp_input.c`). The first `min(W / (2 MSS), 16)` data
    /// segments are acknowledged one by one (`tcp_event_data_recv`'s first-data branch,
    /// `tcp_incr_quickack`, TCP_MAX_QUICKACKS; W the initial window, 64 KiB rounded down
    /// to the MSS), and so is every segment that opens the receive window further
    /// (`tcp_grow_window`: `rcv_ssthresh` grows by max(2 MSS, 2 × the segment) per
    /// segment of 128 bytes or more, up to the free buffer, and sets `icsk_ack.quick`).
    /// Each ACK sent spends one (`tcp_dec_quickack_mode`). Not modelled: receive-buffer
    /// autotuning (`tcp_rcv_space_adjust`), which in the kernel holds the window back
    /// for part of each round trip, and the re-entry after an idle gap longer than the
    /// RTO (docs/model-notes.md, "Quick ACKs").
    Linux,
}

/// How the active opener acknowledges the SYN-ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HandshakeAck {
    /// On its first data segment, when it has data to send (as Linux and ns-3 do not).
    #[default]
    Piggyback,
    /// With a pure ACK of its own (RFC 9293 section 3.5, Figure 6), then data.
    Separate,
}

/// What a window closed to zero does to data already in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZeroWindow {
    /// The retransmission timer keeps running, and its expiry is a timeout like any other
    /// (Linux: tcp_retransmit_timer enters loss even at a zero window).
    #[default]
    Retransmit,
    /// The retransmission timer stops and the persist timer probes instead, with the
    /// window and the timer's backoff kept (4.4BSD tcp_output: "If window shrank to 0,
    /// cancel pending retransmit ... and set the persist timer"). This is what freezes a
    /// sender in M-TCP, Freeze-TCP and LIFT (seed 001 section II) when they advertise a
    /// zero window; a reopened window restarts the timer.
    Freeze,
}

/// What SACK recovery resends beyond the segments its scoreboard deems lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SackResend {
    /// The segment at SND.UNA, at the start of an episode (RFC 6675 section 5 step 4.3)
    /// even if its retransmission is in flight, and at every partial ACK unless its
    /// retransmission is in flight (RFC 6582 section 3.2 step 5 carried over; ns-3.44
    /// `EnterRecovery` and `ProcessAck`'s `DoRetransmit` do both with SACK).
    #[default]
    Head,
    /// Nothing: only what IsLost marks (RFC 6675 section 5 (B)), and a segment whose
    /// retransmission is in flight is not resent by a new episode (Linux
    /// `tcp_fastretrans_alert`: a partial ACK marks nothing with SACK, and
    /// `tcp_xmit_retransmit_queue` skips `TCPCB_SACKED_RETRANS` segments).
    Lost,
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
    pub quick_ack: QuickAck,
    /// Appropriate Byte Counting limit L in segments (RFC 3465); `None` counts one MSS
    /// of window growth per ACK.
    pub abc_limit: Option<u32>,
    pub abc_counts: AbcCounts,
    pub exit_credit: ExitCredit,
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
    /// What happens when its node's first-hop queue has no room for a packet.
    pub local_queue: LocalQueue,
    /// Pace transmissions (`None`: send as the window allows).
    pub pacing: Option<Pacing>,
    pub ssthresh_from: SsthreshFrom,
    pub recovery: Recovery,
    /// The timestamps option (RFC 7323): 12 bytes on every segment, and an RTT sample
    /// (RTTM, section 4) on every ACK of new data.
    pub timestamps: bool,
    pub handshake_ack: HandshakeAck,
    pub hystart: Hystart,
    /// Grow the window only while the sender uses it (RFC 7661; RFC 9438 section 4).
    pub cwnd_validation: bool,
    pub zero_window: ZeroWindow,
    /// Bounds on the persist timer's interval, which starts at the RTO and doubles with
    /// each window probe (RFC 9293 section 3.8.6.1). 4.4BSD ranges it to [5 s, 60 s]
    /// (TCPTV_PERSMIN, TCPTV_PERSMAX); Linux caps it at TCP_RTO_MAX, 120 s.
    pub persist_min: Dur,
    pub persist_max: Dur,
    pub sack_resend: SackResend,
    pub lost_retransmit: LostRetransmit,
    /// Restart the retransmission timer when the segment at SND.UNA is retransmitted
    /// (Linux `tcp_xmit_retransmit_queue`), not only when new data is acknowledged (RFC
    /// 6298 section 5.3), so that a fast retransmit gets a full RTO to be acknowledged.
    pub rto_restart_on_resend: bool,
    pub newreno_timer: NewRenoTimer,
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
            quick_ack: QuickAck::Off,
            abc_limit: Some(2),
            abc_counts: AbcCounts::Acked,
            exit_credit: ExitCredit::None,
            dupthresh: 3,
            rto: RtoConfig::default(),
            recv_buffer: 16 << 20,
            time_wait: Dur::from_secs(240),
            ilc: None,
            local_queue: LocalQueue::Wait,
            pacing: None,
            ssthresh_from: SsthreshFrom::FlightSize,
            recovery: Recovery::Rfc6675,
            timestamps: false,
            handshake_ack: HandshakeAck::Piggyback,
            hystart: Hystart::Off,
            cwnd_validation: false,
            zero_window: ZeroWindow::Retransmit,
            persist_min: Dur::ZERO,
            persist_max: Dur::from_secs(60),
            sack_resend: SackResend::Head,
            lost_retransmit: LostRetransmit::Timeout,
            rto_restart_on_resend: false,
            newreno_timer: NewRenoTimer::SlowButSteady,
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
            hystart: self.hystart,
            paced: self.pacing.is_some(),
        }
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::new(1460)
    }
}
