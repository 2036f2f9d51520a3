//! Wire formats: byte-exact IPv4 + TCP encoding of simulator packets, and pcap files.
//!
//! - `ipv4`: the IPv4 header (RFC 791 section 3.1; ECN per RFC 3168 section 5).
//! - `tcp`, `tcp_options`: the TCP header and options (RFC 9293 sections 3.1 and 3.2,
//!   window scale per RFC 7323 section 2, SACK per RFC 2018 section 3).
//! - `checksum`: the Internet checksum (RFC 1071).
//! - `lift`: the LIFT header (seed 001, Figs. 3 and 5).
//! - `pcap`: classic pcap files, nanosecond timestamps, LINKTYPE_RAW.
//! - `sctp`: SCTP packets and RFC 4960 bytes with CRC32c (`crate::sctp::wire`). A
//!   plain SCTP body is written whole by `encode` and the pcap writer (its chunk headers
//!   sit between the user data, so there is no headers-only form); inside ESP it is
//!   opaque, like TCP in ESP.
//!
//! Each header has a checked view over bytes (`Ipv4Packet`, `TcpPacket`) and a `Repr` with
//! `parse`/`emit`; `PacketRepr` joins them. The simulator's packets carry 64-bit sequence
//! offsets, unscaled windows and virtual payloads; `WireCtx` supplies the per-direction
//! ISNs and window shift needed to fold them into 32-bit wire fields, and payloads are
//! encoded as zero bytes (or not at all: see `PacketRepr::emit_headers`).
//!
//! Decoding never panics: malformed input yields a `WireError`.

pub mod checksum;
pub mod ipv4;
pub mod lift;
pub mod pcap;
pub mod sctp;
pub mod tcp;
pub mod tcp_options;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use pcap::{PcapError, PcapHeader, PcapOptions, PcapReader, PcapRecord, PcapWriter};
pub use tcp::{TcpPacket, TcpRepr};
pub use tcp_options::{OptionSet, SackEdges, TcpOption, TcpOptions};

use crate::lift::{LiftHeader, PROTO_LIFT};
use crate::packet::{proto, Body, Esp, Packet, SctpBody};
pub use sctp::SctpWireError;

/// Why bytes could not be decoded or a packet could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("IP version {0}, expected 4")]
    BadVersion(u8),
    #[error("IPv4 header length field {0} is below 5")]
    BadIpHeaderLen(u8),
    #[error("IPv4 total length {total} is shorter than its header ({header} bytes)")]
    BadTotalLen { total: usize, header: usize },
    #[error("IPv4 header checksum mismatch")]
    Ipv4Checksum,
    #[error("IPv4 fragments are not supported")]
    Fragment,
    #[error("TCP data offset {0} is below 5")]
    BadDataOffset(u8),
    #[error("TCP segment of {segment} bytes is shorter than its header ({header} bytes)")]
    BadSegmentLen { segment: usize, header: usize },
    #[error("malformed TCP option of kind {kind} at option byte {at}")]
    BadOption { kind: u8, at: usize },
    #[error("TCP checksum mismatch")]
    TcpChecksum,
    #[error("TCP options need {0} bytes, more than the 40 a header can hold")]
    OptionsTooLong(usize),
    #[error("IP packet of {0} bytes exceeds the IPv4 limit of 65535")]
    TooLong(u64),
    #[error("IP length does not match the TCP header and payload")]
    LengthMismatch,
    #[error("output buffer too small: need {need} bytes, have {have}")]
    BufferTooSmall { need: usize, have: usize },
    #[error("SCTP: {0}")]
    Sctp(#[from] SctpWireError),
}

/// Per-direction mapping between simulator segments and wire headers.
///
/// For a packet from A to B: `snd_isn` is A's ISN (added to `seq`); `rcv_isn` is B's ISN,
/// added to `ack` and to the SACK edges (both name bytes of B's stream that A holds); and
/// `wscale` is the shift A applies to its non-SYN windows (RFC 7323 section 2.2; a
/// segment carries its sender's in `TcpSegment::wscale`). The reverse direction swaps the
/// ISNs and uses B's shift. Shifts above 14 are treated as 14 (RFC 7323 section 2.3).
/// `ident` is the IP identification written on encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireCtx {
    pub snd_isn: u32,
    pub rcv_isn: u32,
    pub wscale: u8,
    pub ident: u16,
}

