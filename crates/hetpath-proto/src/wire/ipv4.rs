//! IPv4 header (RFC 791 section 3.1), with the DSCP/ECN split of the old TOS octet
//! (RFC 2474 section 3, RFC 3168 section 5).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Version|  IHL  |   DSCP    |ECN|          Total Length         |
//! |         Identification        |Flags|      Fragment Offset    |
//! |  Time to Live |    Protocol   |         Header Checksum       |
//! |                       Source Address                          |
//! |                    Destination Address                        |
//! |                    Options (IHL > 5)                          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! `Ipv4Packet` is a view over bytes: `new_checked` validates the lengths once, after which
//! the accessors cannot index out of bounds. `Ipv4Repr` holds the fields we model; it is
//! produced by `parse` (which never panics) and written by `emit`. We always emit IHL 5
//! (no options) with DF set; parsing accepts and skips options.

use super::checksum;
use super::WireError;
use crate::packet::{Addr, Ecn, IpHeader, IPV4_HEADER_LEN};

/// Length of an IPv4 header without options.
pub const HEADER_LEN: usize = IPV4_HEADER_LEN as usize;
/// Largest IPv4 total length (16-bit field).
pub const MAX_TOTAL_LEN: usize = u16::MAX as usize;

const VER_IHL: usize = 0;
const TOS: usize = 1;
const TOTAL_LEN: usize = 2;
const IDENT: usize = 4;
const FLAGS_FRAG: usize = 6;
const TTL: usize = 8;
const PROTOCOL: usize = 9;
const CHECKSUM: usize = 10;
const SRC: usize = 12;
const DST: usize = 16;

const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1fff;

