//! TCP tests in explicit time. Two hosts on the shared test driver (`testing::Net`) for
//! whole transfers; segment scripts between two bare connections for the RFC 9293 rules
//! that whole transfers only touch in passing (closing states, resets, persist backoff).

use super::*;
use crate::agent::{Collaboration, StateManager};
use crate::cc::{self, Algorithm};
use crate::crosslayer::Signal;
use crate::host::Listener;
use crate::ids::ConnId;
use crate::packet::{Addr, Packet, SackBlock, SackList, TcpFlags, TcpSegment};
use crate::testing::Net;
use crate::time::{Dur, Time};

const MSS: u32 = 1000;

fn cfg() -> TcpConfig {
    TcpConfig {
        initial_window: 4 * MSS as u64,
        ..TcpConfig::new(MSS)
    }
}

fn server() -> Listener {
    Listener::new(cfg(), Algorithm::NewReno)
}

/// Node 0 sends `bytes` to node 1 over 50 ms each way, 0.8 ms per packet from 0 to 1.
fn path(client: TcpConfig, cc: &str, bytes: u64) -> (Net, ConnId) {
    path_to(client, cc, server(), bytes)
}

fn path_to(client: TcpConfig, cc: &str, server: Listener, bytes: u64) -> (Net, ConnId) {
    let mut net = Net::line(2, Dur::from_millis(50));
    net.hops[0].per_packet[0] = Dur::from_micros(800);
    let c = net.transfer(0, 1, (client, cc), server, bytes);
    (net, c)
}

fn drop_data(net: &mut Net, rule: impl FnMut(u64, &TcpSegment) -> bool + 'static) {
    net.hops[0].drop[0] = Some(Box::new(rule));
}

fn received(net: &Net) -> u64 {
    net.accepted(1)
        .map_or(0, |s| net.conn(1, s).bytes_received())
}

/// Transmission starts of the data segments node 0 sent with sequence number `seq`.
fn sends_of(net: &Net, seq: u64) -> Vec<Time> {
    net.trace
        .iter()
        .filter(|s| s.from == 0 && s.seg().seq == seq && s.seg().len > 0)
        .map(|s| s.start)
        .collect()
}

fn secs(t: f64) -> Time {
    Time::from_secs_f64(t)
}

#[test]
fn clean_transfer_delivers_everything_and_closes() {
    let (mut net, c) = path(cfg(), "newreno", 200_000);
    net.run(secs(100.0));
    assert_eq!(received(&net), 200_000);
    // RFC 9293 Figure 5: the active closer lingers in TIME-WAIT, the passive one closes.
    assert_eq!(net.conn(0, c).state(), State::TimeWait);
    assert_eq!(net.conn(1, net.accepted(1).unwrap()).state(), State::Closed);
    assert_eq!(net.conn(0, c).stats().retransmissions, 0);
    // Every state change is an event: the client's walk, from SYN-SENT on.
    let states: Vec<State> = net
        .tcp_events(0)
        .iter()
        .filter_map(|e| match e.1 {
            Event::State(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            State::Established,
            State::FinWait1,
            State::FinWait2,
            State::TimeWait
        ]
    );
    assert!(net.tcp_events(0).iter().any(|e| e.1 == Event::Connected));
    // RTT ~ 100 ms plus queueing; the estimator saw it.
    let srtt = net.conn(0, c).sender().rtt().srtt().unwrap();
    assert!(
        srtt >= Dur::from_millis(100) && srtt < Dur::from_millis(300),
        "{srtt:?}"
    );
    // After 2 MSL, TIME-WAIT ends.
    net.run(secs(1_000.0));
    assert_eq!(net.conn(0, c).state(), State::Closed);
}

#[test]
fn single_loss_is_repaired_by_fast_retransmit_in_every_mode() {
    for (name, sack) in [
        ("newreno", false),
        ("newreno", true),
        ("reno", false),
        ("tahoe", false),
    ] {
        let (mut net, c) = path(TcpConfig { sack, ..cfg() }, name, 100_000);
        drop_data(&mut net, |n, _| n == 20);
        net.run(secs(100.0));
        assert_eq!(received(&net), 100_000, "{name} sack={sack}");
        let s = *net.conn(0, c).stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts),
            (1, 0),
            "{name} sack={sack}: {s:?}"
        );
        assert!(net
            .tcp_events(0)
            .iter()
            .any(|e| e.1 == Event::RecoveryStarted));
    }
}

/// RFC 6582 section 4: with twenty holes in one window, recovery takes twenty round trips
/// (about 2 s here). Slow-but-Steady restarts the 1 s timer on each partial ACK and never
/// times out; Impatient restarts it on the first only, and times out.
#[test]
fn impatient_newreno_times_out_on_a_window_of_many_losses() {
    for (timer, timeouts) in [
        (NewRenoTimer::SlowButSteady, 0),
        (NewRenoTimer::Impatient, 1),
    ] {
        let client = TcpConfig {
            sack: false,
            newreno_timer: timer,
            ..cfg()
        };
        let (mut net, c) = path(client, "newreno", 200_000);
        drop_data(&mut net, |n, _| (40..80).contains(&n) && n % 2 == 0);
        net.run(secs(100.0));
        assert_eq!(received(&net), 200_000, "{timer:?}");
        let s = *net.conn(0, c).stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts),
            (1, timeouts),
            "{timer:?}: {s:?}"
        );
    }
}

