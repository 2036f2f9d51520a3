//! APOHN (`[[agent]] kind = "apohn"`, seed 000) over its GEO + 802.11b path, run whole:
//! the receiver's TCP ACKs never reach the shared medium (the captures show it), TCP sees
//! no loss even when the WLAN drops datagrams, and bad keys are one-line errors.

use crate::common;

use common::run;
use hetpath_proto::wire::{PacketRepr, PcapReader};
use hetpath_sim::{capture, load, Summary};

/// `scenarios/apohn/apohn.toml`, `duration` long, with `wlan` extra keys on the WLAN and
/// `agent` extra keys on the APOHN agent.
fn scenario(duration: &str, wlan: &str, agent: &str) -> String {
    let text = include_str!("../../../../scenarios/apohn/apohn.toml");
    text.replace(
        "duration = \"2000s\"",
        &format!("duration = \"{duration}\""),
    )
    .replace("queue = \"50pkt\"", &format!("queue = \"50pkt\"\n{wlan}"))
        + agent // the agent is the file's last table
        + "\n"
}

fn counter(s: &Summary, machine: &str, name: &str) -> u64 {
    s.machines
        .iter()
        .find(|m| m.machine == machine && m.counter == name)
        .unwrap_or_else(|| panic!("no counter {machine} {name}: {:?}", s.machines))
        .value
}

