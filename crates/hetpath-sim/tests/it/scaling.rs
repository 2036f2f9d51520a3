//! Building a scenario scales with its size. Routes were a nodes x nodes table
//! computed from every node (a 25,000-node file aborted on allocation). These tests check
//! that large scenarios build and run; how long they take is measured, not asserted, by
//! `bench/scaling.py` (docs/performance.md, "Scaling"): a wall-clock bound in a test
//! binary whose tests share the machine would flake. The sparse route table's
//! size is bounded by counted entries in `sim/routes.rs`.

use hetpath_sim::load;
use std::fmt::Write;

/// `n` nodes in a binary tree (node i's parent is (i - 1) / 2), one sized flow between
/// two leaves on either side of the root.
fn tree(n: usize) -> String {
    let mut s = String::from("[scenario]\nname = \"tree\"\nduration = \"1s\"\n");
    for i in 0..n {
        writeln!(s, "[[node]]\nname = \"n{i}\"").unwrap();
    }
    for j in 1..n {
        let i = (j - 1) / 2;
        writeln!(
            s,
            "[[link]]\nname = \"l{j}\"\na = \"n{i}\"\nb = \"n{j}\"\nrate = \"1Gbps\"\ndelay = \"1us\""
        )
        .unwrap();
    }
    let (a, b) = (n - 1, n / 2 + 1);
    writeln!(
        s,
        "[[flow]]\nname = \"f\"\nfrom = \"n{a}\"\nto = \"n{b}\"\nsize = \"10kB\""
    )
    .unwrap();
    s
}

/// `flows` sender/receiver pairs around one bottleneck.
fn dumbbell(flows: usize) -> String {
    let mut s = String::from("[scenario]\nname = \"db\"\nduration = \"1ms\"\n");
    s += "[[node]]\nname = \"r1\"\n[[node]]\nname = \"r2\"\n";
    s += "[[link]]\nname = \"bn\"\na = \"r1\"\nb = \"r2\"\nrate = \"100Mbps\"\ndelay = \"50ms\"\n";
    for i in 0..flows {
        writeln!(s, "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"").unwrap();
        writeln!(s, "[[link]]\nname = \"in{i}\"\na = \"s{i}\"\nb = \"r1\"\nrate = \"1Gbps\"\ndelay = \"1ms\"").unwrap();
        writeln!(s, "[[link]]\nname = \"out{i}\"\na = \"r2\"\nb = \"d{i}\"\nrate = \"1Gbps\"\ndelay = \"1ms\"").unwrap();
        writeln!(
            s,
            "[[flow]]\nname = \"f{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ntcp = {{ iw = \"bdp\" }}"
        )
        .unwrap();
    }
    s
}

#[test]
fn a_30000_node_tree_builds_and_runs() {
    let mut sim = load(&tree(30_000), "tree.toml", None).unwrap();
    sim.run(&mut |_, _| true);
    let s = sim.summary(0.0);
    assert_eq!(s.flows[0].bytes_delivered, 10_000);
}

#[test]
fn a_1000_flow_dumbbell_builds_and_runs() {
    let mut sim = load(&dumbbell(1000), "db.toml", None).unwrap();
    sim.run(&mut |_, _| true);
    assert_eq!(sim.summary(0.0).flows.len(), 1000);
}
