//! `Net`: a line of nodes driven in explicit time (see the module above).

use super::NoNode;
use crate::cc::Algorithm;
use crate::crosslayer::Signal;
use crate::host::{Host, Listener};
use crate::ids::ConnId;
use crate::machine::{At, Event, Machine, Transmit, Verdict};
use crate::packet::{Addr, Endpoint, Packet, TcpSegment};
use crate::tcp::{Connection, TcpConfig};
use crate::time::{Dur, Time};
use std::any::Any;

/// Decides, per data segment crossing a hop direction (its index among the data segments
/// sent that way, and the segment), whether the hop drops it.
pub type DropRule = Box<dyn FnMut(u64, &TcpSegment) -> bool>;

/// One hop between node k and node k + 1; index 0 of each pair is the k -> k+1 direction.
pub struct Hop {
    pub delay: Dur,
    /// Serialisation time of every packet (a bottleneck of sorts); zero by default.
    pub per_packet: [Dur; 2],
    pub drop: [Option<DropRule>; 2],
    /// Both directions lose everything whose transmission starts in [down, up).
    pub cut: Option<(Time, Time)>,
    free_at: [Time; 2],
    data_sent: [u64; 2],
}

impl Hop {
    fn new(delay: Dur) -> Hop {
        Hop {
            delay,
            per_packet: [Dur::ZERO; 2],
            drop: [None, None],
            cut: None,
            free_at: [Time::ZERO; 2],
            data_sent: [0; 2],
        }
    }
    fn is_cut(&self, t: Time) -> bool {
        self.cut.is_some_and(|(down, up)| down <= t && t < up)
    }
}

/// A packet put on a hop.
#[derive(Clone, Debug)]
pub struct Sent {
    /// When its machine handed it out, and when its serialisation started.
    pub handed: Time,
    pub start: Time,
    pub from: usize,
    pub to: usize,
    pub packet: Packet,
}

impl Sent {
    pub fn seg(&self) -> &TcpSegment {
        self.packet.as_tcp().expect("a TCP segment")
    }
}

/// A machine a test can look into afterwards (`Net::machine`).
pub trait TestMachine: Machine + Any {}
impl<T: Machine + Any> TestMachine for T {}

pub struct Node {
    pub host: Host,
    pub machines: Vec<Box<dyn TestMachine>>,
}

pub struct Net {
    pub now: Time,
    pub nodes: Vec<Node>,
    pub hops: Vec<Hop>,
    /// (arrival, to, packet), in the order they were sent.
    flight: Vec<(Time, usize, Packet)>,
    pub trace: Vec<Sent>,
    /// Every event a machine reported: (time, node, machine (0 = the host), event).
    pub events: Vec<(Time, usize, usize, Event)>,
    /// Signals a node's link layer reports at given times.
    script: Vec<(Time, usize, Signal)>,
    /// Hosts' connection timers, when they are keyed (`keyed_timers`): (deadline, order
    /// made, node, connection).
    conn_timers: Option<Vec<(Time, u64, usize, ConnId)>>,
    armed: u64,
}

/// Node k's address.
pub fn addr(k: usize) -> Addr {
    Addr(k as u32 + 1)
}

impl Net {
    /// `n` nodes in a line, each hop `delay` one way.
    pub fn line(n: usize, delay: Dur) -> Net {
        Net {
            now: Time::ZERO,
            nodes: (0..n)
                .map(|k| Node {
                    host: Host::new(addr(k)),
                    machines: Vec::new(),
                })
                .collect(),
            hops: (1..n).map(|_| Hop::new(delay)).collect(),
            flight: Vec::new(),
            trace: Vec::new(),
            events: Vec::new(),
            script: Vec::new(),
            conn_timers: None,
            armed: 0,
        }
    }

    /// Drives the hosts' connection timers one by one, as the simulator does
    /// (`Host::keyed_timers`), instead of through the host's own heap.
    pub fn keyed_timers(&mut self) {
        for n in &mut self.nodes {
            n.host.keyed_timers();
        }
        self.conn_timers = Some(Vec::new());
    }

    pub fn host(&mut self, k: usize) -> &mut Host {
        &mut self.nodes[k].host
    }

