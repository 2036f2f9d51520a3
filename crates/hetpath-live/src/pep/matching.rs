//! `[match]`: which TCP connections the PEP intercepts (docs/live.md, "What it installs
//! and removes"). The allow list (`sources`, `destinations`, `ports`) says what is
//! intercepted; `[[match.except]]` entries carve out connections that are not
//! intercepted at all (routed, so the gateway's own `forward` chain decides them), and
//! `[[match.deny]]` entries carve out connections that are intercepted and reset. The
//! nft rules (`rules.rs`) and the daemon's re-check of each accepted connection
//! (`Match::verdict`) read the same lists, so they agree.

use super::config::{ConfigError, LogLevel};
use super::log::log;
use super::metrics::Metrics;
use serde::Deserialize;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::Ordering::Relaxed;

/// An IPv4 subnet, `10.1.0.0/24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subnet {
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl Subnet {
    /// Every address: what an omitted `destinations` means.
    pub const ANY: Subnet = Subnet {
        addr: Ipv4Addr::UNSPECIFIED,
        prefix: 0,
    };

    fn mask(&self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - self.prefix)
        }
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// `a.b.c.d/n`, or a bare address (a /32).
    pub fn parse(s: &str) -> Option<Subnet> {
        let (a, p) = s.split_once('/').unwrap_or((s, "32"));
        let addr: Ipv4Addr = a.trim().parse().ok()?;
        let prefix: u8 = p.trim().parse().ok()?;
        (prefix <= 32).then_some(Subnet { addr, prefix })
    }
}

impl fmt::Display for Subnet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            self.prefix
        )
    }
}

/// An inclusive port range (one port when both ends agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    pub lo: u16,
    pub hi: u16,
}

impl Ports {
    pub fn contains(&self, p: u16) -> bool {
        (self.lo..=self.hi).contains(&p)
    }
}

impl fmt::Display for Ports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

/// One `[[match.except]]` or `[[match.deny]]` entry: TCP from `sources` to
/// `destinations` on `ports`, where an empty list (the key omitted) is any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub sources: Vec<Subnet>,
    pub destinations: Vec<Subnet>,
    pub ports: Vec<Ports>,
}

impl Selector {
    pub fn covers(&self, src: Ipv4Addr, dst: Ipv4Addr, port: u16) -> bool {
        (self.sources.is_empty() || self.sources.iter().any(|s| s.contains(src)))
            && (self.destinations.is_empty() || self.destinations.iter().any(|s| s.contains(dst)))
            && (self.ports.is_empty() || self.ports.iter().any(|p| p.contains(port)))
    }
}

/// What is proxied: TCP from `sources` to `destinations` on `ports`, less what an
/// `except` entry (not intercepted) or a `deny` entry (reset) covers; nothing else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Match {
    pub sources: Vec<Subnet>,
    pub destinations: Vec<Subnet>,
    pub ports: Vec<Ports>,
    pub except: Vec<Selector>,
    pub deny: Vec<Selector>,
}

/// What `[match]` says of one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Relay it.
    Relay,
    /// Outside the allow list: never intercepted.
    Unmatched,
    /// Covered by `match.except[i]`: never intercepted either.
    Excepted(usize),
    /// Covered by `match.deny[i]`: intercepted, and reset.
    Denied(usize),
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Relay => write!(f, "relayed"),
            Verdict::Unmatched => write!(f, "not in [match]"),
            Verdict::Excepted(i) => write!(f, "match.except[{i}] (never intercepted)"),
            Verdict::Denied(i) => write!(f, "match.deny[{i}]"),
        }
    }
}

impl Match {
    /// The same decision as the nft rules (an exception is routed before the TPROXY
    /// rules see it), repeated on each accepted connection so that a connection
    /// reaching the listener some other way is never relayed, plus the deny entries,
    /// which only the daemon applies.
    pub fn verdict(&self, src: Ipv4Addr, dst: Ipv4Addr, port: u16) -> Verdict {
        let listed = self.sources.iter().any(|s| s.contains(src))
            && self.destinations.iter().any(|s| s.contains(dst))
            && self.ports.iter().any(|p| p.contains(port));
        if !listed {
            return Verdict::Unmatched;
        }
        if let Some(i) = self.except.iter().position(|e| e.covers(src, dst, port)) {
            return Verdict::Excepted(i);
        }
        if let Some(i) = self.deny.iter().position(|e| e.covers(src, dst, port)) {
            return Verdict::Denied(i);
        }
        Verdict::Relay
    }

    /// Whether a connection is relayed.
    pub fn allows(&self, src: Ipv4Addr, dst: Ipv4Addr, port: u16) -> bool {
        self.verdict(src, dst, port) == Verdict::Relay
    }

