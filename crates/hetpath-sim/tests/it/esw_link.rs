//! The EuroSkyWay link (`layer = "esw"`, seed 001 section IV) under whole scenarios: TCP
//! over the ARQ link gets every byte through shadowing, a clean link runs at its cell
//! capacity, the link reports its own counters, and bad `[link.esw]` values are errors.

use crate::common;
use common::run;
use hetpath_sim::load;
use hetpath_sim::results::Summary;

/// A 300 KB (or bulk) TCP transfer fh -> mh over a 10 Mbit/s wired link and the ESW
/// link `sat`, whose extra keys are `sat`.
fn scenario(size: &str, sat: &str) -> String {
    common::lift_path(
        "duration = \"300s\"\nseed = 1\nstop_when_done = true",
        "",
        &format!("layer = \"esw\"\n{sat}"),
        &format!("[[flow]]\nname = \"f\"\nfrom = \"fh\"\nto = \"mh\"\ncc = \"reno\"\n{size}"),
    )
}

fn counter(s: &Summary, from: &str, name: &str) -> f64 {
    s.link_counters
        .iter()
        .find(|c| c.link == "sat" && c.from == from && c.counter == name)
        .unwrap_or_else(|| panic!("no esw counter {name} from {from}: {:?}", s.link_counters))
        .value
}

const SHADOWED: &str = "channel = { model = \"gilbert-elliott\", t_good = \"2s\", t_bad = \"1s\" }";

#[test]
fn tcp_over_the_arq_link_gets_every_byte_through_shadowing() {
    let text = scenario("size = \"300KB\"", SHADOWED);
    let (s, _) = run(&text, None);
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 300_000, "{f:?}");
    assert!(f.completion_s.is_some());
    assert!(
        counter(&s, "gw", "cells_lost") > 0.0,
        "the channel lost nothing"
    );
    assert!(counter(&s, "gw", "cells_retransmitted") > 0.0);
    assert!(counter(&s, "gw", "arq_delay_s") > 0.0);
    // The mobile host's side carries the ESW-ACKs for the downlink's data.
    assert!(counter(&s, "mh", "esw_acks") > 0.0);
    assert_eq!(counter(&s, "gw", "packets_lost"), 0.0);
    // Same scenario, same seed: the same summary.
    assert_eq!(run(&text, None).0, s);
}

#[test]
fn a_clean_link_runs_tcp_at_its_cell_capacity() {
    // 19 cells of 53 payload bytes per 26.5 ms frame; a 1224-byte segment with TCP
    // (20 + 12 bytes of timestamps) and IP headers is 1276 bytes, 25 cells (1325 bytes).
    let text = scenario("", "").replace("stop_when_done = true", "");
    let (s, series) = run(&text, None);
    let capacity = 19.0 * 53.0 * 8.0 / 0.0265;
    let g = common::goodput_between(&series, 0, 100.0, 300.0);
    let cells = counter(&s, "gw", "cells_sent");
    let packets = s
        .links
        .iter()
        .find(|l| l.name == "sat" && l.from == "gw")
        .unwrap();
    let per_packet = cells / packets.stats.tx_packets as f64;
    // The downlink's frame units also carry the ESW-ACKs for the uplink's data (the TCP
    // ACKs); what the data cells carry is TCP payload, less headers and padding.
    let data_share = cells / (cells + counter(&s, "gw", "esw_acks"));
    let expected = capacity * data_share * (1224.0 / (per_packet * 53.0));
    assert!(
        (g - expected).abs() < 0.02 * expected,
        "goodput {g:.0} bit/s, cell capacity less overheads {expected:.0}"
    );
    assert_eq!(counter(&s, "gw", "cells_retransmitted"), 0.0);
    assert_eq!(counter(&s, "gw", "cells_lost"), 0.0);
}

#[test]
fn without_arq_the_link_loses_packets_and_tcp_recovers_them() {
    let sat = format!("{SHADOWED}\nesw = {{ arq = false }}");
    let (s, _) = run(&scenario("size = \"300KB\"", &sat), None);
    assert_eq!(s.flows[0].bytes_delivered, 300_000);
    assert!(counter(&s, "gw", "packets_lost") > 0.0);
    assert_eq!(counter(&s, "gw", "cells_retransmitted"), 0.0);
    assert_eq!(counter(&s, "mh", "esw_acks"), 0.0);
    assert!(s.flows[0].retransmissions > 0);
}

#[test]
fn bad_esw_values_name_their_key() {
    let err = |sat: &str| {
        load(&scenario("", sat), "lift.toml", None)
            .err()
            .unwrap_or_else(|| panic!("{sat} was accepted"))
            .to_string()
    };
    for (sat, key) in [
        ("esw = { frame_units = 0 }", "esw.frame_units"),
        ("esw = { frame = \"0s\" }", "esw.frame"),
        ("esw = { tx_window = \"10B\" }", "esw.tx_window"),
        ("esw = { arq = 1 }", "arq"),
        ("esw = { nonsense = 1 }", "nonsense"),
        ("outages = [{ down = \"1s\", up = \"2s\" }]", "outages"),
    ] {
        let e = err(sat);
        assert!(e.contains("lift.toml") && e.contains(key), "{sat}: {e}");
    }
    let plain = scenario("", "esw = { arq = false }").replace("layer = \"esw\"", "");
    let e = load(&plain, "lift.toml", None)
        .err()
        .expect("esw without layer")
        .to_string();
    assert!(e.contains("layer"), "{e}");
}
