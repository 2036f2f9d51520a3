//! Seed 000's SaTPEP baseline (`scenarios/apohn/satpep.toml`), shortened: the `satpep`
//! controller keeps its window through losses, its satellite leg is paced at the link's
//! rate so no queue builds at the GEO hop, and the distributed PEP beats end-to-end
//! NewReno (`scenarios/apohn/newreno.toml`) over the same path.

use crate::common;

use common::run;
use hetpath_proto::cc::{Algorithm, CcConfig, CongestionEvent, SatpepConfig, UNLIMITED_WINDOW};
use hetpath_proto::{Dur, Time};
use hetpath_sim::results::{LegResult, LinkResult, Series};
use hetpath_sim::Summary;

/// A scenario of `scenarios/apohn`, run for `duration` instead of 2000 s, with `edit`
/// (old, new) applied to its text.
fn apohn(file: &str, duration: &str, edit: Option<(&str, &str)>) -> String {
    let path = format!(
        "{}/../../scenarios/apohn/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = replace_once(
        &text,
        "duration = \"2000s\"",
        &format!("duration = \"{duration}\""),
    );
    if let Some((old, new)) = edit {
        text = replace_once(&text, old, new);
    }
    text
}

fn replace_once(text: &str, old: &str, new: &str) -> String {
    assert_eq!(text.matches(old).count(), 1, "expected `{old}` once");
    text.replace(old, new)
}

/// The satellite forward channel with Bernoulli loss `p`.
fn lossy_geo(p: f64) -> (&'static str, String) {
    (
        "ab = { rate = \"20Mbps\" }",
        format!("ab = {{ rate = \"20Mbps\", channel = {{ model = \"bernoulli\", p = {p} }} }}"),
    )
}

fn leg<'a>(s: &'a Summary, from: &str, to: &str) -> &'a LegResult {
    s.legs
        .iter()
        .find(|l| l.from == from && l.to == to)
        .unwrap_or_else(|| panic!("no leg {from}->{to}: {:?}", s.legs))
}

fn link<'a>(s: &'a Summary, name: &str, from: &str) -> &'a LinkResult {
    s.links
        .iter()
        .find(|l| l.name == name && l.from == from)
        .unwrap_or_else(|| panic!("no link {name} from {from}"))
}

/// Leg `k` of flow 0's congestion window at every sample.
fn cwnd_samples(series: &Series, k: u32) -> Vec<u64> {
    let f = &series.flows;
    (0..f.time_s.len())
        .filter(|&i| f.flow[i] == 0 && f.leg[i] == k)
        .map(|i| f.cwnd_bytes[i])
        .collect()
}

#[test]
fn the_controller_window_does_not_shrink_after_a_loss() {
    // The controller alone, built as a scenario builds it.
    let mut cc = Algorithm::Satpep(SatpepConfig {
        rate_bps: 20_000_000,
    })
    .build(CcConfig::new(1460));
    let before = cc.cwnd();
    let ev = |repeat| CongestionEvent {
        now: Time(1_000_000_000),
        bytes_in_flight: 1_500_000,
        srtt: Dur::from_millis(600),
        min_rtt: Dur::from_millis(600),
        repeat,
    };
    cc.on_congestion_event(&ev(false));
    assert_eq!(cc.cwnd(), before, "after a loss detected by SACK");
    cc.on_rto(&ev(false));
    cc.on_rto(&ev(true));
    assert_eq!(cc.cwnd(), before, "after timeouts");
    assert_eq!(cc.pacing_rate(), Some(20_000_000));

    // In the scenario, with 1% loss on the satellite channel: the satellite leg (leg 1,
    // terminal -> bridge) repairs losses, and its window is the same at every sample.
    let (geo, lossy) = lossy_geo(0.01);
    let (s, series) = run(&apohn("satpep.toml", "30s", Some((geo, &lossy))), Some(1));
    assert!(link(&s, "geo", "terminal").stats.lost_packets > 50);
    let sat = leg(&s, "terminal", "bridge");
    assert_eq!((sat.leg, sat.cc.as_str()), (1, "satpep"));
    assert!(sat.retransmissions > 50, "{sat:?}");
    assert!(sat.fast_retransmits > 0, "{sat:?}");
    let cwnd = cwnd_samples(&series, 1);
    assert!(cwnd.len() > 250);
    assert!(cwnd.iter().all(|&w| w == UNLIMITED_WINDOW), "{cwnd:?}");
    // The losses stay on the satellite hop: the sender's leg sees none of them.
    let lan = leg(&s, "sender", "terminal");
    assert_eq!(lan.timeouts, 0, "{lan:?}");
}

