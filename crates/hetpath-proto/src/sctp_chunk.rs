//! SCTP packets and chunks as typed values (RFC 4960 section 3); re-exported by `sctp`.
//! Below `packet` in the layers, so that a `packet::Body` can carry an SCTP packet.
//!
//! As everywhere in hetpath, user data is virtual: a DATA chunk says how many bytes it
//! carries (`DataChunk::len`), not which. Every other field is what the wire holds, so
//! TSNs are the 32-bit serial numbers of RFC 4960 section 1.6; the association widens
//! them to 64 bits internally (`serial.rs`). Sizes follow section 3 exactly, so that
//! `SctpPacket::wire_len` is what `wire::encode` writes.

/// The common header: ports, verification tag, checksum (RFC 4960 section 3.1).
pub const COMMON_HEADER_LEN: u32 = 12;
/// Type, flags and length, the start of every chunk (RFC 4960 section 3.2).
pub const CHUNK_HEADER_LEN: u32 = 4;
/// A DATA chunk without its user data (RFC 4960 section 3.3.1; Table I of seed 001).
pub const DATA_HEADER_LEN: u32 = 16;
/// A SACK chunk without gap blocks and duplicate TSNs (RFC 4960 section 3.3.4).
pub const SACK_HEADER_LEN: u32 = 16;
/// INIT and INIT ACK without parameters (RFC 4960 sections 3.3.2 and 3.3.3).
pub const INIT_LEN: u32 = 20;
/// The type and length in front of every INIT parameter (RFC 4960 section 3.2.1).
pub const PARAM_HEADER_LEN: u32 = 4;
/// The most user data one DATA chunk can hold: its length field is 16 bits.
pub const MAX_DATA_LEN: u32 = 0xFFFF - DATA_HEADER_LEN;

/// Chunk type codes (RFC 4960 section 3.2).
pub mod kind {
    pub const DATA: u8 = 0;
    pub const INIT: u8 = 1;
    pub const INIT_ACK: u8 = 2;
    pub const SACK: u8 = 3;
    pub const ABORT: u8 = 6;
    pub const SHUTDOWN: u8 = 7;
    pub const SHUTDOWN_ACK: u8 = 8;
    pub const COOKIE_ECHO: u8 = 10;
    pub const COOKIE_ACK: u8 = 11;
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// The codes this model types; any other arrives as `Chunk::Unknown`.
    pub const KNOWN: [u8; 10] = [
        DATA,
        INIT,
        INIT_ACK,
        SACK,
        ABORT,
        SHUTDOWN,
        SHUTDOWN_ACK,
        COOKIE_ECHO,
        COOKIE_ACK,
        SHUTDOWN_COMPLETE,
    ];
}

/// Rounds a chunk or parameter length up to the 4-byte boundary the next one starts on
/// (RFC 4960 section 3.2: "padded ... with at most 3 bytes").
pub const fn pad4(n: u32) -> u32 {
    (n + 3) & !3
}

/// A DATA chunk (RFC 4960 section 3.3.1). `len` is the user data length, at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataChunk {
    pub tsn: u32,
    pub stream: u16,
    /// Stream Sequence Number: the message's place in its stream (same for all its
    /// fragments; meaningless when `unordered`).
    pub ssn: u16,
    /// Payload Protocol Identifier, opaque to SCTP.
    pub ppid: u32,
    /// U bit: deliver as soon as complete, outside the stream's order (section 6.6).
    pub unordered: bool,
    /// B bit: the first fragment of a message (section 6.9).
    pub begin: bool,
    /// E bit: the last fragment of a message.
    pub end: bool,
    pub len: u32,
}

/// The fixed part of INIT and INIT ACK (RFC 4960 sections 3.3.2 and 3.3.3): the same five
/// fields in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitParams {
    /// The tag the peer must put in every packet it sends to us; never 0.
    pub initiate_tag: u32,
    /// Advertised receiver window credit, in bytes.
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
    pub initial_tsn: u32,
}

