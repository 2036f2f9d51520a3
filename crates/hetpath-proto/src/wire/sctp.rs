//! SCTP packets (`crate::sctp_chunk`) to and from RFC 4960 bytes; re-exported as
//! `sctp::wire`. It sits in `wire` so that pcaps can write SCTP bodies
//! (docs/architecture.md, convention 4).
//!
//! `encode` writes the common header (section 3.1), every chunk padded to 4 bytes
//! (section 3.2) and the CRC32c checksum (section 6.8 and appendix B); DATA user data,
//! being virtual, is written as zero bytes of its length. `decode` checks the checksum
//! and never panics: anything malformed is an `SctpWireError`.
//!
//! What is read back is what the typed chunks can say: optional INIT parameters are
//! skipped, ABORT error causes dropped, and chunk types this model does not type are
//! kept whole as `Chunk::Unknown`. So `decode(encode(p)) == p` for every packet `encode`
//! accepts (`proptests.rs`).

use crate::sctp_chunk::{
    kind, Chunk, DataChunk, GapBlock, InitParams, SackChunk, SctpPacket, CHUNK_HEADER_LEN,
    COMMON_HEADER_LEN, DATA_HEADER_LEN, INIT_LEN, MAX_DATA_LEN, PARAM_HEADER_LEN, SACK_HEADER_LEN,
};

/// The State Cookie parameter of INIT ACK (RFC 4960 section 3.3.3).
const PARAM_STATE_COOKIE: u16 = 7;
const FLAG_T: u8 = 0x01;
const FLAG_E: u8 = 0x01;
const FLAG_B: u8 = 0x02;
const FLAG_U: u8 = 0x04;

/// Why bytes are not an SCTP packet, or a packet cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SctpWireError {
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("CRC32c mismatch: packet says {found:#010x}, computed {computed:#010x}")]
    Checksum { found: u32, computed: u32 },
    #[error("packet holds no chunk")]
    NoChunks,
    #[error("chunk of type {chunk_type} at byte {at} has length {len}, below its minimum {min}")]
    ChunkTooShort {
        chunk_type: u8,
        at: usize,
        len: usize,
        min: usize,
    },
    #[error("chunk at byte {at} has length {len}, beyond the {left} bytes left")]
    ChunkOverrun { at: usize, len: usize, left: usize },
    #[error("chunk of type {chunk_type} at byte {at} has length {len}, expected {expected}")]
    BadChunkLen {
        chunk_type: u8,
        at: usize,
        len: usize,
        expected: usize,
    },
    #[error("DATA chunk at byte {at} carries no user data")]
    EmptyData { at: usize },
    #[error("malformed parameter at byte {at} of an INIT ACK")]
    BadParameter { at: usize },
    #[error("INIT ACK without a State Cookie")]
    MissingCookie,
    #[error("chunk of {0} bytes exceeds the 16-bit chunk length")]
    ChunkTooLong(u32),
}

