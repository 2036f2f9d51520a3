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

/// What happens when a machine sends into a full queue of its own node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocalQueue {
    /// The packet waits and the machine is asked for nothing more toward that queue
    /// until it has room, as a Linux socket waits on its device's queue (TCP Small
    /// Queues keep a sender's packets in the socket).
    #[default]
    Wait,
    /// The packet waits, and the TCP connection that sent it reduces its window once per
    /// round trip (Congestion Window Reduced), as Linux does when its qdisc refuses a
    /// packet (`tcp_enter_cwr` on NET_XMIT_DROP in `__tcp_transmit_skb`).
    Cwr,
    /// The queue drops it, like any packet arriving at a full queue.
    Drop,
}
