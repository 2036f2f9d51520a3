//! The link core, sans IO: both directions of one emulated link as the simulator's
//! `LinkDir`s (queue, transmitter, channel, wire), their scheduled outages, and the
//! packet buffers. The driver gives it packets and the time (`handle_read`,
//! `handle_timeout`), writes out what `poll_transmit` hands it, and sleeps until
//! `poll_timeout`. Nothing here reads a clock (docs/architecture.md, convention 2).
//!
//! Every event runs at the time it was scheduled for, not the time the driver woke up:
//! a transmission that ends at t starts the next one at t even if the driver saw it at
//! t + 50 us, so wake-up latency delays packets but never slows the link down. With a
//! sampling interval, the link's state is reported to the observer at every multiple of
//! it (`set_sampling`), as the simulator's `Sample` event does, so the series sit on the
//! same grid as `hetpath run`'s.

use crate::buffers::{Buffers, Slot};
use crate::fate::{Dir, Fate, LinkSample, Observer, Outcome};
use hetpath_proto::{Dur, Time};
use hetpath_sim::link::{LinkDir, LinkStats, Wakeups};
use hetpath_sim::sim::{DetachedDir, StateChange};
use hetpath_sim::units::QueueLimit;
use std::collections::VecDeque;

/// The most buffer slots per direction (2048 bytes each, mapped only when used).
const MAX_SLOTS_PER_DIR: u64 = 65_536;
/// The smallest packet worth a slot when sizing the slab for a full wire: an IPv4
/// header and a TCP header (a pure ACK).
const MIN_PACKET: u64 = 40;

/// What the core knows of a packet in one of its slots.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    seq: u64,
    entered: Time,
    transmission: Option<u64>,
    bytes: u32,
    dir_ab: bool,
    held: bool,
}

pub struct Emulator<O: Observer> {
    dirs: [LinkDir<Slot>; 2],
    changes: [VecDeque<(Time, StateChange)>; 2],
    bufs: Buffers,
    meta: Vec<Meta>,
    /// Per direction: when the transmission ends and which packet it is, when the wire's
    /// head arrives, how many transmissions the channel judged and packets were read.
    tx_done: [Option<(Time, Slot)>; 2],
    arrival: [Option<Time>; 2],
    transmissions: [u64; 2],
    read: [u64; 2],
    no_buffer: [u64; 2],
    /// Delivered packets the driver has not written out yet, with their direction.
    out: VecDeque<(Dir, Slot)>,
    /// The sampling interval and the next sampling time; `None`: no series.
    sampling: Option<(Dur, Time)>,
    /// Bytes of link-layer header in front of each packet (0: TUN, IP packets; 14:
    /// AF_PACKET, Ethernet frames): not counted in the packet's size, and not captured.
    link_header: usize,
    now: Time,
    obs: O,
}

impl<O: Observer> Emulator<O> {
    /// The core for a detached link (`Simulation::detach_link`): direction a -> b first.
    pub fn new(link: [DetachedDir; 2], obs: O) -> Emulator<O> {
        let slots = link.iter().map(slots_for).sum::<u64>() as usize;
        Emulator::with_slots(link, obs, slots)
    }

    /// [`Emulator::new`] with a given number of buffer slots.
    pub fn with_slots(link: [DetachedDir; 2], obs: O, slots: usize) -> Emulator<O> {
        let [ab, ba] = link;
        let changes = [ab.changes.into(), ba.changes.into()];
        let dirs = [
            LinkDir::new(ab.params, ab.channel),
            LinkDir::new(ba.params, ba.channel),
        ];
        Emulator {
            dirs,
            changes,
            bufs: Buffers::new(slots),
            meta: vec![Meta::default(); slots],
            tx_done: [None; 2],
            arrival: [None; 2],
            transmissions: [0; 2],
            read: [0; 2],
            no_buffer: [0; 2],
            out: VecDeque::new(),
            sampling: None,
            link_header: 0,
            now: Time::ZERO,
            obs,
        }
    }

    /// Reports both directions' state (`Observer::sample`) at time zero and every
    /// `interval` after it, for as long as the core runs; `None` (the default) turns it
    /// off. Call before the first input. The driver then always has a deadline.
    pub fn set_sampling(&mut self, interval: Option<Dur>) {
        self.sampling = interval.filter(|i| *i > Dur::ZERO).map(|i| (i, self.now));
    }

    /// Packets carry a link-layer header of `bytes` in front of the IP packet (14 for
    /// Ethernet frames, and 4 more per VLAN tag): the link sizes each packet, and the
    /// fates report it, without it, as the TUN mode and `hetpath run` count, and the capture gets the IP packet
    /// alone (frames of other EtherTypes, e.g. ARP, cross the link but are not
    /// captured: the capture is LINKTYPE_RAW). Call before the first input.
    pub fn set_link_header(&mut self, bytes: usize) {
        self.link_header = bytes;
    }

    pub fn observer(&mut self) -> &mut O {
        &mut self.obs
    }

    /// The observer back, when the run is over (to close its files).
    pub fn into_observer(self) -> O {
        self.obs
    }

