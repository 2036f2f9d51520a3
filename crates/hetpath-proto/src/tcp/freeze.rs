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

    /// RESTORE: unfreezes and queues the first unacknowledged segment for retransmission;
    /// the other segments in flight stay in flight (if they were lost, normal recovery
    /// finds out). The timer restarts at the unbacked-off RTO when that segment leaves.
    /// Returns whether the sender was frozen.
    pub fn restore(&mut self) -> bool {
        if !std::mem::take(&mut self.frozen) {
            return false;
        }
        if let Some(first) = self.board.first().map(|s| s.start) {
            if self.board.mark_lost(first, false) {
                self.force_retransmit = true;
            }
            self.rto_deadline = None;
        }
        true
    }
}
