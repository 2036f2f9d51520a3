//! Two-endpoint tests: a client and a server joined by a scripted path (fixed delay and
//! serialisation, and a drop rule), with explicit times (DESIGN.md convention 12).

use super::*;
use crate::cc;
use crate::crosslayer::Advice;
use crate::packet::{Addr, Packet, TcpSegment};
use crate::time::{Dur, Time};

const MSS: u32 = 1000;

/// Decides, per a->b data segment (index, segment), whether the path drops it.
type DropRule = Box<dyn FnMut(u64, &TcpSegment) -> bool>;

struct Path {
    a: Connection,
    b: Connection,
    /// (arrival, to_b, segment)
    flight: Vec<(Time, bool, TcpSegment)>,
    now: Time,
    delay: Dur,
    /// Serialisation time per packet of the a->b direction (a bottleneck of sorts).
    per_packet: Dur,
    link_free: Time,
    /// Data segments a->b seen so far (first transmissions and retransmissions).
    sent_ab: u64,
    drop: DropRule,
    /// Configuration of the server, created on the first SYN.
    server: TcpConfig,
    server_reads: bool,
    trace: Vec<(Time, bool, TcpSegment)>,
    /// ILC-TCP hook: both directions are cut during [down, up); a timeout of `a` is
    /// answered FREEZE inside that span and PROCEED_NORMALLY outside it, and RESTORE
    /// comes at `up`, as a State Manager hearing the link layer would do.
    outage: Option<(Time, Time)>,
    /// Times at which `a` handed out data segments (before any serialisation backlog).
    a_sent: Vec<(Time, u64)>,
    /// Events of `a` consumed by the ILC hook, with their times.
    a_events: Vec<(Time, Event)>,
    /// (cwnd, rto) of `a` when it froze and just after it was restored.
    frozen_state: Option<(u64, Dur)>,
    restored_state: Option<(u64, Dur)>,
}

fn cfg() -> TcpConfig {
    TcpConfig {
        initial_window: 4 * MSS as u64,
        ..TcpConfig::new(MSS)
    }
}

impl Path {
    fn new(cfg_a: TcpConfig, cc_name: &str, bytes: u64) -> Path {
        let ea = Endpoint {
            addr: Addr(1),
            port: 1000,
        };
        let eb = Endpoint {
            addr: Addr(2),
            port: 80,
        };
        let mut a = Connection::connect(
            cfg_a,
            cc::by_name(cc_name, cfg_a.cc_config()).unwrap(),
            ea,
            eb,
        );
        a.write(bytes);
        a.close();
        // The server is created on the first SYN; a placeholder until then.
        let b = Connection::connect(
            cfg(),
            cc::by_name("newreno", cfg().cc_config()).unwrap(),
            eb,
            ea,
        );
        Path {
            a,
            b,
            flight: Vec::new(),
            now: Time::ZERO,
            delay: Dur::from_millis(50),
            per_packet: Dur::from_micros(800),
            link_free: Time::ZERO,
            sent_ab: 0,
            drop: Box::new(|_, _| false),
            server: cfg(),
            server_reads: true,
            trace: Vec::new(),
            outage: None,
            a_sent: Vec::new(),
            a_events: Vec::new(),
            frozen_state: None,
            restored_state: None,
        }
    }

    fn cut(&self, t: Time) -> bool {
        self.outage.is_some_and(|(down, up)| down <= t && t < up)
    }

    fn drain(&mut self) {
        while let Some(p) = self.a.poll_transmit(self.now) {
            let seg = tcp(p);
            let start = self.link_free.max(self.now);
            self.link_free = start + self.per_packet;
            let n = self.sent_ab;
            if seg.len > 0 {
                self.sent_ab += 1;
                self.a_sent.push((self.now, seg.seq));
            }
            self.trace.push((start, true, seg.clone()));
            if !(self.cut(start) || seg.len > 0 && (self.drop)(n, &seg)) {
                self.flight.push((self.link_free + self.delay, true, seg));
            }
        }
        if self.b.state() != State::SynSent {
            while let Some(p) = self.b.poll_transmit(self.now) {
                if !self.cut(self.now) {
                    self.flight.push((self.now + self.delay, false, tcp(p)));
                }
            }
        }
    }