    pub fn stats(&self, d: Dir) -> &LinkStats {
        &self.dirs[d.index()].stats
    }

    /// Packets dropped for want of a buffer slot, per direction.
    pub fn no_buffer(&self, d: Dir) -> u64 {
        self.no_buffer[d.index()]
    }

    pub fn slots(&self) -> usize {
        self.bufs.capacity()
    }

    /// A free slot to read a packet into (`space`), or `None`: the driver then reads the
    /// packet into scratch and reports it with `handle_no_buffer`.
    pub fn take_slot(&mut self) -> Option<Slot> {
        self.bufs.take()
    }

    pub fn space(&mut self, s: Slot) -> &mut [u8] {
        self.bufs.space(s)
    }

    /// Gives back a slot taken but not filled (the read found nothing).
    pub fn return_slot(&mut self, s: Slot) {
        self.bufs.give_back(s)
    }

    /// A packet of `len` bytes, read into slot `s` at `now`, enters direction `dir`.
    pub fn handle_read(&mut self, now: Time, dir: Dir, s: Slot, len: usize) {
        self.handle_timeout(now);
        let now = self.now;
        let d = dir.index();
        self.bufs.set_len(s, len);
        let frame = self.bufs.get(s);
        let bytes = (frame.len() - header_len(frame, self.link_header)) as u32;
        self.meta[s.index()] = Meta {
            seq: self.read[d],
            entered: now,
            transmission: None,
            bytes,
            dir_ab: dir == Dir::Ab,
            held: true,
        };
        self.read[d] += 1;
        match self.dirs[d].enqueue(now, s, bytes) {
            Ok(w) => self.wake(d, now, w),
            Err(s) => self.settle(s, now, Outcome::Queue),
        }
    }

    /// Copies `bytes` into a slot and reads it in (tests, and drivers without zero-copy
    /// reads); a packet longer than a slot is cut.
    pub fn handle_datagram(&mut self, now: Time, dir: Dir, bytes: &[u8]) {
        let Some(s) = self.take_slot() else {
            return self.handle_no_buffer(now, dir, bytes.len());
        };
        let n = bytes.len().min(crate::buffers::SLOT_BYTES);
        self.space(s)[..n].copy_from_slice(&bytes[..n]);
        self.handle_read(now, dir, s, n);
    }

    /// A packet was read with no slot free: it is dropped and reported.
    pub fn handle_no_buffer(&mut self, now: Time, dir: Dir, len: usize) {
        self.handle_timeout(now);
        let d = dir.index();
        self.no_buffer[d] += 1;
        let f = Fate {
            dir,
            seq: self.read[d],
            transmission: None,
            bytes: len.saturating_sub(self.link_header) as u32,
            entered: self.now,
            left: self.now,
            outcome: Outcome::NoBuffer,
        };
        self.read[d] += 1;
        self.obs.fate(&f);
    }

