//! Property tests: random simulator packets round-trip through the wire format (up to what
//! 32-bit fields and window scaling can say), and no byte string panics a decoder.

use super::*;
use crate::packet::{
    Addr, Ecn, IpHeader, SackBlock, SackList, SynOptions, TcpFlags, TcpSegment, Timestamps,
};
use crate::time::Time;
use proptest::collection::vec;
use proptest::prelude::*;

fn arb_ecn() -> impl Strategy<Value = Ecn> {
    prop_oneof![
        Just(Ecn::NotEct),
        Just(Ecn::Ect1),
        Just(Ecn::Ect0),
        Just(Ecn::Ce)
    ]
}

fn arb_segment() -> impl Strategy<Value = TcpSegment> {
    let syn = proptest::option::of((any::<u16>(), any::<bool>(), any::<u8>()));
    let sack = vec(
        (any::<u64>(), any::<u64>()),
        0..=crate::packet::MAX_SACK_BLOCKS,
    );
    (
        (
            any::<u16>(),
            any::<u16>(),
            any::<u64>(),
            any::<u64>(),
            any::<u8>(),
        ),
        prop_oneof![0u64..(1 << 24), any::<u64>()],
        prop_oneof![4 => 0u32..3000, 2 => 0u32..70_000, 1 => Just(u32::MAX)],
        syn,
        sack,
        proptest::option::of(any::<(u32, u32)>()),
    )
        .prop_map(
            |((src_port, dst_port, seq, ack, flags), window, len, syn, blocks, ts)| {
                let mut sack = SackList::default();
                for (start, end) in blocks {
                    sack.push(SackBlock { start, end });
                }
                TcpSegment {
                    src_port,
                    dst_port,
                    seq,
                    ack,
                    flags: TcpFlags(flags),
                    window,
                    len,
                    syn_options: syn.map(|(mss, sack_permitted, window_scale)| SynOptions {
                        mss,
                        sack_permitted,
                        window_scale,
                    }),
                    sack,
                    ts: ts.map(|(val, ecr)| Timestamps { val, ecr }),
                    rap: None,
                    wscale: 0,
                }
            },
        )
}

fn arb_packet() -> impl Strategy<Value = Packet> {
    let body = prop_oneof![
        3 => arb_segment().prop_map(Body::Tcp),
        1 => (any::<u8>().prop_filter("TCP bodies decode as TCP", |p| *p != 6),
              prop_oneof![0u32..2000, 0u32..70_000])
            .prop_map(|(proto, len)| Body::Raw { proto, len }),
    ];
    (any::<u32>(), any::<u32>(), any::<u8>(), arb_ecn(), body).prop_map(
        |(src, dst, ttl, ecn, body)| Packet {
            ip: IpHeader {
                src: Addr(src),
                dst: Addr(dst),
                ttl,
                ecn,
            },
            body,
        },
    )
}

fn arb_ctx() -> impl Strategy<Value = WireCtx> {
    (
        any::<u32>(),
        any::<u32>(),
        prop_oneof![0u8..=14, any::<u8>()],
        any::<u16>(),
    )
        .prop_map(|(snd, rcv, ws, ident)| WireCtx::new(snd, rcv, ws).with_ident(ident))
}

/// What decoding the encoding of `p` must give back.
fn expected(p: &Packet, ctx: &WireCtx) -> Packet {
    let mut want = p.clone();
    if let Body::Tcp(s) = &mut want.body {
        let m = u32::MAX as u64;
        s.seq &= m;
        s.ack = if s.flags.contains(TcpFlags::ACK) {
            s.ack & m
        } else {
            0
        };
        s.window = if s.flags.contains(TcpFlags::SYN) {
            s.window.min(65535)
        } else {
            let shift = ctx.wscale.min(14);
            (s.window >> shift).min(65535) << shift
        };
        s.wscale = if s.flags.contains(TcpFlags::SYN) {
            0
        } else {
            ctx.window_shift()
        };
        let mut sack = SackList::default();
        for b in s.sack.iter() {
            sack.push(SackBlock {
                start: b.start & m,
                end: b.end & m,
            });
        }
        s.sack = sack;
    }
    want
}

