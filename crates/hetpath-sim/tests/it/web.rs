//! Web flows (`[flow.web]`): page times against a hand calculation on a clean link,
//! persistence and parallel connections, determinism, the page records, bad keys, and a
//! web flow under IPsec with LIFT (seed 001's setting).

use crate::common;
use common::run;
use hetpath_sim::load;
use hetpath_sim::results::{PageResult, Summary};

/// Server `srv` and browser `mh` over one 10 Mbit/s link of 50 ms each way, objects of
/// constant size: main 4000 bytes (3 segments of MSS 1460, within the initial window of
/// 3 segments), two in-line objects of 2000 bytes (2 segments).
fn clean(web: &str) -> String {
    common::web_pair("", "", 4000, 2000, web)
}

const RTT: f64 = 0.1;
/// Seconds to serialise `bytes` at 10 Mbit/s.
fn ser(bytes: u64) -> f64 {
    bytes as f64 * 8.0 / 10e6
}
/// IP bytes of `payload` in segments of MSS 1460 with 40 bytes of headers each (no
/// options on data segments: timestamps are off by default).
fn wire(payload: u64) -> u64 {
    payload + 40 * payload.div_ceil(1460)
}
/// One request and its reply of `object` bytes on an open connection: both cross the
/// link once, each at the link rate.
fn exchange(object: u64) -> f64 {
    RTT + ser(wire(300)) + ser(wire(object))
}

fn pages(s: &Summary) -> Vec<&PageResult> {
    s.pages.iter().filter(|p| p.flow == "w").collect()
}

/// `got` is `want` plus at most `slack` seconds (never less: nothing is faster than the
/// hand calculation, which leaves out only small packets that can go first).
fn close_above(got: f64, want: f64, slack: f64, what: &str) {
    assert!(
        got >= want - 1e-9 && got <= want + slack,
        "{what}: {got} s, hand calculation {want} s (+ up to {slack} s)"
    );
}

/// Slack per request: a 40-byte pure ACK the browser sent just before it (the delayed ACK
/// of the reply's second segment leaves in the same instant as the next request).
const ACK: f64 = 40.0 * 8.0 / 10e6;
/// Slack per connection setup: the SYN and SYN-ACK carry up to 40 bytes of options each,
/// and, closing, up to three 40-byte FIN and ACK segments may delay the next packet.
const SETUP: f64 = 5.0 * 40.0 * 8.0 / 10e6;

#[test]
fn page_times_match_the_hand_calculation() {
    let (s, _) = run(&clean("parallel = 1"), None);
    let p = pages(&s);
    assert_eq!(p.len(), 3, "{:?}", s.pages);
    let page = exchange(4000) + 2.0 * exchange(2000);
    // The first page opens the connection: one more round trip and the SYN, SYN-ACK.
    close_above(
        p[0].time_s,
        RTT + ser(80) + page,
        3.0 * ACK + SETUP,
        "first page",
    );
    for k in 1..3 {
        close_above(p[k].time_s, page, 3.0 * ACK, "a later page");
        assert!(
            (p[k].start_s - (p[k - 1].start_s + p[k - 1].time_s)).abs() < 1e-9,
            "think = false"
        );
    }
    for r in &p {
        assert_eq!((r.objects, r.bytes, r.timeouts), (3, 8000, 0));
    }
    // The browser sent its three requests and a few pure ACKs, nothing else.
    assert!(
        (3 * wire(300)..=3 * wire(300) + 7 * 40).contains(&p[1].up_bytes),
        "{}",
        p[1].up_bytes
    );
    let f = &s.flows[0];
    assert_eq!((f.pages, f.bytes_delivered), (Some(3), 24_000));
    let mean = p.iter().map(|r| r.time_s).sum::<f64>() / 3.0;
    assert!((f.page_time_mean_s.unwrap() - mean).abs() < 1e-12);
    assert!(f.completion_s.is_some(), "three pages: the flow is done");
    assert!(s.sim_time_s < 2.0, "the run ends with the last page");
}

#[test]
fn without_persistence_every_object_pays_a_connection_setup() {
    let (persistent, _) = run(&clean("parallel = 1"), None);
    let (fresh, _) = run(&clean("parallel = 1\npersistent = false"), None);
    let (a, b) = (pages(&persistent), pages(&fresh));
    for k in 0..3 {
        // Three objects, three handshakes; the persistent connection had one on page 0.
        let setups = if k == 0 { 2.0 } else { 3.0 };
        let want = a[k].time_s + setups * (RTT + ser(80));
        close_above(b[k].time_s, want, 3.0 * (ACK + SETUP), &format!("page {k}"));
    }
}

#[test]
fn two_connections_fetch_the_in_line_objects_side_by_side() {
    let (one, _) = run(&clean("parallel = 1"), None);
    let (two, _) = run(&clean("parallel = 2"), None);
    let (a, b) = (pages(&one), pages(&two));
    // Later pages: with two open connections both in-line requests leave at once; the
    // second request waits behind the first on the uplink, the second reply behind the
    // first on the downlink.
    let both = RTT + ser(wire(300)) + 2.0 * ser(wire(2000));
    for k in 1..3 {
        close_above(
            b[k].time_s,
            exchange(4000) + both,
            3.0 * ACK,
            "parallel = 2",
        );
        assert!(
            a[k].time_s - b[k].time_s > 0.9 * RTT,
            "one round trip saved"
        );
    }
    // The first page: the second connection's handshake costs the round trip it saves.
    close_above(
        b[0].time_s,
        RTT + ser(80) + exchange(4000) + RTT + ser(80) + exchange(2000) + ser(wire(2000)),
        3.0 * ACK + 2.0 * SETUP,
        "parallel = 2, first page",
    );
}

