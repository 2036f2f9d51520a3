//! A EuroSkyWay satellite link (seed 001 section IV), both directions: IP datagrams cut
//! into 60-byte cells, one cell per TDMA frame unit, each cell judged by the channel, and
//! the optional Selective-Repeat ARQ whose ESW-ACK cells share the frame units of the
//! reverse direction with its data cells.
//!
//! The protocol is `hetpath_proto::esw` (sender, receiver, cell formats); this file is the
//! medium: the slot clock, the channel and the propagation delay. A side (0: a -> b,
//! 1: b -> a) has a sender at its source and a receiver at its sink; the receiver's
//! ESW-ACKs travel on the other side. The simulation drives it like a `LinkDir`: it offers
//! packets, runs the slots and arrivals at the times this type asks for, and hands up or
//! reports lost the packets it returns (`sim/esw.rs`).
//!
//! TDMA: a frame of `frame` (26.5 ms) holds `units` frame units. We space a terminal's
//! frame units evenly, so slot `k` of the run starts at `(k / units) * frame +
//! (k % units) * frame / units` (whole nanoseconds), on one grid for both sides. A slot
//! carries an ESW-ACK if the reverse receiver has one due, else a data cell (a
//! retransmission first), else nothing; the clock runs only while a side has something to
//! send or a timer that may give it something, so an idle link costs no events.

use crate::channel::Channel;
use crate::link::Frame;
use hetpath_proto::esw::{
    Cell, EnqueueError, EswConfig, EswEvent, Receiver, Sdu, Sender, CELL_BYTES,
};
use hetpath_proto::time::earliest;
use hetpath_proto::{Dur, Time};
use std::collections::VecDeque;

/// Parameters of an ESW link (seed 001 Table I for the defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EswParams {
    pub cfg: EswConfig,
    /// TDMA frame duration (Table I: 26.5 ms).
    pub frame: Dur,
    /// Frame units per frame, per side (a -> b, b -> a).
    pub units: [u32; 2],
    /// Propagation delay per side.
    pub delay: [Dur; 2],
    /// Packets a side holds while its ARQ transmit window is full (the IP queue above
    /// the link), DropTail.
    pub backlog: usize,
    /// One shadowing process for both sides (the terminal's surroundings block both
    /// ways), or one per side.
    pub shared_channel: bool,
}

/// One side's counters, reported per link direction (`results.rs`, `LinkLayerResult`).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct EswStats {
    /// Data cells put on the air, first copies and retransmissions.
    pub cells_sent: u64,
    pub cells_retransmitted: u64,
    /// ESW-ACK cells put on the air on this side (acknowledging the other side's data).
    pub esw_acks: u64,
    /// Cells (data or ESW-ACK) the channel lost.
    pub cells_lost: u64,
    /// Datagrams handed up at the far end.
    pub packets_delivered: u64,
    /// Datagrams the link lost: discarded incomplete, dropped on the data-link timeout,
    /// or refused because the backlog was full.
    pub packets_lost: u64,
    /// Delay the ARQ added (`esw::SenderStats::arq_delay`).
    pub arq_delay: Dur,
    /// Air time of the cells sent (data and ESW-ACK), for the link's utilization.
    pub busy: Dur,
}

impl EswStats {
    /// Counter names and values, in report order (`arq_delay_s` in seconds).
    pub fn counters(&self) -> [(&'static str, f64); 7] {
        [
            ("cells_sent", self.cells_sent as f64),
            ("cells_retransmitted", self.cells_retransmitted as f64),
            ("esw_acks", self.esw_acks as f64),
            ("cells_lost", self.cells_lost as f64),
            ("packets_delivered", self.packets_delivered as f64),
            ("packets_lost", self.packets_lost as f64),
            ("arq_delay_s", self.arq_delay.as_secs_f64()),
        ]
    }
}

/// What a side's slot or arrival produced, for the simulation to act on.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Datagrams complete at a side's sink, to hand up there: (side, datagram).
    pub delivered: Vec<(usize, Frame)>,
    /// Datagrams lost on a side.
    pub lost: Vec<(usize, Frame)>,
    /// Slots to schedule, per side.
    pub slot: [Option<Time>; 2],
    /// The head of a side's wire arrives at this time (schedule when `Some`).
    pub arrival: Option<(usize, Time)>,
}

impl Outcome {
    /// Nothing handed up or lost: the link's own business only.
    pub fn is_quiet(&self) -> bool {
        self.delivered.is_empty() && self.lost.is_empty()
    }
}

