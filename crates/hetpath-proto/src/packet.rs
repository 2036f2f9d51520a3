//! Packets as the simulator and the agents see them: typed headers, virtual payload.
//!
//! Payload bytes are not carried; a segment says how many it holds and where they sit in
//! the stream (`seq`), which is all any experiment measures. Sequence and ACK numbers are
//! 64-bit offsets from the connection's initial sequence number, so they never wrap in
//! the protocol machines; `wire` folds them to 32 bits when a packet is written out.
//!
//! `Body` is the place where later encapsulations go (ESP, LIFT, SBP, ...): a machine that
//! cannot read a body's inner headers simply gets no `Tcp` variant to match on
//! (encryption is modelled by type: docs/architecture.md).

use crate::lift::{LiftHeader, PROTO_LIFT};
use crate::sctp_chunk::SctpPacket;
use crate::stp::Pdu;
use crate::time::Dur;
use std::fmt;

/// An IPv4 address of a simulated interface or host.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Addr(pub u32);

impl Addr {
    pub const fn octets(self) -> [u8; 4] {
        self.0.to_be_bytes()
    }
}

/// One end of a transport connection: an address and a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    pub addr: Addr,
    pub port: u16,
}

impl fmt::Debug for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.octets();
        write!(f, "{a}.{b}.{c}.{d}")
    }
}

/// IP protocol numbers (IANA) of the bodies we model.
pub mod proto {
    pub const ICMP: u8 = 1;
    pub const IPIP: u8 = 4;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ESP: u8 = 50;
    pub const SCTP: u8 = 132;
}

/// The ECN field of the IP header (RFC 3168 section 5). Router-assisted schemes such as
/// VCP and MPCP reuse its two bits for their own load-factor codes.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

/// The IPv4 header fields the models use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IpHeader {
    pub src: Addr,
    pub dst: Addr,
    pub ttl: u8,
    pub ecn: Ecn,
}

pub const IPV4_HEADER_LEN: u32 = 20;
pub const TCP_HEADER_LEN: u32 = 20;

/// TCP control flags (RFC 9293 section 3.1).
#[derive(Copy, Clone, PartialEq, Eq, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);

    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | other.0)
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        self.union(o)
    }
}

impl fmt::Debug for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(TcpFlags, &str); 5] = [
            (TcpFlags::SYN, "S"),
            (TcpFlags::FIN, "F"),
            (TcpFlags::RST, "R"),
            (TcpFlags::PSH, "P"),
            (TcpFlags::ACK, "."),
        ];
        for (flag, name) in NAMES {
            if self.contains(flag) {
                f.write_str(name)?;
            }
        }
        Ok(())
    }
}

/// One SACK block: the half-open byte range `[start, end)` held by the receiver (RFC 2018).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// At most this many SACK blocks fit in the 40 option bytes beside other options (RFC 2018
/// section 3 allows four; three beside timestamps, `MAX_SACK_BLOCKS_WITH_TIMESTAMPS`).
pub const MAX_SACK_BLOCKS: usize = 4;
pub const MAX_SACK_BLOCKS_WITH_TIMESTAMPS: usize = 3;

/// The timestamps option (RFC 7323 section 3): TSval from its sender's clock and TSecr,
/// the TSval it echoes, both in ticks of `TIMESTAMP_TICK`.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// The timestamp clock's tick: 1 ms, as Linux's default (RFC 7323 section 5.4 asks for
/// 1 ms to 1 s).
pub const TIMESTAMP_TICK_NS: u64 = 1_000_000;

/// Options carried on SYN segments (RFC 9293 section 3.2, RFC 7323, RFC 2018).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct SynOptions {
    pub mss: u16,
    pub sack_permitted: bool,
    pub window_scale: u8,
}

