//! The shared test driver (after quinn-proto's `Pair` and smoltcp's segment scripts):
//! nodes in a line, each with a `Host` and any other machines, joined by scripted hops
//! with a delay, an optional serialisation time per packet, a drop rule and outages, all
//! in explicit time. It drives the machines through the same contract as the simulator,
//! in the same order (transmits, then events; signals reach the node's other machines at
//! once), so tests exercise the code paths the simulator uses.

mod net;

pub use net::Net;

use crate::ids::IfaceId;
use crate::iface::Iface;
use crate::machine::NodeView;
use crate::packet::Addr;

/// A node with nothing to see: every interface up and idle, every queue ready.
pub struct NoNode;

impl NodeView for NoNode {
    fn iface(&self, _: IfaceId) -> Iface {
        Iface {
            up: true,
            ..Iface::default()
        }
    }
    fn ready(&self, _: Addr) -> bool {
        true
    }
    fn wake_on(&self, _: IfaceId) {}
}
