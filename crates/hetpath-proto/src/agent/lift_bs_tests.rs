//! Scripted tests of BS-LIFT: the gateway sees setup, downlink ESP data and uplink
//! (FrACK, ACK) pairs, and the test plays the fixed host, opening what is forwarded with
//! the uplink SA (which the gateway does not have).

use super::lift_bs::{LiftBs, LiftBsConfig};
use crate::esp::SecurityAssociation;
use crate::lift::LiftHeader;
use crate::machine::{At, Machine};
use crate::packet::{proto, Addr, Body, Packet, TcpFlags, TcpSegment};
use crate::testing::NoNode;
use crate::time::{Dur, Time};

const MH: Addr = Addr(1);
const FH: Addr = Addr(2);
const DOWN: u32 = 100;
const UP: u32 = 200;
const FLOW: u16 = 7;

struct Gw {
    bs: LiftBs,
    now: Time,
    up_seq: u32,
}

/// What the fixed host received: (ESP sequence number, TCP window).
type Seen = Vec<(u32, u64)>;

impl Gw {
    fn new() -> Gw {
        let mut g = Gw {
            bs: LiftBs::new(LiftBsConfig::default()),
            now: Time::ZERO,
            up_seq: 0,
        };
        let setup = LiftHeader::Setup {
            flow: FLOW,
            spi: DOWN,
            protocol: proto::ESP,
        };
        g.show(Packet::new(MH, FH, Body::Lift(setup, None)));
        g
    }

    fn show(&mut self, mut p: Packet) -> Seen {
        let _ = self
            .bs
            .handle_packet(self.now, At::Arrival, &mut p, &NoNode);
        self.drain()
    }

    fn drain(&mut self) -> Seen {
        let mut seen = vec![];
        while let Some(t) = self.bs.poll_transmit(self.now, &NoNode) {
            let Body::Esp(esp) = t.packet.body else {
                panic!("the fixed host must get plain ESP: {:?}", t.packet);
            };
            assert_eq!(esp.spi, UP, "forwarded unchanged");
            let seq = esp.seq;
            let seg = SecurityAssociation::new(UP)
                .open(esp)
                .expect("still sealed under the uplink SA");
            seen.push((seq, seg.window));
        }
        seen
    }

    /// Downlink data with ESP sequence number `seq` passes the gateway.
    fn data(&mut self, seq: u32) {
        let seg = TcpSegment {
            len: 1000,
            ..Default::default()
        };
        let p = Packet::new(
            FH,
            MH,
            Body::Esp(SecurityAssociation::new(DOWN).seal(seq, seg)),
        );
        assert!(self.show(p).is_empty());
    }

    /// The MH's FrACK then ACK, acknowledging data up to ESP sequence number `ipsec_ack`.
    fn pair(&mut self, ipsec_ack: u32, forward: bool, store: bool) -> Seen {
        let mut seen = vec![];
        for window in [0, 65_535] {
            self.up_seq += 1;
            let seg = TcpSegment {
                flags: TcpFlags::ACK,
                window,
                ..Default::default()
            };
            let esp = SecurityAssociation::new(UP).seal(self.up_seq, seg);
            let h = if window == 0 {
                LiftHeader::Frack {
                    flow: FLOW,
                    next_header: proto::ESP,
                }
            } else {
                LiftHeader::Ack {
                    flow: FLOW,
                    delete: false,
                    forward,
                    store,
                    ipsec_ack,
                    next_header: proto::ESP,
                }
            };
            seen.extend(self.show(Packet::new(MH, FH, Body::Lift(h, Some(esp)))));
        }
        seen
    }

    fn advance(&mut self, d: Dur) -> Seen {
        self.now += d;
        if self.bs.poll_timeout().is_some_and(|t| t <= self.now) {
            self.bs.handle_timeout(self.now, &NoNode);
        }
        self.drain()
    }

    fn counter(&self, name: &str) -> u64 {
        let mut c = vec![];
        self.bs.counters(&mut c);
        c.into_iter().find(|(n, _)| *n == name).expect(name).1
    }
}

const OPEN: u64 = 65_535;