    /// The daemons' check of a connection their listener accepted (both modes): true
    /// to relay it; otherwise it is logged and counted in `rejected_unmatched` (and in
    /// `denied` for a deny entry, logged at info: a policy, not a fault).
    pub fn admit(&self, metrics: &Metrics, peer: SocketAddrV4, dst: SocketAddrV4) -> bool {
        let verdict = self.verdict(*peer.ip(), *dst.ip(), dst.port());
        if verdict == Verdict::Relay {
            return true;
        }
        let denied = matches!(verdict, Verdict::Denied(_));
        let level = if denied {
            LogLevel::Info
        } else {
            LogLevel::Warn
        };
        log(level, format_args!("refused {peer} -> {dst}: {verdict}"));
        metrics.rejected_unmatched.fetch_add(1, Relaxed);
        metrics.denied.fetch_add(u64::from(denied), Relaxed);
        false
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMatch {
    sources: Vec<String>,
    destinations: Option<Vec<String>>,
    ports: Vec<RawPort>,
    except: Option<Vec<RawSelector>>,
    deny: Option<Vec<RawSelector>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSelector {
    sources: Option<Vec<String>>,
    destinations: Option<Vec<String>>,
    ports: Option<Vec<RawPort>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawPort {
    One(i64),
    Range(String),
}

type Bad<'a> = &'a dyn Fn(&str, String) -> ConfigError;

impl Match {
    /// Checks `[match]`; `listen_port` (0: none) may not be an allowed port.
    pub(super) fn parse(raw: &RawMatch, listen_port: u16, bad: Bad) -> Result<Match, ConfigError> {
        let sources = subnets("match.sources", &raw.sources, bad)?;
        let destinations = match &raw.destinations {
            None => vec![Subnet::ANY],
            Some(d) => subnets("match.destinations", d, bad)?,
        };
        let ports = ports("match.ports", &raw.ports, bad)?;
        for (i, p) in ports.iter().enumerate() {
            if listen_port != 0 && p.contains(listen_port) {
                return Err(bad(
                    &format!("match.ports[{i}]"),
                    format!("ports that exclude listen_port {listen_port}"),
                ));
            }
        }
        let selectors = |key: &str, list: &Option<Vec<RawSelector>>| {
            let list = list.as_deref().unwrap_or_default();
            list.iter()
                .enumerate()
                .map(|(i, e)| selector(&format!("{key}[{i}]"), e, bad))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Match {
            sources,
            destinations,
            ports,
            except: selectors("match.except", &raw.except)?,
            deny: selectors("match.deny", &raw.deny)?,
        })
    }
}

fn selector(key: &str, e: &RawSelector, bad: Bad) -> Result<Selector, ConfigError> {
    if e.sources.is_none() && e.destinations.is_none() && e.ports.is_none() {
        return Err(bad(
            key,
            "at least one of sources, destinations and ports (an empty entry would cover everything)"
                .into(),
        ));
    }
    let opt_subnets = |k: &str, v: &Option<Vec<String>>| match v {
        None => Ok(Vec::new()),
        Some(v) => subnets(&format!("{key}.{k}"), v, bad),
    };
    Ok(Selector {
        sources: opt_subnets("sources", &e.sources)?,
        destinations: opt_subnets("destinations", &e.destinations)?,
        ports: match &e.ports {
            None => Vec::new(),
            Some(p) => ports(&format!("{key}.ports"), p, bad)?,
        },
    })
}

fn subnets(key: &str, list: &[String], bad: Bad) -> Result<Vec<Subnet>, ConfigError> {
    if list.is_empty() {
        return Err(bad(key, "at least one IPv4 subnet".into()));
    }
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            Subnet::parse(s).ok_or_else(|| {
                bad(
                    &format!("{key}[{i}]"),
                    format!("an IPv4 subnet such as 10.1.0.0/24, got '{s}'"),
                )
            })
        })
        .collect()
}

fn ports(key: &str, list: &[RawPort], bad: Bad) -> Result<Vec<Ports>, ConfigError> {
    if list.is_empty() {
        return Err(bad(key, "at least one port or range".into()));
    }
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let range = match p {
                RawPort::One(n) => u16::try_from(*n)
                    .ok()
                    .filter(|&n| n > 0)
                    .map(|n| Ports { lo: n, hi: n }),
                RawPort::Range(s) => parse_range(s),
            };
            range.ok_or_else(|| {
                bad(
                    &format!("{key}[{i}]"),
                    "a port (1 to 65535) or a range such as \"8000-8100\"".into(),
                )
            })
        })
        .collect()
}

fn parse_range(s: &str) -> Option<Ports> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let lo: u16 = a.trim().parse().ok()?;
    let hi: u16 = b.trim().parse().ok()?;
    (lo > 0 && lo <= hi).then_some(Ports { lo, hi })
}

#[cfg(test)]
#[path = "matching_tests.rs"]
mod tests;
