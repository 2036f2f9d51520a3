//! Classic pcap files (draft-ietf-opsawg-pcap sections 4 and 5): nanosecond-resolution
//! magic 0xa1b23c4d, version 2.4, link type LINKTYPE_RAW (101: each record starts with an
//! IPv4 header).
//!
//! `PcapWriter` streams to any `io::Write` with constant memory: each record's headers are
//! built in one fixed scratch array and the virtual payload, when written, comes from a
//! static block of zeros. By default only the IP and TCP headers are captured; the record's
//! original length is still the full packet size, so Wireshark shows "[Packet size limited
//! during capture]" rather than a malformed packet. An SCTP packet in the clear is
//! written whole (`write_bytes`): its chunk headers sit between the user data. Files are
//! written little-endian.
//!
//! `PcapReader` iterates the records of an in-memory file (either byte order, micro- or
//! nanosecond magic) and reports garbage as errors, never panicking.

use super::{tcp, PacketRepr, WireCtx, WireError};
use crate::packet::{Body, Packet};
use crate::time::Time;
use std::io::{self, Write};

pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
pub const LINKTYPE_RAW: u32 = 101;
pub const GLOBAL_HEADER_LEN: usize = 24;
pub const RECORD_HEADER_LEN: usize = 16;
/// Default snapshot length: any IPv4 packet fits.
pub const DEFAULT_SNAPLEN: u32 = 65535;

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Record header plus the largest headers we emit (IPv4 without options, full TCP).
const SCRATCH_LEN: usize = RECORD_HEADER_LEN + super::ipv4::HEADER_LEN + tcp::MAX_HEADER_LEN;
static ZEROS: [u8; 4096] = [0; 4096];

/// Why a pcap file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("pcap I/O: {0}")]
    Io(#[from] io::Error),
    #[error("cannot encode packet: {0}")]
    Wire(#[from] WireError),
    #[error("timestamp beyond the 32-bit seconds field of classic pcap")]
    TimeOutOfRange,
    #[error("not a pcap file (magic {0:#010x})")]
    BadMagic(u32),
    #[error("truncated pcap: need {need} bytes at offset {at}, have {have}")]
    Truncated { at: usize, need: usize, have: usize },
}

/// What the writer captures of each packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapOptions {
    /// Snapshot length: no record holds more bytes than this.
    pub snaplen: u32,
    /// Write the zero payload too (else headers only).
    pub full_payload: bool,
}

impl Default for PcapOptions {
    fn default() -> PcapOptions {
        PcapOptions {
            snaplen: DEFAULT_SNAPLEN,
            full_payload: false,
        }
    }
}

/// Streams packets to a pcap file. Wrap files in `io::BufWriter`: each record is written
/// with a few small `write_all` calls.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    opts: PcapOptions,
    scratch: [u8; SCRATCH_LEN],
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header; headers-only capture, snaplen 65535.
    pub fn new(out: W) -> io::Result<PcapWriter<W>> {
        PcapWriter::with_options(out, PcapOptions::default())
    }

    /// Writes the file header with the given options.
    pub fn with_options(mut out: W, opts: PcapOptions) -> io::Result<PcapWriter<W>> {
        let mut h = [0u8; GLOBAL_HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay zero.
        h[16..20].copy_from_slice(&opts.snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            opts,
            scratch: [0; SCRATCH_LEN],
        })
    }

    pub fn options(&self) -> PcapOptions {
        self.opts
    }

    /// Writes one simulator packet observed at `t`. See `WireCtx` for `ctx`.
    pub fn write_packet(
        &mut self,
        t: Time,
        packet: &Packet,
        ctx: &WireCtx,
    ) -> Result<(), PcapError> {
        if let Body::Sctp(b) = &packet.body {
            if b.readable().is_some() {
                return self.write_bytes(t, &super::encode(packet, ctx)?);
            }
        }
        let repr = PacketRepr::from_packet(packet, ctx)?;
        self.write_repr(t, &repr)
    }

    /// Writes a whole encoded packet observed at `t`, cut to the snaplen.
    pub fn write_bytes(&mut self, t: Time, bytes: &[u8]) -> Result<(), PcapError> {
        let secs = u32::try_from(t.0 / NANOS_PER_SEC).map_err(|_| PcapError::TimeOutOfRange)?;
        let nanos = (t.0 % NANOS_PER_SEC) as u32;
        let caplen = bytes.len().min(self.opts.snaplen as usize);
        let mut rec = [0u8; RECORD_HEADER_LEN];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&nanos.to_le_bytes());
        rec[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&bytes[..caplen])?;
        Ok(())
    }

    /// Writes one packet given in wire terms. The captured length is the headers (or the
    /// whole packet with `full_payload`) cut to the snaplen; the original length is the
    /// IP total length.
    pub fn write_repr(&mut self, t: Time, repr: &PacketRepr) -> Result<(), PcapError> {
        let secs = u32::try_from(t.0 / NANOS_PER_SEC).map_err(|_| PcapError::TimeOutOfRange)?;
        let nanos = (t.0 % NANOS_PER_SEC) as u32;
        let wanted = if self.opts.full_payload {
            repr.buffer_len()
        } else {
            repr.header_len()
        };
        let caplen = wanted.min(self.opts.snaplen as usize);
        let orig = repr.buffer_len();

        let (rec, pkt) = self.scratch.split_at_mut(RECORD_HEADER_LEN);
        let hlen = repr.emit_headers(pkt)?;
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&nanos.to_le_bytes());
        rec[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(orig as u32).to_le_bytes());
        let head = hlen.min(caplen);
        self.out
            .write_all(&self.scratch[..RECORD_HEADER_LEN + head])?;
        let mut zeros = caplen - head;
        while zeros > 0 {
            let n = zeros.min(ZEROS.len());
            self.out.write_all(&ZEROS[..n])?;
            zeros -= n;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
    pub fn get_ref(&self) -> &W {
        &self.out
    }
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
    /// Returns the sink (not flushed).
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The fields of a pcap file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapHeader {
    pub big_endian: bool,
    /// Nanosecond (true) or microsecond timestamps.
    pub nanos: bool,
    pub version: (u16, u16),
    pub snaplen: u32,
    pub linktype: u32,
}

/// One record: capture time, original length and the captured bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapRecord<'a> {
    pub time: Time,
    pub orig_len: u32,
    pub data: &'a [u8],
}