/// Recomputes the IPv4 header checksum and, if the whole TCP segment is present, the TCP
/// checksum, so that mutated bytes get past the checksum checks to the deeper parsers.
fn fix_checksums(bytes: &mut [u8]) {
    if bytes.len() < 20 {
        return;
    }
    let ihl = (bytes[0] & 0x0f) as usize * 4;
    if ihl < 20 || bytes.len() < ihl {
        return;
    }
    bytes[10..12].fill(0);
    let c = checksum::checksum(&bytes[..ihl]);
    bytes[10..12].copy_from_slice(&c.to_be_bytes());
    let total = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
    if bytes[9] == 6 && total >= ihl + 18 && bytes.len() >= total {
        let src = Addr(u32::from_be_bytes([
            bytes[12], bytes[13], bytes[14], bytes[15],
        ]));
        let dst = Addr(u32::from_be_bytes([
            bytes[16], bytes[17], bytes[18], bytes[19],
        ]));
        let seg = &mut bytes[ihl..total];
        seg[16..18].fill(0);
        let acc = checksum::pseudo_header(src, dst, 6, seg.len() as u32) + checksum::sum(seg);
        seg[16..18].copy_from_slice(&checksum::finish(acc).to_be_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_packets_round_trip(p in arb_packet(), ctx in arb_ctx()) {
        let (opts, payload) = match &p.body {
            Body::Tcp(s) => (s.options_len(), 20 + s.options_len() as u64 + s.len as u64),
            Body::Raw { len, .. } => (0, *len as u64),
            _ => unreachable!("arb_packet makes TCP and raw bodies"),
        };
        match encode(&p, &ctx) {
            Err(WireError::OptionsTooLong(n)) => prop_assert!(opts > 40 && n == opts as usize),
            Err(WireError::TooLong(n)) => prop_assert!(opts <= 40 && n == 20 + payload && n > 65535),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(bytes) => {
                prop_assert!(opts <= 40 && payload <= 65515);
                prop_assert_eq!(bytes.len() as u32, p.size());
                let repr = PacketRepr::parse(&bytes).unwrap();
                if let Body::Tcp(s) = &p.body {
                    prop_assert_eq!(repr.header_len() as u32, 20 + s.header_len());
                }
                let want = expected(&p, &ctx);
                prop_assert_eq!(&decode(&bytes, &ctx).unwrap(), &want);
                prop_assert_eq!(&decode(&bytes[..repr.header_len()], &ctx).unwrap(), &want);
                // Re-encoding the decoded packet gives the same bytes.
                prop_assert_eq!(encode(&want, &ctx).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn random_packets_round_trip_through_pcap(
        pkts in vec((arb_packet(), arb_ctx()), 1..8),
        full_payload in any::<bool>(),
        snaplen in prop_oneof![Just(65535u32), 0u32..100],
    ) {
        let opts = PcapOptions { snaplen, full_payload };
        let mut w = PcapWriter::with_options(Vec::new(), opts).unwrap();
        let mut written = Vec::new();
        for (i, (p, ctx)) in pkts.iter().enumerate() {
            if w.write_packet(Time(i as u64 * 1_000_000_007), p, ctx).is_ok() {
                written.push((i, encode(p, ctx).unwrap()));
            }
        }
        let file = w.into_inner();
        let records: Vec<_> = PcapReader::new(&file).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(records.len(), written.len());
        for (rec, (i, bytes)) in records.iter().zip(&written) {
            let head = PacketRepr::parse(bytes).unwrap().header_len();
            let cap = if full_payload { bytes.len() } else { head }.min(snaplen as usize);
            prop_assert_eq!(rec.data, &bytes[..cap]);
            prop_assert_eq!(rec.orig_len as usize, bytes.len());
            prop_assert_eq!(rec.time, Time(*i as u64 * 1_000_000_007));
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..160), seg_len in 0usize..200) {
        let _ = PacketRepr::parse(&bytes);
        let _ = decode(&bytes, &WireCtx::default());
        if let Ok(t) = TcpPacket::new_checked(&bytes[..]) {
            let _ = TcpRepr::parse(&t, Addr(1), Addr(2), seg_len);
        }
        let _ = OptionSet::parse(&bytes);
        let _ = TcpOptions::new(&bytes).count();
        if let Ok(r) = PcapReader::new(&bytes) {
            let _ = r.count();
        }
    }

    #[test]
    fn ipv4_shaped_bytes_never_panic(
        mut bytes in vec(any::<u8>(), 20..160),
        ihl in 0u8..16,
        doff in 0u8..16,
        total in prop_oneof![0u16..200, any::<u16>()],
        protocol in prop_oneof![Just(6u8), Just(50u8), Just(PROTO_LIFT), any::<u8>()],
    ) {
        bytes[0] = 0x40 | ihl;
        bytes[2..4].copy_from_slice(&total.to_be_bytes());
        bytes[6] &= 0x40; // no fragments
        bytes[7] = 0;
        bytes[9] = protocol;
        let h = ihl as usize * 4;
        if bytes.len() > h + 12 {
            bytes[h + 12] = doff << 4;
        }
        fix_checksums(&mut bytes);
        let _ = PacketRepr::parse(&bytes);
    }

    #[test]
    fn mutated_packets_never_panic(
        p in arb_packet(),
        ctx in arb_ctx(),
        muts in vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
    ) {
        if let Ok(mut bytes) = encode(&p, &ctx) {
            for (at, v) in muts {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            fix_checksums(&mut bytes);
            let cut = cut % (bytes.len() + 1);
            let _ = PacketRepr::parse(&bytes[..cut]);
            let _ = PacketRepr::parse(&bytes);
        }
    }

    #[test]
    fn pcap_garbage_never_panics(tail in vec(any::<u8>(), 0..300), big_endian in any::<bool>()) {
        let mut file = PcapWriter::new(Vec::new()).unwrap().into_inner();
        if big_endian {
            file[..4].reverse();
        }
        file.extend_from_slice(&tail);
        let reader = PcapReader::new(&file).unwrap();
        // The reader stops after its first error, so `flatten` sees every good record.
        for rec in reader.flatten() {
            let _ = PacketRepr::parse(rec.data);
        }
    }
}
