//! Property tests: arbitrary SDU sizes and bounded loss patterns on both directions never
//! panic the ESW machines; with ARQ every SDU arrives exactly once and in order, without
//! ARQ what arrives is in order, whole and never twice.

use super::harness_tests::*;
use super::*;
use crate::time::Time;
use proptest::collection::vec;
use proptest::prelude::*;

/// Losses end at 10 s, well inside the 31.8 s data-link timeout: with few cells to send,
/// a pattern over transmission numbers alone could last for minutes of timer
/// retransmissions, a permanent loss as far as the link can tell.
const LOSSY_UNTIL: Time = Time(10_000_000_000);

/// A loss pattern over the first transmissions of a direction; later ones get through.
fn pattern_data(p: Vec<bool>) -> DataLoss {
    Box::new(move |n, t, _| t < LOSSY_UNTIL && p.get(n as usize).copied().unwrap_or(false))
}

fn pattern_ack(p: Vec<bool>) -> AckLoss {
    Box::new(move |n, t| t < LOSSY_UNTIL && p.get(n as usize).copied().unwrap_or(false))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arq_keeps_every_sdu_once_and_in_order(
        sizes in vec(1u32..=3000, 1..25),
        data in vec(any::<bool>(), 0..600),
        acks in vec(any::<bool>(), 0..30),
    ) {
        let n = sizes.len();
        let mut h = Harness::new(EswConfig::default())
            .with_loss(pattern_data(data), pattern_ack(acks));
        h.offer(&sizes);
        prop_assert!(h.run_to_completion(n, 100_000), "unfinished at {:?}", h.now());
        prop_assert_eq!(h.delivered_ids(), (0..n as u64).collect::<Vec<_>>());
        for &(id, len, _) in &h.log.delivered {
            prop_assert_eq!(len, sizes[id as usize]);
        }
        prop_assert!(h.log.dropped.is_empty());
        prop_assert!(h.log.discarded.is_empty());
    }

    #[test]
    fn without_arq_what_arrives_is_whole_and_in_order(
        sizes in vec(1u32..=3000, 1..25),
        data in vec(any::<bool>(), 0..600),
    ) {
        let cfg = EswConfig { arq: false, ..EswConfig::default() };
        let mut h = Harness::new(cfg).with_loss(pattern_data(data.clone()), no_ack_loss());
        h.offer(&sizes);
        prop_assert!(h.run_to_completion(sizes.len(), 100_000));
        let ids = h.delivered_ids();
        prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
        // An SDU arrives if and only if none of its cells was lost.
        let mut first = 0usize;
        for (id, &len) in sizes.iter().enumerate() {
            let cells = cells_for(len) as usize;
            // Without ARQ, transmission k is cell k; all go out within 10 s here.
            let hit = (first..first + cells).any(|k| data.get(k).copied().unwrap_or(false));
            prop_assert_eq!(ids.contains(&(id as u64)), !hit, "SDU {}", id);
            first += cells;
        }
    }
}

/// One step of the differential test: (time advance in ns, what to do then).
#[derive(Clone, Debug)]
enum Op {
    Enqueue(u32),
    Poll,
    Timeout,
    /// An ESW-ACK: cumulative point at `cum` cells above the lowest cell sent not known
    /// to be below every ACK so far, then blocks of (gap, length) above it.
    Ack(u64, Vec<(u64, u32)>),
}

fn op() -> impl Strategy<Value = (u64, Op)> {
    let dt = prop_oneof![
        4 => Just(0u64),
        8 => Just(1_394_736u64),
        2 => Just(300_000_000u64),
        2 => Just(1_500_000_000u64),
        1 => Just(10_000_000_000u64),
        1 => Just(31_800_000_000u64),
    ];
    let what = prop_oneof![
        3 => (1u32..=3000).prop_map(Op::Enqueue),
        12 => Just(Op::Poll),
        1 => Just(Op::Timeout),
        3 => (prop_oneof![2 => Just(0u64), 1 => 0u64..12], vec((1u64..6, 1u32..8), 0..16))
            .prop_map(|(c, b)| Op::Ack(c, b)),
    ];
    (dt, what)
}

/// Drives `sender::Sender` and the reference (the sender before issue 19's
/// restructuring) through the same calls and compares everything they show.
fn same_as_reference(cfg: EswConfig, ops: &[(u64, Op)]) -> Result<(), TestCaseError> {
    use super::reference_sender::Sender as Reference;
    let mut new = Sender::new(&cfg);
    let mut old = Reference::new(&cfg);
    let mut now = Time::ZERO;
    // The ACKs' cumulative points only grow, as a receiver's do.
    let mut cum_floor = 0u64;
    for (dt, op) in ops {
        now = Time(now.0 + dt);
        match op {
            Op::Enqueue(len) => {
                let sdu = Sdu {
                    id: now.0 ^ *len as u64,
                    len: *len,
                };
                prop_assert_eq!(new.enqueue(sdu), old.enqueue(sdu));
            }
            Op::Poll => prop_assert_eq!(new.poll_cell(now), old.poll_cell(now), "at {:?}", now),
            Op::Timeout => {
                new.handle_timeout(now);
                old.handle_timeout(now);
            }
            Op::Ack(c, blocks) => {
                cum_floor += c;
                let mut ack = AckCell::new(cum_floor);
                let mut left = cum_floor;
                for &(gap, len) in blocks {
                    left += gap;
                    ack.push(AckBlock { left, len });
                    left += len as u64;
                }
                new.handle_ack(now, &ack);
                old.handle_ack(now, &ack);
            }
        }
        prop_assert_eq!(new.poll_timeout(), old.poll_timeout());
        prop_assert_eq!(new.has_cell(), old.has_cell());
        prop_assert_eq!(new.is_idle(), old.is_idle());
        prop_assert_eq!(new.queued_bytes(), old.queued_bytes());
        prop_assert_eq!(new.cells_in_flight(), old.cells_in_flight());
        prop_assert_eq!(new.stats(), old.stats());
        loop {
            let (a, b) = (new.poll_event(), old.poll_event());
            prop_assert_eq!(a, b);
            if a.is_none() {
                break;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_sender_does_what_the_reference_does(ops in vec(op(), 1..600), arq in any::<bool>()) {
        let cfg = EswConfig { arq, tx_window_bytes: 20_000, ..EswConfig::default() };
        same_as_reference(cfg, &ops)?;
    }
}
