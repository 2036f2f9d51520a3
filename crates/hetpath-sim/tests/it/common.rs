//! Shared helpers for the whole-scenario tests: write a scenario, run it, read results.

#![allow(dead_code)]

use hetpath_proto::machine::{At, Hooks, Machine, NodeView, Transmit, Verdict};
use hetpath_proto::packet::Body;
use hetpath_proto::{Addr, Packet, Time};
use hetpath_sim::{load, Summary};

/// One link `a`-`b` with the given extra link keys and flows (TOML snippets).
pub fn two_node(duration: &str, link_extra: &str, flows: &str) -> String {
    format!(
        r#"
[scenario]
name = "t"
duration = "{duration}"
seed = 1
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
{link_extra}
{flows}
"#
    )
}

/// The counter `name` of the machine `machine` on `node` (panics naming it if absent).
pub fn machine_counter(s: &Summary, machine: &str, node: &str, name: &str) -> u64 {
    s.machines
        .iter()
        .find(|m| m.machine == machine && m.node == node && m.counter == name)
        .unwrap_or_else(|| panic!("no counter {name} of {machine} on {node}"))
        .value
}

/// `a` -100 Mbit/s, 1 ms, 1000 packets- `r` -10 Mbit/s, `bottleneck` keys- `b`: a router
/// `r` before a bottleneck `bn` (the first link is `in`), then `rest` (flows, agents).
pub fn router_line(duration: &str, bottleneck: &str, rest: &str) -> String {
    format!(
        r#"
[scenario]
name = "line"
duration = "{duration}"
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
name = "in"
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
queue = "1000pkt"
[[link]]
name = "bn"
a = "r"
b = "b"
rate = "10Mbps"
{bottleneck}
{rest}
"#
    )
}

pub fn flow(name: &str, cc: &str, extra: &str) -> String {
    format!("[[flow]]\nname = \"{name}\"\nfrom = \"a\"\nto = \"b\"\ncc = \"{cc}\"\n{extra}\n")
}

/// Loads and runs a scenario with the run-time checks on (`Simulation::check`): a
/// violated invariant fails the test.
pub fn run(text: &str, seed: Option<u64>) -> (Summary, hetpath_sim::results::Series) {
    let mut sim = load(text, "test.toml", seed).unwrap_or_else(|e| panic!("{e}"));
    sim.check = true;
    assert!(sim.run(&mut |_, _| true));
    sim.checked().unwrap_or_else(|v| panic!("{v}"));
    (sim.summary(0.0), sim.series().clone())
}

/// The direction `from` of link (or WLAN) `name` in the results.
pub fn link<'a>(s: &'a Summary, name: &str, from: &str) -> &'a hetpath_sim::results::LinkResult {
    s.links
        .iter()
        .find(|l| l.name == name && l.from == from)
        .unwrap_or_else(|| panic!("no link {name} from {from}"))
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one takes everything.
pub fn jain(x: &[f64]) -> f64 {
    x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|r| r * r).sum::<f64>())
}

/// Seed 002's Fig. 8 (mh ~ ha/fa - n2 - ch, every link at `rate` and 20 ms), the
/// `[scenario]` keys `scenario` (it stops when done), extra `[mobile]` keys `mobile`,
/// extra tables `rest`, and one upload mh -> ch of `size` with `cc` and `tcp` keys.
pub fn fig8(
    scenario: &str,
    rate: &str,
    mobile: &str,
    rest: &str,
    size: &str,
    cc: &str,
    tcp: &str,
) -> String {
    format!(
        r#"
[scenario]
{scenario}
stop_when_done = true
[tcp]
mss = 1000
iw = 1
sack = false
delayed_ack = false
recv_buffer = "20000B"
initial_rto = "3s"
min_rto = "1s"
max_rto = "64s"
abc = false
[[node]]
name = "mh"
[[node]]
name = "ha"
[[node]]
name = "fa"
[[node]]
name = "n2"
[[node]]
name = "ch"
[[link]]
name = "n2-ha"
a = "n2"
b = "ha"
rate = "{rate}"
delay = "20ms"
[[link]]
name = "n2-fa"
a = "n2"
b = "fa"
rate = "{rate}"
delay = "20ms"
[[link]]
name = "ch-n2"
a = "ch"
b = "n2"
rate = "{rate}"
delay = "20ms"
[[base_station]]
node = "ha"
position = [0.0, 0.0]
[[base_station]]
node = "fa"
position = [450.0, 0.0]
{rest}
[mobile]
node = "mh"
home = "ha"
rate = "{rate}"
delay = "20ms"
queue = "50pkt"
{mobile}
[[flow]]
name = "up"
from = "mh"
to = "ch"
cc = "{cc}"
start = "1s"
size = "{size}"
tcp = {{ {tcp} }}
"#
    )
}

/// A 4 s disconnection at 10 s of Fig. 8's host that ends on the foreign agent's station.
pub const HANDOFF: &str =
    r#"disconnect = { count = 1, duration = "4s", first = "10s", reattach = ["fa"] }"#;

/// Goodput of flow 0 between two sample times, from the delivered-bytes series.
pub fn goodput_between(series: &hetpath_sim::results::Series, flow: u32, t0: f64, t1: f64) -> f64 {
    let s = &series.flows;
    let at = |t: f64| {
        (0..s.time_s.len())
            .filter(|&i| s.flow[i] == flow && s.time_s[i] <= t + 1e-9)
            .map(|i| s.bytes_delivered[i])
            .next_back()
            .unwrap_or(0)
    };
    (at(t1) - at(t0)) as f64 * 8.0 / (t1 - t0)
}