    /// Runs every event due by `now`, each at its own scheduled time, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        while let Some((t, what)) = self.next_event().filter(|e| e.0 <= now) {
            self.now = self.now.max(t);
            match what {
                Event::Change(d) => {
                    let (_, c) = self.changes[d].pop_front().expect("a change is due");
                    self.change(d, t, c);
                }
                Event::TxDone(d) => self.tx_done(d, t),
                Event::Arrival(d) => self.arrive(d, t),
                Event::Sample => self.sample(t),
            }
        }
        self.now = self.now.max(now);
    }

    /// The earliest time `handle_timeout` has work.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_event().map(|e| e.0)
    }

    /// A delivered packet to write out on the far side of `Dir`; its bytes are
    /// `packet(slot)` until the driver calls `release(slot)`.
    pub fn poll_transmit(&mut self) -> Option<(Dir, Slot)> {
        self.out.pop_front()
    }

    pub fn packet(&self, s: Slot) -> &[u8] {
        self.bufs.get(s)
    }

    pub fn release(&mut self, s: Slot) {
        self.bufs.give_back(s)
    }

    /// Reports every packet still held (queued, in the transmitter, on the wire, or not
    /// yet written out) as `InFlight`; call once, when the driver stops.
    pub fn finish(&mut self) {
        let now = self.now;
        for i in 0..self.meta.len() {
            if self.meta[i].held {
                let m = self.meta[i];
                self.meta[i].held = false;
                self.obs.fate(&fate(m, now, Outcome::InFlight));
            }
        }
    }

    fn next_event(&self) -> Option<(Time, Event)> {
        let mut best: Option<(Time, Event)> = None;
        let mut consider = |t: Option<Time>, e: Event| {
            if let Some(t) = t {
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, e));
                }
            }
        };
        for d in 0..2 {
            consider(self.changes[d].front().map(|c| c.0), Event::Change(d));
        }
        for d in 0..2 {
            consider(self.tx_done[d].map(|x| x.0), Event::TxDone(d));
        }
        for d in 0..2 {
            consider(self.arrival[d], Event::Arrival(d));
        }
        // Last, so that what else happens at a sampling time is in the sample.
        consider(self.sampling.map(|s| s.1), Event::Sample);
        best
    }

    fn sample(&mut self, t: Time) {
        for d in Dir::BOTH {
            let l = &self.dirs[d.index()];
            let s = LinkSample {
                queue_pkts: l.queue_len() as u64,
                queue_bytes: l.queue_bytes(),
                tx_bytes: l.stats.tx_bytes,
            };
            self.obs.sample(t, d, &s);
        }
        if let Some((interval, next)) = self.sampling {
            let after = next + interval;
            // Saturated at Time::MAX: sampling there again would never end.
            self.sampling = (after > next).then_some((interval, after));
        }
    }

    /// Takes what the link direction asked for: a transmission started (shown to the
    /// observer), its end, the wire's next arrival.
    fn wake(&mut self, d: usize, now: Time, w: Wakeups<Slot>) {
        if let Some(s) = w.started {
            let dir = Dir::BOTH[d];
            if let Some(ip) = ip_packet(self.bufs.get(s), self.link_header) {
                self.obs.started(now, dir, ip);
            }
            let end = w.tx_done.expect("a started transmission has an end");
            self.tx_done[d] = Some((end, s));
        }
        if let Some(t) = w.arrival {
            self.arrival[d] = Some(t);
        }
    }

    fn tx_done(&mut self, d: usize, t: Time) {
        let (_, s) = self.tx_done[d].take().expect("a transmission is due");
        self.meta[s.index()].transmission = Some(self.transmissions[d]);
        self.transmissions[d] += 1;
        let done = self.dirs[d].on_tx_done(t);
        self.wake(d, t, done.wake);
        if let Some(lost) = done.lost {
            self.settle(lost, t, Outcome::Channel);
        }
    }

    fn arrive(&mut self, d: usize, t: Time) {
        let (k, next) = self.dirs[d].on_arrival(t);
        self.arrival[d] = next;
        if let Some(s) = k {
            let m = self.meta[s.index()];
            self.meta[s.index()].held = false;
            self.obs.fate(&fate(m, t, Outcome::Delivered));
            self.out.push_back((Dir::BOTH[d], s));
        }
    }

    fn change(&mut self, d: usize, t: Time, c: StateChange) {
        let (w, mut lost) = self.dirs[d].set_up(t, c == StateChange::Up);
        if c != StateChange::Up {
            // Whatever was in the transmitter and on the wire is gone with the link.
            self.tx_done[d] = None;
            self.arrival[d] = None;
        }
        if c == StateChange::Detach {
            lost.extend(self.dirs[d].flush());
        }
        for s in lost {
            self.settle(s, t, Outcome::Outage);
        }
        self.wake(d, t, w);
    }

    /// A packet's fate is settled inside the emulator: report it and free its slot.
    fn settle(&mut self, s: Slot, t: Time, outcome: Outcome) {
        let m = self.meta[s.index()];
        self.meta[s.index()].held = false;
        self.obs.fate(&fate(m, t, outcome));
        self.bufs.give_back(s);
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Change(usize),
    TxDone(usize),
    Arrival(usize),
    Sample,
}

fn fate(m: Meta, left: Time, outcome: Outcome) -> Fate {
    Fate {
        dir: Dir::from_side_a(m.dir_ab),
        seq: m.seq,
        transmission: m.transmission,
        bytes: m.bytes,
        entered: m.entered,
        left,
        outcome,
    }
}

/// The length of `frame`'s link header, `header` bytes (0: none), with up to two VLAN
/// tags (802.1Q, 802.1ad) after an Ethernet header's addresses; never more than the frame.
fn header_len(frame: &[u8], header: usize) -> usize {
    let mut h = header;
    if header > 0 {
        for _ in 0..2 {
            match frame.get(h - 2..h) {
                Some([0x81, 0x00] | [0x88, 0xa8]) => h += 4,
                _ => break,
            }
        }
    }
    h.min(frame.len())
}

/// The IP packet in `frame` behind a link header of `header` bytes: all of it without
/// one, else what follows an Ethernet header (and its VLAN tags) whose EtherType is
/// IPv4 or IPv6.
fn ip_packet(frame: &[u8], header: usize) -> Option<&[u8]> {
    if header == 0 {
        return Some(frame);
    }
    let h = header_len(frame, header);
    let ethertype = frame.get(h.checked_sub(2)?..h)?;
    matches!(ethertype, [0x08, 0x00] | [0x86, 0xdd]).then(|| &frame[h..])
}

/// Slots one direction can hold at once: a full queue, the transmitter, and a wire full
/// of the smallest packets, plus what waits to be written out.
fn slots_for(d: &DetachedDir) -> u64 {
    let queue = match d.params.queue {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(b) => b / MIN_PACKET + 1,
    };
    let wire_bytes = (d.params.rate_bps as u128 * d.params.delay.0 as u128 / 8_000_000_000) as u64;
    (queue + wire_bytes / MIN_PACKET + 64).min(MAX_SLOTS_PER_DIR)
}

#[cfg(test)]
#[path = "emulator_tests.rs"]
mod tests;