/// One Gap Ack Block: TSNs `cum_tsn_ack + start ..= cum_tsn_ack + end` were received
/// (RFC 4960 section 3.3.4; offsets, not TSNs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapBlock {
    pub start: u16,
    pub end: u16,
}

/// A SACK chunk (RFC 4960 section 3.3.4).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SackChunk {
    pub cum_tsn_ack: u32,
    pub a_rwnd: u32,
    pub gaps: Vec<GapBlock>,
    pub dup_tsns: Vec<u32>,
}

impl SackChunk {
    /// Its chunk length: 16 bytes plus 4 per gap block and per duplicate TSN (always a
    /// multiple of 4, so never padded).
    pub fn len(&self) -> u32 {
        SACK_HEADER_LEN + 4 * (self.gaps.len() as u32 + self.dup_tsns.len() as u32)
    }

    pub fn is_empty(&self) -> bool {
        self.gaps.is_empty() && self.dup_tsns.is_empty()
    }
}

/// One chunk of an SCTP packet.
///
/// Built: the association set-up (section 5.1), data transfer (section 6) and graceful
/// shutdown (section 9.2) chunks, and ABORT without error causes. Not built: HEARTBEAT
/// and HEARTBEAT ACK (multi-homing path supervision, section 8.3), ERROR (section
/// 3.3.10), ECN (appendix A): they decode as `Unknown` and are handled by the rules of
/// section 3.2 for unrecognised chunk types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    Data(DataChunk),
    /// INIT (section 3.3.2). Optional parameters are neither written nor read.
    Init(InitParams),
    /// INIT ACK (section 3.3.3) with its mandatory State Cookie parameter; the cookie is
    /// opaque to everyone but its writer.
    InitAck {
        params: InitParams,
        cookie: Vec<u8>,
    },
    Sack(SackChunk),
    /// ABORT (section 3.3.7); `reflected` is the T bit. Error causes are not modelled.
    Abort {
        reflected: bool,
    },
    /// SHUTDOWN (section 3.3.8): the sender's cumulative TSN ack.
    Shutdown {
        cum_tsn_ack: u32,
    },
    ShutdownAck,
    CookieEcho {
        cookie: Vec<u8>,
    },
    CookieAck,
    /// SHUTDOWN COMPLETE (section 3.3.13); `reflected` is the T bit.
    ShutdownComplete {
        reflected: bool,
    },
    /// A chunk type this model does not interpret, kept byte for byte. `chunk_type` is
    /// never one of `kind::KNOWN`.
    Unknown {
        chunk_type: u8,
        flags: u8,
        value: Vec<u8>,
    },
}

impl Chunk {
    pub fn chunk_type(&self) -> u8 {
        match self {
            Chunk::Data(_) => kind::DATA,
            Chunk::Init(_) => kind::INIT,
            Chunk::InitAck { .. } => kind::INIT_ACK,
            Chunk::Sack(_) => kind::SACK,
            Chunk::Abort { .. } => kind::ABORT,
            Chunk::Shutdown { .. } => kind::SHUTDOWN,
            Chunk::ShutdownAck => kind::SHUTDOWN_ACK,
            Chunk::CookieEcho { .. } => kind::COOKIE_ECHO,
            Chunk::CookieAck => kind::COOKIE_ACK,
            Chunk::ShutdownComplete { .. } => kind::SHUTDOWN_COMPLETE,
            Chunk::Unknown { chunk_type, .. } => *chunk_type,
        }
    }

