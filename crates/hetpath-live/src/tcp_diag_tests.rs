use super::*;
use crate::netlink::{HEADER as NLMSG_HDR, NLMSG_ERROR};
use proptest::prelude::*;

/// A netlink message of `kind` around `body`, padded to 4 bytes.
fn message(kind: u16, body: &[u8]) -> Vec<u8> {
    let len = (NLMSG_HDR + body.len()) as u32;
    let mut m = Vec::new();
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&[0; 10]);
    m.extend_from_slice(body);
    m.resize(align4(m.len()), 0);
    m
}

/// An `inet_diag_msg` for local -> remote (IPv4) with a `tcp_info` attribute of `info_len`
/// bytes whose fields are set as the kernel would.
fn diag(
    local: SocketAddr,
    remote: SocketAddr,
    info_len: usize,
    fields: &[(usize, u64)],
) -> Vec<u8> {
    let mut b = vec![0u8; DIAG_MSG];
    b[0] = AF_INET;
    b[1] = 1; // ESTABLISHED
    for (port_at, ip_at, a) in [(4, 8, local), (6, 24, remote)] {
        b[port_at..port_at + 2].copy_from_slice(&a.port().to_be_bytes());
        let IpAddr::V4(ip) = a.ip() else {
            unreachable!()
        };
        b[ip_at..ip_at + 4].copy_from_slice(&ip.octets());
    }
    let mut info = vec![0u8; info_len];
    for &(at, v) in fields {
        let w = if at == 120 { 8 } else { 4 };
        if at + w <= info_len {
            info[at..at + w].copy_from_slice(&v.to_ne_bytes()[..w]);
        }
    }
    // An attribute the decoder must step over, then INET_DIAG_INFO.
    b.extend_from_slice(&8u16.to_ne_bytes());
    b.extend_from_slice(&1u16.to_ne_bytes()); // INET_DIAG_MEMINFO's number, any payload
    b.extend_from_slice(&[7; 4]);
    b.extend_from_slice(&((4 + info_len) as u16).to_ne_bytes());
    b.extend_from_slice(&INET_DIAG_INFO.to_ne_bytes());
    b.extend_from_slice(&info);
    message(SOCK_DIAG_BY_FAMILY, &b)
}

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

#[test]
fn a_connection_gives_the_simulators_flow_columns() {
    // rto 220 ms, mss 1448, 40 unacked of which 3 sacked, 2 lost, 1 retransmitted,
    // srtt 20.5 ms, ssthresh 30 segments, cwnd 42 segments, 1 MB acked.
    let fields = [
        (8, 220_000),
        (16, 1448),
        (24, 40),
        (28, 3),
        (32, 2),
        (36, 1),
        (68, 20_500),
        (76, 30),
        (80, 42),
        (120, 1_000_000),
        (156, 800),
    ];
    let mut buf = diag(a("10.77.0.1:40000"), a("10.77.0.2:5001"), 232, &fields);
    buf.extend(message(NLMSG_DONE, &[0; 4]));
    let mut out = Vec::new();
    assert_eq!(decode(&buf, &mut out), Dump::Done);
    assert_eq!(out.len(), 1);
    let s = &out[0];
    assert_eq!(
        (s.local, s.remote),
        (a("10.77.0.1:40000"), a("10.77.0.2:5001"))
    );
    assert_eq!(s.cwnd_bytes, 42 * 1448);
    assert_eq!(s.ssthresh_bytes, 30.0 * 1448.0);
    assert_eq!((s.srtt_s, s.rto_s), (0.0205, 0.22));
    assert_eq!(s.in_flight_bytes, (40 - 3 - 2 + 1) * 1448);
    assert_eq!(s.bytes_delivered, 1_000_000);
}

#[test]
fn infinite_ssthresh_and_no_rtt_sample_are_nan_and_an_old_layout_has_no_bytes_acked() {
    let fields = [
        (16, 1460),
        (76, INFINITE_SSTHRESH as u64),
        (80, 10),
        (120, 5),
    ];
    let buf = diag(a("10.0.0.1:1"), a("10.0.0.2:2"), 104, &fields);
    let mut out = Vec::new();
    assert_eq!(decode(&buf, &mut out), Dump::More);
    assert!(out[0].ssthresh_bytes.is_nan() && out[0].srtt_s.is_nan());
    assert_eq!((out[0].cwnd_bytes, out[0].bytes_delivered), (14_600, 0));
    // Shorter than tcpi_total_retrans: not decoded.
    let mut out = Vec::new();
    decode(
        &diag(a("10.0.0.1:1"), a("10.0.0.2:2"), 100, &fields),
        &mut out,
    );
    assert!(out.is_empty());
}

#[test]
fn loopback_peers_and_sockets_that_sent_no_data_are_skipped_and_errors_reported() {
    let mut out = Vec::new();
    decode(
        &diag(a("127.0.0.1:1"), a("127.0.0.1:2"), 232, &[(156, 5)]),
        &mut out,
    );
    assert!(out.is_empty());
    decode(
        &diag(a("10.0.0.1:1"), a("10.0.0.2:2"), 232, &[(156, 0)]),
        &mut out,
    );
    assert!(
        out.is_empty(),
        "a receiver that never sent data is not a flow"
    );
    let refused = message(NLMSG_ERROR, &(-13i32).to_ne_bytes());
    assert_eq!(decode(&refused, &mut out), Dump::Failed(13));
    assert_eq!(
        decode(
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
            &mut out
        ),
        Dump::Failed(22)
    );
}

#[test]
fn the_request_asks_for_tcp_info_of_every_connected_socket() {
    let r = request(AF_INET6, 7);
    assert_eq!(u32_at(&r, 0), Some(72));
    assert_eq!(u16_at(&r, 4), Some(SOCK_DIAG_BY_FAMILY));
    assert_eq!(u16_at(&r, 6), Some(0x301));
    assert_eq!((r[16], r[17], r[18]), (AF_INET6, 6, 2));
    let states = u32_at(&r, 20).unwrap();
    assert_eq!(states & (1 << 10), 0, "not LISTEN");
    assert_ne!(states & (1 << 1), 0, "ESTABLISHED");
}

proptest! {
    /// Any bytes: no panic, and no more samples than messages could hold.
    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut out = Vec::new();
        decode(&bytes, &mut out);
        prop_assert!(out.len() <= bytes.len() / (NLMSG_HDR + DIAG_MSG).max(1) + 1);
    }

    /// A valid dump with its bytes flipped or cut: still no panic.
    #[test]
    fn a_damaged_dump_never_panics(flips in proptest::collection::vec((0usize..400, any::<u8>()), 0..8),
                                   cut in 0usize..400) {
        let mut buf = diag(a("10.77.0.1:40000"), a("10.77.0.2:5001"), 232, &[(16, 1448), (80, 10), (156, 1)]);
        buf.extend(diag(a("10.77.0.2:5001"), a("10.77.0.1:40000"), 232, &[(16, 1448), (156, 1)]));
        for (at, v) in flips {
            let n = buf.len();
            buf[at % n] ^= v;
        }
        buf.truncate(cut.min(buf.len()));
        let mut out = Vec::new();
        decode(&buf, &mut out);
    }
}