#[test]
fn newreno_repairs_three_losses_in_one_window_without_timeout() {
    for sack in [false, true] {
        let (mut net, c) = path(TcpConfig { sack, ..cfg() }, "newreno", 100_000);
        drop_data(&mut net, |n, _| n == 30 || n == 33 || n == 36);
        net.run(secs(100.0));
        assert_eq!(received(&net), 100_000);
        let s = *net.conn(0, c).stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts, s.retransmissions),
            (1, 0, 3),
            "sack={sack}: {s:?}"
        );
    }
}

#[test]
fn sack_sender_never_resends_sacked_data() {
    let (mut net, c) = path(cfg(), "newreno", 100_000);
    drop_data(&mut net, |n, _| (40..44).contains(&n));
    net.run(secs(100.0));
    assert_eq!(received(&net), 100_000);
    assert_eq!(net.conn(0, c).stats().retransmissions, 4);
}

/// Three ACKs repeating the cumulative ACK, with no SACK blocks, as a receiver sends for
/// duplicate segments. Returns the sender's fast retransmits afterwards.
fn fast_retransmits_after_bare_duplicate_acks(sack: bool) -> u64 {
    let mut s = Sender::new(cfg(), cc::by_name("newreno", cfg().cc_config()).unwrap());
    if sack {
        s.enable_sack();
    }
    s.write(10 * MSS as u64);
    let now = Time::ZERO;
    while s.poll_segment(now).is_some() {}
    for _ in 0..4 {
        let input = AckInput {
            ack: 1,
            window: 65_535,
            sack: &SackList::default(),
            carries_data: false,
            echoed_rtt: None,
        };
        s.on_ack(now, input);
    }
    s.stats().fast_retransmits
}

/// A SACK sender with unlimited byte counting that has sent a 20-segment window (of 40
/// segments written), with `tune` applied to its configuration.
fn window_of_twenty(cc_name: &str, tune: impl FnOnce(&mut TcpConfig)) -> Sender {
    let m = MSS as u64;
    let mut c = TcpConfig {
        initial_window: 20 * m,
        abc_limit: Some(65_535),
        ..cfg()
    };
    tune(&mut c);
    let mut s = Sender::new(c, cc::by_name(cc_name, c.cc_config()).unwrap());
    s.enable_sack();
    s.write(40 * m);
    while s.poll_segment(Time::ZERO).is_some() {}
    s
}

/// A bare ACK of `ack` with `sack` blocks, at `now`.
fn ack_at(s: &mut Sender, now: Time, ack: u64, sack: &[SackBlock]) {
    let input = AckInput {
        ack,
        window: 1 << 20,
        sack: &sack.iter().copied().collect(),
        carries_data: false,
        echoed_rtt: None,
    };
    s.on_ack(now, input);
}

/// Segments 2-20 of the window are SACKed, a timeout, then the ACK for the retransmitted
/// first segment, which covers the whole window. Returns cwnd after it.
fn cwnd_after_the_hole_is_filled(counts: AbcCounts) -> u64 {
    let m = MSS as u64;
    let mut s = window_of_twenty("newreno", |c| c.abc_counts = counts);
    let sacked = SackBlock {
        start: 1 + m,
        end: 1 + 20 * m,
    };
    ack_at(&mut s, Time(1), 1, &[sacked]);
    let rto = s.poll_timeout().expect("retransmission timer armed");
    assert_eq!(s.handle_timeout(rto), Expiry::Timeout);
    assert_eq!(s.cwnd(), m);
    assert!(s.poll_segment(rto).is_some(), "the hole is resent");
    ack_at(&mut s, rto + Dur::from_millis(100), 1 + 20 * m, &[]);
    s.cwnd()
}

#[test]
fn delivered_counting_credits_only_what_the_ack_newly_delivered() {
    // RFC 3465 counts the 20 segments the ACK covers; DeliveredData (RFC 6937; Linux
    // acked_sacked, ns-3 currentDelivered) only the retransmitted one.
    assert_eq!(
        cwnd_after_the_hole_is_filled(AbcCounts::Delivered),
        2 * MSS as u64
    );
    assert!(cwnd_after_the_hole_is_filled(AbcCounts::Acked) > 5 * MSS as u64);
}

/// The window loses its first segment: three duplicate ACKs SACK segments 2-4, fast
/// retransmit, then the ACK for the retransmission covers the whole window and ends
/// recovery. Returns (cwnd, ssthresh) after it.
fn window_after_recovery(exit: ExitCredit) -> (u64, u64) {
    let m = MSS as u64;
    let mut s = window_of_twenty("reno", |c| c.exit_credit = exit);
    for k in 2..=4 {
        let sacked = SackBlock {
            start: 1 + m,
            end: 1 + k * m,
        };
        ack_at(&mut s, Time(1), 1, &[sacked]);
    }
    assert!(s.in_recovery(), "three SACKed segments above the hole");
    ack_at(&mut s, Time(1), 1 + 20 * m, &[]);
    assert!(!s.in_recovery());
    (s.cwnd(), s.ssthresh())
}

