//! The booster against a real TCP sender (a `Host`'s connection), scripted: what TCP sends
//! goes to the booster, the booster's ACKs go back, and the test decides when the
//! destination node confirms or the subnetwork loses a datagram.

use super::booster::{Booster, BoosterConfig};
use crate::cc::Algorithm;
use crate::host::Host;
use crate::ids::ConnId;
use crate::machine::{At, Machine, Verdict};
use crate::packet::{Addr, Endpoint, Packet, SynOptions, TcpFlags, TcpSegment};
use crate::tcp::TcpConfig;
use crate::testing::NoNode;
use crate::time::{Dur, Time};

const MSS: u32 = 1460;
const ME: Addr = Addr(1);
const PEER: Endpoint = Endpoint {
    addr: Addr(2),
    port: 5001,
};

/// A sender host with one established connection writing `bytes`, and a booster.
struct Bench {
    host: Host,
    conn: ConnId,
    booster: Booster,
    now: Time,
    /// Datagrams the booster has handed to the subnetwork, in order.
    sent: Vec<(u64, Packet)>,
}

impl Bench {
    fn new(buffer: usize, bytes: u64) -> Bench {
        let mut host = Host::new(ME);
        let conn = host
            .connect(PEER, TcpConfig::new(MSS), &Algorithm::NewReno, None)
            .unwrap();
        let now = Time::ZERO;
        let syn = host.poll_transmit(now, &NoNode).expect("a SYN").packet;
        let syn = syn.as_tcp().unwrap().clone();
        // The peer's SYN-ACK, with a large window: TCP's first flight leaves at once.
        let synack = TcpSegment {
            src_port: PEER.port,
            dst_port: syn.src_port,
            seq: 0,
            ack: syn.seq + 1,
            flags: TcpFlags::SYN | TcpFlags::ACK,
            window: 1 << 20,
            syn_options: Some(SynOptions {
                mss: MSS as u16,
                ..SynOptions::default()
            }),
            ..TcpSegment::default()
        };
        host.handle_packet(
            now,
            At::Local,
            &mut Packet::tcp(PEER.addr, ME, synack),
            &NoNode,
        );
        host.write(conn, bytes);
        let booster = Booster::new(BoosterConfig {
            buffer,
            window: None,
            ..BoosterConfig::default()
        });
        Bench {
            host,
            conn,
            booster,
            now,
            sent: Vec::new(),
        }
    }

    /// Moves packets between TCP and the booster until both are quiet.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.host.poll_transmit(self.now, &NoNode) {
                moved = true;
                let seg = t.packet.as_tcp().unwrap().clone();
                if Booster::boosts(&seg) {
                    self.booster.take(self.now, &seg, t.packet);
                }
            }
            while let Some(mut ack) = self.booster.poll_tcp() {
                moved = true;
                let v = self
                    .host
                    .handle_packet(self.now, At::Local, &mut ack, &NoNode);
                assert!(matches!(v, Verdict::Consume));
            }
            while let Some(d) = self.booster.poll_subnet() {
                self.sent.push(d);
            }
            if !moved {
                return;
            }
        }
    }

    fn advance(&mut self, by: Dur) {
        self.now += by;
        if self.host.poll_timeout().is_some_and(|t| t <= self.now) {
            self.host.handle_timeout(self.now, &NoNode);
        }
        self.settle();
    }

    fn tcp_stats(&self) -> crate::tcp::SenderStats {
        *self.host.connection(self.conn).stats()
    }
}

#[test]
fn tcp_fills_the_buffer_freezes_and_resumes_on_one_duplicate_ack_without_retransmitting() {
    let buffer = 20;
    let mut b = Bench::new(buffer, 1_000_000);
    b.settle();
    // TCP's first flight went past the buffer (it was already sent); then it froze.
    assert!(b.booster.held() >= buffer, "held {}", b.booster.held());
    assert_eq!(b.booster.stats().freezes, 1);
    let frozen_at = b.sent.len();
    b.advance(Dur::from_millis(50));
    assert_eq!(b.sent.len(), frozen_at, "a frozen TCP sends nothing");
    // The destination confirms datagrams one by one, some time apart; each confirmation
    // below the buffer resumes TCP with one duplicate ACK carrying a positive window.
    for next in 0..400 {
        let (id, _) = b.sent[next];
        b.booster.confirmed(b.now, id);
        b.advance(Dur::from_millis(3));
    }
    let s = b.tcp_stats();
    assert!(b.booster.stats().resumes > 300, "{:?}", b.booster.stats());
    assert_eq!(
        (s.retransmissions, s.fast_retransmits, s.timeouts),
        (0, 0, 0),
        "a resume is never taken for a loss: {s:?}"
    );
    assert!(b.booster.held() <= buffer + 1);
}

