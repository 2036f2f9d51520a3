//! In-network agents in whole scenarios: the split-connection PEP, XCP routers, and a PEP
//! in front of IPsec traffic.

use crate::common;

use common::{pep, run, satellite, GEO, LOSSY_GEO};

#[test]
fn split_pep_delivers_every_byte_under_loss_integrated_and_distributed() {
    for agents in [
        pep("r1", "hybla"),
        pep("r1", "newreno") + &pep("r2", "newreno"),
    ] {
        let (s, _) = run(&satellite("2MB", LOSSY_GEO, &agents), Some(3));
        let f = &s.flows[0];
        assert_eq!(f.bytes_delivered, 2_000_000, "{agents}");
        assert!(f.completion_s.is_some() && !f.aborted, "{agents}");
        // The loss is on the satellite hop, so the sender sees none of it: the PEP
        // recovers locally.
        assert_eq!(f.timeouts, 0, "{agents}");
    }
}

#[test]
fn a_pep_shortens_a_geo_transfer_and_hides_the_loss() {
    let (plain, _) = run(&satellite("2MB", LOSSY_GEO, ""), Some(1));
    let (split, _) = run(&satellite("2MB", LOSSY_GEO, &pep("r1", "hybla")), Some(1));
    let t = |s: &hetpath_sim::Summary| s.flows[0].completion_s.unwrap();
    assert!(t(&split) < t(&plain), "{} vs {}", t(&split), t(&plain));
    // The PEP acknowledges early: its sender is done long before the receiver, where an
    // end-to-end sender hears of the last byte only after the receiver has it.
    let done = |s: &hetpath_sim::Summary| s.flows[0].sender_done_s.unwrap();
    assert!(
        done(&split) < t(&split) / 2.0,
        "{} vs {}",
        done(&split),
        t(&split)
    );
    assert!(
        done(&plain) > t(&plain),
        "{} vs {}",
        done(&plain),
        t(&plain)
    );
}

#[test]
fn a_pep_with_a_full_satellite_queue_serves_every_connection() {
    // Five flows from a 1 Gbit/s side through a distributed PEP keep the satellite queue
    // full. The PEP must still answer handshakes on its idle side and take its
    // connections in turn: none may wait behind another (no timeouts on a loss-free
    // path) and they share the hop fairly.
    let flows: String = (1..5)
        .map(|k| format!("[[flow]]\nname = \"f{k}\"\nfrom = \"s\"\nto = \"d\"\ncc = \"cubic\"\nsize = \"2MB\"\nstart = \"{}s\"\n", k as f64 * 0.3))
        .collect();
    let agents = flows + &pep("r1", "hybla") + &pep("r2", "hybla");
    let sat = "rate = \"10Mbps\"\ndelay = \"400ms\"\nqueue = \"200pkt\"";
    let (s, _) = run(&satellite("2MB", sat, &agents), Some(1));
    for f in &s.flows {
        assert_eq!(f.bytes_delivered, 2_000_000, "{}", f.name);
        assert_eq!(f.timeouts, 0, "{}", f.name);
    }
    let rates: Vec<f64> = s.flows.iter().map(|f| f.goodput_bps).collect();
    let n = rates.len() as f64;
    let jain = rates.iter().sum::<f64>().powi(2) / (n * rates.iter().map(|r| r * r).sum::<f64>());
    assert!(jain > 0.9, "Jain {jain}: {rates:?}");
}

#[test]
fn a_small_pep_buffer_still_delivers_everything() {
    // 20 KB per leg against a 625 KB bandwidth-delay product: the sender's window is
    // the PEP's buffer, so the transfer is slow but complete and in order.
    let agents = format!("{}buffer = \"20KB\"\n", pep("r1", "cubic"));
    let (s, _) = run(&satellite("300KB", GEO, &agents), Some(1));
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 300_000);
    // At most ~2 x 20 KB per 0.5 s round trip over the satellite: well under 1 Mbit/s.
    assert!(f.goodput_bps < 1.0e6, "{}", f.goodput_bps);
}

#[test]
fn a_pep_passes_ipsec_traffic_untouched() {
    let ipsec = |agents: &str| {
        satellite("1MB", GEO, agents).replace("size = \"1MB\"", "size = \"1MB\"\nipsec = true")
    };
    let (alone, _) = run(&ipsec(""), Some(1));
    let (with_pep, _) = run(&ipsec(&pep("r1", "hybla")), Some(1));
    // The PEP cannot read the TCP header inside ESP: nothing it could do shows.
    assert_eq!(alone.flows, with_pep.flows);
    assert_eq!(alone.flows[0].bytes_delivered, 1_000_000);
    // Without IPsec the same PEP splits the connection and changes the transfer.
    let (split, _) = run(&satellite("1MB", GEO, &pep("r1", "hybla")), Some(1));
    assert_ne!(split.flows[0].completion_s, alone.flows[0].completion_s);
}

