//! `EswLink` driven by a minimal event loop: in-order, lossless delivery with ARQ under
//! any shadowing, the cell-level capacity of a clean link, losses accounted for.

use super::*;
use crate::channel::{ChannelSpec, GilbertElliottSpec, InitialState, NoLoss};
use crate::rng;
use crate::units::Duration;
use hetpath_proto::packet::Body;
use hetpath_proto::{Addr, Packet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Slot,
    Arrival,
    Offer,
}

/// A loop over one link: packets offered at given times, delivered ones recorded.
struct Driver {
    link: EswLink,
    q: BinaryHeap<Reverse<(Time, u64, Kind, usize)>>,
    seq: u64,
    /// Packets to offer per side, in order, with their times.
    offers: [VecDeque<(Time, Frame)>; 2],
    delivered: [Vec<(Time, u64)>; 2],
    lost: [Vec<u64>; 2],
    events: u64,
    now: Time,
}

impl Driver {
    fn new(link: EswLink) -> Driver {
        Driver {
            link,
            q: BinaryHeap::new(),
            seq: 0,
            offers: [VecDeque::new(), VecDeque::new()],
            delivered: [Vec::new(), Vec::new()],
            lost: [Vec::new(), Vec::new()],
            events: 0,
            now: Time::ZERO,
        }
    }

    fn push(&mut self, t: Time, k: Kind, side: usize) {
        self.seq += 1;
        self.q.push(Reverse((t, self.seq, k, side)));
    }

    /// Offers `n` packets of `len` IP bytes on `side`, one every `gap` from `start`.
    fn load(&mut self, side: usize, n: u64, len: u32, start: Time, gap: Dur) {
        for i in 0..n {
            let t = start + Dur(gap.0 * i);
            let body = Body::Raw {
                proto: 17,
                len: len - 20,
            };
            let f = Frame {
                uid: side as u64 * 1_000_000 + i,
                packet: Packet::new(Addr(1), Addr(2), body),
            };
            self.offers[side].push_back((t, f));
            self.push(t, Kind::Offer, side);
        }
    }

    fn apply(&mut self, out: Outcome) {
        for (side, t) in out
            .slot
            .iter()
            .enumerate()
            .filter_map(|(s, t)| Some((s, (*t)?)))
        {
            self.push(t, Kind::Slot, side);
        }
        if let Some((side, t)) = out.arrival {
            self.push(t, Kind::Arrival, side);
        }
        for (side, f) in out.lost {
            self.lost[side].push(f.uid);
        }
        for (side, f) in out.delivered {
            self.delivered[side].push((self.now, f.uid));
        }
    }

    fn run(&mut self, until: Time) {
        while let Some(Reverse((t, _, k, side))) = self.q.pop() {
            if t > until {
                break;
            }
            self.events += 1;
            self.now = t;
            let out = match k {
                Kind::Slot => {
                    let mut out = Outcome::default();
                    self.link.on_slot(t, side, &mut out);
                    out
                }
                Kind::Arrival => {
                    let mut out = Outcome::default();
                    self.link.on_arrival(t, side, &mut out);
                    out
                }
                Kind::Offer => {
                    let (_, f) = self.offers[side].pop_front().expect("an offer");
                    match self.link.offer(t, side, f) {
                        Ok(out) => out,
                        Err(f) => {
                            self.lost[side].push(f.uid);
                            Outcome::default()
                        }
                    }
                }
            };
            self.apply(out);
        }
    }
}

const LEN: u32 = 1264; // a 1224-byte TCP segment with IP and TCP headers: 24 cells

fn params(arq: bool) -> EswParams {
    EswParams {
        cfg: EswConfig {
            arq,
            ..EswConfig::default()
        },
        frame: Dur::from_micros(26_500),
        units: [19, 19],
        delay: [Dur::from_millis(265); 2],
        backlog: 100_000,
        shared_channel: true,
    }
}

fn clean(p: EswParams) -> EswLink {
    EswLink::new(p, vec![Box::new(NoLoss), Box::new(NoLoss)])
}

