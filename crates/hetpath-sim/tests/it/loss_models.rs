//! Whole-scenario checks of TCP under loss against analytic models.

use crate::common;
use common::*;

/// Mathis, Semke, Mahdavi, Ott (CCR 1997): BW = MSS/RTT * C/sqrt(p), C = sqrt(3/(2b)) with b
/// packets acknowledged per ACK. The model ignores timeouts and holds for small p; we
/// accept goodput between 0.6x the delayed-ACK value (b = 2) and 1.3x the b = 1 value.
#[test]
fn reno_family_goodput_is_within_the_mathis_band() {
    let rtt: f64 = 0.2;
    let mss = 1460.0 * 8.0;
    for cc in ["reno", "newreno"] {
        for p in [0.002f64, 0.005, 0.01] {
            let link = format!(
                "rate = \"100Mbps\"\ndelay = \"100ms\"\nqueue = \"10000pkt\"\nab = {{ channel = {{ model = \"bernoulli\", p = {p} }} }}"
            );
            let flows: String = (0..8).map(|i| flow(&format!("f{i}"), cc, "")).collect();
            let (sum, _) = run(&two_node("300s", &link, &flows), None);
            let mean =
                sum.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / sum.flows.len() as f64;
            let lo = 0.6 * mss / rtt * (3.0f64 / 4.0).sqrt() / f64::sqrt(p);
            let hi = 1.3 * mss / rtt * (3.0f64 / 2.0).sqrt() / f64::sqrt(p);
            assert!(
                mean > lo && mean < hi,
                "{cc} p={p}: mean goodput {mean:.0} outside [{lo:.0}, {hi:.0}]"
            );
        }
    }
}

#[test]
fn markov_channel_loss_converges_to_its_stationary_value() {
    let (alpha, beta) = (0.01, 0.1);
    let link = format!("rate = \"10Mbps\"\ndelay = \"10ms\"\nab = {{ channel = {{ model = \"markov\", alpha = {alpha}, beta = {beta} }} }}");
    let (sum, _) = run(&two_node("300s", &link, &flow("f", "newreno", "")), None);
    let l = &sum.links[0].stats;
    let measured = l.lost_packets as f64 / l.tx_packets as f64;
    let pi_bad = alpha / (alpha + beta);
    // Bursts make samples correlated: allow 10 standard errors of an i.i.d. estimate.
    let tol = 10.0 * (pi_bad * (1.0 - pi_bad) / l.tx_packets as f64).sqrt();
    assert!(
        (measured - pi_bad).abs() < tol,
        "measured {measured} vs stationary {pi_bad} (n = {})",
        l.tx_packets
    );
}

#[test]
fn an_outage_longer_than_the_retry_budget_aborts_the_flow() {
    let link = "rate = \"1Mbps\"\ndelay = \"50ms\"\nab = { outages = [{ down = \"5s\", up = \"1000s\" }] }";
    let f = flow(
        "f",
        "newreno",
        "[flow.tcp]\ndata_retries = 3\nmax_rto = \"10s\"",
    );
    let (sum, _) = run(&two_node("200s", link, &f), None);
    assert!(sum.flows[0].aborted);
    assert_eq!(sum.flows[0].timeouts, 4);
}

#[test]
fn a_short_outage_is_survived() {
    let link =
        "rate = \"1Mbps\"\ndelay = \"50ms\"\nab = { outages = [{ down = \"5s\", up = \"8s\" }] }";
    let (sum, _) = run(
        &two_node("60s", link, &flow("f", "newreno", "size = \"2MB\"")),
        None,
    );
    let f = &sum.flows[0];
    assert!(
        !f.aborted && f.completion_s.is_some() && f.timeouts >= 1,
        "{f:?}"
    );
}

#[test]
fn an_outage_mid_packet_does_not_speed_the_link_up() {
    // 12 kbit/s: a 1500-byte packet takes 1 s; the outage cuts one and ends while the
    // packet would still have been on the transmitter.
    let link = "rate = \"12kbps\"\ndelay = \"10ms\"\nab = { outages = [{ down = \"1.5s\", up = \"1.6s\" }] }";
    let text = two_node("20s", link, &flow("f", "newreno", ""));
    let mut sim = hetpath_sim::load(&text, "t.toml", None).unwrap();
    let starts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tap = starts.clone();
    sim.dir_mut(hetpath_sim::sim::DirId(0)).capture = Some(Box::new(move |t, f| {
        tap.lock().unwrap().push((t, f.packet.size()))
    }));
    sim.run(&mut |_, _| true);
    let starts = starts.lock().unwrap();
    for w in starts.windows(2) {
        let (t0, size) = w[0];
        let serialisation = hetpath_proto::Dur::serialization(size as u64, 12_000);
        let outage = t0.as_secs_f64() < 1.6 && w[1].0.as_secs_f64() >= 1.6;
        assert!(
            outage || w[1].0 >= t0 + serialisation,
            "{:?} started before {:?} finished",
            w[1].0,
            t0
        );
    }
}

#[test]
fn a_lost_final_ack_does_not_abort_a_finished_flow() {
    // a -> b transmissions: SYN, data, FIN, then the ACK of the server's FIN (index 3).
    let link =
        "rate = \"1Mbps\"\ndelay = \"10ms\"\nab = { channel = { model = \"trace\", lost = [3] } }";
    let f = flow(
        "f",
        "newreno",
        "size = \"1000B\"\n[flow.tcp]\ndata_retries = 2",
    );
    let (sum, _) = run(&two_node("60s", link, &f), None);
    let f = &sum.flows[0];
    assert!(f.completion_s.is_some() && !f.aborted, "{f:?}");
    assert_eq!(sum.links[0].stats.lost_packets, 1);
}