#[test]
fn the_ack_ending_recovery_grows_the_window_only_with_exit_credit() {
    // RFC 6582 section 3.2 step 3: cwnd = ssthresh. ns-3 also hands the ACK's whole
    // cumulative advance to the controller (`exit_credit = "acked"`).
    let (cwnd, ssthresh) = window_after_recovery(ExitCredit::None);
    assert_eq!(cwnd, ssthresh);
    let (grown, same) = window_after_recovery(ExitCredit::Acked);
    assert_eq!(same, ssthresh);
    assert!(grown > ssthresh, "{grown} <= {ssthresh}");
}

/// Segments `[from, to)` of the window (0-based, `MSS` each) as a SACK block.
fn segs(from: u64, to: u64) -> SackBlock {
    let m = MSS as u64;
    SackBlock {
        start: 1 + from * m,
        end: 1 + to * m,
    }
}

/// Sends everything the sender allows at `now`; returns the retransmissions' sequences.
fn drain(s: &mut Sender, now: Time) -> Vec<u64> {
    let mut resent = vec![];
    while let Some(o) = s.poll_segment(now) {
        if let Outgoing::Data {
            seq,
            retransmission: true,
            ..
        } = o
        {
            resent.push(seq);
        }
    }
    resent
}

/// Segment 0 of the window is lost and resent; then a partial ACK up to segment 10 with
/// no SACK above it (segments 10-19 are merely in flight). Returns what that ACK resends.
fn resent_after_a_bare_partial_ack(mode: SackResend) -> Vec<u64> {
    let mut s = window_of_twenty("newreno", |c| c.sack_resend = mode);
    ack_at(&mut s, Time(1), 1, &[segs(1, 4)]);
    assert!(s.in_recovery());
    assert_eq!(drain(&mut s, Time(1)), vec![1]);
    ack_at(&mut s, Time(2), 1 + 10 * MSS as u64, &[]);
    assert!(s.in_recovery(), "a partial ACK");
    drain(&mut s, Time(2))
}

#[test]
fn a_partial_ack_forces_a_resend_only_with_sack_resend_head() {
    // RFC 6582 section 3.2 step 5 carried over (ns-3) against RFC 6675 (B) alone (Linux).
    assert_eq!(
        resent_after_a_bare_partial_ack(SackResend::Head),
        vec![1 + 10 * MSS as u64]
    );
    assert_eq!(resent_after_a_bare_partial_ack(SackResend::Lost), vec![]);
}

/// Segment 20 (sent in recovery) is lost and resent inside the episode that began with
/// segment 0; the ACK ending that episode stops at segment 20, and one more SACK starts a
/// new episode. Returns how often segment 20 was resent in all.
fn resends_of_a_segment_in_flight_at_a_new_episode(mode: SackResend) -> usize {
    let m = MSS as u64;
    let mut s = window_of_twenty("newreno", |c| c.sack_resend = mode);
    let mut resent = vec![];
    ack_at(&mut s, Time(1), 1, &[segs(1, 20)]);
    resent.extend(drain(&mut s, Time(1)));
    ack_at(&mut s, Time(2), 1, &[segs(21, 25), segs(1, 20)]);
    resent.extend(drain(&mut s, Time(2)));
    ack_at(&mut s, Time(3), 1 + 20 * m, &[segs(21, 25)]);
    assert!(!s.in_recovery(), "the full ACK ends the first episode");
    ack_at(&mut s, Time(4), 1 + 20 * m, &[segs(21, 26)]);
    assert!(s.in_recovery(), "a second episode");
    resent.extend(drain(&mut s, Time(4)));
    resent.iter().filter(|&&q| q == 1 + 20 * m).count()
}

#[test]
fn a_new_episode_resends_a_retransmission_in_flight_only_with_sack_resend_head() {
    assert_eq!(
        resends_of_a_segment_in_flight_at_a_new_episode(SackResend::Head),
        2
    );
    assert_eq!(
        resends_of_a_segment_in_flight_at_a_new_episode(SackResend::Lost),
        1
    );
}

#[test]
fn a_fast_retransmit_restarts_the_timer_only_when_asked() {
    // Linux tcp_xmit_retransmit_queue re-arms it; RFC 6298 restarts it on new ACKs only.
    let deadline = |restart: bool| {
        let mut s = window_of_twenty("newreno", |c| c.rto_restart_on_resend = restart);
        let now = Time::ZERO + Dur::from_millis(500);
        ack_at(&mut s, now, 1, &[segs(1, 4)]);
        assert_eq!(drain(&mut s, now), vec![1]);
        (s.poll_timeout().unwrap(), now + s.rtt().rto())
    };
    let (kept, _) = deadline(false);
    assert_eq!(
        kept,
        Time::ZERO + Dur::from_secs(1),
        "armed by the first send"
    );
    let (restarted, from_resend) = deadline(true);
    assert_eq!(restarted, from_resend);
}

#[test]
fn with_sack_only_acks_with_new_sack_information_are_duplicates() {
    // RFC 5681 section 2 counts them; RFC 6675 section 2 does not.
    assert_eq!(fast_retransmits_after_bare_duplicate_acks(false), 1);
    assert_eq!(fast_retransmits_after_bare_duplicate_acks(true), 0);
}

