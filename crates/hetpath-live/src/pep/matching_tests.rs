//! Tests of `matching`: `[match]` with its except and deny entries parsed through
//! `Config::parse`, the verdict each gives, and every bad key named in its error.

use super::*;
use crate::pep::config::Config;

const BASE: &str = r#"
mode = "integrated"
listen_port = 7070
[match]
sources = ["10.1.0.0/24"]
ports = [5001, "8000-8100"]
"#;

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn parse(extra: &str) -> Match {
    Config::parse(&format!("{BASE}{extra}"), "pep.toml")
        .unwrap()
        .matching
}

fn err(extra: &str) -> String {
    Config::parse(&format!("{BASE}{extra}"), "pep.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn without_entries_the_allow_list_decides_alone() {
    let m = parse("");
    assert!(m.except.is_empty() && m.deny.is_empty());
    assert_eq!(m.destinations, [Subnet::ANY]);
    assert_eq!(
        m.verdict(ip("10.1.0.9"), ip("10.2.0.1"), 8050),
        Verdict::Relay
    );
    assert_eq!(
        m.verdict(ip("10.1.1.9"), ip("10.2.0.1"), 8050),
        Verdict::Unmatched
    );
    assert_eq!(
        m.verdict(ip("10.1.0.9"), ip("10.2.0.1"), 22),
        Verdict::Unmatched
    );
}

#[test]
fn except_and_deny_entries_carve_out_of_the_allow_list() {
    let m = parse(
        r#"
[[match.except]]
destinations = ["10.2.0.2"]
ports = [8000]
[[match.except]]
sources = ["10.1.0.128/25"]
[[match.deny]]
ports = ["8080-8081", 5001]
[[match.deny]]
sources = ["10.1.0.7"]
destinations = ["10.2.0.0/16"]
"#,
    );
    assert_eq!(
        m.except,
        [
            Selector {
                sources: vec![],
                destinations: vec![Subnet::parse("10.2.0.2").unwrap()],
                ports: vec![Ports { lo: 8000, hi: 8000 }],
            },
            Selector {
                sources: vec![Subnet::parse("10.1.0.128/25").unwrap()],
                ..Selector::default()
            },
        ]
    );
    assert_eq!(
        m.deny[0].ports,
        [Ports { lo: 8080, hi: 8081 }, Ports { lo: 5001, hi: 5001 }]
    );
    let v = |s: &str, d: &str, p: u16| m.verdict(ip(s), ip(d), p);
    // The exception covers server 10.2.0.2 on port 8000 only, from any source.
    assert_eq!(v("10.1.0.9", "10.2.0.2", 8000), Verdict::Excepted(0));
    assert_eq!(v("10.1.0.9", "10.2.0.3", 8000), Verdict::Relay);
    assert_eq!(v("10.1.0.9", "10.2.0.2", 8001), Verdict::Relay);
    // A whole half of the clients, on every allowed port.
    assert_eq!(v("10.1.0.200", "10.9.9.9", 5001), Verdict::Excepted(1));
    // Deny entries: by port, and by source and destination.
    assert_eq!(v("10.1.0.9", "10.2.0.3", 8081), Verdict::Denied(0));
    assert_eq!(v("10.1.0.9", "10.2.0.3", 5001), Verdict::Denied(0));
    assert_eq!(v("10.1.0.7", "10.2.0.3", 8050), Verdict::Denied(1));
    assert_eq!(v("10.1.0.7", "10.3.0.3", 8050), Verdict::Relay);
    // An exception wins over a deny (the nft rule routes it before the daemon sees it),
    // and neither reaches outside the allow list.
    assert_eq!(v("10.1.0.200", "10.2.0.3", 8080), Verdict::Excepted(1));
    assert_eq!(v("10.1.1.7", "10.2.0.3", 8050), Verdict::Unmatched);
    assert_eq!(v("10.1.0.7", "10.2.0.3", 22), Verdict::Unmatched);
    assert!(!m.allows(ip("10.1.0.9"), ip("10.2.0.3"), 8081));
    assert!(m.allows(ip("10.1.0.9"), ip("10.2.0.3"), 8050));
    assert_eq!(Verdict::Denied(1).to_string(), "match.deny[1]");
}

#[test]
fn entry_errors_name_the_entry_and_the_key() {
    let e = err("[[match.except]]\nports = [8000, 0]\n");
    assert_eq!(
        e,
        "pep.toml: match.except[0].ports[1]: expected a port (1 to 65535) or a range such as \"8000-8100\""
    );
    let e = err("[[match.deny]]\nports = [1]\n[[match.deny]]\nsources = [\"10.1.0.0/33\"]\n");
    assert_eq!(
        e,
        "pep.toml: match.deny[1].sources[0]: expected an IPv4 subnet such as 10.1.0.0/24, got '10.1.0.0/33'"
    );
    let e = err("[[match.except]]\ndestinations = []\n");
    assert_eq!(
        e,
        "pep.toml: match.except[0].destinations: expected at least one IPv4 subnet"
    );
    let e = err("[[match.deny]]\n");
    assert!(
        e.starts_with(
            "pep.toml: match.deny[0]: expected at least one of sources, destinations and ports"
        ),
        "{e}"
    );
    let e = err("[[match.except]]\nport = [80]\n");
    assert!(
        e.starts_with("pep.toml: ") && e.contains("port") && !e.contains('\n'),
        "{e}"
    );
    // An exception or deny entry may name the listener's port: it intercepts nothing.
    assert_eq!(parse("[[match.deny]]\nports = [7070]\n").deny.len(), 1);
}

#[test]
fn admission_counts_every_refusal_and_deny_entries_apart() {
    let m = parse("[[match.deny]]\nports = [5001]\n[[match.except]]\nports = [8000]\n");
    let metrics = Metrics::default();
    let at = |s: &str| -> SocketAddrV4 { s.parse().unwrap() };
    assert!(m.admit(&metrics, at("10.1.0.9:4000"), at("10.2.0.1:8050")));
    assert!(!m.admit(&metrics, at("10.1.0.9:4001"), at("10.2.0.1:5001")));
    assert!(!m.admit(&metrics, at("10.1.0.9:4002"), at("10.2.0.1:8000")));
    assert!(!m.admit(&metrics, at("10.1.1.9:4003"), at("10.2.0.1:8050")));
    assert_eq!(metrics.rejected_unmatched.load(Relaxed), 3);
    assert_eq!(metrics.denied.load(Relaxed), 1);
    assert!(metrics.render().contains("\nhetpath_pep_denied_total 1\n"));
}