#[test]
fn ilc_settings_leave_a_pep_alone() {
    // `[tcp] ilc` asks a State Manager on the flows' senders; the PEP's own legs have
    // none to ask, so they must run as plain TCP through an outage, not wait forever.
    // The outage takes the ACKs back over the hop: the PEP's satellite leg times out.
    let sat = format!("{GEO}\nba = {{ outages = [{{ down = \"1s\", up = \"4s\" }}] }}");
    let plain = satellite("5MB", &sat, &pep("r1", "hybla"));
    let ilc = plain.replace(
        "stop_when_done = true",
        "stop_when_done = true\n[tcp]\nilc = \"link-only\"",
    );
    let (a, _) = run(&plain, Some(1));
    let (b, _) = run(&ilc, Some(1));
    assert_eq!(b.flows[0].bytes_delivered, 5_000_000);
    assert_eq!(a.flows, b.flows);
}

#[test]
fn a_plain_receiver_echoes_router_feedback_to_an_xcp_pep() {
    // A PEP running XCP on its legs toward an XCP router; the end host behind it runs
    // CUBIC. The receiver's echo is the receiving connection's, so the PEP's far leg
    // still hears the router and fills the hop as a CUBIC PEP does.
    let router = "[[agent]]\nkind = \"xcp-router\"\nnode = \"r1\"\nlink = \"sat\"\n";
    let xcp = satellite("3MB", GEO, &(pep("r1", "xcp") + router));
    let cubic = satellite("3MB", GEO, &pep("r1", "cubic"));
    let (x, _) = run(&xcp, Some(1));
    let (c, _) = run(&cubic, Some(1));
    let t = |s: &hetpath_sim::Summary| s.flows[0].completion_s.expect("completes");
    assert!(
        t(&x) < 2.0 * t(&c),
        "XCP PEP {} s vs CUBIC PEP {} s",
        t(&x),
        t(&c)
    );
}

/// Three XCP flows through a 10 Mbit/s, 50 ms RTT bottleneck with an XCP router; the
/// second and third join at 5 s and 10 s.
fn xcp_dumbbell() -> String {
    let flow = |name: &str, start: &str| common::flow(name, "xcp", &format!("start = \"{start}\""));
    let router = "[[agent]]\nkind = \"xcp-router\"\nnode = \"r\"\nlink = \"bn\"\n";
    let flows = [flow("x1", "0s"), flow("x2", "5s"), flow("x3", "10s")].concat();
    common::router_line(
        "30s",
        "delay = \"25ms\"\nqueue = \"200pkt\"",
        &(router.to_string() + &flows),
    )
}

#[test]
fn xcp_fills_the_bottleneck_with_a_small_queue_and_shares_it_fairly() {
    let (s, series) = run(&xcp_dumbbell(), Some(1));
    let bn = common::link(&s, "bn", "r");
    assert!(bn.utilization > 0.95, "utilization {}", bn.utilization);
    assert_eq!(bn.stats.drops, 0);
    // The bandwidth-delay product is about 42 packets; the queue stays below it.
    assert!(
        bn.stats.max_queue_pkts < 42,
        "max queue {}",
        bn.stats.max_queue_pkts
    );
    let rates: Vec<f64> = (0..3)
        .map(|f| common::goodput_between(&series, f, 20.0, 30.0))
        .collect();
    let jain = common::jain(&rates);
    assert!(jain > 0.95, "Jain {jain}: {rates:?}");
}

#[test]
fn each_leg_of_a_split_flow_is_reported_in_path_order() {
    // A distributed PEP over a lossy GEO hop: three legs, and the loss is repaired on the
    // satellite leg alone, which is the one that crosses the slowest link.
    // The run goes on after the flow completes, so every leg hears its last ACK.
    let agents = pep("r1", "hybla") + &pep("r2", "hybla");
    let text = satellite("2MB", LOSSY_GEO, &agents).replace("stop_when_done = true", "");
    let (s, _) = run(&text, Some(3));
    let route: Vec<_> = s
        .legs
        .iter()
        .map(|l| (l.from.as_str(), l.to.as_str()))
        .collect();
    assert_eq!(route, [("s", "r1"), ("r1", "r2"), ("r2", "d")]);
    assert_eq!(
        s.legs.iter().map(|l| l.cc.as_str()).collect::<Vec<_>>(),
        ["cubic", "hybla", "hybla"]
    );
    let [lan, sat, far] = &s.legs[..] else {
        unreachable!()
    };
    assert!(sat.bottleneck && !lan.bottleneck && !far.bottleneck);
    assert_eq!(sat.min_rate_bps, 10_000_000);
    assert!(sat.retransmissions > 0, "1% loss on the hop");
    assert_eq!(lan.retransmissions + far.retransmissions, 0);
    assert!(sat.srtt_s.unwrap() > 0.5 && lan.srtt_s.unwrap() < 0.01);
    for l in &s.legs {
        assert_eq!(l.bytes_acked, 2_000_000, "leg {} relays every byte", l.leg);
    }
    // The flow's own row is the client leg's connection.
    assert_eq!(s.flows[0].retransmissions, lan.retransmissions);
    // Each PEP reports the one connection it split.
    let split: Vec<_> = s
        .machines
        .iter()
        .map(|m| {
            (
                m.node.as_str(),
                m.machine.as_str(),
                m.counter.as_str(),
                m.value,
            )
        })
        .collect();
    assert_eq!(
        split,
        [
            ("r1", "split-pep", "connections_split", 1),
            ("r2", "split-pep", "connections_split", 1)
        ]
    );
}