    /// The Chunk Length field: header and value, without padding (section 3.2). May
    /// exceed 65535 for an oversized chunk, which `wire::encode` refuses.
    pub fn len(&self) -> u32 {
        match self {
            Chunk::Data(d) => DATA_HEADER_LEN + d.len,
            Chunk::Init(_) => INIT_LEN,
            Chunk::InitAck { cookie, .. } => INIT_LEN + PARAM_HEADER_LEN + cookie.len() as u32,
            Chunk::Sack(s) => s.len(),
            Chunk::Shutdown { .. } => CHUNK_HEADER_LEN + 4,
            Chunk::Abort { .. }
            | Chunk::ShutdownAck
            | Chunk::CookieAck
            | Chunk::ShutdownComplete { .. } => CHUNK_HEADER_LEN,
            Chunk::CookieEcho { cookie } => CHUNK_HEADER_LEN + cookie.len() as u32,
            Chunk::Unknown { value, .. } => CHUNK_HEADER_LEN + value.len() as u32,
        }
    }

    /// Never true: a chunk holds at least its 4-byte header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bytes it takes in a packet: its length padded to 4 (section 3.2).
    pub fn wire_len(&self) -> u32 {
        pad4(self.len())
    }

    pub fn as_data(&self) -> Option<&DataChunk> {
        match self {
            Chunk::Data(d) => Some(d),
            _ => None,
        }
    }

    pub fn as_sack(&self) -> Option<&SackChunk> {
        match self {
            Chunk::Sack(s) => Some(s),
            _ => None,
        }
    }
}

/// An SCTP packet: the common header and its chunks (RFC 4960 section 3). The checksum
/// is not a field: `wire::encode` computes it and `wire::decode` checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SctpPacket {
    pub src_port: u16,
    pub dst_port: u16,
    pub verification_tag: u32,
    pub chunks: Vec<Chunk>,
}

impl SctpPacket {
    /// Bytes on the wire without the IP header (and without ESP): the common header and
    /// every chunk padded to 4 bytes.
    pub fn wire_len(&self) -> u32 {
        COMMON_HEADER_LEN + self.chunks.iter().map(Chunk::wire_len).sum::<u32>()
    }

    pub fn data(&self) -> impl Iterator<Item = &DataChunk> {
        self.chunks.iter().filter_map(Chunk::as_data)
    }

    pub fn sack(&self) -> Option<&SackChunk> {
        self.chunks.iter().find_map(Chunk::as_sack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(len: u32) -> Chunk {
        Chunk::Data(DataChunk {
            tsn: 1,
            stream: 0,
            ssn: 0,
            ppid: 0,
            unordered: false,
            begin: true,
            end: true,
            len,
        })
    }

    #[test]
    fn paper_packet_fills_the_ip_mtu() {
        // Seed 001 section IV: a 1282-byte IP MTU holds an encrypted SCTP packet with two
        // 600-byte chunks: 20 (IP) + 18 (ESP) + 12 + 2 * (16 + 600) = 1282.
        let p = SctpPacket {
            src_port: 1,
            dst_port: 2,
            verification_tag: 3,
            chunks: vec![data(600), data(600)],
        };
        assert_eq!(p.wire_len(), 1244);
        assert_eq!(20 + 18 + p.wire_len(), 1282);
    }

    #[test]
    fn padding_and_sack_sizes() {
        assert_eq!(data(1).len(), 17);
        assert_eq!(data(1).wire_len(), 20);
        assert_eq!(data(4).wire_len(), 20);
        let sack = SackChunk {
            cum_tsn_ack: 0,
            a_rwnd: 0,
            gaps: vec![GapBlock { start: 2, end: 3 }; 3],
            dup_tsns: vec![7; 2],
        };
        assert_eq!(Chunk::Sack(sack).len(), 16 + 3 * 4 + 2 * 4);
        let ack = Chunk::InitAck {
            params: InitParams {
                initiate_tag: 1,
                a_rwnd: 2,
                outbound_streams: 3,
                inbound_streams: 4,
                initial_tsn: 5,
            },
            cookie: vec![0; 5],
        };
        assert_eq!(ack.len(), 20 + 4 + 5);
        assert_eq!(ack.wire_len(), 32);
    }
}
