//! Two gateway cores joined by an in-process fake link with a fake clock: random loss,
//! duplication and reordering (a random delay per datagram), random applications at
//! both ends. Checked: every byte arrives exactly, in order, both ways, with the FINs;
//! buffers stay within their bound; refusals, resets and half-closes reach the other
//! side; a restarted or silent peer resets the connections; no input panics a core.

use super::*;
use crate::pep::config::{Match, Ports, Subnet};
use crate::pep::gateway_types::mss_for;
use crate::pep::page_buf::mapped_len;
use crate::pep::seal::{Aead, Psk};
use hetpath_proto::cc::Algorithm;
use hetpath_proto::tcp::Pacing;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// splitmix64: the link's and the applications' draws, from the case's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[derive(Clone, Copy, Debug)]
struct Link {
    loss: f64,
    dup: f64,
    delay: Dur,
    /// Each datagram's extra random delay: reordering.
    jitter: Dur,
}

impl Link {
    const CLEAN: Link = Link {
        loss: 0.0,
        dup: 0.0,
        delay: Dur::from_millis(50),
        jitter: Dur::ZERO,
    };
}

fn addr(s: &str) -> SocketAddrV4 {
    s.parse().unwrap()
}

const CLIENT: &str = "10.1.0.2:40000";
const SERVER: &str = "10.2.0.2:5001";

/// A gateway's configuration; `seed` seeds its randomness (a new seed: a new run).
fn config(role: Role, seed: u64, buffer: usize, max_datagram: usize) -> GatewayConfig {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_be_bytes());
    GatewayConfig {
        role,
        psk: Psk::new([7; 32]),
        aead: Aead::ChaCha20Poly1305,
        seed: s,
        rekey_after: Dur::from_secs(120),
        cc: Algorithm::by_name("hybla").unwrap(),
        tcp: TcpConfig {
            pacing: Some(Pacing::HYBLA),
            ..TcpConfig::new(mss_for(max_datagram))
        },
        buffer,
        max_datagram,
        max_connections: 16,
        keepalive: Dur::from_secs(1),
        peer_timeout: Dur::from_secs(30),
        rate_bps: None,
        monitor_interval: Dur::from_millis(600),
        allow: None,
    }
}

/// One connection's applications: the client's behind A, the server's behind B.
#[derive(Default)]
struct App {
    up: Vec<u8>,
    down: Vec<u8>,
    up_written: usize,
    down_written: usize,
    /// What B's application got (from the client) and A's (from the server).
    at_b: Vec<u8>,
    at_a: Vec<u8>,
    fin_at_a: bool,
    fin_at_b: bool,
    closed_a: bool,
    closed_b: bool,
    connected: bool,
    accepted: bool,
    refused: Option<RefuseReason>,
    reset_a: Option<ResetWhy>,
    reset_b: Option<ResetWhy>,
    /// How B's application answers the connect.
    refuse_with: Option<RefuseReason>,
    /// A's application resets after sending this much.
    reset_after: Option<usize>,
    /// B's application closes before reading anything (half-close the other way).
    b_closes_first: bool,
}

struct Sim {
    a: Gateway,
    b: Gateway,
    link: Link,
    rng: Rng,
    now: Time,
    /// (arrival, to B, datagram, order of sending).
    flight: Vec<(Time, bool, Vec<u8>, u64)>,
    sent: u64,
    apps: BTreeMap<ConnId, App>,
    /// Most bytes an application reads (or writes) per step: slow ends.
    read_cap: usize,
    write_cap: usize,
    /// Drop everything both ways (the peer is gone).
    cut: bool,
    /// Drop what B sends until then.
    mute_b_until: Time,
    /// Every datagram sent, as an attacker on the path records it: (to B, bytes).
    recorded: Vec<(bool, Vec<u8>)>,
}

impl Sim {
    fn new(seed: u64, link: Link, buffer: usize, max_datagram: usize) -> Sim {
        Sim {
            a: Gateway::new(config(Role::A, 100, buffer, max_datagram), Time::ZERO),
            b: Gateway::new(config(Role::B, 200, buffer, max_datagram), Time::ZERO),
            link,
            rng: Rng(seed),
            now: Time::ZERO,
            flight: Vec::new(),
            sent: 0,
            apps: BTreeMap::new(),
            read_cap: usize::MAX,
            write_cap: usize::MAX,
            cut: false,
            mute_b_until: Time::ZERO,
            recorded: Vec::new(),
        }
    }