impl WireCtx {
    pub const fn new(snd_isn: u32, rcv_isn: u32, wscale: u8) -> WireCtx {
        WireCtx {
            snd_isn,
            rcv_isn,
            wscale,
            ident: 0,
        }
    }
    /// The same mapping, writing IP identification `ident`.
    pub const fn with_ident(self, ident: u16) -> WireCtx {
        WireCtx { ident, ..self }
    }
    /// The window shift actually applied: `wscale` capped at 14.
    pub fn window_shift(&self) -> u8 {
        self.wscale.min(tcp::MAX_WINDOW_SHIFT)
    }
    /// Wire sequence number of a sender offset: (snd_isn + offset) mod 2^32.
    pub fn snd_seq(&self, offset: u64) -> u32 {
        self.snd_isn.wrapping_add(offset as u32)
    }
    /// Wire number of an offset in the receiver's sequence space (ACK, SACK edges).
    pub fn rcv_seq(&self, offset: u64) -> u32 {
        self.rcv_isn.wrapping_add(offset as u32)
    }
    /// Sender offset mod 2^32 of a wire sequence number.
    pub fn snd_offset(&self, seq: u32) -> u64 {
        seq.wrapping_sub(self.snd_isn) as u64
    }
    /// Receiver-space offset mod 2^32 of a wire number.
    pub fn rcv_offset(&self, seq: u32) -> u64 {
        seq.wrapping_sub(self.rcv_isn) as u64
    }
}

/// A whole IPv4 packet in wire terms. `tcp` is `Some` exactly when the protocol is TCP;
/// otherwise the IP payload is the headers in `encap`, then opaque (zero, when emitted)
/// bytes up to `ip.payload_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRepr {
    pub ip: Ipv4Repr,
    pub tcp: Option<TcpRepr>,
    pub encap: Encap,
}

/// The headers a path can read in front of an encrypted payload: LIFT's (seed 001, Fig.
/// 2) and ESP's SPI and sequence number (RFC 4303 section 2), each if present.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Encap {
    pub lift: Option<LiftHeader>,
    /// (SPI, sequence number).
    pub esp: Option<(u32, u32)>,
}

impl Encap {
    pub fn len(&self) -> usize {
        self.lift.map_or(0, |h| h.wire_len() as usize) + if self.esp.is_some() { 8 } else { 0 }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn of(body: &Body) -> Encap {
        let esp = |e: &Esp| (e.spi, e.seq);
        match body {
            Body::Esp(e) => Encap {
                lift: None,
                esp: Some(esp(e)),
            },
            Body::Lift(h, e) => Encap {
                lift: Some(*h),
                esp: e.as_ref().map(esp),
            },
            Body::Sctp(SctpBody { esp: Some(e), .. }) => Encap {
                lift: None,
                esp: Some((e.spi, e.seq)),
            },
            // Written as zeros: its visible headers are what those zeros read as.
            Body::Raw { proto, len } => Encap::parse(*proto, &[0; 16][..(*len as usize).min(16)]),
            _ => Encap::default(),
        }
    }

    /// The headers at the front of an IP payload of protocol `protocol`, as far as the
    /// bytes go: a header cut short (a snaplen, or a body too short to hold it) leaves the
    /// rest opaque, as any payload of a protocol we do not read.
    fn parse(protocol: u8, payload: &[u8]) -> Encap {
        let esp_at = |at: usize| {
            let b = payload.get(at..at.checked_add(8)?)?;
            let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            Some((word(0), word(4)))
        };
        match protocol {
            proto::ESP => Encap {
                lift: None,
                esp: esp_at(0),
            },
            PROTO_LIFT => match lift::parse(payload) {
                Ok((h, n)) => {
                    let chained = matches!(
                        h,
                        LiftHeader::Ack {
                            next_header: proto::ESP,
                            ..
                        } | LiftHeader::Frack {
                            next_header: proto::ESP,
                            ..
                        }
                    );
                    Encap {
                        lift: Some(h),
                        esp: if chained { esp_at(n) } else { None },
                    }
                }
                Err(_) => Encap::default(),
            },
            _ => Encap::default(),
        }
    }

    fn emit(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let mut n = 0;
        if let Some(h) = &self.lift {
            n += lift::emit(h, out)?;
        }
        if let Some((spi, seq)) = self.esp {
            let have = out.len();
            let b = out
                .get_mut(n..n + 8)
                .ok_or(WireError::BufferTooSmall { need: n + 8, have })?;
            b[..4].copy_from_slice(&spi.to_be_bytes());
            b[4..].copy_from_slice(&seq.to_be_bytes());
            n += 8;
        }
        Ok(n)
    }
}

impl PacketRepr {
    /// The wire form of a simulator packet. Fails if it is longer than 65535 bytes or its
    /// TCP options do not fit in 40 bytes.
    pub fn from_packet(packet: &Packet, ctx: &WireCtx) -> Result<PacketRepr, WireError> {
        // Not `packet.size()`: its u32 sum could overflow on an absurd `len`.
        let (tcp, payload_len) = match &packet.body {
            Body::Tcp(seg) => {
                let t = TcpRepr::from_segment(seg, ctx)?;
                (Some(t), t.buffer_len() as u64)
            }
            Body::Raw { len, .. } => (None, *len as u64),
            // Mobile IP messages and tunnels are written as opaque payloads of their size;
            // ESP and LIFT as their visible headers (`Encap`), then opaque bytes. SCTP's
            // bytes follow the IP header (`encode`), or ESP's when it is encrypted.
            Body::Mip(_)
            | Body::Tunnel(_)
            | Body::Esp(_)
            | Body::Lift(..)
            | Body::Sctp(_)
            | Body::Sbp(_) => (None, packet.size() as u64 - 20),
        };
        let ip = Ipv4Repr::from_header(&packet.ip, ctx.ident, packet.protocol(), payload_len)?;
        Ok(PacketRepr {
            ip,
            tcp,
            encap: Encap::of(&packet.body),
        })
    }

