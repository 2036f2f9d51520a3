//! The sending half of a TCP endpoint: what to send next, within which window, and the
//! retransmission and persist timers. ACK processing and loss recovery are in
//! `recovery.rs`, which extends `Sender`.

use super::config::{SsthreshFrom, TcpConfig, ZeroWindow};
use super::cwnd_usage::CwndUsage;
use super::pacing::Pacer;
use super::prr::Prr;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use crate::cc::{CongestionControl, CongestionEvent, RecoveryStyle};
use crate::time::{earliest, Dur, Time};

/// Loss recovery as this connection runs it: the controller's published style, or
/// RFC 6675 SACK-based recovery when SACK was negotiated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryMode {
    Tahoe,
    Reno,
    NewReno,
    Sack,
}

/// Counters reported per flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub bytes_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub window_probes: u64,
    /// Timeouts answered with FREEZE (ILC-TCP).
    pub freezes: u64,
}

/// What an expired timer asks of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Nothing to report (no timer due, a stale timer, or the persist timer).
    None,
    /// A retransmission timeout was handled the standard way.
    Timeout,
    /// The retry limit was exceeded: the connection must abort.
    Abort,
    /// ILC-TCP: the retransmission timer expired; the State Manager must be asked
    /// (`Sender::on_advice`) before anything else happens.
    Ask,
}

/// What `Sender::poll_segment` decided to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outgoing {
    Data {
        seq: u64,
        len: u32,
        retransmission: bool,
    },
    Fin {
        seq: u64,
        retransmission: bool,
    },
    /// A zero-window probe: an empty segment with an old sequence number that makes the
    /// receiver answer with its current window (RFC 9293 section 3.8.6.1).
    Probe {
        seq: u64,
    },
}

impl Outgoing {
    /// The first byte of the segment if it is sent again.
    pub fn resent(&self) -> Option<u64> {
        match *self {
            Outgoing::Data {
                seq,
                retransmission: true,
                ..
            }
            | Outgoing::Fin {
                seq,
                retransmission: true,
            } => Some(seq),
            _ => None,
        }
    }
}

pub struct Sender {
    pub(super) cfg: TcpConfig,
    pub(super) snd_una: u64,
    /// Next new sequence number to send (RFC 9293 SND.NXT when not retransmitting).
    pub(super) snd_max: u64,
    /// One past the last byte the application has written.
    pub(super) app_end: u64,
    pub(super) fin_queued: bool,
    pub(super) board: Scoreboard,
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) rtt: RttEstimator,
    pub(super) mode: RecoveryMode,
    /// Peer's advertised window in bytes.
    pub(super) rwnd: u64,
    pub(super) in_recovery: bool,
    /// A partial ACK has come in this loss episode (for `NewRenoTimer::Impatient`).
    pub(super) partial_acked: bool,
    /// RFC 6582 `recover`: highest sequence sent when the last loss episode began.
    pub(super) recover: u64,
    pub(super) dupacks: u32,
    /// Fast-recovery window inflation for non-SACK Reno/NewReno (RFC 6582 section 3.2).
    pub(super) inflation: u64,
    /// The next retransmission goes out whatever the window (fast retransmit, partial ACK,
    /// timeout).
    pub(super) force_retransmit: bool,
    pub(super) rto_deadline: Option<Time>,
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    probe_due: bool,
    /// Retransmission timeouts since data was last acknowledged.
    pub(super) consecutive_timeouts: u32,
    pub(super) stats: SenderStats,
    /// ILC-TCP: a timeout is waiting for the State Manager's advice (see `freeze.rs`).
    pub(super) awaiting_advice: bool,
    /// ILC-TCP: frozen until RESTORE; nothing is sent.
    pub(super) frozen: bool,
    /// PRR's state while in SACK recovery (RFC 6937), and the window it allows.
    pub(super) prr: Option<(Prr, u64)>,
    pacer: Option<Pacer>,
    /// Congestion Window Reduced after a local queue refused a packet, until this
    /// sequence number is acknowledged (Linux `high_seq` in TCP_CA_CWR).
    cwr_until: u64,
    usage: CwndUsage,
}