    fn open(&mut self, app: App) -> ConnId {
        let id = self.a.open(self.now, addr(CLIENT), addr(SERVER)).unwrap();
        self.apps.insert(id, app);
        id
    }

    fn transmit(&mut self) {
        for to_b in [true, false] {
            loop {
                let g = if to_b { &mut self.a } else { &mut self.b };
                let Some(d) = g.poll_transmit(self.now) else {
                    break;
                };
                assert!(d.len() <= g.config().max_datagram, "datagram too long");
                self.recorded.push((to_b, d.clone()));
                if self.cut || (!to_b && self.now < self.mute_b_until) {
                    continue;
                }
                let copies = 1 + self.rng.chance(self.link.dup) as usize;
                for _ in 0..copies {
                    if self.rng.chance(self.link.loss) {
                        continue;
                    }
                    let jitter = Dur(self.rng.below(self.link.jitter.0 + 1));
                    let at = self.now + self.link.delay + jitter;
                    self.sent += 1;
                    self.flight.push((at, to_b, d.clone(), self.sent));
                }
            }
        }
    }

    fn events(&mut self) {
        while let Some(e) = self.a.poll_event() {
            match e {
                Event::Accepted { conn } => self.apps.get_mut(&conn).unwrap().accepted = true,
                Event::Refused { conn, reason } => {
                    self.apps.get_mut(&conn).unwrap().refused = Some(reason)
                }
                Event::Reset { conn, why } => self.apps.get_mut(&conn).unwrap().reset_a = Some(why),
                Event::Closed { conn } => self.apps.get_mut(&conn).unwrap().closed_a = true,
                Event::Connect { .. } => panic!("A asked to connect"),
                Event::Readable { .. } | Event::Writable { .. } => {}
            }
        }
        while let Some(e) = self.b.poll_event() {
            match e {
                Event::Connect {
                    conn,
                    client,
                    server,
                } => {
                    assert_eq!((client, server), (addr(CLIENT), addr(SERVER)));
                    let app = self.apps.get_mut(&conn).unwrap();
                    match app.refuse_with {
                        Some(r) => self.b.refuse(conn, r),
                        None => {
                            app.connected = true;
                            self.b.connected(conn);
                        }
                    }
                }
                Event::Reset { conn, why } => self.apps.get_mut(&conn).unwrap().reset_b = Some(why),
                Event::Closed { conn } => self.apps.get_mut(&conn).unwrap().closed_b = true,
                Event::Accepted { .. } | Event::Refused { .. } => panic!("B told of an open"),
                Event::Readable { .. } | Event::Writable { .. } => {}
            }
        }
    }

    /// The applications write, read and close as far as their caps allow.
    fn apps(&mut self) {
        let ids: Vec<ConnId> = self.apps.keys().copied().collect();
        for id in ids {
            let app = self.apps.get_mut(&id).unwrap();
            // A's side: the client.
            if self.a.contains(id) {
                let limit = app.reset_after.unwrap_or(usize::MAX).min(app.up.len());
                let end = limit.min(app.up_written.saturating_add(self.write_cap));
                app.up_written += self.a.write(id, &app.up[app.up_written..end]);
                if app.reset_after.is_some_and(|r| app.up_written >= r) {
                    self.a.reset(id);
                    continue;
                }
                if app.up_written == app.up.len() {
                    self.a.close(id);
                }
                read(&mut self.a, id, &mut app.at_a, self.read_cap);
                app.fin_at_a |= self.a.peer_finished(id);
            }
            // B's side: the server.
            if app.connected && self.b.contains(id) {
                if app.b_closes_first {
                    self.b.close(id);
                }
                let end = app
                    .down
                    .len()
                    .min(app.down_written.saturating_add(self.write_cap));
                app.down_written += self.b.write(id, &app.down[app.down_written..end]);
                if app.down_written == app.down.len() {
                    self.b.close(id);
                }
                read(&mut self.b, id, &mut app.at_b, self.read_cap);
                app.fin_at_b |= self.b.peer_finished(id);
            }
        }
    }

    fn check_bounds(&self) {
        for g in [&self.a, &self.b] {
            let (held, limit) = g.buffered();
            assert!(held <= limit, "{held} buffered over a bound of {limit}");
            assert!(limit <= 2 * g.config().buffer as u64 * g.connections() as u64);
            let most = 2 * mapped_len(g.config().buffer) as u64 * g.connections() as u64;
            let allocated = g.allocated();
            assert!(allocated <= most, "{allocated} mapped over {most}");
        }
    }

