//! Seed 003's properties on small instances: the radio channel, TCP-radio and newRTO,
//! NewReno's retry limit, and the ideal protocol as an upper bound.

use crate::common;

use common::run;
use hetpath_proto::packet::Body;
use std::sync::{Arc, Mutex};

/// The paper's link (one hop, 1 s each way, RS(255,223)) at `rate`, with a Markov
/// channel of (alpha, beta) stepping per packet-time slot, and one flow of `size`.
fn radio(
    rate: &str,
    slot: &str,
    ab: (f64, f64),
    size: &str,
    protocol: &str,
    extra_link: &str,
) -> String {
    let (alpha, beta) = ab;
    let flow = match protocol {
        "ideal" => "transport = \"ideal\"".to_string(),
        "newreno" => "cc = \"newreno\"\ntcp = { recv_buffer = \"32KB\" }".into(),
        "tcp-radio" => {
            "cc = \"tcp-radio\"\ntcp = { iw = \"bdp\", dupthresh = 1, recv_buffer = \"4MB\" }"
                .into()
        }
        "tcp-radio-newrto" => {
            "cc = \"tcp-radio\"\ntcp = { iw = \"bdp\", dupthresh = 1, recv_buffer = \"4MB\", \
             rto_backoff = false, max_rto = \"12s\", syn_retries = 500, data_retries = 500 }"
                .into()
        }
        other => panic!("unknown protocol {other}"),
    };
    format!(
        r#"
[scenario]
name = "radio"
duration = "50000s"
stop_when_done = true
[tcp]
initial_rto = "3s"
min_rto = "200ms"
max_rto = "120s"
rto_formula = "linux-2.2"
syn_retries = 10
data_retries = 15
abc = false
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "radio"
a = "a"
b = "b"
rate = "{rate}"
delay = "1s"
queue = "400pkt"
channel = {{ model = "markov", alpha = {alpha}, beta = {beta}, slot = "{slot}", fec = {{ n = 255, k = 223 }} }}
{extra_link}
[[flow]]
name = "f"
from = "a"
to = "b"
size = "{size}"
{flow}
"#
    )
}

const PROTOCOLS: [&str; 4] = ["newreno", "tcp-radio", "tcp-radio-newrto", "ideal"];

#[test]
fn clean_channel_everyone_completes_and_newrto_nears_fec_capacity() {
    // alpha = 0: the chain starts and stays good (stationary P(bad) = 0).
    for p in PROTOCOLS {
        let (s, _) = run(
            &radio("1Mbps", "13.722ms", (0.0, 1.0), "1000KB", p, ""),
            Some(1),
        );
        assert!(
            s.flows[0].completion_s.is_some(),
            "{p} did not complete on a clean channel"
        );
    }
    // A 20 MB transfer: the fixed costs (handshake, one-way delay) are 2% of the time, so
    // newRTO's normalized throughput should be within 5% of the FEC-limited capacity
    // 223/255 * 1460/1500 of the nominal rate.
    let (s, _) = run(
        &radio(
            "1Mbps",
            "13.722ms",
            (0.0, 1.0),
            "20MB",
            "tcp-radio-newrto",
            "",
        ),
        Some(1),
    );
    let f = &s.flows[0];
    let nt = 20e6 * 8.0 / f.completion_s.unwrap() / 1e6;
    let capacity = 223.0 / 255.0 * 1460.0 / 1500.0;
    assert!(
        nt > 0.95 * capacity && nt <= capacity,
        "normalized throughput {nt:.4} vs capacity {capacity:.4}"
    );
}

#[test]
fn ideal_is_never_beaten_on_the_same_realisation() {
    for (rate, slot) in [("64kbps", "214.406ms"), ("1Mbps", "13.722ms")] {
        for ab in [(0.01, 0.1), (0.428, 1.0), (0.1, 0.1)] {
            for seed in 1..=5 {
                let t = |p: &str| {
                    let (s, _) = run(&radio(rate, slot, ab, "100KB", p, ""), Some(seed));
                    s.flows[0].completion_s
                };
                let ideal = t("ideal").expect("the ideal protocol always completes");
                for p in &PROTOCOLS[..3] {
                    if let Some(tp) = t(p) {
                        assert!(ideal <= tp, "{p} finished in {tp} s before the ideal ({ideal} s): {rate} {ab:?} seed {seed}");
                    }
                }
            }
        }
    }
}

/// Send times of every data transmission of the first segment lost in a forward-channel
/// blackout from 30 s to `until` s (the transmitter keeps sending into it).
fn retransmission_times(protocol: &str, until: u32) -> (hetpath_sim::Summary, Vec<f64>) {
    let outage =
        format!("ab = {{ channel = {{ model = \"trace\", bad = [[\"30s\", \"{until}s\"]] }} }}");
    let text = radio("1Mbps", "13.722ms", (0.0, 1.0), "100MB", protocol, &outage);
    let mut sim = hetpath_sim::load(&text, "t.toml", Some(1)).unwrap();
    let sends: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let tap = sends.clone();
    sim.dir_mut(hetpath_sim::sim::DirId(0)).capture = Some(Box::new(move |now, f| {
        if let Body::Tcp(seg) = &f.packet.body {
            if seg.len > 0 {
                tap.lock().unwrap().push((now.as_secs_f64(), seg.seq));
            }
        }
    }));
    sim.run(&mut |_, _| true);
    let sends = sends.lock().unwrap();
    // Everything sent from 30 s on is lost; the timer resends the lowest of it.
    let head = sends
        .iter()
        .filter(|(t, _)| *t >= 30.0)
        .map(|&(_, s)| s)
        .min()
        .unwrap();
    let times = sends
        .iter()
        .filter(|&&(t, s)| s == head && t >= 30.0 && t < until as f64)
        .map(|&(t, _)| t)
        .collect();
    (sim.summary(0.0), times)
}