#[test]
fn after_a_syn_timeout_the_data_rto_is_three_seconds() {
    // A 1.2 s round trip outlasts the 1 s initial RTO: the SYN is sent twice and gives no
    // sample. RFC 6298 section 5.7 then starts the data at RTO = 3 s, so the first window
    // is acknowledged before any timeout.
    let mut net = Net::line(2, Dur::from_millis(600));
    let c = net.transfer(0, 1, (cfg(), "newreno"), server(), 20_000);
    net.run(secs(100.0));
    assert_eq!(received(&net), 20_000);
    let syns = net
        .trace
        .iter()
        .filter(|s| s.from == 0 && s.seg().flags.contains(TcpFlags::SYN))
        .count();
    assert_eq!(syns, 2);
    let s = net.conn(0, c).stats();
    assert_eq!((s.timeouts, s.retransmissions), (0, 0), "{s:?}");
}

#[test]
fn blackout_aborts_exactly_after_the_retry_limit() {
    let retries = 4;
    let mut c = cfg();
    c.rto.data_retries = retries;
    let (mut net, conn) = path(c, "newreno", 1_000_000);
    drop_data(&mut net, |n, _| n >= 10);
    net.run(secs(10_000.0));
    let s = *net.conn(0, conn).stats();
    assert_eq!(net.conn(0, conn).state(), State::Aborted);
    assert_eq!(s.timeouts, retries as u64 + 1, "{s:?}");
    assert_eq!(net.tcp_events(0).last().map(|e| e.1), Some(Event::Aborted));
    // The RTO doubled between retransmissions of the first lost segment; the first gap
    // runs from the original send.
    let resend = sends_of(&net, 1 + 10 * MSS as u64);
    assert_eq!(resend.len(), retries as usize + 1);
    let gaps: Vec<f64> = resend
        .windows(2)
        .skip(1)
        .map(|w| w[1].since(w[0]).as_secs_f64())
        .collect();
    for g in gaps.windows(2) {
        assert!((g[1] / g[0] - 2.0).abs() < 0.05, "{gaps:?}");
    }
}

#[test]
fn without_backoff_rto_stays_constant() {
    let mut c = cfg();
    c.rto.backoff = false;
    c.rto.data_retries = 5;
    let (mut net, _) = path(c, "newreno", 1_000_000);
    drop_data(&mut net, |n, _| n >= 10);
    net.run(secs(10_000.0));
    let resend = sends_of(&net, 1 + 10 * MSS as u64);
    let gaps: Vec<f64> = resend
        .windows(2)
        .skip(1)
        .map(|w| w[1].since(w[0]).as_secs_f64())
        .collect();
    assert!(gaps.len() >= 3);
    for g in &gaps {
        assert!((g / gaps[0] - 1.0).abs() < 1e-6, "{gaps:?}");
    }
}

#[test]
fn lost_syns_are_retried_then_the_connection_aborts() {
    let mut c = cfg();
    c.rto.syn_retries = 3;
    // Nothing arrives within the run.
    let mut net = Net::line(2, Dur::from_secs(1_000_000));
    let conn = net.transfer(0, 1, (c, "newreno"), server(), 1000);
    net.run(secs(1000.0));
    assert_eq!(net.conn(0, conn).state(), State::Aborted);
    assert_eq!(net.trace.iter().filter(|s| s.from == 0).count(), 4);
    // 1 + 2 + 4 s between SYNs, then 8 s until giving up.
    assert_eq!(net.now, secs(15.0));
}

#[test]
fn closed_receive_window_is_probed_and_transfer_resumes() {
    let server = Listener {
        tcp: TcpConfig {
            recv_buffer: 5_000,
            ..cfg()
        },
        auto_read: false,
        ..server()
    };
    let (mut net, c) = path_to(cfg(), "newreno", server, 50_000);
    net.run(secs(20.0));
    assert_eq!(
        received(&net),
        5_000,
        "the window closed at the buffer size"
    );
    assert!(net.conn(0, c).stats().window_probes >= 2);
    assert_eq!(net.conn(0, c).stats().timeouts, 0);
    // The application reads: the window reopens and the transfer completes.
    let s = net.accepted(1).unwrap();
    for _ in 0..100 {
        net.host(1).read(s, u64::MAX);
        let t = net.now + Dur::from_secs(1);
        net.run(t);
    }
    assert_eq!(received(&net), 50_000);
    assert_eq!(net.conn(0, c).state(), State::TimeWait);
}

