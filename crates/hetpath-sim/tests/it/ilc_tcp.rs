//! Seed 002's properties on the topology of its Fig. 8 (mh ~ ha/fa - n2 - ch): ILC-TCP
//! is its base TCP when nothing disconnects, a handoff without ILC collapses the window
//! and backs the timer off, Mobile IP tunnels to the care-of address after registration,
//! and a moving host hands off by coverage.

use crate::common;

use common::{run, HANDOFF};
use hetpath_sim::results::Series;

/// Fig. 8 with every link at `rate`, the mobile table's extra keys `mobile`, and one flow
/// mh -> ch of `size` with `tcp` keys.
fn fig8(rate: &str, mobile: &str, size: &str, cc: &str, tcp: &str) -> String {
    let scenario = "name = \"fig8\"\nduration = \"3000s\"\nsample_interval = \"50ms\"";
    common::fig8(scenario, rate, mobile, "", size, cc, tcp)
}

fn cwnd_between(s: &Series, t0: f64, t1: f64) -> Vec<u64> {
    let f = &s.flows;
    (0..f.time_s.len())
        .filter(|&i| f.time_s[i] >= t0 && f.time_s[i] < t1)
        .map(|i| f.cwnd_bytes[i])
        .collect()
}

#[test]
fn without_disconnection_ilc_is_its_base_tcp() {
    // A window far above the 50-packet queue, which drops what the host sends into it:
    // congestion losses and timeouts, which the State Manager must answer with
    // PROCEED_NORMALLY.
    let big = r#"recv_buffer = "300000B", local_queue = "drop""#;
    let mut timeouts = 0;
    for cc in ["tahoe", "reno"] {
        let base = run(&fig8("1Mbps", "", "2MB", cc, big), Some(3));
        timeouts += base.0.flows[0].timeouts;
        for ilc in ["link-only", "link-ip"] {
            let with = run(
                &fig8("1Mbps", "", "2MB", cc, &format!("{big}, ilc = \"{ilc}\"")),
                Some(3),
            );
            // The same results; only the State Manager's own counters are new, and they
            // say it answered every timeout with PROCEED_NORMALLY.
            let advice = |c: &str| {
                with.0
                    .machines
                    .iter()
                    .find(|m| m.counter == c)
                    .map(|m| m.value)
            };
            assert_eq!(advice("advised_proceed"), Some(with.0.flows[0].timeouts));
            assert_eq!(advice("advised_freeze"), Some(0));
            let without_machines = hetpath_sim::Summary {
                machines: Vec::new(),
                ..with.0.clone()
            };
            assert!(base.0 == without_machines, "{cc} {ilc}: same summary");
            let (a, b) = (&base.1.flows, &with.1.flows);
            let first = (0..a.time_s.len().min(b.time_s.len())).find(|&i| {
                let row = |f: &hetpath_sim::results::FlowSeries| {
                    (
                        f.cwnd_bytes[i],
                        f.bytes_delivered[i],
                        f.in_flight_bytes[i],
                        f.rto_s[i].to_bits(),
                        f.srtt_s[i].to_bits(),
                    )
                };
                row(a) != row(b)
            });
            assert_eq!(
                first, None,
                "{cc} {ilc}: flow series differ at sample {first:?}"
            );
            assert!(base.1.links == with.1.links, "{cc} {ilc}: same link series");
            assert_eq!(a.time_s.len(), b.time_s.len());
        }
    }
    assert!(timeouts > 0, "the runs exercised the timeout path");
}

