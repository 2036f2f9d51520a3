//! Test vectors (RFC 791 / RFC 9293 layouts, checksums per RFC 1071), round trips, pcap
//! files, and an opt-in check of our captures with tshark.

use super::*;
use crate::packet::{
    Addr, Ecn, IpHeader, SackBlock, SackList, SynOptions, TcpFlags, TcpSegment, MAX_SACK_BLOCKS,
};
use crate::time::{Dur, Time};

const CLIENT: Addr = Addr(0x0a00_0001); // 10.0.0.1
const SERVER: Addr = Addr(0x0a00_0002); // 10.0.0.2
const CLIENT_ISN: u32 = 0xffff_fff0; // wraps after 16 bytes
const SERVER_ISN: u32 = 0x1234_5678;
const C2S: WireCtx = WireCtx::new(CLIENT_ISN, SERVER_ISN, 7);
const S2C: WireCtx = WireCtx::new(SERVER_ISN, CLIENT_ISN, 8);

/// RFC 1071 written the obvious way, independent of `checksum.rs`: add 16-bit words with
/// an end-around carry after each addition, then complement.
fn reference_checksum(chunks: &[&[u8]]) -> u16 {
    let bytes: Vec<u8> = chunks.concat();
    let mut s: u32 = 0;
    for i in (0..bytes.len()).step_by(2) {
        let hi = bytes[i] as u32;
        let lo = bytes.get(i + 1).copied().unwrap_or(0) as u32;
        s += (hi << 8) | lo;
        if s > 0xffff {
            s = (s & 0xffff) + 1;
        }
    }
    !(s as u16)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn syn_options(wscale: u8) -> Option<SynOptions> {
    Some(SynOptions {
        mss: 1460,
        sack_permitted: true,
        window_scale: wscale,
    })
}

fn client_syn() -> Packet {
    let seg = TcpSegment {
        src_port: 40000,
        dst_port: 80,
        flags: TcpFlags::SYN,
        window: 1 << 20, // capped to 65535 unscaled on a SYN
        syn_options: syn_options(7),
        ..Default::default()
    };
    Packet::tcp(CLIENT, SERVER, seg)
}

fn data_with_sack() -> Packet {
    let mut sack = SackList::default();
    sack.push(SackBlock {
        start: 1001,
        end: 2001,
    });
    sack.push(SackBlock {
        start: 3001,
        end: 4001,
    });
    let seg = TcpSegment {
        src_port: 40000,
        dst_port: 80,
        seq: 4381,
        ack: 1,
        flags: TcpFlags::ACK | TcpFlags::PSH,
        window: 262_144,
        len: 100,
        syn_options: None,
        sack,
        ts: None,
        rap: None,
        wscale: C2S.wscale,
    };
    let mut p = Packet::tcp(CLIENT, SERVER, seg);
    p.ip.ecn = Ecn::Ect0;
    p
}

#[test]
fn syn_test_vector() {
    let p = client_syn();
    // Computed independently from the RFC 791 and RFC 9293 layouts.
    let want = hex(concat!(
        "45000034", "00014000", "400626c1", "0a000001", "0a000002", // IPv4, ident 1, DF
        "9c400050", "fffffff0", "00000000", "8002ffff", "be8d0000", // SYN, window 65535
        "020405b4", "01010402", "01030307", // MSS 1460, NOP NOP SACKOK, NOP WS 7
    ));
    let bytes = encode(&p, &C2S.with_ident(1)).unwrap();
    assert_eq!(bytes, want);
    assert_eq!(bytes.len() as u32, p.size());

    let mut ip = bytes[..20].to_vec();
    ip[10..12].fill(0);
    assert_eq!(reference_checksum(&[&ip]), 0x26c1);
    let mut tcp = bytes[20..].to_vec();
    tcp[16..18].fill(0);
    let pseudo = [10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 32];
    assert_eq!(reference_checksum(&[&pseudo, &tcp]), 0xbe8d);

    let mut expect = p.clone();
    if let Body::Tcp(s) = &mut expect.body {
        s.window = 65535;
    }
    assert_eq!(decode(&bytes, &C2S), Ok(expect));
}

#[test]
fn data_with_sack_test_vector() {
    let p = data_with_sack();
    let want_headers = hex(concat!(
        "450200a0", "beef4000", "40066764", "0a000001", "0a000002", // ECT(0), len 160
        "9c400050", "0000110d", "12345679", "a0180800", "5d2e0000", // seq wrapped, win 2048
        "01010512", "12345a61", "12345e49", "12346231", "12346619", // NOP NOP SACK x2
    ));
    let full = encode(&p, &C2S.with_ident(0xbeef)).unwrap();
    assert_eq!(full.len(), 160);
    assert_eq!(&full[..60], &want_headers[..]);
    assert!(full[60..].iter().all(|&b| b == 0));

    let mut tcp = full[20..].to_vec();
    tcp[16..18].fill(0);
    let pseudo = [10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 140];
    assert_eq!(reference_checksum(&[&pseudo, &tcp]), 0x5d2e);
    // The payload zeros do not change the sum.
    assert_eq!(reference_checksum(&[&pseudo, &tcp[..40]]), 0x5d2e);

    let repr = PacketRepr::parse(&full).unwrap();
    let t = repr.tcp.unwrap();
    assert_eq!(
        t.sack().as_slice(),
        &[(0x1234_5a61, 0x1234_5e49), (0x1234_6231, 0x1234_6619)]
    );
    assert_eq!(t.window, 2048);
    assert_eq!(repr.ip.ecn, Ecn::Ect0);
    assert_eq!(decode(&full, &C2S), Ok(p.clone()));
    // Headers only: same result, checksum not checkable.
    assert_eq!(decode(&full[..60], &C2S), Ok(p));
}

#[test]
fn headers_only_emission_matches_full() {
    let repr = PacketRepr::from_packet(&data_with_sack(), &C2S.with_ident(0xbeef)).unwrap();
    assert_eq!(repr.header_len(), 60);
    assert_eq!(repr.buffer_len(), 160);
    let mut head = [0u8; 60];
    assert_eq!(repr.emit_headers(&mut head), Ok(60));
    let mut full = [0xffu8; 200];
    assert_eq!(repr.emit(&mut full), Ok(160));
    assert_eq!(&full[..60], &head);
    assert_eq!(
        repr.emit(&mut full[..159]),
        Err(WireError::BufferTooSmall {
            need: 160,
            have: 159
        })
    );
    assert_eq!(
        repr.emit_headers(&mut head[..59]),
        Err(WireError::BufferTooSmall { need: 60, have: 59 })
    );
    let mut bad = repr;
    bad.ip.payload_len -= 1;
    assert_eq!(bad.emit_headers(&mut head), Err(WireError::LengthMismatch));
    let mut bad = repr;
    if let Some(t) = &mut bad.tcp {
        t.options.mss = Some(1460);
        t.options.sack_permitted = true;
        t.options.window_scale = Some(1);
        t.options.sack.push(1, 2);
        t.options.sack.push(3, 4);
    }
    // 9 + 2 + 4 * 8 = 43 option bytes, padded to 44: more than a header can hold.
    assert_eq!(
        bad.emit_headers(&mut head),
        Err(WireError::OptionsTooLong(44))
    );
}

fn seg(seq: u64, ack: u64, flags: TcpFlags, window: u64, len: u32) -> TcpSegment {
    TcpSegment {
        src_port: 40000,
        dst_port: 80,
        seq,
        ack,
        flags,
        window,
        len,
        ..Default::default()
    }
}

fn reply(mut s: TcpSegment) -> TcpSegment {
    std::mem::swap(&mut s.src_port, &mut s.dst_port);
    s
}

/// A short connection as a capture point between the hosts would see it: handshake, data
/// with one loss (SACKed, then retransmitted), FIN exchange, and two non-TCP packets.
pub(super) fn conversation() -> Vec<(Time, Packet, WireCtx)> {
    const ACK: TcpFlags = TcpFlags::ACK;
    let ms = Dur::from_millis;
    let mut out = Vec::new();
    let mut uid: u16 = 100;
    let mut add = |t: Dur, from_client: bool, s: TcpSegment| {
        let (src, dst, ctx) = if from_client {
            (CLIENT, SERVER, C2S)
        } else {
            (SERVER, CLIENT, S2C)
        };
        let mut s = s;
        if !s.flags.contains(TcpFlags::SYN) {
            s.wscale = ctx.wscale;
        }
        let mut p = Packet::tcp(src, dst, s);
        if p.as_tcp().is_some_and(|s| s.len > 0) {
            p.ip.ecn = Ecn::Ect0;
        }
        out.push((Time::ZERO + t, p, ctx.with_ident(uid)));
        uid += 1;
    };
    let syn = TcpSegment {
        syn_options: syn_options(7),
        ..seg(0, 0, TcpFlags::SYN, 64240, 0)
    };
    add(ms(0), true, syn);
    let synack = TcpSegment {
        syn_options: syn_options(8),
        ..seg(0, 1, TcpFlags::SYN | ACK, 65535, 0)
    };
    add(ms(10), false, reply(synack));
    add(ms(20), true, seg(1, 1, ACK, 131_072, 0));
    add(ms(20), true, seg(1, 1, ACK | TcpFlags::PSH, 131_072, 1460));
    add(ms(21), true, seg(1461, 1, ACK, 131_072, 1460)); // lost beyond the capture point
    add(ms(22), true, seg(2921, 1, ACK, 131_072, 1460));
    add(ms(30), false, reply(seg(1, 1461, ACK, 262_144, 0)));
    let mut dup = seg(1, 1461, ACK, 262_144, 0);
    dup.sack.push(SackBlock {
        start: 2921,
        end: 4381,
    });
    add(ms(32), false, reply(dup));
    add(ms(32), true, seg(1461, 1, ACK, 131_072, 1460)); // fast retransmit
    add(ms(42), false, reply(seg(1, 4381, ACK, 262_144, 0)));
    add(ms(50), true, seg(4381, 1, ACK | TcpFlags::FIN, 131_072, 0));
    add(
        ms(60),
        false,
        reply(seg(1, 4382, ACK | TcpFlags::FIN, 262_144, 0)),
    );
    add(ms(70), true, seg(4382, 2, ACK, 131_072, 0));
    let ip = IpHeader {
        src: Addr(0x0a00_0003),
        dst: Addr(0x0a00_0004),
        ttl: 17,
        ecn: Ecn::Ce,
    };
    for (i, proto) in [proto::ESP, 253].into_iter().enumerate() {
        let raw = Packet {
            ip,
            body: Body::Raw { proto, len: 64 },
        };
        let ctx = WireCtx::default().with_ident(900 + i as u16);
        out.push((Time::ZERO + ms(80 + i as u64), raw, ctx));
    }
    out
}

#[test]
fn conversation_round_trips_every_field() {
    for (_, p, ctx) in conversation() {
        let bytes = encode(&p, &ctx).unwrap();
        assert_eq!(bytes.len() as u32, p.size());
        let repr = PacketRepr::parse(&bytes).unwrap();
        if let Some(s) = p.as_tcp() {
            assert_eq!(repr.header_len() as u32, 20 + s.header_len());
        }
        let got = decode(&bytes, &ctx).unwrap();
        let mut want = p.clone();
        if let Body::Tcp(s) = &mut want.body {
            if s.flags.contains(TcpFlags::SYN) {
                s.window = s.window.min(65535);
            }
        }
        assert_eq!(got, want);
        assert_eq!(decode(&bytes[..repr.header_len()], &ctx).unwrap(), want);
    }
}

#[test]
fn raw_body_is_ip_header_plus_zeros() {
    let ip = IpHeader {
        src: Addr(1),
        dst: Addr(2),
        ttl: 3,
        ecn: Ecn::Ect1,
    };
    let p = Packet {
        ip,
        body: Body::Raw { proto: 50, len: 10 },
    };
    let bytes = encode(&p, &WireCtx::default()).unwrap();
    assert_eq!(bytes.len(), 30);
    assert_eq!(&bytes[..4], &[0x45, 0x01, 0, 30]);
    assert_eq!(bytes[9], 50);
    assert!(bytes[20..].iter().all(|&b| b == 0));
    assert_eq!(decode(&bytes, &WireCtx::default()), Ok(p));
}

#[test]
fn a_lift_ack_shows_its_lift_and_esp_headers_and_hides_tcp() {
    use crate::esp::SecurityAssociation;
    use crate::lift::{LiftHeader, PROTO_LIFT};
    use crate::packet::EspSizes;
    let sa = SecurityAssociation::with_sizes(0x1234_5678, EspSizes::Flat { icv: 8 });
    let ack = TcpSegment {
        flags: TcpFlags::ACK,
        window: 0,
        ..Default::default()
    };
    let header = LiftHeader::Frack {
        flow: 9,
        next_header: 50,
    };
    let p = Packet::new(Addr(1), Addr(2), Body::Lift(header, Some(sa.seal(77, ack))));
    // Section IV: a FrACK is 66 bytes (IP 20, LIFT 8, ESP 18, TCP 20).
    assert_eq!(p.size(), 66);
    let bytes = encode(&p, &WireCtx::default()).unwrap();
    assert_eq!(bytes.len(), 66);
    assert_eq!(bytes[9], PROTO_LIFT);
    assert_eq!(&bytes[20..28], &[0b1100_0000, 0, 9, 0, 0, 0, 0, 50]);
    assert_eq!(&bytes[28..36], &[0x12, 0x34, 0x56, 0x78, 0, 0, 0, 77]);
    assert!(
        bytes[36..].iter().all(|&b| b == 0),
        "the TCP segment is not shown"
    );
    let repr = PacketRepr::parse(&bytes).unwrap();
    assert_eq!(repr.tcp, None);
    assert_eq!(repr.encap.lift, Some(header));
    assert_eq!(repr.encap.esp, Some((0x1234_5678, 77)));
    // Headers-only capture: the visible headers and nothing of the payload.
    assert_eq!(repr.header_len(), 36);
}

#[test]
fn ack_field_is_zero_without_ack_flag() {
    let mut s = seg(5, 77, TcpFlags::RST, 0, 0);
    s.wscale = C2S.wscale;
    let bytes = encode(&Packet::tcp(CLIENT, SERVER, s.clone()), &C2S).unwrap();
    assert_eq!(&bytes[28..32], &[0, 0, 0, 0]);
    s.ack = 0;
    assert_eq!(decode(&bytes, &C2S).unwrap().as_tcp(), Some(&s));
}

#[test]
fn oversized_packets_are_rejected() {
    let big = Packet::tcp(CLIENT, SERVER, seg(0, 0, TcpFlags::ACK, 0, 65_496));
    assert_eq!(encode(&big, &C2S), Err(WireError::TooLong(65_536)));
    let max = Packet::tcp(CLIENT, SERVER, seg(0, 0, TcpFlags::ACK, 0, 65_495));
    assert_eq!(encode(&max, &C2S).unwrap().len(), 65_535);
    let huge = Packet::tcp(CLIENT, SERVER, seg(0, 0, TcpFlags::ACK, 0, u32::MAX));
    assert!(matches!(encode(&huge, &C2S), Err(WireError::TooLong(_))));
    let mut s = seg(0, 0, TcpFlags::SYN, 0, 0);
    s.syn_options = syn_options(14);
    for i in 0..MAX_SACK_BLOCKS as u64 {
        s.sack.push(SackBlock {
            start: i,
            end: i + 1,
        });
    }
    let p = Packet::tcp(CLIENT, SERVER, s);
    assert_eq!(encode(&p, &C2S), Err(WireError::OptionsTooLong(44)));
}

fn write_conversation(opts: PcapOptions) -> Vec<u8> {
    let mut w = PcapWriter::with_options(Vec::new(), opts).unwrap();
    for (t, p, ctx) in conversation() {
        w.write_packet(t, &p, &ctx).unwrap();
    }
    w.into_inner()
}

#[test]
fn pcap_headers_only_round_trip() {
    let file = write_conversation(PcapOptions::default());
    assert_eq!(&file[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
    let reader = PcapReader::new(&file).unwrap();
    let h = *reader.header();
    assert_eq!((h.nanos, h.big_endian, h.version), (true, false, (2, 4)));
    assert_eq!((h.snaplen, h.linktype), (65535, 101));
    let records: Vec<_> = reader.map(Result::unwrap).collect();
    let conv = conversation();
    assert_eq!(records.len(), conv.len());
    for (rec, (t, p, ctx)) in records.iter().zip(&conv) {
        assert_eq!(rec.time, *t);
        assert_eq!(rec.orig_len, p.size());
        let repr = PacketRepr::from_packet(p, ctx).unwrap();
        assert_eq!(rec.data.len(), repr.header_len());
        assert_eq!(PacketRepr::parse(rec.data), Ok(repr));
    }
}

#[test]
fn pcap_full_payload_and_snaplen() {
    let full = write_conversation(PcapOptions {
        full_payload: true,
        ..Default::default()
    });
    for (rec, (_, p, ctx)) in PcapReader::new(&full).unwrap().zip(conversation()) {
        let rec = rec.unwrap();
        assert_eq!(rec.data, &encode(&p, &ctx).unwrap()[..]);
        assert_eq!(rec.data.len() as u32, rec.orig_len);
    }
    let cut = write_conversation(PcapOptions {
        snaplen: 50,
        full_payload: true,
    });
    assert_eq!(PcapReader::new(&cut).unwrap().header().snaplen, 50);
    for (rec, (_, p, ctx)) in PcapReader::new(&cut).unwrap().zip(conversation()) {
        let rec = rec.unwrap();
        let bytes = encode(&p, &ctx).unwrap();
        assert_eq!(rec.data, &bytes[..bytes.len().min(50)]);
        assert_eq!(rec.orig_len, p.size());
    }
}

#[test]
fn pcap_writer_rejects_unrepresentable_time() {
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    let p = client_syn();
    let late = Time(u64::from(u32::MAX) * 1_000_000_000 + 999_999_999);
    w.write_packet(late, &p, &C2S).unwrap();
    let too_late = Time(late.0 + 1);
    assert!(matches!(
        w.write_packet(too_late, &p, &C2S),
        Err(PcapError::TimeOutOfRange)
    ));
    let file = w.into_inner();
    let rec = PcapReader::new(&file).unwrap().next().unwrap().unwrap();
    assert_eq!(rec.time, late);
}

#[test]
fn pcap_reader_reports_garbage() {
    assert!(matches!(
        PcapReader::new(&[0; 10]),
        Err(PcapError::Truncated { .. })
    ));
    assert!(matches!(
        PcapReader::new(&[0; 24]),
        Err(PcapError::BadMagic(0))
    ));
    let file = write_conversation(PcapOptions::default());
    // Cut inside the second record: one good record, then one error, then nothing.
    let first = RECORD_LEN_OF_SYN;
    let cut = &file[..24 + first + 5];
    let mut r = PcapReader::new(cut).unwrap();
    assert!(r.next().unwrap().is_ok());
    assert!(matches!(r.next(), Some(Err(PcapError::Truncated { .. }))));
    assert!(r.next().is_none());
    // A big-endian, microsecond file with one empty record.
    let mut be = vec![0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0];
    be.extend_from_slice(&[0, 0, 0, 64, 0, 0, 0, 101]);
    be.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 20]);
    let mut r = PcapReader::new(&be).unwrap();
    assert_eq!(
        (r.header().big_endian, r.header().nanos, r.header().snaplen),
        (true, false, 64)
    );
    let rec = r.next().unwrap().unwrap();
    assert_eq!(
        (rec.time, rec.orig_len, rec.data.len()),
        (Time(3_000_005_000), 20, 0)
    );
}

/// The first record of `write_conversation`: 16-byte record header + 20 + 32 bytes.
const RECORD_LEN_OF_SYN: usize = 16 + 52;

/// Runs tshark with checksum validation on `path`; returns (summary, verbose, expert).
fn tshark(path: &std::path::Path) -> (String, String, String) {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new("tshark")
            .args([
                "-n",
                "-o",
                "tcp.check_checksum:TRUE",
                "-o",
                "ip.check_checksum:TRUE",
            ])
            .args(["-o", "tcp.analyze_sequence_numbers:TRUE", "-r"])
            .arg(path)
            .args(extra)
            .output()
            .expect("tshark on PATH");
        assert!(
            out.status.success(),
            "tshark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    (run(&[]), run(&["-V"]), run(&["-q", "-z", "expert"]))
}

fn tshark_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hetpath-wire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Checks that tshark finds nothing malformed and no bad checksum; returns how many
/// checksums it verified as good. Wireshark writes "[Header checksum status: Good]" for
/// IP and "[Checksum Status: Good]" for TCP; expert items are listed in "Errors (n)",
/// "Warns (n)", "Notes (n)" and "Chats (n)" sections.
fn assert_tshark_clean(path: &std::path::Path, packets: usize, forbid_warnings: bool) -> usize {
    let (summary, verbose, expert) = tshark(path);
    println!("==== {} ====\n{summary}\n{expert}", path.display());
    assert_eq!(summary.lines().count(), packets);
    let (verbose, expert) = (verbose.to_lowercase(), expert.to_lowercase());
    let mut bad = vec![
        "malformed",
        "checksum status: bad",
        "[incorrect",
        "errors (",
    ];
    if forbid_warnings {
        bad.push("warns (");
    }
    for b in bad {
        assert!(
            !verbose.contains(b) && !expert.contains(b),
            "{}: found {b:?}",
            path.display()
        );
    }
    verbose.matches("checksum status: good]").count()
}

/// Writes the conversation (headers-only and full) to /tmp and asks tshark whether any
/// packet is malformed or has a bad checksum, and that it raises no warning. Run with
/// `cargo test -p hetpath-proto wire::tests::tshark -- --ignored --nocapture`.
#[test]
#[ignore = "needs tshark on PATH"]
fn tshark_accepts_capture() {
    let conv = conversation();
    for (name, full_payload) in [("headers.pcap", false), ("full.pcap", true)] {
        let path = tshark_dir().join(name);
        let opts = PcapOptions {
            full_payload,
            ..Default::default()
        };
        std::fs::write(&path, write_conversation(opts)).unwrap();
        let good = assert_tshark_clean(&path, conv.len(), true);
        // IP header checksums always; TCP checksums when the whole segment was captured.
        let checkable = conv
            .iter()
            .filter(|(_, p, _)| p.as_tcp().is_some_and(|s| full_payload || s.len == 0));
        assert_eq!(
            good,
            conv.len() + checkable.count(),
            "{name}: good checksums"
        );
    }
}

/// Unusual but legal segments: SYN options beside a SACK option (one spare byte), four
/// SACK blocks (36 option bytes), window shift 14, odd payload lengths, RST without ACK.
#[test]
#[ignore = "needs tshark on PATH"]
fn tshark_accepts_edge_cases() {
    let ctx = WireCtx::new(0x8000_0000, 0x7fff_ffff, 14);
    let mut syn = seg(0, 0, TcpFlags::SYN, 1 << 30, 0);
    syn.syn_options = syn_options(14);
    syn.sack.push(SackBlock { start: 5, end: 6 });
    let mut four = seg(1, 1, TcpFlags::ACK, 1 << 30, 0);
    for i in 0..MAX_SACK_BLOCKS as u64 {
        four.sack.push(SackBlock {
            start: 1000 * i + 10,
            end: 1000 * i + 20,
        });
    }
    let segs = [
        syn,
        four,
        seg(1, 1, TcpFlags::ACK, 1 << 16, 1),
        seg(2, 0, TcpFlags::RST, 0, 0),
    ];
    let mut w = PcapWriter::with_options(
        Vec::new(),
        PcapOptions {
            full_payload: true,
            ..Default::default()
        },
    )
    .unwrap();
    for (i, s) in segs.iter().enumerate() {
        let p = Packet::tcp(CLIENT, SERVER, s.clone());
        w.write_packet(Time(i as u64 * 1000), &p, &ctx.with_ident(i as u16))
            .unwrap();
    }
    let path = tshark_dir().join("edge.pcap");
    std::fs::write(&path, w.into_inner()).unwrap();
    let good = assert_tshark_clean(&path, segs.len(), false);
    assert_eq!(good, 2 * segs.len());
}

fn sctp_packet() -> crate::sctp_chunk::SctpPacket {
    use crate::sctp_chunk::{Chunk, DataChunk, SctpPacket};
    let data = |tsn| {
        Chunk::Data(DataChunk {
            tsn,
            stream: 2,
            ssn: 7,
            ppid: 0,
            unordered: false,
            begin: true,
            end: true,
            len: 600,
        })
    };
    SctpPacket {
        src_port: 40_000,
        dst_port: 5_000,
        verification_tag: 0xC0FF_EE01,
        chunks: vec![data(10), data(11)],
    }
}

#[test]
fn an_sctp_body_is_written_as_rfc_4960_bytes_and_read_back() {
    use crate::packet::SctpBody;
    let p = Packet::new(
        CLIENT,
        SERVER,
        Body::Sctp(SctpBody::new(sctp_packet(), None)),
    );
    let bytes = encode(&p, &WireCtx::default()).unwrap();
    assert_eq!(bytes.len() as u32, p.size());
    assert_eq!(bytes[9], proto::SCTP);
    // The common header (RFC 4960 section 3.1), then the first DATA chunk's header.
    assert_eq!(
        &bytes[20..28],
        &[0x9c, 0x40, 0x13, 0x88, 0xC0, 0xFF, 0xEE, 0x01]
    );
    assert_eq!(&bytes[32..36], &[0, 0x03, 0x02, 0x68]);
    assert_eq!(decode(&bytes, &WireCtx::default()), Ok(p.clone()));
    // A pcap record holds the whole packet, even headers-only (chunk headers sit between
    // the user data).
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    w.write_packet(Time::ZERO, &p, &WireCtx::default()).unwrap();
    let file = w.into_inner();
    let rec = PcapReader::new(&file).unwrap().next().unwrap().unwrap();
    assert_eq!(rec.data, &bytes[..]);
    // A damaged packet no longer passes its CRC32c and stays opaque.
    let mut bad = bytes.clone();
    bad[40] ^= 1;
    assert!(matches!(
        decode(&bad, &WireCtx::default()).unwrap().body,
        Body::Raw { proto: 132, .. }
    ));
}

#[test]
fn an_sctp_body_in_esp_shows_only_the_esp_header() {
    use crate::packet::{SctpBody, SctpEsp};
    let esp = SctpEsp {
        spi: 0x5C00_0000,
        seq: 3,
        overhead: 18,
    };
    let p = Packet::new(
        CLIENT,
        SERVER,
        Body::Sctp(SctpBody::new(sctp_packet(), Some(esp))),
    );
    // Seed 001 section IV: two 600-byte chunks fill the 1282-byte MTU in ESP.
    assert_eq!(p.size(), 1282);
    let bytes = encode(&p, &WireCtx::default()).unwrap();
    assert_eq!((bytes.len(), bytes[9]), (1282, proto::ESP));
    assert_eq!(&bytes[20..28], &[0x5C, 0, 0, 0, 0, 0, 0, 3]);
    assert!(
        bytes[28..].iter().all(|&b| b == 0),
        "the SCTP packet is not shown"
    );
    let repr = PacketRepr::parse(&bytes).unwrap();
    assert_eq!(repr.encap.esp, Some((0x5C00_0000, 3)));
}