/// A TCP segment. `seq`/`ack` are offsets from the sender's/peer's ISN (see module doc).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct TcpSegment {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u64,
    pub ack: u64,
    pub flags: TcpFlags,
    /// Receive window in bytes, unscaled (scaling is a wire concern).
    pub window: u64,
    /// Payload bytes carried.
    pub len: u32,
    pub syn_options: Option<SynOptions>,
    pub sack: SackList,
    /// The timestamps option (RFC 7323), on every segment once both SYNs carried it.
    pub ts: Option<Timestamps>,
    /// Router-assisted congestion control: the request on data, the echo on ACKs.
    /// Boxed: only router-assisted runs carry it, and inline it would double the segment.
    pub rap: Option<Box<RouterFeedback>>,
    /// The window-scale shift its sender applies to `window` on the wire (RFC 7323
    /// section 2.3): the sender's own announced shift once both ends offered scaling, else
    /// 0. Stamped by the sending connection, so a capture writes the window field exactly
    /// as that sender would.
    pub wscale: u8,
}

impl TcpSegment {
    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    /// (source, destination) of the segment, sent from `src` to `dst`.
    pub fn endpoints(&self, src: Addr, dst: Addr) -> (Endpoint, Endpoint) {
        let end = |addr, port| Endpoint { addr, port };
        (end(src, self.src_port), end(dst, self.dst_port))
    }
    pub fn seq_len(&self) -> u64 {
        self.len as u64
            + self.flags.contains(TcpFlags::SYN) as u64
            + self.flags.contains(TcpFlags::FIN) as u64
    }
    /// Bytes of TCP options, padded to a multiple of four.
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        if let Some(o) = self.syn_options {
            n += 4; // MSS
            if o.sack_permitted {
                n += 2;
            }
            if o.window_scale > 0 {
                n += 3;
            }
        }
        if self.ts.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len() as u32;
        }
        n.div_ceil(4) * 4
    }
    pub fn header_len(&self) -> u32 {
        let shim = match self.rap.as_deref() {
            Some(RouterFeedback::Xcp(_)) => XCP_HEADER_LEN,
            _ => 0, // load-factor codes ride in the IP header's ECN bits
        };
        TCP_HEADER_LEN + self.options_len() + shim
    }
}

/// The XCP congestion header (Katabi, Handley, Rohrs, SIGCOMM 2002, section 3.1): the
/// sender's window and RTT estimate, and the window change it asks for, which each router
/// on the path may only lower. On an ACK, `feedback` is the echo (the reverse feedback).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct XcpHeader {
    /// H_cwnd, bytes.
    pub cwnd: u64,
    /// H_rtt; zero before the sender has a sample.
    pub rtt: Dur,
    /// H_feedback, bytes of window change (negative: shrink).
    pub feedback: i64,
}

/// XCP's shim between IP and TCP, in bytes (the 20-byte format of draft-falk-xcp).
pub const XCP_HEADER_LEN: u32 = 20;

/// Congestion feedback a router-assisted protocol carries (seed 004 section II).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RouterFeedback {
    Xcp(XcpHeader),
    /// A quantized load factor of `bits` bits: VCP's two ECN bits (Xia et al., SIGCOMM
    /// 2005, section 3.1), or MPCP's 2n bits spread over n packets (Li and
    /// Yousefi'zadeh, CCR 2009). Routers raise `code` to their own level, never lower it.
    Load {
        code: u8,
        bits: u8,
    },
}