#[test]
fn acks_go_at_once_until_new_data_then_one_pair_behind() {
    let mut g = Gw::new();
    g.data(1);
    g.data(2);
    g.data(3);
    // Transitory: the first ACK of new data goes at once and starts the timer.
    assert_eq!(g.pair(1, false, false), [(2, OPEN)]);
    g.advance(Dur::from_millis(100));
    // Held: nothing goes until the next pair.
    assert_eq!(g.pair(2, false, false), []);
    g.advance(Dur::from_millis(100));
    assert_eq!(
        g.pair(3, false, false),
        [(4, OPEN)],
        "the previous ACK, not the FrACK"
    );
    assert_eq!(g.counter("fracks_forwarded"), 0);
}

#[test]
fn the_sender_is_frozen_only_when_the_timer_expires_with_data_outstanding() {
    let mut g = Gw::new();
    for s in 1..=5 {
        g.data(s);
    }
    g.pair(1, false, false);
    g.advance(Dur::from_millis(100));
    g.pair(3, false, false); // held; data 4 and 5 outstanding
    assert_eq!(
        g.advance(Dur::from_millis(870)),
        [],
        "0.97 s: timer still running"
    );
    // 0.98 s after the ACK that started it: the held pair's FrACK freezes the sender.
    assert_eq!(g.advance(Dur::from_millis(10)), [(3, 0)]);
    assert_eq!(g.counter("freezes"), 1);
    // Late ACKs arrive: the kept ACK reopens the window, the new pair is held.
    g.advance(Dur::from_secs(2));
    assert_eq!(g.pair(5, false, false), [(4, OPEN)]);
    assert_eq!(g.counter("unfreezes"), 1);
}

#[test]
fn no_frack_is_forwarded_when_everything_sent_is_acknowledged() {
    let mut g = Gw::new();
    g.data(1);
    g.data(2);
    g.pair(1, false, false);
    g.advance(Dur::from_millis(100));
    g.pair(2, false, false); // held, and it covers everything forwarded
    assert_eq!(
        g.advance(Dur::from_secs(1)),
        [(4, OPEN)],
        "the held ACK, not its FrACK"
    );
    assert_eq!(g.counter("fracks_forwarded"), 0);
}

#[test]
fn an_out_of_order_downlink_packet_turns_freezing_off_until_acknowledged() {
    let mut g = Gw::new();
    g.data(1);
    g.data(3);
    g.data(2); // out of order: freezing off until an ACK reaches 3
    assert_eq!(g.pair(1, false, false), [(2, OPEN)]);
    assert_eq!(g.pair(2, false, false), [(4, OPEN)], "not held");
    assert_eq!(g.advance(Dur::from_secs(2)), []);
    g.data(4);
    // Acknowledging 3 ends the disorder; freezing restarts with a transitory phase.
    assert_eq!(g.pair(3, false, false), [(6, OPEN)]);
    assert_eq!(g.pair(3, false, true), [], "a duplicate with S is held");
    assert_eq!(g.counter("fracks_forwarded"), 0);
}

#[test]
fn forward_flag_releases_the_held_ack_and_itself() {
    let mut g = Gw::new();
    g.data(1);
    g.data(2);
    g.data(3);
    g.pair(1, false, false);
    g.pair(2, false, false);
    assert_eq!(g.pair(3, true, false), [(4, OPEN), (6, OPEN)]);
}

#[test]
fn zero_windows_reach_the_fixed_host_only_at_an_expiry_with_data_outstanding() {
    // A random script (a fixed LCG: no RNG crate here) of downlink data, ACK pairs and
    // time steps. Checked after every step: a zero window only ever leaves from a timer
    // expiry, and only when the newest ACK seen is below the newest data forwarded.
    let mut g = Gw::new();
    let mut x: u64 = 12345;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let (mut highest, mut acked) = (0u32, 0u32);
    for _ in 0..5_000 {
        match next(4) {
            0 => {
                highest += 1;
                g.data(highest);
            }
            1 => {
                acked = (acked + next(3) as u32).min(highest);
                let seen = g.pair(acked, next(10) == 0, next(5) == 0);
                assert!(seen.iter().all(|&(_, w)| w > 0), "{seen:?}");
            }
            _ => {
                let seen = g.advance(Dur::from_millis(50 * next(30)));
                if seen.iter().any(|&(_, w)| w == 0) {
                    assert!(acked < highest, "froze with everything acknowledged");
                }
            }
        }
    }
    assert!(
        g.counter("freezes") > 0,
        "the script never exercised a freeze"
    );
}
