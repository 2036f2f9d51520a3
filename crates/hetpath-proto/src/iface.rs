//! What a machine may see of one of its node's interfaces at the moment it looks: plain
//! numbers, filled in by whoever drives the machine (the simulator, later a socket driver).

/// The state of one outgoing interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Iface {
    /// Capacity seen by IP, bit/s (the link rate times any coding overhead).
    pub rate_bps: u64,
    /// Packets and bytes waiting in the queue (not counting the one being serialised).
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    /// Bytes the interface has put on the wire so far (monotonic; counted as each packet
    /// starts serialisation).
    pub tx_bytes: u64,
    /// A packet is being serialised.
    pub transmitting: bool,
    /// The interface is up (for a wireless interface: its peer is associated).
    pub up: bool,
}

impl Iface {
    /// Nothing is queued or being sent.
    pub fn idle(&self) -> bool {
        !self.transmitting && self.queue_pkts == 0
    }
}
