//! Web flows over SCTP (`[flow.web]` with `transport = "sctp"`, seed 001 sections IV-V):
//! page times against a hand calculation on a clean link, determinism, every page
//! through loss and through an ESW link with shadowing, a lost packet holding up only
//! its own stream, IPsec, and the keys SCTP rules out.

use crate::common;
use common::run;
use hetpath_sim::load;
use hetpath_sim::results::{PageResult, Summary};

/// Server `srv` and browser `mh` over one 10 Mbit/s link of 50 ms each way; constant
/// objects: main 1200 bytes and in-line ones of 1200 bytes (one full SCTP packet each:
/// two 600-byte chunks), `web` and `link` add keys.
fn clean(web: &str, link: &str) -> String {
    common::web_pair(link, "transport = \"sctp\"", 1200, 1200, web)
}

fn pages(s: &Summary) -> Vec<&PageResult> {
    s.pages.iter().filter(|p| p.flow == "w").collect()
}

const RTT: f64 = 0.1;
/// Seconds to serialise `bytes` at 10 Mbit/s.
fn ser(bytes: u64) -> f64 {
    bytes as f64 * 8.0 / 10e6
}
/// IP bytes of one SCTP packet carrying DATA chunks of these payloads: IP 20, common
/// header 12, and 16 per DATA chunk header (RFC 4960 section 3.3.1; payloads here are
/// multiples of 4, so no padding).
fn data(payloads: &[u64]) -> u64 {
    20 + 12 + payloads.iter().map(|p| 16 + p).sum::<u64>()
}
/// The handshake's packets (section 5.1): INIT (52 bytes), INIT ACK with its 24-byte
/// cookie (80), COOKIE ECHO (60), COOKIE ACK (36).
const HANDSHAKE: u64 = 52 + 80 + 60 + 36;

/// A page on an open association: the main request (one 348-byte packet) and its reply
/// (one full packet), then both in-line requests in one packet (bundled: they leave in
/// the same instant) and their two replies back to back. DATA waits for the COOKIE ACK
/// (it is not bundled with the COOKIE ECHO here).
fn page() -> f64 {
    let reply = data(&[600, 600]);
    (RTT + ser(data(&[300])) + ser(reply)) + (RTT + ser(data(&[300, 300])) + 2.0 * ser(reply))
}

/// Slack per page: a delayed SACK (16-byte chunk) may ride on each of the page's six
/// packets, and up to two SACKs may go alone (48 bytes each) just ahead of a request or
/// reply. Nothing else shares the link, so nothing is faster than the calculation.
const SLACK: f64 = (6.0 * 16.0 + 2.0 * 48.0) * 8.0 / 10e6;

fn close_above(got: f64, want: f64, slack: f64, what: &str) {
    assert!(
        got >= want - 1e-9 && got <= want + slack,
        "{what}: {got} s, hand calculation {want} s (+ up to {slack} s)"
    );
}

#[test]
fn page_times_match_the_hand_calculation() {
    let (s, _) = run(&clean("", ""), None);
    let p = pages(&s);
    assert_eq!(p.len(), 3, "{:?}", s.pages);
    // The first page also sets up the association: INIT / INIT ACK, COOKIE ECHO /
    // COOKIE ACK, two round trips before the first request can go.
    close_above(
        p[0].time_s,
        2.0 * RTT + ser(HANDSHAKE) + page(),
        SLACK,
        "first page",
    );
    for k in 1..3 {
        close_above(p[k].time_s, page(), SLACK, "a later page");
        assert!((p[k].start_s - (p[k - 1].start_s + p[k - 1].time_s)).abs() < 1e-9);
    }
    for r in &p {
        assert_eq!((r.objects, r.bytes, r.timeouts), (3, 3600, 0));
    }
    // The browser sent its two request packets, and SACKs.
    let requests = data(&[300]) + data(&[300, 300]);
    assert!(
        (requests..=requests + 4 * 16 + 2 * 48).contains(&p[1].up_bytes),
        "{}",
        p[1].up_bytes
    );
    let f = &s.flows[0];
    assert_eq!(
        (f.pages, f.bytes_delivered, f.cc.as_str()),
        (Some(3), 10_800, "sctp")
    );
    assert_eq!((f.retransmissions, f.timeouts), (0, 0));
    assert!(f.completion_s.is_some() && s.sim_time_s < 1.0);
    // One association: the browser's endpoint (on mh) sent the INIT.
    let sent = |node: &str, c: &str| {
        s.machines
            .iter()
            .find(|m| m.node == node && m.machine == "sctp" && m.counter == c)
            .map_or_else(|| panic!("no sctp counter {c} on {node}"), |m| m.value)
    };
    assert_eq!(
        s.machines
            .iter()
            .filter(|m| m.counter == "packets_sent")
            .count(),
        2
    );
    assert_eq!(sent("srv", "data_bytes_sent"), 10_800, "the replies");
    assert_eq!(sent("mh", "data_bytes_sent"), 9 * 300, "the requests");
}