#[test]
fn the_receivers_tcp_acks_never_reach_the_medium() {
    let text = scenario("20s", "", "");
    let mut sim = load(&text, "apohn.toml", None).unwrap();
    let dir = std::env::temp_dir().join(format!("hetpath-apohn-{}", std::process::id()));
    let files = capture::attach(&mut sim, &dir).unwrap();
    assert!(sim.run(&mut |_, _| true));
    let paths = files.finish().unwrap();
    let s = sim.summary(0.0);
    assert!(s.flows[0].bytes_delivered > 5_000_000, "{:?}", s.flows[0]);
    let read = |name: &str| {
        let path = paths
            .iter()
            .find(|p| p.to_string_lossy().ends_with(&format!("_{name}")))
            .unwrap();
        let bytes = std::fs::read(path).unwrap();
        PcapReader::new(&bytes)
            .unwrap()
            .map(|r| PacketRepr::parse(r.unwrap().data).unwrap())
            .collect::<Vec<_>>()
    };
    // Up the WLAN: the handshake's second segment and nothing else from the receiver.
    let up = read("wlan_receiver-bridge.pcap");
    let acks = up
        .iter()
        .filter(|p| {
            p.tcp.is_some_and(|t| {
                t.flags.contains(hetpath_proto::packet::TcpFlags::ACK)
                    && !t.flags.contains(hetpath_proto::packet::TcpFlags::SYN)
            })
        })
        .count();
    assert_eq!(acks, 0, "{} packets up the WLAN", up.len());
    assert!(counter(&s, "lle-sink", "acks_suppressed") > 1_000);
    // Down the WLAN: the sender's data segments, as plain TCP.
    let down = read("wlan_bridge-receiver.pcap");
    assert!(
        down.iter()
            .filter(|p| p.tcp.is_some_and(|t| t.payload_len > 0))
            .count()
            > 5_000
    );
    // Over the GEO hop: SBP, not TCP, after the handshake.
    let geo = read("geo_sender-bridge.pcap");
    assert!(
        geo.iter()
            .filter(|p| p.ip.protocol == hetpath_proto::packet::PROTO_SBP)
            .count()
            > 5_000
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tcp_sees_no_loss_when_the_wlan_drops_datagrams() {
    // A lossy WLAN channel and a short interface queue: the MAC gives frames up after its
    // retries and the queue overflows; the booster sends them again, and TCP never knows.
    let text = scenario(
        "40s",
        "queue = \"10pkt\"\nchannel = { model = \"bernoulli\", p = 0.6 }",
        "",
    )
    .replace("queue = \"50pkt\"\n", "");
    let (s, _) = run(&text, None);
    let f = &s.flows[0];
    assert!(f.bytes_delivered > 1_000_000, "{f:?}");
    assert_eq!(
        (f.retransmissions, f.fast_retransmits, f.timeouts),
        (0, 0, 0),
        "{f:?}"
    );
    let lost = counter(&s, "apohn-bridge", "datagrams_lost");
    assert!(lost > 50, "the WLAN lost only {lost}");
    // (reports of the last round trip are still on their way at the end)
    assert!(counter(&s, "apohn-sender", "booster_resent") > lost / 2);
}

#[test]
fn apohn_beats_end_to_end_newreno_on_the_same_path() {
    let with = scenario("60s", "", "");
    let (a, _) = run(&with, None);
    let without = with.split("[[agent]]").next().unwrap().to_string();
    let (b, _) = run(&without, None);
    let (ga, gb) = (a.flows[0].goodput_bps, b.flows[0].goodput_bps);
    assert!(ga > 1.2 * gb, "apohn {ga}, newreno {gb}");
}

#[test]
fn bad_apohn_keys_name_the_key_on_one_line() {
    for (agent_extra, key, says) in [
        ("buffer = 0", "buffer", "at least 1"),
        ("alpha = 0", "alpha", "at least 1"),
        ("beta = 1", "beta", "at least alpha"),
        ("window = \"fixed\"\nalpha = 3", "alpha", "only with window"),
        (
            "window = \"vegas\"",
            "vegas",
            "expected `adaptive` or `fixed`",
        ),
        (
            "poll_interval = \"0s\"",
            "poll_interval",
            "greater than zero",
        ),
        ("rate = \"0bps\"", "0bps", "positive rate"),
        ("weights = { http = 2 }", "weights.http", "port number"),
        ("weights = { 80 = 0 }", "weights.80", "at least 1"),
        ("encryption = \"4KB\"", "encryption", "at most 1024"),
        ("colour = 1", "colour", "unknown field"),
    ] {
        let text = scenario("1s", "", agent_extra);
        let e = load(&text, "apohn.toml", None)
            .err()
            .expect(key)
            .to_string();
        assert!(
            e.contains(key) && e.contains(says) && !e.contains('\n'),
            "{e}"
        );
    }
    // The agent's stations (the last `stations` key; the first is the WLAN's).
    let mut text = scenario("1s", "", "");
    let line = "stations = [\"receiver\"]";
    let at = text.rfind(line).unwrap();
    text.replace_range(at..at + line.len(), "stations = [\"sender\"]");
    let e = load(&text, "apohn.toml", None).err().unwrap().to_string();
    assert!(
        e.contains("stations[0]") && e.contains("station of a WLAN"),
        "{e}"
    );
}

/// A `name` only labels the agent, for sweep keys (`agent.<name>.alpha`): the run is the
/// same as without it (`apohn.toml` names its agent "apohn").
#[test]
fn a_named_apohn_agent_runs_as_an_unnamed_one() {
    let named = scenario("5s", "", "");
    let line = "name = \"apohn\"";
    let at = named.rfind(line).unwrap();
    assert!(at > named.find("[[agent]]").unwrap(), "the agent's name");
    let with = |value: &str| {
        let mut text = named.clone();
        text.replace_range(at..at + line.len(), value);
        text
    };
    let (a, _) = run(&named, None);
    let (b, _) = run(&with(""), None);
    assert!(a.flows[0].bytes_delivered > 0);
    assert_eq!(a.flows[0].bytes_delivered, b.flows[0].bytes_delivered);
    let e = load(&with("name = 3"), "apohn.toml", None)
        .err()
        .expect("a name that is not a string")
        .to_string();
    assert!(e.contains("expected a string") && !e.contains('\n'), "{e}");
}

/// The same flow under end-to-end ESP (§III.E): the split PEPs of SaTPEP find no TCP header
/// to split and pass it through, so it runs as end-to-end NewReno; APOHN's booster, on the
/// node that holds the keys, still takes it, and so does the bridge's LLE-TCP agent,
/// which reads only ESP's clear header.
#[test]
fn under_esp_a_split_pep_cannot_accelerate_the_flow_and_apohn_can() {
    let flow = "to = \"receiver\"\ncc = \"newreno\"\n";
    let esp = |text: &str| text.replace(flow, &format!("{flow}ipsec = true\n"));
    let duration = |text: &str| text.replace("duration = \"2000s\"", "duration = \"60s\"");
    let satpep = duration(include_str!("../../../../scenarios/apohn/satpep.toml"));
    let newreno = duration(include_str!("../../../../scenarios/apohn/newreno.toml"));
    let apohn = scenario("60s", "", "");
    let goodput = |text: &str| {
        let (s, _) = run(text, None);
        (s.flows[0].goodput_bps, s)
    };
    let (pep_plain, _) = goodput(&satpep);
    let (pep_esp, s) = goodput(&esp(&satpep));
    let (e2e_esp, _) = goodput(&esp(&newreno));
    assert_eq!(counter(&s, "split-pep", "connections_split"), 0);
    // (satpep.toml has one more hop, the terminal's LAN, than newreno.toml)
    let ratio = pep_esp / e2e_esp;
    assert!(
        (0.97..1.03).contains(&ratio),
        "the PEPs pass ESP through: {pep_esp} vs {e2e_esp}"
    );
    assert!(
        pep_plain > 1.2 * pep_esp,
        "plain {pep_plain}, ESP {pep_esp}"
    );
    let (apohn_plain, _) = goodput(&apohn);
    let (apohn_esp, s) = goodput(&esp(&apohn));
    assert!(counter(&s, "apohn-sender", "booster_taken") > 10_000);
    assert!(counter(&s, "lle-sink", "acks_suppressed") > 5_000);
    assert!(
        apohn_esp > 1.2 * e2e_esp,
        "APOHN {apohn_esp}, NewReno {e2e_esp}"
    );
    // ESP's 10 to 37 bytes per packet cost a little goodput, no more.
    assert!(
        apohn_esp > 0.95 * apohn_plain,
        "ESP {apohn_esp}, plain {apohn_plain}"
    );
}

/// Subnetwork-layer encryption between the sender and the edge router (§III.E, Fig. 5)
/// costs its bytes on the satellite hop only: every datagram grows by them there, and the
/// WLAN, the bottleneck, carries the same packets as without it.
#[test]
fn subnetwork_encryption_costs_its_bytes_on_the_satellite_hop_only() {
    // (bytes over the GEO hop per datagram sent, bytes over the WLAN per packet, goodput)
    let measure = |text: &str| {
        let (s, _) = run(text, None);
        let dir = |name: &str, from: &str| {
            let l = s
                .links
                .iter()
                .find(|l| l.name == name && l.from == from)
                .unwrap();
            (l.stats.tx_bytes as f64, l.stats.tx_packets as f64)
        };
        let sds = counter(&s, "apohn-sender", "stp_sds_sent") as f64;
        let (air_bytes, air_packets) = dir("wlan", "bridge");
        (
            dir("geo", "sender").0 / sds,
            air_bytes / air_packets,
            s.flows[0].goodput_bps,
        )
    };
    let (geo, air, goodput) = measure(&scenario("30s", "", ""));
    let (geo_sealed, air_sealed, goodput_sealed) =
        measure(&scenario("30s", "", "encryption = \"28B\""));
    // (the GEO hop also carries POLLs and STATs, about the same number per datagram)
    assert!(
        (26.0..30.0).contains(&(geo_sealed - geo)),
        "{geo} -> {geo_sealed}"
    );
    assert_eq!(air_sealed, air);
    assert!(
        goodput_sealed > 0.98 * goodput,
        "{goodput_sealed} vs {goodput}"
    );
}

/// A sized transfer through the booster over a WLAN that loses frames and overflows:
/// every byte reaches the receiver's application once and in order (its TCP delivers
/// exactly the transfer, no more), the FIN goes through the booster too, and the flow
/// completes with TCP at the sender never retransmitting.
#[test]
fn a_sized_transfer_arrives_whole_and_completes_through_the_booster() {
    let text = scenario(
        "300s",
        "queue = \"10pkt\"\nchannel = { model = \"bernoulli\", p = 0.6 }",
        "",
    )
    .replace("queue = \"50pkt\"\n", "")
    .replace("cc = \"newreno\"\n", "cc = \"newreno\"\nsize = \"3MB\"\n")
    .replace("[scenario]\n", "[scenario]\nstop_when_done = true\n");
    let (s, _) = run(&text, None);
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 3_000_000, "{f:?}");
    assert!(f.completion_s.is_some(), "{f:?}");
    assert_eq!((f.retransmissions, f.timeouts), (0, 0), "{f:?}");
    assert!(counter(&s, "apohn-sender", "booster_resent") > 0);
}
