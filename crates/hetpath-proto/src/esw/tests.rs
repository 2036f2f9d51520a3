//! ESW cell segmentation and Selective-Repeat ARQ (seed 001 section IV, Table I): unit
//! tests of each half, and whole-link runs through `harness_tests::Harness`.

use super::harness_tests::*;
use super::*;
use crate::time::{Dur, Time};
use std::collections::{BTreeMap, BTreeSet};

/// A mix of datagram sizes: the IP MTU of Table I (1282), a 40-byte ACK, the 66-byte
/// FrACK of section IV, one byte, exact and off-by-one multiples of 53.
const MIX: [u32; 10] = [1282, 40, 576, 1, 1282, 53, 54, 1000, 1282, 66];

fn mix(n: usize) -> Vec<u32> {
    MIX.iter().copied().cycle().take(n).collect()
}

fn slot_ns() -> f64 {
    FRAME_NS as f64 / 19.0
}

fn data(seq: u64, sdu: u64, index: u32, last: bool, floor: u64) -> DataCell {
    DataCell {
        seq,
        sdu,
        index,
        last,
        payload: 53,
        floor,
    }
}

fn ms(x: u64) -> Time {
    Time(Dur::from_millis(x).as_nanos())
}

// ---- fragmentation (section IV, Table I) -------------------------------------------

#[test]
fn an_mtu_datagram_takes_25_cells_and_the_last_is_padded() {
    assert_eq!(cells_for(1282), 25);
    assert_eq!(padding(1282), 25 * 53 - 1282);
    assert_eq!(padding(1282), 43);
    let f: Vec<Fragment> = fragments(1282).collect();
    assert_eq!(f.len(), 25);
    for (k, x) in f.iter().enumerate() {
        assert_eq!(x.index, k as u32);
        assert_eq!(x.last, k == 24, "only the last cell is flagged");
    }
    assert!(f[..24].iter().all(|x| x.payload == 53));
    assert_eq!(f[24].payload, 1282 - 24 * 53);
    assert_eq!(f.iter().map(|x| x.payload).sum::<u32>(), 1282);
    assert_eq!(CELL_HEADER_BYTES + CELL_PAYLOAD_BYTES, CELL_BYTES);
}

#[test]
fn one_byte_takes_one_padded_cell_and_multiples_need_no_padding() {
    let f: Vec<Fragment> = fragments(1).collect();
    assert_eq!(
        f,
        vec![Fragment {
            index: 0,
            payload: 1,
            last: true
        }]
    );
    assert_eq!(padding(1), 52);
    assert_eq!((cells_for(53), padding(53)), (1, 0));
    assert_eq!((cells_for(54), padding(54)), (2, 52));
    assert_eq!((cells_for(106), padding(106)), (2, 0));
    assert_eq!(fragments(0).count(), 0);
}

#[test]
fn the_sender_numbers_and_flags_the_cells_of_each_sdu() {
    let mut s = Sender::new(&EswConfig::default());
    s.enqueue(Sdu { id: 7, len: 1282 }).unwrap();
    s.enqueue(Sdu { id: 8, len: 1 }).unwrap();
    let cells: Vec<DataCell> = (0..26).map(|k| s.poll_cell(Time(k)).unwrap()).collect();
    assert!(s.poll_cell(Time(26)).is_none());
    for (k, c) in cells.iter().enumerate() {
        assert_eq!(c.seq, k as u64);
        if k < 25 {
            assert_eq!((c.sdu, c.index, c.last), (7, k as u32, k == 24));
        } else {
            assert_eq!((c.sdu, c.index, c.last, c.payload), (8, 0, true, 1));
        }
    }
    assert_eq!(cells[24].padding(), 43);
    assert_eq!(cells[25].padding(), 52);
    assert_eq!(s.stats().cells_sent, 26);
    assert_eq!(s.stats().sdus_sent, 2);
}

// ---- transmit window (Table I) -----------------------------------------------------