#[test]
fn ipsec_adds_its_overhead_to_every_packet() {
    let (plain, _) = run(&clean("", ""), None);
    let text = clean("", "").replace("transport = \"sctp\"", "transport = \"sctp\"\nipsec = true");
    let (esp, _) = run(&text, None);
    let (a, b) = (pages(&plain), pages(&esp));
    assert_eq!(b.len(), 3);
    for k in 1..3 {
        // Seed 001's 18 bytes on each of the browser's two request packets (and on a
        // SACK that may now go alone: the delayed-SACK timer's 200 ms is close to the
        // page time); the replies still fit one packet each (2 * 616 + 12 = 1244 = 1282
        // - 20 - 18), so the page is slower by the 18 bytes of its six packets, or a bit
        // more.
        let base = a[k].up_bytes + 2 * 18;
        assert!(
            (base..=base + 18 + 48).contains(&b[k].up_bytes),
            "{a:?} {b:?}"
        );
        let more = 6.0 * ser(18);
        assert!(b[k].time_s >= a[k].time_s + more - SLACK, "{a:?} {b:?}");
        assert!(b[k].time_s <= a[k].time_s + more + SLACK, "{a:?} {b:?}");
    }
}

#[test]
fn an_object_larger_than_the_receive_window_arrives() {
    // 200 kB in one message, three times the 64 KiB window: partial delivery (RFC 4960
    // section 6.9) frees the window as the message arrives in order.
    let text = clean("", "").replace(
        "value = 1200 }\ninline_count",
        "value = 200000 }\ninline_count",
    );
    let (s, _) = run(&text, None);
    let p = pages(&s);
    assert_eq!(p.len(), 3, "{:?}", s.flows[0]);
    for r in &p {
        assert_eq!(r.bytes, 202_400);
        // At least the serialisation of the main object; at most a few seconds of slow
        // start (no loss, so no timeout).
        assert!(
            r.time_s > ser(200_000) && r.time_s < 5.0 && r.timeouts == 0,
            "{r:?}"
        );
    }
}

/// Table I's page model (heavy-tailed sizes) with a short think time.
fn table_i(link: &str) -> String {
    clean(
        "think_time = { dist = \"weibull\", mean = 2.0, std = 3.0 }",
        link,
    )
    .replace("pages = 3\nthink = false\n", "pages = 8\n")
    .replace("main_size = { dist = \"constant\", value = 1200 }\n", "")
    .replace("inline_count = { dist = \"constant\", value = 2 }\n", "")
    .replace("inline_size = { dist = \"constant\", value = 1200 }\n", "")
    .replace("duration = \"60s\"", "duration = \"900s\"")
}

#[test]
fn over_a_lossy_link_every_page_arrives_and_runs_repeat() {
    let text = table_i("channel = { model = \"bernoulli\", p = 0.02 }");
    let (a, _) = run(&text, None);
    let (b, _) = run(&text, None);
    assert_eq!(a.pages, b.pages, "same seed, same pages");
    assert_eq!(a.flows, b.flows);
    let f = &a.flows[0];
    assert_eq!(f.pages, Some(8), "{f:?}");
    assert!(!f.aborted && f.completion_s.is_some());
    assert!(
        a.links.iter().all(|l| l.stats.lost_packets > 0),
        "{:?}",
        a.links
    );
    assert!(f.retransmissions > 0, "{f:?}");
    let bytes: u64 = a.pages.iter().map(|p| p.bytes).sum();
    assert_eq!(f.bytes_delivered, bytes);
    let (c, _) = run(&text, Some(2));
    assert_ne!(a.pages, c.pages, "another seed, other pages and losses");
}

