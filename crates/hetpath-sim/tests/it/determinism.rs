//! Same scenario and seed: identical results. Different seeds: different losses.

use crate::common;
use common::*;

fn lossy() -> String {
    let link = "rate = \"10Mbps\"\ndelay = \"50ms\"\nab = { channel = { model = \"bernoulli\", p = 0.01 } }";
    let flows: String = ["newreno", "cubic", "westwood+"]
        .iter()
        .map(|cc| flow(cc, cc, ""))
        .collect();
    two_node("30s", link, &flows)
}

#[test]
fn same_seed_same_results() {
    let (a, sa) = run(&lossy(), Some(7));
    let (b, sb) = run(&lossy(), Some(7));
    assert_eq!(a, b);
    // NaN marks "no value yet" in the series, so compare their printed form.
    assert!(format!("{sa:?}") == format!("{sb:?}"), "series differ");
}

#[test]
fn different_seeds_different_losses() {
    let (a, _) = run(&lossy(), Some(1));
    let (b, _) = run(&lossy(), Some(2));
    assert_ne!(a.links[0].stats.lost_packets, b.links[0].stats.lost_packets);
    assert_ne!(a.flows, b.flows);
}
