//! The receiving half with ARQ off (seed 001 section IV: the ARQ protocol is
//! "optional"; the paper's SCTP runs go without it). Cells are sent once and never
//! acknowledged.
//!
//! Rule (ours; the paper does not give one): an SDU goes up as soon as all its cells have
//! arrived, in whatever order they came. An incomplete SDU is discarded
//! (`EswEvent::Discarded`) when
//! - a later SDU (higher cell sequence numbers) completes: on a FIFO link a missing cell
//!   of the earlier one can no longer arrive, and every cell below the completed SDU's
//!   end is then ignored; or
//! - `EswConfig::reassembly_timeout` has passed since its first cell arrived, for the
//!   last SDU before a pause, which no later SDU will push out.
//!
//! SDUs are delivered in the order they complete, which on a FIFO link is their order.

use super::cell::{cells_for, DataCell};
use super::config::EswConfig;
use super::receiver::ReceiverStats;
use super::EswEvent;
use crate::time::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};

/// An SDU being reassembled, keyed by the sequence number of its first cell.
#[derive(Clone, Debug)]
struct Partial {
    id: u64,
    got: Vec<bool>,
    count: u32,
    /// Its cell count, once the last cell came.
    n: Option<u32>,
    len: u32,
    since: Time,
}

/// ARQ-off receiver (module doc).
#[derive(Clone, Debug)]
pub struct UnreliableReceiver {
    timeout: Dur,
    /// An SDU has at most this many cells: the sender refuses one larger than its window.
    max_cells: u32,
    /// Cells below this belong to SDUs already delivered or pushed out.
    done_below: u64,
    partials: BTreeMap<u64, Partial>,
    /// (deadline, first seq) per partial, in creation order: deadlines non-decreasing.
    deadlines: VecDeque<(Time, u64)>,
    last_discarded: Option<u64>,
    events: VecDeque<EswEvent>,
    stats: ReceiverStats,
}

impl UnreliableReceiver {
    pub fn new(cfg: &EswConfig) -> UnreliableReceiver {
        let window = u32::try_from(cfg.tx_window_bytes).unwrap_or(u32::MAX);
        UnreliableReceiver {
            timeout: cfg.reassembly_timeout,
            max_cells: cells_for(window).max(1),
            done_below: 0,
            partials: BTreeMap::new(),
            deadlines: VecDeque::new(),
            last_discarded: None,
            events: VecDeque::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// SDUs partly received.
    pub fn partial_sdus(&self) -> usize {
        self.partials.len()
    }

    pub fn handle_cell(&mut self, now: Time, cell: &DataCell) {
        self.stats.cells_received += 1;
        if cell.index >= self.max_cells || (cell.index as u64) > cell.seq {
            self.stats.cells_ignored += 1;
            return;
        }
        if cell.seq < self.done_below {
            self.stats.duplicate_cells += 1;
            return;
        }
        let first = cell.seq - cell.index as u64;
        let timeout = self.timeout;
        let deadlines = &mut self.deadlines;
        let p = self.partials.entry(first).or_insert_with(|| {
            deadlines.push_back((now + timeout, first));
            Partial {
                id: cell.sdu,
                got: Vec::new(),
                count: 0,
                n: None,
                len: 0,
                since: now,
            }
        });
        if p.id != cell.sdu {
            self.stats.cells_ignored += 1;
            return;
        }
        let i = cell.index as usize;
        if p.got.len() <= i {
            p.got.resize(i + 1, false);
        }
        if p.got[i] {
            self.stats.duplicate_cells += 1;
            return;
        }
        p.got[i] = true;
        p.count += 1;
        p.len = p.len.saturating_add(cell.payload);
        if cell.last {
            p.n = Some(cell.index + 1);
        }
        if p.n == Some(p.count) && p.got.len() == p.count as usize {
            let (id, len, n) = (p.id, p.len, p.count);
            self.partials.remove(&first);
            self.stats.sdus_delivered += 1;
            self.stats.bytes_delivered += len as u64;
            self.events.push_back(EswEvent::Delivered { id, len });
            while let Some(entry) = self.partials.first_entry() {
                if *entry.key() >= first {
                    break;
                }
                let older = entry.remove();
                self.discard(older.id);
            }
            self.done_below = self.done_below.max(first + n as u64);
        }
        self.tidy();
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadlines.front().map(|&(t, _)| t)
    }

    /// Discards the SDUs whose reassembly timeout has passed.
    pub fn handle_timeout(&mut self, now: Time) {
        while let Some(&(t, first)) = self.deadlines.front() {
            if t > now {
                break;
            }
            self.deadlines.pop_front();
            if self.is_live(t, first) {
                if let Some(p) = self.partials.remove(&first) {
                    self.discard(p.id);
                }
            }
        }
        self.tidy();
    }

    pub fn poll_event(&mut self) -> Option<EswEvent> {
        self.events.pop_front()
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    fn is_live(&self, deadline: Time, first: u64) -> bool {
        self.partials
            .get(&first)
            .is_some_and(|p| p.since + self.timeout == deadline)
    }

    fn tidy(&mut self) {
        while let Some(&(t, first)) = self.deadlines.front() {
            if self.is_live(t, first) {
                break;
            }
            self.deadlines.pop_front();
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