    /// Machine `i` (0 = the first after the host) of node `k`, as its own type.
    pub fn machine<T: Machine + Any>(&self, k: usize, i: usize) -> &T {
        let m: &dyn Any = self.nodes[k].machines[i].as_ref();
        m.downcast_ref::<T>().expect("a machine of that type")
    }

    /// A connection of node `k`.
    pub fn conn(&self, k: usize, c: ConnId) -> &Connection {
        self.nodes[k].host.connection(c)
    }

    /// Node `to` listens on `port`; node `from` connects to it, writes `bytes` and
    /// closes. Returns the client's connection.
    pub fn transfer(
        &mut self,
        from: usize,
        to: usize,
        client: (TcpConfig, &str),
        server: Listener,
        bytes: u64,
    ) -> ConnId {
        const PORT: u16 = 80;
        self.nodes[to].host.listen(PORT, server);
        let cc = Algorithm::by_name(client.1).expect("a controller name");
        let remote = Endpoint {
            addr: addr(to),
            port: PORT,
        };
        let host = &mut self.nodes[from].host;
        let c = host
            .connect(remote, client.0, &cc, None)
            .expect("a free port");
        host.write(c, bytes);
        host.close(c);
        c
    }

    /// The first connection node `k` accepted.
    pub fn accepted(&self, k: usize) -> Option<ConnId> {
        self.events.iter().find_map(|e| match e.3 {
            Event::Accepted { conn, .. } if e.1 == k => Some(conn),
            _ => None,
        })
    }

    /// Node `k`'s link layer reports `signal` at `t`.
    pub fn signal_at(&mut self, t: Time, k: usize, signal: Signal) {
        self.script.push((t, k, signal));
    }

    /// The TCP events of node `k`'s host, with their times.
    pub fn tcp_events(&self, k: usize) -> Vec<(Time, crate::tcp::Event)> {
        self.events
            .iter()
            .filter_map(|e| match e.3 {
                Event::Tcp { event, .. } if e.1 == k && e.2 == 0 => Some((e.0, event)),
                _ => None,
            })
            .collect()
    }

    fn with_machine<R>(&mut self, k: usize, m: usize, f: impl FnOnce(&mut dyn Machine) -> R) -> R {
        let node = &mut self.nodes[k];
        if m == 0 {
            f(&mut node.host)
        } else {
            f(node.machines[m - 1].as_mut())
        }
    }

    fn machines(&self, k: usize) -> usize {
        1 + self.nodes[k].machines.len()
    }

    /// Sends what machine `m` of node `k` has to send, then handles its events.
    fn drive(&mut self, k: usize, m: usize) {
        let now = self.now;
        while let Some(t) = self.with_machine(k, m, |x| {
            Transmit::polled(|out| x.poll_transmit_into(now, &NoNode, out))
        }) {
            self.send(now, k, t.packet);
        }
        let events: Vec<Event> =
            self.with_machine(k, m, |x| std::iter::from_fn(|| x.poll_event()).collect());
        for ev in events {
            self.events.push((now, k, m, ev));
            if let Event::Signal(s) = ev {
                self.publish(k, s, Some(m));
            }
        }
        if let (0, Some(timers)) = (m, &mut self.conn_timers) {
            while let Some((c, t)) = self.nodes[k].host.poll_armed() {
                timers.push((t, self.armed, k, c));
                self.armed += 1;
            }
        }
    }

    fn publish(&mut self, k: usize, s: Signal, from: Option<usize>) {
        let now = self.now;
        for m in 0..self.machines(k) {
            if Some(m) != from {
                self.with_machine(k, m, |x| x.handle_signal(now, s, &NoNode));
                self.drive(k, m);
            }
        }
    }

    /// Routes `p` from node `k` onto the hop toward its destination.
    fn send(&mut self, handed: Time, k: usize, p: Packet) {
        let to_right = (p.ip.dst.0 as usize).saturating_sub(1) > k;
        let (hop, dir, to) = if to_right {
            (k, 0, k + 1)
        } else {
            (k - 1, 1, k - 1)
        };
        let h = &mut self.hops[hop];
        let start = h.free_at[dir].max(handed);
        h.free_at[dir] = start + h.per_packet[dir];
        let data = p.as_tcp().filter(|s| s.len > 0);
        let n = h.data_sent[dir];
        h.data_sent[dir] += data.is_some() as u64;
        let dropped = h.is_cut(start)
            || match (&mut h.drop[dir], data) {
                (Some(rule), Some(seg)) => rule(n, seg),
                _ => false,
            };
        let arrival = h.free_at[dir] + h.delay;
        self.trace.push(Sent {
            handed,
            start,
            from: k,
            to,
            packet: p.clone(),
        });
        if !dropped {
            self.flight.push((arrival, to, p));
        }
    }

