//! A machine written outside both crates runs on the simulator through the contract
//! alone: the walk-through of docs/architecture.md ("Adding a machine"), as a test. The
//! toy counts the pure ACKs its node sends over one link and reports the count to its
//! node's other machines as it goes; it changes nothing. A second toy floods a link, to
//! check the flow control the contract promises (`NodeView::ready`).

use crate::common;

use hetpath_proto::crosslayer::Signal;
use hetpath_proto::machine::{At, Hooks, Machine, NodeView, Verdict};
use hetpath_proto::{Packet, Time};
use hetpath_sim::load;
use hetpath_sim::sim::{node_addr, DirId, NodeId};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct AckCounter {
    acks: Arc<AtomicU64>,
    /// Signals heard from the node's other machines (none expected here).
    heard: Arc<AtomicU64>,
}

impl Machine for AckCounter {
    fn hooks(&self) -> Hooks {
        Hooks {
            departure: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(
        &mut self,
        _now: Time,
        at: At,
        p: &mut Packet,
        node: &dyn NodeView,
    ) -> Verdict {
        assert!(matches!(at, At::Departure(_)));
        assert!(node.iface(hetpath_proto::IfaceId(0)).up);
        if p.as_tcp().is_some_and(|s| s.len == 0) {
            self.acks.fetch_add(1, Ordering::Relaxed);
        }
        Verdict::Pass
    }

    fn handle_signal(&mut self, _: Time, _: Signal, _: &dyn NodeView) {
        self.heard.fetch_add(1, Ordering::Relaxed);
    }
}

fn scenario() -> String {
    common::two_node(
        "20s",
        "rate = \"10Mbps\"\ndelay = \"20ms\"\nab = { channel = { model = \"bernoulli\", p = 0.01 } }",
        &common::flow("f", "newreno", "size = \"3MB\""),
    )
}

#[test]
fn a_toy_machine_sees_every_ack_and_changes_nothing() {
    let text = scenario();
    let (plain, _) = common::run(&text, None);
    let mut sim = load(&text, "toy.toml", None).unwrap();
    // The b -> a direction of link "l": where b's ACKs go.
    let (b, back) = (NodeId(1), DirId(1));
    let (acks, heard) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let counter = AckCounter {
        acks: acks.clone(),
        heard: heard.clone(),
    };
    sim.add_machine(b, vec![back], Box::new(counter));
    let seen = Arc::new(AtomicU64::new(0));
    let tap = seen.clone();
    sim.dir_mut(back).capture = Some(Box::new(move |_, f| {
        if f.packet.as_tcp().is_some_and(|s| s.len == 0) {
            tap.fetch_add(1, Ordering::Relaxed);
        }
    }));
    assert!(sim.run(&mut |_, _| true));
    let counted = acks.load(Ordering::Relaxed);
    assert!(counted > 1000, "{counted}");
    assert_eq!(counted, seen.load(Ordering::Relaxed));
    assert_eq!(heard.load(Ordering::Relaxed), 0);
    let mut with = sim.summary(0.0);
    with.wall_time_s = plain.wall_time_s;
    assert_eq!(
        with, plain,
        "a machine that passes every packet changes nothing"
    );
}

#[test]
fn a_machine_waiting_on_a_full_queue_is_woken_as_it_drains_even_across_an_outage() {
    // The link a -> b is down from 1 s to 2 s. The flooder has kept its queue full since
    // time zero; when the link comes back it must be woken by each transmission and keep
    // the link busy, whatever happened to the link in between.
    let link = "rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = \"20pkt\"\n\
                ab = { outages = [{ down = \"1s\", up = \"2s\" }] }";
    let text = common::two_node("4s", link, &common::flow("f", "newreno", "start = \"10s\""));
    let mut sim = load(&text, "flood.toml", None).unwrap();
    let (a, b) = (NodeId(0), NodeId(1));
    let flooder = common::RawSender::new(node_addr(a), node_addr(b), 1460, None);
    sim.add_machine(a, Vec::new(), Box::new(flooder));
    assert!(sim.run(&mut |_, _| true));
    let l = &sim.series().links;
    let sent = |t: f64| {
        (0..l.time_s.len())
            .find(|&i| l.link[i] == 0 && (l.time_s[i] - t).abs() < 1e-9)
            .map(|i| l.tx_bytes[i])
            .unwrap()
    };
    for (t0, t1) in [(0.0, 1.0), (2.0, 4.0)] {
        let busy = (sent(t1) - sent(t0)) as f64 * 8.0 / ((t1 - t0) * 10e6);
        assert!(busy > 0.99, "busy {busy:.3} over [{t0} s, {t1} s]");
    }
}
