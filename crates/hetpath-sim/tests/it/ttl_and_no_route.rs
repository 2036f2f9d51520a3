//! Packets a node drops itself, where no link loses them: those whose TTL runs out on a
//! path longer than the TTL allows, and those with no route on. Each is counted against
//! the node in the summary (`nodes`) and traced (`node.ttl_expired`, `node.no_route`).

use crate::common::RawSender;
use hetpath_sim::load;
use hetpath_sim::sim::{node_addr, NodeId};

/// Nodes n0 .. n{n-1} in a line of 10 Mbit/s, 1 ms links, and a 10 kB flow from the
/// first to the last.
fn chain(n: usize) -> String {
    let mut s =
        String::from("[scenario]\nname = \"chain\"\nduration = \"10s\"\nstop_when_done = true\n");
    for i in 0..n {
        s += &format!("[[node]]\nname = \"n{i}\"\n");
    }
    for i in 1..n {
        s += &format!(
            "[[link]]\nname = \"l{i}\"\na = \"n{}\"\nb = \"n{i}\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n",
            i - 1
        );
    }
    s += &format!(
        "[[flow]]\nname = \"f\"\nfrom = \"n0\"\nto = \"n{}\"\nsize = \"10kB\"\n",
        n - 1
    );
    s
}

fn run_traced(text: &str) -> hetpath_sim::Simulation {
    let mut sim = load(text, "chain.toml", None).unwrap_or_else(|e| panic!("{e}"));
    sim.enable_trace();
    assert!(sim.run(&mut |_, _| true));
    sim
}

/// Trace rows of `event`, as (node, flow) pairs.
fn traced(sim: &hetpath_sim::Simulation, event: &str) -> Vec<(NodeId, Option<u32>)> {
    let t = sim.trace().unwrap();
    (0..t.len())
        .filter(|&i| t.event[i] == event)
        .map(|i| (t.node[i], t.flow[i].map(|f| f.0)))
        .collect()
}

#[test]
fn a_path_longer_than_the_ttl_shows_its_drops_at_the_router_where_it_ran_out() {
    // 65 hops: a packet sent with TTL 64 has none left at the 64th router, n64.
    let sim = run_traced(&chain(66));
    let s = sim.summary(0.0);
    assert_eq!(s.flows[0].bytes_delivered, 0);
    assert_eq!(s.nodes.len(), 66);
    let at = &s.nodes[64];
    assert_eq!(at.name, "n64");
    assert!(at.ttl_drops > 1, "every SYN (first and retries): {at:?}");
    for (i, n) in s.nodes.iter().enumerate() {
        assert_eq!(n.no_route_drops, 0, "{n:?}");
        if i != 64 {
            assert_eq!(n.ttl_drops, 0, "{n:?}");
        }
    }
    // One trace row per drop, at n64 and of flow f.
    let rows = traced(&sim, "node.ttl_expired");
    assert_eq!(rows.len() as u64, at.ttl_drops);
    assert!(rows.iter().all(|&r| r == (NodeId(64), Some(0))), "{rows:?}");
}

#[test]
fn a_path_of_as_many_hops_as_the_ttl_allows_delivers_everything() {
    // 64 hops: n63, the last router, forwards with TTL 1 left.
    let sim = run_traced(&chain(65));
    let s = sim.summary(0.0);
    assert_eq!(s.flows[0].bytes_delivered, 10_000);
    assert!(s.nodes.iter().all(|n| n.ttl_drops == 0), "{:?}", s.nodes);
    assert!(traced(&sim, "node.ttl_expired").is_empty());
}

/// Loads `text`, places on node 0 a `RawSender` of `count` 100-byte packets to `to`, and runs it
/// traced.
fn send_from_first_node(text: &str, to: NodeId, count: u32) -> hetpath_sim::Simulation {
    let mut sim = load(text, "send.toml", None).unwrap_or_else(|e| panic!("{e}"));
    sim.enable_trace();
    let a = NodeId(0);
    let sender = RawSender::new(node_addr(a), node_addr(to), 100, Some(count));
    sim.add_machine(a, vec![], Box::new(sender));
    assert!(sim.run(&mut |_, _| true));
    sim
}

#[test]
fn a_packet_with_no_route_is_counted_at_its_node_and_traced() {
    // Node c has no link: nothing on a leads to it.
    let text = "[scenario]\nname = \"island\"\nduration = \"1s\"\n\
                [[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"c\"\n\
                [[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    let sim = send_from_first_node(text, NodeId(2), 3);
    let s = sim.summary(0.0);
    let drops: Vec<_> = s
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.ttl_drops, n.no_route_drops))
        .collect();
    assert_eq!(drops, [("a", 0, 3), ("b", 0, 0), ("c", 0, 0)]);
    assert_eq!(traced(&sim, "node.no_route"), [(NodeId(0), None); 3]);
}

#[test]
fn a_packet_no_machine_takes_is_counted_at_its_node_and_traced() {
    // b has no machine: what a sends to b arrives there and nothing takes it.
    let text = "[scenario]\nname = \"unclaimed\"\nduration = \"1s\"\n\
                [[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                [[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    let sim = send_from_first_node(text, NodeId(1), 2);
    let s = sim.summary(0.0);
    let drops: Vec<_> = s
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.unclaimed_drops))
        .collect();
    assert_eq!(drops, [("a", 0), ("b", 2)]);
    assert_eq!(traced(&sim, "node.unclaimed"), [(NodeId(1), None); 2]);
}
