//! The receiving half of one ESW link direction with ARQ on (seed 001 section IV), and
//! `Receiver`, which picks it or the ARQ-off `UnreliableReceiver` from `EswConfig::arq`.
//!
//! Cells above the next expected one (`cumulative`) wait in the receiver window; cells
//! are reassembled in sequence order and a complete SDU goes up as soon as every cell
//! below it has been handed on: reliable, in-order delivery.
//!
//! ESW-ACK cells (section IV). One is due when
//! - a complete SDU has been delivered to the higher layer, or
//! - Tack (636 ms) has passed since the last ESW-ACK and there is something to
//!   acknowledge: a data cell (new or duplicate) arrived since that ACK, or a gap still
//!   holds cells in the window (so the gap is reported again every Tack even if an ACK
//!   was lost). Our reading for an idle receiver: with nothing new and no gap it sends
//!   nothing, and the Tack clock restarts at the first cell after such a pause (the ACK
//!   is due Tack after the later of the last ACK and that cell), rather than answering
//!   the first cell after a long silence at once.
//!
//! An ACK codes the cumulative point and the runs of queued cells above it; with more
//! than `MAX_BLOCKS` runs it codes the 14 lowest, those nearest the head of line that
//! block delivery. The rest are reported once the lower gaps are filled.
//!
//! Giving up: the sender drops an SDU on the data-link timeout and then says so through
//! the `floor` of its later cells (`DataCell::floor`): every missing cell below it is
//! lost for good, and the SDUs it belongs to are discarded. If the sender has nothing
//! more to send, the receiver gives up itself on a gap that has blocked queued cells for
//! `dl_timeout`: the first cell above the gap left the sender after the missing one did,
//! and arrived at least one delay later, so the sender's own data-link timeout has run
//! out and its last copy had time to arrive; waiting longer cannot fill the gap.

use super::cell::{AckBlock, AckCell, DataCell, MAX_BLOCKS};
use super::config::EswConfig;
use super::unreliable::UnreliableReceiver;
use super::EswEvent;
use crate::runs::RunSet;
use crate::time::{earliest, Dur, Time};
use std::collections::{BTreeMap, VecDeque};

/// The receiver's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data cells that arrived, duplicates included.
    pub cells_received: u64,
    /// Cells already received (or given up on) that arrived again.
    pub duplicate_cells: u64,
    /// Cells ignored as out of the receiver window or inconsistent.
    pub cells_ignored: u64,
    pub acks_sent: u64,
    pub sdus_delivered: u64,
    pub bytes_delivered: u64,
    /// Incomplete SDUs thrown away (`EswEvent::Discarded`).
    pub sdus_discarded: u64,
}

/// What is kept of a queued cell.
#[derive(Clone, Copy, Debug)]
struct Frag {
    sdu: u64,
    index: u32,
    last: bool,
    payload: u32,
}

/// The SDU being reassembled from in-order cells.
#[derive(Clone, Copy, Debug)]
struct Partial {
    id: u64,
    next_index: u32,
    len: u32,
}

/// ARQ receiver (module doc).
#[derive(Clone, Debug)]
pub struct ArqReceiver {
    tack: Dur,
    dl_timeout: Dur,
    /// Cells at or beyond `cumulative + window` are ignored. The sender holds at most
    /// `tx_window_bytes` of SDUs and every cell carries at least one byte, so no cell it
    /// may send lies that far ahead; the bound only protects against a broken peer.
    window: u64,
    cumulative: u64,
    queued: BTreeMap<u64, Frag>,
    runs: RunSet,
    partial: Option<Partial>,
    last_discarded: Option<u64>,
    last_ack_at: Option<Time>,
    /// Something to acknowledge since then (module doc).
    pending_since: Option<Time>,
    /// A delivery made an ACK due at that time.
    ack_due_at: Option<Time>,
    /// Since when the current gap at `cumulative` blocks queued cells.
    hole_since: Option<Time>,
    events: VecDeque<EswEvent>,
    stats: ReceiverStats,
}