    /// One step: transmit, deliver what is due, run the clocks, the applications.
    fn step(&mut self) {
        self.transmit();
        let next = [self.a.poll_timeout(), self.b.poll_timeout()]
            .into_iter()
            .flatten()
            .chain(self.flight.iter().map(|f| f.0))
            .min()
            .unwrap_or(Time::MAX);
        // Applications act at least every 10 ms.
        self.now = next.min(self.now + Dur::from_millis(10)).max(self.now);
        self.flight.sort_by_key(|f| (f.0, f.3));
        let due = self.flight.partition_point(|f| f.0 <= self.now);
        for (_, to_b, d, _) in self.flight.drain(..due).collect::<Vec<_>>() {
            let g = if to_b { &mut self.b } else { &mut self.a };
            g.handle_datagram(self.now, &d).ok();
        }
        for g in [&mut self.a, &mut self.b] {
            if g.poll_timeout().is_some_and(|t| t <= self.now) {
                g.handle_timeout(self.now);
            }
        }
        self.events();
        self.apps();
        self.events();
        // Idle buffers unmapped at every step, the most often a driver could: no held
        // byte may be lost by it.
        self.a.release_idle();
        self.b.release_idle();
        self.check_bounds();
    }

    fn run_until(&mut self, limit: Dur, mut done: impl FnMut(&Sim) -> bool) -> bool {
        let end = self.now + limit;
        while self.now < end {
            self.step();
            if done(self) {
                return true;
            }
        }
        false
    }
}

fn read(g: &mut Gateway, id: ConnId, into: &mut Vec<u8>, cap: usize) {
    let mut left = cap;
    while left > 0 {
        let b = g.peek(id);
        if b.is_empty() {
            break;
        }
        let n = b.len().min(left);
        into.extend_from_slice(&b[..n]);
        g.consume(id, n);
        left -= n;
    }
}

