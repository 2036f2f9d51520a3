//! One direction of a point-to-point link: a DropTail queue, a transmitter that
//! serialises at the link rate (times the channel's rate factor), the channel model that
//! decides each packet's fate, and the propagation delay.
//!
//! Packets on the wire are kept in a FIFO: the delay is constant per direction, so they
//! arrive in the order they left and the engine needs only one pending arrival event per
//! direction. Memory is bounded by the queue limit plus the bandwidth-delay product.
//!
//! A link direction holds keys into the simulation's `Frames`, not the frames: a frame
//! stays where it is from the moment it enters the network until a machine takes it, so
//! a hop moves four bytes, not a 184-byte frame (memmove was a quarter of a run).

use crate::channel::Channel;
use crate::ids::NodeId;
use hetpath_proto::{Dur, Packet, Time};
use serde::Serialize;
use std::collections::VecDeque;

pub use crate::units::QueueLimit;

/// A packet in the network, with the identity the simulator gave it when it entered
/// (the IP identification in captures).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub uid: u64,
    pub packet: Packet,
}

/// A frame's place in `Frames` (docs/architecture.md, convention 7).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameKey(u32);

/// The frames in the network, each where it was put until it is taken out: a slab whose
/// free places keep what they last held, so that a machine can write the packet it sends
/// straight into the place it will have (`vacant`, `occupy`) rather than build it apart
/// and have it copied in, which reads it back whole right after the narrower stores
/// that built it (a store-forwarding stall).
#[derive(Default)]
pub struct Frames {
    places: Vec<Frame>,
    /// The free places, the next one last.
    free: Vec<u32>,
}

/// The `uid` of a free place (checked in debug builds).
const FREE: u64 = u64::MAX;

impl Frames {
    pub fn insert(&mut self, f: Frame) -> FrameKey {
        let k = self.vacant();
        self.places[k.0 as usize] = f;
        self.free.pop();
        k
    }

    /// The place the next frame will have. Its packet is whatever the place last held:
    /// write a packet there (`packet_at`), then `occupy` it, or leave it free.
    pub fn vacant(&mut self) -> FrameKey {
        if let Some(&k) = self.free.last() {
            return FrameKey(k);
        }
        let k = self.places.len() as u32;
        self.places.push(Frame {
            uid: FREE,
            packet: Packet::empty(),
        });
        self.free.push(k);
        FrameKey(k)
    }

    /// Frames in the network: places taken and not freed.
    pub fn live(&self) -> usize {
        self.places.len() - self.free.len()
    }

    /// The packet in place `k`, free or not: where a machine writes the packet it sends.
    pub fn packet_at(&mut self, k: FrameKey) -> &mut Packet {
        &mut self.places[k.0 as usize].packet
    }

    /// The frame written in the `vacant` place `k` enters the network as `uid`.
    pub fn occupy(&mut self, k: FrameKey, uid: u64) {
        debug_assert_eq!(self.free.last(), Some(&k.0), "occupy the vacant place");
        self.free.pop();
        self.places[k.0 as usize].uid = uid;
    }

    /// Takes frame `k` out.
    pub fn remove(&mut self, k: FrameKey) -> Frame {
        let dead = Frame {
            uid: FREE,
            packet: Packet::empty(),
        };
        self.free.push(k.0);
        std::mem::replace(&mut self.places[k.0 as usize], dead)
    }

    /// Frees frame `k`'s place without moving it out: its packet stays there, dropped
    /// when the place is written again.
    pub fn discard(&mut self, k: FrameKey) {
        let f = &mut self.places[k.0 as usize];
        debug_assert_ne!(f.uid, FREE, "discard a frame once");
        if cfg!(debug_assertions) {
            f.uid = FREE;
        }
        self.free.push(k.0);
    }
}

impl std::ops::Index<FrameKey> for Frames {
    type Output = Frame;
    fn index(&self, k: FrameKey) -> &Frame {
        let f = &self.places[k.0 as usize];
        debug_assert_ne!(f.uid, FREE, "a frame in the network");
        f
    }
}

impl std::ops::IndexMut<FrameKey> for Frames {
    fn index_mut(&mut self, k: FrameKey) -> &mut Frame {
        let f = &mut self.places[k.0 as usize];
        debug_assert_ne!(f.uid, FREE, "a frame in the network");
        f
    }
}

/// Where a link direction goes and how fast.
#[derive(Debug, Clone)]
pub struct LinkParams {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: Dur,
    pub queue: QueueLimit,
}

