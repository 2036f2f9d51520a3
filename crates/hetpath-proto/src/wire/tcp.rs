//! TCP header (RFC 9293 section 3.1) and its mapping to the simulator's `TcpSegment`.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Source Port          |       Destination Port        |
//! |                        Sequence Number                        |
//! |                    Acknowledgment Number                      |
//! |  DOffset |  Rsrvd |C|E|U|A|P|R|S|F|           Window          |
//! |           Checksum            |         Urgent Pointer        |
//! |                     Options (DOffset > 5)                     |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The checksum covers the pseudo-header (section 3.1), the header and the payload. The
//! simulator's payload is virtual and encoded as zero bytes, which add nothing to a ones'
//! complement sum, so the checksum of a header-only emission is that of the full segment.
//!
//! Mapping (see `WireCtx`): 32-bit sequence numbers are the 64-bit offsets plus the ISN,
//! mod 2^32; the window field is the byte window shifted right by the sender's scale and
//! capped at 65535, except on SYN segments, which carry it unscaled (RFC 7323 section 2.2).
//! The acknowledgment field is zero when ACK is clear.

use super::checksum;
use super::tcp_options::{OptionSet, SackEdges};
use super::{WireCtx, WireError};
use crate::packet::{
    proto, Addr, SackBlock, SackList, SynOptions, TcpFlags, TcpSegment, Timestamps,
};

/// Length of a TCP header without options.
pub const HEADER_LEN: usize = 20;
/// Largest TCP header: data offset 15.
pub const MAX_HEADER_LEN: usize = 60;
/// MSS assumed when a SYN carries other options but no MSS (RFC 9293 section 3.7.1).
pub const DEFAULT_MSS: u16 = 536;
/// Largest window shift (RFC 7323 section 2.3); larger values are treated as 14.
pub const MAX_WINDOW_SHIFT: u8 = 14;

const SRC_PORT: usize = 0;
const DST_PORT: usize = 2;
const SEQ: usize = 4;
const ACK: usize = 8;
const DATA_OFFSET: usize = 12;
const FLAGS: usize = 13;
const WINDOW: usize = 14;
const CHECKSUM: usize = 16;
const URGENT: usize = 18;