/// A fixed-capacity list of SACK blocks (no allocation on the hot path).
///
/// Kept small because segments are moved whole through the engine: a block is stored as
/// its two edges' 32-bit offsets from `base`, the lowest edge in the list, as the wire
/// carries edges in 32 bits (RFC 2018 section 3). Blocks of one ACK lie within the
/// receive window (at most 2^30 bytes, RFC 7323 section 2.3) and edges read off the wire
/// within 2^32 of its ACK number, so every block of a real segment fits exactly.
#[derive(Clone, Copy, Default)]
pub struct SackList {
    base: u64,
    edges: [(u32, u32); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackList {
    /// Appends `b`; false when the list is full, or when `b` lies 2^32 bytes or more
    /// from the blocks already held (see the type's doc: no segment carries such).
    pub fn push(&mut self, b: SackBlock) -> bool {
        let n = self.len as usize;
        if n == MAX_SACK_BLOCKS {
            return false;
        }
        let lowest = if n == 0 {
            b.start.min(b.end)
        } else {
            self.base.min(b.start).min(b.end)
        };
        let highest = self
            .iter()
            .fold(b.start.max(b.end), |h, x| h.max(x.start).max(x.end));
        if highest - lowest > u32::MAX as u64 {
            return false;
        }
        let shift = (self.base - lowest.min(self.base)) as u32;
        for e in &mut self.edges[..n] {
            *e = (e.0 + shift, e.1 + shift);
        }
        self.base = lowest;
        self.edges[n] = ((b.start - lowest) as u32, (b.end - lowest) as u32);
        self.len += 1;
        true
    }
    /// The blocks in the order they were pushed.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = SackBlock> + '_ {
        self.edges[..self.len as usize]
            .iter()
            .map(|&(s, e)| SackBlock {
                start: self.base + s as u64,
                end: self.base + e as u64,
            })
    }
    /// Keeps the first `n` blocks (the most recent, RFC 2018 section 4).
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Two lists are equal when they hold the same blocks in the same order, whatever their
/// `base` (truncation leaves it at an edge no longer held).
impl PartialEq for SackList {
    fn eq(&self, other: &SackList) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for SackList {}

/// Pushes the blocks in order, keeping those that fit (see `push`).
impl FromIterator<SackBlock> for SackList {
    fn from_iter<I: IntoIterator<Item = SackBlock>>(blocks: I) -> SackList {
        let mut list = SackList::default();
        for b in blocks {
            list.push(b);
        }
        list
    }
}

impl fmt::Debug for SackList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Mobile IPv4 control messages (RFC 3344). Sizes are the IP payloads of the RFC's
/// formats: an ICMP router advertisement with one address and a mobility agent
/// extension with one care-of address (section 2.1: 8 + 8 + 10 bytes), and UDP (port
/// 434) registration messages with the mandatory mobile-home authentication extension
/// (sections 3.3, 3.4, 3.5.2: 8 + 24 + 22 and 8 + 20 + 22 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MipMessage {
    /// Agent advertisement from the mobility agent at `agent`.
    Advertisement { agent: Addr },
    /// Registration request: bind `home` to `care_of` at `home_agent`. A care-of address
    /// equal to the home agent's is a deregistration (the host is back home).
    Request {
        home: Addr,
        home_agent: Addr,
        care_of: Addr,
        id: u64,
    },
    Reply {
        home: Addr,
        home_agent: Addr,
        care_of: Addr,
        id: u64,
    },
}

impl MipMessage {
    pub fn payload_len(&self) -> u32 {
        match self {
            MipMessage::Advertisement { .. } => 26,
            MipMessage::Request { .. } => 54,
            MipMessage::Reply { .. } => 50,
        }
    }
    pub fn protocol(&self) -> u8 {
        match self {
            MipMessage::Advertisement { .. } => proto::ICMP,
            _ => proto::UDP,
        }
    }
}

/// What an IP packet carries.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Body {
    Tcp(TcpSegment),
    Mip(MipMessage),
    /// IP in IP encapsulation (RFC 2003), as a home agent tunnels to a care-of address.
    Tunnel(Box<Packet>),
    /// An IPsec ESP payload: a TCP segment only the SA's endpoints can read.
    Esp(Esp),
    /// A LIFT packet (seed 001, Fig. 2): its header, then, for one carrying an ACK or a
    /// FrACK, the ESP payload (`None` for a Setup or Teardown control packet).
    Lift(LiftHeader, Option<Esp>),
    /// An SCTP packet (RFC 4960), alone or inside ESP (`SctpBody`).
    Sctp(SctpBody),
    /// APOHN's subnetwork layer (seed 000 §III.D): a PDU of the STP connection between a
    /// node and its edge router, carrying datagrams one way and reports the other.
    Sbp(Box<Pdu<SbpPayload>>),
    /// Opaque payload of a protocol we do not model, `len` bytes after the IP header.
    Raw {
        proto: u8,
        len: u32,
    },
}

/// What an SBP connection carries (seed 000 §III.D).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SbpPayload {
    /// An IP packet of one of the node's flows, under the booster's id for it; `sealed`
    /// bytes of subnetwork-layer encryption wrap it to the edge router (§III.E).
    Datagram {
        id: u64,
        packet: Box<Packet>,
        sealed: u32,
    },
    /// The edge router's report (LLE-TCP): datagrams the destination node's MAC
    /// acknowledged, and datagrams the WLAN gave up.
    Report { confirmed: Vec<u64>, lost: Vec<u64> },
}

