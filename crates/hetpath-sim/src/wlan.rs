//! An IEEE 802.11b DCF medium in infrastructure mode (seed 000 section IV.A, Table I):
//! stations sharing one channel by CSMA/CA with binary exponential backoff, MAC ACKs at
//! the basic rate, the short and long retry limits, and RTS/CTS above a threshold.
//!
//! The medium is driven like `EswLink`: the simulation offers frames (`enqueue`), runs
//! `on_event` at the one time the medium asks for (`next_event`), and hands up what comes
//! out. Backoff slots are computed, not ticked (docs/performance.md, "APOHN: the 802.11b DCF"): when the medium goes
//! idle, the countdowns start together one IFS later on a common slot grid, and the next
//! transmission is the smallest expiry, found in one step.
//!
//! Model (IEEE 802.11-2016 section 10.3, the DCF; choices in docs/model-notes.md, "802.11b
//! DCF"):
//! - A station with a frame and no countdown draws a backoff in [0, CW] and counts down
//!   in slots once the medium has been idle for DIFS (EIFS after a frame it could not
//!   decode). Countdowns freeze while the medium is busy. A station whose countdown ends
//!   in the same slot as another's collides with it; there is no capture.
//! - Success: the data frame (PLCP preamble and header, then MAC header, body and FCS at
//!   the data rate), SIFS, and the ACK at the basic rate. The frame is handed up at the
//!   end of the data frame and reported acknowledged at the end of the ACK (the
//!   cross-layer signal of LLE-TCP).
//! - Failure (a collision, or a frame the channel corrupts): the sender doubles CW (up to
//!   CWmax) and tries again, up to the retry limit, then drops the frame (reported) and
//!   resets CW. After a success CW goes back to CWmin and the station draws a new backoff
//!   for its next frame (post-backoff).
//! - Frames longer than `rts_threshold` go with RTS/CTS: a collision then costs only the
//!   RTS, and the long retry limit applies.

use crate::channel::Channel;
use crate::rng::{self, Rng};
use hetpath_proto::{Dur, Time};
use rand_core::Rng as _;
use std::collections::VecDeque;

/// DCF timing and limits. `Default` is IEEE 802.11b with the long PLCP preamble (seed 000
/// Table I).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcfParams {
    pub slot: Dur,
    pub sifs: Dur,
    pub difs: Dur,
    /// PLCP preamble and header, sent at 1 Mbit/s before every frame (192 us).
    pub plcp: Dur,
    /// Rate of data frames' MAC part, bit/s (11 Mbit/s).
    pub data_rate: u64,
    /// Rate of control frames (ACK, RTS, CTS), bit/s (1 Mbit/s).
    pub basic_rate: u64,
    /// MAC header and FCS of a data frame, bytes (24 + 4).
    pub mac_overhead: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Failed attempts of a frame at most: of frames up to `rts_threshold` and of the RTS
    /// of longer ones (dot11ShortRetryLimit).
    pub short_retry: u32,
    /// Failed attempts of a frame sent after its RTS/CTS (dot11LongRetryLimit).
    pub long_retry: u32,
    /// Frames whose MAC part is longer than this many bytes go with RTS/CTS (`None`: off).
    pub rts_threshold: Option<u32>,
    /// After a frame it could not decode (a collision or a corrupted frame) a station
    /// waits EIFS = SIFS + ACK time + DIFS, as the standard says; `false` waits DIFS as
    /// Bianchi's analysis assumes.
    pub eifs: bool,
}

/// Control frame sizes (bytes, with FCS).
const ACK_BYTES: u32 = 14;
const RTS_BYTES: u32 = 20;
const CTS_BYTES: u32 = 14;