/// A read-only view of a TCP header at the start of a buffer.
///
/// The buffer holds the header and whatever part of the payload was captured.
#[derive(Debug, Clone)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Wraps a buffer without checks; accessors may panic if `check_len` would fail.
    pub fn new_unchecked(buffer: T) -> TcpPacket<T> {
        TcpPacket { buffer }
    }

    /// Wraps a buffer after `check_len`.
    pub fn new_checked(buffer: T) -> Result<TcpPacket<T>, WireError> {
        let p = TcpPacket::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the fixed header is present, the data offset is at least 5 and the
    /// options it announces are present.
    pub fn check_len(&self) -> Result<(), WireError> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have,
            });
        }
        let doff = self.buffer.as_ref()[DATA_OFFSET] >> 4;
        if doff < 5 {
            return Err(WireError::BadDataOffset(doff));
        }
        if have < self.header_len() {
            return Err(WireError::Truncated {
                need: self.header_len(),
                have,
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
    fn u32_at(&self, at: usize) -> u32 {
        let b = self.b();
        u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    pub fn src_port(&self) -> u16 {
        self.u16_at(SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        self.u16_at(DST_PORT)
    }
    pub fn seq_number(&self) -> u32 {
        self.u32_at(SEQ)
    }
    pub fn ack_number(&self) -> u32 {
        self.u32_at(ACK)
    }
    /// Header length in bytes (data offset * 4).
    pub fn header_len(&self) -> usize {
        (self.b()[DATA_OFFSET] >> 4) as usize * 4
    }
    /// The eight flag bits CWR..FIN (the reserved bits are not included).
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(self.b()[FLAGS])
    }
    pub fn window(&self) -> u16 {
        self.u16_at(WINDOW)
    }
    pub fn checksum(&self) -> u16 {
        self.u16_at(CHECKSUM)
    }
    pub fn urgent(&self) -> u16 {
        self.u16_at(URGENT)
    }
    pub fn options(&self) -> &[u8] {
        &self.b()[HEADER_LEN..self.header_len()]
    }
    /// The payload bytes present in the buffer.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }

    /// Whether pseudo-header, header and payload sum to all ones. Meaningful only when
    /// the buffer holds the whole segment.
    pub fn verify_checksum(&self, src: Addr, dst: Addr) -> bool {
        let len = self.b().len() as u32;
        let acc = checksum::pseudo_header(src, dst, proto::TCP, len) + checksum::sum(self.b());
        checksum::fold(acc) == 0xffff
    }
}

/// A TCP header in wire terms, with a virtual payload of `payload_len` zero bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq_number: u32,
    pub ack_number: u32,
    pub flags: TcpFlags,
    pub window: u16,
    pub urgent: u16,
    pub options: OptionSet,
    pub payload_len: u32,
}

impl TcpRepr {
    /// Parses a checked view holding the header and the captured part of the payload;
    /// `segment_len` is the segment's true length (IP total length minus IP header).
    ///
    /// The checksum is verified when the whole segment is present; a capture cut short
    /// (pcap snaplen) cannot be checked and is accepted.
    pub fn parse<T: AsRef<[u8]>>(
        p: &TcpPacket<T>,
        src: Addr,
        dst: Addr,
        segment_len: usize,
    ) -> Result<TcpRepr, WireError> {
        let hlen = p.header_len();
        if segment_len < hlen {
            return Err(WireError::BadSegmentLen {
                segment: segment_len,
                header: hlen,
            });
        }
        let have = p.b().len();
        if have >= segment_len {
            let whole = TcpPacket::new_unchecked(&p.b()[..segment_len]);
            if !whole.verify_checksum(src, dst) {
                return Err(WireError::TcpChecksum);
            }
        }
        Ok(TcpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq_number: p.seq_number(),
            ack_number: p.ack_number(),
            flags: p.flags(),
            window: p.window(),
            urgent: p.urgent(),
            options: OptionSet::parse(p.options())?,
            payload_len: (segment_len - hlen) as u32,
        })
    }

    /// Header length, options included.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

    /// Header plus payload.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len as usize
    }

    /// Writes the header (options and checksum included) into the front of `buf` and
    /// returns its length. The payload is not written; its zero bytes do not change the
    /// checksum, so the caller may append them or not.
    pub fn emit_header(&self, buf: &mut [u8], src: Addr, dst: Addr) -> Result<usize, WireError> {
        let hlen = self.header_len();
        if hlen > MAX_HEADER_LEN {
            return Err(WireError::OptionsTooLong(self.options.len()));
        }
        if buf.len() < hlen {
            return Err(WireError::BufferTooSmall {
                need: hlen,
                have: buf.len(),
            });
        }
        let b = &mut buf[..hlen];
        b[SRC_PORT..SRC_PORT + 2].copy_from_slice(&self.src_port.to_be_bytes());
        b[DST_PORT..DST_PORT + 2].copy_from_slice(&self.dst_port.to_be_bytes());
        b[SEQ..SEQ + 4].copy_from_slice(&self.seq_number.to_be_bytes());
        b[ACK..ACK + 4].copy_from_slice(&self.ack_number.to_be_bytes());
        b[DATA_OFFSET] = ((hlen / 4) as u8) << 4;
        b[FLAGS] = self.flags.0;
        b[WINDOW..WINDOW + 2].copy_from_slice(&self.window.to_be_bytes());
        b[CHECKSUM..CHECKSUM + 2].copy_from_slice(&[0, 0]);
        b[URGENT..URGENT + 2].copy_from_slice(&self.urgent.to_be_bytes());
        self.options.emit(&mut b[HEADER_LEN..])?;
        let seg_len = self.buffer_len() as u32;
        let acc = checksum::pseudo_header(src, dst, proto::TCP, seg_len) + checksum::sum(b);
        b[CHECKSUM..CHECKSUM + 2].copy_from_slice(&checksum::finish(acc).to_be_bytes());
        Ok(hlen)
    }

    /// The wire form of a simulator segment (see the module doc for the mapping).
    pub fn from_segment(seg: &TcpSegment, ctx: &WireCtx) -> Result<TcpRepr, WireError> {
        let is_syn = seg.flags.contains(TcpFlags::SYN);
        let window = if is_syn {
            seg.window
        } else {
            seg.window >> ctx.window_shift()
        };
        let mut options = OptionSet::default();
        if let Some(o) = seg.syn_options {
            options.mss = Some(o.mss);
            options.sack_permitted = o.sack_permitted;
            options.window_scale = (o.window_scale > 0).then_some(o.window_scale);
        }
        for b in seg.sack.iter() {
            options.sack.push(ctx.rcv_seq(b.start), ctx.rcv_seq(b.end));
        }
        options.timestamps = seg.ts.map(|t| (t.val, t.ecr));
        let repr = TcpRepr {
            src_port: seg.src_port,
            dst_port: seg.dst_port,
            seq_number: ctx.snd_seq(seg.seq),
            ack_number: if seg.flags.contains(TcpFlags::ACK) {
                ctx.rcv_seq(seg.ack)
            } else {
                0
            },
            flags: seg.flags,
            window: window.min(u16::MAX as u64) as u16,
            urgent: 0,
            options,
            payload_len: seg.len,
        };
        if repr.header_len() > MAX_HEADER_LEN {
            return Err(WireError::OptionsTooLong(repr.options.len()));
        }
        Ok(repr)
    }

    /// Back to a simulator segment. Offsets come out mod 2^32 (the wire cannot say more);
    /// the window is the field shifted left by the sender's scale (unscaled on SYN).
    pub fn to_segment(&self, ctx: &WireCtx) -> TcpSegment {
        let o = &self.options;
        let syn_options =
            (o.mss.is_some() || o.sack_permitted || o.window_scale.is_some()).then(|| SynOptions {
                mss: o.mss.unwrap_or(DEFAULT_MSS),
                sack_permitted: o.sack_permitted,
                window_scale: o.window_scale.unwrap_or(0),
            });
        let mut sack = SackList::default();
        for &(left, right) in o.sack.as_slice() {
            sack.push(SackBlock {
                start: ctx.rcv_offset(left),
                end: ctx.rcv_offset(right),
            });
        }
        let window = if self.flags.contains(TcpFlags::SYN) {
            self.window as u64
        } else {
            (self.window as u64) << ctx.window_shift()
        };
        TcpSegment {
            src_port: self.src_port,
            dst_port: self.dst_port,
            seq: ctx.snd_offset(self.seq_number),
            ack: if self.flags.contains(TcpFlags::ACK) {
                ctx.rcv_offset(self.ack_number)
            } else {
                0
            },
            flags: self.flags,
            window,
            len: self.payload_len,
            syn_options,
            sack,
            ts: o.timestamps.map(|(val, ecr)| Timestamps { val, ecr }),
            // The XCP shim and load-factor codes are not written to captures.
            rap: None,
            wscale: if self.flags.contains(TcpFlags::SYN) {
                0
            } else {
                ctx.window_shift()
            },
        }
    }

    /// SACK edges as 32-bit numbers (shorthand for `options.sack`).
    pub fn sack(&self) -> &SackEdges {
        &self.options.sack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Addr = Addr(0x0a00_0001);
    const B: Addr = Addr(0x0a00_0002);

    fn emit_full(r: &TcpRepr) -> Vec<u8> {
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit_header(&mut buf, A, B).unwrap();
        buf
    }

    #[test]
    fn header_only_and_full_segment_share_a_checksum() {
        let r = TcpRepr {
            payload_len: 100,
            flags: TcpFlags::ACK,
            ..Default::default()
        };
        let full = emit_full(&r);
        let p = TcpPacket::new_checked(&full[..]).unwrap();
        assert!(p.verify_checksum(A, B));
        assert_eq!(TcpRepr::parse(&p, A, B, full.len()), Ok(r));
        // Truncated capture: checksum not checkable, header still parses.
        let head = TcpPacket::new_checked(&full[..20]).unwrap();
        assert_eq!(TcpRepr::parse(&head, A, B, full.len()), Ok(r));
    }

    #[test]
    fn rejects_bad_offsets_lengths_and_checksums() {
        let r = TcpRepr {
            flags: TcpFlags::SYN,
            ..Default::default()
        };
        let mut buf = emit_full(&r);
        assert!(matches!(
            TcpPacket::new_checked(&buf[..19]),
            Err(WireError::Truncated { .. })
        ));
        buf[12] = 0x40;
        assert_eq!(
            TcpPacket::new_checked(&buf[..]).unwrap_err(),
            WireError::BadDataOffset(4)
        );
        buf[12] = 0x60;
        assert_eq!(
            TcpPacket::new_checked(&buf[..]).unwrap_err(),
            WireError::Truncated { need: 24, have: 20 }
        );
        buf[12] = 0x50;
        let p = TcpPacket::new_checked(&buf[..]).unwrap();
        assert_eq!(
            TcpRepr::parse(&p, A, B, 10),
            Err(WireError::BadSegmentLen {
                segment: 10,
                header: 20
            })
        );
        assert_eq!(TcpRepr::parse(&p, B, A, 20), Ok(r)); // the sum is symmetric in src/dst
        assert_eq!(
            TcpRepr::parse(&p, A, Addr(3), 20),
            Err(WireError::TcpChecksum)
        );
    }

    #[test]
    fn window_is_scaled_except_on_syn() {
        let ctx = WireCtx {
            wscale: 7,
            ..Default::default()
        };
        let mut seg = TcpSegment {
            window: 1 << 20,
            flags: TcpFlags::ACK,
            ..Default::default()
        };
        assert_eq!(TcpRepr::from_segment(&seg, &ctx).unwrap().window, 1 << 13);
        seg.window = u64::MAX;
        assert_eq!(TcpRepr::from_segment(&seg, &ctx).unwrap().window, 65535);
        seg.flags = TcpFlags::SYN;
        seg.window = 65536;
        assert_eq!(TcpRepr::from_segment(&seg, &ctx).unwrap().window, 65535);
        seg.window = 1000;
        assert_eq!(TcpRepr::from_segment(&seg, &ctx).unwrap().window, 1000);
        // Shifts above 14 are treated as 14 and never overflow.
        let big = WireCtx {
            wscale: 200,
            ..Default::default()
        };
        seg.flags = TcpFlags::ACK;
        seg.window = 1 << 14;
        let r = TcpRepr::from_segment(&seg, &big).unwrap();
        assert_eq!(r.window, 1);
        assert_eq!(r.to_segment(&big).window, 1 << 14);
    }

    #[test]
    fn too_many_options_is_an_error() {
        let mut seg = TcpSegment {
            syn_options: Some(SynOptions {
                mss: 1,
                sack_permitted: true,
                window_scale: 1,
            }),
            ..Default::default()
        };
        for i in 0..4 {
            seg.sack.push(SackBlock {
                start: i,
                end: i + 1,
            });
        }
        assert_eq!(seg.header_len(), 64);
        let err = TcpRepr::from_segment(&seg, &WireCtx::default()).unwrap_err();
        assert_eq!(err, WireError::OptionsTooLong(44));
    }
}
