//! Scenarios that would run and report wrong results are errors: a
//! router-assisted controller with no router of its kind on the flow's path, and a split
//! PEP on a flow's own end (it delivered 0 bytes while the sender was told it was done).

use hetpath_sim::load;

use crate::common;

/// a - r - b, one flow a -> b with `cc`, and the given agents.
fn line(cc: &str, agents: &str) -> String {
    let flow = common::flow("f", cc, "size = \"100kB\"");
    common::router_line("5s", "delay = \"20ms\"", &(flow + agents))
}

fn agent(kind: &str, node: &str, link: &str) -> String {
    let link = if link.is_empty() {
        String::new()
    } else {
        format!("link = \"{link}\"\n")
    };
    format!("[[agent]]\nkind = \"{kind}\"\nnode = \"{node}\"\n{link}")
}

fn place_of_error(text: &str) -> String {
    match load(text, "x.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert!(!e.to_string().contains('\n'));
            e.place
        }
    }
}

#[test]
fn a_router_assisted_controller_needs_its_router_on_the_path() {
    for cc in ["xcp", "vcp", "mpcp"] {
        assert_eq!(place_of_error(&line(cc, "")), "flow[0] 'f'.cc", "{cc}");
    }
    // A router of another kind, or on the way back only, does not count.
    assert_eq!(
        place_of_error(&line("xcp", &agent("vcp-router", "r", "bn"))),
        "flow[0] 'f'.cc"
    );
    assert_eq!(
        place_of_error(&line("xcp", &agent("xcp-router", "r", "in"))),
        "flow[0] 'f'.cc"
    );
    for (cc, kind) in [
        ("xcp", "xcp-router"),
        ("vcp", "vcp-router"),
        ("mpcp", "mpcp-router"),
        ("vcp", "mpcp-router"),
    ] {
        let text = line(cc, &agent(kind, "r", "bn"));
        load(&text, "x.toml", None).unwrap_or_else(|e| panic!("{cc} {kind}: {e}"));
    }
}

#[test]
fn a_split_pep_on_a_flows_end_is_an_error_naming_the_agent() {
    for node in ["b", "a"] {
        let text = line("cubic", &agent("split-pep", node, ""));
        assert_eq!(place_of_error(&text), "agent[0].node", "on {node}");
    }
    let text = line("cubic", &agent("split-pep", "r", ""));
    let mut sim = load(&text, "x.toml", None).unwrap();
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(sim.summary(0.0).flows[0].bytes_delivered, 100_000);
}

/// Seed 001's path with one flow fh -> mh under MH-LIFT and the given agents.
fn lift_flow(agents: &str) -> String {
    let rest = format!(
        "[[flow]]\nname = \"w\"\nfrom = \"fh\"\nto = \"mh\"\ncc = \"reno\"\nsize = \"50KB\"\nipsec = {{ esp_overhead = 18, lift = true }}\n{agents}"
    );
    common::lift_path("duration = \"60s\"", "", "", &rest)
}

#[test]
fn mh_lift_needs_a_lift_bs_between_the_flows_ends() {
    // None at all, on the receiver, on the sender: the ACKs would wait for nobody.
    for agents in [
        "",
        "[[agent]]\nkind = \"lift-bs\"\nnode = \"mh\"\n",
        "[[agent]]\nkind = \"lift-bs\"\nnode = \"fh\"\n",
    ] {
        let text = lift_flow(agents);
        assert_eq!(place_of_error(&text), "flow[0] 'w'.ipsec.lift", "{agents}");
    }
    let e = load(
        &lift_flow("[[agent]]\nkind = \"lift-bs\"\nnode = \"mh\"\n"),
        "x.toml",
        None,
    )
    .err()
    .unwrap();
    assert!(e.message.contains("agent[0] is on 'mh'"), "{e}");
    assert!(e.message.contains("crosses gw"), "{e}");
    // On the gateway it runs and delivers.
    let (s, _) = common::run(
        &lift_flow("[[agent]]\nkind = \"lift-bs\"\nnode = \"gw\"\n"),
        None,
    );
    assert_eq!(s.flows[0].bytes_delivered, 50_000);
}