fn finished(app: &App) -> bool {
    app.closed_a && app.closed_b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random streams both ways over a lossy, duplicating, reordering link arrive
    /// exactly, with both FINs, and the buffers keep within their bound.
    #[test]
    fn streams_arrive_exactly_over_a_bad_link(
        seed in any::<u64>(),
        loss in 0.0f64..0.08,
        dup in 0.0f64..0.1,
        jitter_ms in 0u64..80,
        conns in 1usize..4,
        up in 0usize..150_000,
        down in 0usize..150_000,
        buffer in prop::sample::select(vec![4096usize, 20_000, 65_536]),
        max_datagram in prop::sample::select(vec![576usize, 1472]),
        slow in any::<bool>(),
        shaped in any::<bool>(),
        cc in prop::sample::select(vec!["hybla", "cubic", "newreno", "westwood+", "xcp-pep", "mpcp-pep"]),
        linux in any::<bool>(),
    ) {
        let link = Link { loss, dup, delay: Dur::from_millis(40), jitter: Dur::from_millis(jitter_ms) };
        let mut sim = Sim::new(seed, link, buffer, max_datagram);
        let needs_rate = cc.ends_with("-pep");
        for g in [&mut sim.a, &mut sim.b] {
            let mut cfg = g.config().clone();
            cfg.cc = Algorithm::by_name(cc).unwrap();
            cfg.rate_bps = (shaped || needs_rate).then_some(20_000_000);
            if linux {
                // The linux profile's main keys: timestamps on every segment, PRR, a
                // 200 ms minimum RTO, IW 10, a separate handshake ACK.
                cfg.tcp.timestamps = true;
                cfg.tcp.recovery = tcp::Recovery::PrrSsrb;
                cfg.tcp.cwnd_validation = true;
                cfg.tcp.rto.min = Dur::from_millis(200);
                cfg.tcp.initial_window = 10 * cfg.tcp.mss as u64;
                cfg.tcp.handshake_ack = tcp::HandshakeAck::Separate;
            }
            *g = Gateway::new(cfg, Time::ZERO);
        }
        if slow {
            sim.read_cap = 3000;
            sim.write_cap = 5000;
        }
        let mut ids = Vec::new();
        for k in 0..conns {
            let (u, d) = (up / (k + 1), down / (k + 1));
            let app = App { up: sim.rng.bytes(u), down: sim.rng.bytes(d), ..App::default() };
            ids.push(sim.open(app));
        }
        let ok = sim.run_until(Dur::from_secs(1200), |s| s.apps.values().all(finished));
        for id in &ids {
            let app = &sim.apps[id];
            prop_assert_eq!(app.reset_a, None);
            prop_assert_eq!(app.reset_b, None);
            prop_assert!(app.accepted);
            prop_assert!(app.at_b == app.up, "A -> B: {} of {} bytes, equal prefix: {}", app.at_b.len(), app.up.len(), app.up.starts_with(&app.at_b));
            prop_assert!(app.at_a == app.down, "B -> A: {} of {} bytes", app.at_a.len(), app.down.len());
            prop_assert!(app.fin_at_a && app.fin_at_b);
        }
        prop_assert!(ok, "not all connections closed");
        prop_assert_eq!((sim.a.allocated(), sim.b.allocated()), (0, 0), "buffers of finished connections unmapped");
        // Closed connections are forgotten once TIME-WAIT ends.
        sim.run_until(TIME_WAIT + TIME_WAIT + Dur::from_secs(2), |_| false);
        prop_assert_eq!(sim.a.connections(), 0);
        prop_assert_eq!(sim.b.connections(), 0);
    }

    /// No bytes panic a core, and none that fail to authenticate change it.
    #[test]
    fn any_datagram_is_harmless(junk in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let mut sim = Sim::new(1, Link::CLEAN, 8192, 1472);
        let id = sim.open(App { up: vec![1; 10], ..App::default() });
        sim.a.handle_datagram(sim.now, &junk).ok();
        sim.b.handle_datagram(sim.now, &junk).ok();
        prop_assert!(sim.run_until(Dur::from_secs(30), |s| finished(&s.apps[&id])));
    }

    /// Authenticated frames of any content (a peer with a bug) do not panic a core.
    #[test]
    fn any_plaintext_is_harmless(frames in proptest::collection::vec(any::<u8>(), 0..1400)) {
        let mut sim = Sim::new(2, Link::CLEAN, 8192, 1472);
        sim.open(App { up: vec![1; 10], ..App::default() });
        sim.run_until(Dur::from_millis(300), |_| false);
        let mut d = Vec::new();
        sim.a.sessions.seal(&frames, &mut d).unwrap();
        sim.b.handle_datagram(sim.now, &d).ok();
        let mut d = Vec::new();
        sim.b.sessions.seal(&frames, &mut d).unwrap();
        sim.a.handle_datagram(sim.now, &d).ok();
        sim.run_until(Dur::from_secs(5), |_| false);
    }
}

#[test]
fn a_refusal_reaches_the_client_before_any_accept() {
    let mut sim = Sim::new(3, Link::CLEAN, 8192, 1472);
    let id = sim.open(App {
        up: vec![9; 5000],
        refuse_with: Some(RefuseReason::Refused),
        ..App::default()
    });
    assert!(sim.run_until(Dur::from_secs(10), |s| s.apps[&id].refused.is_some()));
    let app = &sim.apps[&id];
    assert_eq!(app.refused, Some(RefuseReason::Refused));
    assert!(!app.accepted && app.at_b.is_empty());
    assert!(!sim.a.contains(id) && !sim.b.contains(id));
    assert_eq!(sim.a.stats().refused, 1);
}

#[test]
fn a_lost_refusal_is_repeated_without_a_second_connect() {
    let mut sim = Sim::new(4, Link::CLEAN, 8192, 1472);
    let id = sim.open(App {
        refuse_with: Some(RefuseReason::Unreachable),
        ..App::default()
    });
    // Lose everything B sends for the first 1.5 s: the Refuse is lost, A's SYN (and
    // its Open) is retransmitted after the initial RTO.
    sim.mute_b_until = Time(1_500_000_000);
    assert!(sim.run_until(Dur::from_secs(10), |s| s.apps[&id].refused.is_some()));
    assert_eq!(sim.apps[&id].refused, Some(RefuseReason::Unreachable));
    assert_eq!(sim.b.stats().opened, 1, "asked to connect once");
    assert!(sim.now > sim.mute_b_until);
}

