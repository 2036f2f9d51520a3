//! Tests of `config`: the good file parsed, and every bad key named in its error.

use super::*;

const GOOD: &str = r#"
mode = "integrated"
listen_port = 7070
metrics = "127.0.0.1:9470"
server_congestion = "bbr"
[match]
sources = ["10.1.0.0/24"]
ports = [5001, "8000-8100"]
"#;

#[test]
fn a_good_file_loads_with_defaults() {
    let c = Config::parse(GOOD, "pep.toml").unwrap();
    assert_eq!(c.mode, Mode::Integrated);
    assert_eq!(c.max_connections, 256);
    assert_eq!(c.server_congestion.as_deref(), Some("bbr"));
    assert!(c.matching.allows(
        "10.1.0.9".parse().unwrap(),
        "10.2.0.1".parse().unwrap(),
        8050
    ));
    assert!(!c.matching.allows(
        "10.1.1.9".parse().unwrap(),
        "10.2.0.1".parse().unwrap(),
        8050
    ));
    assert!(!c
        .matching
        .allows("10.1.0.9".parse().unwrap(), "10.2.0.1".parse().unwrap(), 22));
    assert_eq!(c.nft.table, "hetpath_pep");
}

fn err(text: &str) -> String {
    Config::parse(text, "pep.toml").unwrap_err().to_string()
}