impl Sender {
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Sender {
        let mode = match cc.recovery_style() {
            RecoveryStyle::Tahoe => RecoveryMode::Tahoe,
            RecoveryStyle::Reno => RecoveryMode::Reno,
            RecoveryStyle::NewReno => RecoveryMode::NewReno,
        };
        // A rate-based controller paces its sender whatever `cfg.pacing` says.
        let pacer =
            (cfg.pacing.is_some() || cc.pacing_rate().is_some()).then(|| Pacer::new(cfg.pacing));
        Sender {
            cfg,
            snd_una: 1,
            snd_max: 1,
            app_end: 1,
            fin_queued: false,
            board: Scoreboard::default(),
            cc,
            rtt: RttEstimator::new(cfg.rto),
            mode,
            rwnd: 65_535,
            in_recovery: false,
            partial_acked: false,
            recover: 0,
            dupacks: 0,
            inflation: 0,
            force_retransmit: false,
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            probe_due: false,
            consecutive_timeouts: 0,
            stats: SenderStats::default(),
            awaiting_advice: false,
            frozen: false,
            prr: None,
            pacer,
            cwr_until: 0,
            usage: CwndUsage::default(),
        }
    }

    /// SACK was negotiated: fast-recovery styles switch to RFC 6675.
    pub fn enable_sack(&mut self) {
        if self.mode != RecoveryMode::Tahoe {
            self.mode = RecoveryMode::Sack;
        }
    }