    /// A packet reaches node `k`: its arrival hooks, then local delivery or forwarding.
    fn deliver(&mut self, k: usize, p: Packet) {
        let Some(p) = self.offer(k, 1..self.machines(k), At::Arrival, p) else {
            return;
        };
        if p.ip.dst != addr(k) {
            return self.send(self.now, k, p);
        }
        // The host (machine 0) comes last, as the simulator shows it local packets.
        let _ = self.offer(k, (1..self.machines(k)).chain([0]), At::Local, p);
    }

    /// Shows `p` at `at` to the machines `ms` of node `k` that hook it, in order; `None`
    /// once one consumes it.
    fn offer(
        &mut self,
        k: usize,
        ms: impl Iterator<Item = usize>,
        at: At,
        mut p: Packet,
    ) -> Option<Packet> {
        let now = self.now;
        let hooked = |x: &dyn Machine| match at {
            At::Arrival => x.hooks().arrival,
            _ => x.hooks().local,
        };
        for m in ms {
            if !self.with_machine(k, m, |x| hooked(x)) {
                continue;
            }
            let v = self.with_machine(k, m, |x| x.handle_packet(now, at, &mut p, &NoNode));
            self.drive(k, m);
            if v == Verdict::Consume {
                return None;
            }
        }
        Some(p)
    }

    /// Runs until nothing is in flight and no deadline is due by `limit`.
    pub fn run(&mut self, limit: Time) {
        for _ in 0..1_000_000 {
            for k in 0..self.nodes.len() {
                for m in 0..self.machines(k) {
                    self.drive(k, m);
                }
            }
            let deadlines =
                (0..self.nodes.len()).flat_map(|k| (0..self.machines(k)).map(move |m| (k, m)));
            let timers: Vec<(usize, usize, Time)> = deadlines
                .filter_map(|(k, m)| {
                    let t = if m == 0 {
                        self.nodes[k].host.poll_timeout()
                    } else {
                        self.nodes[k].machines[m - 1].poll_timeout()
                    };
                    t.map(|t| (k, m, t))
                })
                .collect();
            let conn_timers = self.conn_timers.as_deref().unwrap_or_default();
            let next = [
                self.flight.iter().map(|f| f.0).min(),
                timers.iter().map(|t| t.2).min(),
                conn_timers.iter().map(|t| t.0).min(),
                self.script.iter().map(|s| s.0).min(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else { return };
            if t > limit {
                return;
            }
            self.now = self.now.max(t);
            let now = self.now;
            if let Some(i) = self.flight.iter().position(|f| f.0 <= now) {
                let (_, to, p) = self.flight.remove(i);
                self.deliver(to, p);
            } else if let Some(i) = self.script.iter().position(|s| s.0 <= now) {
                let (_, k, s) = self.script.remove(i);
                self.publish(k, s, None);
            } else {
                for (k, m, t) in timers {
                    if t <= now {
                        self.with_machine(k, m, |x| x.handle_timeout(now, &NoNode));
                        self.drive(k, m);
                    }
                }
                self.fire_conn_timers(now);
            }
        }
        panic!("drive loop did not settle");
    }

    /// Keyed timers due by `now`, in (deadline, order made) order, as an event queue
    /// would run them.
    fn fire_conn_timers(&mut self, now: Time) {
        let Some(timers) = &mut self.conn_timers else {
            return;
        };
        let mut due: Vec<_> = timers.iter().copied().filter(|t| t.0 <= now).collect();
        timers.retain(|t| t.0 > now);
        due.sort_unstable();
        for (t, _, k, c) in due {
            self.nodes[k].host.handle_conn_timeout(t, c);
            self.drive(k, 0);
        }
    }
}
