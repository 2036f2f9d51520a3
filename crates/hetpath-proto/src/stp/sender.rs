//! The STP sender: paced SDs, periodic POLLs, retransmission of what STATs and USTATs
//! list.

use std::collections::{BTreeSet, VecDeque};

use super::{Pdu, StpConfig};
use crate::time::{earliest, Dur, Time};

/// Counters of a sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// SD PDUs put on the wire, retransmissions included.
    pub sds_sent: u64,
    /// SD PDUs sent again after a STAT or USTAT listed them.
    pub retransmissions: u64,
    pub polls: u64,
    /// SDs released by a cumulative point (N(R) of a STAT or USTAT).
    pub released: u64,
    pub stats_received: u64,
    pub ustats_received: u64,
}

/// An SD held until a cumulative point passes it.
#[derive(Clone, Debug)]
struct Slot<T> {
    payload: T,
    len: u32,
    /// VT(PS) when last sent: a STAT answering a POLL this old or older cannot know of
    /// that copy (the SD's N(PS) in Q.2110's transmission buffer).
    ps: u64,
    /// Sent again at least once.
    retransmitted: bool,
}

/// One direction of an STP connection, at its source.
#[derive(Clone, Debug)]
pub struct Sender<T> {
    cfg: StpConfig,
    /// SDs from `base` (VT(A)) up: sent and outstanding below `next_new`, queued above.
    slots: VecDeque<Slot<T>>,
    base: u64,
    /// VT(S): the first SD not sent yet.
    next_new: u64,
    /// Listed as missing, to go before new SDs, lowest first.
    rtx: BTreeSet<u64>,
    /// VT(PS): POLLs sent.
    poll_seq: u64,
    /// Timer_POLL, running while SDs are outstanding.
    poll_due: Option<Time>,
    /// A POLL goes out at the next pacer slot.
    poll_pending: bool,
    /// The pacer: earliest time of the next PDU.
    next_send: Time,
    stats: SenderStats,
}

impl<T: Clone> Sender<T> {
    pub fn new(cfg: StpConfig) -> Self {
        Sender {
            cfg,
            slots: VecDeque::new(),
            base: 0,
            next_new: 0,
            rtx: BTreeSet::new(),
            poll_seq: 0,
            poll_due: None,
            poll_pending: false,
            next_send: Time::ZERO,
            stats: SenderStats::default(),
        }
    }

    /// Queues a payload of `len` bytes for sending and returns its sequence number. It is
    /// not sent while the window is full, so a caller should ask `can_push` first.
    pub fn push(&mut self, payload: T, len: u32) -> u64 {
        let seq = self.base + self.slots.len() as u64;
        self.slots.push_back(Slot {
            payload,
            len,
            ps: 0,
            retransmitted: false,
        });
        seq
    }

    /// Whether the window has room for one more SD, counting queued and outstanding ones.
    pub fn can_push(&self) -> bool {
        (self.slots.len() as u64) < self.cfg.window
    }

    /// A STAT or USTAT from the receiver; other PDUs are ignored.
    pub fn handle_pdu(&mut self, _now: Time, pdu: Pdu<T>) {
        match pdu {
            Pdu::Stat {
                poll_seq,
                cum,
                gaps,
            } => {
                self.stats.stats_received += 1;
                self.release(cum);
                // Q.2110: an SD sent (again) after POLL `poll_seq` left is not in the
                // STAT's picture, so it is not retransmitted on this STAT.
                for (start, end) in gaps {
                    self.relist(start, end, |slot| slot.ps < poll_seq);
                }
            }
            Pdu::Ustat {
                cum,
                gap: (start, end),
            } => {
                self.stats.ustats_received += 1;
                self.release(cum);
                // A USTAT names numbers above every earlier report, so each is sent again
                // once on a USTAT; a later STAT catches a lost retransmission.
                self.relist(start, end, |slot| !slot.retransmitted);
            }
            Pdu::Sd { .. } | Pdu::Poll { .. } => {}
        }
    }

