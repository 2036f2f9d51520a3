//! ILC-TCP's FREEZE and RESTORE on the sender (seed 002 section 3.3.4, Figure 6): the
//! whole of the paper's change to TCP, kept here so that the base connection holds none
//! of it. With `TcpConfig::ilc` set, a retransmission timeout asks the node's State
//! Manager WHAT_SHOULD_TCP_DO (`Event::WhatShouldTcpDo`) instead of acting. When the
//! answer is FREEZE, TCP "does not Slow Start, does not reduce its congestion window and
//! does not back off its retransmission timer"; it sends nothing until RESTORE, then
//! "retransmit[s] the first unacknowledged segment" and follows normal TCP behaviour with
//! the window and timer it had.

use super::connection::{Connection, Event};
use super::sender::{Expiry, Sender};
use crate::crosslayer::Advice;
use crate::time::Time;

/// What RESTORE resends (docs/model-notes.md, "ILC-TCP").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreMode {
    /// Everything outstanding, in order within the window, as BSD's and ns-2's
    /// "snd_nxt = snd_una" after a timeout does (the default).
    GoBackN,
    /// The first unacknowledged segment alone; the rest stays in flight for normal
    /// recovery to sort out.
    FirstSegment,
}

impl Sender {
    /// The State Manager's answer to the question a timeout raised (`Expiry::Ask`).
    pub fn on_advice(&mut self, now: Time, advice: Advice) -> Expiry {
        if !std::mem::take(&mut self.awaiting_advice) {
            return Expiry::None;
        }
        match advice {
            Advice::ProceedNormally => self.on_rto(now),
            Advice::Freeze => {
                self.frozen = true;
                self.stats.freezes += 1;
                Expiry::None
            }
        }
    }

    /// RESTORE: unfreezes and resends from the first unacknowledged segment with the
    /// window and RTO it had (see `RestoreMode`). Returns whether the sender was frozen.
    pub fn restore(&mut self, mode: RestoreMode) -> bool {
        if !std::mem::take(&mut self.frozen) {
            return false;
        }
        let Some(first) = self.board.first().map(|s| s.start) else {
            return true;
        };
        match mode {
            RestoreMode::GoBackN => {
                self.board.mark_all_lost();
                // Duplicate ACKs for data the outage did not lose are no new loss episode
                // (RFC 6582 section 3.2 step 1).
                self.recover = self.snd_max;
                self.dupacks = 0;
                self.force_retransmit = true;
            }
            RestoreMode::FirstSegment => {
                if self.board.mark_lost(first, false) {
                    self.force_retransmit = true;
                }
            }
        }
        self.rto_deadline = None;
        true
    }
}

impl Connection {
    /// The State Manager's answer to `Event::WhatShouldTcpDo`; ignored if none is pending.
    pub fn handle_advice(&mut self, now: Time, advice: Advice) {
        if !self.state().is_synchronized() {
            return;
        }
        let frozen = self.sender.frozen();
        let e = self.sender.on_advice(now, advice);
        self.on_expiry(e);
        if !frozen && self.sender.frozen() {
            self.events.push_back(Event::Frozen);
        }
    }

    /// RESTORE from the State Manager; ignored unless frozen.
    pub fn handle_restore(&mut self) {
        let mode = self.cfg.ilc.unwrap_or(RestoreMode::GoBackN);
        if self.sender.restore(mode) {
            self.events.push_back(Event::Restored);
        }
    }
}