#[test]
fn ilc_on_a_sender_that_is_not_the_mobile_host_is_a_warning() {
    let warnings = |text: &str| -> Vec<String> {
        let l = hetpath_sim::scenario::load_warned(text, "x.toml", None, true).unwrap();
        l.warnings.iter().map(ToString::to_string).collect()
    };
    for ilc in ["link-ip", "link-only"] {
        let text = line("reno", "").replace(
            "cc = \"reno\"\n",
            &format!("cc = \"reno\"\ntcp = {{ ilc = \"{ilc}\" }}\n"),
        );
        let w = warnings(&text);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("x.toml: flow[0] 'f'.tcp.ilc: "), "{w:?}");
        assert!(w[0].contains("no [mobile] host"), "{w:?}");
    }
    // From [tcp] too: the place is the flow it applies to.
    let text = line("reno", "").replacen("[[node]]", "[tcp]\nilc = \"link-ip\"\n[[node]]", 1);
    assert_eq!(warnings(&text).len(), 1);
    assert!(warnings(&text.replace("\"link-ip\"", "\"off\"")).is_empty());
}

#[test]
fn a_byte_queue_that_holds_no_packet_of_a_flow_is_an_error() {
    // The data way: a full segment is 1500 bytes.
    for q in ["1B", "1499B"] {
        let text = line("reno", "").replace(
            "delay = \"20ms\"",
            &format!("delay = \"20ms\"\nqueue = \"{q}\""),
        );
        assert_eq!(place_of_error(&text), "link[1] 'bn' (ab).queue", "{q}");
    }
    // The way back needs the SYN-ACK, 60 bytes with every option.
    let text = line("reno", "").replace(
        "delay = \"20ms\"",
        "delay = \"20ms\"\nba = { queue = \"59B\" }",
    );
    assert_eq!(place_of_error(&text), "link[1] 'bn' (ba).queue");
    let text = line("reno", "").replace(
        "delay = \"20ms\"",
        "delay = \"20ms\"\nqueue = \"1500B\"\nba = { queue = \"60B\" }",
    );
    let mut sim = load(&text, "x.toml", None).unwrap();
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(sim.summary(0.0).flows[0].bytes_delivered, 100_000);
    // ESP's bytes count: RFC 4303 sizes make a 1460-byte segment a 1540-byte packet.
    let text = line("reno", "").replace("delay = \"20ms\"", "delay = \"20ms\"\nqueue = \"1500B\"");
    let text = text.replace("cc = \"reno\"\n", "cc = \"reno\"\nipsec = true\n");
    assert_eq!(place_of_error(&text), "link[1] 'bn' (ab).queue");
}

#[test]
fn esp_overhead_is_bounded_so_that_no_packet_size_wraps() {
    for n in ["4294967295", "1025", "-1", "9"] {
        let text = line("reno", "").replace(
            "cc = \"reno\"\n",
            &format!("cc = \"reno\"\nipsec = {{ esp_overhead = {n} }}\n"),
        );
        let e = load(&text, "x.toml", None)
            .err()
            .unwrap_or_else(|| panic!("{n} accepted"));
        assert!(e.to_string().contains("esp_overhead"), "{n}: {e}");
    }
    let text = line("reno", "").replace(
        "cc = \"reno\"\n",
        "cc = \"reno\"\nipsec = { esp_overhead = 1024 }\n",
    );
    load(&text, "x.toml", None).unwrap();
    // A segment that ESP makes larger than an IPv4 datagram.
    let text = text.replacen("[[node]]", "[tcp]\nmss = 65495\n[[node]]", 1);
    assert_eq!(place_of_error(&text), "flow[0] 'f'.tcp.mss");
}

/// A chain of `links` links from `n0` to the last node, one flow across it.
fn chain(links: usize) -> String {
    let mut text = "[scenario]\nname = \"c\"\nduration = \"1s\"\n".to_string();
    for i in 0..=links {
        text += &format!("[[node]]\nname = \"n{i}\"\n");
    }
    for i in 0..links {
        text += &format!(
            "[[link]]\nname = \"l{i}\"\na = \"n{i}\"\nb = \"n{}\"\nrate = \"1Gbps\"\ndelay = \"1us\"\n",
            i + 1
        );
    }
    text + &format!("[[flow]]\nname = \"f\"\nfrom = \"n0\"\nto = \"n{links}\"\nsize = \"10KB\"\n")
}

#[test]
fn a_route_longer_than_the_ttl_is_a_warning() {
    let ok = hetpath_sim::scenario::load_warned(&chain(64), "x.toml", None, true).unwrap();
    assert!(ok.warnings.is_empty(), "{:?}", ok.warnings);
    let mut sim = ok.sim;
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(
        sim.summary(0.0).flows[0].bytes_delivered,
        10_000,
        "64 links pass"
    );
    let long = hetpath_sim::scenario::load_warned(&chain(65), "x.toml", None, true).unwrap();
    let w: Vec<String> = long.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("x.toml: flow[0] 'f': the route from 'n0' to 'n65' crosses 65 links"),
        "{w:?}"
    );
    let mut sim = long.sim;
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(
        sim.summary(0.0).flows[0].bytes_delivered,
        0,
        "the TTL runs out"
    );
}
