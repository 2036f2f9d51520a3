//! Property tests of the wire format: generated packets round-trip through `encode` and
//! `decode`, and no byte string (random, or a valid packet damaged) panics the decoder.

use super::chunk::kind;
use super::*;
use proptest::collection::vec;
use proptest::prelude::*;

fn arb_init() -> impl Strategy<Value = InitParams> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
    )
        .prop_map(
            |(initiate_tag, a_rwnd, outbound_streams, inbound_streams, initial_tsn)| InitParams {
                initiate_tag,
                a_rwnd,
                outbound_streams,
                inbound_streams,
                initial_tsn,
            },
        )
}

fn arb_data() -> impl Strategy<Value = DataChunk> {
    (
        (any::<u32>(), any::<u16>(), any::<u16>(), any::<u32>()),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        prop_oneof![4 => 1u32..2000, 1 => Just(MAX_DATA_LEN)],
    )
        .prop_map(
            |((tsn, stream, ssn, ppid), (unordered, begin, end), len)| DataChunk {
                tsn,
                stream,
                ssn,
                ppid,
                unordered,
                begin,
                end,
                len,
            },
        )
}

fn arb_chunk() -> impl Strategy<Value = Chunk> {
    let unknown_type = any::<u8>().prop_filter("typed", |t| !kind::KNOWN.contains(t));
    prop_oneof![
        4 => arb_data().prop_map(Chunk::Data),
        1 => arb_init().prop_map(Chunk::Init),
        1 => (arb_init(), vec(any::<u8>(), 0..64))
            .prop_map(|(params, cookie)| Chunk::InitAck { params, cookie }),
        2 => (
            any::<u32>(),
            any::<u32>(),
            vec(any::<(u16, u16)>(), 0..12),
            vec(any::<u32>(), 0..12)
        )
            .prop_map(|(cum_tsn_ack, a_rwnd, gaps, dup_tsns)| Chunk::Sack(SackChunk {
                cum_tsn_ack,
                a_rwnd,
                gaps: gaps
                    .into_iter()
                    .map(|(start, end)| GapBlock { start, end })
                    .collect(),
                dup_tsns,
            })),
        1 => any::<bool>().prop_map(|reflected| Chunk::Abort { reflected }),
        1 => any::<u32>().prop_map(|cum_tsn_ack| Chunk::Shutdown { cum_tsn_ack }),
        1 => Just(Chunk::ShutdownAck),
        1 => vec(any::<u8>(), 0..64).prop_map(|cookie| Chunk::CookieEcho { cookie }),
        1 => Just(Chunk::CookieAck),
        1 => any::<bool>().prop_map(|reflected| Chunk::ShutdownComplete { reflected }),
        1 => (unknown_type, any::<u8>(), vec(any::<u8>(), 0..40)).prop_map(
            |(chunk_type, flags, value)| Chunk::Unknown {
                chunk_type,
                flags,
                value
            }
        ),
    ]
}

fn arb_packet() -> impl Strategy<Value = SctpPacket> {
    (
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        vec(arb_chunk(), 1..6),
    )
        .prop_map(
            |(src_port, dst_port, verification_tag, chunks)| SctpPacket {
                src_port,
                dst_port,
                verification_tag,
                chunks,
            },
        )
}

proptest! {
    #[test]
    fn packets_round_trip(p in arb_packet()) {
        let bytes = encode(&p).unwrap();
        prop_assert_eq!(bytes.len() as u32, p.wire_len());
        prop_assert_eq!(decode(&bytes).unwrap(), p);
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..400)) {
        let _ = decode(&bytes);
        let _ = wire::decode_with(&bytes, false);
    }

    #[test]
    fn damaged_packets_never_panic(
        p in arb_packet(),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode(&p).unwrap();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let _ = wire::decode_with(&bytes, false);
        bytes.truncate(cut.index(bytes.len() + 1));
        let _ = wire::decode_with(&bytes, false);
        let _ = decode(&bytes);
    }
}