#[test]
fn b_refuses_what_its_match_does_not_allow() {
    let mut sim = Sim::new(5, Link::CLEAN, 8192, 1472);
    let mut cfg = config(Role::B, 200, 8192, 1472);
    cfg.allow = Some(Match {
        sources: vec![Subnet::parse("10.1.0.0/24").unwrap()],
        destinations: vec![Subnet::parse("10.2.0.0/24").unwrap()],
        ports: vec![Ports { lo: 80, hi: 80 }],
        ..Match::default()
    });
    sim.b = Gateway::new(cfg, Time::ZERO);
    let id = sim.open(App::default());
    assert!(sim.run_until(Dur::from_secs(5), |s| s.apps[&id].refused.is_some()));
    assert_eq!(sim.apps[&id].refused, Some(RefuseReason::Policy));
}

#[test]
fn a_half_close_lets_the_other_direction_finish() {
    let mut sim = Sim::new(6, Link::CLEAN, 16_384, 1472);
    // The server closes first with nothing to send, then still reads 200 kB.
    let up = Rng(9).bytes(200_000);
    let id = sim.open(App {
        up: up.clone(),
        b_closes_first: true,
        ..App::default()
    });
    assert!(sim.run_until(Dur::from_secs(60), |s| s.apps[&id].fin_at_a));
    assert!(
        sim.apps[&id].at_b.len() < up.len(),
        "A saw B's FIN before sending all"
    );
    assert!(sim.run_until(Dur::from_secs(120), |s| finished(&s.apps[&id])));
    let app = &sim.apps[&id];
    assert!(app.at_b == up && app.at_a.is_empty() && app.fin_at_b);
}

#[test]
fn a_reset_on_either_side_reaches_the_other() {
    let mut sim = Sim::new(7, Link::CLEAN, 16_384, 1472);
    let id = sim.open(App {
        up: vec![3; 100_000],
        reset_after: Some(30_000),
        ..App::default()
    });
    assert!(sim.run_until(Dur::from_secs(30), |s| s.apps[&id].reset_b.is_some()));
    assert_eq!(sim.apps[&id].reset_b, Some(ResetWhy::Peer));
    assert!(!sim.a.contains(id) && !sim.b.contains(id));

    // From B's side: its application resets while data flows.
    let id = sim.open(App {
        down: vec![4; 100_000],
        ..App::default()
    });
    assert!(sim.run_until(Dur::from_secs(30), |s| s.apps[&id].at_a.len() > 20_000));
    sim.b.reset(id);
    assert!(sim.run_until(Dur::from_secs(30), |s| s.apps[&id].reset_a.is_some()));
    assert_eq!(sim.apps[&id].reset_a, Some(ResetWhy::Peer));
    assert!(!sim.apps[&id].fin_at_a, "never a clean end");
}

#[test]
fn a_restarted_peer_resets_every_connection() {
    let mut sim = Sim::new(8, Link::CLEAN, 65_536, 1472);
    sim.read_cap = 20_000;
    let ids = [
        sim.open(App {
            down: vec![5; 2_000_000],
            ..App::default()
        }),
        sim.open(App {
            up: vec![6; 2_000_000],
            ..App::default()
        }),
    ];
    assert!(sim.run_until(Dur::from_secs(30), |s| s.apps[&ids[0]].at_a.len() > 100_000));
    // B restarts: a new core, a later epoch; what was in flight is lost.
    sim.flight.clear();
    sim.b = Gateway::new(config(Role::B, 300, 65_536, 1472), sim.now);
    assert!(sim.run_until(Dur::from_secs(5), |s| ids
        .iter()
        .all(|i| s.apps[i].reset_a.is_some())));
    for id in ids {
        let app = &sim.apps[&id];
        assert!(matches!(
            app.reset_a,
            Some(ResetWhy::PeerRestarted | ResetWhy::Peer)
        ));
        assert!(!sim.a.contains(id));
    }
    assert!(
        !sim.apps[&ids[0]].fin_at_a,
        "the download never ends cleanly"
    );
    assert_eq!(sim.a.stats().peer_restarts, 1);
}

#[test]
fn a_silent_peer_resets_the_connections() {
    let mut sim = Sim::new(9, Link::CLEAN, 65_536, 1472);
    let id = sim.open(App {
        down: vec![5; 10_000_000],
        ..App::default()
    });
    assert!(sim.run_until(Dur::from_secs(30), |s| s.apps[&id].at_a.len() > 100_000));
    // The link is cut: A, only receiving, hears nothing more.
    sim.cut = true;
    sim.flight.clear();
    let cut = sim.now;
    assert!(sim.run_until(Dur::from_secs(40), |s| s.apps[&id].reset_a.is_some()));
    assert_eq!(sim.apps[&id].reset_a, Some(ResetWhy::PeerSilent));
    assert!(sim.now.since(cut) >= Dur::from_secs(30));
}

