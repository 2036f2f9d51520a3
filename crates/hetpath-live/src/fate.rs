//! What happened to each packet the emulator took in, the link's state at each sampling
//! time, and the observer that hears of both (the driver's files: pcap, fates, the loss
//! traces a replay uses, the link series). The core reports through an observer rather
//! than a queue of events because a packet's bytes are only valid while the core holds
//! its slot.

use hetpath_proto::Time;

/// A link direction of the emulated link: `Ab` carries what side a sends to side b.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    Ab,
    Ba,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::Ab, Dir::Ba];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction a packet read on side `a` (true) or b takes.
    pub fn from_side_a(a: bool) -> Dir {
        if a {
            Dir::Ab
        } else {
            Dir::Ba
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dir::Ab => "ab",
            Dir::Ba => "ba",
        }
    }
}

/// How a packet left the emulator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Handed to the far side.
    Delivered,
    /// Lost by the channel model.
    Channel,
    /// Dropped at the full DropTail queue.
    Queue,
    /// Lost on the wire or in the transmitter when the link went down, or dropped from the
    /// queue when a mobile host left the station.
    Outage,
    /// No free buffer slot when it was read (not a modelled loss).
    NoBuffer,
    /// Still inside the emulator when it stopped.
    InFlight,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Channel => "channel",
            Outcome::Queue => "queue",
            Outcome::Outage => "outage",
            Outcome::NoBuffer => "no-buffer",
            Outcome::InFlight => "in-flight",
        }
    }
}

/// One packet's record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fate {
    pub dir: Dir,
    /// Its number among the packets read for this direction, from 0.
    pub seq: u64,
    /// Its index among the direction's transmissions the channel judged (the index a
    /// `trace` channel replays), if it got that far.
    pub transmission: Option<u64>,
    pub bytes: u32,
    /// When it was read, and when it was delivered or lost.
    pub entered: Time,
    pub left: Time,
    pub outcome: Outcome,
}

/// A link direction's state at a sampling time: the values of the simulator's link series
/// (`hetpath_sim::results::LinkSeries`), taken from the same `LinkDir` counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkSample {
    /// Packets waiting in the queue (not the one being transmitted).
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    /// IP bytes whose transmission has started since time zero (lost ones included).
    pub tx_bytes: u64,
}

/// Hears what the core does; the default methods ignore it.
pub trait Observer {
    /// A packet's transmission starts on `dir` (a capture tap, as the simulator's).
    fn started(&mut self, _t: Time, _dir: Dir, _bytes: &[u8]) {}
    /// A packet's fate is settled.
    fn fate(&mut self, _f: &Fate) {}
    /// Direction `dir`'s state at sampling time `t` (both directions, a then b, at each
    /// multiple of the sampling interval, when the core samples).
    fn sample(&mut self, _t: Time, _dir: Dir, _s: &LinkSample) {}
}