    /// The State Manager's side of the ILC hook (see `outage`).
    fn state_manager(&mut self) {
        let Some((_, up)) = self.outage else {
            return;
        };
        let snapshot = |c: &Connection| (c.sender().cwnd(), c.sender().rtt().rto());
        while let Some(ev) = self.a.poll_event() {
            self.a_events.push((self.now, ev));
            match ev {
                Event::WhatShouldTcpDo => {
                    let advice = if self.cut(self.now) {
                        Advice::Freeze
                    } else {
                        Advice::ProceedNormally
                    };
                    self.a.handle_advice(self.now, advice);
                }
                Event::Frozen => self.frozen_state = Some(snapshot(&self.a)),
                _ => {}
            }
        }
        if self.now >= up && self.a.sender().frozen() {
            self.a.handle_restore();
            self.restored_state = Some(snapshot(&self.a));
        }
    }

    /// Runs until both sides are closed or aborted, or `limit` passes.
    fn run(&mut self, limit: Time) {
        for _ in 0..1_000_000 {
            self.drain();
            let next_pkt = self.flight.iter().map(|f| f.0).min();
            let restore = self
                .outage
                .filter(|_| self.a.sender().frozen())
                .map(|(_, up)| up.max(self.now));
            let next = [
                next_pkt,
                self.a.poll_timeout(),
                self.b.poll_timeout(),
                restore,
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else { return };
            if t > limit {
                return;
            }
            self.now = self.now.max(t);
            if let Some(i) = self.flight.iter().position(|f| f.0 == t) {
                let (_, to_b, seg) = self.flight.remove(i);
                if self.cut(t) {
                    continue; // lost on the cut link
                }
                if to_b {
                    if self.b.state() == State::SynSent {
                        let c = self.server;
                        self.b = Connection::accept(
                            c,
                            cc::by_name("newreno", c.cc_config()).unwrap(),
                            self.b.local(),
                            self.b.remote(),
                            &seg,
                        );
                        self.b.set_auto_read(self.server_reads);
                    } else {
                        self.b.handle_segment(self.now, &seg);
                    }
                } else {
                    self.a.handle_segment(self.now, &seg);
                }
            } else {
                self.a.handle_timeout(self.now);
                self.b.handle_timeout(self.now);
            }
            self.state_manager();
            if self.b.peer_finished() && self.b.state() == State::Established {
                self.b.close();
            }
        }
        panic!("drive loop did not settle");
    }

    fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.a.poll_event()).collect()
    }
}

fn tcp(p: Packet) -> TcpSegment {
    p.as_tcp().unwrap().clone()
}

#[test]
fn clean_transfer_delivers_everything_and_closes() {
    let mut p = Path::new(cfg(), "newreno", 200_000);
    p.run(Time::from_secs_f64(100.0));
    assert_eq!(p.b.bytes_received(), 200_000);
    assert_eq!(p.a.state(), State::Closed);
    assert_eq!(p.b.state(), State::Closed);
    assert_eq!(p.a.stats().retransmissions, 0);
    assert_eq!(p.events().first(), Some(&Event::Connected));
    // RTT ~ 100 ms plus queueing; the estimator saw it.
    let srtt = p.a.sender().rtt().srtt().unwrap();
    assert!(
        srtt >= Dur::from_millis(100) && srtt < Dur::from_millis(300),
        "{srtt:?}"
    );
}

#[test]
fn single_loss_is_repaired_by_fast_retransmit_in_every_mode() {
    for (name, sack) in [
        ("newreno", false),
        ("newreno", true),
        ("reno", false),
        ("tahoe", false),
    ] {
        let mut p = Path::new(TcpConfig { sack, ..cfg() }, name, 100_000);
        p.drop = Box::new(|n, _| n == 20);
        p.run(Time::from_secs_f64(100.0));
        assert_eq!(p.b.bytes_received(), 100_000, "{name} sack={sack}");
        let s = *p.a.stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts),
            (1, 0),
            "{name} sack={sack}: {s:?}"
        );
        assert!(p.events().contains(&Event::RecoveryStarted));
    }
}

