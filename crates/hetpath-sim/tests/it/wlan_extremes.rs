//! 802.11 timing at its extremes: slot times the engine cannot honour are refused at load
//! with the key named; the longest accepted ones run without overflow or panic.

use crate::common::run;
use hetpath_sim::load;

/// A server behind the access point and one station downloading `size`, the WLAN with
/// `wlan` extra keys.
fn scenario(wlan: &str, size: &str, seed: u64) -> String {
    format!(
        r#"
[scenario]
name = "wlan-extremes"
duration = "600s"
stop_when_done = true
seed = {seed}
[[node]]
name = "srv"
[[node]]
name = "ap"
[[node]]
name = "sta"
[[link]]
name = "wired"
a = "srv"
b = "ap"
rate = "100Mbps"
delay = "5ms"
[[wlan]]
name = "air"
ap = "ap"
stations = ["sta"]
{wlan}
[[flow]]
name = "f"
from = "srv"
to = "sta"
cc = "newreno"
size = "{size}"
"#
    )
}

#[test]
fn dcf_times_past_one_second_are_refused_naming_the_key() {
    for (keys, key) in [
        ("slot = \"15768000000s\"", "slot"),
        ("slot = \"1.000000001s\"", "slot"),
        ("difs = \"2s\"", "difs"),
        ("sifs = \"3155760000s\"", "sifs"),
        ("plcp = \"60min\"", "plcp"),
    ] {
        let e = load(&scenario(keys, "1KB", 1), "w.toml", None)
            .err()
            .unwrap_or_else(|| panic!("accepted {keys}"))
            .to_string();
        assert!(
            e.contains("w.toml") && e.contains(key) && e.contains("at most 1 s"),
            "{keys}: {e}"
        );
    }
}

#[test]
fn the_longest_slot_accepted_runs_on_every_seed() {
    let keys = "slot = \"1s\"\ndifs = \"1s\"\ncw_min = 1023\ncw_max = 65535";
    for seed in 1..6 {
        let (s, _) = run(&scenario(keys, "3KB", seed), None);
        let f = &s.flows[0];
        assert!(f.bytes_delivered <= 3000, "{f:?}");
    }
}
