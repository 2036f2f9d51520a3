//! The split PEP between two real TCP endpoints on a scripted path: client -10 ms- PEP
//! -10 ms- server, no loss, explicit times. The PEP sees every packet at its node.

use super::*;
use crate::esp::SecurityAssociation;
use crate::packet::Addr;

const MSS: u32 = 1000;
const CLIENT: Endpoint = Endpoint {
    addr: Addr(1),
    port: 40_000,
};
const SERVER: Endpoint = Endpoint {
    addr: Addr(2),
    port: 80,
};
const HOP: Dur = Dur::from_millis(10);

fn tcp_cfg() -> TcpConfig {
    TcpConfig {
        recv_buffer: 64_000,
        ..TcpConfig::new(MSS)
    }
}

fn conn(cfg: TcpConfig) -> Box<dyn cc::CongestionControl> {
    cc::by_name("newreno", cfg.cc_config()).unwrap()
}

struct Bench {
    client: Connection,
    /// Created on the first SYN to reach the server.
    server: Option<Connection>,
    server_reads: bool,
    /// The server closes its side as soon as it is connected (a half-close).
    server_closes_first: bool,
    pep: SplitPep,
    now: Time,
    /// (arrival, packet, arrives at the PEP rather than at an end).
    flight: Vec<(Time, Packet, bool)>,
    /// Windows the PEP advertised to the client.
    windows_to_client: Vec<u64>,
}

impl Bench {
    fn new(bytes: u64, buffer: u64) -> Bench {
        let mut client = Connection::connect(tcp_cfg(), conn(tcp_cfg()), CLIENT, SERVER);
        client.write(bytes);
        let pep = SplitPep::new(SplitConfig {
            tcp: tcp_cfg(),
            cc: "newreno".into(),
            buffer,
            monitor_interval: Dur::from_millis(100),
        })
        .unwrap();
        Bench {
            client,
            server: None,
            server_reads: true,
            server_closes_first: false,
            pep,
            now: Time::ZERO,
            flight: Vec::new(),
            windows_to_client: Vec::new(),
        }
    }

    fn server(&self) -> &Connection {
        self.server.as_ref().expect("server accepted")
    }

    /// Sends what everyone has to send; the PEP's own packets leave toward their end.
    fn transmit(&mut self) {
        let now = self.now;
        while let Some(p) = self.client.poll_transmit(now) {
            self.flight.push((now + HOP, p, true));
        }
        if let Some(s) = &mut self.server {
            while let Some(p) = s.poll_transmit(now) {
                self.flight.push((now + HOP, p, true));
            }
        }
        while let Some(p) = self.pep.poll_transmit(now, &|_| true) {
            if p.ip.dst == CLIENT.addr {
                self.windows_to_client.push(p.as_tcp().unwrap().window);
            }
            self.flight.push((now + HOP, p, false));
        }
    }

    fn deliver(&mut self, p: Packet, at_pep: bool) {
        let now = self.now;
        if at_pep {
            let iface = Iface::default();
            if let Some(p) = self.pep.handle_packet(now, Hook::Arrival, p, &iface) {
                self.flight.push((now + HOP, p, false)); // not split: forwarded
            }
            return;
        }
        let seg = match &p.body {
            Body::Tcp(s) => s.clone(),
            _ => return,
        };
        if p.ip.dst == CLIENT.addr {
            self.client.handle_segment(now, &seg);
        } else if let Some(s) = &mut self.server {
            s.handle_segment(now, &seg);
        } else if seg.flags.contains(TcpFlags::SYN) {
            let mut s = Connection::accept(tcp_cfg(), conn(tcp_cfg()), SERVER, CLIENT, &seg);
            s.set_auto_read(false);
            self.server = Some(s);
        }
    }

