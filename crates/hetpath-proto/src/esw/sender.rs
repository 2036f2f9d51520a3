//! The sending half of one ESW link direction: SDU queue, fragmentation into cells, and
//! the Selective-Repeat ARQ's retransmissions (seed 001 section IV, Table I).
//!
//! The caller offers SDUs (`enqueue`, refused when the Table I transmit window is full:
//! back-pressure) and asks `poll_cell` once per transmission opportunity. Cells reported
//! missing go first, lowest sequence number first, then new cells in SDU order.
//!
//! Loss detection, with ARQ on:
//! - selective repeat (section IV): an ESW-ACK's blocks show which cells above its
//!   cumulative point arrived; a cell in a gap below a coded block is sent again, once:
//!   only if its last transmission went out before the last transmission of a cell that
//!   has since been acknowledged (on a FIFO link that copy is then lost; the ordering test
//!   of RACK, RFC 8985 section 6.2, on transmission order). A repeated ESW-ACK showing the
//!   same gap before the new copy could arrive triggers nothing. Which copy of an
//!   acknowledged cell arrived is known unless its last copy went on the timer (a
//!   selective retransmission replaces a copy known lost); such a cell only counts as
//!   evidence if its ACK came at least the smallest round trip seen after the
//!   retransmission, else the earlier copy may be the one that arrived (RFC 8985
//!   section 6.1's spurious-retransmission guard);
//! - a retransmission timer (`EswConfig::rtx_timeout`) for cells no ESW-ACK has covered:
//!   the tail of a burst, or when ACK cells are lost. Every deadline is a cell's last send
//!   time plus the same constant, so the timers are a list of the cells waiting on one, in
//!   order of their last transmission, threaded through the cells themselves: firing,
//!   re-arming and cancelling (an ACK, a selective retransmission, a drop) each touch a
//!   cell and its neighbours, never a scan, and no cancelled timer lingers. This includes
//!   the cells above the 14th block of a full ESW-ACK, which the receiver may hold in
//!   blocks it could not code: the timer may send those again for nothing. We keep it so:
//!   under heavy loss an ESW-ACK every Tack repairs at most 14 gaps, too few for a window
//!   of cells, and putting those timers off until the lower gaps are filled made 30%
//!   loss overrun the data-link timeout in our tests.
//!
//! Data-link timeout (Table I, 31.8 s): an SDU not fully acknowledged that long after its
//! first cell first left is dropped (`EswEvent::SduDropped`); its cells are never sent
//! again, and the `floor` of later cells tells the receiver not to wait for them.

use super::cell::{cells_for, payload_of, AckCell, DataCell};
use super::config::EswConfig;
use super::{EswEvent, Sdu};
use crate::time::{earliest, Dur, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// No cell: the end of the timer list.
const NIL: u64 = u64::MAX;

/// Why `Sender::enqueue` refused an SDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnqueueError {
    #[error("an SDU must hold at least one byte")]
    Empty,
    /// It can never fit: the caller must not wait for room.
    #[error("an SDU of {len} bytes exceeds the whole ESW transmit window of {window} bytes")]
    TooLarge { len: u32, window: u64 },
    /// It fits once acknowledgements (or drops) free room: back-pressure.
    #[error("ESW transmit window full: {len} bytes offered, {free} free")]
    WindowFull { len: u32, free: u64 },
}

/// The sender's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data cells put on the air, first copies and retransmissions.
    pub cells_sent: u64,
    /// Of which retransmissions: `rtx_selective + rtx_timer`.
    pub cells_retransmitted: u64,
    /// Retransmissions for a gap below an ESW-ACK block.
    pub rtx_selective: u64,
    /// Retransmissions on the retransmission timer.
    pub rtx_timer: u64,
    pub acks_received: u64,
    /// SDUs whose every cell went out at least once.
    pub sdus_sent: u64,
    /// SDUs fully acknowledged (ARQ on).
    pub sdus_acked: u64,
    /// SDUs dropped on the data-link timeout (ARQ on).
    pub sdus_dropped: u64,
    /// Delay the ARQ added, summed over acknowledged SDUs: for each, the time from the
    /// first transmission of its last cell (when an error-free link would have had it
    /// all on the way) to the latest transmission of any of its cells (the copy that
    /// completed it, on a FIFO link with a fixed delay). Zero without loss. It leaves out
    /// the head-of-line wait of complete SDUs behind an earlier incomplete one at the
    /// receiver, and counts a spurious retransmission as delay.
    pub arq_delay: Dur,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rtx {
    Selective,
    Timer,
}