#[test]
fn errors_name_the_file_the_key_and_the_expectation() {
    let e = err(&GOOD.replace("10.1.0.0/24", "10.1.0.0/33"));
    assert_eq!(e, "pep.toml: match.sources[0]: expected an IPv4 subnet such as 10.1.0.0/24, got '10.1.0.0/33'");
    let e = err(&GOOD.replace("5001", "7070"));
    assert!(
        e.starts_with("pep.toml: match.ports[0]: expected ports that exclude listen_port"),
        "{e}"
    );
    let e = err(&GOOD.replace("\"bbr\"", "\"b b\""));
    assert!(
        e.starts_with("pep.toml: server_congestion: expected"),
        "{e}"
    );
    let e = err(&GOOD.replace("listen_port", "listen_prot"));
    assert!(
        e.starts_with("pep.toml: ") && e.contains("listen_prot"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    let e = err(&GOOD.replace("sources = [\"10.1.0.0/24\"]", "sources = []"));
    assert_eq!(
        e,
        "pep.toml: match.sources: expected at least one IPv4 subnet"
    );
    let e = err("mode = 3");
    assert!(e.starts_with("pep.toml: ") && !e.contains('\n'), "{e}");
}

const GATEWAY_A: &str = r#"
mode = "gateway"
role = "a"
listen_port = 7070
[match]
sources = ["10.1.0.0/24"]
ports = [5001]
[gateway]
peer = "192.0.2.2:4850"
listen = "0.0.0.0:4850"
key_file = "psk.key"
"#;

#[test]
fn a_gateway_file_loads_with_defaults() {
    let c = Config::parse(GATEWAY_A, "/etc/hetpath/a.toml").unwrap();
    assert_eq!(c.mode, Mode::Gateway);
    let g = c.gateway.as_ref().unwrap();
    assert_eq!(g.role, Role::A);
    assert_eq!(g.key_file, Path::new("/etc/hetpath/psk.key"));
    assert_eq!(g.cc.name(), "hybla");
    assert_eq!(g.tcp.pacing, Some(Pacing::LINUX), "the linux profile's");
    assert_eq!(g.tcp.mss, 1368, "the MSS follows max_datagram");
    assert_eq!(g.tcp.rto.min, Dur::from_millis(200), "the linux profile's");
    assert_eq!(g.aead, Aead::ChaCha20Poly1305);
    assert_eq!(g.max_datagram, 1472);
    assert!(!c.is_gateway_b());
    let b = GATEWAY_A
        .replace("role = \"a\"", "role = \"b\"")
        .replace("listen_port = 7070\n", "")
        .replace("key_file", "congestion = \"cubic\"\nkey_file");
    let c = Config::parse(&b, "b.toml").unwrap();
    assert!(c.is_gateway_b());
    assert_eq!(c.listen_port, 0);
    assert_eq!(c.gateway.unwrap().tcp.pacing, Some(Pacing::LINUX));
    let rfc = GATEWAY_A.to_string() + "[gateway.tcp]\nprofile = \"rfc\"\n";
    let g = Config::parse(&rfc, "a.toml").unwrap().gateway.unwrap();
    assert_eq!(g.tcp.rto.min, Dur::from_secs(1), "the RFC defaults");
    assert_eq!(
        g.tcp.pacing,
        Some(Pacing::HYBLA),
        "a window per RTT for Hybla"
    );
    // A scenario's [tcp] keys, a profile among them, and a controller's table.
    let linux = GATEWAY_A.to_string()
        + "congestion = { name = \"hybla\", rtt0 = \"25ms\" }\n[gateway.tcp]\nprofile = \"linux\"\nmin_rto = \"300ms\"\n";
    let g = Config::parse(&linux, "a.toml").unwrap().gateway.unwrap();
    assert_eq!(g.cc.name(), "hybla");
    assert_eq!(
        g.tcp.rto.min,
        Dur::from_millis(300),
        "the key over the profile"
    );
    assert!(
        g.tcp.timestamps && g.tcp.cwnd_validation,
        "the linux profile"
    );
    assert_eq!(g.tcp.pacing, Some(Pacing::LINUX), "the profile's pacing");
    assert_eq!(g.tcp.initial_window, 10 * 1368);
}

#[test]
fn gateway_errors_name_the_key() {
    let e = err(&GATEWAY_A.replace("[gateway]", "[gw]"));
    assert!(e.starts_with("pep.toml: ") && e.contains("gw"), "{e}");
    let e = err(&GATEWAY_A.replace("role = \"a\"\n", ""));
    assert_eq!(e, "pep.toml: role: expected 'a' or 'b' in gateway mode");
    let e = err(&GATEWAY_A.replace("listen = ", "aead = \"des\"\nlisten = "));
    assert!(e.starts_with("pep.toml: gateway.aead: expected"), "{e}");
    let e = err(&GATEWAY_A.replace("listen = ", "pacing = \"fast\"\nlisten = "));
    assert!(e.starts_with("pep.toml: gateway.pacing: expected"), "{e}");
    let e = err(&GATEWAY_A.replace("listen = ", "peer_timeout_ms = 500\nlisten = "));
    assert!(
        e.starts_with("pep.toml: gateway.peer_timeout_ms: expected"),
        "{e}"
    );
    for bad in ["\"1s\"", "\"2 fortnights\"", "\"1441min\""] {
        let e = err(&GATEWAY_A.replace("listen = ", &format!("rekey_after = {bad}\nlisten = ")));
        assert!(
            e.starts_with("pep.toml: gateway.rekey_after: expected a duration with a unit"),
            "{e}"
        );
    }
    let g = Config::parse(
        &GATEWAY_A.replace("listen = ", "rekey_after = \"30s\"\nlisten = "),
        "a.toml",
    )
    .unwrap()
    .gateway
    .unwrap();
    assert_eq!(g.rekey_after, Dur::from_secs(30));
    let g = Config::parse(GATEWAY_A, "a.toml").unwrap().gateway.unwrap();
    assert_eq!(g.rekey_after, Dur::from_secs(120), "the default, 2min");
    let e = err(&(GATEWAY_A.to_string() + "[gateway.tcp]\nmin_rto = \"soon\"\n"));
    assert!(
        e.starts_with("pep.toml: ") && e.contains("soon") && !e.contains('\n'),
        "{e}"
    );
    let e = err(&(GATEWAY_A.to_string() + "[gateway.tcp]\niw = 0\n"));
    assert!(e.starts_with("pep.toml: gateway.tcp.iw: "), "{e}");
    let e = err(&(GATEWAY_A.to_string() + "[gateway.tcp]\nmss = 1000\n"));
    assert!(e.starts_with("pep.toml: gateway.tcp.mss: expected"), "{e}");
    let e = err(&(GATEWAY_A.to_string() + "[gateway.tcp]\nprofile = \"bsd\"\n"));
    assert!(e.starts_with("pep.toml: gateway.tcp.profile: "), "{e}");
    let e = err(&GATEWAY_A.replace("listen = ", "congestion = \"vegas\"\nlisten = "));
    assert!(e.starts_with("pep.toml: gateway.congestion"), "{e}");
    let e = err(&GATEWAY_A.replace("listen = ", "congestion = \"xcp-pep\"\nlisten = "));
    assert!(e.starts_with("pep.toml: gateway.rate_bps: expected"), "{e}");
    let e = err(&GOOD.replace("listen_port", "role = \"a\"\nlisten_port"));
    assert_eq!(e, "pep.toml: role: expected no role in integrated mode");
    let e = err(&GATEWAY_A
        .replace("mode = \"gateway\"", "mode = \"integrated\"")
        .replace("role = \"a\"\n", ""));
    assert_eq!(
        e,
        "pep.toml: gateway: expected no [gateway] in integrated mode"
    );
}

#[test]
fn subnets_match_by_prefix() {
    let s = Subnet::parse("10.1.0.77/24").unwrap();
    assert_eq!(s.to_string(), "10.1.0.0/24");
    assert!(s.contains("10.1.0.1".parse().unwrap()));
    assert!(Subnet::parse("0.0.0.0/0")
        .unwrap()
        .contains("1.2.3.4".parse().unwrap()));
    assert!(Subnet::parse("1.2.3.4")
        .unwrap()
        .contains("1.2.3.4".parse().unwrap()));
    assert!(Subnet::parse("1.2.3/8").is_none());
}

#[test]
fn memory_limit_takes_a_size_and_must_hold_every_connection_at_its_fullest() {
    assert_eq!(
        Config::parse(GOOD, "pep.toml").unwrap().memory_limit,
        1 << 30
    );
    let with = |extra: &str| GOOD.replace("[match]", &format!("{extra}\n[match]"));
    let c = Config::parse(&with("memory_limit = \"512MiB\""), "pep.toml").unwrap();
    assert_eq!(c.memory_limit, 512 << 20);
    let c = Config::parse(&with("memory_limit = 134217728"), "pep.toml").unwrap();
    assert_eq!(c.memory_limit, 128 << 20);
    // 256 connections × 2 × 4 MiB = 2 GiB over the default 1 GiB.
    let e = err(&with("buffer_bytes = 4194304"));
    assert_eq!(
        e,
        "pep.toml: memory_limit: expected at least max_connections × 2 × buffer_bytes (in pages) = 256 × 8388608 = 2147483648 bytes (2048.0 MiB), got 1073741824 (1024.0 MiB); lower max_connections or buffer_bytes, or raise memory_limit"
    );
    assert!(Config::parse(
        &with("buffer_bytes = 4194304\nmemory_limit = \"2GiB\""),
        "pep.toml"
    )
    .is_ok());
    let e = err(&with("memory_limit = \"lots\""));
    assert!(
        e.starts_with("pep.toml: memory_limit: expected a size from 1MiB"),
        "{e}"
    );
}

#[test]
fn the_limits_have_defaults_and_ranges() {
    let c = Config::parse(GOOD, "pep.toml").unwrap();
    assert_eq!(
        c.idle_timeout,
        Dur::from_secs(124 * 60),
        "RFC 5382 REQ-5's 2 h 4 min"
    );
    assert_eq!(c.max_connections_per_source, 64);
    let small = GOOD.replace("listen_port", "max_connections = 10\nlisten_port");
    let c = Config::parse(&small, "pep.toml").unwrap();
    assert_eq!(
        c.max_connections_per_source, 10,
        "capped at max_connections"
    );
    let set = GOOD.replace(
        "listen_port",
        "idle_timeout = \"2s\"\nmax_connections_per_source = 3\nlisten_port",
    );
    let c = Config::parse(&set, "pep.toml").unwrap();
    assert_eq!(c.idle_timeout, Dur::from_secs(2));
    assert_eq!(c.max_connections_per_source, 3);
    let e = err(&GOOD.replace("listen_port", "idle_timeout = \"0.5s\"\nlisten_port"));
    assert!(
        e.starts_with("pep.toml: idle_timeout: expected a duration with a unit (ms, s, min) from 1s to 1440min"),
        "{e}"
    );
    let e = err(&small.replace(
        "listen_port",
        "max_connections_per_source = 11\nlisten_port",
    ));
    assert_eq!(
        e,
        "pep.toml: max_connections_per_source: expected 1 to max_connections (10), got 11"
    );
}