#[test]
fn a_lost_datagram_goes_again_under_its_id_and_tcp_never_sees_the_loss() {
    let mut b = Bench::new(30, 200_000);
    b.settle();
    let mut confirmed = 0;
    let mut k = 0;
    while confirmed < 100 {
        let (id, p) = b.sent[k].clone();
        k += 1;
        if id % 7 == 3 && b.sent[..k - 1].iter().all(|(i, _)| *i != id) {
            // the subnetwork loses this first copy
            b.booster.lost(id);
        } else {
            b.booster.confirmed(b.now, id);
            confirmed += 1;
            // what was resent is the same packet
            if let Some((_, first)) = b.sent[..k - 1].iter().find(|(i, _)| *i == id) {
                assert_eq!(first, &p);
            }
        }
        b.advance(Dur::from_millis(2));
    }
    let s = b.tcp_stats();
    assert!(b.booster.stats().resent > 10);
    assert_eq!((s.retransmissions, s.timeouts), (0, 0), "{s:?}");
    // Every byte TCP sent reached the subnetwork in order, each exactly once first.
    let mut firsts: Vec<(u64, u64)> = Vec::new();
    for (id, p) in &b.sent {
        if firsts.iter().all(|(i, _)| i != id) {
            firsts.push((*id, p.as_tcp().unwrap().seq));
        }
    }
    assert!(firsts.windows(2).all(|w| w[1].1 > w[0].1));
}

#[test]
fn freed_places_go_to_the_frozen_flow_holding_fewest() {
    let mut booster = Booster::new(BoosterConfig {
        buffer: 4,
        window: None,
        ..BoosterConfig::default()
    });
    let seg = |port: u16, seq: u64| {
        let s = TcpSegment {
            src_port: port,
            dst_port: 5001,
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            len: MSS,
            ..TcpSegment::default()
        };
        Packet::tcp(ME, PEER.addr, s)
    };
    // Flow A takes three places, flow B one: the buffer is full and both are frozen (B
    // when A still held the place promised to it, A when it used it).
    for (port, seq) in [(1000, 1), (1000, 1461), (2000, 1), (1000, 2921)] {
        let p = seg(port, seq);
        booster.take(Time::ZERO, &p.as_tcp().unwrap().clone(), p);
    }
    let windows: Vec<(u16, u64)> = std::iter::from_fn(|| booster.poll_tcp())
        .map(|p| (p.as_tcp().unwrap().dst_port, p.as_tcp().unwrap().window))
        .collect();
    assert_eq!(windows[2..], [(2000, 0), (1000, 0)]);
    let ids: Vec<u64> = std::iter::from_fn(|| booster.poll_subnet())
        .map(|d| d.0)
        .collect();
    // One of A's datagrams is confirmed: the place goes to B (1 held) before A (2 held).
    booster.confirmed(Time::ZERO, ids[0]);
    let resumed: Vec<(u16, u64)> = std::iter::from_fn(|| booster.poll_tcp())
        .map(|p| (p.as_tcp().unwrap().dst_port, p.as_tcp().unwrap().window))
        .collect();
    assert_eq!(resumed, vec![(2000, MSS as u64)]);
}

/// A buffer past 32 bits caps the adaptive window at u32::MAX, not at what the low bits
/// say (2^32 used to wrap round to a window of one datagram).
#[test]
fn a_buffer_past_32_bits_does_not_wrap_the_window_cap() {
    let booster = Booster::new(BoosterConfig {
        buffer: 1 << 32,
        ..BoosterConfig::default()
    });
    assert_eq!(booster.window(), 10, "RFC 6928's initial window");
}

/// The booster keeps one copy of a datagram: what goes to the subnetwork is copied from
/// it, a lost one goes again from it, and a resend still waiting when the datagram is
/// confirmed is not sent.
#[test]
fn datagrams_go_out_from_the_one_copy_held() {
    let mut booster = Booster::new(BoosterConfig {
        buffer: 4,
        window: None,
        ..BoosterConfig::default()
    });
    let s = TcpSegment {
        src_port: 1000,
        dst_port: 5001,
        seq: 1,
        ack: 1,
        flags: TcpFlags::ACK,
        len: MSS,
        ..TcpSegment::default()
    };
    let p = Packet::tcp(ME, PEER.addr, s.clone());
    booster.take(Time::ZERO, &s, p.clone());
    let (id, sent) = booster.poll_subnet().expect("the datagram");
    assert_eq!(sent, p);
    booster.lost(id);
    booster.lost(id);
    assert_eq!(booster.poll_subnet(), Some((id, p.clone())));
    booster.confirmed(Time::ZERO, id);
    assert_eq!(booster.poll_subnet(), None);
    assert_eq!(booster.held(), 0);
}
