//! Agents beside or inside the stack that are not TCP endpoints: cross-layer managers,
//! proxies that terminate connections, routers that compute congestion feedback.
//!
//! An in-network agent sits on a node's forwarding path (`Agent`). The driver shows it
//! every packet that arrives at the node (`Hook::Arrival`, before routing) and every packet
//! routed onto the interface it watches (`Hook::Departure`, before the queue); the agent
//! gives the packet back to let it go on, changed or not, or keeps it. What it wants to
//! send of its own it yields from `poll_transmit`, and the driver routes it from the node;
//! the driver tells it which destinations its node's queues have room for.
//! Like `tcp::Connection` it is sans-IO: time and the interface's state come in as
//! arguments (DESIGN.md convention 1).

pub mod rap_router;
pub mod split;
pub mod state_manager;

pub use rap_router::{RapRouter, RouterKind};
pub use split::{SplitConfig, SplitPep};
pub use state_manager::{Collaboration, StateManager};

use crate::packet::{Addr, Packet};
use crate::rap::Iface;
use crate::time::Time;

/// Where on its node an agent sees a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// The packet has just arrived at the node, before routing, whatever its destination.
    Arrival,
    /// Routing sent the packet to the watched interface; it has not been queued yet.
    Departure,
}

pub trait Agent: Send {
    /// The hooks it needs: `(arrival, departure)`.
    fn hooks(&self) -> (bool, bool);
    /// A packet passes `hook`. `iface` is the watched interface as it is now (all zero if
    /// the agent watches none). Return the packet to let it continue.
    fn handle_packet(&mut self, now: Time, hook: Hook, p: Packet, iface: &Iface) -> Option<Packet>;
    /// The next packet of its own to send now. `ready(dst)` says whether the node's queue
    /// toward `dst` has room: an agent yields nothing toward a full one (as a Linux socket
    /// waits on its device's queue) and goes on with other destinations meanwhile.
    fn poll_transmit(&mut self, _now: Time, _ready: &dyn Fn(Addr) -> bool) -> Option<Packet> {
        None
    }
    /// The earliest time at which `handle_timeout` has work to do.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Runs expired timers; calling it early is a harmless no-op.
    fn handle_timeout(&mut self, _now: Time, _iface: &Iface) {}
}
