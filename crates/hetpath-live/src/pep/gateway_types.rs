//! What a gateway core's driver deals in (`gateway.rs`): the configuration it makes the
//! core with, the events it acts on, the counters it reports.

use super::config::Match;
use super::frame::{ConnId, RefuseReason};
use super::gateway::{FRAME_HEADER, TIME_WAIT};
use super::seal::{self, Aead, Psk, Role};
use super::session::SessionStats;
use super::tcpseg;
use hetpath_proto::cc::Algorithm;
use hetpath_proto::tcp::TcpConfig;
use hetpath_proto::time::Dur;
use std::net::SocketAddrV4;

/// What a gateway core is made with.
#[derive(Clone)]
pub struct GatewayConfig {
    pub role: Role,
    pub psk: Psk,
    pub aead: Aead,
    /// The seed of the core's randomness (`KeyRng`): the kernel's in the daemon.
    pub seed: [u8; 32],
    /// How long a session is used before A makes a new one.
    pub rekey_after: Dur,
    pub cc: Algorithm,
    /// The satellite leg's TCP settings (pacing included); its MSS, receive buffer and
    /// TIME-WAIT are the gateway's (`tcp()`).
    pub tcp: TcpConfig,
    /// Each direction's buffer per connection: the send buffer and the reassembly
    /// buffer (the receive window).
    pub buffer: usize,
    /// The largest datagram (UDP payload) sent: 1472 for a 1500-byte MTU.
    pub max_datagram: usize,
    pub max_connections: usize,
    pub keepalive: Dur,
    pub peer_timeout: Dur,
    /// The satellite link's IP rate, if known: the gateway never sends faster (see
    /// `Gateway::poll_transmit`).
    pub rate_bps: Option<u64>,
    /// The satellite leg's round trip: xcp-pep's fixed control interval (seed 004
    /// section IV), for the traffic monitor `monitor.rs` runs on the shaper.
    pub monitor_interval: Dur,
    /// B: the connections it opens for A (client source, server destination and port);
    /// `None` opens any.
    pub allow: Option<Match>,
}

impl GatewayConfig {
    /// The satellite leg's MSS: a full segment with every fixed option field fits one
    /// datagram of `max_datagram` bytes.
    pub fn mss(&self) -> u32 {
        mss_for(self.max_datagram)
    }

    /// The satellite leg's TCP configuration: `tcp`, with the MSS that fits, `buffer`
    /// as the receive buffer, and a short TIME-WAIT.
    pub fn tcp(&self) -> TcpConfig {
        let mut t = self.tcp;
        t.mss = self.mss();
        t.recv_buffer = self.buffer as u64;
        t.time_wait = TIME_WAIT;
        t
    }
}

/// The satellite leg's MSS for datagrams of `max_datagram` bytes: a full segment with
/// every fixed option field fits one.
pub fn mss_for(max_datagram: usize) -> u32 {
    let room = max_datagram.saturating_sub(seal::OVERHEAD + FRAME_HEADER);
    room.saturating_sub(tcpseg::MAX_HEADER).max(64) as u32
}

/// Why a connection was reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetWhy {
    /// The peer gateway reset it (its application did, or it did not know it).
    Peer,
    /// The satellite leg's TCP gave up (retries exhausted) or got a RST.
    Aborted,
    /// The peer gateway restarted: its side of every connection is gone.
    PeerRestarted,
    /// Nothing authenticated came from the peer for `peer_timeout`.
    PeerSilent,
    /// A segment asked for bytes the send buffer no longer held (a bug; never sent
    /// wrong bytes instead).
    Internal,
}

/// What the driver must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// B: connect to `server` from `client`'s address, then call `connected` or `refuse`.
    Connect {
        conn: ConnId,
        client: SocketAddrV4,
        server: SocketAddrV4,
    },
    /// A: the far gateway reached the server.
    Accepted { conn: ConnId },
    /// A: the far gateway could not reach the server: reset the client. Gone.
    Refused { conn: ConnId, reason: RefuseReason },
    /// In-order bytes wait (`peek`), or the peer finished (`peer_finished`).
    Readable { conn: ConnId },
    /// The send buffer has room again after `write` found it full.
    Writable { conn: ConnId },
    /// The connection failed: reset the local socket. Gone.
    Reset { conn: ConnId, why: ResetWhy },
    /// Both directions finished, every byte acknowledged and consumed: close the local
    /// socket normally.
    Closed { conn: ConnId },
}

/// Counters for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections opened (A) or asked for (B).
    pub opened: u64,
    pub accepted: u64,
    pub refused: u64,
    pub completed: u64,
    pub reset: u64,
    pub peer_restarts: u64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Datagrams that failed to open (forged, replayed, stale) or to decode.
    pub datagrams_rejected: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Payload bytes the application wrote into the leg, and the leg handed out.
    pub app_bytes_in: u64,
    pub app_bytes_out: u64,
    /// Handshakes, their failures and refusals, stale datagrams.
    pub sessions: SessionStats,
    /// Segments retransmitted by connections already gone.
    pub(super) retransmissions_closed: u64,
}