#[test]
fn newreno_repairs_three_losses_in_one_window_without_timeout() {
    for sack in [false, true] {
        let mut p = Path::new(TcpConfig { sack, ..cfg() }, "newreno", 100_000);
        p.drop = Box::new(|n, _| n == 30 || n == 33 || n == 36);
        p.run(Time::from_secs_f64(100.0));
        assert_eq!(p.b.bytes_received(), 100_000);
        let s = *p.a.stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts, s.retransmissions),
            (1, 0, 3),
            "sack={sack}: {s:?}"
        );
    }
}

#[test]
fn sack_sender_never_resends_sacked_data() {
    let mut p = Path::new(cfg(), "newreno", 100_000);
    p.drop = Box::new(|n, _| (40..44).contains(&n));
    p.run(Time::from_secs_f64(100.0));
    assert_eq!(p.b.bytes_received(), 100_000);
    assert_eq!(p.a.stats().retransmissions, 4, "{:?}", p.a.stats());
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
    let window = 65_535;
    for _ in 0..4 {
        let input = AckInput {
            ack: 1,
            window,
            sack: &[],
            carries_data: false,
        };
        s.on_ack(now, input);
    }
    s.stats().fast_retransmits
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
    let mut p = Path::new(cfg(), "newreno", 20_000);
    p.delay = Dur::from_millis(600);
    p.run(Time::from_secs_f64(100.0));
    assert_eq!(p.b.bytes_received(), 20_000);
    let syns = p.trace.iter().filter(|t| t.1 && t.2.seq == 0).count();
    assert_eq!(syns, 2);
    assert_eq!(p.a.stats().timeouts, 0, "{:?}", p.a.stats());
    assert_eq!(p.a.stats().retransmissions, 0, "{:?}", p.a.stats());
}

#[test]
fn blackout_aborts_exactly_after_the_retry_limit() {
    let retries = 4;
    let mut c = cfg();
    c.rto.data_retries = retries;
    let mut p = Path::new(c, "newreno", 1_000_000);
    p.drop = Box::new(|n, _| n >= 10);
    p.run(Time::from_secs_f64(10_000.0));
    let s = *p.a.stats();
    assert_eq!(p.a.state(), State::Aborted);
    assert_eq!(s.timeouts, retries as u64 + 1, "{s:?}");
    let ev = p.events();
    assert_eq!(ev.last(), Some(&Event::Aborted));
    // The RTO doubled between retransmissions of the first lost segment.
    let resend: Vec<Time> = p
        .trace
        .iter()
        .filter(|t| t.1 && t.2.seq == 1 + 10 * MSS as u64)
        .map(|t| t.0)
        .collect();
    assert_eq!(resend.len(), retries as usize + 1);
    // The first gap runs from the original send; backoff shows between retransmissions.
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
    let mut p = Path::new(c, "newreno", 1_000_000);
    p.drop = Box::new(|n, _| n >= 10);
    p.run(Time::from_secs_f64(10_000.0));
    let resend: Vec<Time> = p
        .trace
        .iter()
        .filter(|t| t.1 && t.2.seq == 1 + 10 * MSS as u64)
        .map(|t| t.0)
        .collect();
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
    let mut p = Path::new(c, "newreno", 1000);
    // Drop every SYN: intercept by never delivering anything a->b.
    p.delay = Dur::from_secs(1_000_000);
    p.run(Time::from_secs_f64(1000.0));
    assert_eq!(p.a.state(), State::Aborted);
    let syns = p.trace.iter().filter(|t| t.1).count();
    assert_eq!(syns, 4);
    // 1 + 2 + 4 s between SYNs, then 8 s until giving up.
    assert_eq!(p.now, Time::from_secs_f64(15.0));
}

#[test]
fn closed_receive_window_is_probed_and_transfer_resumes() {
    let mut p = Path::new(cfg(), "newreno", 50_000);
    p.server = TcpConfig {
        recv_buffer: 5_000,
        ..cfg()
    };
    p.server_reads = false;
    p.run(Time::from_secs_f64(20.0));
    assert_eq!(
        p.b.bytes_received(),
        5_000,
        "the window closed at the buffer size"
    );
    assert!(p.a.stats().window_probes >= 2, "{:?}", p.a.stats());
    assert_eq!(p.a.stats().timeouts, 0);
    // The application reads: the window reopens and the transfer completes.
    for _ in 0..100 {
        p.b.read(u64::MAX);
        let t = p.now + Dur::from_secs(1);
        p.run(t);
    }
    assert_eq!(p.b.bytes_received(), 50_000);
    assert_eq!(p.a.state(), State::Closed);
}