impl Default for DcfParams {
    fn default() -> DcfParams {
        DcfParams {
            slot: Dur::from_micros(20),
            sifs: Dur::from_micros(10),
            difs: Dur::from_micros(50),
            plcp: Dur::from_micros(192),
            data_rate: 11_000_000,
            basic_rate: 1_000_000,
            mac_overhead: 28,
            cw_min: 31,
            cw_max: 1023,
            short_retry: 7,
            long_retry: 4,
            rts_threshold: None,
            eifs: true,
        }
    }
}

impl DcfParams {
    /// Air time of `bytes` at `rate` after the PLCP preamble and header: in 64 bits, or
    /// in 128 (`Dur::serialization`, the same rounding) for a size that would overflow.
    fn air(&self, bytes: u32, rate: u64) -> Dur {
        let t = match (bytes as u64).checked_mul(8 * 1_000_000_000) {
            Some(bits) => Dur(bits.div_ceil(rate)),
            None => Dur::serialization(bytes as u64, rate),
        };
        self.plcp + t
    }

    /// Air time of a data frame whose body is `body` bytes.
    pub fn data_time(&self, body: u32) -> Dur {
        self.air(body.saturating_add(self.mac_overhead), self.data_rate)
    }

    pub fn ack_time(&self) -> Dur {
        self.air(ACK_BYTES, self.basic_rate)
    }

    fn uses_rts(&self, body: u32) -> bool {
        self.rts_threshold
            .is_some_and(|t| body.saturating_add(self.mac_overhead) > t)
    }

    fn eifs_time(&self) -> Dur {
        self.sifs + self.ack_time() + self.difs
    }
}

/// One station's counters.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StationStats {
    /// Transmission attempts of data frames (or their RTS), first and retries.
    pub transmissions: u64,
    pub retries: u64,
    /// Attempts that met another station's.
    pub collisions: u64,
    /// Frames dropped after the retry limit.
    pub drops: u64,
    /// MAC ACKs received (frames delivered).
    pub acks: u64,
}

impl StationStats {
    /// Counter names and values, in report order.
    pub fn counters(&self) -> [(&'static str, f64); 5] {
        [
            ("transmissions", self.transmissions as f64),
            ("retries", self.retries as f64),
            ("collisions", self.collisions as f64),
            ("mac_drops", self.drops as f64),
            ("mac_acks", self.acks as f64),
        ]
    }
}

/// What an event produced.
#[derive(Debug)]
pub enum WlanEvent<P> {
    /// A frame reached its destination station (the end of the data frame).
    Delivered { from: usize, to: usize, payload: P },
    /// Its ACK reached the sender: the MAC's confirmation to the upper layers.
    Acked { station: usize },
    /// The sender gave up on it after the retry limit.
    Dropped { station: usize, payload: P },
}

struct Queued<P> {
    to: usize,
    body: u32,
    payload: Option<P>,
}

struct Station<P> {
    queue: VecDeque<Queued<P>>,
    /// The backoff: slots left, counted from `start` on the medium's slot grid.
    backoff: Option<(u64, u32)>,
    cw: u32,
    /// Failures of the frame at the head under each retry limit.
    short_fails: u32,
    long_fails: u32,
    rng: Rng,
    stats: StationStats,
}

/// What the medium is doing.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Idle; countdowns run on the grid `grid + k * slot` (k >= 0), `grid` being one
    /// IFS after the medium went idle.
    Idle { grid: Time },
    /// A data frame on the air from `station`, handed up at `data_end`, ACKed at `end`.
    Success {
        station: usize,
        data_end: Time,
        end: Time,
        delivered: bool,
    },
    /// Frames that fail, collided or (`corrupted`, a lone one) hit by the channel; the
    /// medium is busy until `end`.
    Failure {
        stations: Vec<usize>,
        corrupted: bool,
        end: Time,
    },
}