    /// Runs until nothing is in flight and no timer is due before `until`.
    fn run(&mut self, until: Time) {
        loop {
            if let Some(s) = &mut self.server {
                if self.server_reads {
                    s.read(u64::MAX);
                }
                let done = s.peer_finished() || self.server_closes_first;
                if done && s.state() == State::Established {
                    s.close();
                }
            }
            self.transmit();
            let next_packet = self.flight.iter().map(|f| f.0).min();
            let timers = [
                self.client.poll_timeout(),
                self.server.as_ref().and_then(|s| s.poll_timeout()),
                self.pep.poll_timeout(),
            ];
            let Some(t) = timers.into_iter().flatten().chain(next_packet).min() else {
                return;
            };
            if t > until {
                return;
            }
            self.now = t.max(self.now);
            if let Some(i) = self.flight.iter().position(|f| f.0 <= self.now) {
                let (_, p, at_pep) = self.flight.remove(i);
                self.deliver(p, at_pep);
                continue;
            }
            let now = self.now;
            self.client.handle_timeout(now);
            if let Some(s) = &mut self.server {
                s.handle_timeout(now);
            }
            self.pep.handle_timeout(now, &Iface::default());
        }
    }
}

#[test]
fn relays_every_byte_and_a_close_from_either_side_closes_both_legs() {
    for server_first in [false, true] {
        let mut b = Bench::new(300_000, 50_000);
        b.server_closes_first = server_first;
        b.run(Time::from_secs_f64(1.0));
        // A half-close passes through: the client hears the server's FIN while it is
        // still sending, and goes on.
        assert_eq!(b.client.peer_finished(), server_first);
        b.client.close();
        b.run(Time::from_secs_f64(60.0));
        assert_eq!(b.server().bytes_received(), 300_000);
        assert_eq!(
            b.client.state(),
            State::Closed,
            "server first: {server_first}"
        );
        assert_eq!(
            b.server().state(),
            State::Closed,
            "server first: {server_first}"
        );
        let (near, far) = b.pep.connections().next().unwrap();
        assert_eq!((near.state(), far.state()), (State::Closed, State::Closed));
        // Transparent: the server saw the client's address and port.
        assert_eq!(b.server().remote(), CLIENT);
    }
}

#[test]
fn a_full_buffer_closes_the_window_of_the_leg_that_fills_it() {
    let buffer = 20_000;
    let mut b = Bench::new(1_000_000, buffer);
    b.server_reads = false;
    b.run(Time::from_secs_f64(10.0));
    // What left the client is held by the server's receive buffer and the PEP's two
    // buffers; the PEP told the client to stop.
    let held = tcp_cfg().recv_buffer + 2 * buffer;
    let acked = b.client.sender().bytes_acked();
    assert!(acked <= held, "{acked} acked, {held} can be held");
    assert_eq!(b.windows_to_client.last(), Some(&0));
    // Once the server reads, everything arrives.
    b.server_reads = true;
    b.client.close();
    b.run(Time::from_secs_f64(200.0));
    assert_eq!(b.server().bytes_received(), 1_000_000);
    assert_eq!(b.client.state(), State::Closed);
}

#[test]
fn a_reset_on_either_side_resets_the_other() {
    for server_resets in [true, false] {
        let mut b = Bench::new(1_000_000, 50_000);
        b.run(Time::from_secs_f64(0.5));
        assert!(b.server().bytes_received() > 0);
        if server_resets {
            b.server.as_mut().unwrap().reset();
        } else {
            b.client.reset();
        }
        b.run(Time::from_secs_f64(5.0));
        assert_eq!(
            b.client.state(),
            State::Aborted,
            "server resets: {server_resets}"
        );
        assert_eq!(
            b.server().state(),
            State::Aborted,
            "server resets: {server_resets}"
        );
    }
}

#[test]
fn esp_packets_pass_untouched() {
    let mut pep = Bench::new(0, 50_000).pep;
    let seg = TcpSegment {
        src_port: CLIENT.port,
        dst_port: SERVER.port,
        seq: 0,
        ack: 0,
        flags: TcpFlags::SYN,
        window: 65_535,
        len: 0,
        syn_options: None,
        sack: Default::default(),
        rap: None,
    };
    let esp = SecurityAssociation::new(0x1000).seal(1, seg);
    let p = Packet::new(CLIENT.addr, SERVER.addr, Body::Esp(esp));
    let out = pep.handle_packet(Time::ZERO, Hook::Arrival, p.clone(), &Iface::default());
    assert_eq!(out, Some(p));
    assert_eq!(pep.connections().count(), 0);
}
