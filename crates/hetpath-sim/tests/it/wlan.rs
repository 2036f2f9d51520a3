//! 802.11b WLANs (`[[wlan]]`, seed 000 Table I) under whole scenarios: TCP through the
//! shared medium gets every byte through, in order; the stations report their MAC
//! counters; stations contend; bad `[[wlan]]` values are errors naming their key.

use crate::common;
use common::run;
use hetpath_sim::load;
use hetpath_sim::results::Summary;

/// A server behind the access point, `flows` TCP transfers to the stations `sta0..`
/// (`n` of them), with `wlan` extra keys on the WLAN.
fn scenario(n: usize, wlan: &str, flow: &str) -> String {
    let mut s = String::from(
        "[scenario]\nname = \"wlan\"\nduration = \"60s\"\nstop_when_done = true\nseed = 3\n\n\
         [[node]]\nname = \"srv\"\n[[node]]\nname = \"ap\"\n",
    );
    for i in 0..n {
        s += &format!("[[node]]\nname = \"sta{i}\"\n");
    }
    s += "\n[[link]]\nname = \"wired\"\na = \"srv\"\nb = \"ap\"\nrate = \"100Mbps\"\ndelay = \"5ms\"\n\n";
    let stations: Vec<String> = (0..n).map(|i| format!("\"sta{i}\"")).collect();
    s += &format!(
        "[[wlan]]\nname = \"air\"\nap = \"ap\"\nstations = [{}]\n{wlan}\n\n",
        stations.join(", ")
    );
    for i in 0..n {
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\nfrom = \"srv\"\nto = \"sta{i}\"\ncc = \"newreno\"\n{flow}\n"
        );
    }
    s
}

fn counter(s: &Summary, from: &str, name: &str) -> f64 {
    s.link_counters
        .iter()
        .find(|c| c.link == "air" && c.from == from && c.counter == name)
        .unwrap_or_else(|| {
            panic!(
                "no 802.11 counter {name} from {from}: {:?}",
                s.link_counters
            )
        })
        .value
}

#[test]
fn tcp_through_the_medium_gets_every_byte_through() {
    let text = scenario(1, "", "size = \"2MB\"");
    let (s, _) = run(&text, None);
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 2_000_000, "{f:?}");
    assert!(f.completion_s.is_some());
    // The station's TCP ACKs contend with the access point's data: both send, and some
    // attempts meet.
    let (ap, sta) = (
        counter(&s, "ap", "mac_acks"),
        counter(&s, "sta0", "mac_acks"),
    );
    assert!(ap >= 1_370.0 && sta > 0.0, "ap {ap}, sta {sta}");
    assert!(counter(&s, "ap", "collisions") > 0.0);
    assert_eq!(
        counter(&s, "ap", "collisions"),
        counter(&s, "sta0", "collisions"),
        "with two senders every collision is one of each"
    );
    // Goodput below the lone-station DCF ceiling of about 6.1 Mbit/s at 1460-byte payloads.
    assert!(f.goodput_bps < 6.1e6, "{}", f.goodput_bps);
    assert_eq!(run(&text, None).0, s, "same seed, same summary");
}

#[test]
fn stations_share_the_medium() {
    let (one, _) = run(&scenario(1, "", "size = \"1MB\""), None);
    let (four, _) = run(&scenario(4, "", "size = \"1MB\""), None);
    for f in &four.flows {
        assert_eq!(f.bytes_delivered, 1_000_000, "{f:?}");
    }
    // Four transfers share one medium: the last ends well after a lone one.
    let last = four
        .flows
        .iter()
        .filter_map(|f| f.completion_s)
        .fold(0.0, f64::max);
    let lone = one.flows[0].completion_s.expect("done");
    assert!(last > 2.5 * lone, "{last} against {lone}");
}

#[test]
fn a_lossy_channel_costs_retries_not_bytes() {
    let lossy = "channel = { model = \"bernoulli\", p = 0.1 }";
    let (s, _) = run(&scenario(1, lossy, "size = \"1MB\""), None);
    assert_eq!(s.flows[0].bytes_delivered, 1_000_000);
    assert!(counter(&s, "ap", "retries") > 50.0);
}

#[test]
fn bad_wlan_values_name_their_key() {
    let err = |text: String| {
        load(&text, "wlan.toml", None)
            .err()
            .unwrap_or_else(|| panic!("accepted: {text}"))
            .to_string()
    };
    for (keys, key) in [
        ("cw_min = 64\ncw_max = 31", "cw_min"),
        ("slot = \"0s\"", "slot"),
        ("data_rate = \"0bps\"", "data_rate"),
        ("short_retry = 0", "short_retry"),
        ("queue = \"0pkt\"", "queue"),
        ("nonsense = 1", "nonsense"),
    ] {
        let e = err(scenario(1, keys, ""));
        assert!(e.contains("wlan.toml") && e.contains(key), "{keys}: {e}");
    }
    let e = err(scenario(1, "", "").replace("stations = [\"sta0\"]", "stations = [\"nobody\"]"));
    assert!(e.contains("stations") && e.contains("nobody"), "{e}");
    let e = err(scenario(1, "", "").replace("stations = [\"sta0\"]", "stations = [\"ap\"]"));
    assert!(e.contains("stations"), "{e}");
    let e = err(scenario(1, "", "").replace("name = \"air\"", "name = \"wired\""));
    assert!(e.contains("name"), "{e}");
}
