//! `[mobile] hop = "wlan"`: the mobile host's hop to each base station is that station's
//! 802.11 DCF medium. A handoff moves the host from one WLAN to the other; a
//! disconnection drops, and counts, what the two MACs held for each other; other stations
//! of a base station's `[[wlan]]` contend with the host; runs balance (`--check`) and
//! repeat; the default (`hop = "link"`) is the link pair it always was; the Mobile IP
//! registration delay holds the binding back; the new keys are checked at load.

use crate::common;
use common::{link, run, HANDOFF};
use hetpath_sim::load;
use hetpath_sim::results::Summary;

/// Seed 002's Fig. 8 (mh ~ ha/fa - n2 - ch, 20 ms links at `rate`), extra `[mobile]`
/// keys `mobile`, extra tables `rest`, one upload mh -> ch of `size` with `tcp` keys.
fn fig8(rate: &str, mobile: &str, rest: &str, size: &str, tcp: &str) -> String {
    let scenario = "name = \"fig8-wlan\"\nduration = \"600s\"";
    common::fig8(scenario, rate, mobile, rest, size, "reno", tcp)
}

fn mac(s: &Summary, wlan: &str, from: &str, name: &str) -> f64 {
    s.link_counters
        .iter()
        .find(|c| c.link == wlan && c.from == from && c.counter == name)
        .unwrap_or_else(|| panic!("no 802.11 counter {name} of {from} on {wlan}"))
        .value
}

#[test]
fn a_handoff_moves_the_host_from_one_wlan_to_the_other() {
    let mobile = format!("hop = \"wlan\"\n{HANDOFF}");
    let (s, _) = run(&fig8("1Mbps", &mobile, "", "2MB", ""), Some(1));
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 2_000_000, "{f:?}");
    // Both media carried the host's frames: home's before the gap, the foreign one's
    // after, and the host's MAC acknowledged on each.
    for bs in ["ha", "fa"] {
        let air = format!("air/{bs}");
        assert!(link(&s, &air, "mh").stats.delivered > 100, "{air}");
        assert!(mac(&s, &air, "mh", "mac_acks") > 100.0, "{air}");
        assert!(
            mac(&s, &air, bs, "mac_acks") > 0.0,
            "{air}: advertisements, ACKs"
        );
        // The medium's rate, not `[mobile] rate`.
        assert_eq!(link(&s, &air, "mh").rate_bps, 11_000_000);
    }
    // Mobile IP registered through the foreign agent: the ACKs come back tunnelled from
    // the home agent (n2 -> fa carries them).
    assert!(link(&s, "n2-fa", "n2").stats.delivered > 100);
}