#[test]
fn the_transmit_window_refuses_what_does_not_fit_until_acks_free_room() {
    assert_eq!(EswConfig::default().tx_window_bytes, 1_003_820);
    let cfg = EswConfig {
        tx_window_bytes: 3000,
        ..EswConfig::default()
    };
    let mut s = Sender::new(&cfg);
    assert_eq!(s.enqueue(Sdu { id: 0, len: 0 }), Err(EnqueueError::Empty));
    assert_eq!(
        s.enqueue(Sdu { id: 0, len: 3001 }),
        Err(EnqueueError::TooLarge {
            len: 3001,
            window: 3000
        })
    );
    s.enqueue(Sdu { id: 0, len: 1282 }).unwrap();
    s.enqueue(Sdu { id: 1, len: 1282 }).unwrap();
    assert_eq!(
        s.enqueue(Sdu { id: 2, len: 1282 }),
        Err(EnqueueError::WindowFull {
            len: 1282,
            free: 436
        })
    );
    for k in 0..25 {
        s.poll_cell(Time(k)).unwrap();
    }
    // Sending alone frees nothing with ARQ on: the SDU waits for its acknowledgement.
    assert_eq!(s.free_window(), 436);
    s.handle_ack(ms(600), &AckCell::new(25));
    assert_eq!(s.poll_event(), Some(EswEvent::Acked { id: 0, len: 1282 }));
    assert_eq!(s.free_window(), 3000 - 1282);
    s.enqueue(Sdu { id: 2, len: 1282 }).unwrap();

    // ARQ off: the bytes leave the window with the last cell.
    let mut u = Sender::new(&EswConfig { arq: false, ..cfg });
    u.enqueue(Sdu { id: 0, len: 1282 }).unwrap();
    for k in 0..25 {
        u.poll_cell(Time(k)).unwrap();
    }
    assert_eq!(u.free_window(), 3000);
    assert!(u.is_idle());
}

// ---- ESW-ACK coding (section IV) ---------------------------------------------------

#[test]
fn an_ack_codes_the_14_lowest_blocks_only() {
    let mut ack = AckCell::new(0);
    for k in 0..MAX_BLOCKS as u64 {
        assert!(ack.push(AckBlock {
            left: 2 * k,
            len: 1
        }));
    }
    assert!(!ack.push(AckBlock { left: 99, len: 1 }));
    assert_eq!(ack.blocks().len(), 14);

    let mut r = ArqReceiver::new(&EswConfig::default());
    // Cells 0, 2, 4, ..., 40 arrive: cell 0 in order, then 20 blocks of one cell.
    for s in (0..=40).step_by(2) {
        r.handle_cell(Time(s), &data(s, 0, s as u32, false, 0));
    }
    let ack = r.poll_ack(ms(10_000)).expect("Tack has passed with a gap");
    assert_eq!(ack.cumulative(), 1);
    let lowest: Vec<AckBlock> = (1..=14)
        .map(|k| AckBlock {
            left: 2 * k,
            len: 1,
        })
        .collect();
    assert_eq!(ack.blocks(), &lowest[..]);
    assert_eq!(r.stats().acks_sent, 1);
}

#[test]
fn a_delivery_makes_an_ack_due_and_an_idle_receiver_stays_silent() {
    let mut r = ArqReceiver::new(&EswConfig::default());
    r.handle_cell(ms(1), &data(0, 5, 0, false, 0));
    assert!(
        r.poll_ack(ms(1)).is_none(),
        "no delivery yet, Tack not passed"
    );
    assert_eq!(r.poll_timeout(), Some(ms(1 + 636)));
    r.handle_cell(ms(2), &data(1, 5, 1, true, 0));
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 5, len: 2 * 53 })
    );
    assert_eq!(r.poll_timeout(), Some(ms(2)));
    let ack = r.poll_ack(ms(3)).expect("a delivery triggers an ESW-ACK");
    assert_eq!((ack.cumulative(), ack.blocks().len()), (2, 0));
    // Everything acknowledged, nothing arriving: no periodic ACK, no timer.
    assert_eq!(r.poll_timeout(), None);
    assert!(r.poll_ack(ms(100_000)).is_none());
    // A duplicate (its ACK may have been lost) is acknowledged again after Tack.
    r.handle_cell(ms(200_000), &data(1, 5, 1, true, 0));
    assert!(r.poll_ack(ms(200_635)).is_none());
    assert_eq!(r.poll_ack(ms(200_636)).map(|a| a.cumulative()), Some(2));
    assert_eq!(r.stats().duplicate_cells, 1);
    assert_eq!(r.stats().sdus_delivered, 1);
}

#[test]
fn a_gap_is_reported_every_tack() {
    let mut r = ArqReceiver::new(&EswConfig::default());
    r.handle_cell(ms(0), &data(1, 0, 1, true, 0));
    let mut at = Vec::new();
    for t in 0..3_000 {
        if r.poll_ack(ms(t)).is_some() {
            at.push(t);
        }
    }
    assert_eq!(at, vec![636, 1272, 1908, 2544]);
}