/// ILC-TCP (seed 002 Figure 6) through its State Manager: the link is cut during [2 s,
/// 9 s) and the link layer says so. A timeout during the cut freezes the sender, which
/// keeps its window and its unbacked-off RTO and sends nothing while frozen; on RESTORE it
/// resends from the first unacknowledged segment: that one alone (`first-segment`), or
/// the outstanding window in order (`go-back-n`, the default), never new data first.
fn freeze_through_outage(mode: RestoreMode) -> (Net, ConnId, Time, Vec<u64>) {
    let (down, up) = (secs(2.0), secs(9.0));
    let c = TcpConfig {
        ilc: Some(mode),
        ..cfg()
    };
    let (mut net, conn) = path(c, "reno", 20_000_000);
    net.nodes[0].machines.push(Box::new(StateManager::new(
        Collaboration::LinkOnly,
        true,
        true,
    )));
    net.hops[0].cut = Some((down, up));
    net.signal_at(down, 0, Signal::LinkNotOk);
    net.signal_at(up, 0, Signal::LinkOk);
    let snapshot = |net: &Net| {
        let s = net.conn(0, conn).sender();
        (s.cwnd(), s.rtt().rto())
    };
    net.run(up - Dur::from_nanos(1));
    let frozen = snapshot(&net);
    net.run(up);
    assert_eq!(snapshot(&net), frozen, "window and RTO are as they were");
    net.run(secs(1_000.0));
    assert_eq!(received(&net), 20_000_000);
    let at = |ev: Event| net.tcp_events(0).iter().find(|e| e.1 == ev).map(|e| e.0);
    let frozen_at = at(Event::Frozen).expect("the outage froze the sender");
    assert!(frozen_at > down && frozen_at < up);
    assert!(
        frozen.0 > 4 * MSS as u64,
        "the window had grown before the outage"
    );
    assert_eq!(net.conn(0, conn).stats().freezes, 1);
    let restored_at = at(Event::Restored).unwrap();
    assert_eq!(restored_at, up);
    let early_timeout = net
        .tcp_events(0)
        .iter()
        .any(|e| matches!(e.1, Event::Timeout { .. }) && e.0 < restored_at);
    assert!(
        !early_timeout,
        "no standard timeout (window cut, backoff) before RESTORE"
    );
    let sent = |from: Time, to: Time| -> Vec<u64> {
        net.trace
            .iter()
            .filter(|s| s.from == 0 && s.seg().len > 0 && s.handed >= from && s.handed <= to)
            .map(|s| s.seg().seq)
            .collect()
    };
    assert!(
        sent(frozen_at, up - Dur::from_nanos(1)).is_empty(),
        "silent while frozen"
    );
    let at_restore = sent(up, up);
    let highest_before = sent(Time::ZERO, up - Dur::from_nanos(1))
        .into_iter()
        .max()
        .unwrap();
    assert!(!at_restore.is_empty() && at_restore.len() as u64 <= frozen.0 / MSS as u64);
    for (k, &seq) in at_restore.iter().enumerate() {
        assert_eq!(
            seq,
            at_restore[0] + k as u64 * MSS as u64,
            "in order from the first"
        );
        assert!(seq <= highest_before, "a retransmission, not new data");
    }
    (net, conn, up, at_restore)
}

#[test]
fn frozen_sender_keeps_window_and_rto_and_resends_the_window_on_restore() {
    let (_, _, _, resent) = freeze_through_outage(RestoreMode::GoBackN);
    assert!(resent.len() > 1, "go-back-N resends the outstanding window");
}

#[test]
fn frozen_sender_restored_by_first_segment_retransmits_once() {
    let (net, _, up, resent) = freeze_through_outage(RestoreMode::FirstSegment);
    assert_eq!(resent.len(), 1, "only the first unacknowledged segment");
    let before = sends_of(&net, resent[0])
        .into_iter()
        .filter(|&t| t < up)
        .count();
    assert_eq!(before, 1, "sent once before the outage, once at RESTORE");
}

/// With no disconnection, asking on timeouts changes nothing: same segments, same times.
#[test]
fn ilc_without_outage_is_its_base_tcp() {
    let run = |ilc: bool| {
        let c = TcpConfig {
            ilc: ilc.then_some(RestoreMode::GoBackN),
            ..cfg()
        };
        let (mut net, _) = path(c, "tahoe", 300_000);
        if ilc {
            net.nodes[0].machines.push(Box::new(StateManager::new(
                Collaboration::LinkOnly,
                true,
                true,
            )));
        }
        drop_data(&mut net, |n, _| n == 30 || n == 31 || n == 60);
        net.run(secs(1_000.0));
        net.trace
            .iter()
            .map(|s| (s.start, s.from, s.packet.clone()))
            .collect::<Vec<_>>()
    };
    let (plain, ilc) = (run(false), run(true));
    assert!(!plain.is_empty());
    assert_eq!(plain, ilc);
}

// ----- segment scripts between two bare connections -----

const T0: Time = Time::ZERO;

fn ep(addr: u32, port: u16) -> Endpoint {
    Endpoint {
        addr: Addr(addr),
        port,
    }
}

fn seg(p: Packet) -> TcpSegment {
    p.as_tcp().unwrap().clone()
}

fn newreno() -> &'static Algorithm {
    &Algorithm::NewReno
}

/// A client and a server connection after a handshake at time 0.
fn established() -> (Connection, Connection) {
    established_with(cfg())
}

/// `established` with configuration `c` on both ends.
fn established_with(c: TcpConfig) -> (Connection, Connection) {
    let mut a = Connection::connect(c, newreno(), ep(1, 1000), ep(2, 80));
    let syn = seg(a.poll_transmit(T0).unwrap());
    let mut b = Connection::accept(c, newreno(), ep(2, 80), ep(1, 1000), &syn);
    a.handle_segment(T0, &seg(b.poll_transmit(T0).unwrap()));
    b.handle_segment(T0, &seg(a.poll_transmit(T0).unwrap()));
    while a.poll_event().is_some() || b.poll_event().is_some() {}
    (a, b)
}

/// Delivers everything `from` has to send now to `to`; returns what was delivered.
fn flush(now: Time, from: &mut Connection, to: &mut Connection) -> Vec<TcpSegment> {
    let segs: Vec<TcpSegment> = std::iter::from_fn(|| from.poll_transmit(now).map(seg)).collect();
    for s in &segs {
        to.handle_segment(now, s);
    }
    segs
}

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

