//! LIFT (seed 001) end to end: the fixed host sends to the mobile host over IPsec through
//! a gateway running BS-LIFT, the mobile host runs MH-LIFT. On a clean path these runs
//! check what LIFT must not change and what it costs on the uplink; over the ESW link
//! under shadowing, that it still delivers every byte and freezes the fixed host.

use crate::common;
use common::run;
use hetpath_sim::results::Summary;

fn scenario(size: &str, lift: bool) -> String {
    scenario_on("", size, lift)
}

/// The ESW link with its ARQ, under shadowing (`scenario_on`'s `sat`).
const SHADOWED: &str =
    "layer = \"esw\"\nchannel = { model = \"gilbert-elliott\", t_good = \"3s\", t_bad = \"2s\" }";

/// A transfer of `size` from the fixed host to the mobile host, with or without LIFT,
/// over a satellite hop with the extra keys `sat`.
fn scenario_on(sat: &str, size: &str, lift: bool) -> String {
    let agent = if lift {
        "[[agent]]\nkind = \"lift-bs\"\nnode = \"gw\"\n"
    } else {
        ""
    };
    let flow = format!(
        "[[flow]]\nname = \"web\"\nfrom = \"fh\"\nto = \"mh\"\ncc = \"reno\"\n{size}\nipsec = {{ esp_overhead = 18, lift = {lift} }}\n{agent}"
    );
    common::lift_path(
        "duration = \"120s\"\nseed = 1",
        "sack = false\nzero_window = \"freeze\"",
        sat,
        &flow,
    )
}

fn counter(s: &Summary, name: &str) -> u64 {
    s.machines
        .iter()
        .find(|m| m.machine == "lift-bs" && m.counter == name)
        .map_or_else(
            || panic!("no lift-bs counter {name}: {:?}", s.machines),
            |m| m.value,
        )
}

/// Bytes sent on the uplink (mobile host to gateway).
fn uplink_bytes(s: &Summary) -> u64 {
    s.links
        .iter()
        .find(|l| l.name.starts_with("sat") && l.from == "mh")
        .expect("the uplink")
        .stats
        .tx_bytes
}

#[test]
fn lift_delivers_the_same_bytes_and_freezes_nothing_on_a_clean_link() {
    let (plain, _) = run(&scenario("size = \"300KB\"", false), None);
    let (lift, _) = run(&scenario("size = \"300KB\"", true), None);
    for s in [&plain, &lift] {
        assert_eq!(s.flows[0].bytes_delivered, 300_000, "{:?}", s.flows[0]);
        assert!(s.flows[0].completion_s.is_some());
    }
    assert_eq!(counter(&lift, "fracks_forwarded"), 0, "nothing was late");
    assert_eq!(lift.flows[0].retransmissions, 0);
    assert!(counter(&lift, "acks_forwarded") > 0);
    // Every ACK of new data costs a 66-byte FrACK and 8 bytes of LIFT header more.
    let (up_plain, up_lift) = (uplink_bytes(&plain), uplink_bytes(&lift));
    assert!(
        up_lift > up_plain * 2 && up_lift < up_plain * 3,
        "uplink {up_plain} -> {up_lift} bytes"
    );
}

#[test]
fn lift_keeps_a_bulk_flow_at_the_link_rate() {
    let rate = |lift| run(&scenario("", lift), None).0.flows[0].goodput_bps;
    let (plain, lift) = (rate(false), rate(true));
    assert!(
        (lift - plain).abs() < 0.01 * plain,
        "bulk goodput {plain} without LIFT, {lift} with"
    );
}

/// The same transfer over the ESW link with its ARQ, under shadowing.
fn shadowed(size: &str, lift: bool, seed: u64) -> Summary {
    run(&scenario_on(SHADOWED, size, lift), Some(seed)).0
}

#[test]
fn lift_changes_nothing_of_what_tcp_delivers_under_shadowing() {
    for seed in 1..=3 {
        let plain = shadowed("size = \"500KB\"", false, seed);
        let lift = shadowed("size = \"500KB\"", true, seed);
        for s in [&plain, &lift] {
            assert_eq!(
                s.flows[0].bytes_delivered, 500_000,
                "seed {seed}: {:?}",
                s.flows[0]
            );
            assert!(s.flows[0].completion_s.is_some());
        }
        // The shadowing made the link late, and LIFT froze the fixed host for it.
        assert!(
            counter(&lift, "freezes") > 0,
            "seed {seed}: nothing was frozen"
        );
        assert_eq!(
            counter(&lift, "freezes"),
            counter(&lift, "fracks_forwarded")
        );
    }
}

#[test]
fn bad_lift_values_name_their_key() {
    let with_agent = scenario("", true);
    for (from, to, key) in [
        (
            "node = \"gw\"\n",
            "node = \"gw\"\ntimer = \"0s\"\n",
            "timer",
        ),
        ("node = \"gw\"\n", "node = \"nowhere\"\n", "node"),
        ("esp_overhead = 18", "esp_overhead = -1", "esp_overhead"),
    ] {
        let text = with_agent.replacen(from, to, 1);
        let e = hetpath_sim::load(&text, "lift.toml", None)
            .err()
            .unwrap_or_else(|| panic!("{to} was accepted"))
            .to_string();
        assert!(e.contains("lift.toml") && e.contains(key), "{to}: {e}");
    }
}

#[test]
fn self_protection_gets_past_a_gateway_that_forwards_every_frack() {
    let compromised = scenario("size = \"300KB\"", true)
        .replace("node = \"gw\"\n", "node = \"gw\"\ncompromised = true\n")
        .replace("duration = \"120s\"", "duration = \"300s\"");
    let (stuck, _) = run(&compromised, None);
    assert!(counter(&stuck, "fracks_forwarded") > 0);
    assert!(
        stuck.flows[0].completion_s.is_none(),
        "the fixed host was never frozen: {:?}",
        stuck.flows[0]
    );
    let protected = compromised.replace(
        "lift = true }",
        "lift = true, self_protection = { probes = 3, patience = \"2s\" } }",
    );
    let (s, _) = run(&protected, None);
    assert_eq!(s.flows[0].bytes_delivered, 300_000, "{:?}", s.flows[0]);
    // On an honest gateway under shadowing the probes never come three in a row.
    let honest = shadowed("size = \"500KB\"", true, 1);
    let guarded = run(
        &scenario_on(SHADOWED, "size = \"500KB\"", true)
            .replace("lift = true }", "lift = true, self_protection = {} }"),
        Some(1),
    )
    .0;
    assert_eq!(honest.flows[0].completion_s, guarded.flows[0].completion_s);
}
