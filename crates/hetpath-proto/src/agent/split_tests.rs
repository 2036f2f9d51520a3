//! The split PEP between two real hosts on the shared test driver: client -10 ms- PEP
//! -10 ms- server, no loss, explicit times. The PEP sees every packet at its node.

use super::*;
use crate::esp::SecurityAssociation;
use crate::host::Listener;
use crate::ids::ConnId;
use crate::iface::Iface;
use crate::packet::Addr;
use crate::testing::{Net, NoNode};

const MSS: u32 = 1000;
const CLIENT: usize = 0;
const PEP: usize = 1;
const SERVER: usize = 2;
const PORT: u16 = 80;

fn tcp_cfg() -> TcpConfig {
    TcpConfig {
        recv_buffer: 64_000,
        ..TcpConfig::new(MSS)
    }
}

fn pep(buffer: u64) -> SplitPep {
    SplitPep::new(SplitConfig {
        tcp: tcp_cfg(),
        cc: Algorithm::NewReno,
        buffer,
        monitor_interval: Dur::from_millis(100),
    })
}

/// The client writes `bytes` (and does not close yet) through a PEP holding `buffer`.
fn bench(bytes: u64, buffer: u64, server_reads: bool) -> (Net, ConnId) {
    let mut net = Net::line(3, Dur::from_millis(10));
    net.nodes[PEP].machines.push(Box::new(pep(buffer)));
    net.host(SERVER).listen(
        PORT,
        Listener {
            auto_read: server_reads,
            ..Listener::new(tcp_cfg(), Algorithm::NewReno)
        },
    );
    let server = Endpoint {
        addr: Addr(SERVER as u32 + 1),
        port: PORT,
    };
    let client = net.host(CLIENT);
    let c = client
        .connect(server, tcp_cfg(), &Algorithm::NewReno, None)
        .unwrap();
    client.write(c, bytes);
    (net, c)
}

fn server_conn(net: &Net) -> &Connection {
    net.conn(SERVER, net.accepted(SERVER).expect("the server accepted"))
}

/// The states of the PEP's two legs.
fn legs(net: &Net) -> (State, State) {
    let (near, far) = net
        .machine::<SplitPep>(PEP, 0)
        .connections()
        .next()
        .unwrap();
    (near.state(), far.state())
}

#[test]
fn relays_every_byte_and_a_close_from_either_side_closes_both_legs() {
    use State::*;
    for server_first in [false, true] {
        let (mut net, c) = bench(300_000, 50_000, true);
        if server_first {
            // The server closes as soon as it has accepted: a half-close.
            net.run(Time::from_secs_f64(0.025));
            let s = net.accepted(SERVER).unwrap();
            net.host(SERVER).close(s);
        }
        net.run(Time::from_secs_f64(1.0));
        // A half-close passes through: the client hears the server's FIN while it is
        // still sending, and goes on.
        assert_eq!(net.conn(CLIENT, c).peer_finished(), server_first);
        net.host(CLIENT).close(c);
        net.run(Time::from_secs_f64(60.0));
        assert_eq!(server_conn(&net).bytes_received(), 300_000);
        // Whoever closed first lingers in TIME-WAIT; each leg closes toward its end as
        // that end did.
        let (client, server) = (net.conn(CLIENT, c).state(), server_conn(&net).state());
        let want = if server_first {
            (Closed, TimeWait)
        } else {
            (TimeWait, Closed)
        };
        assert_eq!((client, server), want, "server first: {server_first}");
        // Near leg toward the client, far leg toward the server: the mirror images.
        assert_eq!(legs(&net), (want.1, want.0), "server first: {server_first}");
        // Transparent: the server saw the client's address and port.
        assert_eq!(server_conn(&net).remote(), net.conn(CLIENT, c).local());
    }
}

#[test]
fn a_full_buffer_closes_the_window_of_the_leg_that_fills_it() {
    let buffer = 20_000;
    let (mut net, c) = bench(1_000_000, buffer, false);
    net.run(Time::from_secs_f64(10.0));
    // What left the client is held by the server's receive buffer and the PEP's two
    // buffers; the PEP told the client to stop.
    let held = tcp_cfg().recv_buffer + 2 * buffer;
    let acked = net.conn(CLIENT, c).sender().bytes_acked();
    assert!(acked <= held, "{acked} acked, {held} can be held");
    let mut to_client = net.trace.iter().filter(|s| s.from == PEP && s.to == CLIENT);
    assert_eq!(to_client.next_back().map(|s| s.seg().window), Some(0));
    // Once the server reads, everything arrives.
    net.host(CLIENT).close(c);
    let s = net.accepted(SERVER).unwrap();
    for _ in 0..200 {
        net.host(SERVER).read(s, u64::MAX);
        let t = net.now + Dur::from_secs(1);
        net.run(t);
    }
    assert_eq!(server_conn(&net).bytes_received(), 1_000_000);
    assert_eq!(net.conn(CLIENT, c).state(), State::TimeWait);
}