fn shadowed(p: EswParams, t_good: f64, t_bad: f64, seed: u64) -> EswLink {
    let ge = |s: &str| {
        ChannelSpec::GilbertElliott(GilbertElliottSpec {
            t_good: Duration(Dur::from_secs_f64(t_good)),
            t_bad: Duration(Dur::from_secs_f64(t_bad)),
            loss_good: 0.0,
            loss_bad: 1.0,
            initial: InitialState::Stationary,
        })
        .build(rng::stream(seed, s))
    };
    EswLink::new(p, vec![ge("ab"), ge("ba")])
}

fn uids(d: &[(Time, u64)]) -> Vec<u64> {
    d.iter().map(|e| e.1).collect()
}

#[test]
fn slots_follow_the_tdma_grid() {
    let link = clean(params(true));
    // 19 frame units per 26.5 ms frame: slot 19 starts the second frame.
    assert_eq!(link.slot_start(0, 19), Time(26_500_000));
    assert_eq!(link.slot_start(0, 1), Time(26_500_000 / 19));
    for t in [
        0u64, 1, 1_394_736, 1_394_737, 26_499_999, 26_500_000, 26_500_001,
    ] {
        let (k, at) = link.slot_at_or_after(0, Time(t));
        assert!(at >= Time(t), "{t}");
        assert!(k == 0 || link.slot_start(0, k - 1) < Time(t), "{t}");
    }
    // 19 cells of 60 bytes per 26.5 ms: 344.15 kbit/s, the Table I bit rate.
    assert_eq!(link.cell_rate_bps(0), 344_150);
}

#[test]
fn a_clean_link_carries_its_cell_capacity_less_headers_and_padding() {
    let mut d = Driver::new(clean(params(true)));
    let n = 300;
    d.load(0, n, LEN, Time::ZERO, Dur::ZERO);
    d.run(Time(600 * 1_000_000_000));
    assert_eq!(uids(&d.delivered[0]), (0..n).collect::<Vec<_>>());
    assert!(d.lost[0].is_empty());
    let first = d.delivered[0][0].0;
    let last = d.delivered[0][n as usize - 1].0;
    let goodput = (n - 1) as f64 * LEN as f64 * 8.0 / last.since(first).as_secs_f64();
    // 60-byte cells, 53 bytes of payload each; the datagram's last cell is padded.
    let cells = LEN.div_ceil(53) as f64;
    let capacity = 19.0 * 60.0 * 8.0 / 0.0265 * (LEN as f64 / (cells * 60.0));
    assert!(
        (goodput / capacity - 1.0).abs() < 0.01,
        "goodput {goodput:.0} bit/s against {capacity:.0}"
    );
    let s = d.link.stats(0);
    assert_eq!(s.cells_sent, n * cells as u64);
    assert_eq!(s.cells_retransmitted, 0);
    assert_eq!(s.arq_delay, Dur::ZERO);
    // ESW-ACKs travel the other way.
    assert_eq!(s.esw_acks, 0);
    assert!(d.link.stats(1).esw_acks > 0);
}

#[test]
fn arq_delivers_every_packet_in_order_under_any_shadowing() {
    // A fade longer than the data-link timeout loses packets by design (next test);
    // here the timeout is out of reach, so nothing may be lost.
    let mut p = params(true);
    p.cfg.dl_timeout = Dur::from_secs(100_000);
    for (t_good, t_bad) in [(0.5, 0.5), (0.5, 8.5), (8.5, 0.5), (2.5, 4.5), (8.5, 8.5)] {
        let mut cells_lost = 0;
        for seed in 1..=3 {
            let mut d = Driver::new(shadowed(p, t_good, t_bad, seed));
            let n = 300;
            // Both ways at once, so ESW-ACKs share frame units with data cells; over
            // 15 s, a few shadowing periods.
            d.load(0, n, LEN, Time::ZERO, Dur::from_millis(50));
            d.load(1, n / 3, 300, Time::ZERO, Dur::from_millis(150));
            d.run(Time(100_000 * 1_000_000_000));
            let case = format!("T_good {t_good}, T_bad {t_bad}, seed {seed}");
            assert_eq!(uids(&d.delivered[0]), (0..n).collect::<Vec<_>>(), "{case}");
            let back: Vec<u64> = (0..n / 3).map(|i| 1_000_000 + i).collect();
            assert_eq!(uids(&d.delivered[1]), back, "{case}");
            assert!(d.lost[0].is_empty() && d.lost[1].is_empty(), "{case}");
            cells_lost += d.link.stats(0).cells_lost;
        }
        assert!(
            cells_lost > 0,
            "T_good {t_good}, T_bad {t_bad}: the channel lost nothing"
        );
    }
}