#[test]
fn active_and_passive_close_walk_the_rfc_9293_states() {
    let (mut a, mut b) = established();
    // Section 3.10.4: CLOSE in ESTABLISHED queues the FIN and enters FIN-WAIT-1.
    a.close();
    assert_eq!(a.state(), State::FinWait1);
    let fin = flush(T0, &mut a, &mut b);
    assert!(fin[0].flags.contains(TcpFlags::FIN));
    // Section 3.10.7.4, eighth step: the peer's FIN moves ESTABLISHED to CLOSE-WAIT.
    assert_eq!(b.state(), State::CloseWait);
    assert_eq!(
        events(&mut b),
        [Event::PeerFinished, Event::State(State::CloseWait)]
    );
    flush(T0, &mut b, &mut a);
    // Fifth step: the ACK of our FIN moves FIN-WAIT-1 to FIN-WAIT-2.
    assert_eq!(a.state(), State::FinWait2);
    // CLOSE in CLOSE-WAIT: LAST-ACK.
    b.close();
    assert_eq!(b.state(), State::LastAck);
    flush(T0, &mut b, &mut a);
    // FIN-WAIT-2 and the peer's FIN: TIME-WAIT.
    assert_eq!(a.state(), State::TimeWait);
    assert!(events(&mut a).contains(&Event::Closed));
    flush(T0, &mut a, &mut b);
    // LAST-ACK and the ACK of our FIN: CLOSED.
    assert_eq!(b.state(), State::Closed);
    // TIME-WAIT lasts 2 MSL (section 3.10.8, MSL of section 3.4.2).
    let end = a.poll_timeout().unwrap();
    assert_eq!(end, T0 + cfg().time_wait);
    a.handle_timeout(end);
    assert_eq!(a.state(), State::Closed);
}

#[test]
fn a_retransmitted_fin_in_time_wait_is_acknowledged_and_restarts_the_wait() {
    let (mut a, mut b) = established();
    a.close();
    flush(T0, &mut a, &mut b);
    flush(T0, &mut b, &mut a);
    b.close();
    let fin = flush(T0, &mut b, &mut a);
    assert_eq!(a.state(), State::TimeWait);
    // Our ACK was lost: the peer sends its FIN again ten seconds later.
    let _ = a.poll_transmit(T0);
    let later = T0 + Dur::from_secs(10);
    a.handle_segment(later, &fin[0]);
    let ack = seg(a
        .poll_transmit(later)
        .expect("the FIN is acknowledged again"));
    assert_eq!(ack.ack, fin[0].seq + 1);
    assert_eq!(a.poll_timeout(), Some(later + cfg().time_wait));
}

