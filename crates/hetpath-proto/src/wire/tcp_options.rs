//! TCP options (RFC 9293 section 3.2): End of Option List (kind 0), No-Operation (kind 1),
//! Maximum Segment Size (kind 2, RFC 9293 section 3.7.1), Window Scale (kind 3, RFC 7323
//! section 2), SACK-Permitted (kind 4), SACK (kind 5, RFC 2018 section 3) and Timestamps
//! (kind 8, RFC 7323 section 3).
//!
//! Every option but kinds 0 and 1 is `kind, length, data` where the length counts the kind
//! and length octets. The parser is an iterator over the option bytes that yields an error
//! (and then stops) on a length of 0 or 1, a length running past the header, a missing
//! length octet, or a known kind with the wrong length; it never panics.

use super::WireError;

pub const KIND_EOL: u8 = 0;
pub const KIND_NOP: u8 = 1;
pub const KIND_MSS: u8 = 2;
pub const KIND_WINDOW_SCALE: u8 = 3;
pub const KIND_SACK_PERMITTED: u8 = 4;
pub const KIND_SACK: u8 = 5;
pub const KIND_TIMESTAMPS: u8 = 8;

/// Most SACK blocks an option can hold: (40 - 2) / 8 = 4.
pub const MAX_WIRE_SACK_BLOCKS: usize = 4;

/// SACK blocks as 32-bit (left edge, right edge) sequence numbers (RFC 2018 section 3).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SackEdges {
    blocks: [(u32, u32); MAX_WIRE_SACK_BLOCKS],
    len: u8,
}

impl SackEdges {
    /// Appends a block; false if the list is full.
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        if (self.len as usize) < MAX_WIRE_SACK_BLOCKS {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
            true
        } else {
            false
        }
    }
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..self.len as usize]
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One parsed TCP option.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TcpOption<'a> {
    EndOfList,
    NoOperation,
    MaxSegmentSize(u16),
    WindowScale(u8),
    SackPermitted,
    Sack(SackEdges),
    /// TSval, TSecr.
    Timestamps(u32, u32),
    Unknown {
        kind: u8,
        data: &'a [u8],
    },
}

/// Iterator over the options area of a TCP header.
#[derive(Clone, Debug)]
pub struct TcpOptions<'a> {
    rest: &'a [u8],
    /// Offset of `rest` within the options area, for error reports.
    at: usize,
    done: bool,
}

impl<'a> TcpOptions<'a> {
    pub fn new(options: &'a [u8]) -> TcpOptions<'a> {
        TcpOptions {
            rest: options,
            at: 0,
            done: false,
        }
    }

    fn next_option(&mut self) -> Result<TcpOption<'a>, WireError> {
        let kind = self.rest[0];
        match kind {
            KIND_EOL => {
                self.done = true;
                return Ok(TcpOption::EndOfList);
            }
            KIND_NOP => {
                self.rest = &self.rest[1..];
                self.at += 1;
                return Ok(TcpOption::NoOperation);
            }
            _ => {}
        }
        let bad = WireError::BadOption { kind, at: self.at };
        let len = *self.rest.get(1).ok_or(bad)? as usize;
        if len < 2 || len > self.rest.len() {
            return Err(bad);
        }
        let data = &self.rest[2..len];
        let opt = match (kind, data.len()) {
            (KIND_MSS, 2) => TcpOption::MaxSegmentSize(u16::from_be_bytes([data[0], data[1]])),
            (KIND_WINDOW_SCALE, 1) => TcpOption::WindowScale(data[0]),
            (KIND_SACK_PERMITTED, 0) => TcpOption::SackPermitted,
            (KIND_SACK, n) if n > 0 && n % 8 == 0 => {
                let mut edges = SackEdges::default();
                for b in data.chunks_exact(8) {
                    let left = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let right = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    if !edges.push(left, right) {
                        return Err(bad);
                    }
                }
                TcpOption::Sack(edges)
            }
            (KIND_TIMESTAMPS, 8) => TcpOption::Timestamps(
                u32::from_be_bytes([data[0], data[1], data[2], data[3]]),
                u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
            ),
            (
                KIND_MSS | KIND_WINDOW_SCALE | KIND_SACK_PERMITTED | KIND_SACK | KIND_TIMESTAMPS,
                _,
            ) => return Err(bad),
            _ => TcpOption::Unknown { kind, data },
        };
        self.rest = &self.rest[len..];
        self.at += len;
        Ok(opt)
    }
}

