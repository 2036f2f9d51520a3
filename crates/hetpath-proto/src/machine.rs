//! The one contract every protocol machine that is not a link follows: a node's host
//! (its TCP stack), split PEPs, congestion-feedback routers, ILC-TCP's State Manager,
//! Mobile IP agents, the ideal protocol, and whatever LIFT and APOHN add.
//!
//! A machine is sans-IO. It lives on one node and is driven through these calls alone:
//!
//! - `handle_packet(now, at, &mut packet, node)`: a packet passes one of its hooks (`At`);
//!   the machine may change it where it lies, and the `Verdict` lets it go on or consumes
//!   it. Packets stay where the driver keeps them (the simulator's frame store): a machine
//!   that keeps one it consumes moves it out with `Packet::take`.
//! - `handle_signal(now, signal, node)`: another machine or a link layer of the node
//!   reported a cross-layer `Signal`.
//! - `handle_timeout(now, node)`: its deadline came; calling it early is a harmless no-op.
//! - `poll_transmit_into(now, node, out)`: a packet of its own to send now, written where
//!   the driver will keep it; called until `None`. A machine may implement it by value
//!   instead (`poll_transmit`), which it defaults to.
//! - `poll_timeout()`: the earliest time `handle_timeout` has work.
//! - `poll_event()`: what happened (signals for the node's other machines, results).
//! - `report_connections(out)`, `kind()`, `counters(out)`: what it shows of itself to
//!   the results (its TCP connections as plain reports, its own counters).
//! - `messages()`: a message transport's application face (`MessagePort`), so that a
//!   driver-side application (a web browser or server) can use it without naming the
//!   machine.
//!
//! Time comes in as an argument and the machine never schedules anything itself. `node`
//! is the driver's window on the node: the machine's interfaces as plain numbers, and
//! whether a queue has room. The simulator and a real-socket driver run the same loop.

use crate::crosslayer::Signal;
use crate::ids::{ConnId, IfaceId};
use crate::iface::Iface;
use crate::packet::{Addr, Endpoint, Packet};
use crate::sctp::SendError;
use crate::tcp;
use crate::time::Time;

/// Where a machine sees a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// It has just arrived at the node from a link, before routing, whatever its
    /// destination.
    Arrival,
    /// It is addressed to this node (after the arrival hooks let it through).
    Local,
    /// Routing chose one of the machine's interfaces for it; it is not queued yet.
    Departure(IfaceId),
    /// It was lost somewhere (channel, full queue, outage): the oracle that the ideal
    /// protocol of seed 003 is allowed. The verdict is ignored, and the packet is left
    /// as it is (every oracle sees the same one).
    Lost,
    /// The link layer of interface `i` confirmed the packet to the next node: an 802.11
    /// MAC ACK (IEEE 802.11's MA-UNITDATA-STATUS.indication). The verdict is ignored and
    /// the packet left as it is.
    LinkAcked(IfaceId),
    /// The link layer of interface `i` gave the packet up: its queue was full or its
    /// retries ran out. The verdict is ignored and the packet left as it is.
    LinkDropped(IfaceId),
}

/// What becomes of a packet a machine was shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it go on, changed or not (a router writes its feedback into it).
    Pass,
    /// The machine took it: the driver discards what is left in its place.
    Consume,
}

/// Which packets a machine wants to see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Every packet arriving at the node (`At::Arrival`).
    pub arrival: bool,
    /// Packets addressed to the node (`At::Local`).
    pub local: bool,
    /// Packets routed onto one of its interfaces (`At::Departure`).
    pub departure: bool,
    /// Every packet lost anywhere (`At::Lost`).
    pub losses: bool,
    /// What becomes of the packets on its interfaces whose link layer says so
    /// (`At::LinkAcked`, `At::LinkDropped`; an 802.11 WLAN does).
    pub link_status: bool,
}

pub use crate::iface::LocalQueue;

/// How a packet a machine sends leaves its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// By the node's routes toward its destination.
    Route,
    /// Straight onto one of the machine's interfaces (a wireless hop to a peer that
    /// routing does not know).
    Iface(IfaceId),
}

/// A packet a machine sends.
#[derive(Debug)]
pub struct Transmit {
    pub packet: Packet,
    pub via: Via,
}

impl Transmit {
    pub fn route(packet: Packet) -> Transmit {
        Transmit {
            packet,
            via: Via::Route,
        }
    }
    /// The packet `poll`, a `Machine::poll_transmit_into`, writes, as a value (for a
    /// machine that builds its packets in place, its `poll_transmit`).
    pub fn polled(poll: impl FnOnce(&mut Packet) -> Option<Via>) -> Option<Transmit> {
        let mut packet = Packet::empty();
        let via = poll(&mut packet)?;
        Some(Transmit { packet, via })
    }
}