/// An SDU from `enqueue` until it is acknowledged or dropped (or, ARQ off, sent).
#[derive(Clone, Debug)]
struct SduTx {
    id: u64,
    len: u32,
    n_cells: u32,
    /// Sequence number of its first cell; meaningful once `first_tx` is set.
    first_seq: u64,
    /// When its first cell first left: the data-link timeout counts from here.
    first_tx: Option<Time>,
    /// When its last cell first left.
    all_sent_at: Option<Time>,
    /// The latest transmission of any of its acknowledged cells (each counts when it is
    /// acknowledged, its last copy being its latest: times only grow).
    latest_tx: Time,
    acked: u32,
    done: bool,
}

/// A cell sent at least once and not yet below `base`, with its header fields, so that a
/// retransmission needs nothing from its SDU.
#[derive(Clone, Debug)]
struct CellTx {
    /// Ordinal of its SDU (`Sender::front_ord` numbering).
    sdu: u64,
    /// Its SDU's `id`.
    id: u64,
    index: u32,
    payload: u32,
    last: bool,
    acked: bool,
    /// Its SDU was dropped: never sent again.
    abandoned: bool,
    /// Waiting in `Sender::rtx`.
    queued: Option<Rtx>,
    /// Ordinal of its last transmission among all data-cell transmissions.
    tx_no: u64,
    tx_at: Time,
    /// Its last copy went on the timer while an earlier copy may have arrived.
    ambiguous: bool,
    /// Neighbours in the timer list (`Sender::armed`), `NIL` at its ends; meaningful
    /// only while the cell is armed: sent, neither finished nor queued.
    prev: u64,
    next: u64,
}

impl CellTx {
    /// Waiting on its retransmission timer.
    fn armed(&self) -> bool {
        !self.acked && !self.abandoned && self.queued.is_none()
    }
}

/// The sending half of one direction of an ESW link.
#[derive(Clone, Debug)]
pub struct Sender {
    arq: bool,
    rtx_timeout: Dur,
    dl_timeout: Dur,
    window: u64,
    queued_bytes: u64,
    /// SDUs not yet done or behind one that is not; `sdus[k]` has ordinal `front_ord + k`.
    sdus: VecDeque<SduTx>,
    front_ord: u64,
    /// Ordinal of the SDU whose new cells go next, and the index of its next new cell.
    cursor: u64,
    next_index: u32,
    /// Cells `base .. next_seq` have been sent; `cells[k]` is cell `base + k`. Every cell
    /// below `base` is acknowledged or abandoned.
    base: u64,
    next_seq: u64,
    cells: VecDeque<CellTx>,
    /// Cells waiting for retransmission, lowest first. A cell leaves it lazily: one whose
    /// `queued` was cleared (acknowledged or abandoned meanwhile) is skipped when it comes
    /// up, which spares a removal per acknowledged cell; `rtx_queued` counts the others.
    rtx: BinaryHeap<Reverse<u64>>,
    rtx_queued: usize,
    /// The armed cells in order of their last transmission, hence of their deadlines
    /// (`tx_at + rtx_timeout`): first and last seq of the list linked by `CellTx::prev`
    /// and `next`, or `NIL`.
    armed: (u64, u64),
    /// The deadlines `handle_timeout` works to, kept as they change (both are read once
    /// per frame unit): the first armed cell's, and the oldest SDU's data-link timeout.
    rtx_due: Option<Time>,
    dl_due: Option<Time>,
    tx_no: u64,
    /// Highest `tx_no` known to have arrived.
    hi_acked_tx: Option<u64>,
    /// Smallest time from a first transmission to its acknowledgement.
    min_rtt: Option<Dur>,
    events: VecDeque<EswEvent>,
    stats: SenderStats,
}

impl Sender {
    pub fn new(cfg: &EswConfig) -> Sender {
        Sender {
            arq: cfg.arq,
            rtx_timeout: cfg.rtx_timeout,
            dl_timeout: cfg.dl_timeout,
            window: cfg.tx_window_bytes,
            queued_bytes: 0,
            sdus: VecDeque::new(),
            front_ord: 0,
            cursor: 0,
            next_index: 0,
            base: 0,
            next_seq: 0,
            cells: VecDeque::new(),
            rtx: BinaryHeap::new(),
            rtx_queued: 0,
            armed: (NIL, NIL),
            rtx_due: None,
            dl_due: None,
            tx_no: 0,
            hi_acked_tx: None,
            min_rtt: None,
            events: VecDeque::new(),
            stats: SenderStats::default(),
        }
    }

