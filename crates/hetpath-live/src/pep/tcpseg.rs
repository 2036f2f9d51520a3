//! One satellite-leg TCP segment as the bytes of a `Segment` frame (docs/live.md,
//! "Gateway mode"): the header fields hetpath-proto's `Connection` reads, then the
//! payload. The two gateways are the only parties, the frame is already authenticated
//! and encrypted, and the connection is named by the frame, so this is not the RFC 9293
//! wire format: sequence and ACK numbers are 64-bit, hetpath-proto's offsets from each
//! side's random initial sequence number (`to_wire`, `from_wire`; no wrap), ports are
//! left out, and options are fixed fields.
//!
//! ```text
//! flags u8 | present u8 | wscale u8 | seq u64 | ack u64 | window u32
//! [SYN options: mss u16, sack_permitted u8, window_scale u8]     present bit 0
//! [timestamps: val u32, ecr u32]                                 present bit 1
//! [XCP: cwnd u64, rtt ns u64, feedback i64]                      present bit 2
//! [load factor: code u8, bits u8]                                present bit 3
//! [SACK blocks: start u64, end u64] x n                          present bits 4-6: n <= 4
//! payload (the rest)
//! ```
//!
//! `encode` drops SACK blocks that do not fit the room it is given, as a TCP sender
//! leaves out blocks its option space cannot hold (RFC 2018 section 3: the receiver
//! reports what fits). `decode` takes any bytes and never panics.

use hetpath_proto::packet::{
    RouterFeedback, SackBlock, SackList, SynOptions, TcpFlags, TcpSegment, Timestamps, XcpHeader,
    MAX_SACK_BLOCKS,
};
use hetpath_proto::time::Dur;

/// flags, present, wscale, seq, ack, window.
pub const BASE: usize = 1 + 1 + 1 + 8 + 8 + 4;
const SYN_OPTIONS: usize = 4;
const TIMESTAMPS: usize = 8;
const XCP: usize = 24;
const LOAD: usize = 2;
const SACK_BLOCK: usize = 16;
/// The most header bytes a segment needs besides its SACK blocks: what a data segment's
/// payload must leave room for.
pub const MAX_HEADER: usize = BASE + SYN_OPTIONS + TIMESTAMPS + XCP;

/// Sequence numbers beyond this are refused: no connection carries 2^62 bytes, and the
/// receiver adds lengths to them.
const MAX_SEQ: u64 = 1 << 62;

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SegError {
    #[error("segment truncated")]
    Truncated,
    #[error("more than {MAX_SACK_BLOCKS} SACK blocks")]
    TooManySack,
    #[error("sequence number out of range")]
    Range,
}

fn header_len(seg: &TcpSegment, sack: usize) -> usize {
    BASE + seg.syn_options.map_or(0, |_| SYN_OPTIONS)
        + seg.ts.map_or(0, |_| TIMESTAMPS)
        + match seg.rap.as_deref() {
            Some(RouterFeedback::Xcp(_)) => XCP,
            Some(RouterFeedback::Load { .. }) => LOAD,
            None => 0,
        }
        + sack * SACK_BLOCK
}

/// Initial sequence numbers lie below this, so that a connection's numbers on the wire
/// stay far below `MAX_SEQ`.
const ISN_LIMIT: u64 = 1 << 61;

/// A random initial sequence number for one side of a connection: as RFC 9293 section
/// 3.4.1 asks of ISNs, so that a segment of another connection or run (whose id it
/// would also need) does not fall in this one's sequence space.
pub fn random_isn(rng: &mut super::keyrng::KeyRng) -> u64 {
    rng.u64() % ISN_LIMIT
}

/// `seg` as it goes on the wire: its sequence number counted from `own_isn`, its ACK
/// and SACK edges (the peer's sequence space) from `peer_isn`.
pub fn to_wire(seg: &TcpSegment, own_isn: u64, peer_isn: u64) -> TcpSegment {
    let mut w = seg.clone();
    w.seq = seg.seq + own_isn;
    if seg.flags.contains(TcpFlags::ACK) {
        w.ack = seg.ack + peer_isn;
    }
    let mut sack = SackList::default();
    for b in seg.sack.iter() {
        sack.push(SackBlock {
            start: b.start + peer_isn,
            end: b.end + peer_isn,
        });
    }
    w.sack = sack;
    w
}

