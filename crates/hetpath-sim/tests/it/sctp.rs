//! SCTP flows (`transport = "sctp"`, seed 001's baseline) run whole: every byte over a
//! lossy channel, the same results twice, any single lost packet survived, ESP-wrapped
//! packets that fill the MTU in the captures, counters in the results, and one-line
//! errors for bad `[flow.sctp]` keys.

use crate::common;

use common::run;
use hetpath_proto::wire::{PacketRepr, PcapReader};
use hetpath_sim::{capture, load, Summary};

/// Two nodes joined by `link` (extra keys), one SCTP flow with `flow` (extra keys).
fn scenario(duration: &str, link: &str, flow: &str) -> String {
    format!(
        r#"
[scenario]
name = "sctp"
duration = "{duration}"
seed = 7
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "2Mbps"
delay = "100ms"
{link}
[[flow]]
name = "f"
from = "a"
to = "b"
transport = "sctp"
{flow}
"#
    )
}

fn assert_complete(s: &Summary, size: u64, what: &str) {
    let f = &s.flows[0];
    assert_eq!(f.cc, "sctp");
    assert_eq!(f.bytes_delivered, size, "{what}");
    assert!(f.completion_s.is_some(), "{what}: not completed");
    assert!(f.sender_done_s.is_some(), "{what}: not all acknowledged");
    assert!(!f.aborted, "{what}: aborted");
}

/// The counter `name` of the SCTP endpoint on `node`.
fn counter(s: &Summary, node: &str, name: &str) -> u64 {
    common::machine_counter(s, "sctp", node, name)
}

#[test]
fn a_lossy_channel_delivers_every_byte_and_runs_the_same_twice() {
    // 3% loss both ways: DATA, SACKs and the handshake are all lost at times.
    let text = scenario(
        "300s",
        r#"channel = { model = "bernoulli", p = 0.03 }"#,
        "size = \"400KB\"\n[flow.sctp]\nstreams = 4",
    );
    let (a, series_a) = run(&text, None);
    assert_complete(&a, 400_000, "bernoulli 3%");
    let f = &a.flows[0];
    assert!(f.retransmissions > 0, "losses were repaired: {f:?}");
    assert!(counter(&a, "a", "fast_retransmissions") > 0);
    assert_eq!(counter(&a, "b", "bytes_delivered"), 400_000);
    // 400 KB in 1200-byte messages over 4 streams.
    assert_eq!(counter(&a, "b", "messages_delivered"), 334);
    assert_eq!(counter(&a, "a", "closed"), 1, "shut down gracefully");
    assert!(a.links.iter().any(|l| l.stats.lost_packets > 10));
    let (b, series_b) = run(&text, None);
    assert_eq!(a, b, "the same run twice");
    // NaN marks "no value" in the series, so compare their printed form.
    assert!(
        format!("{series_a:?}") == format!("{series_b:?}"),
        "series differ"
    );
    // Another seed draws other losses.
    let (c, _) = run(&text, Some(8));
    assert_complete(&c, 400_000, "seed 8");
    assert_ne!(a.flows[0].completion_s, c.flows[0].completion_s);
}

#[test]
fn a_bulk_flow_sends_until_the_end() {
    let (s, _) = run(&scenario("20s", "", ""), None);
    let f = &s.flows[0];
    assert!(f.completion_s.is_none() && !f.aborted);
    // Window-limited: 64 KiB per ~200 ms round trip is well over 1 Mbit/s.
    assert!(f.goodput_bps > 1.0e6, "{f:?}");
}

