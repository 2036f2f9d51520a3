//! ILC-TCP's FREEZE and RESTORE on the sender (seed 002 section 3.3.4, Figure 6). When a
//! retransmission timeout is answered with FREEZE, TCP "does not Slow Start, does not
//! reduce its congestion window and does not back off its retransmission timer"; it
//! sends nothing until RESTORE, then "retransmit[s] the first unacknowledged segment"
//! and follows normal TCP behaviour with the window and timer it had.

use super::sender::{Expiry, Sender};
use crate::crosslayer::Advice;
use crate::time::Time;

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
    /// window and RTO it had. With `go_back_n` (the default, see `RestoreMode`) everything
    /// outstanding counts as lost in the outage and is resent in order within the window,
    /// as BSD's and ns-2's "snd_nxt = snd_una" after a timeout does; otherwise only the
    /// first unacknowledged segment is resent and the rest stays in flight for normal
    /// recovery to sort out. Returns whether the sender was frozen.
    pub fn restore(&mut self, go_back_n: bool) -> bool {
        if !std::mem::take(&mut self.frozen) {
            return false;
        }
        let Some(first) = self.board.first().map(|s| s.start) else {
            return true;
        };
        if go_back_n {
            self.board.mark_all_lost();
            // Duplicate ACKs for data the outage did not lose are no new loss episode
            // (RFC 6582 section 3.2 step 1).
            self.recover = self.snd_max;
            self.dupacks = 0;
            self.force_retransmit = true;
        } else if self.board.mark_lost(first, false) {
            self.force_retransmit = true;
        }
        self.rto_deadline = None;
        true
    }
}