    /// Queues an SDU behind the others, if its bytes fit in what is left of the transmit
    /// window (Table I). On `WindowFull` the caller keeps it and offers it again after an
    /// `Acked` or `SduDropped` event (ARQ on) or a `poll_cell` (ARQ off).
    pub fn enqueue(&mut self, sdu: Sdu) -> Result<(), EnqueueError> {
        let len = sdu.len;
        if len == 0 {
            return Err(EnqueueError::Empty);
        }
        if len as u64 > self.window {
            return Err(EnqueueError::TooLarge {
                len,
                window: self.window,
            });
        }
        let free = self.free_window();
        if len as u64 > free {
            return Err(EnqueueError::WindowFull { len, free });
        }
        self.queued_bytes += len as u64;
        self.sdus.push_back(SduTx {
            id: sdu.id,
            len,
            n_cells: cells_for(len),
            first_seq: 0,
            first_tx: None,
            all_sent_at: None,
            latest_tx: Time::ZERO,
            acked: 0,
            done: false,
        });
        self.settle_cursor();
        Ok(())
    }

    /// Window bytes an SDU may still take.
    pub fn free_window(&self) -> u64 {
        self.window.saturating_sub(self.queued_bytes)
    }

    /// Bytes of the SDUs held: queued, in flight or waiting for acknowledgement.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// Cells sent and neither acknowledged nor abandoned yet, plus those above them.
    pub fn cells_in_flight(&self) -> usize {
        self.cells.len()
    }

    /// Whether `poll_cell` at this instant would return a cell (a retransmission is
    /// queued or a new cell is waiting), for a driver that asks for capacity. Timers
    /// due by then may add retransmissions.
    pub fn has_cell(&self) -> bool {
        self.rtx_queued > 0 || self.new_cell_waiting()
    }