#[test]
fn mss_fits_a_1500_byte_mtu() {
    let cfg = config(Role::A, 1, 8192, 1472);
    let mss = cfg.mss() as usize;
    assert_eq!(
        mss + tcpseg::MAX_HEADER + FRAME_HEADER + seal::OVERHEAD,
        1472
    );
}

/// Every controller of hetpath-proto carries streams exactly, shaped at the link's rate:
/// RAPPEP's (xcp-pep, mpcp-pep) fed by the monitor on the shaper, satpep paced at it.
#[test]
fn every_controller_carries_streams_exactly() {
    for cc in hetpath_proto::cc::NAMES {
        let link = Link {
            loss: 0.01,
            dup: 0.01,
            delay: Dur::from_millis(100),
            jitter: Dur::from_millis(5),
        };
        let mut sim = Sim::new(11, link, 256 << 10, 1472);
        for g in [&mut sim.a, &mut sim.b] {
            let mut cfg = g.config().clone();
            cfg.rate_bps = Some(10_000_000);
            cfg.cc = match Algorithm::by_name(cc).unwrap() {
                Algorithm::Satpep(_) => Algorithm::Satpep(hetpath_proto::cc::SatpepConfig {
                    rate_bps: 10_000_000,
                }),
                a => a,
            };
            *g = Gateway::new(cfg, Time::ZERO);
        }
        let mut rng = Rng(5);
        let id = sim.open(App {
            up: rng.bytes(400_000),
            down: rng.bytes(300_000),
            ..App::default()
        });
        let ok = sim.run_until(Dur::from_secs(300), |s| finished(&s.apps[&id]));
        let app = &sim.apps[&id];
        assert!(ok, "{cc}: not finished");
        assert!(
            app.at_b == app.up && app.at_a == app.down,
            "{cc}: bytes differ"
        );
        eprintln!("{cc}: {:.1} s", sim.now.as_secs_f64());
    }
}