#[test]
fn newreno_aborts_exactly_after_its_retry_limit() {
    let (s, times) = retransmission_times("newreno", 100_000);
    let f = &s.flows[0];
    assert!(f.aborted, "NewReno should abort in an endless outage");
    // TCP_RETRIES2 = 15: fifteen timer retransmissions, and the sixteenth expiry aborts.
    assert_eq!(f.timeouts, 16);
    assert_eq!(
        times.len() - 1,
        15,
        "retransmissions of the lost segment: {times:?}"
    );
    // Backoff: each gap doubles until MAX_RTO = 120 s caps it.
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    for w in gaps.windows(2) {
        assert!(w[1] >= w[0] - 1e-6 && w[1] <= 120.0 + 1e-6, "gaps {gaps:?}");
    }
    assert!((gaps.last().unwrap() - 120.0).abs() < 1e-6, "gaps {gaps:?}");
}

#[test]
fn newrto_never_backs_off_and_outlasts_a_long_blackout() {
    // Ten minutes of blackout: newRTO retries at a constant pace (at most 500 times).
    let (s, times) = retransmission_times("tcp-radio-newrto", 630);
    assert!(!s.flows[0].aborted);
    assert!(s.flows[0].completion_s.is_some());
    assert!(
        times.len() > 50,
        "newRTO keeps retrying: {} sends",
        times.len()
    );
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    // Between head retransmissions the timer fires once per RTO, whose value never grows.
    let first = gaps[1];
    assert!(first <= 12.0 + 1e-6);
    for g in &gaps[1..] {
        assert!((g - first).abs() < 1e-6, "gaps {:?}", &gaps[..10]);
    }
}

#[test]
fn iw_bdp_counts_serialisation_on_slow_links() {
    // B x (2 s + a 1500-byte packet + a 40-byte ACK at B), in whole 1460-byte segments:
    // 16 kbit/s -> 5540 B -> 4 segments; 1 Mbit/s -> 251540 B -> 173 segments.
    for (rate, slot, segments) in [("16kbps", "857.623ms", 4u64), ("1Mbps", "13.722ms", 173)] {
        let (_, series) = run(
            &radio(rate, slot, (0.0, 1.0), "10KB", "tcp-radio", ""),
            Some(1),
        );
        assert_eq!(series.flows.cwnd_bytes[0], segments * 1460, "{rate}");
    }
}

/// The summary as JSON text without the scenario's own text, for run-for-run equality.
fn outcome(text: &str) -> String {
    let (s, _) = run(text, Some(3));
    let mut v = serde_json::to_value(&s).unwrap();
    v.as_object_mut().unwrap().remove("scenario");
    v.to_string()
}

#[test]
fn queue_scale_multiplies_the_queue_and_refuses_what_it_cannot_honour() {
    // 400 packets scaled by 0.25 is the 100-packet queue, run for run; 0.5 is not.
    let scaled = radio(
        "1Mbps",
        "13.722ms",
        (0.01, 0.1),
        "1000KB",
        "tcp-radio",
        "queue_scale = 0.25",
    );
    let plain = radio("1Mbps", "13.722ms", (0.01, 0.1), "1000KB", "tcp-radio", "")
        .replace("queue = \"400pkt\"", "queue = \"100pkt\"");
    assert_eq!(outcome(&scaled), outcome(&plain));
    let half = radio(
        "1Mbps",
        "13.722ms",
        (0.01, 0.1),
        "1000KB",
        "tcp-radio",
        "queue_scale = 0.5",
    );
    assert_ne!(outcome(&half), outcome(&plain));
    for (bad, says) in [
        (
            "queue_scale = 0.0",
            "queue_scale: 0: expected a positive number",
        ),
        (
            "queue_scale = -2.0",
            "queue_scale: -2: expected a positive number",
        ),
        (
            "queue_scale = nan",
            "queue_scale: NaN: expected a positive number",
        ),
        (
            "queue_scale = 0.001",
            "scaled by it is 0 packets; expected at least 1",
        ),
    ] {
        let text = radio("1Mbps", "13.722ms", (0.01, 0.1), "3KB", "newreno", bad);
        let e = match hetpath_sim::load(&text, "q.toml", None) {
            Ok(_) => panic!("accepted {bad}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(says) && e.starts_with("q.toml"), "{bad}: {e}");
    }
}

#[test]
fn markov_step_packet_overrides_a_given_slot() {
    // step = "packet" on a slotted chain is the slot-less (per-packet) chain, run for run.
    let forced = radio("1Mbps", "13.722ms", (0.01, 0.1), "100KB", "tcp-radio", "")
        .replace("fec = {", "step = \"packet\", fec = {");
    let per_packet = radio("1Mbps", "13.722ms", (0.01, 0.1), "100KB", "tcp-radio", "")
        .replace("slot = \"13.722ms\", ", "");
    let slotted = radio("1Mbps", "13.722ms", (0.01, 0.1), "100KB", "tcp-radio", "");
    assert_eq!(outcome(&forced), outcome(&per_packet));
    assert_ne!(outcome(&forced), outcome(&slotted));
    let no_slot = per_packet.replace("fec = {", "step = \"slot\", fec = {");
    let e = hetpath_sim::load(&no_slot, "s.toml", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("step = \"slot\": no `slot` duration is given"),
        "{e}"
    );
}
