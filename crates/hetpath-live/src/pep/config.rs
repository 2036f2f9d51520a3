//! The PEP's TOML configuration (docs/live.md, "The PEP"): what it intercepts, how it
//! relays, where it reports. Errors name the file, the key and what was expected, on
//! one line (docs/architecture.md, convention 9); unknown keys are errors.

use super::matching::RawMatch;
pub use super::matching::{Match, Ports, Subnet};
use super::memory_budget::{self, RawSize};
use super::seal::{Aead, Role};
use hetpath_proto::cc::{Algorithm, SatpepConfig};
use hetpath_proto::tcp::{Pacing, TcpConfig};
use hetpath_proto::time::Dur;
use hetpath_sim::scenario::cc::CcSpec;
use hetpath_sim::scenario::profiles;
use hetpath_sim::scenario::spec::TcpSpec;
use serde::Deserialize;
use std::net::{SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};

/// How the server leg is carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One PEP (PEPsal): the server leg is kernel TCP with its own controller.
    Integrated,
    /// A pair (QPEP, PEPesc): the leg between them is hetpath-proto's TCP over sealed
    /// UDP datagrams (`[gateway]`).
    Gateway,
}

/// Gateway mode's own keys (`[gateway]` and `role`).
#[derive(Clone, Debug, PartialEq)]
pub struct GatewaySection {
    pub role: Role,
    /// The other gateway's UDP address, and this one's.
    pub peer: SocketAddrV4,
    pub listen: SocketAddrV4,
    /// Resolved against the configuration file's directory.
    pub key_file: PathBuf,
    pub aead: Aead,
    /// The satellite leg's controller (`congestion`, a name or a table as a scenario's
    /// `cc`) and TCP settings (`[gateway.tcp]`, a scenario's `[tcp]` keys: a profile,
    /// `min_rto`, `iw`, ...), its MSS from `max_datagram` and its pacing resolved.
    pub cc: Algorithm,
    pub tcp: TcpConfig,
    pub max_datagram: usize,
    pub keepalive: Dur,
    pub peer_timeout: Dur,
    /// How long a session's keys are used before gateway a makes new ones.
    pub rekey_after: Dur,
    /// B: how long the connect to a server may take before A hears `Refuse`.
    pub connect_timeout: Dur,
    /// The satellite link's IP rate: datagrams never leave faster (`None`: unshaped).
    pub rate_bps: Option<u64>,
    /// The satellite leg's round trip: xcp-pep's fixed control interval.
    pub rtt: Dur,
}

/// The satellite leg's profile when `[gateway.tcp]` names none.
pub const DEFAULT_PROFILE: &str = "linux";

/// Controllers that need the satellite link's rate (`rate_bps`): RAPPEP's, fed by a
/// traffic monitor of the link (`monitor.rs`), and satpep, paced at it.
const NEEDS_RATE: [&str; 3] = ["xcp-pep", "mpcp-pep", "satpep"];

/// The nftables table and the policy route that deliver intercepted packets locally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nft {
    pub table: String,
    pub mark: u32,
    pub route_table: u32,
}

/// The whole configuration, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// The TPROXY listener's port (0 on gateway B, which intercepts nothing).
    pub listen_port: u16,
    pub metrics: Option<SocketAddr>,
    pub max_connections: usize,
    pub buffer_bytes: usize,
    pub socket_buffer_bytes: usize,
    pub server_congestion: Option<String>,
    pub client_congestion: Option<String>,
    pub log: LogLevel,
    pub matching: Match,
    pub nft: Nft,
    /// Gateway mode's keys; `None` in integrated mode.
    pub gateway: Option<GatewaySection>,
    /// The most the relay buffers may occupy, in bytes (`memory_budget.rs`).
    pub memory_limit: u64,
    /// A relayed connection that moves no byte either way for this long is reset.
    pub idle_timeout: Dur,
    /// The most connections one client address may hold at once.
    pub max_connections_per_source: usize,
}