/// ILC-TCP (seed 002 Figure 6): a timeout during an outage freezes the sender, which keeps
/// its window and its unbacked-off RTO and sends nothing while frozen; on RESTORE it
/// resends from the first unacknowledged segment: that one alone (`first-segment`), or
/// the outstanding window in order (`go-back-n`, the default), never new data first.
fn freeze_through_outage(go_back_n: bool) -> (Path, Time, Vec<u64>) {
    let (down, up) = (Time::from_secs_f64(2.0), Time::from_secs_f64(9.0));
    let mut c = cfg();
    c.ask_on_timeout = true;
    c.restore_go_back_n = go_back_n;
    let mut p = Path::new(c, "reno", 20_000_000);
    p.outage = Some((down, up));
    p.run(Time::from_secs_f64(1_000.0));
    assert_eq!(p.b.bytes_received(), 20_000_000);
    let frozen_at = p
        .a_events
        .iter()
        .find(|e| e.1 == Event::Frozen)
        .map(|e| e.0)
        .expect("the outage froze the sender");
    assert!(frozen_at > down && frozen_at < up);
    let (cwnd, rto) = p.frozen_state.unwrap();
    assert_eq!(
        p.restored_state,
        Some((cwnd, rto)),
        "window and RTO are as they were"
    );
    assert!(
        cwnd > 4 * MSS as u64,
        "the window had grown before the outage"
    );
    assert_eq!(p.a.stats().freezes, 1);
    let restored_at = p
        .a_events
        .iter()
        .find(|e| e.1 == Event::Restored)
        .unwrap()
        .0;
    let early_timeout = p
        .a_events
        .iter()
        .any(|e| matches!(e.1, Event::Timeout { .. }) && e.0 < restored_at);
    assert!(
        !early_timeout,
        "no standard timeout (window cut, backoff) before RESTORE"
    );
    let sent = |from: Time, to: Time| -> Vec<u64> {
        p.a_sent
            .iter()
            .filter(|t| t.0 >= from && t.0 <= to)
            .map(|t| t.1)
            .collect()
    };
    assert!(
        sent(frozen_at, up - Dur::from_nanos(1)).is_empty(),
        "silent while frozen"
    );
    let at_restore = sent(up, up);
    let highest_before = p
        .a_sent
        .iter()
        .filter(|t| t.0 < up)
        .map(|t| t.1)
        .max()
        .unwrap();
    assert!(!at_restore.is_empty() && at_restore.len() as u64 <= cwnd / MSS as u64);
    for (k, &seq) in at_restore.iter().enumerate() {
        assert_eq!(
            seq,
            at_restore[0] + k as u64 * MSS as u64,
            "in order from the first"
        );
        assert!(seq <= highest_before, "a retransmission, not new data");
    }
    (p, up, at_restore)
}

#[test]
fn frozen_sender_keeps_window_and_rto_and_resends_the_window_on_restore() {
    let (_, _, resent) = freeze_through_outage(true);
    assert!(resent.len() > 1, "go-back-N resends the outstanding window");
}

#[test]
fn frozen_sender_restored_by_first_segment_retransmits_once() {
    let (p, up, resent) = freeze_through_outage(false);
    assert_eq!(resent.len(), 1, "only the first unacknowledged segment");
    let first = resent[0];
    let before = p.a_sent.iter().filter(|t| t.0 < up && t.1 == first).count();
    assert_eq!(before, 1, "sent once before the outage, once at RESTORE");
}

/// With no disconnection, asking on timeouts changes nothing: same segments, same times.
#[test]
fn ilc_without_outage_is_its_base_tcp() {
    let run = |ask: bool| {
        let mut c = cfg();
        c.ask_on_timeout = ask;
        let mut p = Path::new(c, "tahoe", 300_000);
        p.drop = Box::new(|n, _| n == 30 || n == 31 || n == 60);
        p.outage = Some((Time::MAX, Time::MAX));
        p.run(Time::from_secs_f64(1_000.0));
        p.trace
    };
    let (plain, ilc) = (run(false), run(true));
    assert!(!plain.is_empty());
    assert_eq!(plain, ilc);
}