/// Not a check: how long 10 MB take over a GEO hop (2 x 300 ms, 0.5% loss each way)
/// with the shaper at 10 Mbit/s. `cargo test -- --ignored geo_goodput --nocapture`.
#[test]
#[ignore]
fn geo_goodput() {
    for cc in ["hybla", "cubic", "newreno", "xcp-pep", "mpcp-pep"] {
        let link = Link {
            loss: 0.005,
            dup: 0.0,
            delay: Dur::from_millis(300),
            jitter: Dur::ZERO,
        };
        let mut sim = Sim::new(1, link, 4 << 20, 1472);
        for g in [&mut sim.a, &mut sim.b] {
            let mut cfg = g.config().clone();
            cfg.rate_bps = Some(10_000_000);
            cfg.cc = Algorithm::by_name(cc).unwrap();
            *g = Gateway::new(cfg, Time::ZERO);
        }
        let id = sim.open(App {
            up: vec![1; 10_000_000],
            ..App::default()
        });
        assert!(sim.run_until(Dur::from_secs(600), |s| s.apps[&id].fin_at_b));
        let secs = sim.now.as_secs_f64();
        eprintln!(
            "{cc}: 10 MB in {secs:.1} s, {:.2} Mbit/s, {} retransmissions",
            80.0 / secs,
            sim.a.retransmissions()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Authenticated, well-formed segments with arbitrary header values (a peer with a
    /// bug, or a key holder misbehaving) do not panic a core or its TCP.
    #[test]
    fn any_authenticated_segment_is_harmless(
        segs in proptest::collection::vec(
            (any::<u8>(), 0u64..1 << 40, 0u64..1 << 40, any::<u32>(), 0usize..3000,
             proptest::collection::vec((0u64..1 << 40, 0u64..1 << 40), 0..4), any::<bool>()),
            1..12),
    ) {
        let mut sim = Sim::new(3, Link::CLEAN, 8192, 1472);
        let id = sim.open(App { up: vec![1; 50_000], down: vec![2; 50_000], ..App::default() });
        sim.run_until(Dur::from_millis(300), |_| false);
        for (flags, seq, ack, window, len, sack, syn_opts) in segs {
            let seg = TcpSegment {
                flags: TcpFlags(flags),
                seq,
                ack,
                window: window as u64,
                len: len.min(1200) as u32,
                sack: sack.iter().map(|&(a, b)| hetpath_proto::packet::SackBlock { start: a, end: b }).collect(),
                syn_options: syn_opts.then_some(hetpath_proto::packet::SynOptions { mss: 0, sack_permitted: true, window_scale: 14 }),
                ..TcpSegment::default()
            };
            let mut body = Vec::new();
            let payload = vec![0u8; seg.len as usize];
            prop_assert!(tcpseg::encode(&seg, &payload, 1400, &mut body));
            let mut plain = Vec::new();
            Frame::Segment { conn: id, bytes: body }.encode(&mut plain).unwrap();
            let mut d = Vec::new();
            sim.b.sessions.seal(&plain, &mut d).unwrap();
            sim.a.handle_datagram(sim.now, &d).ok();
            sim.step();
        }
        sim.run_until(Dur::from_secs(20), |_| false);
        sim.check_bounds();
    }
}

/// With `rate_bps` the datagrams leave no faster than the link's rate (headers
/// included), whatever the window, and the transfer still completes.
#[test]
fn the_shaper_keeps_to_the_rate() {
    let mut sim = Sim::new(12, Link::CLEAN, 1 << 20, 1472);
    for g in [&mut sim.a, &mut sim.b] {
        let mut cfg = g.config().clone();
        cfg.rate_bps = Some(2_000_000);
        *g = Gateway::new(cfg, Time::ZERO);
    }
    let id = sim.open(App {
        up: vec![7; 1_000_000],
        ..App::default()
    });
    // (time, bytes on the wire so far) after each step.
    let mut sent: Vec<(Time, u64)> = Vec::new();
    while !sim.apps[&id].fin_at_b && sim.now < Time(60_000_000_000) {
        sim.step();
        let st = sim.a.stats();
        sent.push((sim.now, st.bytes_sent + 28 * st.datagrams_sent));
    }
    assert!(sim.apps[&id].fin_at_b);
    // Over every stretch of at least 200 ms, no more than the rate allows (plus the
    // shaper's credit and a datagram); over the whole transfer, close to it.
    let allowed = |secs: f64| 2_000_000.0 / 8.0 * (secs + 0.002) + 1500.0;
    for (k, &(t0, b0)) in sent.iter().enumerate().step_by(7) {
        for &(t1, b1) in &sent[k..] {
            let secs = t1.since(t0).as_secs_f64();
            if secs >= 0.2 {
                assert!(
                    (b1 - b0) as f64 <= allowed(secs),
                    "{} bytes in {secs} s",
                    b1 - b0
                );
            }
        }
    }
    let (t_end, b_end) = sent[sent.len() - 1];
    let rate = b_end as f64 * 8.0 / t_end.as_secs_f64();
    assert!(rate <= 2_000_000.0 * 1.01, "{rate} bit/s");
    assert!(
        rate >= 2_000_000.0 * 0.8,
        "{rate} bit/s: the link kept busy"
    );
}

#[path = "gateway_session_tests.rs"]
mod session_tests;

/// A client that never reads pins at most its connection's two buffers on each gateway
/// (the bytes in flight), and once it reads everything they are unmapped, before
/// TIME-WAIT ends.
#[test]
fn a_client_that_never_reads_holds_its_buffers_and_no_more() {
    let buffer = 65_536;
    let mut sim = Sim::new(3, Link::CLEAN, buffer, 1472);
    sim.read_cap = 0;
    let down = sim.rng.bytes(1_000_000);
    let id = sim.open(App {
        down: down.clone(),
        ..App::default()
    });
    sim.run_until(Dur::from_secs(20), |_| false);
    let ring = mapped_len(buffer) as u64;
    assert_eq!(
        sim.a.allocated(),
        ring,
        "A holds the receive window it advertised"
    );
    assert!(sim.b.allocated() <= 2 * ring);
    assert!(
        sim.b.allocated() >= ring,
        "B holds what A has not acknowledged"
    );
    sim.read_cap = usize::MAX;
    assert!(sim.run_until(Dur::from_secs(60), |s| finished(&s.apps[&id])));
    assert_eq!(sim.apps[&id].at_a, down);
    sim.step();
    assert_eq!((sim.a.allocated(), sim.b.allocated()), (0, 0));
}