// ---- selective repeat (section IV) -------------------------------------------------

#[test]
fn a_gap_below_a_block_retransmits_the_missing_cells_once() {
    let mut s = Sender::new(&EswConfig::default());
    s.enqueue(Sdu {
        id: 3,
        len: 60 * 53,
    })
    .unwrap();
    let sent: Vec<DataCell> = (0..60)
        .map(|k| s.poll_cell(Time(k * 1000)).unwrap())
        .collect();
    // Cells 1, 3, ..., 39 lost: cell 0 in order, 20 one-cell blocks, of which the ACK
    // codes 14.
    let mut ack = AckCell::new(1);
    for k in 1..=14 {
        ack.push(AckBlock {
            left: 2 * k,
            len: 1,
        });
    }
    s.handle_ack(ms(600), &ack);
    let mut rtx = Vec::new();
    while let Some(c) = s.poll_cell(ms(601)) {
        let first = sent[c.seq as usize];
        assert_eq!(
            (c.sdu, c.index, c.last, c.payload),
            (first.sdu, first.index, first.last, first.payload),
            "a retransmission is the same cell"
        );
        assert_eq!(c.floor, 1, "cell 0 is acknowledged");
        rtx.push(c.seq);
    }
    assert_eq!(rtx, (1..28).step_by(2).collect::<Vec<u64>>());
    assert_eq!(s.stats().rtx_selective, 14);
    // The same ACK again (a periodic repeat sent before the copies arrived): nothing.
    s.handle_ack(ms(700), &ack);
    assert!(s.poll_cell(ms(701)).is_none());
    // Cells 3..27 came through on the second try, cell 1 did not: the ACK proves the
    // second copy of 1 lost (later copies arrived), so it goes a third time, alone.
    let mut ack = AckCell::new(1);
    ack.push(AckBlock { left: 2, len: 27 });
    s.handle_ack(ms(1_300), &ack);
    assert_eq!(s.poll_cell(ms(1_301)).map(|c| c.seq), Some(1));
    assert!(s.poll_cell(ms(1_302)).is_none());
    assert_eq!(s.stats().cells_retransmitted, 15);
    assert_eq!(s.stats().rtx_timer, 0);
}

#[test]
fn a_cell_no_ack_covers_goes_again_on_the_timer() {
    let cfg = EswConfig::default();
    let mut s = Sender::new(&cfg);
    s.enqueue(Sdu { id: 0, len: 53 }).unwrap();
    assert_eq!(s.poll_cell(ms(0)).map(|c| c.seq), Some(0));
    assert_eq!(s.poll_timeout(), Some(ms(1_500)));
    assert!(s.poll_cell(ms(1_499)).is_none());
    assert_eq!(s.poll_cell(ms(1_500)).map(|c| c.seq), Some(0));
    assert_eq!(s.stats().rtx_timer, 1);
    s.handle_ack(ms(2_100), &AckCell::new(1));
    assert_eq!(s.poll_event(), Some(EswEvent::Acked { id: 0, len: 53 }));
    assert_eq!(s.poll_timeout(), None);
    assert!(s.is_idle());
    // The extra delay of this SDU: it was all sent at 0 and its last copy left at 1.5 s.
    assert_eq!(s.stats().arq_delay, Dur::from_millis(1_500));
}

#[test]
fn over_the_link_each_lost_cell_is_retransmitted_exactly_once() {
    let mut seen = BTreeSet::new();
    let loss: DataLoss = Box::new(move |_, _, c: &DataCell| {
        let first = seen.insert(c.seq);
        first && c.seq % 2 == 1 && c.seq < 40
    });
    // A long timer, so that selective repeat does all the work: with the default one the
    // cells above the 14 blocks of the first ESW-ACK (30, 32, ...) would go again on
    // their timer before the next ACK reports them (`sender`, module doc).
    let cfg = EswConfig {
        rtx_timeout: Dur::from_secs(10),
        ..EswConfig::default()
    };
    let mut h = Harness::new(cfg).with_loss(loss, no_ack_loss());
    let mut sizes = vec![60 * 53];
    sizes.extend(mix(20));
    h.offer(&sizes);
    assert!(h.run_to_completion(sizes.len(), 100_000));
    assert_eq!(
        h.delivered_ids(),
        (0..sizes.len() as u64).collect::<Vec<_>>()
    );
    let mut copies: BTreeMap<u64, u32> = BTreeMap::new();
    for (_, c, _) in &h.log.data {
        *copies.entry(c.seq).or_default() += 1;
    }
    for (&seq, &n) in &copies {
        let expect = if seq % 2 == 1 && seq < 40 { 2 } else { 1 };
        assert_eq!(n, expect, "cell {seq} sent {n} times");
    }
    let st = h.sender.stats();
    assert_eq!(
        (st.cells_retransmitted, st.rtx_selective),
        (20, 20),
        "{st:?}"
    );
    assert!(h
        .log
        .acks
        .iter()
        .any(|(_, a, _)| a.blocks().len() == MAX_BLOCKS));
    assert!(st.arq_delay > Dur::ZERO);
}

