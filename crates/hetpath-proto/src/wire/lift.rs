//! The LIFT header's bytes (seed 001, Figs. 3 and 5). Bit 0 is the most significant bit
//! of a byte, as in the figures:
//!
//! ```text
//! Setup     |A=0|T=0| reserved  | flow id (16) | downlink SPI (32) | downlink protocol (8) |
//! Teardown  |A=0|T=1| reserved  | flow id (16) |
//! ACK       |A=1|T=0|D|F|S| res | flow id (16) | IPsec ACK number (32) | next header (8) |
//! FrACK     |A=1|T=1| reserved  | flow id (16) | reserved (32)         | next header (8) |
//! ```
//!
//! Reserved bits are written as zero and ignored on receipt.

use super::WireError;
use crate::lift::LiftHeader;

const A: u8 = 0x80;
const T: u8 = 0x40;
const D: u8 = 0x20;
const F: u8 = 0x10;
const S: u8 = 0x08;

/// Writes `h` at the start of `out`; returns the bytes written.
pub fn emit(h: &LiftHeader, out: &mut [u8]) -> Result<usize, WireError> {
    let need = h.wire_len() as usize;
    let have = out.len();
    let out = out
        .get_mut(..need)
        .ok_or(WireError::BufferTooSmall { need, have })?;
    out.fill(0);
    out[1..3].copy_from_slice(&h.flow().to_be_bytes());
    match *h {
        LiftHeader::Setup { spi, protocol, .. } => {
            out[3..7].copy_from_slice(&spi.to_be_bytes());
            out[7] = protocol;
        }
        LiftHeader::Teardown { .. } => out[0] = T,
        LiftHeader::Ack {
            delete,
            forward,
            store,
            ipsec_ack,
            next_header,
            ..
        } => {
            out[0] = A
                | if delete { D } else { 0 }
                | if forward { F } else { 0 }
                | if store { S } else { 0 };
            out[3..7].copy_from_slice(&ipsec_ack.to_be_bytes());
            out[7] = next_header;
        }
        LiftHeader::Frack { next_header, .. } => {
            out[0] = A | T;
            out[7] = next_header;
        }
    }
    Ok(need)
}

/// Reads a LIFT header from the start of `bytes`; returns it and its length.
pub fn parse(bytes: &[u8]) -> Result<(LiftHeader, usize), WireError> {
    let have = bytes.len();
    let first = *bytes
        .first()
        .ok_or(WireError::Truncated { need: 1, have })?;
    let need = if first & (A | T) == T { 3 } else { 8 };
    let b = bytes
        .get(..need)
        .ok_or(WireError::Truncated { need, have })?;
    let flow = u16::from_be_bytes([b[1], b[2]]);
    let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let h = match (first & A != 0, first & T != 0) {
        (false, false) => LiftHeader::Setup {
            flow,
            spi: word(3),
            protocol: b[7],
        },
        (false, true) => LiftHeader::Teardown { flow },
        (true, false) => LiftHeader::Ack {
            flow,
            delete: first & D != 0,
            forward: first & F != 0,
            store: first & S != 0,
            ipsec_ack: word(3),
            next_header: b[7],
        },
        (true, true) => LiftHeader::Frack {
            flow,
            next_header: b[7],
        },
    };
    Ok((h, need))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header() -> impl Strategy<Value = LiftHeader> {
        prop_oneof![
            (any::<u16>(), any::<u32>(), any::<u8>()).prop_map(|(flow, spi, protocol)| {
                LiftHeader::Setup {
                    flow,
                    spi,
                    protocol,
                }
            }),
            any::<u16>().prop_map(|flow| LiftHeader::Teardown { flow }),
            (any::<u16>(), any::<[bool; 3]>(), any::<u32>(), any::<u8>()).prop_map(
                |(flow, [delete, forward, store], ipsec_ack, next_header)| LiftHeader::Ack {
                    flow,
                    delete,
                    forward,
                    store,
                    ipsec_ack,
                    next_header,
                }
            ),
            (any::<u16>(), any::<u8>())
                .prop_map(|(flow, next_header)| LiftHeader::Frack { flow, next_header }),
        ]
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            if let Ok((h, n)) = parse(&bytes) {
                prop_assert_eq!(n, h.wire_len() as usize);
                prop_assert!(n <= bytes.len());
            }
        }

        #[test]
        fn emit_then_parse_is_identity(h in header(), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let mut buf = vec![0u8; h.wire_len() as usize];
            prop_assert_eq!(emit(&h, &mut buf), Ok(h.wire_len() as usize));
            buf.extend(tail);
            prop_assert_eq!(parse(&buf), Ok((h, h.wire_len() as usize)));
        }
    }

    #[test]
    fn the_bits_sit_where_the_figures_put_them() {
        let mut buf = [0u8; 8];
        let ack = LiftHeader::Ack {
            flow: 0x0102,
            delete: false,
            forward: true,
            store: false,
            ipsec_ack: 0x0a0b_0c0d,
            next_header: 50,
        };
        emit(&ack, &mut buf).unwrap();
        // A = 1, T = 0, D = 0, F = 1: 1001 0000.
        assert_eq!(buf, [0b1001_0000, 1, 2, 0x0a, 0x0b, 0x0c, 0x0d, 50]);
        let mut short = [0u8; 7];
        assert_eq!(
            emit(&ack, &mut short),
            Err(WireError::BufferTooSmall { need: 8, have: 7 })
        );
        assert_eq!(
            parse(&[0b0100_0000, 7]),
            Err(WireError::Truncated { need: 3, have: 2 })
        );
        assert_eq!(
            parse(&[0b0100_0000, 0, 7]),
            Ok((LiftHeader::Teardown { flow: 7 }, 3))
        );
    }
}