#[test]
fn a_reset_on_either_side_resets_the_other() {
    for server_resets in [true, false] {
        let (mut net, c) = bench(1_000_000, 50_000, true);
        net.run(Time::from_secs_f64(0.5));
        assert!(server_conn(&net).bytes_received() > 0);
        if server_resets {
            let s = net.accepted(SERVER).unwrap();
            net.host(SERVER).reset(s);
        } else {
            net.host(CLIENT).reset(c);
        }
        net.run(Time::from_secs_f64(5.0));
        let states = (net.conn(CLIENT, c).state(), server_conn(&net).state());
        assert_eq!(
            states,
            (State::Aborted, State::Aborted),
            "server resets: {server_resets}"
        );
        assert_eq!(legs(&net), (State::Aborted, State::Aborted));
    }
}

#[test]
fn esp_packets_pass_untouched() {
    let mut pep = pep(50_000);
    let seg = TcpSegment {
        src_port: 40_000,
        dst_port: PORT,
        flags: TcpFlags::SYN,
        window: 65_535,
        ..Default::default()
    };
    let esp = SecurityAssociation::new(0x1000).seal(1, seg);
    let p = Packet::new(Addr(1), Addr(3), Body::Esp(esp));
    let mut out = p.clone();
    let v = pep.handle_packet(Time::ZERO, At::Arrival, &mut out, &NoNode);
    assert_eq!(
        (v, out),
        (Verdict::Pass, p),
        "the PEP passes an ESP packet untouched"
    );
    assert_eq!(pep.connections().count(), 0);
}

#[test]
fn an_esp_transfer_through_the_pep_reaches_the_server_end_to_end() {
    let mut net = Net::line(3, Dur::from_millis(10));
    net.nodes[PEP].machines.push(Box::new(pep(50_000)));
    net.host(SERVER)
        .listen(PORT, Listener::new(tcp_cfg(), Algorithm::NewReno));
    net.host(SERVER).add_sa(0x1001, 0x1000);
    let server = Endpoint {
        addr: Addr(3),
        port: PORT,
    };
    let client = net.host(CLIENT);
    let c = client
        .connect(
            server,
            tcp_cfg(),
            &Algorithm::NewReno,
            Some((0x1001, 0x1000)),
        )
        .unwrap();
    client.write(c, 100_000);
    client.close(c);
    net.run(Time::from_secs_f64(60.0));
    assert_eq!(server_conn(&net).bytes_received(), 100_000);
    assert_eq!(net.machine::<SplitPep>(PEP, 0).connections().count(), 0);
    assert!(net
        .trace
        .iter()
        .all(|s| s.packet.protocol() == crate::packet::proto::ESP));
}

/// The PEP behind its node's own queue toward the server: `limit` packets, one leaving
/// every `service`, driven as the simulator drives a machine at a full queue (a packet
/// that waits holds the machine back; `Drop` lets the queue drop it).
struct Queued {
    pep: SplitPep,
    limit: usize,
    service: Dur,
    /// Packets in the queue, with the time each finishes its transmission.
    queue: VecDeque<(Time, Packet)>,
    /// A packet waiting for room (`Wait`, `Cwr`).
    held: Option<Packet>,
    /// Packets the full queue dropped (`Drop`).
    dropped: u64,
    /// Packets toward the client, handed out at once.
    out: VecDeque<Packet>,
    /// Polls every leg and relays every split at every call, as the PEP did before its
    /// legs with work (`poll_every_leg`).
    every_leg: bool,
    /// The addresses the PEP asked its node about (`NodeView::ready`), in order.
    asked: Vec<Addr>,
}

/// Gives every leg work and every split a relay due: the PEP then polls and relays as it
/// did when it polled every leg at every call.
fn poll_every_leg(pep: &mut SplitPep) {
    for k in 0..2 * pep.splits.len() {
        pep.touch(k);
    }
    for s in &mut pep.splits {
        s.unrelayed = true;
    }
}

/// The PEP's earliest deadline is its legs' and its monitor's.
fn check_deadline(pep: &SplitPep) {
    let legs = pep.connections().flat_map(|(n, f)| [n, f]);
    let fold = legs.fold(None, |t, c| earliest(t, c.poll_timeout()));
    let monitor = match &pep.monitor {
        Some(Monitor::Xcp(r)) => r.poll_timeout(),
        Some(Monitor::Load(m)) => m.poll_timeout(),
        None => None,
    };
    assert_eq!(pep.poll_timeout(), earliest(fold, monitor));
}

