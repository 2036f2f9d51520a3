//! The Internet checksum (RFC 1071) and the TCP pseudo-header (RFC 9293 section 3.1).
//!
//! The checksum is the 16-bit ones' complement of the ones' complement sum of the data
//! taken as big-endian 16-bit words, an odd trailing byte padded with a zero byte. Sums are
//! accumulated in a `u64` and folded once at the end (RFC 1071 section 2, "deferred
//! carries"), so any buffer a packet can describe is summed without overflow.

use crate::packet::Addr;

/// Ones' complement sum of `data` as big-endian 16-bit words, carries not yet folded.
pub fn sum(data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    let mut acc: u64 = 0;
    for w in &mut chunks {
        acc += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u64) << 8;
    }
    acc
}

/// Folds the carries of a deferred sum into 16 bits (end-around carry).
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field value for data whose unfolded sum is `acc`.
pub fn finish(acc: u64) -> u16 {
    !fold(acc)
}

/// The checksum of `data` alone (e.g. an IPv4 header with its checksum field zeroed).
pub fn checksum(data: &[u8]) -> u16 {
    finish(sum(data))
}

/// Sum of the IPv4 pseudo-header of RFC 9293 section 3.1: source and destination
/// address, a zero byte, the protocol number and the TCP length (header plus payload).
pub fn pseudo_header(src: Addr, dst: Addr, protocol: u8, length: u32) -> u64 {
    let mut acc = sum(&src.octets()) + sum(&dst.octets());
    acc += protocol as u64;
    // The TCP length field is 16 bits; callers never exceed it (IPv4 total length is 16
    // bits), but summing both halves keeps the function total on any input.
    acc += (length >> 16) as u64 + (length & 0xffff) as u64;
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_numerical_example() {
        // RFC 1071 section 3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(&data)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(fold(sum(&[0x12, 0x34, 0x56])), 0x1234 + 0x5600);
    }

    #[test]
    fn data_with_its_checksum_sums_to_all_ones() {
        let mut data = vec![0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11];
        data.extend_from_slice(&[0, 0, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7]);
        let c = checksum(&data);
        // A widely quoted example header (checksum 0xb861).
        assert_eq!(c, 0xb861);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(fold(sum(&data)), 0xffff);
    }

    #[test]
    fn large_buffers_do_not_overflow() {
        let data = vec![0xff; 70_000];
        assert_eq!(fold(sum(&data)), 0xffff);
    }
}