#[test]
fn losing_any_single_packet_of_a_small_transfer_is_survived() {
    // 12 KB: the handshake, ten DATA packets, SACKs and the shutdown (no
    // stop_when_done, so the shutdown crosses the link too).
    let size = 12_000;
    let clean = run(&scenario("120s", "", "size = \"12KB\""), None).0;
    assert_complete(&clean, size, "clean");
    let sent: Vec<u64> = clean.links.iter().map(|l| l.stats.tx_packets).collect();
    assert!(sent[0] >= 12 && sent[1] >= 5, "{sent:?}");
    let mut runs = 0;
    for (k, dir) in ["ab", "ba"].into_iter().enumerate() {
        for i in 0..sent[k] {
            let link = format!(r#"{dir} = {{ channel = {{ model = "trace", lost = [{i}] }} }}"#);
            let text = scenario("120s", &link, "size = \"12KB\"");
            let s = run(&text, None).0;
            let what = format!("{dir} packet {i} lost");
            assert_eq!(s.links[k].stats.lost_packets, 1, "{what}");
            assert_complete(&s, size, &what);
            for node in ["a", "b"] {
                assert_eq!(
                    counter(&s, node, "closed"),
                    1,
                    "{what}: {node} did not shut down"
                );
            }
            runs += 1;
        }
    }
    assert_eq!(runs, sent[0] + sent[1]);
}

#[test]
fn in_esp_every_packet_is_opaque_and_the_fullest_fill_the_mtu() {
    for (ipsec, proto, largest) in [("ipsec = true", 50, 1282), ("", 132, 20 + 12 + 2 * 616)] {
        let text = scenario("60s", "", &format!("size = \"60KB\"\n{ipsec}"));
        let mut sim = load(&text, "sctp.toml", None).unwrap();
        let dir = std::env::temp_dir().join(format!(
            "hetpath-sctp-capture-{}-{proto}",
            std::process::id()
        ));
        let files = capture::attach(&mut sim, &dir).unwrap();
        assert!(sim.run(&mut |_, _| true));
        let paths = files.finish().unwrap();
        assert_complete(&sim.summary(0.0), 60_000, ipsec);
        let bytes =
            std::fs::read(paths.iter().find(|p| p.ends_with("00_l_a-b.pcap")).unwrap()).unwrap();
        let mut max = 0;
        for rec in PcapReader::new(&bytes).unwrap() {
            let rec = rec.unwrap();
            let p = PacketRepr::parse(rec.data).unwrap();
            assert_eq!(p.ip.protocol, proto);
            if proto == 132 {
                // Whole and with a valid CRC32c.
                hetpath_proto::sctp::decode(&rec.data[20..]).unwrap();
            } else {
                assert!(p.encap.esp.is_some());
            }
            max = max.max(rec.orig_len);
        }
        assert_eq!(max, largest, "{ipsec}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn bad_sctp_keys_and_values_name_the_key_on_one_line() {
    let link = "";
    let cases = [
        ("[flow.sctp]\nstreems = 4", "streems"),
        ("[flow.sctp]\nstreams = 0", "flow[0] 'f'.sctp.streams"),
        ("[flow.sctp]\nstreams = 70000", "streams"),
        ("[flow.sctp]\nchunk = 0", "flow[0] 'f'.sctp.chunk"),
        (
            "[flow.sctp]\nchunks_per_packet = 0",
            "sctp.chunks_per_packet",
        ),
        ("[flow.sctp]\nfast_rtx = 0", "sctp.fast_rtx"),
        ("[flow.sctp]\nrto_min = \"0s\"", "sctp.rto_min"),
        ("[flow.sctp]\nrto_min = \"5s\"", "sctp.rto_min"),
        ("[flow.sctp]\nrto_max = \"2s\"", "sctp.rto_max"),
        ("[flow.sctp]\nrto_initial = \"90s\"", "sctp.rto_initial"),
        ("[flow.sctp]\nrto_min = \"soon\"", "rto_min"),
        ("[flow.sctp]\nsack_delay = \"1s\"", "sctp.sack_delay"),
        ("[flow.sctp]\nrwnd = \"100B\"", "sctp.rwnd"),
        ("[flow.sctp]\nrwnd = \"5GB\"", "sctp.rwnd"),
        ("[flow.sctp]\nmtu = 50", "sctp.mtu"),
        ("[flow.sctp]\nmessage = \"0B\"", "sctp.message"),
        ("cc = \"cubic\"", "flow[0] 'f'.cc"),
        ("[flow.tcp]\nmss = 1000", "flow[0] 'f'.tcp"),
        ("ipsec = { lift = true }", "ipsec.lift"),
        ("ipsec = { esp_overhead = 4 }", "ipsec.esp_overhead"),
    ];
    for (flow, key) in cases {
        let text = scenario("10s", link, flow);
        let e = match load(&text, "bad.toml", None) {
            Ok(_) => panic!("accepted: {flow}"),
            Err(e) => e.to_string(),
        };
        assert!(e.starts_with("bad.toml: "), "{e}");
        assert!(e.contains(key), "{flow}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // [flow.sctp] on a TCP flow.
    let text =
        scenario("10s", link, "[flow.sctp]\nstreams = 4").replace("transport = \"sctp\"\n", "");
    let e = load(&text, "bad.toml", None).err().unwrap().to_string();
    assert!(
        e.contains("flow[0] 'f'.sctp: ") && e.contains("transport = \"sctp\""),
        "{e}"
    );
    // Every key at once is accepted.
    let all = "size = \"10KB\"\nipsec = { esp_overhead = 18 }\n[flow.sctp]\nstreams = 3\nchunk = 500\nchunks_per_packet = 2\nfast_rtx = 4\nrto_min = \"500ms\"\nrto_initial = \"2s\"\nrto_max = \"30s\"\nsack_delay = \"100ms\"\nrwnd = \"32KiB\"\nmtu = 1500\nmessage = \"3000B\"\nmax_retrans = 20\nmax_init_retrans = 20";
    let (s, _) = run(&scenario("60s", link, all), None);
    assert_complete(&s, 10_000, "every key");
}
