//! The progress callback (the driver's Ctrl-C check) is called every
//! `PROGRESS_EVENTS` events even when simulated time stands still, not only every 1% of
//! simulated time.

use crate::common;

use hetpath_proto::machine::{At, Hooks, Machine, NodeView, Verdict};
use hetpath_proto::{Packet, Time};
use hetpath_sim::load;
use hetpath_sim::sim::{NodeId, PROGRESS_EVENTS};

/// Wants its timeout again at the same instant, forever.
struct Spinner(Time);

impl Machine for Spinner {
    fn hooks(&self) -> Hooks {
        Hooks::default()
    }
    fn handle_packet(&mut self, _: Time, _: At, _: &mut Packet, _: &dyn NodeView) -> Verdict {
        Verdict::Pass
    }
    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        self.0 = now;
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.0)
    }
}

#[test]
fn the_callback_runs_every_few_thousand_events_when_time_stands_still() {
    let text = common::two_node("10s", "rate = \"1Mbps\"\ndelay = \"1ms\"", "");
    let mut sim = load(&text, "spin.toml", None).unwrap();
    sim.sampling = false;
    sim.add_machine(
        NodeId(0),
        Vec::new(),
        Box::new(Spinner(Time::ZERO + hetpath_proto::Dur::from_millis(1))),
    );
    let mut calls = Vec::new();
    let finished = sim.run(&mut |now, _| {
        calls.push(now);
        calls.len() < 5
    });
    assert!(!finished);
    assert_eq!(calls.len(), 5);
    let events = sim.events_executed();
    assert!(
        events <= 5 * PROGRESS_EVENTS as u64 + 1,
        "{events} events for 5 calls"
    );
}