/// Iterates the records of a pcap file held in memory. Yields an error for a truncated or
/// inconsistent record and then stops.
#[derive(Clone, Debug)]
pub struct PcapReader<'a> {
    header: PcapHeader,
    data: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> PcapReader<'a> {
    pub fn new(data: &'a [u8]) -> Result<PcapReader<'a>, PcapError> {
        let Some(h) = data.get(..GLOBAL_HEADER_LEN) else {
            return Err(PcapError::Truncated {
                at: 0,
                need: GLOBAL_HEADER_LEN,
                have: data.len(),
            });
        };
        let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let (big_endian, nanos) = match le {
            MAGIC_NANOS => (false, true),
            MAGIC_MICROS => (false, false),
            m if m.swap_bytes() == MAGIC_NANOS => (true, true),
            m if m.swap_bytes() == MAGIC_MICROS => (true, false),
            m => return Err(PcapError::BadMagic(m)),
        };
        let rd = Endian(big_endian);
        let header = PcapHeader {
            big_endian,
            nanos,
            version: (rd.u16(&h[4..6]), rd.u16(&h[6..8])),
            snaplen: rd.u32(&h[16..20]),
            linktype: rd.u32(&h[20..24]),
        };
        Ok(PcapReader {
            header,
            data,
            pos: GLOBAL_HEADER_LEN,
            failed: false,
        })
    }

    pub fn header(&self) -> &PcapHeader {
        &self.header
    }

    fn record(&mut self) -> Result<PcapRecord<'a>, PcapError> {
        let data: &'a [u8] = self.data;
        let rest = &data[self.pos..];
        let truncated = |need| PcapError::Truncated {
            at: self.pos,
            need,
            have: rest.len(),
        };
        let Some(h) = rest.get(..RECORD_HEADER_LEN) else {
            return Err(truncated(RECORD_HEADER_LEN));
        };
        let rd = Endian(self.header.big_endian);
        let secs = rd.u32(&h[0..4]) as u64;
        let frac = rd.u32(&h[4..8]) as u64;
        let caplen = rd.u32(&h[8..12]) as usize;
        let orig_len = rd.u32(&h[12..16]);
        let Some(bytes) = rest[RECORD_HEADER_LEN..].get(..caplen) else {
            return Err(truncated(RECORD_HEADER_LEN.saturating_add(caplen)));
        };
        // Cannot overflow: 2^32 s is below 2^63 ns, and the fraction adds under 2^43.
        let frac_ns = if self.header.nanos { frac } else { frac * 1000 };
        let time = Time(secs * NANOS_PER_SEC + frac_ns);
        self.pos += RECORD_HEADER_LEN + caplen;
        Ok(PcapRecord {
            time,
            orig_len,
            data: bytes,
        })
    }
}

impl<'a> Iterator for PcapReader<'a> {
    type Item = Result<PcapRecord<'a>, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let r = self.record();
        self.failed = r.is_err();
        Some(r)
    }
}

#[derive(Clone, Copy)]
struct Endian(bool);

impl Endian {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        if self.0 {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.0 {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }
}