    /// Nothing queued, in flight or unacknowledged.
    pub fn is_idle(&self) -> bool {
        self.sdus.is_empty()
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    pub fn poll_event(&mut self) -> Option<EswEvent> {
        self.events.pop_front()
    }

    /// The cell for this transmission opportunity, if any: a retransmission first, then
    /// the next new cell. Runs the timers due by `now` first, so a driver that calls only
    /// this once per frame unit needs no `handle_timeout`.
    pub fn poll_cell(&mut self, now: Time) -> Option<DataCell> {
        self.handle_timeout(now);
        while let Some(Reverse(seq)) = self.rtx.pop() {
            let Some(k) = self.slot(seq) else { continue };
            let c = &mut self.cells[k];
            let Some(reason) = c.queued.take() else {
                continue;
            };
            self.rtx_queued -= 1;
            if c.acked || c.abandoned {
                continue;
            }
            c.ambiguous = reason == Rtx::Timer;
            self.stats.cells_retransmitted += 1;
            match reason {
                Rtx::Selective => self.stats.rtx_selective += 1,
                Rtx::Timer => self.stats.rtx_timer += 1,
            }
            self.stamp(now, k);
            return Some(self.data_cell(k));
        }
        if !self.new_cell_waiting() {
            return None;
        }
        let k = (self.cursor - self.front_ord) as usize;
        let index = self.next_index;
        let seq = self.next_seq;
        self.next_index += 1;
        self.next_seq += 1;
        self.stats.cells_sent += 1;
        let arq = self.arq;
        let sdu = &mut self.sdus[k];
        if index == 0 {
            sdu.first_seq = seq;
            sdu.first_tx = Some(now);
        }
        let last = index + 1 == sdu.n_cells;
        if last {
            sdu.all_sent_at = Some(now);
            self.stats.sdus_sent += 1;
        }
        let cell = DataCell {
            seq,
            sdu: sdu.id,
            index,
            last,
            payload: payload_of(sdu.len, index),
            floor: if arq { self.base } else { seq },
        };
        if arq {
            self.tx_no += 1;
            self.cells.push_back(CellTx {
                sdu: self.cursor,
                id: cell.sdu,
                index,
                payload: cell.payload,
                last,
                acked: false,
                abandoned: false,
                queued: None,
                tx_no: self.tx_no,
                tx_at: now,
                ambiguous: false,
                prev: NIL,
                next: NIL,
            });
            self.arm(self.cells.len() - 1);
        } else {
            // Sent once and forgotten: its bytes leave the window with its last cell.
            self.base = self.next_seq;
            if last {
                sdu.done = true;
                self.queued_bytes -= sdu.len as u64;
            }
        }
        self.tidy();
        Some(cell)
    }

    /// An ESW-ACK cell arrived. Cells below its cumulative point and inside its blocks are
    /// acknowledged; cells in a gap below a block may be queued again (module doc).
    pub fn handle_ack(&mut self, now: Time, ack: &AckCell) {
        self.stats.acks_received += 1;
        if !self.arq {
            return;
        }
        let top = self.next_seq;
        let cum = ack.cumulative().min(top);
        for seq in self.base..cum {
            self.mark_acked(now, seq);
        }
        for b in ack.blocks() {
            for seq in b.left.max(self.base)..b.end().min(top) {
                self.mark_acked(now, seq);
            }
        }
        let mut lo = cum.max(self.base);
        for b in ack.blocks() {
            for seq in lo..b.left.min(top) {
                self.maybe_lost(seq);
            }
            lo = lo.max(b.end());
        }
        self.tidy();
    }

    /// The earliest time `handle_timeout` has work: a retransmission timer or the
    /// data-link timeout of the oldest SDU.
    pub fn poll_timeout(&self) -> Option<Time> {
        if !self.arq {
            return None;
        }
        earliest(self.rtx_due, self.dl_due)
    }

    /// Runs what is due by `now`; early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        if !self.arq {
            return;
        }
        while self.dl_due.is_some_and(|t| t <= now) {
            self.drop_front();
            self.tidy();
        }
        // Firing a timer only queues its cell: the fronts of `cells` and `sdus` stay as
        // they are, nothing to tidy.
        while self.rtx_due.is_some_and(|t| t <= now) {
            let k = (self.armed.0 - self.base) as usize;
            self.disarm(k);
            self.cells[k].queued = Some(Rtx::Timer);
            self.rtx.push(Reverse(self.base + k as u64));
            self.rtx_queued += 1;
        }
    }

    fn slot(&self, seq: u64) -> Option<usize> {
        let k = seq.checked_sub(self.base)?;
        (k < self.cells.len() as u64).then_some(k as usize)
    }

    /// Appends `cells[k]`, just sent, to the timer list.
    fn arm(&mut self, k: usize) {
        let seq = self.base + k as u64;
        let last = self.armed.1;
        let c = &mut self.cells[k];
        c.prev = last;
        c.next = NIL;
        match self.slot(last) {
            Some(j) => self.cells[j].next = seq,
            None => self.set_first_armed(seq),
        }
        self.armed.1 = seq;
    }

    /// Takes `cells[k]`, armed until now, out of the timer list.
    fn disarm(&mut self, k: usize) {
        let (prev, next) = (self.cells[k].prev, self.cells[k].next);
        match self.slot(prev) {
            Some(j) => self.cells[j].next = next,
            None => self.set_first_armed(next),
        }
        match self.slot(next) {
            Some(j) => self.cells[j].prev = prev,
            None => self.armed.1 = prev,
        }
    }

    fn set_first_armed(&mut self, seq: u64) {
        self.armed.0 = seq;
        self.rtx_due = self
            .slot(seq)
            .map(|k| self.cells[k].tx_at + self.rtx_timeout);
    }

    /// `dl_due` from the SDU now at the front.
    fn settle_dl(&mut self) {
        self.dl_due = self
            .sdus
            .front()
            .and_then(|s| s.first_tx)
            .map(|t| t + self.dl_timeout);
    }

    fn sdu_mut(&mut self, ord: u64) -> Option<&mut SduTx> {
        let k = ord.checked_sub(self.front_ord)?;
        self.sdus.get_mut(usize::try_from(k).ok()?)
    }

    fn new_cell_waiting(&self) -> bool {
        self.cursor
            .checked_sub(self.front_ord)
            .and_then(|k| self.sdus.get(k as usize))
            .is_some_and(|s| !s.done && self.next_index < s.n_cells)
    }

    /// Moves the cursor to the first SDU with a cell never sent.
    fn settle_cursor(&mut self) {
        if self.cursor < self.front_ord {
            self.cursor = self.front_ord;
            self.next_index = 0;
        }
        while let Some(s) = self.sdus.get((self.cursor - self.front_ord) as usize) {
            if s.done || self.next_index >= s.n_cells {
                self.cursor += 1;
                self.next_index = 0;
            } else {
                break;
            }
        }
    }

    /// Records a retransmission of `cells[k]`, taken off the queue (ARQ on).
    fn stamp(&mut self, now: Time, k: usize) {
        self.tx_no += 1;
        let c = &mut self.cells[k];
        c.tx_no = self.tx_no;
        c.tx_at = now;
        self.arm(k);
        self.stats.cells_sent += 1;
    }

    fn data_cell(&self, k: usize) -> DataCell {
        let c = &self.cells[k];
        DataCell {
            seq: self.base + k as u64,
            sdu: c.id,
            index: c.index,
            last: c.last,
            payload: c.payload,
            floor: self.base,
        }
    }

    fn mark_acked(&mut self, now: Time, seq: u64) {
        let Some(k) = self.slot(seq) else { return };
        let c = &mut self.cells[k];
        if c.acked || c.abandoned {
            return;
        }
        if c.queued.take().is_some() {
            self.rtx_queued -= 1;
        } else {
            self.disarm(k);
        }
        let c = &mut self.cells[k];
        c.acked = true;
        let elapsed = now.since(c.tx_at);
        let evidence = if c.ambiguous {
            self.min_rtt.is_some_and(|m| elapsed >= m)
        } else {
            self.min_rtt = Some(self.min_rtt.map_or(elapsed, |m| m.min(elapsed)));
            true
        };
        if evidence {
            self.hi_acked_tx = Some(self.hi_acked_tx.map_or(c.tx_no, |h| h.max(c.tx_no)));
        }
        let (ord, tx_at) = (c.sdu, c.tx_at);
        let Some(s) = self.sdu_mut(ord) else { return };
        s.latest_tx = s.latest_tx.max(tx_at);
        s.acked += 1;
        if s.acked < s.n_cells || s.done {
            return;
        }
        s.done = true;
        let (id, len) = (s.id, s.len);
        let extra = s.latest_tx.since(s.all_sent_at.unwrap_or(s.latest_tx));
        self.queued_bytes -= len as u64;
        self.stats.sdus_acked += 1;
        self.stats.arq_delay = self.stats.arq_delay + extra;
        self.events.push_back(EswEvent::Acked { id, len });
    }

    fn maybe_lost(&mut self, seq: u64) {
        let Some(hi) = self.hi_acked_tx else { return };
        let Some(k) = self.slot(seq) else { return };
        let c = &mut self.cells[k];
        if c.acked || c.abandoned || c.queued.is_some() || c.tx_no >= hi {
            return;
        }
        self.disarm(k);
        self.cells[k].queued = Some(Rtx::Selective);
        self.rtx.push(Reverse(seq));
        self.rtx_queued += 1;
    }

    /// Data-link timeout of the front SDU (which is not done: `tidy`).
    fn drop_front(&mut self) {
        let ord = self.front_ord;
        let partly_sent = self.cursor == ord;
        let s = &mut self.sdus[0];
        let sent = if partly_sent {
            self.next_index
        } else {
            s.n_cells
        };
        s.done = true;
        let (id, len, first) = (s.id, s.len, s.first_seq);
        self.queued_bytes -= len as u64;
        self.stats.sdus_dropped += 1;
        self.events.push_back(EswEvent::SduDropped { id, len });
        for seq in first..first + sent as u64 {
            if let Some(k) = self.slot(seq) {
                if self.cells[k].armed() {
                    self.disarm(k);
                }
                let c = &mut self.cells[k];
                c.abandoned = true;
                if c.queued.take().is_some() {
                    self.rtx_queued -= 1;
                }
            }
        }
        if partly_sent {
            self.cursor += 1;
            self.next_index = 0;
        }
    }

    /// Drops what is finished from the fronts of the queues.
    fn tidy(&mut self) {
        while self.cells.front().is_some_and(|c| c.acked || c.abandoned) {
            self.cells.pop_front();
            self.base += 1;
        }
        while self.sdus.front().is_some_and(|s| s.done) {
            self.sdus.pop_front();
            self.front_ord += 1;
        }
        self.settle_cursor();
        self.settle_dl();
    }
}