#[test]
fn after_the_close_a_duplicate_data_segment_is_acknowledged_and_nothing_resent() {
    // RFC 9293 section 3.10.7.4: an unacceptable segment is answered with an ACK. Both
    // sides of the close: TIME-WAIT (closed first) and CLOSED (closed second).
    for a_first in [true, false] {
        let (mut a, mut b) = established();
        b.write(3000);
        let data = flush(T0, &mut b, &mut a);
        flush(T0, &mut a, &mut b);
        let (first, second) = if a_first {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        first.close();
        flush(T0, first, second);
        flush(T0, second, first);
        second.close();
        flush(T0, second, first);
        flush(T0, first, second);
        assert_eq!(
            a.state(),
            if a_first {
                State::TimeWait
            } else {
                State::Closed
            }
        );
        let deadline = a.poll_timeout();
        let later = T0 + Dur::from_secs(10);
        a.handle_segment(later, &data[0]);
        let out: Vec<TcpSegment> = std::iter::from_fn(|| a.poll_transmit(later).map(seg)).collect();
        assert_eq!(out.len(), 1, "one ACK: {out:?}");
        assert_eq!(
            (out[0].len, out[0].ack),
            (0, 3000 + 2),
            "data and FIN acknowledged"
        );
        assert_eq!(a.poll_timeout(), deadline, "only a FIN restarts the wait");
    }
}

#[test]
fn simultaneous_close_goes_through_closing() {
    let (mut a, mut b) = established();
    a.close();
    b.close();
    let fa: Vec<TcpSegment> = std::iter::from_fn(|| a.poll_transmit(T0).map(seg)).collect();
    let fb: Vec<TcpSegment> = std::iter::from_fn(|| b.poll_transmit(T0).map(seg)).collect();
    for s in &fa {
        b.handle_segment(T0, s);
    }
    for s in &fb {
        a.handle_segment(T0, s);
    }
    // Section 3.10.7.4, eighth step: FIN-WAIT-1 and the peer's FIN before ours is
    // acknowledged: CLOSING (Figure 13).
    assert_eq!((a.state(), b.state()), (State::Closing, State::Closing));
    flush(T0, &mut a, &mut b);
    flush(T0, &mut b, &mut a);
    assert_eq!((a.state(), b.state()), (State::TimeWait, State::TimeWait));
}

fn rst(seq: u64, ack: Option<u64>) -> TcpSegment {
    TcpSegment {
        src_port: 80,
        dst_port: 1000,
        seq,
        ack: ack.unwrap_or(0),
        flags: match ack {
            Some(_) => TcpFlags::RST | TcpFlags::ACK,
            None => TcpFlags::RST,
        },
        ..Default::default()
    }
}

#[test]
fn a_reset_counts_only_inside_the_receive_window() {
    let (mut a, _) = established();
    // Section 3.10.7.4: RCV.NXT =< SEG.SEQ < RCV.NXT + RCV.WND.
    let window = cfg().recv_buffer;
    a.handle_segment(T0, &rst(1 + window, None));
    a.handle_segment(T0, &rst(0, None));
    assert_eq!(a.state(), State::Established, "out of the window: ignored");
    a.handle_segment(T0, &rst(1 + window - 1, None));
    assert_eq!(a.state(), State::Aborted);
    assert_eq!(
        events(&mut a),
        [Event::State(State::Aborted), Event::Aborted]
    );
}

#[test]
fn in_syn_sent_only_a_reset_acknowledging_the_syn_counts() {
    let mut a = Connection::connect(cfg(), newreno(), ep(1, 1000), ep(2, 80));
    let _ = a.poll_transmit(T0);
    // Section 3.10.7.3: no ACK, or an unacceptable one: dropped.
    a.handle_segment(T0, &rst(0, None));
    a.handle_segment(T0, &rst(0, Some(5)));
    assert_eq!(a.state(), State::SynSent);
    a.handle_segment(T0, &rst(0, Some(1)));
    assert_eq!(a.state(), State::Aborted);
}

#[test]
fn a_reset_in_time_wait_only_ends_the_wait() {
    let (mut a, mut b) = established();
    a.close();
    flush(T0, &mut a, &mut b);
    flush(T0, &mut b, &mut a);
    b.close();
    flush(T0, &mut b, &mut a);
    assert_eq!(a.state(), State::TimeWait);
    let _ = events(&mut a);
    a.handle_segment(T0, &rst(2, None));
    assert_eq!(a.state(), State::Closed);
    assert_eq!(
        events(&mut a),
        [Event::State(State::Closed)],
        "a finished transfer is not aborted"
    );
}

/// The peer's buffer is full: at T0 it advertises a zero window to `a`, which then has
/// 10,000 bytes to send and can send none.
fn close_window(a: &mut Connection) {
    let full = TcpSegment {
        src_port: 80,
        dst_port: 1000,
        seq: 1,
        ack: 1,
        flags: TcpFlags::ACK,
        window: 0,
        ..Default::default()
    };
    a.handle_segment(T0, &full);
    a.write(10_000);
    assert!(a.poll_transmit(T0).is_none(), "nothing fits a zero window");
}

#[test]
fn zero_window_probes_back_off_exponentially_up_to_the_cap() {
    let (mut a, _) = established();
    close_window(&mut a);
    let mut probes = Vec::new();
    while probes.len() < 9 {
        let now = a.poll_timeout().expect("the persist timer is armed");
        a.handle_timeout(now);
        let p = seg(a.poll_transmit(now).expect("a probe"));
        // RFC 9293 section 3.8.6.1: an old sequence number draws the peer's ACK.
        assert_eq!((p.len, p.seq), (0, 0));
        probes.push(now);
        assert!(a.poll_transmit(now).is_none());
    }
    let gaps: Vec<u64> = probes
        .windows(2)
        .map(|w| w[1].since(w[0]).as_secs_f64().round() as u64)
        .collect();
    // The first probe comes one RTO (1 s) after the window closed; SHLD-30: the interval
    // grows exponentially, here up to 60 s.
    assert_eq!(probes[0], T0 + Dur::from_secs(1));
    assert_eq!(gaps, [2, 4, 8, 16, 32, 60, 60, 60]);
    assert_eq!(a.stats().window_probes, 9);
}

/// The instants of the first `n` window probes of a connection whose peer closed its
/// window at T0, with the persist timer bounded by `min` and `max`.
fn probe_times(min: Dur, max: Dur, n: usize) -> Vec<Time> {
    let c = TcpConfig {
        persist_min: min,
        persist_max: max,
        ..cfg()
    };
    let (mut a, _) = established_with(c);
    close_window(&mut a);
    let mut probes = Vec::new();
    while probes.len() < n {
        let now = a.poll_timeout().expect("the persist timer is armed");
        a.handle_timeout(now);
        while a.poll_transmit(now).is_some() {}
        probes.push(now);
    }
    probes
}

#[test]
fn the_persist_interval_stays_within_its_bounds() {
    let gaps = |p: Vec<Time>| -> Vec<u64> {
        let mut from = T0;
        p.into_iter()
            .map(|t| {
                let g = t.since(from).as_secs_f64().round() as u64;
                from = t;
                g
            })
            .collect()
    };
    // Today's default: from the RTO (1 s), doubling, capped at 60 s.
    let rto_60 = probe_times(Dur::ZERO, Dur::from_secs(60), 9);
    assert_eq!(gaps(rto_60), [1, 2, 4, 8, 16, 32, 60, 60, 60]);
    // 4.4BSD's range: never below 5 s.
    let bsd = probe_times(Dur::from_secs(5), Dur::from_secs(60), 6);
    assert_eq!(gaps(bsd), [5, 5, 5, 8, 16, 32]);
    // A lower cap.
    let low = probe_times(Dur::ZERO, Dur::from_secs(8), 6);
    assert_eq!(gaps(low), [1, 2, 4, 8, 8, 8]);
}

/// Twenty segments in flight, then an ACK of the first five that closes the window;
/// what the sender does over the next 30 s, and after the window reopens.
fn zero_window_in_flight(mode: ZeroWindow) -> (SenderStats, Option<Time>) {
    let m = MSS as u64;
    let mut s = window_of_twenty("reno", |c| c.zero_window = mode);
    let close = AckInput {
        ack: 1 + 5 * m,
        window: 0,
        sack: &SackList::default(),
        carries_data: false,
        echoed_rtt: None,
    };
    s.on_ack(secs(0.5), close);
    let mut now = secs(0.5);
    while let Some(t) = s.poll_timeout().filter(|&t| t < secs(30.0)) {
        now = t;
        s.handle_timeout(now);
        while let Some(out) = s.poll_segment(now) {
            // Linux resends into the closed window at a timeout ("our retransmits become
            // zero probes"); a frozen sender only probes.
            let probe = matches!(out, Outgoing::Probe { .. });
            assert!(
                probe || mode == ZeroWindow::Retransmit,
                "{out:?} into a zero window"
            );
        }
    }
    let open = AckInput {
        window: 1 << 20,
        ..close
    };
    s.on_ack(now, open);
    (*s.stats(), s.poll_timeout())
}

#[test]
fn a_zero_window_freezes_data_in_flight_only_when_asked() {
    // BSD: no timeout, the persist timer probes, and the reopened window re-arms the
    // retransmission timer for the fifteen segments still out.
    let (frozen, timer) = zero_window_in_flight(ZeroWindow::Freeze);
    assert_eq!(frozen.timeouts, 0);
    assert!(frozen.window_probes >= 3, "{frozen:?}");
    assert!(timer.is_some(), "the retransmission timer restarts");
    // Linux: the retransmission timer runs on and its expiries are timeouts.
    let (running, _) = zero_window_in_flight(ZeroWindow::Retransmit);
    assert!(running.timeouts > 0, "{running:?}");
}

#[test]
fn a_host_runs_the_same_on_its_own_timer_heap_and_on_keyed_timers() {
    // Three transfers at once with losses, so that retransmission and delayed-ACK timers
    // of several connections interleave: the host's heap (the generic contract) and the
    // per-connection timers the simulator uses must send the same packets at the same
    // times.
    let run = |keyed: bool| {
        let mut net = Net::line(2, Dur::from_millis(50));
        net.hops[0].per_packet[0] = Dur::from_micros(800);
        if keyed {
            net.keyed_timers();
        }
        for _ in 0..3 {
            net.transfer(0, 1, (cfg(), "newreno"), server(), 200_000);
        }
        drop_data(&mut net, |n, _| n % 17 == 5 || (40..48).contains(&n));
        net.run(secs(100.0));
        net.trace
            .iter()
            .map(|s| (s.handed, s.start, s.from, s.packet.clone()))
            .collect::<Vec<_>>()
    };
    let (heap, keyed) = (run(false), run(true));
    assert!(heap.len() > 600, "{}", heap.len());
    assert!(heap == keyed, "the two timer modes diverge");
}

#[test]
fn a_full_receive_buffer_is_announced_by_zero_window_ack_events() {
    // The receiving application reads nothing: once the buffer is full, the receiver's
    // ACKs advertise a zero window, and each one is an event; an application that
    // reads keeps the window open and raises none. (Exactly a buffer's worth is sent:
    // the receiver advertises what is left to the byte, with no SWS avoidance.)
    let run = |reads: bool| {
        let (mut a, mut b) = established();
        b.set_auto_read(reads);
        a.write(cfg().recv_buffer);
        let mut now = T0;
        for _ in 0..2_000 {
            flush(now, &mut a, &mut b);
            flush(now, &mut b, &mut a);
            now += Dur::from_millis(10);
            b.handle_timeout(now); // delayed ACKs
            a.handle_timeout(now);
        }
        events(&mut b)
            .iter()
            .filter(|e| **e == Event::ZeroWindowAck)
            .count()
    };
    assert!(run(false) > 0);
    assert_eq!(run(true), 0);
}

/// RFC 7323 section 3.2: timestamps are used only when both SYNs carry the option; then
/// every segment does, and an ACK echoes a TSval its peer sent (section 4.3).
#[test]
fn timestamps_are_negotiated_and_echoed() {
    let ts = TcpConfig {
        timestamps: true,
        ..cfg()
    };
    let with_ts = |server_ts: bool| {
        let server = Listener::new(
            TcpConfig {
                timestamps: server_ts,
                ..cfg()
            },
            Algorithm::NewReno,
        );
        let (mut net, _) = path_to(ts, "newreno", server, 20_000);
        net.run(secs(10.0));
        assert_eq!(received(&net), 20_000);
        net
    };
    let net = with_ts(true);
    let sent: Vec<_> = net.trace.iter().map(|s| (s.from, s.seg().ts)).collect();
    assert!(
        sent.iter().all(|(_, t)| t.is_some()),
        "every segment carries it"
    );
    let client_vals: Vec<u32> = sent
        .iter()
        .filter(|s| s.0 == 0)
        .map(|s| s.1.unwrap().val)
        .collect();
    for (_, t) in sent.iter().filter(|s| s.0 == 1).skip(1) {
        assert!(
            client_vals.contains(&t.unwrap().ecr),
            "echoes a TSval the client sent"
        );
    }
    // 20,000 bytes in 988-byte segments (1000 - 12): 21 data segments.
    let data = net
        .trace
        .iter()
        .filter(|s| s.from == 0 && s.seg().len > 0)
        .count();
    assert_eq!(data, 21);
    // Offered by the client only: none after its SYN.
    let net = with_ts(false);
    assert!(net.trace.iter().skip(1).all(|s| s.seg().ts.is_none()));
}