/// An 802.11 DCF medium and its stations (station 0 is the access point by convention;
/// the model does not care).
pub struct Dcf<P> {
    params: DcfParams,
    stations: Vec<Station<P>>,
    state: State,
    /// The event the medium wants next (`on_event` at another time does nothing).
    next: Option<Time>,
    /// Per sending station, the channel its frames meet when no other collides with them
    /// (`None`: error-free).
    channels: Vec<Option<Box<dyn Channel>>>,
    /// `transmit`'s list of the stations whose countdown ends, kept between calls (a
    /// `malloc` and a `free` per contention round otherwise).
    senders: Vec<usize>,
}

impl<P> Dcf<P> {
    /// `n` stations, each with its own random stream (`<name>/<i>`).
    pub fn new(params: DcfParams, n: usize, seed: u64, name: &str) -> Dcf<P> {
        assert!(n > 0 && params.slot > Dur::ZERO && params.cw_min <= params.cw_max);
        let stations = (0..n)
            .map(|i| Station {
                queue: VecDeque::new(),
                backoff: None,
                cw: params.cw_min,
                short_fails: 0,
                long_fails: 0,
                rng: rng::stream(seed, &format!("{name}/{i}")),
                stats: StationStats::default(),
            })
            .collect();
        Dcf {
            params,
            stations,
            state: State::Idle {
                grid: Time::ZERO + params.difs,
            },
            next: None,
            channels: (0..n).map(|_| None).collect(),
            senders: Vec::new(),
        }
    }

    /// A channel model on top for the frames `station` sends (any of `crate::channel`):
    /// it judges each data frame, MAC part and air time, that no other collided with.
    pub fn set_channel(&mut self, station: usize, channel: Box<dyn Channel>) {
        self.channels[station] = Some(channel);
    }

    pub fn params(&self) -> &DcfParams {
        &self.params
    }

    pub fn stats(&self, station: usize) -> StationStats {
        self.stations[station].stats
    }

    /// Frames waiting at `station`, the one on the air included.
    pub fn queued(&self, station: usize) -> usize {
        self.stations[station].queue.len()
    }

    /// The payloads `station` still holds: queued, or on the air and not yet handed up
    /// (a frame handed up and awaiting its ACK holds none).
    pub fn payloads(&self, station: usize) -> impl Iterator<Item = &P> {
        self.stations[station]
            .queue
            .iter()
            .filter_map(|q| q.payload.as_ref())
    }

    /// Takes out of `station`'s queue the frames `gone` picks (their receiver left the
    /// BSS: IEEE 802.11-2016 section 11.3.3 lets no data frame pass between stations
    /// that are not associated), but not one on the air now, whose attempt ends as it
    /// began. Appends their payloads to `out`, queue order. A station left with no frame
    /// keeps no countdown; one whose head frame went starts the next afresh (CW and
    /// retry counts reset, a new backoff), as after a drop.
    pub fn purge(
        &mut self,
        now: Time,
        station: usize,
        mut gone: impl FnMut(&P) -> bool,
        out: &mut Vec<P>,
    ) {
        let on_air = match &self.state {
            State::Idle { .. } => false,
            State::Success { station: i, .. } => *i == station,
            State::Failure { stations, .. } => stations.contains(&station),
        };
        let s = &mut self.stations[station];
        let mut k = 0;
        let mut lost_head = false;
        s.queue.retain_mut(|q| {
            let keep = (k == 0 && on_air) || !q.payload.as_ref().is_some_and(&mut gone);
            if !keep {
                out.extend(q.payload.take());
                lost_head |= k == 0;
            }
            k += 1;
            keep
        });
        if lost_head {
            s.cw = self.params.cw_min;
            (s.short_fails, s.long_fails) = (0, 0);
            s.backoff = None;
            self.draw_backoff(now, station);
        } else if s.queue.is_empty() {
            s.backoff = None;
        }
        self.plan();
    }

    /// When `on_event` has work.
    pub fn next_event(&self) -> Option<Time> {
        self.next
    }

