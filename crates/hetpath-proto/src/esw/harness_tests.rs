//! Test harness: one ESW link direction between a `Sender` and a `Receiver`, with the
//! ESW-ACK cells going back the other way.
//!
//! Each `step` is one frame unit in both directions: slot k starts at k * 26.5 ms / N
//! (N = 19 frame units per 26.5 ms frame gives 60 * 8 * 19 / 26.5 ms = 344 kbit/s of
//! cells, Table I's bit rate). Both directions have a fixed one-way delay of 265 ms
//! (Table I) and a loss rule per cell; loss patterns are computed here (scripted sets,
//! time windows, and a Gilbert-Elliott chain driven by an LCG: no RNG crate in proto).

use super::*;
use crate::time::{Dur, Time};
use std::collections::VecDeque;

pub const FRAME_NS: u64 = 26_500_000;
pub const DELAY: Dur = Dur::from_millis(265);

/// A deterministic 64-bit LCG (Knuth's MMIX constants), uniform in [0, 1).
#[derive(Clone, Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A two-state Gilbert-Elliott chain, one step per cell (seed 001 section IV models the
/// mobile satellite channel this way): `p_gb` and `p_bg` are the per-cell transition
/// probabilities, `loss_good` and `loss_bad` the loss probabilities in each state.
#[derive(Clone, Debug)]
pub struct GilbertElliott {
    pub rng: Lcg,
    pub bad: bool,
    pub p_gb: f64,
    pub p_bg: f64,
    pub loss_good: f64,
    pub loss_bad: f64,
}

impl GilbertElliott {
    pub fn lost(&mut self) -> bool {
        let flip = self.rng.next_f64();
        self.bad = if self.bad {
            flip >= self.p_bg
        } else {
            flip < self.p_gb
        };
        let p = if self.bad {
            self.loss_bad
        } else {
            self.loss_good
        };
        self.rng.next_f64() < p
    }
}

/// Loss rule of a data cell: (transmission number in this direction, send time, cell).
pub type DataLoss = Box<dyn FnMut(u64, Time, &DataCell) -> bool>;
/// Loss rule of an ESW-ACK cell: (transmission number in this direction, send time).
pub type AckLoss = Box<dyn FnMut(u64, Time) -> bool>;

pub fn no_data_loss() -> DataLoss {
    Box::new(|_, _, _| false)
}
pub fn no_ack_loss() -> AckLoss {
    Box::new(|_, _| false)
}

/// Random loss of probability `p` per cell.
pub fn bernoulli_data(seed: u64, p: f64) -> DataLoss {
    let mut rng = Lcg(seed);
    Box::new(move |_, _, _| rng.next_f64() < p)
}
pub fn bernoulli_ack(seed: u64, p: f64) -> AckLoss {
    let mut rng = Lcg(seed);
    Box::new(move |_, _| rng.next_f64() < p)
}

/// Every cell sent in `[from, to)` is lost.
pub fn window_data(from: Time, to: Time) -> DataLoss {
    Box::new(move |_, t, _| t >= from && t < to)
}
pub fn window_ack(from: Time, to: Time) -> AckLoss {
    Box::new(move |_, t| t >= from && t < to)
}

/// What the harness saw.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// (id, len, time) of each `Delivered`.
    pub delivered: Vec<(u64, u32, Time)>,
    pub acked: Vec<u64>,
    /// (id, time) of each `SduDropped`.
    pub dropped: Vec<(u64, Time)>,
    pub discarded: Vec<u64>,
    /// Every data cell put on the air: (send time, cell, lost).
    pub data: Vec<(Time, DataCell, bool)>,
    /// Every ESW-ACK put on the air: (send time, cell, lost).
    pub acks: Vec<(Time, AckCell, bool)>,
}

pub struct Harness {
    pub cfg: EswConfig,
    pub sender: Sender,
    pub receiver: Receiver,
    pub units: u64,
    pub slot: u64,
    pub data_loss: DataLoss,
    pub ack_loss: AckLoss,
    /// SDUs offered at or after a time, in order, as window room allows.
    pub offered: VecDeque<(Time, Sdu)>,
    next_id: u64,
    data_air: VecDeque<(Time, DataCell)>,
    ack_air: VecDeque<(Time, AckCell)>,
    pub log: Log,
}