/// The IP protocol number SBP is written with in captures: the second of RFC 3692's
/// numbers for experiments (LIFT has the first).
pub const PROTO_SBP: u8 = 254;

/// ESP header: SPI and sequence number (RFC 4303 section 2).
const ESP_HEADER: u32 = 8;
/// Pad length and next header bytes of the trailer (RFC 4303 sections 2.4, 2.5).
const ESP_TRAILER: u32 = 2;

/// What ESP adds around a TCP segment besides its 8-byte header and 2-byte trailer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum EspSizes {
    /// AES-CBC (RFC 3602: a 16-byte IV, the payload and trailer padded to the 16-byte
    /// block) with HMAC-SHA1-96 (RFC 2404: a 12-byte ICV).
    #[default]
    AesCbcHmacSha1,
    /// No IV and no padding, and an ICV of `icv` bytes: seed 001 section IV's "18 bytes:
    /// 8 bytes for ESP header, 2 bytes for ESP trailer and 8 bytes for ESP
    /// authentication information" is `Flat { icv: 8 }`.
    Flat { icv: u32 },
}

impl EspSizes {
    /// Bytes of an ESP payload around `plain` bytes of TCP header and data.
    pub fn len(self, plain: u32) -> u32 {
        match self {
            EspSizes::AesCbcHmacSha1 => {
                const IV: u32 = 16;
                const BLOCK: u32 = 16;
                const ICV: u32 = 12;
                ESP_HEADER + IV + (plain + ESP_TRAILER).div_ceil(BLOCK) * BLOCK + ICV
            }
            EspSizes::Flat { icv } => ESP_HEADER + plain + ESP_TRAILER + icv,
        }
    }
}

/// An IPsec ESP payload in transport mode (RFC 4303): a TCP segment only the security
/// association's endpoints can read (see `esp`). Only the SPI and the sequence number are
/// visible on the path.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Esp {
    pub spi: u32,
    pub seq: u32,
    pub(crate) sizes: EspSizes,
    pub(crate) inner: Box<TcpSegment>,
}

impl Esp {
    /// Bytes after the IP header: ESP header, the TCP segment, trailer and whatever the
    /// SA's cipher and integrity check add (`EspSizes`).
    pub fn len(&self) -> u32 {
        self.sizes.len(self.inner.header_len() + self.inner.len)
    }
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// ESP around an SCTP packet: its visible SPI and sequence number, and the flat number
/// of bytes it adds (header, trailer, ICV: `SctpConfig::esp_overhead`, seed 001's 18).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SctpEsp {
    pub spi: u32,
    pub seq: u32,
    pub overhead: u32,
}

/// An SCTP packet as IP's payload: protocol 132, or 50 when wrapped in ESP, in which case
/// only its endpoints can read it (docs/architecture.md, convention 8): `readable` gives
/// the packet to anyone only when it travels in the clear.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SctpBody {
    pub(crate) packet: SctpPacket,
    pub esp: Option<SctpEsp>,
}