    /// Queues a frame of `body` bytes (what the MAC carries: the IP datagram) from
    /// `from` to `to`. The caller bounds the queue (`queued`).
    pub fn enqueue(&mut self, now: Time, from: usize, to: usize, body: u32, payload: P) {
        let s = &mut self.stations[from];
        s.queue.push_back(Queued {
            to,
            body,
            payload: Some(payload),
        });
        if s.queue.len() == 1 && s.backoff.is_none() {
            self.draw_backoff(now, from);
        }
        self.plan();
    }

    /// Runs what is due at `now`, appending to `out`.
    pub fn on_event(&mut self, now: Time, out: &mut Vec<WlanEvent<P>>) {
        if self.next != Some(now) {
            return;
        }
        self.next = None;
        match std::mem::replace(&mut self.state, State::Idle { grid: now }) {
            State::Idle { grid } => {
                self.state = State::Idle { grid };
                self.transmit(now, grid);
            }
            State::Success {
                station,
                data_end,
                end,
                delivered,
            } => {
                if !delivered {
                    let s = &mut self.stations[station];
                    let q = s.queue.front_mut().expect("a frame on the air");
                    let payload = q.payload.take().expect("handed up once");
                    out.push(WlanEvent::Delivered {
                        from: station,
                        to: q.to,
                        payload,
                    });
                    self.state = State::Success {
                        station,
                        data_end,
                        end,
                        delivered: true,
                    };
                    self.next = Some(end);
                    return;
                }
                let s = &mut self.stations[station];
                s.queue.pop_front();
                s.stats.acks += 1;
                s.cw = self.params.cw_min;
                (s.short_fails, s.long_fails) = (0, 0);
                out.push(WlanEvent::Acked { station });
                self.draw_backoff(now, station);
                self.go_idle(now, self.params.difs);
            }
            State::Failure {
                stations,
                corrupted,
                ..
            } => {
                for &i in &stations {
                    self.fail(now, i, corrupted, out);
                }
                let ifs = if self.params.eifs {
                    self.params.eifs_time()
                } else {
                    self.params.difs
                };
                self.go_idle(now, ifs);
            }
        }
        self.plan();
    }

    /// A station with a frame and no backoff draws one in [0, CW], counted from the
    /// first slot of the grid at or after one DIFS from now (or from the grid's start).
    fn draw_backoff(&mut self, now: Time, i: usize) {
        let s = &mut self.stations[i];
        if s.queue.is_empty() {
            s.backoff = None;
            return;
        }
        let slots = (s.rng.next_u64() % (s.cw as u64 + 1)) as u32;
        let start = match self.state {
            State::Idle { grid } => {
                let from = now + self.params.difs;
                if from <= grid {
                    0
                } else {
                    (from.since(grid).0).div_ceil(self.params.slot.0)
                }
            }
            _ => 0, // set again when the medium goes idle
        };
        s.backoff = Some((start, slots));
    }

    /// The medium goes idle at `now`; countdowns resume `ifs` later from what is left.
    fn go_idle(&mut self, now: Time, ifs: Dur) {
        self.state = State::Idle { grid: now + ifs };
        for s in &mut self.stations {
            if let Some((_, left)) = s.backoff {
                s.backoff = Some((0, left));
            }
        }
    }

    /// Asks for the next event: the end of what is on the air, or the first countdown to
    /// end. A countdown that would end past the last representable instant never ends
    /// (checked arithmetic: slot x count used to wrap round to a time no countdown ends
    /// at); the loader's bound on the slot keeps every real run far from it.
    fn plan(&mut self) {
        self.next = match &self.state {
            State::Idle { grid } => self
                .stations
                .iter()
                .filter_map(|s| s.backoff.map(|(start, left)| start + left as u64))
                .min()
                .and_then(|k| k.checked_mul(self.params.slot.0))
                .and_then(|d| grid.0.checked_add(d))
                .filter(|&t| t < u64::MAX)
                .map(Time),
            State::Success {
                data_end,
                delivered,
                end,
                ..
            } => Some(if *delivered { *end } else { *data_end }),
            State::Failure { end, .. } => Some(*end),
        };
    }