impl Harness {
    pub fn new(cfg: EswConfig) -> Harness {
        Harness {
            cfg,
            sender: Sender::new(&cfg),
            receiver: Receiver::new(&cfg),
            units: 19,
            slot: 0,
            data_loss: no_data_loss(),
            ack_loss: no_ack_loss(),
            offered: VecDeque::new(),
            next_id: 0,
            data_air: VecDeque::new(),
            ack_air: VecDeque::new(),
            log: Log::default(),
        }
    }

    pub fn with_loss(mut self, data: DataLoss, ack: AckLoss) -> Harness {
        self.data_loss = data;
        self.ack_loss = ack;
        self
    }

    /// Offers SDUs of these sizes at time zero, ids 0, 1, ...
    pub fn offer(&mut self, sizes: &[u32]) {
        self.offer_at(Time::ZERO, sizes);
    }

    /// Offers SDUs at `at`, ids continuing from those offered before.
    pub fn offer_at(&mut self, at: Time, sizes: &[u32]) {
        for &len in sizes {
            let id = self.next_id;
            self.next_id += 1;
            self.offered.push_back((at, Sdu { id, len }));
        }
    }

    pub fn slot_time(&self, k: u64) -> Time {
        Time(k * FRAME_NS / self.units)
    }

    pub fn now(&self) -> Time {
        self.slot_time(self.slot)
    }

    /// One frame unit in each direction.
    pub fn step(&mut self) {
        let t = self.now();
        while let Some(&(at, cell)) = self.data_air.front() {
            if at > t {
                break;
            }
            self.data_air.pop_front();
            self.receiver.handle_timeout(at);
            self.receiver.handle_cell(at, &cell);
        }
        while let Some(&(at, ack)) = self.ack_air.front() {
            if at > t {
                break;
            }
            self.ack_air.pop_front();
            self.sender.handle_timeout(at);
            self.sender.handle_ack(at, &ack);
        }
        if self.sender.poll_timeout().is_some_and(|d| d <= t) {
            self.sender.handle_timeout(t);
        }
        if self.receiver.poll_timeout().is_some_and(|d| d <= t) {
            self.receiver.handle_timeout(t);
        }
        while let Some(&(at, sdu)) = self.offered.front() {
            if at > t || self.sender.enqueue(sdu).is_err() {
                break;
            }
            self.offered.pop_front();
        }
        if let Some(cell) = self.sender.poll_cell(t) {
            let n = self.log.data.len() as u64;
            let lost = (self.data_loss)(n, t, &cell);
            self.log.data.push((t, cell, lost));
            if !lost {
                self.data_air.push_back((t + DELAY, cell));
            }
        }
        if let Some(ack) = self.receiver.poll_ack(t) {
            assert!(ack.blocks().len() <= MAX_BLOCKS);
            let n = self.log.acks.len() as u64;
            let lost = (self.ack_loss)(n, t);
            self.log.acks.push((t, ack, lost));
            if !lost {
                self.ack_air.push_back((t + DELAY, ack));
            }
        }
        self.drain_events();
        self.slot += 1;
    }

    fn drain_events(&mut self) {
        let t = self.now();
        while let Some(e) = self.receiver.poll_event() {
            match e {
                EswEvent::Delivered { id, len } => self.log.delivered.push((id, len, t)),
                EswEvent::Discarded { id } => self.log.discarded.push(id),
                other => panic!("receiver reported {other:?}"),
            }
        }
        while let Some(e) = self.sender.poll_event() {
            match e {
                EswEvent::Acked { id, .. } => self.log.acked.push(id),
                EswEvent::SduDropped { id, .. } => self.log.dropped.push((id, t)),
                other => panic!("sender reported {other:?}"),
            }
        }
    }

    /// Steps until `done` holds or `max_slots` steps have run; `true` if `done` held.
    pub fn run_until(&mut self, max_slots: u64, mut done: impl FnMut(&Harness) -> bool) -> bool {
        for _ in 0..max_slots {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// Steps until every offered SDU is delivered (or dropped) and acknowledged (or
    /// dropped) and nothing is left in the air or the sender.
    pub fn run_to_completion(&mut self, total: usize, max_slots: u64) -> bool {
        let arq = self.cfg.arq;
        self.run_until(max_slots, |h| {
            let settled = if arq {
                h.log.acked.len() + h.log.dropped.len() == total && h.sender.is_idle()
            } else {
                h.offered.is_empty() && h.sender.is_idle()
            };
            settled && h.data_air.is_empty() && h.ack_air.is_empty()
        })
    }

    pub fn delivered_ids(&self) -> Vec<u64> {
        self.log.delivered.iter().map(|d| d.0).collect()
    }
}