/// Section 1 and 4.1: after a handoff the standard sender's timeouts back off and its
/// window falls to one segment; ILC-TCP2 keeps the window through the same handoff.
#[test]
fn handoff_collapses_the_window_and_backs_off_without_ilc() {
    let plain = run(&fig8("1Mbps", HANDOFF, "5MB", "reno", ""), Some(1));
    let f = &plain.0.flows[0];
    assert!(f.completion_s.is_some(), "{f:?}");
    assert!(
        f.timeouts >= 2,
        "back-to-back timeouts during the 4 s gap: {f:?}"
    );
    let before = cwnd_between(&plain.1, 9.0, 10.0);
    let after = cwnd_between(&plain.1, 14.0, 16.0);
    assert!(
        before.iter().all(|&c| c >= 10_000),
        "window open before: {before:?}"
    );
    assert!(
        after.contains(&1000),
        "window at one segment after: {after:?}"
    );
    // The RTO doubled across the gap.
    let rto: Vec<f64> = (0..plain.1.flows.time_s.len())
        .filter(|&i| (9.0..15.0).contains(&plain.1.flows.time_s[i]))
        .map(|i| plain.1.flows.rto_s[i])
        .collect();
    let (lo, hi) = rto
        .iter()
        .fold((f64::MAX, 0.0f64), |a, &r| (a.0.min(r), a.1.max(r)));
    assert!(hi >= 4.0 * lo, "backoff: {lo} -> {hi}");

    let ilc = run(
        &fig8("1Mbps", HANDOFF, "5MB", "reno", r#"ilc = "link-ip""#),
        Some(1),
    );
    let g = &ilc.0.flows[0];
    assert_eq!(g.freezes, 1, "{g:?}");
    // The State Manager's own counters say the same (through the machine contract).
    let advised = |name: &str| {
        ilc.0
            .machines
            .iter()
            .filter(|m| m.machine == "state-manager" && m.counter == name)
            .map(|m| m.value)
            .sum::<u64>()
    };
    assert_eq!((advised("advised_freeze"), advised("restores")), (1, 1));
    let kept = cwnd_between(&ilc.1, 10.5, 14.0);
    assert!(
        kept.iter().all(|&c| c >= 10_000),
        "frozen window kept: {kept:?}"
    );
    assert!(g.completion_s < f.completion_s, "{g:?} vs {f:?}");
}

/// RFC 3344: at the foreign agent the host's ACKs come back through the home agent's
/// tunnel (ha -> n2 carries them), while its data goes fa -> n2 directly; with no
/// advertisement heard in time there is no registration and no ACK.
#[test]
fn after_registration_the_home_agent_tunnels_to_the_care_of_address() {
    let (s, _) = run(&fig8("1Mbps", HANDOFF, "2MB", "reno", ""), Some(1));
    assert!(s.flows[0].completion_s.is_some());
    let link = |name: &str, from: &str| {
        s.links
            .iter()
            .find(|l| l.name == name && l.from == from)
            .unwrap()
            .stats
    };
    let (ha_out, fa_out) = (link("n2-ha", "ha"), link("n2-fa", "fa"));
    assert!(
        fa_out.tx_bytes > 1_000_000,
        "data leaves through the foreign agent"
    );
    assert!(
        ha_out.tx_packets > 500,
        "tunnelled ACKs leave the home agent"
    );

    let never = format!("advertise = \"10000s\"\n{HANDOFF}");
    let (s, _) = run(&fig8("1Mbps", &never, "2MB", "reno", ""), Some(1));
    assert!(
        s.flows[0].completion_s.is_none(),
        "no registration, no ACKs"
    );
}

/// A host driving along a row of stations hands off at every cell edge; with a gap
/// between cells it is cut off for gap/speed seconds at each, which the link layer
/// reports as LINK_NOT_OK (and ILC-TCP freezes through).
#[test]
fn moving_host_hands_off_by_coverage() {
    let drive = |gap: f64, ilc: &str| {
        let spacing = 500.0 + gap;
        let mobile = format!(
            "path = [{{ to = [{}, 0.0], speed = 20.0 }}]\ndepart = \"2s\"",
            spacing
        );
        let text = fig8("1Mbps", &mobile, "4MB", "reno", ilc).replace(
            "position = [450.0, 0.0]",
            &format!("position = [{spacing}, 0.0]"),
        );
        run(&text, Some(2)).0.flows[0].clone()
    };
    let overlap = drive(-50.0, "");
    let gap = drive(25.0, "");
    assert!(overlap.completion_s.is_some() && gap.completion_s.is_some());
    assert!(gap.timeouts >= 1, "{gap:?}");
    let frozen = drive(25.0, r#"ilc = "link-ip""#);
    assert!(frozen.freezes >= 1, "{frozen:?}");
}