    pub fn write(&mut self, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes);
    }

    pub fn fin_seq(&self) -> Option<u64> {
        self.fin_queued.then_some(self.app_end)
    }

    /// All data and the FIN (if queued) are acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una >= self.app_end + self.fin_queued as u64
    }

    /// The window against which `pipe` is compared: PRR's during a PRR recovery; else
    /// cwnd plus fast-recovery inflation, plus up to two segments of limited transmit
    /// (RFC 3042) on the first duplicate ACKs. RFC 3042 bounds FlightSize by cwnd + 2
    /// SMSS; with SACK, pipe already leaves out the segments the duplicate ACKs SACKed,
    /// which is that allowance (RFC 6675 section 5), so nothing is added on top of it.
    fn send_window(&self) -> u64 {
        if let Some((_, window)) = self.prr {
            return window;
        }
        let limited = if self.in_recovery
            || self.dupacks >= self.cfg.dupthresh
            || self.mode == RecoveryMode::Sack
        {
            0
        } else {
            self.dupacks.min(2) as u64 * self.cfg.mss as u64
        };
        self.cc.cwnd() + self.inflation + limited
    }

    /// FlightSize, pipe or cwnd: what ssthresh is halved from (`TcpConfig::ssthresh_from`).
    pub(super) fn loss_basis(&self) -> u64 {
        match self.cfg.ssthresh_from {
            SsthreshFrom::FlightSize => self.snd_max - self.snd_una,
            SsthreshFrom::Pipe => self.board.pipe(),
            SsthreshFrom::Cwnd => self.cc.cwnd(),
        }
    }

    /// The congestion signal of a loss (or a local drop) now.
    pub(super) fn congestion_event(&self, now: Time, repeat: bool) -> CongestionEvent {
        CongestionEvent {
            now,
            bytes_in_flight: self.loss_basis(),
            srtt: self.rtt.srtt().unwrap_or_default(),
            min_rtt: self.rtt.min_rtt().unwrap_or_default(),
            repeat,
        }
    }

    /// Its node's queue refused a packet (`LocalQueue::Cwr`): reduce the window as for a
    /// loss, without retransmitting, once per window of data (Linux `tcp_enter_cwr`).
    pub fn on_local_congestion(&mut self, now: Time) {
        if self.in_recovery || self.snd_una < self.cwr_until {
            return;
        }
        let ev = self.congestion_event(now, false);
        self.cc.on_congestion_event(&ev);
        self.cwr_until = self.snd_max;
    }

    /// Whether the window is in use, for RFC 7661 (always, unless `cwnd_validation`).
    pub(super) fn cwnd_limited(&self) -> bool {
        !self.cfg.cwnd_validation || self.usage.is_limited(self.cc.cwnd(), self.cc.ssthresh())
    }

    /// Chooses the next segment to send now, if any, and records it as sent.
    pub fn poll_segment(&mut self, now: Time) -> Option<Outgoing> {
        if self.frozen || self.awaiting_advice {
            return None;
        }
        if self.probe_due {
            self.probe_due = false;
            self.stats.window_probes += 1;
            if self.window_frozen() {
                self.arm_persist(now); // the next probe: nothing else will ask for it
            }
            return Some(Outgoing::Probe {
                seq: self.snd_una - 1,
            });
        }
        let room = self.send_window().saturating_sub(self.board.pipe());
        // 1. Retransmit what is deemed lost (RFC 6675 NextSeg rule 1; go-back-N after RTO).
        if self.force_retransmit || room > 0 {
            if let Some(seg) = self.board.next_lost() {
                if self.force_retransmit || room >= seg.len().min(self.cfg.mss as u64) {
                    if !self.pace_ready(now) {
                        return None;
                    }
                    self.force_retransmit = false;
                    self.board.on_resent(seg.start, now);
                    self.stats.retransmissions += 1;
                    return Some(self.emit(now, seg.start, seg.len(), true));
                }
                return None;
            }
            self.force_retransmit = false;
        }
        // 2. New data within both windows (RFC 6675 NextSeg rule 2).
        let rwnd_edge = self.snd_una.saturating_add(self.rwnd);
        if self.snd_max < self.app_end {
            let len = (self.app_end - self.snd_max).min(self.cfg.mss as u64);
            if self.snd_max + len > rwnd_edge {
                self.arm_persist(now);
                return None;
            }
            if room < len {
                self.note_usage(true);
                return None;
            }
            if !self.pace_ready(now) {
                return None;
            }
            let start = self.snd_max;
            self.snd_max += len;
            self.board.on_new_segment(start, start + len, now);
            return Some(self.emit(now, start, len, false));
        }
        if self.fin_queued && self.snd_max == self.app_end {
            if !self.pace_ready(now) {
                return None;
            }
            let start = self.snd_max;
            self.snd_max += 1;
            self.board.on_new_segment(start, start + 1, now);
            return Some(self.emit(now, start, 1, false));
        }
        None
    }

    /// Whether the pacer lets a segment the window allows leave now (asked only then, so
    /// that a sender held by its window is not woken by the pacer).
    fn pace_ready(&mut self, now: Time) -> bool {
        self.pacer.as_mut().is_none_or(|p| p.ready(now))
    }

    fn note_usage(&mut self, limited: bool) {
        let flight = self.snd_max - self.snd_una;
        self.usage
            .on_attempt(limited, flight, self.snd_una, self.snd_max);
    }

    fn emit(&mut self, now: Time, seq: u64, len: u64, retransmission: bool) -> Outgoing {
        self.stats.segments_sent += 1;
        self.cc.on_sent(now, len, self.board.pipe());
        if let Some((prr, _)) = &mut self.prr {
            prr.on_sent(len);
        }
        if let Some(p) = &mut self.pacer {
            // Paced as it leaves: payload and the 40 bytes of IP and TCP headers.
            if let Some(rate) = self.cc.pacing_rate() {
                p.on_sent_at_rate(now, len + 40, rate);
            } else {
                let window = self.cc.cwnd().max(self.snd_max - self.snd_una);
                p.on_sent(now, len + 40, window, self.cc.ssthresh(), self.rtt.srtt());
            }
        }
        if self.cfg.cwnd_validation {
            self.note_usage(self.board.pipe() >= self.send_window());
        }
        let restart = retransmission && seq == self.snd_una && self.cfg.rto_restart_on_resend;
        if self.rto_deadline.is_none() || restart {
            // RFC 6298 section 5.1; or Linux's restart (`TcpConfig::rto_restart_on_resend`).
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if self.fin_queued && seq == self.app_end {
            return Outgoing::Fin {
                seq,
                retransmission,
            };
        }
        self.stats.bytes_sent += len;
        Outgoing::Data {
            seq,
            len: len as u32,
            retransmission,
        }
    }

    /// Arms the persist timer when the peer's window stops us and nothing is in flight to
    /// bring an ACK that would reopen it (or the window froze what is: `ZeroWindow`).
    fn arm_persist(&mut self, now: Time) {
        let quiet = self.board.is_empty() || self.window_frozen();
        if quiet && self.persist_deadline.is_none() {
            let k = self.persist_backoff.min(16);
            let d = Dur(self.rtt.rto().0.saturating_mul(1 << k))
                .min(self.cfg.persist_max)
                .max(self.cfg.persist_min);
            self.persist_deadline = Some(now + d);
        }
    }

    /// A window closed to zero holds the data in flight (`ZeroWindow::Freeze`).
    fn window_frozen(&self) -> bool {
        self.rwnd == 0 && self.cfg.zero_window == ZeroWindow::Freeze
    }

    /// After an ACK: with `ZeroWindow::Freeze`, a zero window stops the retransmission
    /// timer and probes instead; an open one restarts the timer for what is in flight.
    pub(super) fn freeze_on_zero_window(&mut self, now: Time) {
        if self.cfg.zero_window != ZeroWindow::Freeze || self.board.is_empty() {
            return;
        }
        if self.rwnd == 0 {
            self.rto_deadline = None;
            self.arm_persist(now);
        } else if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    pub(super) fn on_window_update(&mut self, window: u64) {
        self.rwnd = window;
        if window > 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let pacer = self.pacer.and_then(|p| p.deadline());
        earliest(earliest(self.rto_deadline, self.persist_deadline), pacer)
    }

    /// Handles expired timers.
    pub fn handle_timeout(&mut self, now: Time) -> Expiry {
        if let Some(p) = &mut self.pacer {
            p.on_timeout(now);
        }
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.persist_deadline = None;
            self.persist_backoff += 1;
            self.probe_due = true;
        }
        if self.rto_deadline.is_none_or(|d| d > now) {
            return Expiry::None;
        }
        self.rto_deadline = None;
        if self.board.is_empty() {
            return Expiry::None; // nothing outstanding: a stale timer (RFC 6298 section 5.2)
        }
        if self.cfg.ilc.is_some() {
            self.awaiting_advice = true;
            return Expiry::Ask;
        }
        self.on_rto(now)
    }

    /// The standard response to a retransmission timeout: RFC 6298 sections 5.4-5.6 and
    /// RFC 5681 section 3.1.
    pub(super) fn on_rto(&mut self, now: Time) -> Expiry {
        self.consecutive_timeouts += 1;
        self.stats.timeouts += 1;
        if self.consecutive_timeouts > self.cfg.rto.data_retries {
            return Expiry::Abort;
        }
        let ev = self.congestion_event(now, self.consecutive_timeouts > 1);
        self.cc.on_rto(&ev);
        self.prr = None;
        self.rtt.on_timeout();
        // RFC 6298 section 5.6, armed now rather than by the retransmission itself, which
        // may wait at a full local queue (Linux re-arms it when a retransmission meets
        // local congestion, tcp_retransmit_timer).
        self.rto_deadline = Some(now + self.rtt.rto());
        self.board.mark_all_lost();
        self.in_recovery = false;
        self.inflation = 0;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.force_retransmit = true;
        Expiry::Timeout
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    pub fn pipe(&self) -> u64 {
        self.board.pipe()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn mode(&self) -> RecoveryMode {
        self.mode
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn frozen(&self) -> bool {
        self.frozen
    }
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.min(self.app_end) - 1
    }
    /// Bytes the application wrote.
    pub fn bytes_written(&self) -> u64 {
        self.app_end - 1
    }
    /// Where in sequence space (the first data byte is 1) the acknowledged, the sent and
    /// the written data end, the FIN counting as one byte once queued: each is at most
    /// the next (a driver's run-time checks verify it).
    pub fn sequence_ends(&self) -> (u64, u64, u64) {
        (
            self.snd_una,
            self.snd_max,
            self.app_end + self.fin_queued as u64,
        )
    }
}