#[test]
fn a_fade_longer_than_the_data_link_timeout_loses_packets_and_says_so() {
    let mut p = params(true);
    p.cfg.dl_timeout = Dur::from_secs(2);
    let mut d = Driver::new(shadowed(p, 3.0, 6.0, 7));
    let n = 200;
    d.load(0, n, LEN, Time::ZERO, Dur::from_millis(100));
    d.run(Time(10_000 * 1_000_000_000));
    let delivered = uids(&d.delivered[0]);
    assert!(delivered.windows(2).all(|w| w[0] < w[1]), "out of order");
    assert!(!d.lost[0].is_empty(), "no fade outlasted 2 s");
    // The receiver learns of an abandoned SDU from the next cell, so the last ones may
    // stay undecided when nothing follows them: the link still counts them as held.
    let mut all: Vec<u64> = delivered.iter().chain(&d.lost[0]).copied().collect();
    all.sort();
    let held = d.link.held(0) as u64;
    assert_eq!(
        all,
        (0..n - held).collect::<Vec<_>>(),
        "every packet delivered or lost once"
    );
    assert_eq!(d.link.stats(0).packets_lost, d.lost[0].len() as u64);
}

#[test]
fn without_arq_lost_cells_lose_their_packets_and_nothing_is_sent_twice() {
    let mut d = Driver::new(shadowed(params(false), 1.0, 1.0, 3));
    let n = 400;
    d.load(0, n, LEN, Time::ZERO, Dur::from_millis(80));
    d.run(Time(1_000 * 1_000_000_000));
    let delivered = uids(&d.delivered[0]);
    assert!(delivered.windows(2).all(|w| w[0] < w[1]), "out of order");
    assert!(!d.lost[0].is_empty() && !delivered.is_empty());
    let mut all: Vec<u64> = delivered.iter().chain(&d.lost[0]).copied().collect();
    all.sort();
    assert_eq!(all, (0..n).collect::<Vec<_>>());
    let s = d.link.stats(0);
    assert_eq!(s.cells_sent, n * 24);
    assert_eq!(s.cells_retransmitted, 0);
    assert_eq!(d.link.stats(1).esw_acks, 0);
}

#[test]
fn an_idle_link_schedules_nothing() {
    let mut d = Driver::new(clean(params(true)));
    d.load(0, 1, LEN, Time::ZERO, Dur::ZERO);
    d.run(Time(3_600 * 1_000_000_000));
    assert_eq!(d.delivered[0].len(), 1);
    // 24 data slots, their arrivals, the ESW-ACK's slot and arrival, the offer, and a
    // few slots for timers that found nothing to send: not an hour of frame units.
    assert!(d.events < 80, "{} events", d.events);
    assert!(d.q.is_empty());
}

#[test]
fn a_full_backlog_drops_and_counts() {
    let mut p = params(true);
    p.cfg.tx_window_bytes = 2 * LEN as u64;
    p.backlog = 3;
    let mut d = Driver::new(clean(p));
    d.load(0, 10, LEN, Time::ZERO, Dur::ZERO);
    d.run(Time(100 * 1_000_000_000));
    // Two in the window, three waiting: the other five are refused.
    assert_eq!(uids(&d.delivered[0]), vec![0, 1, 2, 3, 4]);
    assert_eq!(d.lost[0], vec![5, 6, 7, 8, 9]);
}