/// A link direction's counters; the summary reports them as they are (`results.rs`),
/// in this order, except `busy`, which it reports as a utilization.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct LinkStats {
    /// Dropped at the queue (full).
    pub drops: u64,
    pub max_queue_pkts: u64,
    pub max_queue_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Lost by the channel, or on the wire when the link went down.
    pub lost_packets: u64,
    /// Packets handed to the direction (queued, sent at once or dropped at the queue).
    pub offered: u64,
    /// Packets handed to the far node.
    pub delivered: u64,
    /// The part of `lost_packets` lost to an outage: on the wire or being serialised
    /// when the direction went down, or queued when a wireless peer went away.
    pub outage_losses: u64,
    #[serde(skip)]
    pub busy: Dur,
}

impl LinkStats {
    /// `lost_packets` that the channel (or a link layer's retries) lost.
    pub fn channel_losses(&self) -> u64 {
        self.lost_packets.saturating_sub(self.outage_losses)
    }
}

/// Generic over what it queues (`K`): the simulation's `FrameKey`s, or a live driver's
/// own buffer handles (`hetpath-live`), so both run the same queue, transmitter, channel
/// and wire.
pub struct LinkDir<K = FrameKey> {
    pub params: LinkParams,
    channel: Box<dyn Channel>,
    /// The channel loses nothing (`Channel::lossless`): not asked.
    lossless: bool,
    /// Effective rate seen by IP: nominal rate times the channel's rate factor.
    ip_rate_bps: u64,
    /// Nanoseconds per byte at that rate when it is a whole number (most rates), which
    /// spares a 128-bit division per packet; `Dur::serialization` otherwise.
    ns_per_byte: Option<u64>,
    /// How long the packet being serialised takes, and its size.
    tx_dur: Dur,
    tx_size: u32,
    /// Queued packets with their sizes, measured once on entry (`Packet::size` walks the
    /// headers and was a tenth of a run when asked at every step).
    queue: VecDeque<(K, u32)>,
    queue_bytes: u64,
    /// The packet being serialised, if any.
    transmitting: Option<K>,
    /// Packets propagating: (arrival time, packet, its size), the size handed on so
    /// that the next hop need not measure the packet again.
    wire: VecDeque<(Time, K, u32)>,
    up: bool,
    /// Bumped when the link goes down, so pending events for lost packets are ignored.
    pub generation: u64,
    pub stats: LinkStats,
    /// Sees every packet as its transmission starts (a tap on the interface; called by
    /// the simulation, which holds the frames, when `Wakeups::started` says so).
    pub capture: Option<CaptureTap>,
}

/// A tap that sees each packet as its transmission starts.
pub type CaptureTap = Box<dyn FnMut(Time, &Frame) + Send>;

/// What the caller must schedule after an operation on a link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakeups<K = FrameKey> {
    /// Transmission completes at this time.
    pub tx_done: Option<Time>,
    /// The head of the wire FIFO arrives at this time.
    pub arrival: Option<Time>,
    /// This packet's transmission started (for the capture tap).
    pub started: Option<K>,
}

impl<K> Default for Wakeups<K> {
    fn default() -> Self {
        Wakeups {
            tx_done: None,
            arrival: None,
            started: None,
        }
    }
}

/// What finishing a transmission did.
#[derive(Debug)]
pub struct TxDone<K = FrameKey> {
    pub wake: Wakeups<K>,
    /// The packet, if the channel lost it.
    pub lost: Option<K>,
}

impl<K> Default for TxDone<K> {
    fn default() -> Self {
        TxDone {
            wake: Wakeups::default(),
            lost: None,
        }
    }
}

impl<K: Copy> LinkDir<K> {
    pub fn new(params: LinkParams, channel: Box<dyn Channel>) -> LinkDir<K> {
        let ip_rate_bps = ((params.rate_bps as f64) * channel.rate_factor())
            .round()
            .max(1.0) as u64;
        const NS_BITS: u64 = 8_000_000_000;
        LinkDir {
            params,
            lossless: channel.lossless(),
            channel,
            ip_rate_bps,
            ns_per_byte: NS_BITS
                .is_multiple_of(ip_rate_bps)
                .then(|| NS_BITS / ip_rate_bps),
            tx_dur: Dur::ZERO,
            tx_size: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            transmitting: None,
            wire: VecDeque::new(),
            up: true,
            generation: 0,
            stats: LinkStats::default(),
            capture: None,
        }
    }

