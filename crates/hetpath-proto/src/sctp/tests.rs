//! Association tests in explicit time: a client and a server `Association` joined by a
//! fixed one-way delay, with a scripted drop rule, driven through `poll_transmit`,
//! `poll_timeout` and `handle_timeout` alone. Every packet also goes through the wire
//! format and must come back unchanged and fit the MTU.

use super::*;
use crate::time::{Dur, Time};
use std::collections::VecDeque;

const DELAY: Dur = Dur::from_millis(50);
const CLIENT: usize = 0;
const SERVER: usize = 1;
const MTU: u64 = 1282;

fn client_cfg() -> SctpConfig {
    SctpConfig {
        initiate_tag: 0xC11E_0001,
        // TSNs wrap during every transfer.
        initial_tsn: u32::MAX - 3,
        ..SctpConfig::default()
    }
}

fn server_cfg() -> SctpConfig {
    SctpConfig {
        initiate_tag: 0x5E4E_0002,
        initial_tsn: 7000,
        ..SctpConfig::default()
    }
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// One packet an endpoint sent.
struct Sent {
    from: usize,
    at: Time,
    packet: SctpPacket,
    dropped: bool,
}

enum Log {
    Sent(usize),
    /// Packet `index` arrived at `to`; its window state before and after.
    Arrived {
        index: usize,
        to: usize,
        before: CcState,
        after: CcState,
    },
}

type DropRule = Box<dyn FnMut(usize, &Sent) -> bool>;

struct Pair {
    ep: [Association; 2],
    now: Time,
    in_flight: VecDeque<(Time, usize)>,
    sent: Vec<Sent>,
    log: Vec<Log>,
    events: [Vec<(Time, Event)>; 2],
    drop: DropRule,
    close_on_connect: [bool; 2],
}

impl Pair {
    fn new(client: SctpConfig, server: SctpConfig) -> Pair {
        Pair {
            ep: [
                Association::connect(client, 5000, 80),
                Association::accept(server, 80),
            ],
            now: Time::ZERO,
            in_flight: VecDeque::new(),
            sent: Vec::new(),
            log: Vec::new(),
            events: [Vec::new(), Vec::new()],
            drop: Box::new(|_, _| false),
            close_on_connect: [false; 2],
        }
    }

    fn drop_when(&mut self, rule: impl FnMut(usize, &Sent) -> bool + 'static) {
        self.drop = Box::new(rule);
    }

    fn flush(&mut self) {
        for side in [CLIENT, SERVER] {
            let mut n = 0;
            while let Some(p) = self.ep[side].poll_transmit(self.now) {
                n += 1;
                assert!(n < 10_000, "endless transmission");
                let bytes = encode(&p).expect("encodable");
                assert_eq!(decode(&bytes).expect("decodable"), p);
                assert!(p.wire_len() <= self.ep[side].config().packet_budget());
                assert!(p.data().count() <= 2);
                let index = self.sent.len();
                let mut s = Sent {
                    from: side,
                    at: self.now,
                    packet: p,
                    dropped: false,
                };
                s.dropped = (self.drop)(index, &s);
                if !s.dropped {
                    self.in_flight.push_back((self.now + DELAY, index));
                }
                self.sent.push(s);
                self.log.push(Log::Sent(index));
            }
            while let Some(e) = self.ep[side].poll_event() {
                if e == Event::Connected && self.close_on_connect[side] {
                    self.ep[side].close(self.now);
                }
                self.events[side].push((self.now, e));
            }
        }
    }

    /// Runs until nothing is left to do or `until`.
    fn run(&mut self, until: Time) {
        loop {
            self.flush();
            let arrival = self.in_flight.front().map(|&(t, _)| t);
            let timer = [self.ep[0].poll_timeout(), self.ep[1].poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(next) = [arrival, timer].into_iter().flatten().min() else {
                return;
            };
            if next > until {
                return;
            }
            self.now = self.now.max(next);
            if arrival.is_some_and(|t| t <= self.now) {
                // One packet at a time, so that what it provokes is logged right after it.
                let (_, index) = self.in_flight.pop_front().unwrap();
                let to = 1 - self.sent[index].from;
                let before = self.ep[to].cc_state();
                let packet = self.sent[index].packet.clone();
                self.ep[to].handle_packet(self.now, &packet);
                let after = self.ep[to].cc_state();
                self.log.push(Log::Arrived {
                    index,
                    to,
                    before,
                    after,
                });
            } else {
                for ep in &mut self.ep {
                    if ep.poll_timeout().is_some_and(|t| t <= self.now) {
                        ep.handle_timeout(self.now);
                    }
                }
            }
        }
    }

    /// (time, stream, ssn, bytes) of every message `side` delivered.
    fn delivered(&self, side: usize) -> Vec<(Time, u16, u16, u64)> {
        self.events[side]
            .iter()
            .filter_map(|&(t, e)| match e {
                Event::Delivered {
                    stream, ssn, bytes, ..
                } => Some((t, stream, ssn, bytes)),
                _ => None,
            })
            .collect()
    }

    fn has_event(&self, side: usize, e: Event) -> bool {
        self.events[side].iter().any(|&(_, x)| x == e)
    }

    /// Times at which `side` sent a DATA chunk with this TSN.
    fn sends_of(&self, side: usize, tsn: u32) -> Vec<Time> {
        self.sent
            .iter()
            .filter(|s| s.from == side && s.packet.data().any(|d| d.tsn == tsn))
            .map(|s| s.at)
            .collect()
    }

    /// Times at which packets with DATA chunk `tsn` from `side` arrived.
    fn arrivals_of(&self, side: usize, tsn: u32) -> Vec<Time> {
        self.sent
            .iter()
            .filter(|s| !s.dropped && s.from == side && s.packet.data().any(|d| d.tsn == tsn))
            .map(|s| s.at + DELAY)
            .collect()
    }
}

/// Messages per stream, in the order queued: (stream, bytes).
type Plan = Vec<(u16, u64)>;

/// Queues `plan` on `side` and checks, after a run, that the other side delivered each
/// stream's messages completely and in order.
fn check_delivery(pair: &Pair, receiver: usize, plan: &Plan) {
    let got = pair.delivered(receiver);
    let streams: std::collections::BTreeSet<u16> = plan.iter().map(|m| m.0).collect();
    for s in streams {
        let want: Vec<(u16, u64)> = plan
            .iter()
            .filter(|m| m.0 == s)
            .enumerate()
            .map(|(i, m)| (i as u16, m.1))
            .collect();
        let have: Vec<(u16, u64)> = got
            .iter()
            .filter(|m| m.1 == s)
            .map(|m| (m.2, m.3))
            .collect();
        assert_eq!(have, want, "stream {s} at side {receiver}");
    }
    assert_eq!(got.len(), plan.len());
}

fn queue(pair: &mut Pair, side: usize, plan: &Plan) {
    for &(stream, bytes) in plan {
        pair.ep[side].send(stream, bytes).unwrap();
    }
}

#[test]
fn clean_transfer_delivers_every_stream_in_order_and_closes() {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    let up: Plan = (0..12u64)
        .map(|i| ((i % 4) as u16, 500 + 977 * i))
        .collect();
    let down: Plan = vec![(1, 3000), (2, 1), (1, 599), (1, 601)];
    queue(&mut pair, CLIENT, &up);
    queue(&mut pair, SERVER, &down);
    pair.close_on_connect = [true, true];
    pair.run(secs(60.0));
    check_delivery(&pair, SERVER, &up);
    check_delivery(&pair, CLIENT, &down);
    for side in [CLIENT, SERVER] {
        assert_eq!(pair.events[side][0].1, Event::Connected);
        assert!(pair.has_event(side, Event::Closed), "side {side}");
        assert_eq!(pair.ep[side].state(), State::Closed);
        let st = pair.ep[side].stats();
        assert_eq!(st.fast_retransmissions + st.timeout_retransmissions, 0);
        assert_eq!(st.timeouts, 0);
        assert!(st.sacks_sent > 0);
    }
    let up_bytes: u64 = up.iter().map(|m| m.1).sum();
    assert_eq!(pair.ep[SERVER].stats().bytes_delivered, up_bytes);
    // Fragmentation: every chunk but a message's last carries 600 bytes.
    let chunks: u64 = up.iter().map(|m| m.1.div_ceil(600)).sum();
    assert_eq!(pair.ep[CLIENT].stats().data_chunks_sent, chunks);
    // Nothing but the handshake, DATA, SACK and shutdown chunks was needed.
    assert_eq!(pair.sent[0].packet.verification_tag, 0);
    assert!(matches!(pair.sent[0].packet.chunks[0], Chunk::Init(_)));
}

fn small_plan() -> (Plan, Plan) {
    (vec![(0, 3000), (1, 3000), (2, 3000)], vec![(4, 2000)])
}

fn small_transfer(drop_index: Option<usize>) -> Pair {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    let (up, down) = small_plan();
    queue(&mut pair, CLIENT, &up);
    queue(&mut pair, SERVER, &down);
    pair.close_on_connect = [true, true];
    if let Some(i) = drop_index {
        pair.drop_when(move |index, _| index == i);
    }
    pair.run(secs(600.0));
    pair
}

#[test]
fn losing_any_one_packet_still_delivers_everything() {
    let clean = small_transfer(None);
    let n = clean.sent.len();
    assert!(n > 15, "only {n} packets");
    // Every phase is among the packets dropped in turn: handshake, data both ways,
    // SACKs, shutdown.
    let kinds: std::collections::BTreeSet<u8> = clean
        .sent
        .iter()
        .flat_map(|s| s.packet.chunks.iter().map(Chunk::chunk_type))
        .collect();
    for k in [
        kind::INIT,
        kind::INIT_ACK,
        kind::COOKIE_ECHO,
        kind::COOKIE_ACK,
        kind::DATA,
        kind::SACK,
        kind::SHUTDOWN,
        kind::SHUTDOWN_ACK,
        kind::SHUTDOWN_COMPLETE,
    ] {
        assert!(kinds.contains(&k), "no chunk of type {k}");
    }
    assert!(clean
        .sent
        .iter()
        .any(|s| s.from == SERVER && s.packet.data().count() > 0));
    for i in 0..n {
        let pair = small_transfer(Some(i));
        assert!(pair.sent[i].dropped, "packet {i} was not sent");
        let (up, down) = small_plan();
        check_delivery(&pair, SERVER, &up);
        check_delivery(&pair, CLIENT, &down);
        for side in [CLIENT, SERVER] {
            assert!(
                pair.has_event(side, Event::Closed),
                "drop {i}: side {side} ended in {:?}",
                pair.ep[side].state()
            );
        }
    }
}

#[test]
fn a_loss_on_one_stream_does_not_block_another() {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    // Packet 1: stream 3's first message (two chunks). Packet 2: stream 5's message and
    // stream 3's second message.
    let plan: Plan = vec![(3, 1200), (5, 600), (3, 600)];
    queue(&mut pair, CLIENT, &plan);
    let mut done = false;
    pair.drop_when(move |_, s| {
        let hit = !done && s.packet.data().any(|d| d.stream == 3);
        done |= hit;
        hit
    });
    pair.run(secs(30.0));
    check_delivery(&pair, SERVER, &plan);
    let got = pair.delivered(SERVER);
    let t5 = got.iter().find(|m| m.1 == 5).unwrap().0;
    let t3: Vec<Time> = got.iter().filter(|m| m.1 == 3).map(|m| m.0).collect();
    let first_tsn = client_cfg().initial_tsn;
    let arrivals = pair.arrivals_of(CLIENT, first_tsn);
    assert_eq!(pair.sends_of(CLIENT, first_tsn).len(), 2, "sent twice");
    assert_eq!(arrivals.len(), 1, "the retransmission arrives");
    assert!(
        t5 < arrivals[0],
        "stream 5 waited for stream 3's retransmission"
    );
    // Stream 3 is in order: both its messages wait for the retransmission.
    assert_eq!(t3, vec![arrivals[0], arrivals[0]]);
}

/// A long one-way transfer of 1200-byte messages (600-byte chunks) on stream 0.
fn bulk(cfg: SctpConfig, messages: u64) -> Pair {
    let mut pair = Pair::new(cfg, server_cfg());
    for _ in 0..messages {
        pair.ep[CLIENT].send(0, 1200).unwrap();
    }
    pair
}

/// For the SACKs arriving at the client, in order: whether each reports `tsn` missing.
/// Returns how many had when the client first retransmitted `tsn`, and whether that
/// retransmission left at the arrival of the last of them.
fn misses_before_retransmission(pair: &Pair, tsn: u32) -> (u32, bool) {
    let mut reports = 0;
    let mut transmissions = 0;
    let mut last_report_at = None;
    for entry in &pair.log {
        match *entry {
            Log::Arrived { index, to, .. } if to == CLIENT => {
                if let Some(sack) = pair.sent[index].packet.sack() {
                    if sack.cum_tsn_ack == tsn.wrapping_sub(1) && !sack.gaps.is_empty() {
                        reports += 1;
                        last_report_at = Some(pair.sent[index].at + DELAY);
                    }
                }
            }
            Log::Sent(index) => {
                let s = &pair.sent[index];
                if s.from == CLIENT && s.packet.data().any(|d| d.tsn == tsn) {
                    transmissions += 1;
                    if transmissions == 2 {
                        return (reports, last_report_at == Some(s.at));
                    }
                }
            }
            _ => {}
        }
    }
    panic!("{tsn} was never retransmitted");
}

fn fast_retransmit_after(threshold: u32) {
    let cfg = SctpConfig {
        fast_rtx_threshold: threshold,
        ..client_cfg()
    };
    let mut pair = bulk(cfg, 40);
    let lost = cfg.initial_tsn;
    let mut done = false;
    pair.drop_when(move |_, s| {
        let hit = !done && s.packet.data().any(|d| d.tsn == lost);
        done |= hit;
        hit
    });
    pair.run(secs(30.0));
    let (reports, at_once) = misses_before_retransmission(&pair, lost);
    assert_eq!(
        reports, threshold,
        "miss indications before fast retransmit"
    );
    assert!(at_once, "fast retransmit waits for nothing");
    let st = pair.ep[CLIENT].stats();
    assert_eq!(st.timeouts, 0);
    assert_eq!(st.fast_recoveries, 1);
    // The lost packet's two chunks, retransmitted together.
    assert_eq!(st.fast_retransmissions, 2);
    assert_eq!(pair.delivered(SERVER).len(), 40);
}

#[test]
fn fast_retransmit_on_the_third_miss_indication() {
    fast_retransmit_after(3);
}

#[test]
fn fast_retransmit_on_the_fourth_miss_indication_as_rfc_2960() {
    fast_retransmit_after(4);
}

#[test]
fn slow_start_grows_by_at_most_one_mtu_per_sack() {
    let mut pair = bulk(client_cfg(), 150);
    pair.run(secs(60.0));
    assert_eq!(pair.delivered(SERVER).len(), 150);
    let sacks: Vec<(CcState, CcState, u32)> = pair
        .log
        .iter()
        .filter_map(|e| match *e {
            Log::Arrived {
                index,
                to: CLIENT,
                before,
                after,
            } => pair.sent[index]
                .packet
                .sack()
                .map(|s| (before, after, s.cum_tsn_ack)),
            _ => None,
        })
        .collect();
    // Section 7.2.1: cwnd = min(4 * 1282, max(2 * 1282, 4380)) = 4380 and ssthresh is
    // the peer's a_rwnd (Table I: 65536).
    assert_eq!(sacks[0].0.cwnd, 4380);
    assert_eq!(sacks[0].0.ssthresh, 65536);
    // Four packets (4800 bytes >= cwnd) go out; the SACK for the first two acks 2400
    // bytes: cwnd += min(2400, MTU) = 5662. Three more packets (6000 bytes in flight),
    // then the second SACK: 5662 + 1282 = 6944.
    assert_eq!(sacks[0].0.flight_size, 4800);
    assert_eq!(sacks[0].1.cwnd, 4380 + MTU);
    assert_eq!(sacks[1].0.flight_size, 6000);
    assert_eq!(sacks[1].1.cwnd, 4380 + 2 * MTU);
    // Every SACK: + min(bytes acked, MTU) while cwnd <= ssthresh and the window was
    // full, else nothing (no loss here, so no congestion avoidance below 65536).
    let mut cum = client_cfg().initial_tsn.wrapping_sub(1);
    for (before, after, sack_cum) in &sacks {
        let acked = sack_cum.wrapping_sub(cum) as u64 * 600;
        cum = *sack_cum;
        let grow = before.cwnd <= before.ssthresh && acked > 0 && before.flight_size >= before.cwnd;
        let want = before.cwnd + if grow { acked.min(MTU) } else { 0 };
        if before.cwnd <= before.ssthresh {
            assert_eq!(after.cwnd, want, "{before:?} -> {after:?}");
        }
    }
    assert!(pair.ep[CLIENT].cc_state().cwnd > 20 * MTU);
}

#[test]
fn fast_retransmit_halves_cwnd_once_per_window() {
    let mut pair = bulk(client_cfg(), 150);
    // Lose the packet with the 120th chunk, once cwnd has grown past 8 MTU.
    let lost = client_cfg().initial_tsn.wrapping_add(120);
    let mut done = false;
    pair.drop_when(move |_, s| {
        let hit = !done && s.packet.data().any(|d| d.tsn == lost);
        done |= hit;
        hit
    });
    pair.run(secs(60.0));
    assert_eq!(pair.delivered(SERVER).len(), 150);
    let arrivals: Vec<(CcState, CcState)> = pair
        .log
        .iter()
        .filter_map(|e| match *e {
            Log::Arrived {
                to: CLIENT,
                before,
                after,
                ..
            } => Some((before, after)),
            _ => None,
        })
        .collect();
    let (before, after) = arrivals
        .iter()
        .find(|(b, a)| !b.in_fast_recovery && a.in_fast_recovery)
        .copied()
        .expect("entered fast recovery");
    // Section 7.2.3: ssthresh = max(cwnd / 2, 4 * MTU), cwnd = ssthresh. With cwnd
    // above 8 MTU that is half the window.
    assert!(
        before.cwnd > 8 * MTU,
        "cwnd {} too small to halve",
        before.cwnd
    );
    assert_eq!(after.ssthresh, (before.cwnd / 2).max(4 * MTU));
    assert_eq!(after.cwnd, before.cwnd / 2);
    // Fast Recovery: no growth and no second reduction until it ends.
    for (b, a) in &arrivals {
        if b.in_fast_recovery && a.in_fast_recovery {
            assert_eq!(a.cwnd, b.cwnd);
        }
    }
    let st = pair.ep[CLIENT].stats();
    assert_eq!((st.fast_recoveries, st.timeouts), (1, 0));
}

/// Every packet from `cut` on is lost, both ways. Returns the pair and the client's
/// DATA packets sent once the last packet sent before `cut` has arrived: the
/// retransmissions.
fn blackout(cfg: SctpConfig, cut: Time) -> (Pair, Vec<(Time, Vec<u32>)>) {
    let mut pair = bulk(cfg, 2000);
    pair.drop_when(move |_, s| s.at >= cut);
    pair.run(secs(1000.0));
    let rtx = pair
        .sent
        .iter()
        .filter(|s| s.from == CLIENT && s.at >= cut + DELAY && s.packet.data().count() > 0)
        .map(|s| (s.at, s.packet.data().map(|d| d.tsn).collect()))
        .collect();
    (pair, rtx)
}

fn aborted_at(pair: &Pair) -> Time {
    pair.events[CLIENT]
        .iter()
        .find(|e| e.1 == Event::Aborted(AbortReason::MaxRetransmissions))
        .expect("aborted")
        .0
}

#[test]
fn t3_rtx_backs_off_and_aborts_after_max_retrans() {
    let cut = secs(2.0);
    let (pair, rtx) = blackout(client_cfg(), cut);
    // Association.Max.Retrans = 10: ten retransmissions, the eleventh expiry aborts.
    assert_eq!(rtx.len(), 10);
    // RTO is at RTO.Min (1 s: the RTT is 100 ms) when the blackout begins, and doubles
    // on each expiry up to RTO.Max (section 6.3.3 E2).
    assert!(rtx[0].0 > cut + DELAY && rtx[0].0 <= cut + DELAY + Dur::from_secs(1));
    let gaps: Vec<u64> = rtx
        .windows(2)
        .map(|w| w[1].0.since(w[0].0).as_nanos() / 1_000_000_000)
        .collect();
    assert_eq!(gaps, vec![2, 4, 8, 16, 32, 60, 60, 60, 60]);
    for w in rtx.windows(2) {
        assert_eq!(w[1].0.since(w[0].0).as_nanos() % 1_000_000_000, 0);
    }
    assert_eq!(aborted_at(&pair), rtx[9].0 + Dur::from_secs(60));
    // E3: one packet per expiry, holding the earliest outstanding chunks.
    assert!(rtx.iter().all(|r| r.1 == rtx[0].1 && r.1.len() == 2));
    assert_eq!(rtx[0].1[1], rtx[0].1[0].wrapping_add(1));
    let st = pair.ep[CLIENT].stats();
    assert_eq!(st.timeouts, 11);
    assert_eq!(st.timeout_retransmissions, 20);
    assert_eq!(pair.ep[CLIENT].state(), State::Aborted);
    // Section 7.2.3: cwnd = 1 MTU, ssthresh = max(cwnd / 2, 4 MTU) after the expiries.
    let cc = pair.ep[CLIENT].cc_state();
    assert_eq!((cc.cwnd, cc.ssthresh), (MTU, 4 * MTU));
    assert_eq!(pair.ep[CLIENT].poll_timeout(), None);
}

#[test]
fn abort_after_a_configured_max_retrans() {
    let cut = secs(2.0);
    let cfg = SctpConfig {
        max_retrans: 3,
        ..client_cfg()
    };
    let (pair, rtx) = blackout(cfg, cut);
    assert_eq!(rtx.len(), 3);
    assert_eq!(aborted_at(&pair), rtx[2].0 + Dur::from_secs(8));
    assert_eq!(pair.ep[CLIENT].stats().timeouts, 4);
}

#[test]
fn init_is_retried_with_backoff_then_given_up() {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    pair.drop_when(|_, s| s.from == CLIENT);
    pair.run(secs(1000.0));
    let inits: Vec<u64> = pair.sent.iter().map(|s| s.at.0 / 1_000_000_000).collect();
    // RTO.Initial 3 s, doubled up to RTO.Max; 1 + Max.Init.Retransmits (8) INITs.
    assert_eq!(inits, vec![0, 3, 9, 21, 45, 93, 153, 213, 273]);
    assert_eq!(
        pair.events[CLIENT],
        vec![(secs(333.0), Event::Aborted(AbortReason::InitFailed))]
    );
}

#[test]
fn packets_with_a_wrong_tag_or_port_are_ignored() {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    pair.ep[CLIENT].send(0, 100).unwrap();
    pair.run(secs(10.0));
    assert_eq!(pair.delivered(SERVER).len(), 1);
    let mut data = pair
        .sent
        .iter()
        .find(|s| s.packet.data().count() > 0)
        .unwrap()
        .packet
        .clone();
    for c in &mut data.chunks {
        if let Chunk::Data(d) = c {
            d.tsn = d.tsn.wrapping_add(1);
        }
    }
    let mut wrong_tag = data.clone();
    wrong_tag.verification_tag ^= 1;
    let mut wrong_port = data.clone();
    wrong_port.src_port += 1;
    let before = pair.ep[SERVER].stats().packets_received;
    pair.ep[SERVER].handle_packet(pair.now, &wrong_tag);
    pair.ep[SERVER].handle_packet(pair.now, &wrong_port);
    assert_eq!(pair.ep[SERVER].stats().packets_received, before);
    pair.ep[SERVER].handle_packet(pair.now, &data);
    assert_eq!(pair.ep[SERVER].stats().packets_received, before + 1);
}

/// A message far larger than memory is cut into chunks as the window lets them go
/// (section 6.9), not all at once when queued: its chunks get consecutive TSNs from the
/// first, only the first has the B bit, and a message queued behind it waits its turn.
#[test]
fn a_huge_message_is_cut_as_it_is_sent() {
    let mut pair = Pair::new(client_cfg(), server_cfg());
    queue(&mut pair, CLIENT, &vec![(0, 1 << 60), (1, 100)]);
    pair.run(secs(5.0));
    let data: Vec<DataChunk> = pair
        .sent
        .iter()
        .filter(|s| s.from == CLIENT)
        .flat_map(|s| s.packet.data().copied().collect::<Vec<_>>())
        .collect();
    // Each chunk at its first transmission, in order.
    let mut seen = std::collections::HashSet::new();
    let firsts: Vec<&DataChunk> = data.iter().filter(|d| seen.insert(d.tsn)).collect();
    let first = client_cfg().initial_tsn;
    for (k, d) in firsts.iter().enumerate() {
        assert_eq!(d.tsn, first.wrapping_add(k as u32));
        assert_eq!((d.stream, d.ssn, d.begin, d.end), (0, 0, k == 0, false));
    }
    let sent = pair.ep[CLIENT].stats().data_bytes_sent;
    let payload = u64::from(pair.ep[CLIENT].config().chunk_payload());
    assert!(sent > 1_000_000, "{sent} bytes sent");
    assert_eq!(firsts.len() as u64 * payload, sent);
    assert!(!pair.ep[CLIENT].all_acked());
    assert!(!pair.has_event(CLIENT, Event::Closed));
}