    /// The next PDU, if the pacer allows one at `now`: a due POLL, then retransmissions,
    /// then new SDs within the window.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Pdu<T>> {
        self.handle_timeout(now);
        if now < self.next_send {
            return None;
        }
        if self.poll_pending {
            self.poll_pending = false;
            if self.in_flight() > 0 {
                return Some(self.send_poll(now));
            }
        }
        let (seq, again) = match self.rtx.pop_first() {
            Some(seq) => (seq, true),
            None if self.new_allowed() => {
                self.next_new += 1;
                (self.next_new - 1, false)
            }
            None => return None,
        };
        let ps = self.poll_seq;
        let slot = &mut self.slots[(seq - self.base) as usize];
        slot.ps = ps;
        slot.retransmitted |= again;
        let pdu = Pdu::Sd {
            seq,
            payload: slot.payload.clone(),
            len: slot.len,
        };
        self.stats.sds_sent += 1;
        self.stats.retransmissions += again as u64;
        self.poll_due.get_or_insert(now + self.cfg.poll_interval);
        if self.cfg.tail_poll && self.rtx.is_empty() && !self.new_allowed() {
            self.poll_pending = true;
        }
        self.pace(now, &pdu);
        Some(pdu)
    }

    /// The next time `poll_transmit` may have something: the pacer's next slot when data
    /// or a POLL waits, else Timer_POLL's expiry.
    pub fn poll_timeout(&self) -> Option<Time> {
        let ready = self.poll_pending || !self.rtx.is_empty() || self.new_allowed();
        let now = ready.then_some(self.next_send);
        earliest(now, self.poll_due.map(|t| t.max(self.next_send)))
    }

    /// Timer_POLL's expiry makes a POLL pending; early calls do nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.poll_due.is_some_and(|t| t <= now) {
            self.poll_due = None;
            self.poll_pending = true;
        }
    }

    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// SDs sent and not yet released.
    pub fn in_flight(&self) -> usize {
        (self.next_new - self.base) as usize
    }

    /// SDs pushed and not yet sent once.
    pub fn queued(&self) -> usize {
        self.slots.len() - self.in_flight()
    }

    fn new_allowed(&self) -> bool {
        self.next_new < self.base + self.slots.len() as u64
            && self.next_new < self.base.saturating_add(self.cfg.window)
    }

    fn send_poll(&mut self, now: Time) -> Pdu<T> {
        self.poll_seq += 1;
        self.stats.polls += 1;
        self.poll_due = Some(now + self.cfg.poll_interval);
        let pdu = Pdu::Poll {
            poll_seq: self.poll_seq,
            next: self.next_new,
        };
        self.pace(now, &pdu);
        pdu
    }

    /// Counts the PDU's bytes against the rate: the next one waits for their
    /// serialisation. An idle pacer earns no credit, so no window of sends exceeds the rate.
    fn pace(&mut self, now: Time, pdu: &Pdu<T>) {
        let bytes = pdu.wire_len() as u64 + self.cfg.overhead as u64;
        self.next_send = now.max(self.next_send) + Dur::serialization(bytes, self.cfg.rate_bps);
    }

    /// Releases every SD below `cum` (a stale, lower `cum` changes nothing).
    fn release(&mut self, cum: u64) {
        let cum = cum.min(self.next_new);
        if cum <= self.base {
            return;
        }
        self.slots.drain(..(cum - self.base) as usize);
        self.stats.released += cum - self.base;
        self.base = cum;
        self.rtx = self.rtx.split_off(&cum);
        if self.in_flight() == 0 {
            self.poll_due = None;
            self.poll_pending = false;
        }
    }

    /// Queues for retransmission the SDs of `[start, end)` still held and sent, that
    /// `fresh` says the report is about.
    fn relist(&mut self, start: u64, end: u64, fresh: impl Fn(&Slot<T>) -> bool) {
        for seq in start.max(self.base)..end.min(self.next_new) {
            if fresh(&self.slots[(seq - self.base) as usize]) {
                self.rtx.insert(seq);
            }
        }
    }
}