/// Writes a packet as RFC 4960 bytes, checksum included.
pub fn encode(p: &SctpPacket) -> Result<Vec<u8>, SctpWireError> {
    if p.chunks.is_empty() {
        return Err(SctpWireError::NoChunks);
    }
    let mut out = Vec::with_capacity(p.wire_len() as usize);
    out.extend_from_slice(&p.src_port.to_be_bytes());
    out.extend_from_slice(&p.dst_port.to_be_bytes());
    out.extend_from_slice(&p.verification_tag.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    for c in &p.chunks {
        encode_chunk(c, &mut out)?;
    }
    let crc = crc32c(&out);
    // Appendix B: the CRC is transmitted least significant byte first, as RFC 3309 and
    // every implementation do (iSCSI's reflected CRC32c).
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

fn encode_chunk(c: &Chunk, out: &mut Vec<u8>) -> Result<(), SctpWireError> {
    let len = c.len();
    if len > 0xFFFF || matches!(c, Chunk::Data(d) if d.len == 0 || d.len > MAX_DATA_LEN) {
        return Err(SctpWireError::ChunkTooLong(len));
    }
    let flags = match c {
        Chunk::Data(d) => {
            (if d.unordered { FLAG_U } else { 0 })
                | (if d.begin { FLAG_B } else { 0 })
                | (if d.end { FLAG_E } else { 0 })
        }
        Chunk::Abort { reflected: true } | Chunk::ShutdownComplete { reflected: true } => FLAG_T,
        Chunk::Unknown { flags, .. } => *flags,
        _ => 0,
    };
    let start = out.len();
    out.push(c.chunk_type());
    out.push(flags);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    match c {
        Chunk::Data(d) => {
            out.extend_from_slice(&d.tsn.to_be_bytes());
            out.extend_from_slice(&d.stream.to_be_bytes());
            out.extend_from_slice(&d.ssn.to_be_bytes());
            out.extend_from_slice(&d.ppid.to_be_bytes());
            out.resize(out.len() + d.len as usize, 0);
        }
        Chunk::Init(params) => put_init(params, out),
        Chunk::InitAck { params, cookie } => {
            put_init(params, out);
            out.extend_from_slice(&PARAM_STATE_COOKIE.to_be_bytes());
            out.extend_from_slice(
                &((PARAM_HEADER_LEN as usize + cookie.len()) as u16).to_be_bytes(),
            );
            out.extend_from_slice(cookie);
        }
        Chunk::Sack(s) => {
            out.extend_from_slice(&s.cum_tsn_ack.to_be_bytes());
            out.extend_from_slice(&s.a_rwnd.to_be_bytes());
            out.extend_from_slice(&(s.gaps.len() as u16).to_be_bytes());
            out.extend_from_slice(&(s.dup_tsns.len() as u16).to_be_bytes());
            for g in &s.gaps {
                out.extend_from_slice(&g.start.to_be_bytes());
                out.extend_from_slice(&g.end.to_be_bytes());
            }
            for t in &s.dup_tsns {
                out.extend_from_slice(&t.to_be_bytes());
            }
        }
        Chunk::Shutdown { cum_tsn_ack } => out.extend_from_slice(&cum_tsn_ack.to_be_bytes()),
        Chunk::CookieEcho { cookie } => out.extend_from_slice(cookie),
        Chunk::Unknown { value, .. } => out.extend_from_slice(value),
        Chunk::Abort { .. }
        | Chunk::ShutdownAck
        | Chunk::CookieAck
        | Chunk::ShutdownComplete { .. } => {}
    }
    debug_assert_eq!(out.len() - start, len as usize);
    // Section 3.2: pad with zero bytes to a multiple of 4, the last chunk too.
    out.resize(start + c.wire_len() as usize, 0);
    Ok(())
}

fn put_init(p: &InitParams, out: &mut Vec<u8>) {
    out.extend_from_slice(&p.initiate_tag.to_be_bytes());
    out.extend_from_slice(&p.a_rwnd.to_be_bytes());
    out.extend_from_slice(&p.outbound_streams.to_be_bytes());
    out.extend_from_slice(&p.inbound_streams.to_be_bytes());
    out.extend_from_slice(&p.initial_tsn.to_be_bytes());
}

/// Reads a packet and checks its CRC32c.
pub fn decode(bytes: &[u8]) -> Result<SctpPacket, SctpWireError> {
    decode_with(bytes, true)
}

/// Reads a packet, checking the CRC32c only if `verify` (fuzzing reaches the chunk
/// parser faster without it).
pub fn decode_with(bytes: &[u8], verify: bool) -> Result<SctpPacket, SctpWireError> {
    let header = COMMON_HEADER_LEN as usize;
    if bytes.len() < header {
        return Err(SctpWireError::Truncated {
            need: header,
            have: bytes.len(),
        });
    }
    if verify {
        let found = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        let computed = crc32c_with_zero_field(bytes);
        if found != computed {
            return Err(SctpWireError::Checksum { found, computed });
        }
    }
    let mut chunks = Vec::new();
    let mut at = header;
    while at < bytes.len() {
        let left = bytes.len() - at;
        if left < CHUNK_HEADER_LEN as usize {
            return Err(SctpWireError::Truncated {
                need: at + CHUNK_HEADER_LEN as usize,
                have: bytes.len(),
            });
        }
        let len = be16(bytes, at + 2) as usize;
        if len < CHUNK_HEADER_LEN as usize {
            return Err(SctpWireError::ChunkTooShort {
                chunk_type: bytes[at],
                at,
                len,
                min: CHUNK_HEADER_LEN as usize,
            });
        }
        if len > left {
            return Err(SctpWireError::ChunkOverrun { at, len, left });
        }
        chunks.push(decode_chunk(&bytes[at..at + len], at)?);
        // The last chunk's padding may be missing; section 3.2 says to ignore padding.
        at = (at + crate::sctp_chunk::pad4(len as u32) as usize).min(bytes.len());
    }
    if chunks.is_empty() {
        return Err(SctpWireError::NoChunks);
    }
    Ok(SctpPacket {
        src_port: be16(bytes, 0),
        dst_port: be16(bytes, 2),
        verification_tag: be32(bytes, 4),
        chunks,
    })
}

/// One chunk; `c` is exactly its Chunk Length bytes (at least 4), `at` its offset in the
/// packet for error messages.
fn decode_chunk(c: &[u8], at: usize) -> Result<Chunk, SctpWireError> {
    let (chunk_type, flags, len) = (c[0], c[1], c.len());
    let need = |min: u32| -> Result<(), SctpWireError> {
        if len < min as usize {
            Err(SctpWireError::ChunkTooShort {
                chunk_type,
                at,
                len,
                min: min as usize,
            })
        } else {
            Ok(())
        }
    };
    let exactly = |expected: usize| -> Result<(), SctpWireError> {
        if len != expected {
            Err(SctpWireError::BadChunkLen {
                chunk_type,
                at,
                len,
                expected,
            })
        } else {
            Ok(())
        }
    };
    Ok(match chunk_type {
        kind::DATA => {
            need(DATA_HEADER_LEN)?;
            if len == DATA_HEADER_LEN as usize {
                return Err(SctpWireError::EmptyData { at });
            }
            Chunk::Data(DataChunk {
                tsn: be32(c, 4),
                stream: be16(c, 8),
                ssn: be16(c, 10),
                ppid: be32(c, 12),
                unordered: flags & FLAG_U != 0,
                begin: flags & FLAG_B != 0,
                end: flags & FLAG_E != 0,
                len: (len - DATA_HEADER_LEN as usize) as u32,
            })
        }
        kind::INIT => {
            need(INIT_LEN)?;
            Chunk::Init(init_params(c))
        }
        kind::INIT_ACK => {
            need(INIT_LEN)?;
            Chunk::InitAck {
                params: init_params(c),
                cookie: find_cookie(c, at)?,
            }
        }
        kind::SACK => {
            need(SACK_HEADER_LEN)?;
            let gaps = be16(c, 12) as usize;
            let dups = be16(c, 14) as usize;
            exactly(SACK_HEADER_LEN as usize + 4 * (gaps + dups))?;
            let gap_at = SACK_HEADER_LEN as usize;
            let dup_at = gap_at + 4 * gaps;
            Chunk::Sack(SackChunk {
                cum_tsn_ack: be32(c, 4),
                a_rwnd: be32(c, 8),
                gaps: (0..gaps)
                    .map(|i| GapBlock {
                        start: be16(c, gap_at + 4 * i),
                        end: be16(c, gap_at + 4 * i + 2),
                    })
                    .collect(),
                dup_tsns: (0..dups).map(|i| be32(c, dup_at + 4 * i)).collect(),
            })
        }
        kind::ABORT => Chunk::Abort {
            reflected: flags & FLAG_T != 0,
        },
        kind::SHUTDOWN => {
            exactly(8)?;
            Chunk::Shutdown {
                cum_tsn_ack: be32(c, 4),
            }
        }
        kind::SHUTDOWN_ACK => {
            exactly(4)?;
            Chunk::ShutdownAck
        }
        kind::COOKIE_ECHO => Chunk::CookieEcho {
            cookie: c[4..].to_vec(),
        },
        kind::COOKIE_ACK => {
            exactly(4)?;
            Chunk::CookieAck
        }
        kind::SHUTDOWN_COMPLETE => {
            exactly(4)?;
            Chunk::ShutdownComplete {
                reflected: flags & FLAG_T != 0,
            }
        }
        _ => Chunk::Unknown {
            chunk_type,
            flags,
            value: c[4..].to_vec(),
        },
    })
}

fn init_params(c: &[u8]) -> InitParams {
    InitParams {
        initiate_tag: be32(c, 4),
        a_rwnd: be32(c, 8),
        outbound_streams: be16(c, 12),
        inbound_streams: be16(c, 14),
        initial_tsn: be32(c, 16),
    }
}

/// The State Cookie among an INIT ACK's parameters (section 3.2.1 TLVs, each padded to 4
/// bytes except possibly the last); other parameters are skipped.
fn find_cookie(c: &[u8], chunk_at: usize) -> Result<Vec<u8>, SctpWireError> {
    let mut at = INIT_LEN as usize;
    while at < c.len() {
        if c.len() - at < PARAM_HEADER_LEN as usize {
            return Err(SctpWireError::BadParameter { at: chunk_at + at });
        }
        let ptype = be16(c, at);
        let plen = be16(c, at + 2) as usize;
        if plen < PARAM_HEADER_LEN as usize || plen > c.len() - at {
            return Err(SctpWireError::BadParameter { at: chunk_at + at });
        }
        if ptype == PARAM_STATE_COOKIE {
            return Ok(c[at + PARAM_HEADER_LEN as usize..at + plen].to_vec());
        }
        at += crate::sctp_chunk::pad4(plen as u32) as usize;
    }
    Err(SctpWireError::MissingCookie)
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The reflected CRC32c (Castagnoli) polynomial, RFC 4960 appendix B.
const CRC32C_POLY: u32 = 0x82F6_3B78;

const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ CRC32C_POLY
            } else {
                crc >> 1
            };
            k += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

fn crc32c_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = CRC32C_TABLE[((crc ^ b as u32) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

/// CRC32c of `bytes` (initial value and final XOR all ones, reflected), as appendix B.
pub fn crc32c(bytes: &[u8]) -> u32 {
    !crc32c_update(!0, bytes)
}

/// CRC32c of a packet whose checksum field (bytes 8..12) is taken as zero, as the
/// receiver computes it (appendix B). `bytes` is at least 12 long.
fn crc32c_with_zero_field(bytes: &[u8]) -> u32 {
    let crc = crc32c_update(!0, &bytes[..8]);
    let crc = crc32c_update(crc, &[0; 4]);
    !crc32c_update(crc, &bytes[12..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_values() {
        // The standard check value of CRC-32C, and RFC 3720 section B.4's 32 zero bytes.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFF; 32]), 0x62A8_AB43);
    }

    fn sample() -> SctpPacket {
        SctpPacket {
            src_port: 5000,
            dst_port: 80,
            verification_tag: 0xDEAD_BEEF,
            chunks: vec![
                Chunk::Sack(SackChunk {
                    cum_tsn_ack: 9,
                    a_rwnd: 65536,
                    gaps: vec![GapBlock { start: 2, end: 3 }],
                    dup_tsns: vec![5],
                }),
                Chunk::Data(DataChunk {
                    tsn: 10,
                    stream: 3,
                    ssn: 1,
                    ppid: 0,
                    unordered: false,
                    begin: true,
                    end: false,
                    len: 5,
                }),
            ],
        }
    }

    #[test]
    fn layout_is_rfc_4960() {
        let p = sample();
        let b = encode(&p).unwrap();
        assert_eq!(b.len() as u32, p.wire_len());
        assert_eq!(b.len(), 12 + 24 + 24);
        assert_eq!(&b[0..8], &[0x13, 0x88, 0, 80, 0xDE, 0xAD, 0xBE, 0xEF]);
        // SACK: type 3, flags 0, length 24, cum 9, a_rwnd 65536, 1 gap, 1 dup.
        assert_eq!(&b[12..16], &[3, 0, 0, 24]);
        assert_eq!(&b[16..28], &[0, 0, 0, 9, 0, 1, 0, 0, 0, 1, 0, 1]);
        assert_eq!(&b[28..36], &[0, 2, 0, 3, 0, 0, 0, 5]);
        // DATA: type 0, flags B, length 16 + 5, then 3 bytes of padding.
        assert_eq!(&b[36..40], &[0, 0x02, 0, 21]);
        assert_eq!(&b[40..44], &[0, 0, 0, 10]);
        assert_eq!(&b[44..48], &[0, 3, 0, 1]);
        assert_eq!(decode(&b).unwrap(), p);
    }

    #[test]
    fn corrupt_bytes_fail_the_checksum() {
        let mut b = encode(&sample()).unwrap();
        b[20] ^= 1;
        assert!(matches!(decode(&b), Err(SctpWireError::Checksum { .. })));
    }

    #[test]
    fn missing_final_padding_is_accepted() {
        let p = sample();
        let mut b = encode(&p).unwrap();
        b.truncate(b.len() - 3);
        assert_eq!(decode_with(&b, false).unwrap(), p);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            decode(&[0; 5]),
            Err(SctpWireError::Truncated { .. })
        ));
        let mut b = encode(&sample()).unwrap();
        b[15] = 200; // SACK length beyond the packet
        assert!(matches!(
            decode_with(&b, false),
            Err(SctpWireError::ChunkOverrun { .. })
        ));
        let empty = SctpPacket {
            chunks: vec![],
            ..sample()
        };
        assert_eq!(encode(&empty), Err(SctpWireError::NoChunks));
        let mut hdr_only = encode(&sample()).unwrap();
        hdr_only.truncate(12);
        assert_eq!(decode_with(&hdr_only, false), Err(SctpWireError::NoChunks));
    }
}