impl ArqReceiver {
    pub fn new(cfg: &EswConfig) -> ArqReceiver {
        ArqReceiver {
            tack: cfg.tack,
            dl_timeout: cfg.dl_timeout,
            window: cfg.tx_window_bytes.max(1),
            cumulative: 0,
            queued: BTreeMap::new(),
            runs: RunSet::default(),
            partial: None,
            last_discarded: None,
            last_ack_at: None,
            pending_since: None,
            ack_due_at: None,
            hole_since: None,
            events: VecDeque::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// The next in-order cell expected.
    pub fn cumulative(&self) -> u64 {
        self.cumulative
    }

    /// Cells queued above a gap.
    pub fn queued_cells(&self) -> usize {
        self.queued.len()
    }

    pub fn handle_cell(&mut self, now: Time, cell: &DataCell) {
        self.stats.cells_received += 1;
        self.pending_since.get_or_insert(now);
        let before = self.cumulative;
        let seq = cell.seq;
        if seq < self.cumulative || self.queued.contains_key(&seq) {
            self.stats.duplicate_cells += 1;
        } else if seq - self.cumulative >= self.window || seq == u64::MAX {
            self.stats.cells_ignored += 1;
        } else {
            self.queued.insert(
                seq,
                Frag {
                    sdu: cell.sdu,
                    index: cell.index,
                    last: cell.last,
                    payload: cell.payload,
                },
            );
            self.runs.insert(seq);
        }
        if cell.floor > self.cumulative {
            self.skip_to(now, cell.floor);
        }
        self.advance(now);
        self.update_hole(now, before);
    }

    /// The ESW-ACK cell for this opportunity of the reverse direction, if one is due.
    pub fn poll_ack(&mut self, now: Time) -> Option<AckCell> {
        let due = self.ack_due_at.is_some_and(|t| t <= now)
            || self.periodic_deadline().is_some_and(|t| t <= now);
        if !due {
            return None;
        }
        let mut ack = AckCell::new(self.cumulative);
        for (start, end) in self.runs.iter().take(MAX_BLOCKS) {
            // A run longer than u32::MAX cells cannot occur (window bound); if it did,
            // coding less of it only leaves cells unacknowledged.
            let len = u32::try_from(end - start).unwrap_or(u32::MAX);
            ack.push(AckBlock { left: start, len });
        }
        self.last_ack_at = Some(now);
        self.ack_due_at = None;
        self.pending_since = (!self.queued.is_empty()).then_some(now);
        self.stats.acks_sent += 1;
        Some(ack)
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let hole = self.hole_since.map(|t| t + self.dl_timeout);
        earliest(earliest(self.ack_due_at, self.periodic_deadline()), hole)
    }

    /// Gives up on a gap that has blocked delivery for `dl_timeout` (module doc). ACKs
    /// that fall due are returned by `poll_ack`.
    pub fn handle_timeout(&mut self, now: Time) {
        let Some(since) = self.hole_since else { return };
        if now < since + self.dl_timeout {
            return;
        }
        let before = self.cumulative;
        if let Some((start, _)) = self.runs.first() {
            self.skip_to(now, start);
        }
        self.advance(now);
        self.update_hole(now, before);
    }

    pub fn poll_event(&mut self) -> Option<EswEvent> {
        self.events.pop_front()
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    fn periodic_deadline(&self) -> Option<Time> {
        let p = self.pending_since?;
        Some(self.last_ack_at.map_or(p, |a| a.max(p)) + self.tack)
    }

    /// Hands on the run of queued cells that starts at `cumulative`, if any.
    fn advance(&mut self, now: Time) {
        while let Some((start, end)) = self.runs.first() {
            if start != self.cumulative {
                break;
            }
            self.consume_first_run(now, end);
        }
    }

    fn consume_first_run(&mut self, now: Time, end: u64) {
        self.runs.pop_first();
        while let Some(entry) = self.queued.first_entry() {
            if *entry.key() >= end {
                break;
            }
            let f = entry.remove();
            self.feed(now, f);
        }
        self.cumulative = end;
    }

    /// Treats every missing cell below `point` as lost for good.
    fn skip_to(&mut self, now: Time, point: u64) {
        while self.cumulative < point {
            match self.runs.first() {
                Some((start, end)) if start == self.cumulative => self.consume_first_run(now, end),
                next => {
                    self.break_partial();
                    self.cumulative = next.map_or(point, |(start, _)| start.min(point));
                }
            }
        }
    }

    fn update_hole(&mut self, now: Time, before: u64) {
        if self.queued.is_empty() {
            self.hole_since = None;
        } else if self.hole_since.is_none() || self.cumulative != before {
            self.hole_since = Some(now);
        }
    }

    /// The in-order reassembly of one cell.
    fn feed(&mut self, now: Time, f: Frag) {
        let continues = self
            .partial
            .is_some_and(|p| p.id == f.sdu && p.next_index == f.index);
        if !continues {
            self.break_partial();
            if f.index != 0 {
                // The rest of an SDU whose earlier cells were given up on.
                self.discard(f.sdu);
                return;
            }
            self.partial = Some(Partial {
                id: f.sdu,
                next_index: 0,
                len: 0,
            });
        }
        let Some(p) = self.partial.as_mut() else {
            return;
        };
        p.next_index += 1;
        p.len = p.len.saturating_add(f.payload);
        if f.last {
            let (id, len) = (p.id, p.len);
            self.partial = None;
            self.stats.sdus_delivered += 1;
            self.stats.bytes_delivered += len as u64;
            self.events.push_back(EswEvent::Delivered { id, len });
            self.ack_due_at.get_or_insert(now);
        }
    }

    fn break_partial(&mut self) {
        if let Some(p) = self.partial.take() {
            self.discard(p.id);
        }
    }

    fn discard(&mut self, id: u64) {
        if self.last_discarded != Some(id) {
            self.last_discarded = Some(id);
            self.stats.sdus_discarded += 1;
            self.events.push_back(EswEvent::Discarded { id });
        }
    }
}

/// The receiving half of one direction of an ESW link, ARQ on or off.
#[derive(Clone, Debug)]
pub enum Receiver {
    Arq(ArqReceiver),
    Unreliable(UnreliableReceiver),
}

impl Receiver {
    pub fn new(cfg: &EswConfig) -> Receiver {
        if cfg.arq {
            Receiver::Arq(ArqReceiver::new(cfg))
        } else {
            Receiver::Unreliable(UnreliableReceiver::new(cfg))
        }
    }

    /// A data cell arrived.
    pub fn handle_cell(&mut self, now: Time, cell: &DataCell) {
        match self {
            Receiver::Arq(r) => r.handle_cell(now, cell),
            Receiver::Unreliable(r) => r.handle_cell(now, cell),
        }
    }

    /// The ESW-ACK cell to send at this opportunity of the reverse direction, if one is
    /// due; never with ARQ off.
    pub fn poll_ack(&mut self, now: Time) -> Option<AckCell> {
        match self {
            Receiver::Arq(r) => r.poll_ack(now),
            Receiver::Unreliable(_) => None,
        }
    }

    /// The earliest time an ACK falls due or `handle_timeout` has work.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Receiver::Arq(r) => r.poll_timeout(),
            Receiver::Unreliable(r) => r.poll_timeout(),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        match self {
            Receiver::Arq(r) => r.handle_timeout(now),
            Receiver::Unreliable(r) => r.handle_timeout(now),
        }
    }

    pub fn poll_event(&mut self) -> Option<EswEvent> {
        match self {
            Receiver::Arq(r) => r.poll_event(),
            Receiver::Unreliable(r) => r.poll_event(),
        }
    }

    pub fn stats(&self) -> &ReceiverStats {
        match self {
            Receiver::Arq(r) => r.stats(),
            Receiver::Unreliable(r) => r.stats(),
        }
    }
}