    /// Countdowns ending at `now` (slot `k` of `grid`) transmit; the others freeze with
    /// what they have left.
    fn transmit(&mut self, now: Time, grid: Time) {
        let k = now.since(grid).0 / self.params.slot.0;
        let mut senders = std::mem::take(&mut self.senders);
        senders.clear();
        for (i, s) in self.stations.iter_mut().enumerate() {
            let Some((start, left)) = s.backoff else {
                continue;
            };
            if start + left as u64 == k {
                senders.push(i);
                s.backoff = None;
            } else if k > start {
                s.backoff = Some((0, left - (k - start) as u32));
            } else {
                s.backoff = Some((0, left));
            }
        }
        let p = self.params;
        let mut longest = Dur::ZERO;
        for &i in &senders {
            let s = &mut self.stations[i];
            let q = s
                .queue
                .front()
                .expect("a station counts down only with a frame");
            s.stats.transmissions += 1;
            if s.short_fails + s.long_fails > 0 {
                s.stats.retries += 1;
            }
            let first = if p.uses_rts(q.body) {
                p.air(RTS_BYTES, p.basic_rate)
            } else {
                p.data_time(q.body)
            };
            longest = longest.max(first);
        }
        if senders.len() > 1 {
            for &i in &senders {
                self.stations[i].stats.collisions += 1;
            }
            self.state = State::Failure {
                stations: senders.clone(),
                corrupted: false,
                end: now + longest,
            };
            self.senders = senders;
            return;
        }
        // No countdown ends at `now` (an event the medium did not ask for): nothing goes
        // on the air, and `on_event` plans again.
        let Some(&i) = senders.first() else {
            self.senders = senders;
            return;
        };
        self.senders = senders;
        let body = self.stations[i].queue.front().expect("a frame").body;
        let handshake = if p.uses_rts(body) {
            p.air(RTS_BYTES, p.basic_rate) + p.sifs + p.air(CTS_BYTES, p.basic_rate) + p.sifs
        } else {
            Dur::ZERO
        };
        let (start, air) = (now + handshake, p.data_time(body));
        let corrupted = self.channels[i]
            .as_mut()
            .is_some_and(|c| !c.transmit(start, air, body + p.mac_overhead));
        let data_end = start + air;
        if corrupted {
            self.state = State::Failure {
                stations: vec![i],
                corrupted: true,
                end: data_end,
            };
        } else {
            self.state = State::Success {
                station: i,
                data_end,
                end: data_end + p.sifs + p.ack_time(),
                delivered: false,
            };
        }
    }

    /// Station `i`'s attempt failed: retry with a doubled window, or drop. A collision
    /// with RTS/CTS on is the RTS's, under the short limit; a corrupted frame after its
    /// RTS/CTS is under the long one (IEEE 802.11-2016 10.3.4.4).
    fn fail(&mut self, now: Time, i: usize, corrupted: bool, out: &mut Vec<WlanEvent<P>>) {
        let p = self.params;
        let s = &mut self.stations[i];
        let body = s.queue.front().expect("a frame on the air").body;
        let over = if corrupted && p.uses_rts(body) {
            s.long_fails += 1;
            s.long_fails >= p.long_retry
        } else {
            s.short_fails += 1;
            s.short_fails >= p.short_retry
        };
        if over {
            let q = s.queue.pop_front().expect("a frame");
            s.stats.drops += 1;
            s.cw = p.cw_min;
            (s.short_fails, s.long_fails) = (0, 0);
            if let Some(payload) = q.payload {
                out.push(WlanEvent::Dropped {
                    station: i,
                    payload,
                });
            }
        } else {
            s.cw = (2 * (s.cw + 1) - 1).min(p.cw_max);
        }
        self.draw_backoff(now, i);
    }
}

#[cfg(test)]
#[path = "wlan_tests.rs"]
mod tests;