struct Side {
    sender: Sender,
    /// The receiver at this side's sink.
    receiver: Receiver,
    /// Datagrams given to the sender and not yet delivered or lost, by SDU id (their
    /// order of entry, so that SDUs below a delivered one are the earlier ones).
    held: Held,
    next_sdu: u64,
    /// Datagrams waiting for room in the transmit window.
    backlog: VecDeque<Frame>,
    /// Cells propagating to the sink: (arrival time, cell).
    wire: VecDeque<(Time, Cell)>,
    /// The slot event scheduled for this side, if any (others are stale).
    next_slot: Option<(u64, Time)>,
    /// The last slot run: (index, start, start of the next slot).
    last_slot: Option<(u64, Time, Time)>,
    stats: EswStats,
}

impl Side {
    /// Gives a datagram to the sender under the next SDU id, or gives it back.
    #[allow(clippy::result_large_err)]
    fn admit(&mut self, f: Frame) -> Result<(), (EnqueueError, Frame)> {
        let sdu = Sdu {
            id: self.next_sdu,
            len: f.packet.size(),
        };
        match self.sender.enqueue(sdu) {
            Ok(()) => {
                self.held.insert(self.next_sdu, f);
                self.next_sdu += 1;
                Ok(())
            }
            Err(e) => Err((e, f)),
        }
    }
}

/// The datagrams a side's sender holds, by SDU id. Ids are handed out in order, so this
/// is a ring of slots from the lowest id held: a map would shift 184-byte frames about on
/// every removal from its middle.
#[derive(Default)]
struct Held {
    /// The id of `slots[0]`.
    first: u64,
    slots: VecDeque<Option<Frame>>,
    count: usize,
}

impl Held {
    /// `id` is the next one: one above every id inserted before.
    fn insert(&mut self, id: u64, f: Frame) {
        if self.slots.is_empty() {
            self.first = id;
        }
        debug_assert_eq!(id, self.first + self.slots.len() as u64);
        self.slots.push_back(Some(f));
        self.count += 1;
    }

    fn remove(&mut self, id: u64) -> Option<Frame> {
        let k = usize::try_from(id.checked_sub(self.first)?).ok()?;
        let f = self.slots.get_mut(k)?.take()?;
        self.count -= 1;
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.first += 1;
        }
        Some(f)
    }

    /// Removes the lowest held datagram if its id is below `id`.
    fn pop_below(&mut self, id: u64) -> Option<Frame> {
        (!self.slots.is_empty() && self.first < id)
            .then(|| self.remove(self.first))
            .flatten()
    }

    fn len(&self) -> usize {
        self.count
    }
}

pub struct EswLink {
    params: EswParams,
    sides: [Side; 2],
    /// One channel (shared) or one per side.
    channels: Vec<Box<dyn Channel>>,
}

impl EswLink {
    /// `channels` holds one channel per side, a -> b first; with `shared_channel` only
    /// the first is used.
    pub fn new(params: EswParams, mut channels: Vec<Box<dyn Channel>>) -> EswLink {
        assert_eq!(channels.len(), 2, "one channel per side");
        assert!(params.units.iter().all(|&u| u > 0) && params.frame > Dur::ZERO);
        assert!(
            params
                .units
                .iter()
                .all(|&u| params.frame.0.checked_mul(u as u64).is_some()),
            "frame units times the frame in ns must fit in 64 bits"
        );
        if params.shared_channel {
            channels.truncate(1);
        }
        let side = || Side {
            sender: Sender::new(&params.cfg),
            receiver: Receiver::new(&params.cfg),
            held: Held::default(),
            next_sdu: 0,
            backlog: VecDeque::new(),
            wire: VecDeque::new(),
            next_slot: None,
            last_slot: None,
            stats: EswStats::default(),
        };
        EswLink {
            params,
            sides: [side(), side()],
            channels,
        }
    }

    pub fn params(&self) -> &EswParams {
        &self.params
    }

    /// A side's counters.
    pub fn stats(&self, side: usize) -> EswStats {
        let s = &self.sides[side];
        EswStats {
            arq_delay: s.sender.stats().arq_delay,
            ..s.stats
        }
    }

    /// Bits per second of cells a side can carry: `units` cells of 60 bytes per frame.
    pub fn cell_rate_bps(&self, side: usize) -> u64 {
        let bits = self.params.units[side] as u128 * CELL_BYTES as u128 * 8 * 1_000_000_000;
        (bits / self.params.frame.0 as u128) as u64
    }