#[test]
fn a_lost_packet_holds_up_only_its_own_stream() {
    // Four in-line objects on four streams; the link loses the server's fifth packet
    // (INIT ACK, COOKIE ACK, the main reply, then the in-line replies on streams 0, 1,
    // 2, 3): stream 1's reply.
    let text = clean(
        "parallel = 4",
        "ab = { channel = { model = \"trace\", lost = [4] } }",
    )
    .replace("pages = 3", "pages = 1")
    .replace("value = 2 }", "value = 4 }");
    let mut sim = load(&text, "t.toml", None).unwrap();
    sim.enable_trace();
    assert!(sim.run(&mut |_, _| true));
    let (s, t) = (sim.summary(0.0), sim.trace().unwrap());
    assert_eq!(s.links[0].stats.lost_packets, 1);
    // The browser's deliveries: one per object (its value: bytes so far).
    let mh = (0..t.len())
        .filter(|&i| t.event[i] == "flow.delivered" && t.node[i].0 == 1)
        .map(|i| (t.time_s[i], t.value[i].unwrap()))
        .collect::<Vec<_>>();
    assert_eq!(
        mh.iter().map(|d| d.1).collect::<Vec<_>>(),
        [1200, 2400, 3600, 4800, 6000]
    );
    // The main object after three round trips; three in-line objects one round trip
    // later, without waiting for the lost one, which comes with the T3-rtx expiry
    // (RTO.Min 1 s: RFC 4960 section 6.3.1).
    let main = mh[0].0;
    assert!((3.0 * RTT..3.0 * RTT + 0.01).contains(&main), "{mh:?}");
    for d in &mh[1..4] {
        assert!(d.0 < main + RTT + 0.01, "{mh:?}");
    }
    assert!(mh[4].0 > main + 1.0, "{mh:?}");
    let p = &s.pages[0];
    assert_eq!((p.objects, p.timeouts), (5, 1));
    assert!((p.time_s - mh[4].0).abs() < 1e-9);
}

/// Seed 001's path: fixed host, gateway, and the ESW satellite hop to the browsing
/// mobile host, without the link's ARQ, under shadowing (4.5 s good, 0.5 s bad).
#[test]
fn over_an_esw_link_with_shadowing_every_page_arrives() {
    let sat = r#"layer = "esw"
channel = { model = "gilbert-elliott", t_good = "4.5s", t_bad = "0.5s" }
esw = { arq = false }"#;
    let flow = r#"[[flow]]
name = "w"
from = "fh"
to = "mh"
transport = "sctp"
ipsec = true
[flow.web]
pages = 6
think_time = { dist = "weibull", mean = 5.0, std = 5.0 }"#;
    let head = "duration = \"900s\"\nseed = 1\nstop_when_done = true";
    let (s, _) = run(&common::lift_path(head, "", sat, flow), None);
    let f = &s.flows[0];
    assert_eq!(f.pages, Some(6), "{f:?}");
    assert!(!f.aborted && f.completion_s.is_some());
    let sat_lost: u64 = s
        .links
        .iter()
        .filter(|l| l.name == "sat")
        .map(|l| l.stats.lost_packets)
        .sum();
    assert!(sat_lost > 0 && f.retransmissions > 0, "{:?}", s.links);
    assert!(s.pages.iter().all(|p| p.up_bytes > 0 && p.time_s > 0.0));
}

fn error(text: &str) -> String {
    match load(text, "bad.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn keys_sctp_rules_out_fail_with_the_key() {
    let with_sctp = |t: &str| clean("", "").replace("[flow.web]", &format!("{t}\n[flow.web]"));
    let cases = [
        (
            clean("persistent = false", ""),
            "flow[0] 'w'.web.persistent",
            "one association",
        ),
        (
            clean("parallel = 11", ""),
            "flow[0] 'w'.web.parallel",
            "10 streams",
        ),
        (
            with_sctp("[flow.sctp]\nstreams = 3").replace("[flow.web]", "[flow.web]\nparallel = 4"),
            "flow[0] 'w'.web.parallel",
            "3 streams",
        ),
        (
            clean("", "").replace(
                "transport = \"sctp\"",
                "transport = \"sctp\"\nipsec = { lift = true }",
            ),
            "flow[0] 'w'.ipsec.lift",
            "TCP",
        ),
    ];
    for (text, key, why) in cases {
        let e = error(&text);
        assert!(e.starts_with("bad.toml: "), "{e}");
        assert!(
            e.contains(key) && e.contains(why),
            "{e} (wanted {key}, {why})"
        );
        assert!(!e.contains('\n'), "one line: {e}");
    }
    // `parallel` defaults to the streams: all of them.
    let (s, _) = run(
        &with_sctp("[flow.sctp]\nstreams = 3").replace("value = 2 }", "value = 5 }"),
        None,
    );
    assert_eq!(s.flows[0].pages, Some(3));
}