/// sender -1 Gbit/s- r1 -`sat`- r2 -1 Gbit/s- receiver, one flow, and `extra` (agents).
pub fn satellite(size: &str, sat: &str, extra: &str) -> String {
    format!(
        r#"
[scenario]
name = "pep"
duration = "300s"
stop_when_done = true
[[node]]
name = "s"
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d"
[[link]]
name = "side"
a = "s"
b = "r1"
rate = "1Gbps"
delay = "1ms"
queue = "1000pkt"
[[link]]
name = "sat"
a = "r1"
b = "r2"
{sat}
[[link]]
name = "rx"
a = "r2"
b = "d"
rate = "1Gbps"
delay = "1ms"
queue = "1000pkt"
[[flow]]
name = "f"
from = "s"
to = "d"
cc = "cubic"
size = "{size}"
{extra}
"#
    )
}

pub const GEO: &str = r#"rate = "10Mbps"
delay = "250ms"
queue = "300pkt""#;
pub const LOSSY_GEO: &str = r#"rate = "10Mbps"
delay = "250ms"
queue = "300pkt"
ab = { channel = { model = "bernoulli", p = 0.01 } }"#;

pub fn pep(node: &str, cc: &str) -> String {
    format!("[[agent]]\nkind = \"split-pep\"\nnode = \"{node}\"\ncc = \"{cc}\"\n")
}

/// Seed 001's path: a fixed host `fh` -10 Mbit/s, 50 ms- gateway `gw` -344 kbit/s, 265 ms
/// satellite hop `sat`- mobile host `mh`, with the paper's TCP (MSS 1224, 64 KB window,
/// 1 s minimum RTO). `head` goes into `[scenario]`, `tcp` into `[tcp]`, `sat` into the
/// satellite link, and `rest` (flows, agents) after it.
pub fn lift_path(head: &str, tcp: &str, sat: &str, rest: &str) -> String {
    format!(
        r#"
[scenario]
name = "lift"
{head}
[tcp]
mss = 1224
recv_buffer = "64KB"
min_rto = "1s"
{tcp}
[[node]]
name = "fh"
[[node]]
name = "gw"
[[node]]
name = "mh"
[[link]]
name = "wired"
a = "fh"
b = "gw"
rate = "10Mbps"
delay = "50ms"
[[link]]
name = "sat"
a = "gw"
b = "mh"
rate = "344kbps"
delay = "265ms"
queue = "200pkt"
{sat}
{rest}
"#
    )
}

/// A web server `srv` and browser `mh` over one 10 Mbit/s link `l` of 50 ms each way,
/// three pages without think time of constant objects: a main one of `main` bytes and
/// two in-line ones of `inline` bytes. `link`, `flow` and `web` add keys to the link, the
/// flow and `[flow.web]`.
pub fn web_pair(link: &str, flow: &str, main: u64, inline: u64, web: &str) -> String {
    format!(
        r#"
[scenario]
name = "web"
duration = "60s"
seed = 1
stop_when_done = true
[[node]]
name = "srv"
[[node]]
name = "mh"
[[link]]
name = "l"
a = "srv"
b = "mh"
rate = "10Mbps"
delay = "50ms"
{link}
[[flow]]
name = "w"
from = "srv"
to = "mh"
{flow}
[flow.web]
pages = 3
think = false
main_size = {{ dist = "constant", value = {main} }}
inline_count = {{ dist = "constant", value = 2 }}
inline_size = {{ dist = "constant", value = {inline} }}
{web}
"#
    )
}

/// A machine that sends raw packets (protocol 253, RFC 3692: for experimentation) of
/// `len` bytes from `from` to `to`, from time zero: `count` of them at once, or, with
/// `count` `None`, for as long as its node's queue towards `to` has room (it is woken as
/// that queue drains).
pub struct RawSender {
    from: Addr,
    to: Addr,
    len: u32,
    count: Option<u32>,
    started: bool,
}

impl RawSender {
    pub fn new(from: Addr, to: Addr, len: u32, count: Option<u32>) -> Self {
        RawSender {
            from,
            to,
            len,
            count,
            started: false,
        }
    }
}

impl Machine for RawSender {
    fn hooks(&self) -> Hooks {
        Hooks::default()
    }
    fn handle_packet(&mut self, _: Time, _: At, _: &mut Packet, _: &dyn NodeView) -> Verdict {
        Verdict::Pass
    }
    fn handle_timeout(&mut self, _: Time, _: &dyn NodeView) {
        self.started = true;
    }
    fn poll_timeout(&self) -> Option<Time> {
        (!self.started).then_some(Time::ZERO)
    }
    fn poll_transmit(&mut self, _: Time, node: &dyn NodeView) -> Option<Transmit> {
        if !self.started {
            return None;
        }
        match &mut self.count {
            Some(0) => return None,
            Some(n) => *n -= 1,
            None if !node.ready(self.to) => return None, // woken when the queue drains
            None => {}
        }
        let body = Body::Raw {
            proto: 253,
            len: self.len,
        };
        Some(Transmit::route(Packet::new(self.from, self.to, body)))
    }
}
