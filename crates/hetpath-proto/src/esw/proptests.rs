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
