//! What a connection shows of itself to a driver that reports results: a plain value,
//! so a report never reaches into a sender's scoreboard, RTT estimator or controller,
//! and a machine that holds connections (a host, a split PEP) hands out the same shape.

use super::connection::{Connection, State};
use super::sender::SenderStats;
use crate::packet::Endpoint;
use crate::time::Dur;

/// One connection as it is now.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnReport {
    pub local: Endpoint,
    pub remote: Endpoint,
    /// Its controller's name.
    pub cc: &'static str,
    pub state: State,
    pub cwnd_bytes: u64,
    /// `None` while ssthresh is still "arbitrarily high" (RFC 5681 section 3.1).
    pub ssthresh_bytes: Option<u64>,
    /// `None` before the first RTT sample.
    pub srtt: Option<Dur>,
    pub rto: Dur,
    /// The RFC 6675 pipe: bytes the sender believes are in the network.
    pub in_flight_bytes: u64,
    /// Bytes this side's application wrote that the peer acknowledged.
    pub bytes_acked: u64,
    /// Payload bytes received in order from the peer.
    pub bytes_received: u64,
    pub stats: SenderStats,
}

impl Connection {
    pub fn report(&self) -> ConnReport {
        let tx = self.sender();
        ConnReport {
            local: self.local(),
            remote: self.remote(),
            cc: tx.cc.name(),
            state: self.state(),
            cwnd_bytes: tx.cwnd(),
            ssthresh_bytes: Some(tx.ssthresh()).filter(|&s| s != u64::MAX),
            srtt: tx.rtt().srtt(),
            rto: tx.rtt().rto(),
            in_flight_bytes: tx.pipe(),
            bytes_acked: tx.bytes_acked(),
            bytes_received: self.bytes_received(),
            stats: *self.stats(),
        }
    }
}