impl<'a> Iterator for TcpOptions<'a> {
    type Item = Result<TcpOption<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.rest.is_empty() {
            return None;
        }
        let r = self.next_option();
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

/// The options a header carries, in the order and layout we emit them.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct OptionSet {
    pub mss: Option<u16>,
    pub sack_permitted: bool,
    pub window_scale: Option<u8>,
    pub sack: SackEdges,
    /// TSval, TSecr.
    pub timestamps: Option<(u32, u32)>,
}

impl OptionSet {
    /// Sum of the option lengths without padding.
    fn unpadded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.window_scale.is_some() {
            n += 3;
        }
        if self.timestamps.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len();
        }
        n
    }

    /// Length of the options area: the unpadded length rounded up to a multiple of four,
    /// the same rule as `TcpSegment::options_len`.
    pub fn len(&self) -> usize {
        self.unpadded_len().div_ceil(4) * 4
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the options into the first `self.len()` bytes of `out`.
    ///
    /// Padding never grows the area beyond `len()`: the (at most three) spare bytes go to
    /// alignment NOPs where a whole group fits (two before SACK, two before SACK-Permitted,
    /// one before Window Scale, two before Timestamps, the layouts Linux uses) and the rest
    /// become EOL/zero padding at the end. So MSS+SACK-Permitted+WS gives `MSS NOP NOP
    /// SACKOK NOP WS`, MSS+SACK-Permitted+TS+WS gives `MSS SACKOK TS NOP WS`, a SACK
    /// option gives `NOP NOP SACK` and a timestamp `NOP NOP TS`.
    pub fn emit(&self, out: &mut [u8]) -> Result<(), WireError> {
        let (need, have) = (self.len(), out.len());
        let out = out
            .get_mut(..need)
            .ok_or(WireError::BufferTooSmall { need, have })?;
        let mut slack = self.len() - self.unpadded_len();
        let mut take = |want: bool, n: usize| {
            if want && slack >= n {
                slack -= n;
                n
            } else {
                0
            }
        };
        let ts_nops = take(self.timestamps.is_some() && self.mss.is_none(), 2);
        let sack_nops = take(!self.sack.is_empty(), 2);
        let sp_nops = take(self.sack_permitted, 2);
        let ws_nops = take(self.window_scale.is_some(), 1);

        let mut w = Cursor { out, at: 0 };
        if let Some(mss) = self.mss {
            w.put(&[KIND_MSS, 4]);
            w.put(&mss.to_be_bytes());
        }
        if self.sack_permitted {
            w.nops(sp_nops);
            w.put(&[KIND_SACK_PERMITTED, 2]);
        }
        if let Some((val, ecr)) = self.timestamps {
            w.nops(ts_nops);
            w.put(&[KIND_TIMESTAMPS, 10]);
            w.put(&val.to_be_bytes());
            w.put(&ecr.to_be_bytes());
        }
        if let Some(ws) = self.window_scale {
            w.nops(ws_nops);
            w.put(&[KIND_WINDOW_SCALE, 3, ws]);
        }
        if !self.sack.is_empty() {
            w.nops(sack_nops);
            w.put(&[KIND_SACK, 2 + 8 * self.sack.len() as u8]);
            for &(left, right) in self.sack.as_slice() {
                w.put(&left.to_be_bytes());
                w.put(&right.to_be_bytes());
            }
        }
        // End of Option List, then zero padding (RFC 9293 section 3.1).
        let at = w.at;
        w.out[at..].fill(KIND_EOL);
        Ok(())
    }

    /// Collects the options we model from an options area; unknown kinds are skipped and a
    /// later duplicate replaces an earlier one.
    pub fn parse(options: &[u8]) -> Result<OptionSet, WireError> {
        let mut set = OptionSet::default();
        for opt in TcpOptions::new(options) {
            match opt? {
                TcpOption::MaxSegmentSize(m) => set.mss = Some(m),
                TcpOption::SackPermitted => set.sack_permitted = true,
                TcpOption::WindowScale(s) => set.window_scale = Some(s),
                TcpOption::Sack(edges) => set.sack = edges,
                TcpOption::Timestamps(val, ecr) => set.timestamps = Some((val, ecr)),
                TcpOption::EndOfList | TcpOption::NoOperation | TcpOption::Unknown { .. } => {}
            }
        }
        Ok(set)
    }
}