    /// Back to a simulator packet (the IP identification stays in `self.ip.ident`). A
    /// body whose protocol is not TCP becomes `Body::Raw`.
    pub fn to_packet(&self, ctx: &WireCtx) -> Packet {
        let body = match &self.tcp {
            Some(t) => Body::Tcp(t.to_segment(ctx)),
            None => Body::Raw {
                proto: self.ip.protocol,
                len: self.ip.payload_len as u32,
            },
        };
        Packet {
            ip: self.ip.to_header(),
            body,
        }
    }

    /// Parses an IPv4 packet. `bytes` may stop short of the total length (a capture cut by
    /// a snaplen), in which case the TCP checksum is not verified; bytes beyond the total
    /// length are ignored. A TCP packet must hold its whole TCP header.
    pub fn parse(bytes: &[u8]) -> Result<PacketRepr, WireError> {
        let p = Ipv4Packet::new_checked(bytes)?;
        let ip = Ipv4Repr::parse(&p)?;
        let (tcp, encap) = if ip.protocol == proto::TCP {
            let t = TcpPacket::new_checked(p.payload())?;
            let t = TcpRepr::parse(&t, ip.src, ip.dst, ip.payload_len as usize)?;
            (Some(t), Encap::default())
        } else {
            (None, Encap::parse(ip.protocol, p.payload()))
        };
        Ok(PacketRepr { ip, tcp, encap })
    }

    /// IP header plus TCP header with options, or plus the visible headers of an ESP or
    /// LIFT body (the IP header alone for other protocols).
    pub fn header_len(&self) -> usize {
        self.ip.header_len() + self.tcp.as_ref().map_or(0, TcpRepr::header_len) + self.encap.len()
    }

    /// The whole packet: the IP total length.
    pub fn buffer_len(&self) -> usize {
        self.ip.total_len()
    }

    /// Writes the headers (`header_len()` bytes) into the front of `buf`. Checksums are
    /// those of the full packet with its zero payload.
    pub fn emit_headers(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if let Some(t) = &self.tcp {
            if t.header_len() > tcp::MAX_HEADER_LEN {
                return Err(WireError::OptionsTooLong(t.options.len()));
            }
            if t.buffer_len() != self.ip.payload_len as usize {
                return Err(WireError::LengthMismatch);
            }
        }
        let need = self.header_len();
        if buf.len() < need {
            return Err(WireError::BufferTooSmall {
                need,
                have: buf.len(),
            });
        }
        let n = self.ip.emit(buf)?;
        match &self.tcp {
            Some(t) => Ok(n + t.emit_header(&mut buf[n..], self.ip.src, self.ip.dst)?),
            None => Ok(n + self.encap.emit(&mut buf[n..])?),
        }
    }

    /// Writes the whole packet (`buffer_len()` bytes, payload as zeros) into `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let need = self.buffer_len();
        if buf.len() < need {
            return Err(WireError::BufferTooSmall {
                need,
                have: buf.len(),
            });
        }
        let n = self.emit_headers(buf)?;
        buf[n..need].fill(0);
        Ok(need)
    }
}

/// Encodes a simulator packet in full (payload as zero bytes; an SCTP packet in the
/// clear as RFC 4960 bytes with its checksum).
pub fn encode(packet: &Packet, ctx: &WireCtx) -> Result<Vec<u8>, WireError> {
    let repr = PacketRepr::from_packet(packet, ctx)?;
    let mut buf = vec![0; repr.buffer_len()];
    repr.emit(&mut buf)?;
    if let Body::Sctp(b) = &packet.body {
        if let Some(p) = b.readable() {
            let n = repr.ip.header_len();
            buf[n..].copy_from_slice(&sctp::encode(p)?);
        }
    }
    Ok(buf)
}

/// Decodes bytes (whole or header-only) into a simulator packet. A whole SCTP packet
/// with a valid checksum becomes `Body::Sctp`; anything else that is not TCP, `Body::Raw`.
pub fn decode(bytes: &[u8], ctx: &WireCtx) -> Result<Packet, WireError> {
    let repr = PacketRepr::parse(bytes)?;
    let mut packet = repr.to_packet(ctx);
    if repr.ip.protocol == proto::SCTP {
        let payload = bytes.get(repr.ip.header_len()..repr.buffer_len());
        if let Some(Ok(p)) = payload.map(sctp::decode) {
            packet.body = Body::Sctp(SctpBody::new(p, None));
        }
    }
    Ok(packet)
}