/// The reverse of the peer's `to_wire`: false if a number lies below its ISN (not of
/// this connection), `seg` then half changed and to be dropped.
pub fn from_wire(seg: &mut TcpSegment, peer_isn: u64, own_isn: u64) -> bool {
    let Some(seq) = seg.seq.checked_sub(peer_isn) else {
        return false;
    };
    seg.seq = seq;
    if seg.flags.contains(TcpFlags::ACK) {
        let Some(ack) = seg.ack.checked_sub(own_isn) else {
            return false;
        };
        seg.ack = ack;
    }
    let mut sack = SackList::default();
    for b in seg.sack.iter() {
        let (Some(start), Some(end)) = (b.start.checked_sub(own_isn), b.end.checked_sub(own_isn))
        else {
            return false;
        };
        sack.push(SackBlock { start, end });
    }
    seg.sack = sack;
    true
}

/// Appends `seg` and its `payload` (`seg.len` bytes) to `out`, keeping within `room`
/// bytes by leaving out SACK blocks. Returns false (and appends nothing) if even without
/// them it does not fit.
pub fn encode(seg: &TcpSegment, payload: &[u8], room: usize, out: &mut Vec<u8>) -> bool {
    debug_assert_eq!(payload.len(), seg.len as usize);
    let fixed = header_len(seg, 0) + payload.len();
    if fixed > room {
        return false;
    }
    let sack = seg.sack.len().min((room - fixed) / SACK_BLOCK);
    let mut present = 0u8;
    if seg.syn_options.is_some() {
        present |= 1;
    }
    if seg.ts.is_some() {
        present |= 2;
    }
    match seg.rap.as_deref() {
        Some(RouterFeedback::Xcp(_)) => present |= 4,
        Some(RouterFeedback::Load { .. }) => present |= 8,
        None => {}
    }
    present |= (sack as u8) << 4;
    out.push(seg.flags.0);
    out.push(present);
    out.push(seg.wscale);
    out.extend_from_slice(&seg.seq.to_be_bytes());
    out.extend_from_slice(&seg.ack.to_be_bytes());
    out.extend_from_slice(&(seg.window.min(u32::MAX as u64) as u32).to_be_bytes());
    if let Some(o) = seg.syn_options {
        out.extend_from_slice(&o.mss.to_be_bytes());
        out.push(o.sack_permitted as u8);
        out.push(o.window_scale);
    }
    if let Some(ts) = seg.ts {
        out.extend_from_slice(&ts.val.to_be_bytes());
        out.extend_from_slice(&ts.ecr.to_be_bytes());
    }
    match seg.rap.as_deref() {
        Some(RouterFeedback::Xcp(x)) => {
            out.extend_from_slice(&x.cwnd.to_be_bytes());
            out.extend_from_slice(&x.rtt.0.to_be_bytes());
            out.extend_from_slice(&x.feedback.to_be_bytes());
        }
        Some(RouterFeedback::Load { code, bits }) => {
            out.push(*code);
            out.push(*bits);
        }
        None => {}
    }
    // The first blocks are the most recent (RFC 2018 section 4): those are kept.
    for b in seg.sack.iter().take(sack) {
        out.extend_from_slice(&b.start.to_be_bytes());
        out.extend_from_slice(&b.end.to_be_bytes());
    }
    out.extend_from_slice(payload);
    true
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], SegError> {
        if self.b.len() < N {
            return Err(SegError::Truncated);
        }
        let (h, t) = self.b.split_at(N);
        self.b = t;
        let mut a = [0u8; N];
        a.copy_from_slice(h);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, SegError> {
        Ok(self.take::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, SegError> {
        Ok(u16::from_be_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32, SegError> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, SegError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
    fn seq(&mut self) -> Result<u64, SegError> {
        let v = self.u64()?;
        if v > MAX_SEQ {
            return Err(SegError::Range);
        }
        Ok(v)
    }
}

/// The segment (ports zero: the caller knows the connection) and its payload.
pub fn decode(bytes: &[u8]) -> Result<(TcpSegment, &[u8]), SegError> {
    let mut r = Reader { b: bytes };
    let flags = TcpFlags(r.u8()?);
    let present = r.u8()?;
    let wscale = r.u8()?;
    let seq = r.seq()?;
    let ack = r.seq()?;
    let window = r.u32()? as u64;
    let mut seg = TcpSegment {
        seq,
        ack,
        flags,
        window,
        wscale: wscale.min(14),
        ..TcpSegment::default()
    };
    if present & 1 != 0 {
        seg.syn_options = Some(SynOptions {
            mss: r.u16()?,
            sack_permitted: r.u8()? != 0,
            window_scale: r.u8()?.min(14),
        });
    }
    if present & 2 != 0 {
        seg.ts = Some(Timestamps {
            val: r.u32()?,
            ecr: r.u32()?,
        });
    }
    if present & 4 != 0 {
        seg.rap = Some(Box::new(RouterFeedback::Xcp(XcpHeader {
            cwnd: r.u64()?,
            rtt: Dur(r.u64()?),
            feedback: r.u64()? as i64,
        })));
    } else if present & 8 != 0 {
        seg.rap = Some(Box::new(RouterFeedback::Load {
            code: r.u8()?,
            bits: r.u8()?,
        }));
    }
    let n = (present >> 4) as usize;
    if n > MAX_SACK_BLOCKS {
        return Err(SegError::TooManySack);
    }
    let mut sack = SackList::default();
    for _ in 0..n {
        let (start, end) = (r.seq()?, r.seq()?);
        // A block is a non-empty range; anything else is left out.
        if start < end {
            sack.push(SackBlock { start, end });
        }
    }
    seg.sack = sack;
    let payload = r.b;
    seg.len = u32::try_from(payload.len()).map_err(|_| SegError::Range)?;
    if seq
        .checked_add(payload.len() as u64 + 1)
        .is_none_or(|e| e > MAX_SEQ)
    {
        return Err(SegError::Range);
    }
    Ok((seg, payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> TcpSegment {
        TcpSegment {
            seq: 1 << 33,
            ack: 77,
            flags: TcpFlags::ACK | TcpFlags::FIN,
            window: 123_456,
            len: 5,
            syn_options: Some(SynOptions {
                mss: 1300,
                sack_permitted: true,
                window_scale: 7,
            }),
            ts: Some(Timestamps { val: 1, ecr: 2 }),
            rap: Some(Box::new(RouterFeedback::Xcp(XcpHeader {
                cwnd: 9,
                rtt: Dur(10),
                feedback: -3,
            }))),
            sack: [
                SackBlock {
                    start: 100,
                    end: 200,
                },
                SackBlock {
                    start: 300,
                    end: 400,
                },
            ]
            .into_iter()
            .collect(),
            wscale: 7,
            ..TcpSegment::default()
        }
    }

    #[test]
    fn round_trip_and_sack_left_out_when_short_of_room() {
        let seg = sample();
        let mut out = Vec::new();
        assert!(encode(&seg, b"hello", 1000, &mut out));
        let (back, payload) = decode(&out).unwrap();
        assert_eq!(back, seg);
        assert_eq!(payload, b"hello");
        let full = out.len();
        let mut out = Vec::new();
        assert!(encode(&seg, b"hello", full - 1, &mut out));
        let (back, _) = decode(&out).unwrap();
        assert_eq!(back.sack.len(), 1, "the most recent block kept");
        let mut out = Vec::new();
        assert!(!encode(&seg, b"hello", full - 2 * SACK_BLOCK - 1, &mut out));
        assert!(out.is_empty());
    }

    proptest! {
        #[test]
        fn any_bytes_decode_without_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&b);
        }
    }

    #[test]
    fn the_wire_numbers_are_offset_by_each_sides_isn_and_back() {
        let seg = sample();
        let wire = to_wire(&seg, 1000, 5000);
        assert_eq!((wire.seq, wire.ack), (seg.seq + 1000, 77 + 5000));
        assert_eq!(wire.sack.iter().next().unwrap().start, 5100);
        let mut back = wire.clone();
        assert!(from_wire(&mut back, 1000, 5000));
        assert_eq!(format!("{back:?}"), format!("{seg:?}"));
        let mut other = wire;
        assert!(!from_wire(&mut other, 1 << 40, 5000), "below the ISN");
    }
}