// ---- reliable in-order delivery under loss ------------------------------------------

fn check_reliable(name: &str, data: DataLoss, ack: AckLoss, n: usize) {
    let sizes = mix(n);
    let mut h = Harness::new(EswConfig::default()).with_loss(data, ack);
    h.offer(&sizes);
    let done = h.run_to_completion(n, 200_000);
    assert!(
        done,
        "{name}: unfinished after {:?}: {} delivered",
        h.now(),
        h.log.delivered.len()
    );
    let ids: Vec<u64> = h.delivered_ids();
    assert_eq!(ids, (0..n as u64).collect::<Vec<_>>(), "{name}");
    for &(id, len, _) in &h.log.delivered {
        assert_eq!(len, sizes[id as usize], "{name}");
    }
    assert!(h.log.dropped.is_empty(), "{name}: {:?}", h.log.dropped);
    assert!(h.log.discarded.is_empty(), "{name}");
    assert_eq!(h.log.acked.len(), n, "{name}");
    assert_eq!(h.receiver.stats().sdus_delivered, n as u64, "{name}");
    assert_eq!(h.sender.stats().sdus_acked, n as u64, "{name}");
    assert_eq!(h.sender.queued_bytes(), 0, "{name}");
    // Every lost copy was made up for.
    let lost = h.log.data.iter().filter(|d| d.2).count() as u64;
    assert!(h.sender.stats().cells_retransmitted >= lost, "{name}");
}

#[test]
fn arq_delivers_exactly_once_in_order_through_bursts() {
    check_reliable("no loss", no_data_loss(), no_ack_loss(), 200);
    check_reliable(
        "6 s data burst",
        window_data(ms(100), ms(6_100)),
        no_ack_loss(),
        200,
    );
    check_reliable(
        "data burst inside a longer ACK burst",
        window_data(ms(500), ms(2_500)),
        window_ack(ms(0), ms(12_000)),
        200,
    );
    check_reliable(
        "every ACK lost for 20 s",
        no_data_loss(),
        window_ack(ms(0), ms(20_000)),
        200,
    );
    // A periodic pattern can pin a cell to the lost slot for ever: it stops at 5 s.
    let mut k = 0u64;
    let every_third: DataLoss = Box::new(move |_, t, _| {
        k += 1;
        k.is_multiple_of(3) && t < ms(5_000)
    });
    check_reliable(
        "every third transmission for 5 s",
        every_third,
        no_ack_loss(),
        200,
    );
    // Every retransmission is lost too while the first 4 s last.
    let mut seen = BTreeSet::new();
    let copies: DataLoss = Box::new(move |_, t, c: &DataCell| !seen.insert(c.seq) && t < ms(4_000));
    check_reliable(
        "retransmissions lost",
        bernoulli_data(9, 0.2).and_also(copies),
        no_ack_loss(),
        200,
    );
}

#[test]
fn arq_delivers_exactly_once_in_order_under_random_loss() {
    for seed in 1..=6 {
        check_reliable(
            &format!("30% data and ACK loss, seed {seed}"),
            bernoulli_data(seed, 0.3),
            bernoulli_ack(seed ^ 0xabcdef, 0.3),
            150,
        );
        check_reliable(
            &format!("90% ACK loss, seed {seed}"),
            no_data_loss(),
            bernoulli_ack(seed, 0.9),
            150,
        );
    }
}

