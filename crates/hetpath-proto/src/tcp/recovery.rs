//! ACK processing and loss recovery for `Sender`: duplicate ACK counting, fast
//! retransmit, Reno and NewReno fast recovery (RFC 5681 section 3.2, RFC 6582), Tahoe's
//! go-back-N, and SACK-based recovery (RFC 6675).

use super::config::{AbcCounts, ExitCredit, LostRetransmit, NewRenoTimer, SackResend};
use super::prr::Prr;
use super::sender::{RecoveryMode, Sender};
use crate::cc::AckSample;
use crate::packet::SackList;
use crate::time::Dur;
use crate::time::Time;

/// The parts of an arriving segment that ACK processing reads.
#[derive(Clone, Copy, Debug)]
pub struct AckInput<'a> {
    pub ack: u64,
    pub window: u64,
    pub sack: &'a SackList,
    /// The segment carried data, SYN or FIN (then it is not a duplicate ACK).
    pub carries_data: bool,
    /// The RTT its timestamp echo measures (RFC 7323 section 4), if timestamps are on.
    pub echoed_rtt: Option<Dur>,
}

/// What an ACK did, for events and traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub newly_acked: u64,
    pub entered_recovery: bool,
}

impl Sender {
    pub fn on_ack(&mut self, now: Time, a: AckInput) -> AckOutcome {
        let mut out = AckOutcome::default();
        if a.ack > self.snd_max || a.ack < self.snd_una {
            return out; // acknowledges unsent data, or is old: ignore (RFC 9293 3.10.7.4)
        }
        let old_window = self.rwnd;
        let (una0, sacked0) = (self.snd_una, self.board.sacked_bytes());
        self.on_window_update(a.window);
        let newly_sacked = if self.mode == RecoveryMode::Sack || self.mode == RecoveryMode::Tahoe {
            self.board.on_sack(a.sack.iter())
        } else {
            0
        };
        if a.ack > self.snd_una {
            out.newly_acked = self.on_new_ack(now, a.ack, a.echoed_rtt, una0 + sacked0);
        } else if !a.carries_data
            && !self.board.is_empty()
            && self.is_dup_ack(a, old_window, newly_sacked)
        {
            out.entered_recovery = self.on_dup_ack(now);
        }
        if self.mode == RecoveryMode::Sack && self.in_recovery {
            self.board
                .mark_lost_by_sack(self.cfg.dupthresh, self.cfg.mss);
        }
        if self.mode == RecoveryMode::Sack && self.cfg.lost_retransmit == LostRetransmit::Rack {
            self.board.mark_lost_retransmissions();
        }
        if let Some((prr, window)) = &mut self.prr {
            // RFC 6937 DeliveredData: the change in SND.UNA plus the change in SACKed bytes.
            let delivered =
                (self.snd_una - una0 + self.board.sacked_bytes()).saturating_sub(sacked0);
            let (pipe, ssthresh) = (self.board.pipe(), self.cc.ssthresh());
            *window = prr.on_ack(delivered, pipe, ssthresh, self.cfg.mss as u64);
        }
        self.freeze_on_zero_window(now);
        out
    }

    /// What an ACK counting `bytes` gives the controller to grow by: min(bytes, L × MSS)
    /// with ABC (RFC 3465 section 2.2), one MSS per ACK without.
    fn growth_credit(&self, bytes: u64) -> u64 {
        let mss = self.cfg.mss as u64;
        self.cfg
            .abc_limit
            .map_or(mss, |l| bytes.min(l as u64 * mss))
    }

