//! Congestion controllers on whole scenarios: windows stay within the bounds their stack
//! sets, and a competing flow keeps a share (the reported Hybla blow-up under the `linux`
//! profile).

use crate::common::run;
use hetpath_sim::results::Series;

/// GEO hop 50/5 Mbit/s, 550 ms RTT, then an 802.11b WLAN to three stations; flows
/// `hybla`, `cubic`, `newreno`, one per station, with `[tcp]` keys `tcp`.
fn geo_wlan(tcp: &str, duration: &str) -> String {
    format!(
        r#"
[scenario]
name = "hybla-geo-wlan"
duration = "{duration}"
seed = 1
[tcp]
{tcp}
[[node]]
name = "sender"
[[node]]
name = "bridge"
[[node]]
name = "rx1"
[[node]]
name = "rx2"
[[node]]
name = "rx3"
[[link]]
name = "geo"
a = "sender"
b = "bridge"
delay = "275ms"
queue = "1000pkt"
ab = {{ rate = "50Mbps" }}
ba = {{ rate = "5Mbps" }}
[[wlan]]
name = "wlan"
ap = "bridge"
stations = ["rx1", "rx2", "rx3"]
queue = "50pkt"
[[flow]]
name = "hybla"
from = "sender"
to = "rx1"
cc = "hybla"
[[flow]]
name = "cubic"
from = "sender"
to = "rx2"
cc = "cubic"
[[flow]]
name = "newreno"
from = "sender"
to = "rx3"
cc = "newreno"
"#
    )
}

/// The largest window a flow's samples show, bytes.
fn max_cwnd(series: &Series, flow: u32) -> u64 {
    let f = &series.flows;
    (0..f.time_s.len())
        .filter(|&i| f.flow[i] == flow)
        .map(|i| f.cwnd_bytes[i])
        .max()
        .unwrap_or(0)
}

/// The reported case: under the `linux` profile Hybla's window went to 949 MB (655,000
/// segments), its retransmissions outnumbered what it delivered several times over, and
/// the CUBIC flow beside it was starved. Linux's tcp_hybla.c grows per ACK, clamps the
/// window at 65535 segments, and grows as Reno while a timeout's losses are repaired.
#[test]
fn linux_hybla_behind_a_geo_hop_keeps_the_kernels_bounds() {
    let (s, series) = run(&geo_wlan("profile = \"linux\"", "120s"), None);
    let mss = 1448; // 1460 less the timestamps option
    let (hybla, cubic) = (&s.flows[0], &s.flows[1]);
    assert_eq!((hybla.cc.as_str(), cubic.cc.as_str()), ("hybla", "cubic"));
    // The kernel's clamp (the rho = 22 slow start reaches it on the first ACK).
    let max = max_cwnd(&series, 0);
    assert!(max <= 65_535 * mss, "Hybla's window reached {max} B");
    // A sender that resends more than it delivers is pouring its window into drops.
    let resent = hybla.retransmissions * mss;
    assert!(
        resent < hybla.bytes_delivered,
        "Hybla resent {resent} B to deliver {} B",
        hybla.bytes_delivered
    );
    // The WLAN carries about 5 Mbit/s of TCP: the CUBIC flow gets a real part of it.
    assert!(
        cubic.goodput_bps > 0.5e6 && max_cwnd(&series, 1) > 100_000,
        "CUBIC: {} bit/s, window at most {} B",
        cubic.goodput_bps,
        max_cwnd(&series, 1)
    );
}