impl Config {
    /// Gateway B: it opens server connections for A and intercepts nothing itself.
    pub fn is_gateway_b(&self) -> bool {
        self.gateway.as_ref().is_some_and(|g| g.role == Role::B)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
}

/// A configuration error: file, key and expectation, on one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: {key}: expected {expected}")]
    Value {
        file: String,
        key: String,
        expected: String,
    },
    /// From the scenario loader's checks of `[gateway.tcp]` and `congestion`.
    #[error("{file}: {key}: {message}")]
    Key {
        file: String,
        key: String,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    mode: String,
    role: Option<String>,
    listen_port: Option<u16>,
    metrics: Option<String>,
    max_connections: Option<u64>,
    buffer_bytes: Option<u64>,
    socket_buffer_bytes: Option<u64>,
    server_congestion: Option<String>,
    client_congestion: Option<String>,
    log: Option<String>,
    #[serde(rename = "match")]
    matching: RawMatch,
    nft: Option<RawNft>,
    gateway: Option<RawGateway>,
    memory_limit: Option<RawSize>,
    idle_timeout: Option<String>,
    max_connections_per_source: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGateway {
    peer: String,
    listen: String,
    key_file: String,
    aead: Option<String>,
    congestion: Option<CcSpec>,
    pacing: Option<String>,
    tcp: Option<TcpSpec>,
    max_datagram: Option<u64>,
    keepalive_ms: Option<u64>,
    peer_timeout_ms: Option<u64>,
    connect_timeout_ms: Option<u64>,
    rate_bps: Option<u64>,
    rtt_ms: Option<u64>,
    rekey_after: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNft {
    table: Option<String>,
    mark: Option<u32>,
    route_table: Option<u32>,
}

/// Largest `buffer_bytes`: a connection may hold two buffers of it.
pub const MAX_BUFFER: u64 = 64 << 20;

impl Config {
    /// Parses and checks `text`, read from `file`.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let raw: Raw = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.into(),
            message: one_line(&e.to_string()),
        })?;
        let bad = |key: &str, expected: String| ConfigError::Value {
            file: file.into(),
            key: key.into(),
            expected,
        };
        let mode = match raw.mode.as_str() {
            "integrated" => Mode::Integrated,
            "gateway" => Mode::Gateway,
            m => return Err(bad("mode", format!("'integrated' or 'gateway', got '{m}'"))),
        };
        let gateway = match (mode, raw.role.as_deref(), raw.gateway) {
            (Mode::Integrated, None, None) => None,
            (Mode::Integrated, Some(_), _) => {
                return Err(bad("role", "no role in integrated mode".into()))
            }
            (Mode::Integrated, None, Some(_)) => {
                return Err(bad("gateway", "no [gateway] in integrated mode".into()))
            }
            (Mode::Gateway, role, g) => {
                let role = match role {
                    Some("a") => Role::A,
                    Some("b") => Role::B,
                    Some(r) => {
                        return Err(bad(
                            "role",
                            format!("'a' (near the clients) or 'b' (near the servers), got '{r}'"),
                        ))
                    }
                    None => return Err(bad("role", "'a' or 'b' in gateway mode".into())),
                };
                let Some(g) = g else {
                    return Err(bad("gateway", "a [gateway] table in gateway mode".into()));
                };
                Some(gateway_section(g, role, file, &bad)?)
            }
        };
        let needs_port = !gateway.as_ref().is_some_and(|g| g.role == Role::B);
        let listen_port = match raw.listen_port {
            Some(0) => return Err(bad("listen_port", "a port from 1 to 65535".into())),
            Some(p) => p,
            None if needs_port => return Err(bad("listen_port", "a port from 1 to 65535".into())),
            None => 0,
        };
        let metrics = match raw.metrics {
            None => None,
            Some(s) if s.is_empty() => None,
            Some(s) => Some(s.parse().map_err(|_| {
                bad(
                    "metrics",
                    format!("an address and port such as 127.0.0.1:9470, got '{s}'"),
                )
            })?),
        };
        let max_connections = raw.max_connections.unwrap_or(256);
        if !(1..=100_000).contains(&max_connections) {
            return Err(bad(
                "max_connections",
                format!("1 to 100000, got {max_connections}"),
            ));
        }
        let buffer_bytes = raw.buffer_bytes.unwrap_or(256 << 10);
        if !(1024..=MAX_BUFFER).contains(&buffer_bytes) {
            return Err(bad(
                "buffer_bytes",
                format!("1024 to {MAX_BUFFER}, got {buffer_bytes}"),
            ));
        }
        let socket_buffer_bytes = raw.socket_buffer_bytes.unwrap_or(0);
        if socket_buffer_bytes > (1 << 30) {
            return Err(bad(
                "socket_buffer_bytes",
                format!(
                    "0 (kernel default) to {}, got {socket_buffer_bytes}",
                    1u64 << 30
                ),
            ));
        }
        let cc = |key: &str, v: Option<String>| -> Result<Option<String>, ConfigError> {
            match v {
                None => Ok(None),
                Some(s) if s.is_empty() => Ok(None),
                Some(s)
                    if s.len() < 16
                        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                {
                    Ok(Some(s))
                }
                Some(s) => Err(bad(
                    key,
                    format!("a kernel congestion control name such as cubic, got '{s}'"),
                )),
            }
        };
        let server_congestion = cc("server_congestion", raw.server_congestion)?;
        let client_congestion = cc("client_congestion", raw.client_congestion)?;
        let log = match raw.log.as_deref().unwrap_or("info") {
            "error" => LogLevel::Error,
            "warn" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            l => return Err(bad("log", format!("error, warn, info or debug, got '{l}'"))),
        };
        let matching = Match::parse(&raw.matching, listen_port, &bad)?;
        let memory_limit = memory_budget::parse_limit(raw.memory_limit.as_ref())
            .map_err(|e| bad("memory_limit", e))?;
        memory_budget::check(
            max_connections as usize,
            buffer_bytes as usize,
            memory_limit,
        )
        .map_err(|e| bad("memory_limit", e))?;
        let nft = raw.nft.unwrap_or(RawNft {
            table: None,
            mark: None,
            route_table: None,
        });
        let table = nft.table.unwrap_or_else(|| "hetpath_pep".into());
        if table.is_empty()
            || table.len() > 32
            || !table
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(bad(
                "nft.table",
                format!("a name of letters, digits and '_' (up to 32), got '{table}'"),
            ));
        }
        let mark = nft.mark.unwrap_or(0x4850);
        if mark == 0 {
            return Err(bad("nft.mark", "a non-zero firewall mark".into()));
        }
        let route_table = nft.route_table.unwrap_or(4850);
        if route_table == 0 || (253..=255).contains(&route_table) {
            return Err(bad(
                "nft.route_table",
                format!("a routing table other than 0 and 253-255, got {route_table}"),
            ));
        }
        let idle_timeout = duration(
            "idle_timeout",
            raw.idle_timeout.as_deref(),
            DEFAULT_IDLE_TIMEOUT,
            IDLE_TIMEOUT_RANGE,
            &bad,
        )?;
        let max_connections_per_source = match raw.max_connections_per_source {
            None => DEFAULT_PER_SOURCE.min(max_connections),
            Some(n) if (1..=max_connections).contains(&n) => n,
            Some(n) => {
                return Err(bad(
                    "max_connections_per_source",
                    format!("1 to max_connections ({max_connections}), got {n}"),
                ))
            }
        };
        Ok(Config {
            mode,
            listen_port,
            metrics,
            max_connections: max_connections as usize,
            buffer_bytes: buffer_bytes as usize,
            socket_buffer_bytes: socket_buffer_bytes as usize,
            server_congestion,
            client_congestion,
            log,
            matching,
            nft: Nft {
                table,
                mark,
                route_table,
            },
            gateway,
            memory_limit,
            idle_timeout,
            max_connections_per_source: max_connections_per_source as usize,
        })
    }
}

