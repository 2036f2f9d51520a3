//! The sender behaviours real stacks differ on (`[tcp]` keys and profiles), whole
//! scenarios: each key does what it says, and the theory checks for Hybla.

use crate::common;
use common::*;
use hetpath_sim::Summary;

/// A 10 Mbit/s GEO hop (600 ms RTT) with `p` i.i.d. loss on the data direction and a
/// 100-packet queue at the sender's own first hop, one flow with `tcp` keys.
fn geo(p: f64, cc: &str, tcp: &str, flow_extra: &str, duration: &str) -> String {
    let link = format!(
        "rate = \"10Mbps\"\ndelay = \"300ms\"\nqueue = \"100pkt\"\n\
         ab = {{ channel = {{ model = \"bernoulli\", p = {p} }} }}"
    );
    let f = flow("f", cc, &format!("{flow_extra}\ntcp = {{ {tcp} }}"));
    two_node(duration, &link, &f)
}

fn one(text: &str, seed: u64) -> Summary {
    run(text, Some(seed)).0
}

#[test]
fn a_host_waits_at_its_full_queue_unless_told_to_drop() {
    let at = |mode: &str| {
        run(
            &geo(
                0.0,
                "hybla",
                &format!("local_queue = \"{mode}\""),
                "",
                "60s",
            ),
            Some(1),
        )
    };
    let ((wait, wait_series), (cwr, cwr_series), (drop, _)) = (at("wait"), at("cwr"), at("drop"));
    // Hybla's first window is far above the 100-packet queue.
    assert!(
        drop.links[0].stats.drops > 1000,
        "{:?}",
        drop.links[0].stats
    );
    assert_eq!(
        (wait.links[0].stats.drops, cwr.links[0].stats.drops),
        (0, 0)
    );
    assert_eq!(wait.flows[0].retransmissions, 0);
    assert!(wait.flows[0].goodput_bps > 10.0 * drop.flows[0].goodput_bps);
    // Without loss, only CWR sets ssthresh: it reduces the window at a refusal.
    let last_ssthresh = |s: &hetpath_sim::results::Series| *s.flows.ssthresh_bytes.last().unwrap();
    assert!(last_ssthresh(&wait_series).is_nan());
    assert!(last_ssthresh(&cwr_series).is_finite());
}

#[test]
fn pacing_spreads_the_first_window_over_the_round_trip() {
    // Ten segments, the initial window: unpaced they leave as one burst into the 10 Mbit/s
    // queue; paced at twice cwnd/srtt (slow start) they leave 60 ms apart.
    let max_queue = |tcp: &str| {
        one(&geo(0.0, "cubic", tcp, "size = \"14000B\"", "10s"), 1).links[0]
            .stats
            .max_queue_pkts
    };
    let (burst, paced) = (max_queue("iw = 10"), max_queue("iw = 10, pacing = true"));
    assert!(burst >= 8, "an unpaced window queues as a burst: {burst}");
    assert!(paced <= 1, "paced: {paced}");
}

#[test]
fn timestamps_cost_twelve_bytes_of_every_segment() {
    let bytes_per_packet = |tcp: &str| {
        let s = one(&geo(0.0, "newreno", tcp, "size = \"1MB\"", "60s"), 1);
        let l = &s.links[0].stats;
        (l.tx_packets, l.tx_bytes as f64 / l.tx_packets as f64)
    };
    let (plain, with) = (bytes_per_packet(""), bytes_per_packet("timestamps = true"));
    // The same 1500-byte packets carry 1448 payload bytes instead of 1460: more packets.
    assert!(with.0 > plain.0, "{with:?} {plain:?}");
    assert!((with.1 - plain.1).abs() < 15.0, "{with:?} {plain:?}");
    let acks = |tcp: &str| {
        one(&geo(0.0, "newreno", tcp, "size = \"1MB\"", "60s"), 1).links[0..2]
            .iter()
            .map(|l| l.stats.tx_bytes)
            .collect::<Vec<_>>()
    };
    let (a, b) = (acks(""), acks("timestamps = true"));
    assert!(b[1] > a[1], "ACKs grow by 12 bytes each: {a:?} {b:?}");
}

