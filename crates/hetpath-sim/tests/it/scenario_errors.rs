//! Bad scenarios fail with one line naming the file and the key, never a panic.

use hetpath_sim::load;

fn base(link: &str, flow: &str) -> String {
    format!(
        "[scenario]\nname = \"x\"\nduration = \"10s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\n{link}\n[[flow]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\n{flow}\n"
    )
}

fn error(text: &str) -> String {
    match load(text, "bad.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_the_file_and_the_key() {
    let cases = [
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"\nspeed = 3", ""),
            "speed",
        ),
        (base("delay = \"1ms\"", ""), "rate"),
        (base("rate = \"10Mbs\"\ndelay = \"1ms\"", ""), "rate"),
        (base("rate = \"-5Mbps\"\ndelay = \"1ms\"", ""), "rate"),
        (base("rate = \"10Mbps\"\ndelay = 5", ""), "delay"),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "cc = \"vegas\""),
            "cc",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "size = \"0B\""),
            "size",
        ),
        (
            base(
                "rate = \"10Mbps\"\ndelay = \"1ms\"\nchannel = { model = \"bernoulli\", p = 1.5 }",
                "",
            ),
            "p",
        ),
        (
            base(
                "rate = \"10Mbps\"\ndelay = \"1ms\"\nchannel = { model = \"bernoulli\", q = 0.1 }",
                "",
            ),
            "q",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "[flow.tcp]\nmss = 10"),
            "mss",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "to = \"c\""),
            "to",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"\nqueue = \"0.5pkt\"", ""),
            "queue",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "[flow.tcp]\niw = \"bdq\""),
            "iw",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "[flow.tcp]\nrto_formula = \"bsd\""),
            "rto_formula",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "transport = \"ideal\""),
            "size",
        ),
        (
            base("rate = \"10Mbps\"\ndelay = \"1ms\"", "transport = \"udp\""),
            "transport",
        ),
        (
            base(
                "rate = \"10Mbps\"\ndelay = \"1ms\"\nchannel = { model = \"markov\", alpha = 0.1, beta = 0.1, slot = \"0s\" }",
                "",
            ),
            "slot",
        ),
        (
            base(
                "rate = \"10Mbps\"\ndelay = \"1ms\"\nchannel = { model = \"markov\", alpha = 0.1, beta = 0.1, fec = { n = 10, k = 20 } }",
                "",
            ),
            "fec",
        ),
    ];
    for (text, key) in cases {
        let msg = error(&text);
        assert!(msg.starts_with("bad.toml: "), "{msg}");
        assert!(msg.contains(key), "'{msg}' does not name '{key}'");
        assert!(!msg.contains('\n'), "not one line: {msg}");
    }
}

#[test]
fn syntax_errors_give_a_line_number() {
    let msg = error("[scenario]\nname = \"x\"\nduration = \"10s\n");
    assert!(msg.starts_with("bad.toml: line "), "{msg}");
}

/// The mobility tables: a mobile host between two stations, with `extra` keys appended
/// to `[mobile]` and `flow` keys on the flow from the host.
fn mobile(stations: &str, extra: &str, flow: &str) -> String {
    format!(
        "[scenario]\nname = \"m\"\nduration = \"10s\"\n\
         [[node]]\nname = \"mh\"\n[[node]]\nname = \"ha\"\n[[node]]\nname = \"fa\"\n\
         [[link]]\nname = \"w\"\na = \"ha\"\nb = \"fa\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         {stations}\n\
         [mobile]\nnode = \"mh\"\nhome = \"ha\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n{extra}\n\
         [[flow]]\nname = \"f\"\nfrom = \"mh\"\nto = \"fa\"\n{flow}\n"
    )
}

const STATIONS: &str = "[[base_station]]\nnode = \"ha\"\nposition = [0.0, 0.0]\n\
                        [[base_station]]\nnode = \"fa\"\nposition = [400.0, 0.0]";