struct Cursor<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
    fn nops(&mut self, n: usize) {
        for _ in 0..n {
            self.put(&[KIND_NOP]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emit(set: &OptionSet) -> Vec<u8> {
        let mut out = vec![0xee; set.len() + 1];
        set.emit(&mut out).unwrap();
        assert_eq!(out.pop(), Some(0xee), "wrote past len()");
        assert!(set.emit(&mut out[..set.len().saturating_sub(1)]).is_err() || set.is_empty());
        out
    }

    #[test]
    fn syn_layout_matches_linux_without_timestamps() {
        let set = OptionSet {
            mss: Some(1460),
            sack_permitted: true,
            window_scale: Some(7),
            ..Default::default()
        };
        assert_eq!(emit(&set), [2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7]);
        assert_eq!(OptionSet::parse(&emit(&set)), Ok(set));
        let ws_only = OptionSet {
            mss: Some(536),
            window_scale: Some(0),
            ..Default::default()
        };
        assert_eq!(emit(&ws_only), [2, 4, 0x02, 0x18, 1, 3, 3, 0]);
    }

    #[test]
    fn sack_is_preceded_by_two_nops() {
        let mut set = OptionSet::default();
        set.sack.push(1, 2);
        assert_eq!(emit(&set), [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        // SYN options and a SACK together: one spare byte, given to Window Scale.
        set.mss = Some(1);
        set.sack_permitted = true;
        set.window_scale = Some(2);
        let bytes = emit(&set);
        assert_eq!(bytes.len(), 20);
        assert_eq!(&bytes[..10], &[2, 4, 0, 1, 4, 2, 1, 3, 3, 2]);
        assert_eq!(OptionSet::parse(&bytes), Ok(set));
    }

    #[test]
    fn malformed_options_are_errors() {
        let bad = |b: &[u8]| OptionSet::parse(b).unwrap_err();
        assert_eq!(bad(&[2]), WireError::BadOption { kind: 2, at: 0 });
        assert_eq!(bad(&[1, 9, 0]), WireError::BadOption { kind: 9, at: 1 });
        assert_eq!(bad(&[9, 1, 0, 0]), WireError::BadOption { kind: 9, at: 0 });
        assert_eq!(bad(&[9, 5, 0, 0]), WireError::BadOption { kind: 9, at: 0 });
        assert_eq!(bad(&[2, 3, 0, 0]), WireError::BadOption { kind: 2, at: 0 });
        assert_eq!(bad(&[3, 4, 0, 0]), WireError::BadOption { kind: 3, at: 0 });
        assert_eq!(bad(&[4, 3, 0, 0]), WireError::BadOption { kind: 4, at: 0 });
        assert_eq!(bad(&[5, 2]), WireError::BadOption { kind: 5, at: 0 });
        assert_eq!(
            bad(&[5, 6, 0, 0, 0, 0]),
            WireError::BadOption { kind: 5, at: 0 }
        );
        // Five blocks cannot fit in a real header but can in a fuzzed slice.
        let mut five = vec![5, 42];
        five.resize(42, 0);
        assert_eq!(bad(&five), WireError::BadOption { kind: 5, at: 0 });
        // A zero length would loop forever in a naive parser.
        assert_eq!(bad(&[7, 0, 0, 0]), WireError::BadOption { kind: 7, at: 0 });
    }

    #[test]
    fn timestamps_take_linux_layouts_and_parse_back() {
        let ts = Some((0x0102_0304, 0x0a0b_0c0d));
        let syn = OptionSet {
            mss: Some(1460),
            sack_permitted: true,
            window_scale: Some(7),
            timestamps: ts,
            ..OptionSet::default()
        };
        let bytes = emit(&syn);
        assert_eq!(
            bytes[..20],
            [2, 4, 5, 180, 4, 2, 8, 10, 1, 2, 3, 4, 10, 11, 12, 13, 1, 3, 3, 7]
        );
        assert_eq!(OptionSet::parse(&bytes[..20]), Ok(syn));
        let data = OptionSet {
            timestamps: ts,
            ..OptionSet::default()
        };
        assert_eq!(emit(&data)[..12], [1, 1, 8, 10, 1, 2, 3, 4, 10, 11, 12, 13]);
        assert_eq!(
            OptionSet::parse(&[8, 9, 0, 0, 0, 0, 0, 0, 0]),
            Err(WireError::BadOption { kind: 8, at: 0 })
        );
    }

    #[test]
    fn eol_stops_parsing_and_unknown_kinds_are_skipped() {
        assert_eq!(OptionSet::parse(&[0, 2, 0xff]), Ok(OptionSet::default()));
        let set = OptionSet::parse(&[30, 4, 1, 2, 2, 4, 0, 9]).unwrap();
        assert_eq!(set.mss, Some(9));
        let opts: Vec<_> = TcpOptions::new(&[1, 30, 3, 7, 0]).collect();
        assert_eq!(
            opts,
            [
                Ok(TcpOption::NoOperation),
                Ok(TcpOption::Unknown {
                    kind: 30,
                    data: &[7]
                }),
                Ok(TcpOption::EndOfList)
            ]
        );
    }
}