/// `idle_timeout` when not given: RFC 5382 REQ-5's floor for a NAT's established-TCP
/// idle timeout (2 h 4 min), so the PEP never cuts an idle connection that a conforming
/// NAT on the same path would keep; an operator short of slots sets less.
pub const DEFAULT_IDLE_TIMEOUT: &str = "124min";
const IDLE_TIMEOUT_RANGE: (Dur, Dur) = (Dur::from_secs(1), Dur::from_secs(24 * 3600));

/// `max_connections_per_source` when not given (capped at `max_connections`): a host's
/// browser keeps about six connections per server and a few dozen in all, so 64 leaves
/// room for a small network behind one address while at least four sources share the
/// default cap of 256.
pub const DEFAULT_PER_SOURCE: u64 = 64;

/// Checks `[gateway]`.
fn gateway_section(
    g: RawGateway,
    role: Role,
    file: &str,
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<GatewaySection, ConfigError> {
    let addr = |key: &str, s: &str| -> Result<SocketAddrV4, ConfigError> {
        s.parse().map_err(|_| {
            bad(
                key,
                format!("an IPv4 address and port such as 192.0.2.1:4850, got '{s}'"),
            )
        })
    };
    let peer = addr("gateway.peer", &g.peer)?;
    let listen = addr("gateway.listen", &g.listen)?;
    if peer.port() == 0 || peer.ip().is_unspecified() {
        return Err(bad(
            "gateway.peer",
            format!("the other gateway's address and a non-zero port, got '{peer}'"),
        ));
    }
    if g.key_file.is_empty() {
        return Err(bad("gateway.key_file", "a key file's path".into()));
    }
    let key_file = Path::new(file)
        .parent()
        .unwrap_or(Path::new(""))
        .join(&g.key_file);
    let aead_name = g.aead.as_deref().unwrap_or("chacha20-poly1305");
    let aead = Aead::parse(aead_name).ok_or_else(|| {
        bad(
            "gateway.aead",
            format!("'chacha20-poly1305' or 'aes-256-gcm', got '{aead_name}'"),
        )
    })?;
    let max_datagram = g.max_datagram.unwrap_or(1472);
    if !(576..=65_507).contains(&max_datagram) {
        return Err(bad(
            "gateway.max_datagram",
            format!(
                "576 to 65507 bytes of UDP payload (1472 fits a 1500-byte MTU), got {max_datagram}"
            ),
        ));
    }
    let ms = |key: &str, v: Option<u64>, default: u64, lo: u64, hi: u64| {
        let v = v.unwrap_or(default);
        if (lo..=hi).contains(&v) {
            Ok(Dur::from_millis(v))
        } else {
            Err(bad(key, format!("{lo} to {hi} milliseconds, got {v}")))
        }
    };
    let keepalive = ms("gateway.keepalive_ms", g.keepalive_ms, 1000, 10, 60_000)?;
    let peer_timeout = ms(
        "gateway.peer_timeout_ms",
        g.peer_timeout_ms,
        30_000,
        1000,
        3_600_000,
    )?;
    if peer_timeout <= keepalive {
        return Err(bad(
            "gateway.peer_timeout_ms",
            "more than keepalive_ms".into(),
        ));
    }
    let connect_timeout = ms(
        "gateway.connect_timeout_ms",
        g.connect_timeout_ms,
        20_000,
        100,
        600_000,
    )?;
    let rate_bps = match g.rate_bps.unwrap_or(0) {
        0 => None,
        r if (64_000..=100_000_000_000).contains(&r) => Some(r),
        r => {
            return Err(bad(
                "gateway.rate_bps",
                format!("0 (unshaped) or 64000 to 100000000000 bits per second, got {r}"),
            ))
        }
    };
    let rtt = ms("gateway.rtt_ms", g.rtt_ms, 600, 1, 10_000)?;
    let rekey_after = duration(
        "gateway.rekey_after",
        g.rekey_after.as_deref(),
        DEFAULT_REKEY_AFTER,
        REKEY_AFTER_RANGE,
        bad,
    )?;
    let (cc, tcp) = satellite_stack(
        g.congestion,
        g.tcp,
        g.pacing.as_deref(),
        max_datagram as usize,
        rate_bps,
        file,
        bad,
    )?;
    Ok(GatewaySection {
        rate_bps,
        rtt,
        cc,
        tcp,
        role,
        peer,
        listen,
        key_file,
        aead,
        max_datagram: max_datagram as usize,
        keepalive,
        peer_timeout,
        rekey_after,
        connect_timeout,
    })
}

/// `gateway.rekey_after` when not given, and its range.
pub const DEFAULT_REKEY_AFTER: &str = "2min";
const REKEY_AFTER_RANGE: (Dur, Dur) = (Dur::from_secs(5), Dur::from_secs(24 * 3600));

/// A duration key with a unit ("2min", "30s"), parsed as a scenario's are.
fn duration(
    key: &str,
    v: Option<&str>,
    default: &str,
    (lo, hi): (Dur, Dur),
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Dur, ConfigError> {
    let s = v.unwrap_or(default);
    let expect = || {
        format!(
            "a duration with a unit (ms, s, min) from {}s to {}min, such as \"{default}\", got '{s}'",
            lo.0 / 1_000_000_000,
            hi.0 / 60_000_000_000
        )
    };
    let Ok(hetpath_sim::units::Duration(d)) = s.parse() else {
        return Err(bad(key, expect()));
    };
    if d < lo || d > hi {
        return Err(bad(key, expect()));
    }
    Ok(d)
}

/// The satellite leg's controller and TCP settings, resolved as the scenario loader
/// resolves a stack (`hetpath_sim::scenario::tcp::resolve`: the keys over a profile over
/// the RFC defaults; a controller may imply its paper's profile), then fitted to the
/// gateway: the MSS follows `max_datagram`, and pacing is `pacing` if given, else the
/// stack's, else one window per RTT for Hybla and Linux's ratios for the others.
fn satellite_stack(
    congestion: Option<CcSpec>,
    tcp: Option<TcpSpec>,
    pacing: Option<&str>,
    max_datagram: usize,
    rate_bps: Option<u64>,
    file: &str,
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(Algorithm, TcpConfig), ConfigError> {
    let mut own = tcp.unwrap_or_default();
    if own.mss.is_some() {
        return Err(bad(
            "gateway.tcp.mss",
            "no mss: it follows gateway.max_datagram".into(),
        ));
    }
    own.mss = Some(super::gateway_types::mss_for(max_datagram));
    let spec = congestion.unwrap_or_else(|| CcSpec::Name("hybla".into()));
    // satpep by name alone paces at the shaper's rate.
    let satpep = matches!(&spec, CcSpec::Name(n) if n == "satpep");
    let named = if satpep {
        CcSpec::Name("newreno".into())
    } else {
        spec
    };
    // Linux's defaults unless a profile is named (`"rfc"`: the RFC defaults) or the
    // controller brings its paper's (tcp-radio): on a GEO hop with 0.5% loss they carry
    // Hybla at twice the rate of the RFC defaults (docs/live.md).
    let general = TcpSpec {
        profile: (own.profile.is_none() && profiles::implied_by(named.name()).is_none())
            .then(|| DEFAULT_PROFILE.to_string()),
        ..TcpSpec::default()
    };
    let stack = hetpath_sim::scenario::tcp::resolve(&general, &own, Some(&named), "hybla")
        .map_err(|e| {
            let key = match e.key.strip_prefix("cc") {
                Some(rest) => format!("gateway.congestion{rest}"),
                None => format!("gateway.{}", e.key),
            };
            ConfigError::Key {
                file: file.into(),
                key,
                message: e.message,
            }
        })?;
    let cc = match (satpep, rate_bps) {
        (true, Some(rate_bps)) => Algorithm::Satpep(SatpepConfig { rate_bps }),
        _ => stack.cc,
    };
    if rate_bps.is_none() && NEEDS_RATE.contains(&cc.name()) {
        return Err(bad(
            "gateway.rate_bps",
            format!(
                "the satellite link's rate for congestion = '{}' (it watches or paces at it)",
                cc.name()
            ),
        ));
    }
    let mut tcp = stack.tcp;
    if tcp.ilc.is_some() {
        return Err(bad(
            "gateway.tcp.ilc",
            "none: no State Manager answers ILC-TCP's question on a gateway".into(),
        ));
    }
    tcp.pacing = match pacing {
        Some("hybla") => Some(Pacing::HYBLA),
        Some("linux") => Some(Pacing::LINUX),
        Some("off") => None,
        Some(p) => {
            return Err(bad(
                "gateway.pacing",
                format!(
                    "'hybla' (one window per RTT), 'linux' (Linux's fq ratios) or 'off', got '{p}'"
                ),
            ))
        }
        None => tcp.pacing.or(Some(match cc {
            Algorithm::Hybla(_) => Pacing::HYBLA,
            _ => Pacing::LINUX,
        })),
    };
    Ok((cc, tcp))
}

/// toml's messages span lines (a caret under the source); the first and last lines carry
/// the position and the reason.
fn one_line(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.as_slice() {
        [] => "invalid TOML".into(),
        [one] => (*one).into(),
        [first, .., last] => format!("{first}: {last}"),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