/// A read/write view of an IPv4 header at the start of a buffer.
///
/// The buffer may be shorter than the total length the header announces (a capture cut by
/// a snaplen) or longer (trailing link padding); `payload` returns what is present.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps a buffer without checks; accessors may panic if `check_len` would fail.
    pub fn new_unchecked(buffer: T) -> Ipv4Packet<T> {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer after `check_len`.
    pub fn new_checked(buffer: T) -> Result<Ipv4Packet<T>, WireError> {
        let p = Ipv4Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the fixed header and any options are present, that IHL is at least 5
    /// and that the total length covers the header. The payload may be cut short.
    pub fn check_len(&self) -> Result<(), WireError> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have,
            });
        }
        let ihl = self.buffer.as_ref()[VER_IHL] & 0x0f;
        if ihl < 5 {
            return Err(WireError::BadIpHeaderLen(ihl));
        }
        let hlen = self.header_len();
        if have < hlen {
            return Err(WireError::Truncated { need: hlen, have });
        }
        let total = self.total_len() as usize;
        if total < hlen {
            return Err(WireError::BadTotalLen {
                total,
                header: hlen,
            });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    fn u16_at(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.b()[at], self.b()[at + 1]])
    }
    fn addr_at(&self, at: usize) -> Addr {
        let b = self.b();
        Addr(u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
    }

    pub fn version(&self) -> u8 {
        self.b()[VER_IHL] >> 4
    }
    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        (self.b()[VER_IHL] & 0x0f) as usize * 4
    }
    pub fn dscp(&self) -> u8 {
        self.b()[TOS] >> 2
    }
    pub fn ecn(&self) -> Ecn {
        ecn_from_bits(self.b()[TOS])
    }
    pub fn total_len(&self) -> u16 {
        self.u16_at(TOTAL_LEN)
    }
    pub fn ident(&self) -> u16 {
        self.u16_at(IDENT)
    }
    pub fn dont_frag(&self) -> bool {
        self.u16_at(FLAGS_FRAG) & FLAG_DF != 0
    }
    pub fn more_frags(&self) -> bool {
        self.u16_at(FLAGS_FRAG) & FLAG_MF != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> usize {
        (self.u16_at(FLAGS_FRAG) & FRAG_OFFSET_MASK) as usize * 8
    }
    pub fn ttl(&self) -> u8 {
        self.b()[TTL]
    }
    pub fn protocol(&self) -> u8 {
        self.b()[PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        self.u16_at(CHECKSUM)
    }
    pub fn src(&self) -> Addr {
        self.addr_at(SRC)
    }
    pub fn dst(&self) -> Addr {
        self.addr_at(DST)
    }

    /// Whether the header (options included) sums to all ones.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(&self.b()[..self.header_len()])) == 0xffff
    }

    /// Whether the buffer holds less than `total_len` bytes.
    pub fn is_truncated(&self) -> bool {
        self.b().len() < self.total_len() as usize
    }

    /// The payload bytes present in the buffer, bounded by the total length.
    pub fn payload(&self) -> &[u8] {
        let end = (self.total_len() as usize).min(self.b().len());
        &self.b()[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn set_u16(&mut self, at: usize, v: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// Recomputes the header checksum over the header (options included).
    pub fn fill_checksum(&mut self) {
        self.set_u16(CHECKSUM, 0);
        let c = checksum::checksum(&self.buffer.as_ref()[..self.header_len()]);
        self.set_u16(CHECKSUM, c);
    }
}

fn ecn_from_bits(tos: u8) -> Ecn {
    match tos & 0b11 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// The IPv4 header fields the simulator models, in wire terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: Addr,
    pub dst: Addr,
    pub protocol: u8,
    pub dscp: u8,
    pub ecn: Ecn,
    pub ident: u16,
    pub dont_frag: bool,
    pub ttl: u8,
    /// Bytes after the header: total length minus header length.
    pub payload_len: u16,
}

impl Ipv4Repr {
    /// The header of a simulator packet with identification `ident`, DF set, DSCP 0.
    /// Fails if the total length would not fit in 16 bits.
    pub fn from_header(
        ip: &IpHeader,
        ident: u16,
        protocol: u8,
        payload_len: u64,
    ) -> Result<Ipv4Repr, WireError> {
        let total = HEADER_LEN as u64 + payload_len;
        if total > MAX_TOTAL_LEN as u64 {
            return Err(WireError::TooLong(total));
        }
        Ok(Ipv4Repr {
            src: ip.src,
            dst: ip.dst,
            protocol,
            dscp: 0,
            ecn: ip.ecn,
            ident,
            dont_frag: true,
            ttl: ip.ttl,
            payload_len: payload_len as u16,
        })
    }

    /// Back to the simulator's header (DSCP, identification and DF are dropped).
    pub fn to_header(&self) -> IpHeader {
        IpHeader {
            src: self.src,
            dst: self.dst,
            ttl: self.ttl,
            ecn: self.ecn,
        }
    }

    /// Parses a checked view: version 4, valid header checksum, not a fragment.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Ipv4Repr, WireError> {
        if p.version() != 4 {
            return Err(WireError::BadVersion(p.version()));
        }
        if !p.verify_checksum() {
            return Err(WireError::Ipv4Checksum);
        }
        if p.more_frags() || p.frag_offset() != 0 {
            return Err(WireError::Fragment);
        }
        Ok(Ipv4Repr {
            src: p.src(),
            dst: p.dst(),
            protocol: p.protocol(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            ttl: p.ttl(),
            // check_len guarantees total_len >= header_len.
            payload_len: p.total_len() - p.header_len() as u16,
        })
    }

    /// Header length we emit (no options).
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Total length of the packet this header describes.
    pub fn total_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }

    /// Writes the 20-byte header with its checksum into the front of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::BufferTooSmall {
                need: HEADER_LEN,
                have: buf.len(),
            });
        }
        if self.total_len() > MAX_TOTAL_LEN {
            return Err(WireError::TooLong(self.total_len() as u64));
        }
        let b = &mut buf[..HEADER_LEN];
        b[VER_IHL] = 0x45;
        b[TOS] = (self.dscp << 2) | self.ecn as u8;
        b[TOTAL_LEN..TOTAL_LEN + 2].copy_from_slice(&(self.total_len() as u16).to_be_bytes());
        b[IDENT..IDENT + 2].copy_from_slice(&self.ident.to_be_bytes());
        let flags = if self.dont_frag { FLAG_DF } else { 0 };
        b[FLAGS_FRAG..FLAGS_FRAG + 2].copy_from_slice(&flags.to_be_bytes());
        b[TTL] = self.ttl;
        b[PROTOCOL] = self.protocol;
        b[SRC..SRC + 4].copy_from_slice(&self.src.octets());
        b[DST..DST + 4].copy_from_slice(&self.dst.octets());
        Ipv4Packet::new_unchecked(b).fill_checksum();
        Ok(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src: Addr(0xc0a8_0001),
            dst: Addr(0xc0a8_00c7),
            protocol: 17,
            dscp: 0,
            ecn: Ecn::NotEct,
            ident: 0,
            dont_frag: true,
            ttl: 64,
            payload_len: 0x73 - 20,
        }
    }

    #[test]
    fn emits_known_header() {
        let mut buf = [0u8; 20];
        assert_eq!(repr().emit(&mut buf), Ok(20));
        let want = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(buf, want);
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(p.is_truncated());
        assert_eq!(Ipv4Repr::parse(&p), Ok(repr()));
    }

    #[test]
    fn ecn_and_dscp_share_the_tos_octet() {
        let mut r = repr();
        r.ecn = Ecn::Ce;
        r.dscp = 46;
        let mut buf = [0u8; 20];
        r.emit(&mut buf).unwrap();
        assert_eq!(buf[1], 46 << 2 | 3);
        assert_eq!(
            Ipv4Repr::parse(&Ipv4Packet::new_checked(&buf[..]).unwrap()),
            Ok(r)
        );
    }

    #[test]
    fn rejects_bad_headers() {
        let mut buf = [0u8; 24];
        repr().emit(&mut buf).unwrap();
        let check = |b: &[u8]| Ipv4Packet::new_checked(b).and_then(|p| Ipv4Repr::parse(&p));
        assert_eq!(
            check(&buf[..19]),
            Err(WireError::Truncated { need: 20, have: 19 })
        );
        let mut bad = buf;
        bad[0] = 0x44;
        assert_eq!(check(&bad), Err(WireError::BadIpHeaderLen(4)));
        bad[0] = 0x46; // IHL 6 needs 24 bytes: present, but total length 0x73 is fine
        assert_eq!(
            check(&bad[..22]),
            Err(WireError::Truncated { need: 24, have: 22 })
        );
        bad = buf;
        bad[0] = 0x65;
        assert_eq!(check(&bad), Err(WireError::BadVersion(6)));
        bad = buf;
        bad[3] = 10;
        assert_eq!(
            check(&bad),
            Err(WireError::BadTotalLen {
                total: 10,
                header: 20
            })
        );
        bad = buf;
        bad[8] ^= 1;
        assert_eq!(check(&bad), Err(WireError::Ipv4Checksum));
        bad = buf;
        bad[6] |= 0x20; // MF
        Ipv4Packet::new_unchecked(&mut bad[..20]).fill_checksum();
        assert_eq!(check(&bad), Err(WireError::Fragment));
    }

    #[test]
    fn payload_is_bounded_by_total_length() {
        let mut r = repr();
        r.payload_len = 4;
        let mut buf = [0xaa; 30];
        r.emit(&mut buf).unwrap();
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.payload(), &[0xaa; 4]);
        assert!(!p.is_truncated());
    }
}
