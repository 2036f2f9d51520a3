//! A host opens any number of connections over time: an ephemeral port is used again
//! toward a server once its connection there is gone (after TIME-WAIT). More than the
//! 64,512 ports open toward one server at once is an error naming the host: at load for
//! transfers that never close, otherwise when the run meets it.

use crate::common;
use hetpath_sim::scenario::load_with;
use std::fmt::Write;

/// `n` TCP flows a -> b of `size` (none: bulk), the k-th starting at k x `every_us`
/// microseconds, over a fast short link, with TIME-WAIT `time_wait`. (Without
/// `stop_when_done`, which checks every flow after every event.)
fn many(n: usize, size: Option<&str>, every_us: u64, time_wait: &str, duration: &str) -> String {
    let mut s = format!("[tcp]\ntime_wait = \"{time_wait}\"\n");
    s.reserve(n * 90);
    for k in 0..n {
        let start = k as u64 * every_us;
        write!(
            s,
            "[[flow]]\nname = \"f{k}\"\nfrom = \"a\"\nto = \"b\"\nstart = \"{start}us\"\n"
        )
        .unwrap();
        if let Some(size) = size {
            writeln!(s, "size = \"{size}\"").unwrap();
        }
    }
    common::two_node(
        duration,
        "rate = \"10Gbps\"\ndelay = \"10us\"\nqueue = \"100000pkt\"",
        &s,
    )
}

#[test]
fn seventy_thousand_flows_from_one_host_all_complete() {
    // One every 100 us and a TIME-WAIT of 1 s: about 10,000 ports held at a time, and
    // every port used again after the first 64,512.
    let text = many(70_000, Some("100B"), 100, "1s", "8s");
    let mut sim = load_with(&text, "ports.toml", None, false).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.run(&mut |_, _| true), "{:?}", sim.failure());
    let s = sim.summary(0.0);
    assert_eq!(s.flows.len(), 70_000);
    let done = s.flows.iter().filter(|f| f.completion_s.is_some()).count();
    assert_eq!(done, 70_000);
    assert!(s
        .flows
        .iter()
        .all(|f| f.bytes_delivered == 100 && !f.aborted));
}

#[test]
fn more_connections_open_at_once_than_ports_is_a_run_error_naming_the_host() {
    // All start together and stay open (TIME-WAIT 240 s): the 64,513th finds no port.
    let text = many(64_513, Some("1KB"), 0, "240s", "10s");
    let mut sim = load_with(&text, "ports.toml", None, false).unwrap_or_else(|e| panic!("{e}"));
    assert!(!sim.run(&mut |_, _| true));
    let why = sim.failure().expect("a failure").to_string();
    assert!(
        why.contains("node 'a'") && why.contains("64512 ephemeral ports"),
        "{why}"
    );
}

#[test]
fn more_bulk_flows_than_ports_are_refused_at_load() {
    let text = many(64_513, None, 0, "240s", "10s");
    let e = load_with(&text, "ports.toml", None, false)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("ports.toml") && e.contains("'a'") && e.contains("64512"),
        "{e}"
    );
    // One fewer fits.
    let text = many(64_512, None, 0, "240s", "10s");
    assert!(load_with(&text, "ports.toml", None, false).is_ok());
}
