//! Scripted runs of a sender and a receiver over a delay line, and a property test over
//! random loss patterns.

use std::collections::VecDeque;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::time::{earliest, Dur, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sd,
    Poll,
    Stat,
    Ustat,
}

fn kind<T>(pdu: &Pdu<T>) -> Kind {
    match pdu {
        Pdu::Sd { .. } => Kind::Sd,
        Pdu::Poll { .. } => Kind::Poll,
        Pdu::Stat { .. } => Kind::Stat,
        Pdu::Ustat { .. } => Kind::Ustat,
    }
}

/// Decides whether the n-th PDU of a kind (from 0, retransmissions counted) is lost.
type Loss = Box<dyn FnMut(Kind, u64) -> bool>;

/// A sender and a receiver joined by a FIFO line with a fixed delay each way. The
/// application pushes payloads `0, 1, ...` whenever the window has room.
struct Line {
    s: Sender<u64>,
    r: Receiver<u64>,
    cfg: StpConfig,
    delay: Dur,
    fwd: VecDeque<(Time, Pdu<u64>)>,
    rev: VecDeque<(Time, Pdu<u64>)>,
    now: Time,
    lose: Loss,
    counts: [u64; 4],
    to_push: VecDeque<u32>,
    pushed: u64,
    /// Every PDU the sender put on the wire, lost or not.
    sent: Vec<(Time, Pdu<u64>)>,
    /// Arrival time of each SD's first transmission (or when it would have arrived).
    first_arrival: Vec<Time>,
    delivered: Vec<(Time, u64)>,
}

impl Line {
    fn new(cfg: StpConfig, delay: Dur, sizes: &[u32], lose: Loss) -> Line {
        Line {
            s: Sender::new(cfg),
            r: Receiver::new(),
            cfg,
            delay,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            now: Time::ZERO,
            lose,
            counts: [0; 4],
            to_push: sizes.iter().copied().collect(),
            pushed: 0,
            sent: Vec::new(),
            first_arrival: Vec::new(),
            delivered: Vec::new(),
        }
    }

    fn lost(&mut self, pdu: &Pdu<u64>) -> bool {
        let k = kind(pdu);
        let n = &mut self.counts[k as usize];
        *n += 1;
        (self.lose)(k, *n - 1)
    }

    /// Runs until nothing is left to do; false if `steps` events were not enough.
    fn run(&mut self, steps: usize) -> bool {
        for _ in 0..steps {
            while self.s.can_push() {
                let Some(len) = self.to_push.pop_front() else {
                    break;
                };
                assert_eq!(self.s.push(self.pushed, len), self.pushed);
                self.pushed += 1;
            }
            while let Some(pdu) = self.s.poll_transmit(self.now) {
                assert!(self.s.in_flight() as u64 <= self.cfg.window);
                if let Pdu::Sd { seq, .. } = pdu {
                    if seq == self.first_arrival.len() as u64 {
                        self.first_arrival.push(self.now + self.delay);
                    }
                }
                self.sent.push((self.now, pdu.clone()));
                if !self.lost(&pdu) {
                    self.fwd.push_back((self.now + self.delay, pdu));
                }
            }
            while let Some(pdu) = self.r.poll_transmit(self.now) {
                if !self.lost(&pdu) {
                    self.rev.push_back((self.now + self.delay, pdu));
                }
            }
            while let Some(x) = self.r.poll_deliver() {
                self.delivered.push((self.now, x));
            }
            let heads = earliest(self.fwd.front().map(|f| f.0), self.rev.front().map(|r| r.0));
            let Some(next) = earliest(heads, self.s.poll_timeout()) else {
                return self.to_push.is_empty();
            };
            assert!(next > self.now, "stuck at {:?}", self.now);
            self.now = next;
            while self.fwd.front().is_some_and(|f| f.0 <= next) {
                let (_, pdu) = self.fwd.pop_front().unwrap();
                self.r.handle_pdu(next, pdu);
            }
            while self.rev.front().is_some_and(|r| r.0 <= next) {
                let (_, pdu) = self.rev.pop_front().unwrap();
                self.s.handle_pdu(next, pdu);
            }
            self.s.handle_timeout(next);
        }
        false
    }

    fn delivered_ids(&self) -> Vec<u64> {
        self.delivered.iter().map(|d| d.1).collect()
    }

    /// Wire bytes the pacer counts for each sent PDU, with its send time.
    fn sends(&self) -> Vec<(Time, u64)> {
        let over = self.cfg.overhead as u64;
        self.sent
            .iter()
            .map(|(t, p)| (*t, p.wire_len() as u64 + over))
            .collect()
    }
}

/// Loses the first transmission of SD `seq` only.
fn lose_sd(seq: u64) -> Loss {
    Box::new(move |k, n| k == Kind::Sd && n == seq)
}

const ONE_WAY: Dur = Dur::from_millis(300);