#[test]
fn an_end_to_end_flow_has_one_leg_with_its_own_counters() {
    let (s, _) = run(&satellite("1MB", LOSSY_GEO, ""), Some(3));
    let (f, [leg]) = (&s.flows[0], &s.legs[..]) else {
        panic!("{:?}", s.legs)
    };
    assert_eq!((leg.from.as_str(), leg.to.as_str(), leg.leg), ("s", "d", 0));
    assert!(leg.bottleneck);
    assert_eq!(
        (leg.retransmissions, leg.timeouts, leg.fast_retransmits),
        (f.retransmissions, f.timeouts, f.fast_retransmits)
    );
}

/// An ideal flow between two nodes sends TCP segments from its own ports; the second TCP
/// flow between the same nodes (a controller of its own, so a listener of its own: port
/// 5001) used to be given that same 4-tuple, and the receiving
/// host took the ideal flow's segments as its connection's (the TCP flow "delivered"
/// 299,999 of its 168,000 bytes, the ideal flow none).
#[test]
fn an_ideal_flow_and_tcp_flows_between_the_same_nodes_keep_their_own_bytes() {
    let flows = r#"
[[flow]]
name = "t0"
from = "a"
to = "b"
cc = "reno"
size = "50000B"
[[flow]]
name = "ideal"
from = "a"
to = "b"
transport = "ideal"
size = "60000B"
[[flow]]
name = "t2"
from = "a"
to = "b"
cc = "cubic"
size = "70000B"
"#;
    let text = common::two_node("20s", "rate = \"5Mbps\"\ndelay = \"20ms\"", flows);
    let (s, _) = run(&text, None);
    let delivered: Vec<_> = s
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.bytes_delivered))
        .collect();
    assert_eq!(
        delivered,
        [("t0", 50_000), ("ideal", 60_000), ("t2", 70_000)]
    );
}

/// An MPCP PEP at r1 watching the satellite hop, with `extra` keys in its table.
fn mpcp_pep(extra: &str) -> String {
    let agent = format!(
        "[[agent]]\nkind = \"split-pep\"\nnode = \"r1\"\nlink = \"sat\"\ncc = \"mpcp-pep\"\n{extra}\n"
    );
    satellite("3MB", GEO, &agent)
}

#[test]
fn an_mpcp_peps_monitor_interval_is_its_load_factor_interval() {
    let afct = |extra: &str| {
        let (s, _) = run(&mpcp_pep(extra), Some(1));
        s.flows[0].completion_s.expect("completes")
    };
    // Unset, it is VCP's t_rho of 200 ms, as before the key applied to MPCP PEP.
    let default = afct("");
    assert_eq!(default, afct("monitor_interval = \"200ms\""));
    // Any other interval changes the load readings, so the run.
    assert_ne!(default, afct("monitor_interval = \"1s\""));
}

#[test]
fn a_monitor_interval_on_a_pep_with_no_monitor_is_refused() {
    let text = satellite(
        "1MB",
        GEO,
        "[[agent]]\nkind = \"split-pep\"\nnode = \"r1\"\ncc = \"hybla\"\nmonitor_interval = \"1s\"\n",
    );
    let Err(e) = hetpath_sim::load(&text, "x.toml", None) else {
        panic!("accepted")
    };
    assert_eq!(e.place, "agent[0].monitor_interval");
    assert!(e.to_string().contains("no traffic monitor"), "{e}");
}

#[test]
fn agents_may_be_named_once() {
    let agent = |name: &str, node: &str| {
        format!("[[agent]]\nname = \"{name}\"\nkind = \"split-pep\"\nnode = \"{node}\"\n")
    };
    let two = agent("pep-r1", "r1") + &agent("pep-r2", "r2");
    hetpath_sim::load(&satellite("1MB", GEO, &two), "x.toml", None).unwrap();
    let same = agent("pep", "r1") + &agent("pep", "r2");
    let Err(e) = hetpath_sim::load(&satellite("1MB", GEO, &same), "x.toml", None) else {
        panic!("accepted")
    };
    assert_eq!(e.place, "agent[1].name");
}