/// A disconnection while both MACs hold frames for each other: what the host's MAC
/// queued for the access point, and the access point for the host, is dropped and
/// counted as outage losses (802.11 hands nothing over), and every packet balances.
#[test]
fn a_disconnection_drops_and_counts_what_the_macs_held() {
    // The medium at 1 Mbit/s below 5 Mbit/s wired links and a window of 40 segments: a
    // standing queue at the host's MAC when the link goes.
    let mobile = format!(
        "hop = \"wlan\"\nwlan = {{ data_rate = \"1Mbps\" }}\n{}",
        r#"disconnect = { count = 1, duration = "2s", first = "10s" }"#
    );
    let text = fig8("5Mbps", &mobile, "", "2MB", r#"recv_buffer = "40000B""#);
    let (s, _) = run(&text, Some(2));
    let up = link(&s, "air/ha", "mh");
    assert!(up.stats.outage_losses > 0, "{up:?}");
    assert_eq!(s.flows[0].bytes_delivered, 2_000_000);
    // The same drops, by the conservation of every direction (`run` checks it too).
    for l in &s.links {
        assert!(l.stats.outage_losses <= l.stats.lost_packets, "{l:?}");
    }
}

#[test]
fn runs_repeat_and_the_default_hop_is_the_link_pair() {
    let mobile = format!("hop = \"wlan\"\n{HANDOFF}");
    let text = fig8("1Mbps", &mobile, "", "1MB", r#"ilc = "link-ip""#);
    assert!(
        run(&text, Some(4)).0 == run(&text, Some(4)).0,
        "same seed, same run"
    );
    // `hop = "link"` is what a scenario without the key ran, to the last sample.
    let plain = fig8("1Mbps", HANDOFF, "", "1MB", "");
    let link = fig8(
        "1Mbps",
        &format!("hop = \"link\"\n{HANDOFF}"),
        "",
        "1MB",
        "",
    );
    let (a, b) = (run(&plain, Some(4)), run(&link, Some(4)));
    assert!(a.0 == b.0 && a.1.links == b.1.links);
    assert_eq!(link_rate(&a.0), 1_000_000);
}

fn link_rate(s: &Summary) -> u64 {
    link(s, "air/ha", "mh").rate_bps
}

/// A base station's own `[[wlan]]`: the host joins it as one more station and contends
/// with the others (two stations uploading through the same access point).
#[test]
fn other_stations_of_the_base_stations_wlan_contend() {
    let others = r#"
[[node]]
name = "s1"
[[node]]
name = "s2"
[[wlan]]
name = "cell-ha"
ap = "ha"
stations = ["s1", "s2"]
[[flow]]
name = "s1"
from = "s1"
to = "ch"
cc = "reno"
size = "3MB"
[[flow]]
name = "s2"
from = "s2"
to = "ch"
cc = "reno"
size = "3MB"
"#;
    let text = fig8("5Mbps", "hop = \"wlan\"", others, "1MB", "");
    let (s, _) = run(&text, Some(1));
    assert!(
        s.flows.iter().all(|f| f.completion_s.is_some()),
        "{:?}",
        s.flows
    );
    let collisions: f64 = ["mh", "s1", "s2", "ha"]
        .iter()
        .map(|n| mac(&s, "cell-ha", n, "collisions"))
        .sum();
    assert!(collisions > 0.0, "three uploaders on one medium collide");
    assert!(link(&s, "cell-ha", "mh").stats.delivered > 500);
    // The foreign station, with no [[wlan]] of its own, has the default medium.
    assert!(s.links.iter().any(|l| l.name == "air/fa"));
}

/// Off the paper's path: many stations, and rates from a crawl to a flood.
#[test]
fn extreme_rates_and_many_stations_balance() {
    let mut others = String::new();
    let mut names = Vec::new();
    for i in 0..12 {
        others += &format!(
            "[[node]]\nname = \"s{i}\"\n[[flow]]\nname = \"s{i}\"\nfrom = \"s{i}\"\nto = \"ch\"\ncc = \"newreno\"\nsize = \"200KB\"\n"
        );
        names.push(format!("\"s{i}\""));
    }
    others += &format!(
        "[[wlan]]\nname = \"cell\"\nap = \"fa\"\nstations = [{}]\ndata_rate = \"54Mbps\"\n",
        names.join(", ")
    );
    let mobile = format!(
        "hop = \"wlan\"\n{}",
        r#"disconnect = { count = 1, duration = "1s", first = "2s", reattach = ["fa"] }"#
    );
    let (s, _) = run(&fig8("100Mbps", &mobile, &others, "2MB", ""), Some(7));
    assert!(
        s.flows.iter().all(|f| f.completion_s.is_some()),
        "{:?}",
        s.flows
    );
    assert!(
        link(&s, "cell", "mh").stats.delivered > 100,
        "{:?}",
        s.links
    );
    // The access point's one queue for thirteen stations' ACKs overflows, counted.
    assert!(s
        .links
        .iter()
        .any(|l| l.name == "cell" && l.stats.drops > 0));

    // A 100 kbit/s medium with short retries: slow, lossy under contention, but every
    // packet is accounted for (`run` checks the balances).
    let mobile = format!(
        "hop = \"wlan\"\nwlan = {{ data_rate = \"100kbps\", basic_rate = \"100kbps\", short_retry = 1 }}\n{}",
        r#"disconnect = { count = 3, duration = "1s", first = "5s", every = "20s", reattach = ["fa", "ha"] }"#
    );
    let (s, _) = run(&fig8("1Mbps", &mobile, "", "200KB", ""), Some(3));
    assert_eq!(s.flows[0].bytes_delivered, 200_000);
}

/// RFC 3344 section 3.8: the home agent binds and replies `registration_delay` after the
/// request; until then the ACKs go to the old care-of address. An ILC-TCP2 sender waits
/// for IP_OK and so finishes later than with an instant home agent.
#[test]
fn the_registration_delay_holds_the_binding_back() {
    let time = |delay: &str| {
        let mobile = format!("registration_delay = \"{delay}\"\n{HANDOFF}");
        let (s, _) = run(
            &fig8("1Mbps", &mobile, "", "2MB", r#"ilc = "link-ip""#),
            Some(1),
        );
        s.flows[0].completion_s.expect("completes")
    };
    let (now, late) = (time("0s"), time("0.8s"));
    assert!(late > now + 0.5, "{now} -> {late}");
    // Zero is the default: the same run as without the key.
    let plain = run(
        &fig8("1Mbps", HANDOFF, "", "2MB", r#"ilc = "link-ip""#),
        Some(1),
    );
    assert_eq!(plain.0.flows[0].completion_s, Some(now));
}

/// A home agent slower than the advertisement period less the round trip: the host
/// re-sends its request at the next advertisement, and takes only the reply to its latest
/// (RFC 3344 section 3.6.3); its retransmissions back off, doubling, so a later request's
/// reply arrives before the next and the host registers. (Re-sent every period, it never
/// did, and an ILC-TCP2 sender stayed frozen to the end of the run.)
#[test]
fn a_registration_slower_than_the_advertisement_period_still_completes() {
    for delay in ["0.9s", "2.5s"] {
        let mobile = format!("registration_delay = \"{delay}\"\n{HANDOFF}");
        let (s, _) = run(
            &fig8("1Mbps", &mobile, "", "4MB", r#"ilc = "link-ip""#),
            Some(1),
        );
        let f = &s.flows[0];
        assert!(f.completion_s.is_some(), "{delay}: {f:?}");
    }
}

#[test]
fn bad_mobile_wlan_keys_are_errors_naming_them() {
    let cases = [
        (
            "hop = \"wlan\"\nregistration_delay = \"61s\"",
            "mobile.registration_delay",
        ),
        ("wlan = { data_rate = \"2Mbps\" }", "mobile.wlan"),
        (
            "hop = \"wlan\"\nwlan = { data_rate = \"0bps\" }",
            "data_rate",
        ),
        (
            "hop = \"wlan\"\nwlan = { cw_min = 70000 }",
            "mobile.wlan.cw_min",
        ),
        ("hop = \"radio\"", "hop"),
    ];
    for (mobile, key) in cases {
        let text = fig8("1Mbps", mobile, "", "100KB", "");
        let e = match load(&text, "t.toml", None) {
            Ok(_) => panic!("{mobile}: loaded"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(key), "{mobile}: {e}");
    }
    // Two WLANs on one base station: which would the host join?
    let two = r#"
[[node]]
name = "s1"
[[wlan]]
name = "a"
ap = "ha"
stations = ["s1"]
[[wlan]]
name = "b"
ap = "ha"
stations = ["n2"]
"#;
    let e = load(
        &fig8("1Mbps", "hop = \"wlan\"", two, "100KB", ""),
        "t.toml",
        None,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(e.contains("wlan[1].ap"), "{e}");
    // The host listed as a station of its base station's WLAN.
    let listed = "[[wlan]]\nname = \"a\"\nap = \"ha\"\nstations = [\"mh\"]\n";
    let e = load(
        &fig8("1Mbps", "hop = \"wlan\"", listed, "100KB", ""),
        "t.toml",
        None,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(e.contains("stations") && e.contains("mobile host"), "{e}");
}

/// A host driving from its home station to the next while uploading: at the handoff its
/// sends go to the new station's WLAN, never to a medium it is not associated with (no
/// frame is offered there and lost at once), so the new station's uplink loses at most
/// what its MAC held when the host left it (nothing here: the run ends there).
#[test]
fn a_host_driving_across_stations_sends_only_where_it_is_associated() {
    let text = r#"
[scenario]
name = "drive"
duration = "40s"
[tcp]
mss = 1000
[[node]]
name = "mh"
[[node]]
name = "ha"
[[node]]
name = "b2"
[[node]]
name = "ch"
[[link]]
name = "ch-ha"
a = "ch"
b = "ha"
rate = "5Mbps"
delay = "20ms"
[[link]]
name = "ch-b2"
a = "ch"
b = "b2"
rate = "5Mbps"
delay = "20ms"
[radio]
model = "two-ray"
range = 250.0
[[base_station]]
node = "ha"
position = [0.0, 0.0]
[[base_station]]
node = "b2"
position = [450.0, 0.0]
[mobile]
node = "mh"
home = "ha"
rate = "2Mbps"
delay = "5ms"
hop = "wlan"
depart = "5s"
path = [{ to = [450.0, 0.0], speed = 10.0 }]
[[flow]]
name = "up"
from = "mh"
to = "ch"
cc = "reno"
start = "1s"
"#;
    let (s, _) = run(text, Some(1));
    let up = link(&s, "air/b2", "mh");
    assert!(up.stats.delivered > 100, "{up:?}");
    assert_eq!(up.stats.lost_packets, 0, "{up:?}");
}