#[test]
fn arq_delivers_exactly_once_in_order_on_a_gilbert_elliott_channel() {
    for seed in 1..=8 {
        // Bad periods of 200 cells (about 0.28 s) on average every 1,000 cells.
        let mut ge = GilbertElliott {
            rng: Lcg(seed),
            bad: false,
            p_gb: 0.001,
            p_bg: 0.005,
            loss_good: 0.01,
            loss_bad: 1.0,
        };
        let mut ge_ack = GilbertElliott {
            rng: Lcg(seed + 1000),
            ..ge.clone()
        };
        check_reliable(
            &format!("Gilbert-Elliott, seed {seed}"),
            Box::new(move |_, _, _| ge.lost()),
            Box::new(move |_, _| ge_ack.lost()),
            300,
        );
    }
}

trait AndAlso {
    fn and_also(self, other: DataLoss) -> DataLoss;
}

impl AndAlso for DataLoss {
    /// Lost if either rule says so (both are asked, so both keep their sequence).
    fn and_also(mut self, mut other: DataLoss) -> DataLoss {
        Box::new(move |n, t, c| {
            let a = self(n, t, c);
            let b = other(n, t, c);
            a || b
        })
    }
}

// ---- capacity --------------------------------------------------------------------------

#[test]
fn without_loss_goodput_is_the_cell_capacity_less_headers_and_padding() {
    let sizes: Vec<u32> = [1282, 576, 40, 1000, 1, 66, 1282]
        .iter()
        .copied()
        .cycle()
        .take(1400)
        .collect();
    let bytes: u64 = sizes.iter().map(|&s| s as u64).sum();
    let cells: u64 = sizes.iter().map(|&s| cells_for(s) as u64).sum();
    let mut h = Harness::new(EswConfig::default());
    h.offer(&sizes);
    assert!(h.run_to_completion(sizes.len(), 200_000));
    assert_eq!(
        h.delivered_ids(),
        (0..sizes.len() as u64).collect::<Vec<_>>()
    );
    assert_eq!(h.sender.stats().cells_sent, cells, "the sender never idled");
    assert_eq!(h.sender.stats().cells_retransmitted, 0);
    assert_eq!(h.sender.stats().arq_delay, Dur::ZERO);

    // Cell rate: 60 bytes per frame unit, 19 per 26.5 ms (Table I: 344 kbit/s).
    let cell_bps = 60.0 * 8.0 / (slot_ns() * 1e-9);
    assert!((cell_bps - 344_000.0).abs() < 200.0, "{cell_bps}");
    // Payload rate: 53/60 of it, less the padding of these SDUs.
    let expected = cell_bps * 53.0 / 60.0 * bytes as f64 / (53 * cells) as f64;
    let last = h.log.delivered.last().unwrap().2;
    let busy = last.as_secs_f64() - DELAY.as_secs_f64();
    let goodput = bytes as f64 * 8.0 / busy;
    assert!(
        (goodput / expected - 1.0).abs() < 0.01,
        "goodput {goodput:.0} bit/s, expected {expected:.0}"
    );
}

// ---- ARQ off ---------------------------------------------------------------------------

#[test]
fn without_arq_an_sdu_with_a_lost_cell_is_never_delivered() {
    let cfg = EswConfig {
        arq: false,
        ..EswConfig::default()
    };
    // Ten MTU datagrams of 25 cells: lose cell 5 of SDU 1, the last cell of SDU 4, the
    // first cell of SDU 7 and a middle cell of SDU 9, the last one sent.
    let lost = [25 + 5, 4 * 25 + 24, 7 * 25, 9 * 25 + 12];
    let loss: DataLoss = Box::new(move |n, _, _| lost.contains(&n));
    let mut h = Harness::new(cfg).with_loss(loss, no_ack_loss());
    h.offer(&[1282; 10]);
    h.run_until(40_000, |h| h.now() >= ms(40_000));
    assert_eq!(h.delivered_ids(), vec![0, 2, 3, 5, 6, 8]);
    assert!(h.log.delivered.iter().all(|d| d.1 == 1282));
    // 1, 4 and 7 are pushed out by the next SDU that completes; 9 by the reassembly
    // timeout.
    assert_eq!(h.log.discarded, vec![1, 4, 7, 9]);
    assert!(h.log.acks.is_empty(), "no ESW-ACK without ARQ");
    let st = h.sender.stats();
    assert_eq!((st.cells_sent, st.cells_retransmitted), (250, 0));
    assert_eq!(h.receiver.stats().sdus_discarded, 4);
}