/// Table I's distributions with a short think time (the table's mean is 39.5 s).
fn table_i(pages: &str) -> String {
    clean("").replace(
        "pages = 3\nthink = false\nmain_size = { dist = \"constant\", value = 4000 }\ninline_count = { dist = \"constant\", value = 2 }\ninline_size = { dist = \"constant\", value = 2000 }\n",
        &format!("{pages}\nthink_time = {{ dist = \"weibull\", mean = 2.0, std = 3.0 }}\n"),
    ).replace("duration = \"60s\"", "duration = \"600s\"")
}

#[test]
fn same_seed_same_pages_and_n_pages_give_n_records() {
    let text = table_i("pages = 6");
    let (a, _) = run(&text, None);
    let (b, _) = run(&text, None);
    assert_eq!(a.pages, b.pages);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.pages.len(), 6);
    for (k, p) in a.pages.iter().enumerate() {
        assert_eq!(p.page, k as u64);
        assert!(p.time_s > RTT && p.bytes > 0 && p.objects >= 1);
    }
    // Think times between pages: each page starts after the previous one ended.
    for w in a.pages.windows(2) {
        assert!(w[1].start_s >= w[0].start_s + w[0].time_s);
    }
    let sizes: Vec<u64> = a.pages.iter().map(|p| p.bytes).collect();
    assert!(
        sizes.windows(2).any(|w| w[0] != w[1]),
        "drawn, not constant: {sizes:?}"
    );
    let (c, _) = run(&text, Some(2));
    assert_ne!(a.pages, c.pages, "another seed, other pages");
    // Without `pages` the browser goes on until the run ends.
    let (open, _) = run(&table_i("").replace("600s", "60s"), None);
    assert!((open.sim_time_s - 60.0).abs() < 1e-9);
    assert!(open.flows[0].completion_s.is_none() && !open.pages.is_empty());
}

fn error(text: &str) -> String {
    match load(text, "bad.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_web_keys_fail_with_the_file_and_the_key() {
    let with = |extra: &str| clean(extra);
    let cases = [
        (with("parallel = 0"), "flow[0] 'w'.web.parallel"),
        (with("request = 0"), "flow[0] 'w'.web.request"),
        (with("colour = 1"), "colour"),
        (
            with("think_time = { dist = \"weibull\", mean = -2.0, std = 1.0 }"),
            "flow[0] 'w'.web.think_time",
        ),
        (
            clean("").replace("value = 2000 }", "value = 2000, mean = 1.0 }"),
            "flow[0] 'w'.web.inline_size.mean",
        ),
        (
            clean("").replace(
                "dist = \"constant\", value = 2000",
                "dist = \"pareto\", mean = 2.0, std = 1.0",
            ),
            "pareto",
        ),
        (
            clean("").replace(
                "inline_size = { dist = \"constant\", value = 2000 }",
                "inline_size = { dist = \"gamma\", mean = 2.0 }",
            ),
            "flow[0] 'w'.web.inline_size.std",
        ),
        (
            clean("").replace("to = \"mh\"\n", "to = \"mh\"\nsize = \"1MB\"\n"),
            "flow[0] 'w'.size",
        ),
        (
            clean("").replace("to = \"mh\"\n", "to = \"mh\"\ntransport = \"ideal\"\n"),
            "flow[0] 'w'.web",
        ),
    ];
    for (text, want) in cases {
        let e = error(&text);
        assert!(e.starts_with("bad.toml: "), "{e}");
        assert!(e.contains(want), "{e} (wanted {want})");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// Seed 001's path: fixed host, gateway with BS-LIFT, satellite hop to the mobile host
/// that browses over IPsec with MH-LIFT on its connections.
fn lift(persistent: bool) -> String {
    let rest = format!(
        r#"
[[flow]]
name = "w"
from = "fh"
to = "mh"
cc = "reno"
ipsec = {{ esp_overhead = 18, lift = true }}
[flow.web]
pages = 4
persistent = {persistent}
think_time = {{ dist = "weibull", mean = 5.0, std = 5.0 }}
[[agent]]
kind = "lift-bs"
node = "gw"
"#
    );
    common::lift_path(
        "duration = \"900s\"\nseed = 3\nstop_when_done = true",
        "",
        "",
        &rest,
    )
}

fn lift_counter(s: &Summary, name: &str) -> u64 {
    s.machines
        .iter()
        .find(|m| m.machine == "lift-bs" && m.counter == name)
        .map_or_else(|| panic!("no lift-bs counter {name}"), |m| m.value)
}

#[test]
fn a_web_flow_under_ipsec_with_lift_delivers_every_page() {
    for persistent in [true, false] {
        let (s, _) = run(&lift(persistent), None);
        let f = &s.flows[0];
        assert_eq!(f.pages, Some(4), "persistent = {persistent}: {f:?}");
        assert!(!f.aborted && f.completion_s.is_some());
        let bytes: u64 = s.pages.iter().map(|p| p.bytes).sum();
        assert_eq!(f.bytes_delivered, bytes);
        // MH-LIFT on the connecting side: its Setups registered the connections at the
        // gateway (a FrACK of a connection BS-LIFT knows is dropped or forwarded, never
        // passed on), and the fixed host got its ACKs through BS-LIFT.
        assert!(lift_counter(&s, "acks_forwarded") > 0);
        assert!(lift_counter(&s, "fracks_dropped") > 0);
        assert!(s.pages.iter().all(|p| p.up_bytes > 0));
    }
}