#[test]
fn a_separate_handshake_ack_is_one_more_packet_toward_the_server() {
    let acks = |mode: &str| {
        let tcp = format!("handshake_ack = \"{mode}\"");
        one(&geo(0.0, "newreno", &tcp, "size = \"100KB\"", "30s"), 1).links[0]
            .stats
            .tx_packets
    };
    assert_eq!(acks("separate"), acks("piggyback") + 1);
}

#[test]
fn each_recovery_choice_runs_and_changes_the_outcome() {
    // Each key runs: the recovery choices change the outcome, and PRR never sends more
    // than the window allows (no extra queue drops at the sender's own queue).
    for (key, value) in [
        ("recovery", "\"prr\""),
        ("recovery", "\"prr-crb\""),
        ("ssthresh_from", "\"pipe\""),
        ("ssthresh_from", "\"cwnd\""),
    ] {
        let tcp = format!("{key} = {value}");
        let s = one(&geo(0.01, "newreno", &tcp, "", "120s"), 2);
        let base = one(&geo(0.01, "newreno", "", "", "120s"), 2);
        assert!(s.flows[0].fast_retransmits > 10, "{key} {value}");
        assert!(s != base, "{key} = {value} changed nothing");
    }
}

/// Hybla's throughput in congestion avoidance is that of a Reno connection with RTT0
/// (Caini and Firrincieli 2004): MSS/RTT0 * sqrt(3/(2bp)), b = 1 (every segment counted)
/// or b = 2 (delayed ACKs). As in the Mathis check, the run must land within 30% of that
/// band: above 0.7 x the b = 2 value, below 1.3 x the b = 1 value. Linux profile (pacing,
/// PRR, timestamps: 1448-byte segments) with the paper's Hybla rules, five seeds.
#[test]
fn hybla_at_one_percent_loss_is_near_its_throughput_formula() {
    let p = 0.01;
    let mss = 1448.0 * 8.0;
    let rtt0 = 0.025;
    let text = geo(p, "hybla", "profile = \"linux\"", "", "300s")
        .replace("cc = \"hybla\"", "cc = { name = \"hybla\", linux = false }");
    let mean = (1..=5)
        .map(|s| one(&text, s).flows[0].goodput_bps)
        .sum::<f64>()
        / 5.0;
    let (b2, b1) = (
        mss / rtt0 * (3.0 / (4.0 * p)).sqrt(),
        mss / rtt0 * (3.0 / (2.0 * p)).sqrt(),
    );
    assert!(
        mean > 0.7 * b2 && mean < 1.3 * b1,
        "Hybla {mean:.0} bit/s outside [{:.0}, {:.0}]",
        0.7 * b2,
        1.3 * b1
    );
}

/// The Hybla paper's headline: on a GEO path Hybla outperforms NewReno, loss or not.
#[test]
fn hybla_beats_newreno_on_geo_under_the_linux_profile() {
    // No loss: a 5 MB transfer, so slow start decides.
    let done = |cc: &str| {
        let s = one(
            &geo(0.0, cc, "profile = \"linux\"", "size = \"5MB\"", "120s"),
            1,
        );
        s.flows[0].completion_s.expect("completes")
    };
    let (hybla, newreno) = (done("hybla"), done("newreno"));
    assert!(
        hybla < newreno,
        "5 MB: Hybla {hybla} s, NewReno {newreno} s"
    );
    for p in [0.001, 0.01] {
        let goodput = |cc: &str| {
            let text = geo(p, cc, "profile = \"linux\"", "", "300s");
            (1..=3)
                .map(|s| one(&text, s).flows[0].goodput_bps)
                .sum::<f64>()
        };
        let (hybla, newreno) = (goodput("hybla"), goodput("newreno"));
        assert!(hybla > newreno, "p = {p}: Hybla {hybla}, NewReno {newreno}");
    }
}
