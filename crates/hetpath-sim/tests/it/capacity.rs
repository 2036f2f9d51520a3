//! Whole-scenario checks against capacity: a loss-free bulk flow fills the link and
//! never exceeds it; an FEC channel never beats its code rate.

use crate::common;
use common::*;

const RATE: f64 = 10e6;
const PAYLOAD: f64 = 1460.0 / 1500.0;

#[test]
fn clean_bulk_flow_fills_the_link_once_the_window_is_open() {
    // The receive window (1 MB, about 685 segments) exceeds the 750 kB bandwidth-delay
    // product but fits in BDP plus queue, and the queue holds the half window that slow
    // start puts in flight at twice the link rate, so no packet is dropped.
    let tcp = "[flow.tcp]\nrecv_buffer = \"1MB\"";
    let text = two_node(
        "60s",
        "rate = \"10Mbps\"\ndelay = \"300ms\"\nqueue = \"500pkt\"",
        &flow("f", "newreno", tcp),
    );
    let (sum, series) = run(&text, None);
    let g = goodput_between(&series, 0, 20.0, 60.0);
    let link = &sum.links[0];
    assert!(
        g > 0.95 * RATE * PAYLOAD,
        "goodput {g} below 95% of the payload capacity"
    );
    assert!(g <= RATE * PAYLOAD * 1.0001, "goodput {g} above capacity");
    assert_eq!(sum.flows[0].retransmissions, 0);
    assert!(link.utilization <= 1.0);
}

#[test]
fn goodput_never_exceeds_capacity_in_any_sample_interval() {
    for cc in ["newreno", "cubic", "hybla", "westwood+"] {
        let text = two_node(
            "30s",
            "rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = \"50pkt\"",
            &flow("f", cc, ""),
        );
        let (_, series) = run(&text, None);
        // Over any interval from the start (reassembly can release a burst of in-order
        // bytes at once, so short intervals may exceed the rate; the total never can).
        let s = &series.flows;
        for i in 0..s.time_s.len() {
            let bits = s.bytes_delivered[i] as f64 * 8.0;
            assert!(
                bits <= RATE * PAYLOAD * s.time_s[i],
                "{cc}: {bits} bits by {}",
                s.time_s[i]
            );
        }
    }
}

#[test]
fn fec_channel_never_beats_the_code_rate() {
    let k_over_n = 223.0 / 255.0;
    for ber in ["0.0", "1e-5"] {
        let link = format!("rate = \"1Mbps\"\ndelay = \"100ms\"\nqueue = \"200pkt\"\nchannel = {{ model = \"fec\", n = 255, k = 223, depth = 4, ber = {ber} }}");
        let (sum, _) = run(&two_node("60s", &link, &flow("f", "newreno", "")), None);
        let g = sum.flows[0].goodput_bps;
        assert!(
            g <= 1e6 * k_over_n * PAYLOAD,
            "ber {ber}: goodput {g} beats k/n"
        );
        assert!(
            g > 0.5 * 1e6 * k_over_n * PAYLOAD,
            "ber {ber}: goodput {g} implausibly low"
        );
    }
}

#[test]
fn fixed_size_transfer_completes_and_reports_its_time() {
    let text = two_node(
        "60s",
        "rate = \"10Mbps\"\ndelay = \"50ms\"",
        &flow("f", "newreno", "size = \"1MB\""),
    );
    let (sum, _) = run(&text, None);
    let f = &sum.flows[0];
    assert_eq!(f.bytes_delivered, 1_000_000);
    let t = f.completion_s.expect("completed");
    // At least the handshake plus the serialisation of 1 MB; far less than the run.
    assert!(t > 0.2 + 1e6 * 8.0 / RATE && t < 10.0, "{t}");
}