    /// Start of slot `k` of `side`.
    /// (`new` checks that `units * frame` fits in 64 bits, so this never divides 128-bit
    /// numbers: the slot clock runs per cell.)
    fn slot_start(&self, side: usize, k: u64) -> Time {
        let (f, n) = (self.params.frame.0, self.params.units[side] as u64);
        Time((k / n) * f + (k % n) * f / n)
    }

    /// The first slot of `side` starting at or after `t`: (index, start). Within a frame,
    /// unit `j` starts at `floor(j * frame / n)`, which is at or after `r` exactly when
    /// `j * frame / n` is, so the first such unit is `ceil(r * n / frame)` (`n` itself
    /// being the next frame's first).
    fn slot_at_or_after(&self, side: usize, t: Time) -> (u64, Time) {
        let (f, n) = (self.params.frame.0, self.params.units[side] as u64);
        let k = (t.0 / f) * n + (t.0 % f * n).div_ceil(f);
        (k, self.slot_start(side, k))
    }

    /// A datagram for `side`. Returns it if the backlog is full (a drop, counted).
    // The frame comes back by value on a drop, as `LinkDir::enqueue` does.
    #[allow(clippy::result_large_err)]
    pub fn offer(&mut self, now: Time, side: usize, f: Frame) -> Result<Outcome, Frame> {
        let s = &mut self.sides[side];
        if s.backlog.is_empty() {
            match s.admit(f) {
                Ok(()) => {}
                Err((EnqueueError::WindowFull { .. }, f)) => s.backlog.push_back(f),
                Err((_, f)) => {
                    s.stats.packets_lost += 1;
                    return Err(f);
                }
            }
        } else if s.backlog.len() < self.params.backlog {
            s.backlog.push_back(f);
        } else {
            s.stats.packets_lost += 1;
            return Err(f);
        }
        let mut out = Outcome::default();
        self.want_slot(now, side, &mut out);
        Ok(out)
    }

    /// Runs `side`'s slot at `now` (`on_slot`), then its next ones in place while each
    /// starts before `until` and the one before put out nothing but the next slot, up to
    /// `max` slots in all: a side retransmitting into a shadowed channel, whose cells are
    /// all lost. The same as running each as its own event when `until` is the time of
    /// the run's next event. Returns the slots run and the start of the last.
    pub fn run_slots(
        &mut self,
        mut now: Time,
        side: usize,
        until: Time,
        max: u32,
        out: &mut Outcome,
    ) -> (u32, Time) {
        let mut n = 1;
        self.on_slot(now, side, out);
        while n < max && out.is_quiet() && out.arrival.is_none() {
            match out.slot[side] {
                Some(t) if t < until => {
                    out.slot[side] = None;
                    now = t;
                    n += 1;
                    self.on_slot(now, side, out);
                }
                _ => break,
            }
        }
        (n, now)
    }

    /// The slot event of `side` at `now`. Stale events (a slot rescheduled earlier or
    /// already run) do nothing.
    pub fn on_slot(&mut self, now: Time, side: usize, out: &mut Outcome) {
        let k = match self.sides[side].next_slot {
            Some((k, t)) if t == now => k,
            _ => return,
        };
        let end = self.slot_start(side, k + 1);
        self.sides[side].next_slot = None;
        self.sides[side].last_slot = Some((k, now, end));
        let back = 1 - side;
        // The reverse receiver sits at this side's source: its timers run here, and its
        // ESW-ACKs go first.
        // (Nothing of it is due before its deadline: skip the calls, one per cell sent.)
        let due = self.sides[back]
            .receiver
            .poll_timeout()
            .is_some_and(|t| t <= now);
        let ack = if due {
            self.sides[back].receiver.handle_timeout(now);
            self.drain_receiver(back, out);
            self.sides[back].receiver.poll_ack(now)
        } else {
            None
        };
        let cell = match ack {
            Some(ack) => {
                self.sides[side].stats.esw_acks += 1;
                Some(Cell::Ack(ack))
            }
            None => {
                let s = &mut self.sides[side];
                let before = s.sender.stats().cells_retransmitted;
                let cell = s.sender.poll_cell(now);
                if cell.is_some() {
                    s.stats.cells_sent += 1;
                    s.stats.cells_retransmitted += s.sender.stats().cells_retransmitted - before;
                }
                self.drain_sender(side);
                cell.map(Cell::Data)
            }
        };
        if let Some(cell) = cell {
            let dur = end.since(now);
            self.sides[side].stats.busy = self.sides[side].stats.busy + dur;
            let ch = if self.params.shared_channel { 0 } else { side };
            if self.channels[ch].transmit(now, dur, CELL_BYTES) {
                let s = &mut self.sides[side];
                let was_empty = s.wire.is_empty();
                let at = now + dur + self.params.delay[side];
                s.wire.push_back((at, cell));
                if was_empty {
                    out.arrival = Some((side, at));
                }
            } else {
                let s = &mut self.sides[side];
                s.stats.cells_lost += 1;
                // Without ARQ no copy will follow: the datagram is lost now. (With ARQ
                // the receiver decides, and says so when a later SDU goes up.)
                if let (Cell::Data(c), false) = (cell, self.params.cfg.arq) {
                    if let Some(f) = s.held.remove(c.sdu) {
                        s.stats.packets_lost += 1;
                        out.lost.push((side, f));
                    }
                }
            }
        }
        self.want_slot(now, side, out);
    }