impl SctpBody {
    pub fn new(packet: SctpPacket, esp: Option<SctpEsp>) -> SctpBody {
        SctpBody { packet, esp }
    }
    /// The SCTP packet, if it is not encrypted.
    pub fn readable(&self) -> Option<&SctpPacket> {
        self.esp.is_none().then_some(&self.packet)
    }
    /// Bytes after the IP header: the SCTP packet and ESP's overhead.
    pub fn len(&self) -> u32 {
        self.packet.wire_len() + self.esp.map_or(0, |e| e.overhead)
    }
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// An IP packet: typed headers, virtual payload.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Packet {
    pub ip: IpHeader,
    pub body: Body,
}

/// The TTL every packet starts with (Linux's `ip_default_ttl`). Each node that forwards
/// a packet takes one off and drops it at zero (RFC 791, "Time to Live"), so a route of
/// more than this many links delivers nothing.
pub const DEFAULT_TTL: u8 = 64;

impl Packet {
    pub fn tcp(src: Addr, dst: Addr, seg: TcpSegment) -> Packet {
        Packet::new(src, dst, Body::Tcp(seg))
    }
    /// Total length on the wire at the IP layer (IP header included).
    pub fn size(&self) -> u32 {
        IPV4_HEADER_LEN
            + match &self.body {
                Body::Tcp(s) => s.header_len() + s.len,
                Body::Mip(m) => m.payload_len(),
                Body::Tunnel(inner) => inner.size(),
                Body::Esp(e) => e.len(),
                Body::Lift(h, esp) => h.wire_len() + esp.as_ref().map_or(0, Esp::len),
                Body::Sctp(s) => s.len(),
                Body::Sbp(pdu) => pdu.wire_len(),
                Body::Raw { len, .. } => *len,
            }
    }
    pub fn protocol(&self) -> u8 {
        match &self.body {
            Body::Tcp(_) => proto::TCP,
            Body::Mip(m) => m.protocol(),
            Body::Tunnel(_) => proto::IPIP,
            Body::Esp(_) => proto::ESP,
            Body::Lift(..) => PROTO_LIFT,
            Body::Sctp(s) if s.esp.is_some() => proto::ESP,
            Body::Sctp(_) => proto::SCTP,
            Body::Sbp(_) => PROTO_SBP,
            Body::Raw { proto, .. } => *proto,
        }
    }
    /// A packet of `body` from `src` to `dst` with the default TTL.
    pub fn new(src: Addr, dst: Addr, body: Body) -> Packet {
        Packet {
            ip: IpHeader {
                src,
                dst,
                ttl: DEFAULT_TTL,
                ecn: Ecn::NotEct,
            },
            body,
        }
    }
    /// Moves the packet out, leaving an empty one in its place: for a machine that keeps
    /// a packet it was shown and consumes (the driver discards what is left).
    pub fn take(&mut self) -> Packet {
        let empty = Packet::new(self.ip.src, self.ip.dst, Body::Raw { proto: 0, len: 0 });
        std::mem::replace(self, empty)
    }
    /// A packet of nothing, between nowhere: what a place holds before a packet is written
    /// into it (`Machine::poll_transmit_into`).
    pub fn empty() -> Packet {
        Packet::new(Addr(0), Addr(0), Body::Raw { proto: 0, len: 0 })
    }
    pub fn as_tcp(&self) -> Option<&TcpSegment> {
        match &self.body {
            Body::Tcp(s) => Some(s),
            _ => None,
        }
    }
    /// (source, destination) of a packet whose TCP header is readable (not ESP).
    pub fn tcp_endpoints(&self) -> Option<(Endpoint, Endpoint)> {
        Some(self.as_tcp()?.endpoints(self.ip.src, self.ip.dst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn block() -> impl Strategy<Value = SackBlock> {
        // Edges spread over 2^32 bytes, the widest a wire segment's blocks can span.
        let edge = (1u64 << 40)..(1u64 << 40) + u32::MAX as u64;
        (edge.clone(), edge).prop_map(|(start, end)| SackBlock { start, end })
    }

    proptest! {
        /// The compact list gives back exactly the blocks pushed, in order, and equality
        /// sees the blocks only (not the base a truncation leaves behind).
        #[test]
        fn sack_list_keeps_what_it_is_given(
            blocks in proptest::collection::vec(block(), 0..=MAX_SACK_BLOCKS + 1),
            keep in 0..=MAX_SACK_BLOCKS,
        ) {
            let mut list = SackList::default();
            let pushed: Vec<bool> = blocks.iter().map(|&b| list.push(b)).collect();
            let n = blocks.len().min(MAX_SACK_BLOCKS);
            prop_assert!(pushed[..n].iter().all(|&p| p) && pushed[n..].iter().all(|&p| !p));
            prop_assert_eq!(list.iter().collect::<Vec<_>>(), blocks[..n].to_vec());
            list.truncate(keep);
            let kept: SackList = blocks[..n.min(keep)].iter().copied().collect();
            prop_assert_eq!(list, kept);
        }
    }

    #[test]
    fn sack_list_refuses_blocks_it_cannot_hold_exactly() {
        let mut list = SackList::default();
        assert!(list.push(SackBlock { start: 10, end: 20 }));
        let far = 10 + (1u64 << 32);
        assert!(!list.push(SackBlock {
            start: far,
            end: far + 1
        }));
        assert_eq!(list.len(), 1);
    }

    /// Packets are moved whole through the engine's frame store; at 128 bytes or less
    /// the compiler copies them inline rather than calling `memcpy` (docs/performance.md).
    #[test]
    fn a_packet_is_small_enough_to_copy_inline() {
        assert!(size_of::<Packet>() <= 128, "{}", size_of::<Packet>());
    }

    #[test]
    fn sizes_include_options() {
        let mut seg = TcpSegment {
            len: 1460,
            ..Default::default()
        };
        let p = Packet::tcp(Addr(1), Addr(2), seg.clone());
        assert_eq!(p.size(), 1500);
        seg.sack.push(SackBlock { start: 1, end: 2 });
        // 2 + 8 = 10 option bytes, padded to 12.
        assert_eq!(seg.header_len(), 32);
        seg.flags = TcpFlags::SYN;
        assert_eq!(seg.seq_len(), 1461);
    }

    #[test]
    fn sctp_bodies_are_sized_and_numbered_as_ip_payloads() {
        use crate::sctp_chunk::{Chunk, DataChunk};
        let data = DataChunk {
            tsn: 1,
            stream: 0,
            ssn: 0,
            ppid: 0,
            unordered: false,
            begin: true,
            end: true,
            len: 600,
        };
        let sctp = SctpPacket {
            src_port: 1,
            dst_port: 2,
            verification_tag: 3,
            chunks: vec![Chunk::Data(data), Chunk::Data(data)],
        };
        let plain = Packet::new(
            Addr(1),
            Addr(2),
            Body::Sctp(SctpBody::new(sctp.clone(), None)),
        );
        assert_eq!((plain.size(), plain.protocol()), (20 + 1244, 132));
        let esp = SctpEsp {
            spi: 9,
            seq: 1,
            overhead: 18,
        };
        let sealed = Packet::new(Addr(1), Addr(2), Body::Sctp(SctpBody::new(sctp, Some(esp))));
        // Seed 001 section IV: 20 + 18 + 12 + 2 * (16 + 600) = 1282, the IP MTU.
        assert_eq!((sealed.size(), sealed.protocol()), (1282, 50));
        let Body::Sctp(b) = &sealed.body else {
            unreachable!()
        };
        assert!(b.readable().is_none());
        // The enum stays as small as it was: an SCTP body is no larger than a segment.
        assert!(size_of::<SctpBody>() <= size_of::<TcpSegment>());
    }
}
