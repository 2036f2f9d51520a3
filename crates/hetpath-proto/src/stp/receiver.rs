//! The STP receiver: in-order delivery, a USTAT per newly detected gap, a STAT per POLL.

use std::collections::{BTreeMap, VecDeque};

use super::{Pdu, MAX_STAT_GAPS};
use crate::runs::RunSet;
use crate::time::Time;

/// Counters of a receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// STAT PDUs sent (a long gap list takes several: `MAX_STAT_GAPS`).
    pub stats_sent: u64,
    pub ustats_sent: u64,
    /// SDs that arrived again after being held or delivered, and were discarded.
    pub duplicates: u64,
    /// Payloads handed up.
    pub delivered: u64,
}

/// One direction of an STP connection, at its sink.
#[derive(Clone, Debug)]
pub struct Receiver<T> {
    /// VR(R): the next SD in order.
    next: u64,
    /// VR(H): one past the highest SD seen or announced by a POLL's N(S).
    high: u64,
    /// SDs held above a gap, and the runs they form (the complement is the gap list).
    held: BTreeMap<u64, T>,
    runs: RunSet,
    ready: VecDeque<T>,
    out: VecDeque<Pdu<T>>,
    stats: ReceiverStats,
}

impl<T> Default for Receiver<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Receiver<T> {
    pub fn new() -> Self {
        Receiver {
            next: 0,
            high: 0,
            held: BTreeMap::new(),
            runs: RunSet::default(),
            ready: VecDeque::new(),
            out: VecDeque::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// An SD or a POLL from the sender; other PDUs are ignored.
    pub fn handle_pdu(&mut self, _now: Time, pdu: Pdu<T>) {
        match pdu {
            Pdu::Sd { seq, payload, .. } => self.on_sd(seq, payload),
            Pdu::Poll { poll_seq, next } => self.on_poll(poll_seq, next),
            Pdu::Stat { .. } | Pdu::Ustat { .. } => {}
        }
    }

    /// The next payload in sequence order.
    pub fn poll_deliver(&mut self) -> Option<T> {
        self.ready.pop_front()
    }

    /// The next STAT or USTAT to send, in the order they arose.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Pdu<T>> {
        self.out.pop_front()
    }

    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// VR(R): every SD below it has been handed up (or is waiting in `poll_deliver`).
    pub fn cum(&self) -> u64 {
        self.next
    }

    fn on_sd(&mut self, seq: u64, payload: T) {
        if seq < self.next || self.runs.contains(seq) {
            self.stats.duplicates += 1;
            return;
        }
        // Q.2110: an SD above VR(H) reveals the gap [VR(H), N(S)), reported at once.
        if seq > self.high {
            self.stats.ustats_sent += 1;
            self.out.push_back(Pdu::Ustat {
                cum: self.next,
                gap: (self.high, seq),
            });
        }
        self.high = self.high.max(seq + 1);
        if seq > self.next {
            self.held.insert(seq, payload);
            self.runs.insert(seq);
            return;
        }
        self.ready.push_back(payload);
        self.next += 1;
        if let Some((start, end)) = self.runs.first().filter(|&(s, _)| s == self.next) {
            self.runs.pop_first();
            for seq in start..end {
                self.ready.extend(self.held.remove(&seq));
            }
            self.next = end;
        }
        self.stats.delivered = self.next;
    }

    /// Q.2110: a POLL's N(S) above VR(H) means the SDs up to it were sent, so the ones not
    /// seen are missing (a lost tail shows up here). The STAT lists the gaps below N(S).
    fn on_poll(&mut self, poll_seq: u64, next: u64) {
        self.high = self.high.max(next);
        let mut gaps = Vec::new();
        let mut from = self.next;
        for (start, end) in self.runs.iter() {
            if start >= next {
                break;
            }
            gaps.push((from, start));
            from = end;
        }
        if from < next {
            gaps.push((from, next));
        }
        let cum = self.next;
        let mut chunks = gaps.chunks(MAX_STAT_GAPS).peekable();
        if chunks.peek().is_none() {
            self.push_stat(poll_seq, cum, Vec::new());
        }
        for chunk in chunks {
            self.push_stat(poll_seq, cum, chunk.to_vec());
        }
    }

    fn push_stat(&mut self, poll_seq: u64, cum: u64, gaps: Vec<(u64, u64)>) {
        self.stats.stats_sent += 1;
        self.out.push_back(Pdu::Stat {
            poll_seq,
            cum,
            gaps,
        });
    }
}