    pub fn ip_rate_bps(&self) -> u64 {
        self.ip_rate_bps
    }
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    /// A packet is being serialised.
    pub fn transmitting(&self) -> bool {
        self.transmitting.is_some()
    }
    /// Packets it holds: queued, being serialised, or on the wire.
    pub fn in_flight(&self) -> u64 {
        (self.queue.len() + self.wire.len()) as u64 + self.transmitting.is_some() as u64
    }

    /// Serialisation time of `bytes` at the IP rate: exactly `Dur::serialization`.
    fn tx_time(&self, bytes: u64) -> Dur {
        match self.ns_per_byte {
            Some(k) => Dur(bytes.saturating_mul(k)),
            None => Dur::serialization(bytes, self.ip_rate_bps),
        }
    }

    /// Whether the queue would take a packet of `size` bytes now.
    pub fn has_room(&self, size: u32) -> bool {
        match self.params.queue {
            QueueLimit::Packets(n) => (self.queue.len() as u64) < n,
            QueueLimit::Bytes(b) => self.queue_bytes + size as u64 <= b,
        }
    }

    /// Offers packet `p` of `size` bytes to the interface. Gives it back (and counts a
    /// drop) if the queue is full; the packet being serialised does not count against the
    /// limit.
    pub fn enqueue(&mut self, now: Time, p: K, size: u32) -> Result<Wakeups<K>, K> {
        self.stats.offered += 1;
        if !self.has_room(size) {
            self.stats.drops += 1;
            return Err(p);
        }
        let len = self.queue.len() as u64 + 1;
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(len);
        self.stats.max_queue_bytes = self
            .stats
            .max_queue_bytes
            .max(self.queue_bytes + size as u64);
        if len == 1 && self.transmitting.is_none() && self.up {
            // Straight to the idle transmitter (counted above as if it had been queued).
            return Ok(self.start(now, p, size));
        }
        self.queue.push_back((p, size));
        self.queue_bytes += size as u64;
        Ok(self.try_start(now))
    }

    /// Starts serialising the head of the queue if the transmitter is idle and up.
    fn try_start(&mut self, now: Time) -> Wakeups<K> {
        if self.transmitting.is_some() || !self.up {
            return Wakeups::default();
        }
        let Some((p, size)) = self.queue.pop_front() else {
            return Wakeups::default();
        };
        self.queue_bytes -= size as u64;
        self.start(now, p, size)
    }

    /// Starts serialising `p`, of `size` bytes, out of the queue.
    fn start(&mut self, now: Time, p: K, size: u32) -> Wakeups<K> {
        let dur = self.tx_time(size as u64);
        self.tx_dur = dur;
        self.tx_size = size;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += size as u64;
        self.stats.busy = self.stats.busy + dur;
        self.transmitting = Some(p);
        Wakeups {
            tx_done: Some(now + dur),
            arrival: None,
            started: Some(p),
        }
    }

    /// The packet being serialised has left the transmitter: the channel decides its fate
    /// and, if it survives, it propagates.
    pub fn on_tx_done(&mut self, now: Time) -> TxDone<K> {
        let Some(p) = self.transmitting.take() else {
            return TxDone::default();
        };
        let (size, dur) = (self.tx_size, self.tx_dur);
        let was_empty = self.wire.is_empty();
        let mut lost = None;
        if self.lossless || self.channel.transmit(now - dur, dur, size) {
            self.wire.push_back((now + self.params.delay, p, size));
        } else {
            self.stats.lost_packets += 1;
            lost = Some(p);
        }
        let mut wake = self.try_start(now);
        if was_empty {
            wake.arrival = self.wire.front().map(|e| e.0);
        }
        TxDone { wake, lost }
    }

    /// The head of the wire FIFO arrives; returns it and the next arrival time.
    pub fn on_arrival(&mut self, now: Time) -> (Option<K>, Option<Time>) {
        let (p, next) = self.on_arrival_sized(now);
        (p.map(|p| p.0), next)
    }

    /// `on_arrival`, with the packet's size as measured when it joined the queue.
    #[inline]
    pub fn on_arrival_sized(&mut self, now: Time) -> (Option<(K, u32)>, Option<Time>) {
        match self.wire.front() {
            Some(&(t, p, size)) if t <= now => {
                self.wire.pop_front();
                self.stats.delivered += 1;
                (Some((p, size)), self.wire.front().map(|e| e.0))
            }
            _ => (None, None),
        }
    }

