//! The Mobile IP agents forward as routers do: a packet for a full queue toward the
//! mobile host is dropped there and counted, so `[mobile] queue` bounds the downlink as a
//! plain link's queue does.

use crate::common::run;
use hetpath_sim::Summary;

const HEAD: &str = r#"
[scenario]
name = "download"
duration = "30s"
[[node]]
name = "s"
[[node]]
name = "bs"
[[node]]
name = "mh"
[[link]]
name = "wired"
a = "s"
b = "bs"
rate = "100Mbps"
delay = "10ms"
"#;

const FLOW: &str = r#"
[[flow]]
name = "down"
from = "s"
to = "mh"
cc = "newreno"
"#;

/// A static mobile host at its home station: the air hop is a `[mobile]` link.
fn mobile() -> String {
    format!(
        r#"{HEAD}
[[base_station]]
node = "bs"
position = [0.0, 0.0]
[mobile]
node = "mh"
home = "bs"
rate = "5Mbps"
delay = "10ms"
queue = "50pkt"
{FLOW}"#
    )
}

/// The same hop as a plain link.
fn plain() -> String {
    format!(
        r#"{HEAD}
[[link]]
name = "air"
a = "bs"
b = "mh"
rate = "5Mbps"
delay = "10ms"
queue = "50pkt"
{FLOW}"#
    )
}

fn srtt(s: &Summary) -> f64 {
    s.legs[0].srtt_s.expect("an RTT sample")
}

/// Drops on the direction toward the mobile host.
fn drops_to_mh(s: &Summary) -> u64 {
    s.links
        .iter()
        .filter(|l| l.to == "mh")
        .map(|l| l.stats.drops)
        .sum()
}

#[test]
fn the_home_agent_drops_at_a_full_air_queue_as_a_plain_link_does() {
    let (m, _) = run(&mobile(), None);
    let (p, _) = run(&plain(), None);
    let (sm, sp) = (srtt(&m), srtt(&p));
    let (dm, dp) = (drops_to_mh(&m), drops_to_mh(&p));
    eprintln!("mobile: srtt {sm} drops {dm}; plain: srtt {sp} drops {dp}");
    assert!(sp < 0.3, "plain srtt {sp}");
    assert!(
        (sm - sp).abs() < 0.25 * sp,
        "mobile srtt {sm} s against plain {sp} s"
    );
    assert!(dp > 0 && dm > 0, "drops: mobile {dm}, plain {dp}");
    assert!(
        dm * 2 >= dp && dm <= dp * 2,
        "drops: mobile {dm}, plain {dp}"
    );
    let max_q = |s: &Summary| {
        s.links
            .iter()
            .filter(|l| l.to == "mh")
            .map(|l| l.stats.max_queue_pkts)
            .max()
    };
    assert_eq!(max_q(&m), max_q(&p));
}

/// An advertisement every microsecond (the shortest period taken) floods the air hop:
/// what its queue has no room for is dropped there and counted, as any packet; the agent
/// holds none of it (it used to keep one more each period, without bound).
#[test]
fn advertisements_beyond_the_air_queue_are_dropped_not_held() {
    let text = mobile()
        .replace("duration = \"30s\"", "duration = \"200ms\"")
        .replace(
            "queue = \"50pkt\"",
            "queue = \"50pkt\"\nadvertise = \"1us\"",
        );
    let (s, _) = run(&text, None);
    let air = s.links.iter().find(|l| l.to == "mh").unwrap();
    // about 200,000 advertisements, of which the 5 Mbit/s hop sends a few thousand
    assert!(air.stats.drops > 190_000, "{:?}", air.stats);
    assert_eq!(air.stats.max_queue_pkts, 50);
}