/// What the PEP sees of its node: the queue toward the server has room or not. It keeps
/// the questions asked (in the simulator a question notes a full queue for a wake-up).
struct QueueView {
    room: bool,
    asked: std::cell::RefCell<Vec<Addr>>,
}

impl NodeView for QueueView {
    fn iface(&self, _: IfaceId) -> Iface {
        Iface {
            up: true,
            ..Iface::default()
        }
    }
    fn ready(&self, dst: Addr) -> bool {
        self.asked.borrow_mut().push(dst);
        self.room || dst != Addr(SERVER as u32 + 1)
    }
    fn wake_on(&self, _: IfaceId) {}
}

impl Queued {
    fn occupancy(&self, now: Time) -> usize {
        self.queue.iter().filter(|q| q.0 > now).count()
    }
    fn enqueue(&mut self, now: Time, p: Packet) {
        let start = self.queue.back().map_or(now, |q| q.0.max(now));
        self.queue.push_back((start + self.service, p));
    }
    fn view(&self, now: Time) -> QueueView {
        QueueView {
            room: self.occupancy(now) < self.limit,
            asked: Default::default(),
        }
    }
    /// Takes what the PEP sends until it is held back.
    fn pull(&mut self, now: Time) {
        if let Some(p) = self.held.take() {
            if self.occupancy(now) >= self.limit {
                self.held = Some(p);
                return;
            }
            self.enqueue(now, p);
        }
        loop {
            let view = self.view(now);
            if self.every_leg {
                poll_every_leg(&mut self.pep);
            }
            let t = self.pep.poll_transmit(now, &view);
            self.asked.append(&mut view.asked.borrow_mut());
            let Some(t) = t else {
                return;
            };
            let p = t.packet;
            if p.ip.dst != Addr(SERVER as u32 + 1) {
                self.out.push_back(p);
            } else if view.room {
                self.enqueue(now, p);
            } else if self.pep.handle_full_queue(now, &p) == LocalQueue::Drop {
                self.dropped += 1;
            } else {
                self.held = Some(p);
                return;
            }
        }
    }
}

impl Machine for Queued {
    fn hooks(&self) -> Hooks {
        self.pep.hooks()
    }
    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        let view = self.view(now);
        self.pep.handle_packet(now, at, p, &view)
    }
    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        let view = self.view(now);
        if self.every_leg {
            poll_every_leg(&mut self.pep);
        }
        self.pep.handle_timeout(now, &view);
    }
    fn poll_transmit(&mut self, now: Time, _: &dyn NodeView) -> Option<Transmit> {
        self.pull(now);
        if let Some(p) = self.out.pop_front() {
            return Some(Transmit::route(p));
        }
        if self.queue.front().is_some_and(|q| q.0 <= now) {
            return self.queue.pop_front().map(|q| Transmit::route(q.1));
        }
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        check_deadline(&self.pep);
        // The queue's next departure frees room for a held packet, too.
        [self.pep.poll_timeout(), self.queue.front().map(|q| q.0)]
            .into_iter()
            .flatten()
            .min()
    }
    fn poll_event(&mut self) -> Option<Event> {
        self.pep.poll_event()
    }
}

#[test]
fn a_leg_at_a_full_local_queue_waits_reduces_its_window_or_loses_packets() {
    const BYTES: u64 = 2_000_000;
    for mode in [LocalQueue::Wait, LocalQueue::Cwr, LocalQueue::Drop] {
        let tcp = TcpConfig {
            recv_buffer: 1 << 20,
            ..TcpConfig::new(MSS)
        };
        let pep = SplitPep::new(SplitConfig {
            tcp: TcpConfig {
                local_queue: mode,
                ..tcp
            },
            cc: Algorithm::NewReno,
            buffer: 1 << 20,
            monitor_interval: Dur::from_millis(100),
        });
        // 20 packets of queue at 1 ms a packet toward the server: the far leg's slow
        // start fills it within a few round trips.
        let queued = Queued {
            pep,
            limit: 20,
            service: Dur::from_millis(1),
            queue: VecDeque::new(),
            held: None,
            dropped: 0,
            out: VecDeque::new(),
            every_leg: false,
            asked: Vec::new(),
        };
        let mut net = Net::line(3, Dur::from_millis(10));
        net.nodes[PEP].machines.push(Box::new(queued));
        net.host(SERVER)
            .listen(PORT, Listener::new(tcp, Algorithm::NewReno));
        let server = Endpoint {
            addr: Addr(SERVER as u32 + 1),
            port: PORT,
        };
        let client = net.host(CLIENT);
        let c = client
            .connect(server, tcp, &Algorithm::NewReno, None)
            .unwrap();
        client.write(c, BYTES);
        client.close(c);
        net.run(Time::from_secs_f64(60.0));
        assert_eq!(server_conn(&net).bytes_received(), BYTES, "{mode:?}");
        let q = net.machine::<Queued>(PEP, 0);
        let (_, far) = q.pep.connections().next().unwrap();
        let far = far.report();
        match mode {
            LocalQueue::Drop => {
                assert!(q.dropped > 0, "no drops at a full queue");
                assert!(far.stats.retransmissions > 0, "nothing resent");
            }
            LocalQueue::Wait => {
                assert_eq!((q.dropped, far.stats.retransmissions), (0, 0));
                assert_eq!(far.ssthresh_bytes, None, "a waiting leg reduced its window");
            }
            LocalQueue::Cwr => {
                assert_eq!((q.dropped, far.stats.retransmissions), (0, 0));
                let ssthresh = far.ssthresh_bytes.expect("the leg entered CWR");
                // Halved from a flight of about the queue and the path's 20 packets.
                assert!(ssthresh < 60 * MSS as u64, "ssthresh {ssthresh}");
            }
        }
    }
}