#[test]
fn the_satellite_leg_is_paced_so_no_queue_builds_at_the_geo_hop() {
    // With an unlimited window and an 8 MB store at each end, an unpaced sender would put
    // megabytes into the 1000-packet GEO queue in its first round trip.
    for p in [0.0, 0.01] {
        let (geo, lossy) = lossy_geo(p);
        let edit = (p > 0.0).then_some((geo, lossy.as_str()));
        let (s, series) = run(&apohn("satpep.toml", "20s", edit), Some(2));
        let fwd = link(&s, "geo", "terminal");
        assert_eq!(fwd.stats.drops, 0, "p = {p}");
        assert!(fwd.stats.max_queue_pkts <= 2, "p = {p}: {:?}", fwd.stats);
        // Paced at the link's rate, not below it: once the satellite leg is open (its
        // handshake takes a round trip, 0.6 s, and its first round trip is held to the
        // SYN-ACK's unscaled 64 KiB window) and until the bridge's 8 MB store fills (at
        // about 15 Mbit/s, some 4 s later), the hop carries 20 Mbit/s.
        let sent = geo_bytes_between(&series, &s, 2.0, 4.0);
        let expect = 20e6 / 8.0 * 2.0;
        assert!(
            (0.98 * expect..=1.0 * expect + 1500.0).contains(&sent),
            "p = {p}: {sent} bytes in 2 s"
        );
    }
}

/// Bytes the GEO hop's forward direction sent between two sample times.
fn geo_bytes_between(series: &Series, s: &Summary, t0: f64, t1: f64) -> f64 {
    let d = s
        .links
        .iter()
        .position(|l| l.name == "geo" && l.from == "terminal")
        .unwrap() as u32;
    let l = &series.links;
    let at = |t: f64| {
        (0..l.time_s.len())
            .filter(|&i| l.link[i] == d && l.time_s[i] <= t + 1e-9)
            .map(|i| l.tx_bytes[i])
            .next_back()
            .unwrap()
    };
    (at(t1) - at(t0)) as f64
}

#[test]
fn distributed_satpep_beats_end_to_end_newreno_over_the_same_path() {
    let (pep, _) = run(&apohn("satpep.toml", "30s", None), Some(1));
    let (e2e, _) = run(&apohn("newreno.toml", "30s", None), Some(1));
    let (g_pep, g_e2e) = (pep.flows[0].goodput_bps, e2e.flows[0].goodput_bps);
    assert!(g_pep > 1.5 * g_e2e, "SaTPEP {g_pep} vs NewReno {g_e2e}");
    // The WLAN is the bottleneck of both: the PEP's goodput is what NewReno gets over
    // 802.11b at 11 Mbit/s, a few Mbit/s, and well below the 20 Mbit/s satellite rate.
    assert!((3.5e6..6.5e6).contains(&g_pep), "{g_pep}");
    let bottleneck = pep.legs.iter().find(|l| l.bottleneck).unwrap();
    assert_eq!(
        (bottleneck.from.as_str(), bottleneck.to.as_str()),
        ("bridge", "receiver")
    );
    // Both PEPs split the one connection: three legs.
    assert_eq!(pep.legs.len(), 3);
    assert_eq!(e2e.legs.len(), 1);
}

#[test]
fn satpep_needs_its_rate_and_says_so_on_one_line() {
    let text = apohn(
        "satpep.toml",
        "20s",
        Some((
            "cc = { name = \"satpep\", rate = \"20Mbps\" }",
            "cc = \"satpep\"",
        )),
    );
    let e = hetpath_sim::load(&text, "satpep.toml", None)
        .err()
        .expect("an error");
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        msg.starts_with("satpep.toml: agent[0].cc: missing: satpep paces at a rate"),
        "{msg}"
    );
    let text = apohn(
        "satpep.toml",
        "20s",
        Some((
            "cc = { name = \"satpep\", rate = \"20Mbps\" }",
            "cc = { name = \"satpep\", rate = \"20Mbps\", beta = 0.5 }",
        )),
    );
    let msg = hetpath_sim::load(&text, "satpep.toml", None)
        .err()
        .expect("an error")
        .to_string();
    assert!(
        msg.contains("unknown field `beta`, expected `rate`"),
        "{msg}"
    );
}