fn at(rate_bps: u64) -> StpConfig {
    StpConfig {
        rate_bps,
        ..StpConfig::default()
    }
}

fn upto(n: u64) -> Vec<u64> {
    (0..n).collect()
}

#[test]
fn a_single_lost_sd_is_recovered_in_one_round() {
    for tail_poll in [true, false] {
        let cfg = StpConfig {
            tail_poll,
            ..at(10_000_000)
        };
        for lost in [0, 1, 10, 18, 19] {
            let mut line = Line::new(cfg, ONE_WAY, &[1000; 20], lose_sd(lost));
            assert!(line.run(10_000));
            assert_eq!(line.delivered_ids(), upto(20), "lost {lost}");
            let st = line.s.stats();
            assert_eq!(
                st.retransmissions, 1,
                "lost {lost}, tail {tail_poll}: {st:?}"
            );
            assert_eq!((st.sds_sent, st.released, line.s.in_flight()), (21, 20, 0));
            assert_eq!(line.r.stats().duplicates, 0);
            // One round: a USTAT (on the next SD) or a STAT comes back and the copy goes
            // out. Only a lost last SD without the tail POLL waits for Timer_POLL.
            let i = lost as usize;
            let late = line.delivered[i].0.since(line.first_arrival[i]);
            let rtt = ONE_WAY + ONE_WAY;
            let wait = if tail_poll || lost < 19 {
                Dur::from_millis(20)
            } else {
                cfg.poll_interval
            };
            assert!(
                late <= rtt + wait,
                "lost {lost}, tail {tail_poll}: {late:?}"
            );
            assert!(
                late >= rtt,
                "recovered before a report could come: {late:?}"
            );
        }
    }
}

#[test]
fn lost_copies_and_lost_reports_are_caught_by_the_next_poll() {
    // Transmissions 0..20 are the burst, 20 the copy of SD 7; or SD 3 is lost together
    // with the USTAT and the first STAT that report it.
    let copy: Loss = Box::new(|k, n| k == Kind::Sd && (n == 7 || n == 20));
    let reports: Loss =
        Box::new(|k, n| matches!((k, n), (Kind::Sd, 3) | (Kind::Ustat, 0) | (Kind::Stat, 0)));
    let rounds = ONE_WAY.saturating_mul(4) + Dur::from_millis(100);
    for (lose, lost, copies) in [(copy, 7, 2), (reports, 3, 1)] {
        let cfg = at(10_000_000);
        let mut line = Line::new(cfg, ONE_WAY, &[1000; 20], lose);
        assert!(line.run(10_000));
        assert_eq!(line.delivered_ids(), upto(20));
        let st = line.s.stats();
        assert_eq!((st.retransmissions, st.released), (copies, 20));
        let late = line.delivered[lost].0.since(line.first_arrival[lost]);
        assert!(late <= rounds + cfg.poll_interval, "{late:?}");
    }
}

/// Pacer bytes of sends `i..j` never exceed what `rate` carries from send i to send j.
fn assert_paced(sends: &[(Time, u64)], rate: u64) {
    let mut bits = vec![0u128];
    for &(_, b) in sends {
        bits.push(bits.last().unwrap() + b as u128 * 8);
    }
    for i in 0..sends.len() {
        for j in i + 1..sends.len() {
            let span = (sends[j].0 .0 - sends[i].0 .0) as u128;
            assert!(
                span * rate as u128 >= (bits[j] - bits[i]) * 1_000_000_000,
                "sends {i}..{j}"
            );
        }
    }
}

#[test]
fn the_pacer_keeps_to_the_rate_and_fills_it() {
    let rate = 2_000_000;
    let sizes: Vec<u32> = (0..400u32).map(|i| (i * 7919) % 1500 + 1).collect();
    let lose: Loss = Box::new(|k, n| (k == Kind::Sd && n % 37 == 5) || (k == Kind::Poll && n == 1));
    let cfg = at(rate);
    let mut line = Line::new(cfg, ONE_WAY, &sizes, lose);
    assert!(line.run(100_000));
    assert_eq!(line.delivered_ids(), upto(400));
    let sends = line.sends();
    assert!(line.s.stats().polls > 2 && line.s.stats().retransmissions > 5);
    assert_paced(&sends, rate);
    // With a backlog the sends are back to back: the link's whole capacity.
    let busy = sends
        .windows(2)
        .take_while(|w| w[1].0 < Time::ZERO + ONE_WAY.saturating_mul(2));
    for w in busy {
        assert_eq!(w[1].0, w[0].0 + Dur::serialization(w[0].1, rate));
    }
}

#[test]
fn the_window_holds_the_sender() {
    let cfg = StpConfig {
        window: 8,
        ..StpConfig::default()
    };
    let mut line = Line::new(cfg, ONE_WAY, &[500; 30], lose_sd(2));
    assert!(line.run(10_000));
    assert_eq!(line.delivered_ids(), upto(30));
    // Each window of 8 needs a STAT to open the next: at least three round trips.
    assert!(line.delivered[29].0 > Time::ZERO + ONE_WAY.saturating_mul(6));
}