/// Polling only the legs with work sends what polling every leg sent, in the same order
/// and at the same times: several connections through a PEP at a full queue (where the
/// legs take turns), with losses, paced (SaTPEP) and window-based legs, under each
/// `LocalQueue` mode. A leg left out of the list (starved), or a turn taken out of order,
/// changes the trace.
#[test]
fn legs_with_work_send_as_polling_every_leg_did() {
    let run = |mode: LocalQueue, cc: &Algorithm, every_leg: bool| {
        let tcp = TcpConfig {
            recv_buffer: 1 << 20,
            ..TcpConfig::new(MSS)
        };
        let pep = SplitPep::new(SplitConfig {
            tcp: TcpConfig {
                local_queue: mode,
                ..tcp
            },
            cc: cc.clone(),
            buffer: 200_000,
            monitor_interval: Dur::from_millis(100),
        });
        let queued = Queued {
            pep,
            limit: 20,
            service: Dur::from_millis(1),
            queue: VecDeque::new(),
            held: None,
            dropped: 0,
            out: VecDeque::new(),
            every_leg,
            asked: Vec::new(),
        };
        let mut net = Net::line(3, Dur::from_millis(10));
        net.nodes[PEP].machines.push(Box::new(queued));
        // Every 50th data segment toward the server is lost.
        net.hops[1].drop[0] = Some(Box::new(|i, _| i % 50 == 49));
        net.host(SERVER)
            .listen(PORT, Listener::new(tcp, Algorithm::NewReno));
        let server = Endpoint {
            addr: Addr(SERVER as u32 + 1),
            port: PORT,
        };
        // Four transfers of different sizes, two of them opened later.
        for (k, bytes) in [400_000u64, 1_000_000, 250_000, 600_000]
            .into_iter()
            .enumerate()
        {
            if k == 2 {
                net.run(Time::from_secs_f64(0.3));
            }
            let client = net.host(CLIENT);
            let c = client
                .connect(server, tcp, &Algorithm::NewReno, None)
                .unwrap();
            client.write(c, bytes);
            client.close(c);
        }
        net.run(Time::from_secs_f64(60.0));
        let q = net.machine::<Queued>(PEP, 0);
        let reports: Vec<_> = q
            .pep
            .connections()
            .flat_map(|(n, f)| [n.report(), f.report()])
            .collect();
        let sent: Vec<_> = net
            .trace
            .iter()
            .map(|s| (s.handed, s.start, s.from, s.packet.clone()))
            .collect();
        (
            sent,
            net.events.clone(),
            reports,
            (q.dropped, q.asked.clone()),
        )
    };
    let satpep = Algorithm::Satpep(crate::cc::SatpepConfig {
        rate_bps: 4_000_000,
    });
    for mode in [LocalQueue::Wait, LocalQueue::Cwr, LocalQueue::Drop] {
        for cc in [Algorithm::NewReno, satpep.clone()] {
            let (sent, events, reports, dropped) = run(mode, &cc, false);
            assert_eq!(reports.len(), 8, "{mode:?} {cc:?}");
            assert!(
                reports
                    .iter()
                    .all(|r| r.state == State::Closed || r.state == State::TimeWait),
                "{mode:?} {cc:?}: {reports:?}"
            );
            let before = run(mode, &cc, true);
            assert!(sent == before.0, "{mode:?} {cc:?}: the packets differ");
            assert!(events == before.1, "{mode:?} {cc:?}: the events differ");
            assert_eq!((reports, dropped), (before.2, before.3), "{mode:?} {cc:?}");
        }
    }
}
