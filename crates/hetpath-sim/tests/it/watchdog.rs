//! The progress watchdog (`sim/watchdog.rs`): a run whose simulated time stops advancing
//! stops with an error naming what spins, and a legitimate burst at one instant passes.

use crate::common;

use hetpath_proto::machine::{At, Hooks, Machine, NodeView, Verdict};
use hetpath_proto::{Dur, Packet, Time};
use hetpath_sim::sim::{NodeId, RunError, DEFAULT_MAX_EVENTS_PER_INSTANT};
use hetpath_sim::{load, Simulation};

/// A machine whose deadline, once come, stays due: woken, it asks to be woken again at
/// the same instant, for ever.
struct Spinner {
    from: Time,
}

impl Machine for Spinner {
    fn hooks(&self) -> Hooks {
        Hooks::default()
    }
    fn handle_packet(&mut self, _: Time, _: At, _: &mut Packet, _: &dyn NodeView) -> Verdict {
        Verdict::Pass
    }
    fn handle_timeout(&mut self, _: Time, _: &dyn NodeView) {}
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.from)
    }
    fn kind(&self) -> &'static str {
        "spinner"
    }
}

/// `n` flows of 300 B from `a` to `b`, all at time zero, over a 1 Gbit/s link whose queue
/// holds them all; `head` goes into `[scenario]`.
fn burst(n: usize, head: &str) -> String {
    let flows: String = (0..n)
        .map(|i| format!("[[flow]]\nname = \"f{i}\"\nfrom = \"a\"\nto = \"b\"\nsize = \"300B\"\n"))
        .collect();
    common::two_node(
        "10s",
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = \"100000pkt\"",
        &flows,
    )
    .replace(
        "seed = 1",
        &format!("seed = 1\nstop_when_done = true\n{head}"),
    )
}

fn stall(sim: &Simulation) -> &hetpath_sim::sim::Stall {
    match sim.failure() {
        Some(RunError::Stalled(s)) => s,
        other => panic!("not a stall: {other:?}"),
    }
}

#[test]
fn a_machine_that_is_always_due_stops_the_run_with_an_error_naming_it() {
    let text = common::two_node("2s", "rate = \"1Mbps\"\ndelay = \"1ms\"", "");
    let mut sim = load(&text, "spin.toml", None).unwrap();
    let from = Time::ZERO + Dur::from_millis(500);
    sim.add_machine(NodeId(0), vec![], Box::new(Spinner { from }));
    // Stopped by the progress callback after some 8 million events if the watchdog
    // missed it: then there is no failure, and the test fails rather than hangs.
    let mut calls = 0;
    let finished = sim.run(&mut |_, _| {
        calls += 1;
        calls < 2000
    });
    assert!(!finished, "the run cannot end");
    assert_eq!(sim.now(), from);
    let s = stall(&sim);
    assert_eq!((s.at, s.limit), (from, DEFAULT_MAX_EVENTS_PER_INSTANT));
    assert_eq!(
        s.spinning,
        [("the spinner on node 'a'".to_string(), s.sampled)]
    );
    assert!(sim.events_executed() > DEFAULT_MAX_EVENTS_PER_INSTANT);
    let text = sim.failure().unwrap().to_string();
    assert!(!text.contains('\n'), "{text}");
    assert!(
        text.starts_with("simulated time stopped advancing at 0.500000000 s: more than 1000000 events ran at that instant ([scenario] max_events_per_instant); of the next 4096 there: 4096 by the spinner on node 'a'"),
        "{text}"
    );
}

#[test]
fn a_burst_of_twenty_thousand_flows_at_time_zero_passes_with_the_default() {
    let text = burst(20_000, "");
    let mut sim = load(&text, "burst.toml", None).unwrap();
    assert!(sim.run(&mut |_, _| true), "{:?}", sim.failure());
    let s = sim.summary(0.0);
    assert!(s.flows.iter().all(|f| f.completion_s.is_some()));
}

#[test]
fn the_same_burst_over_a_lower_limit_stops_naming_the_flows_starting() {
    let text = burst(20_000, "max_events_per_instant = 1000");
    let mut sim = load(&text, "burst.toml", None).unwrap();
    assert!(!sim.run(&mut |_, _| true));
    let s = stall(&sim);
    assert_eq!((s.at, s.limit, s.sampled), (Time::ZERO, 1000, 4096));
    // Each flow starts once: the first three of those run after the limit are named.
    assert_eq!(s.spinning.len(), 3);
    assert!(
        s.spinning
            .iter()
            .all(|(who, n)| who.starts_with("flow 'f") && *n == 1),
        "{:?}",
        s.spinning
    );
}

#[test]
fn a_limit_of_zero_is_a_scenario_error() {
    let text = burst(1, "max_events_per_instant = 0");
    let e = load(&text, "zero.toml", None).err().expect("refused");
    assert_eq!(e.place, "scenario.max_events_per_instant", "{e}");
}