    /// `known0`: SND.UNA plus the SACKed bytes before this ACK (for DeliveredData).
    fn on_new_ack(&mut self, now: Time, ack: u64, echoed_rtt: Option<Dur>, known0: u64) -> u64 {
        let acked = self.board.on_cumulative_ack(ack);
        let counted = match self.cfg.abc_counts {
            AbcCounts::Acked => acked.bytes,
            AbcCounts::Delivered => (ack + self.board.sacked_bytes()).saturating_sub(known0),
        };
        self.snd_una = ack;
        // The send time of what was acknowledged, if Karn's rule allows; else the
        // timestamp echo, which stays valid for retransmitted data (RFC 7323 section 4;
        // Linux `tcp_ack_update_rtt` prefers the former the same way).
        let rtt = acked.rtt_sent_at.map(|t| now.since(t)).or(echoed_rtt);
        if let Some(r) = rtt {
            self.rtt.on_sample(r, self.cc.cwnd() / self.cfg.mss as u64);
            // RFC 6298 section 5 (Karn): a backed-off RTO is kept until a new RTT
            // measurement; collapsing it on any new ACK lets a path whose RTT exceeds the
            // initial 1 s RTO time out spuriously forever, never measuring it.
            self.rtt.reset_backoff();
        }
        self.consecutive_timeouts = 0;
        self.dupacks = 0;
        let mss = self.cfg.mss as u64;
        let sample = AckSample {
            now,
            bytes_acked: acked.bytes,
            credit: self.growth_credit(counted),
            rtt,
            srtt: self.rtt.srtt().unwrap_or_default(),
            min_rtt: self.rtt.min_rtt().unwrap_or_default(),
            bytes_in_flight: self.board.pipe(),
            cwnd_limited: self.cwnd_limited(),
            // Linux TCP_CA_Open: past `recover` (high_seq) and nothing SACKed (Disorder).
            open: ack >= self.recover && self.board.sacked_bytes() == 0,
        };
        // RFC 6582 section 4: the Impatient variant restarts the timer only on the first
        // partial ACK of an episode.
        let mut restart_timer = true;
        if !self.in_recovery {
            self.cc.on_ack(&sample);
        } else if ack >= self.recover || self.mode == RecoveryMode::Reno {
            // Full ACK (RFC 6582 step 3), or any new ACK for Reno (RFC 5681 step 6).
            self.cc.on_recovery_ack(&sample);
            self.in_recovery = false;
            self.inflation = 0;
            self.prr = None;
            self.cc.on_recovery_exit(now);
            if self.cfg.exit_credit == ExitCredit::Acked {
                let credit = self.growth_credit(acked.bytes);
                self.cc.on_ack(&AckSample { credit, ..sample });
            }
        } else {
            // Partial ACK (RFC 6582 section 3.2 step 5): the next hole is lost; deflate by
            // the amount acked and add back one segment. With SACK the hole may already
            // have been resent by RFC 6675 NextSeg; then nothing is forced, and with
            // `SackResend::Lost` nothing is marked: IsLost alone decides.
            self.cc.on_recovery_ack(&sample);
            let sack = self.mode == RecoveryMode::Sack;
            let marks = !sack || self.cfg.sack_resend == SackResend::Head;
            if marks && self.board.mark_lost(ack, sack) {
                self.force_retransmit = true;
            }
            if self.mode == RecoveryMode::NewReno {
                self.inflation = (self.inflation + if acked.bytes >= mss { mss } else { 0 })
                    .saturating_sub(acked.bytes);
                restart_timer =
                    !self.partial_acked || self.cfg.newreno_timer == NewRenoTimer::SlowButSteady;
                self.partial_acked = true;
            }
        }
        // RFC 6298 sections 5.2 and 5.3.
        if restart_timer || self.rto_deadline.is_none() {
            self.rto_deadline = (!self.board.is_empty()).then(|| now + self.rtt.rto());
        }
        acked.bytes
    }

    /// RFC 5681 section 2 "duplicate acknowledgment": same ACK and window. With SACK,
    /// RFC 6675 section 2 "DupAck": the ACK must SACK octets not SACKed before, so the
    /// ACKs a receiver sends for duplicate segments (after a spurious timeout, say) are
    /// not mistaken for signs of loss.
    fn is_dup_ack(&self, a: AckInput, old_window: u64, newly_sacked: u64) -> bool {
        match self.mode {
            RecoveryMode::Sack => newly_sacked > 0,
            _ => newly_sacked > 0 || a.window == old_window,
        }
    }

    /// Counts a duplicate ACK; returns whether it started a loss episode.
    fn on_dup_ack(&mut self, now: Time) -> bool {
        self.dupacks += 1;
        self.cc.on_dup_ack(now, self.cfg.mss);
        if self.in_recovery {
            if matches!(self.mode, RecoveryMode::Reno | RecoveryMode::NewReno) {
                self.inflation += self.cfg.mss as u64; // RFC 6582 step 4
            }
            return false;
        }
        let sack_says_lost = self.mode == RecoveryMode::Sack
            && self
                .board
                .mark_lost_by_sack(self.cfg.dupthresh, self.cfg.mss);
        if self.dupacks < self.cfg.dupthresh && !sack_says_lost {
            return false;
        }
        // RFC 6582 section 3.2 step 1: no new episode unless the cumulative ACK covers more
        // than `recover`, the highest sequence number sent when the last one began (here
        // exclusive: snd_max then). Duplicate ACKs for go-back-N's needless resends thus
        // start no episode. Reno, as published, has no such guard; SACK recovery follows
        // RFC 6675 (below).
        let guard = match self.mode {
            RecoveryMode::Reno => false,
            RecoveryMode::Sack => self.snd_una < self.recover,
            RecoveryMode::Tahoe | RecoveryMode::NewReno => self.snd_una <= self.recover,
        };
        if guard {
            return false;
        }
        self.start_loss_episode(now);
        true
    }

    fn start_loss_episode(&mut self, now: Time) {
        let ev = self.congestion_event(now, false);
        self.cc.on_congestion_event(&ev);
        self.recover = self.snd_max;
        self.partial_acked = false;
        self.stats.fast_retransmits += 1;
        self.force_retransmit = true;
        match self.mode {
            RecoveryMode::Tahoe => {
                // Go back N from the first unacknowledged segment in slow start.
                self.board.mark_all_lost();
            }
            RecoveryMode::Reno | RecoveryMode::NewReno => {
                self.board.mark_lost(self.snd_una, false);
                self.in_recovery = true;
                self.inflation = self.cfg.dupthresh as u64 * self.cfg.mss as u64;
            }
            RecoveryMode::Sack => {
                // RFC 6675 section 5 steps 4.1-4.3 (with `SackResend::Lost`, not again if
                // its retransmission is in flight).
                let unless_resent = self.cfg.sack_resend == SackResend::Lost;
                self.board.mark_lost(self.snd_una, unless_resent);
                self.in_recovery = true;
                let flight = self.snd_max - self.snd_una;
                self.prr = Prr::start(self.cfg.recovery, flight).map(|p| (p, 0));
            }
        }
    }
}