/// What a machine reports. Signals go to the other machines on the node; the rest is
/// for results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Signal(Signal),
    /// A connection was opened by a peer's SYN.
    Accepted {
        conn: ConnId,
        local: Endpoint,
        remote: Endpoint,
    },
    /// The receiving application of `conn` now holds `bytes` in-order bytes: all it
    /// expected (a host), or more than before (the ideal protocol's sink).
    Delivered {
        conn: ConnId,
        bytes: u64,
    },
    /// The first `bytes` bytes `conn` sent are acknowledged: all its application wrote.
    Acked {
        conn: ConnId,
        bytes: u64,
    },
    /// A segment of `conn` was lost and will be sent again (the ideal protocol, which
    /// learns of losses from the oracle).
    Lost {
        conn: ConnId,
    },
    /// Something happened to the TCP connection `conn`.
    Tcp {
        conn: ConnId,
        event: tcp::Event,
    },
}

/// The driver's window on the node a machine runs on.
pub trait NodeView {
    /// One of the machine's interfaces, as it is now.
    fn iface(&self, i: IfaceId) -> Iface;
    /// Whether the node's queue toward `dst` has room for one more packet. A machine
    /// told "no" is woken when that queue next finishes a transmission.
    fn ready(&self, dst: Addr) -> bool;
    /// Wake the machine when interface `i` next finishes a transmission or goes up or
    /// down.
    fn wake_on(&self, i: IfaceId);
    /// The received power of the frame being handled (`At::Arrival`), in watts, when the
    /// link it came over measures one (a wireless hop with a radio model).
    fn frame_power_w(&self) -> Option<f64> {
        None
    }
}

pub trait Machine: Send {
    /// The packets it wants to see.
    fn hooks(&self) -> Hooks;
    /// A packet it sent found its node's queue full (called only then): `Wait` and `Cwr`
    /// hold the packet until the queue has room, `Drop` lets the queue drop it. A TCP
    /// stack answers per connection (`TcpConfig::local_queue`) and reduces the window of
    /// a `Cwr` connection here.
    fn handle_full_queue(&mut self, _now: Time, _packet: &Packet) -> LocalQueue {
        LocalQueue::Wait
    }
    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, node: &dyn NodeView) -> Verdict;
    fn handle_signal(&mut self, _now: Time, _signal: Signal, _node: &dyn NodeView) {}
    fn handle_timeout(&mut self, _now: Time, _node: &dyn NodeView) {}
    /// A packet of its own to send now, written into `out`, and how it leaves; `None` when
    /// it has nothing (then `out` means nothing). `out` is the place where the driver will
    /// keep the packet, holding whatever it last held: a machine that builds its packets
    /// there (a host) spares the copy of a packet returned by value, which reads it back
    /// whole right after the narrower stores that built it. What drivers call, until
    /// `None`; by default, `poll_transmit`'s packet moved into `out`.
    fn poll_transmit_into(
        &mut self,
        now: Time,
        node: &dyn NodeView,
        out: &mut Packet,
    ) -> Option<Via> {
        let t = self.poll_transmit(now, node)?;
        *out = t.packet;
        Some(t.via)
    }
    /// The same by value: what a machine that builds its packets apart implements. One
    /// that implements `poll_transmit_into` implements this as `Transmit::polled` of it.
    fn poll_transmit(&mut self, _now: Time, _node: &dyn NodeView) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn poll_event(&mut self) -> Option<Event> {
        None
    }
    /// Adds a report of each TCP connection it holds to `out`, in `ConnId` order (the
    /// report of `ConnId(k)` is the k-th): what a driver shows of a host's connections
    /// and of a PEP's legs, and of the connection an `Event::Tcp` names, without
    /// reaching into the machine.
    fn report_connections(&self, _out: &mut Vec<tcp::ConnReport>) {}
    /// Report fine-grained events too (every TCP retransmission): a driver that keeps a
    /// trace turns this on; off, they cost nothing.
    fn detailed_events(&mut self, _on: bool) {}
    /// What results call it (`split-pep`, `state-manager`, ...).
    fn kind(&self) -> &'static str {
        "machine"
    }
    /// Adds its own counters to `out`, by name, for the results.
    fn counters(&self, _out: &mut Vec<Counter>) {}
    /// Its application face, if it carries messages (an SCTP endpoint).
    fn messages(&mut self) -> Option<&mut dyn MessagePort> {
        None
    }
}

/// One message the application received: complete, and in order within its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub stream: u16,
    /// Its Stream Sequence Number (RFC 4960 section 6.5).
    pub ssn: u16,
    pub bytes: u64,
}

/// What an application on the machine's node calls: messages out on a stream, and the
/// messages that arrived (the machine must keep them: `SctpEndpoint::keep_messages`).
pub trait MessagePort {
    /// Queues a message of `bytes` on `stream`.
    fn send(&mut self, stream: u16, bytes: u64) -> Result<(), SendError>;
    /// The next message delivered, in order within its stream.
    fn poll_message(&mut self) -> Option<Message>;
    /// Expirations of its retransmission timer so far (SCTP's T3-rtx).
    fn timeouts(&self) -> u64;
}

/// One of a machine's own counters: a name and a value.
pub type Counter = (&'static str, u64);