    /// Empties the queue (a wireless interface whose peer is gone drops what waits);
    /// returns the packets, counted as lost.
    pub fn flush(&mut self) -> Vec<K> {
        self.queue_bytes = 0;
        let lost: Vec<K> = self.queue.drain(..).map(|e| e.0).collect();
        self.stats.lost_packets += lost.len() as u64;
        self.stats.outage_losses += lost.len() as u64;
        lost
    }

    /// Takes the link direction down or up. Going down loses what is on the wire and
    /// being serialised (returned); the queue holds (DropTail still applies). Coming up
    /// resumes.
    pub fn set_up(&mut self, now: Time, up: bool) -> (Wakeups<K>, Vec<K>) {
        if up == self.up {
            return (Wakeups::default(), Vec::new());
        }
        self.up = up;
        if !up {
            self.generation += 1;
            let lost: Vec<K> = self
                .wire
                .drain(..)
                .map(|e| e.1)
                .chain(self.transmitting.take())
                .collect();
            self.stats.lost_packets += lost.len() as u64;
            self.stats.outage_losses += lost.len() as u64;
            (Wakeups::default(), lost)
        } else {
            (self.try_start(now), Vec::new())
        }
    }

    /// Its parameters and channel, for a driver that builds its own direction from a
    /// loaded scenario's (`sim::Simulation::detach_link`); only meaningful before use.
    pub fn into_parts(self) -> (LinkParams, Box<dyn Channel>) {
        (self.params, self.channel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::NoLoss;
    use hetpath_proto::packet::{Addr, Body};

    fn frame(uid: u64) -> Frame {
        Frame {
            uid,
            packet: Packet::new(Addr(1), Addr(2), Body::Raw { proto: 0, len: 0 }),
        }
    }

    /// A packet written into the vacant place is the frame there once occupied; a freed
    /// place is the next one handed out, and a place left vacant stays free.
    #[test]
    fn frames_are_written_where_they_stay() {
        let mut f = Frames::default();
        let a = f.insert(frame(7));
        let k = f.vacant();
        assert_ne!(k, a);
        *f.packet_at(k) = Packet::new(Addr(3), Addr(4), Body::Raw { proto: 0, len: 9 });
        f.occupy(k, 8);
        assert_eq!((f[k].uid, f[k].packet.ip.dst), (8, Addr(4)));
        assert_eq!(f[a].uid, 7);
        f.discard(a);
        assert_eq!(f.vacant(), a, "the freed place comes next");
        assert_eq!(f.vacant(), a, "not occupied: still free");
        assert_eq!(f.insert(frame(9)), a);
        assert_eq!(f.remove(k).uid, 8);
        assert_eq!(f.remove(a).uid, 9);
    }

    /// A packet for an idle transmitter starts at once and still counts in the queue's
    /// maxima, as if it had been queued for an instant.
    #[test]
    fn idle_transmitter_starts_at_once() {
        let params = LinkParams {
            name: "l".into(),
            from: NodeId(0),
            to: NodeId(1),
            rate_bps: 8_000_000,
            delay: Dur::from_millis(1),
            queue: QueueLimit::Packets(2),
        };
        let mut d: LinkDir<u32> = LinkDir::new(params, Box::new(NoLoss));
        let w = d.enqueue(Time::ZERO, 1, 1000).expect("room");
        assert_eq!(w.started, Some(1));
        assert_eq!(w.tx_done, Some(Time::ZERO + Dur::from_millis(1)));
        assert_eq!((d.queue_len(), d.queue_bytes()), (0, 0));
        assert_eq!((d.stats.max_queue_pkts, d.stats.max_queue_bytes), (1, 1000));
        let w = d.enqueue(Time::ZERO, 2, 500).expect("room");
        assert_eq!(w.started, None);
        assert_eq!((d.queue_len(), d.queue_bytes()), (1, 500));
        assert_eq!((d.stats.max_queue_pkts, d.stats.max_queue_bytes), (1, 1000));
        d.enqueue(Time::ZERO, 3, 500).expect("room");
        assert_eq!(d.enqueue(Time::ZERO, 4, 500), Err(4), "two queued: full");
        assert_eq!(
            (
                d.stats.max_queue_pkts,
                d.stats.max_queue_bytes,
                d.stats.drops
            ),
            (2, 1000, 1)
        );
    }
}