    /// Datagrams a side has taken and not yet delivered or declared lost (its backlog
    /// and its ARQ window): what is in flight on the link.
    pub fn held(&self, side: usize) -> usize {
        let s = &self.sides[side];
        s.held.len() + s.backlog.len()
    }

    /// The head of `side`'s wire arrives at its sink.
    pub fn on_arrival(&mut self, now: Time, side: usize, out: &mut Outcome) {
        let back = 1 - side;
        let s = &mut self.sides[side];
        let Some(&(t, cell)) = s.wire.front() else {
            return;
        };
        if t > now {
            return;
        }
        s.wire.pop_front();
        if let Some(&(next, _)) = s.wire.front() {
            out.arrival = Some((side, next));
        }
        match cell {
            Cell::Data(c) => {
                self.sides[side].receiver.handle_cell(now, &c);
                self.drain_receiver(side, out);
            }
            // An ACK on this side acknowledges the other side's data.
            Cell::Ack(a) => {
                self.sides[back].sender.handle_ack(now, &a);
                self.drain_sender(back);
            }
        }
        // The sink may owe an ESW-ACK now, or the other sender a retransmission.
        self.want_slot(now, back, out);
    }

    /// Hands up or writes off what `side`'s receiver reported.
    fn drain_receiver(&mut self, side: usize, out: &mut Outcome) {
        let s = &mut self.sides[side];
        while let Some(ev) = s.receiver.poll_event() {
            match ev {
                EswEvent::Delivered { id, .. } => {
                    // SDUs go up in order: one still held below this one never reached
                    // the receiver whole (the sender gave up on it) and never will.
                    while let Some(f) = s.held.pop_below(id) {
                        s.stats.packets_lost += 1;
                        out.lost.push((side, f));
                    }
                    if let Some(f) = s.held.remove(id) {
                        s.stats.packets_delivered += 1;
                        out.delivered.push((side, f));
                    }
                }
                EswEvent::Discarded { id } => {
                    if let Some(f) = s.held.remove(id) {
                        s.stats.packets_lost += 1;
                        out.lost.push((side, f));
                    }
                }
                EswEvent::Acked { .. } | EswEvent::SduDropped { .. } => {}
            }
        }
    }

    /// Takes `side`'s sender events (window room frees) and moves the backlog in.
    fn drain_sender(&mut self, side: usize) {
        let s = &mut self.sides[side];
        while s.sender.poll_event().is_some() {}
        while let Some(f) = s.backlog.pop_front() {
            if let Err((_, f)) = s.admit(f) {
                s.backlog.push_front(f);
                break;
            }
        }
    }

    /// Schedules `side`'s next slot at the first one at or after the earliest time it
    /// may have something to send, unless an earlier one is already scheduled.
    fn want_slot(&mut self, now: Time, side: usize, out: &mut Outcome) {
        let back = 1 - side;
        let s = &self.sides[side];
        let need = if s.sender.has_cell() {
            Some(now)
        } else {
            earliest(
                s.sender.poll_timeout(),
                self.sides[back].receiver.poll_timeout(),
            )
            .map(|t| t.max(now))
        };
        let Some(need) = need else { return };
        if s.next_slot.is_some_and(|(_, t)| t <= need) {
            return; // a slot at or before it is due anyway
        }
        // `need` is at or after the last slot run, which cannot run again: from there to
        // the next slot's start, the next slot is the one (and it is known).
        let (k, at) = match s.last_slot {
            Some((k, _, end)) if need <= end => (k + 1, end),
            _ => self.slot_at_or_after(side, need),
        };
        let s = &mut self.sides[side];
        if s.next_slot.is_some_and(|(_, t)| t <= at) {
            return;
        }
        s.next_slot = Some((k, at));
        out.slot[side] = Some(at);
    }
}

#[cfg(test)]
#[path = "esw_link_tests.rs"]
mod tests;