#[test]
fn without_arq_the_last_incomplete_sdu_waits_for_the_reassembly_timeout() {
    let cfg = EswConfig {
        arq: false,
        ..EswConfig::default()
    };
    let mut r = Receiver::new(&cfg);
    r.handle_cell(ms(0), &data(0, 1, 0, false, 0));
    assert_eq!(r.poll_timeout(), Some(ms(31_800)));
    r.handle_timeout(ms(31_799));
    assert_eq!(r.poll_event(), None);
    r.handle_timeout(ms(31_800));
    assert_eq!(r.poll_event(), Some(EswEvent::Discarded { id: 1 }));
    assert_eq!(r.poll_timeout(), None);
    // Cells of one SDU in any order.
    r.handle_cell(ms(40_000), &data(3, 2, 1, true, 0));
    r.handle_cell(ms(40_001), &data(2, 2, 0, false, 0));
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 2, len: 2 * 53 })
    );
}

// ---- data-link timeout (Table I: 31.8 s) -------------------------------------------

#[test]
fn the_data_link_timeout_drops_an_sdu_lost_for_longer_than_31_8_s() {
    // SDU 1's cells are lost for 40 s; SDUs 0 and 2 get through.
    let loss: DataLoss = Box::new(|_, t, c: &DataCell| c.sdu == 1 && t < ms(40_000));
    let mut h = Harness::new(EswConfig::default()).with_loss(loss, no_ack_loss());
    h.offer(&[1282, 1282, 1282]);
    h.offer_at(ms(35_000), &[1282]);
    h.run_until(60_000, |h| h.now() >= ms(45_000));
    let first_tx = h.log.data.iter().find(|(_, c, _)| c.sdu == 1).unwrap().0;
    assert_eq!(h.log.dropped.len(), 1);
    let (id, at) = h.log.dropped[0];
    assert_eq!(id, 1);
    let dl = Dur::from_millis(31_800);
    assert!(at >= first_tx + dl && at <= first_tx + dl + Dur(2 * slot_ns() as u64));
    assert_eq!(h.delivered_ids(), vec![0, 2, 3]);
    // SDU 2 waited behind the gap until the receiver gave up on it too (the sender had
    // nothing new to carry its floor).
    let d2 = h.log.delivered[1].2;
    assert!(d2 > first_tx + dl && d2 < ms(33_000), "{d2:?}");
    assert!(h.log.data.iter().all(|(t, c, _)| c.sdu != 1 || *t < at));
    let st = h.sender.stats();
    assert_eq!((st.sdus_dropped, st.sdus_acked), (1, 3));
    assert_eq!(h.sender.queued_bytes(), 0);
}

#[test]
fn after_a_long_outage_new_cells_carry_the_floor_past_dropped_sdus() {
    let mut h =
        Harness::new(EswConfig::default()).with_loss(window_data(ms(0), ms(40_000)), no_ack_loss());
    h.offer(&[1282, 1282, 1282]);
    h.offer_at(ms(40_000), &[1282, 1282]);
    h.run_until(60_000, |h| h.now() >= ms(42_000));
    assert_eq!(
        h.log.dropped.iter().map(|d| d.0).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(h.delivered_ids(), vec![3, 4]);
    assert!(h.log.delivered[0].2 < ms(40_400));
}

#[test]
fn the_receiver_skips_missing_cells_below_the_senders_floor() {
    let mut r = ArqReceiver::new(&EswConfig::default());
    r.handle_cell(ms(0), &data(0, 10, 0, true, 0));
    r.handle_cell(ms(1), &data(2, 12, 0, true, 0));
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 10, len: 53 })
    );
    assert_eq!(r.poll_event(), None, "12 waits for cell 1");
    // The sender gave up on cell 1 (and acknowledged cell 2).
    r.handle_cell(ms(2), &data(3, 13, 0, true, 3));
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 12, len: 53 })
    );
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 13, len: 53 })
    );
    // SDU 14 (cells 4, 5): cell 4 never comes, the floor passes it.
    r.handle_cell(ms(3), &data(5, 14, 1, true, 4));
    r.handle_cell(ms(4), &data(6, 15, 0, true, 6));
    assert_eq!(r.poll_event(), Some(EswEvent::Discarded { id: 14 }));
    assert_eq!(
        r.poll_event(),
        Some(EswEvent::Delivered { id: 15, len: 53 })
    );
    assert_eq!(r.cumulative(), 7);
    assert_eq!(r.queued_cells(), 0);
}