#[test]
fn stat_lists_split_at_max_stat() {
    let mut r: Receiver<u64> = Receiver::new();
    let sd = |seq| Pdu::Sd {
        seq,
        payload: seq,
        len: 10,
    };
    for seq in (1..80).step_by(2).chain([1]) {
        r.handle_pdu(Time::ZERO, sd(seq));
    }
    r.handle_pdu(
        Time::ZERO,
        Pdu::Poll {
            poll_seq: 4,
            next: 82,
        },
    );
    let out: Vec<_> = std::iter::from_fn(|| r.poll_transmit(Time::ZERO)).collect();
    // A USTAT per odd SD, then the 41 gaps (the last up to the POLL's N(S)) in two STATs.
    let gaps: Vec<_> = (0..40)
        .map(|k| (2 * k, 2 * k + 1))
        .chain([(80, 82)])
        .collect();
    let stat = |g: &[(u64, u64)]| Pdu::Stat {
        poll_seq: 4,
        cum: 0,
        gaps: g.to_vec(),
    };
    let ustats = (0..40).map(|k| Pdu::Ustat {
        cum: 0,
        gap: (2 * k, 2 * k + 1),
    });
    let (head, tail) = gaps.split_at(MAX_STAT_GAPS);
    let want: Vec<_> = ustats.chain([stat(head), stat(tail)]).collect();
    assert_eq!(out, want);
    let st = ReceiverStats {
        stats_sent: 2,
        ustats_sent: 40,
        duplicates: 1,
        delivered: 0,
    };
    assert_eq!(r.stats(), st);
}

#[test]
fn wire_lengths_are_sscop_sizes() {
    let sd = |len| {
        Pdu::Sd {
            seq: 0,
            payload: (),
            len,
        }
        .wire_len()
    };
    assert_eq!((sd(0), sd(1000), sd(1001), sd(1500)), (4, 1004, 1008, 1504));
    let poll = Pdu::<()>::Poll {
        poll_seq: 1,
        next: 9,
    };
    let stat = Pdu::<()>::Stat {
        poll_seq: 1,
        cum: 0,
        gaps: vec![(0, 1), (3, 5)],
    };
    let ustat = Pdu::<()>::Ustat {
        cum: 0,
        gap: (0, 1),
    };
    let lens = [&poll, &stat, &ustat].map(|p| p.wire_len());
    assert_eq!(lens, [8, 12 + 4 * 4, 16]);
}

#[test]
fn check_rejects_what_cannot_run() {
    assert_eq!(StpConfig::default().check(), Ok(()));
    let with = |f: fn(&mut StpConfig)| {
        let mut c = StpConfig::default();
        f(&mut c);
        c.check().unwrap_err()
    };
    assert!(with(|c| c.rate_bps = 0).contains("rate_bps: expected a sending rate above 0"));
    assert!(with(|c| c.poll_interval = Dur::ZERO).contains("poll_interval: expected"));
    assert!(with(|c| c.window = 0).contains("window: expected a window of at least 1"));
}

/// A loss pattern over the first PDUs of each kind; later ones get through.
fn pattern(sd: Vec<bool>, poll: Vec<bool>, stat: Vec<bool>, ustat: Vec<bool>) -> Loss {
    Box::new(move |k, n| {
        let p = match k {
            Kind::Sd => &sd,
            Kind::Poll => &poll,
            Kind::Stat => &stat,
            Kind::Ustat => &ustat,
        };
        p.get(n as usize).copied().unwrap_or(false)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_payload_arrives_once_in_order_and_is_released(
        sizes in vec(1u32..=1500, 1..120),
        sd in vec(prop::bool::weighted(0.3), 0..300),
        poll in vec(any::<bool>(), 0..12),
        stat in vec(any::<bool>(), 0..12),
        ustat in vec(any::<bool>(), 0..40),
        window in prop_oneof![1u64..10, Just(4096u64)],
        tail_poll in any::<bool>(),
        delay_ms in 1u64..400,
    ) {
        let n = sizes.len() as u64;
        let cfg = StpConfig { rate_bps: 5_000_000, window, tail_poll, ..StpConfig::default() };
        let loss = pattern(sd, poll, stat, ustat);
        let mut line = Line::new(cfg, Dur::from_millis(delay_ms), &sizes, loss);
        prop_assert!(line.run(1_000_000), "unfinished at {:?}", line.now);
        prop_assert_eq!(line.delivered_ids(), upto(n));
        let st = line.s.stats();
        prop_assert_eq!((st.released, line.s.in_flight(), line.s.queued()), (n, 0, 0));
        prop_assert_eq!(line.r.stats().delivered, n);
        let sends = line.sends();
        for w in sends.windows(2) {
            prop_assert!(w[1].0 >= w[0].0 + Dur::serialization(w[0].1, cfg.rate_bps));
        }
    }
}