#[test]
fn mobility_errors_name_the_key() {
    assert!(load(&mobile(STATIONS, "", ""), "ok.toml", None).is_ok());
    let cases = [
        (mobile("", "", ""), "base_station"),
        (mobile(STATIONS, "", "tcp = { ilc = \"yes\" }"), "ilc"),
        (
            mobile(&STATIONS.replace("node = \"fa\"", "node = \"nowhere\""), "", ""),
            "base_station[1].node",
        ),
        (
            mobile(STATIONS, "disconnect = { count = 2, duration = \"1s\", first = \"1s\" }", ""),
            "mobile.disconnect.every",
        ),
        (
            mobile(
                STATIONS,
                "disconnect = { count = 1, duration = \"1s\", first = \"1s\", reattach = [\"mh\"] }",
                "",
            ),
            "mobile.disconnect.reattach",
        ),
        (
            mobile(STATIONS, "path = [{ to = [1.0, 0.0], speed = 0.0 }]", ""),
            "mobile.path",
        ),
        (
            format!("{}\n[radio]\nrange = -3.0\n", mobile(STATIONS, "", "")),
            "radio",
        ),
        (mobile(STATIONS, "advertise = \"0s\"", ""), "mobile.advertise"),
        (
            mobile(STATIONS, "", "transport = \"ideal\"\nsize = \"1MB\""),
            "flow[0] 'f'.transport",
        ),
    ];
    for (text, key) in cases {
        let e = error(&text);
        assert!(e.starts_with("bad.toml"), "{e}");
        assert!(e.contains(key), "expected '{key}' in: {e}");
    }
}

#[test]
fn flows_from_one_node_must_agree_on_its_state_manager() {
    let two = mobile(STATIONS, "", "tcp = { ilc = \"link-only\" }")
        + "[[flow]]\nname = \"g\"\nfrom = \"mh\"\nto = \"ha\"\ntcp = { ilc = \"link-ip\" }\n";
    let e = error(&two);
    assert!(
        e.contains("flow[1] 'g'.tcp.ilc: 'link-ip' here") && e.contains("'link-only'"),
        "{e}"
    );
}

#[test]
fn profile_and_controller_tables_are_checked_where_they_are_written() {
    let link = "rate = \"10Mbps\"\ndelay = \"1ms\"";
    let cases = [
        (
            base(link, "tcp = { profile = \"nope\" }"),
            "flow[0] 'f'.tcp.profile",
        ),
        (
            base(link, "cc = { name = \"cubic\", beta = 2.0 }"),
            "flow[0] 'f'.cc.beta",
        ),
        (
            base(link, "cc = { name = \"mpcp\", packets = 5 }"),
            "flow[0] 'f'.cc.packets",
        ),
        (
            base(link, "cc = { name = \"hybla\", growth = true }"),
            "growth",
        ),
        (base(link, "tcp = { time_wait = 3 }"), "time_wait"),
    ];
    for (text, key) in cases {
        let e = error(&text);
        assert!(e.contains(key), "expected '{key}' in: {e}");
    }
}

/// Values beyond u64 and hostile trace files: one line naming the key, never a clamp,
/// never the file's content, never a hang or an unbounded read.
#[test]
fn huge_values_and_hostile_trace_files_are_one_line_errors() {
    let link = |extra: &str| base(&format!("rate = \"10Mbps\"\ndelay = \"1ms\"\n{extra}"), "");
    let cases = [
        (base("rate = \"20000000000Gbps\"\ndelay = \"1ms\"", ""), "rate", "20000000000Gbps"),
        (base("rate = \"10Mbps\"\ndelay = \"1ms\"", "size = \"100000000000000000000B\""), "size", "100000000000000000000B"),
        (link("queue = \"100000000000000000000pkt\""), "queue", "100000000000000000000pkt"),
        (base("rate = \"10Mbps\"\ndelay = \"1000000000000s\"", ""), "delay", "1000000000000s"),
        (link("channel = { model = \"trace\", file = \"/dev/zero\" }"), "file", "not a regular file"),
        (link("channel = { model = \"trace\", file = \"/etc/passwd\" }"), "file", "/etc/passwd:1"),
        (link("channel = { model = \"markov\", alpha = 0.1, beta = 0.1, fec = { n = 300, k = 223 } }"), "fec.n", "1..=255"),
    ];
    for (text, key, what) in cases {
        let msg = error(&text);
        assert!(msg.starts_with("bad.toml: "), "{msg}");
        assert!(msg.contains(key), "'{msg}' does not name '{key}'");
        assert!(msg.contains(what), "'{msg}' does not say '{what}'");
        assert!(!msg.contains('\n'), "not one line: {msg}");
        assert!(!msg.contains("root:"), "echoes the file: {msg}");
    }
}
