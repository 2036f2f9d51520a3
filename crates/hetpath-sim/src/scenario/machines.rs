//! The registry of machines: the `[[agent]]` tables, tagged by `kind`, each building one
//! machine of `hetpath_proto::agent` and placing it on its node; and the machines that
//! flows bring (the ideal protocol's two ends, ILC-TCP's State Manager). The simulator
//! drives them all through the machine contract and names none of them. Adding a machine
//! is a file in `hetpath_proto::agent` and a variant here (docs/architecture.md).

use super::apohn::ApohnSpec;
use super::cc::CcSpec;
use super::error::KeyError;
use super::spec::TcpSpec;
use super::tcp::resolve;
use crate::sim::{DirId, FlowId, LinkId, MachineId, NodeId, Simulation};
use crate::units::{Bytes, Duration};
use hetpath_proto::agent::{
    Collaboration, IdealSink, IdealSource, LiftBs, LiftBsConfig, RapRouter, RouterKind,
    SplitConfig, SplitPep, StateManager,
};
use hetpath_proto::cc::RapMonitor;
use hetpath_proto::rap::{LoadConfig, LoadMonitor, XcpRouter, XcpRouterConfig};
use hetpath_proto::tcp::TcpConfig;
use hetpath_proto::{Dur, Endpoint, Time};
use serde::Deserialize;
use std::collections::HashMap;

/// A PEP's buffer per direction and leg when the scenario gives none: Linux's default
/// maximum TCP receive buffer (net.ipv4.tcp_rmem, 6 MB), which PEPsal runs with.
pub const DEFAULT_PEP_BUFFER: u64 = 6 << 20;
/// A PEP's controller when the scenario gives none: Linux's default.
pub const DEFAULT_PEP_CC: &str = "cubic";

/// `[[agent]]`: a machine on a node.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AgentSpec {
    /// A transparent split-connection PEP (PEPsal; RAPPEP with `xcp-pep` / `mpcp-pep`).
    SplitPep(Box<SplitPepSpec>),
    /// XCP's router on the outgoing direction of `link`.
    XcpRouter(RouterSpec),
    /// A VCP or MPCP load-factor router on the outgoing direction of `link`.
    VcpRouter(LoadRouterSpec),
    MpcpRouter(LoadRouterSpec),
    /// LIFT's gateway half (seed 001): holds the mobile hosts' encrypted ACKs and freezes
    /// the fixed host when the satellite link is late. The flows' mobile ends run MH-LIFT
    /// (`[flow] ipsec = { lift = true }`).
    LiftBs(LiftBsSpec),
    /// APOHN (seed 000): the booster and SBP/STP on `sender`, LLE-TCP's agent on `bridge`
    /// and its sink on each of `stations`.
    Apohn(Box<ApohnSpec>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiftBsSpec {
    pub node: String,
    /// The local timer (default 0.98 s: seed 001 section IV, just under TCP's 1 s
    /// minimum RTO).
    pub timer: Option<Duration>,
    /// Behave as section III's intruder (forward every FrACK), to test MH-LIFT's
    /// self-protection (default false).
    #[serde(default)]
    pub compromised: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitPepSpec {
    /// A name of its own, so that a sweep can select it (`agent.<name>.`).
    pub name: Option<String>,
    pub node: String,
    /// The link it sends over, for a controller that reads a traffic monitor.
    pub link: Option<String>,
    /// The controller of its own connections (default cubic).
    pub cc: Option<CcSpec>,
    /// Bytes held per direction and leg.
    pub buffer: Option<Bytes>,
    /// TCP settings of its connections, over `[tcp]`.
    pub tcp: Option<TcpSpec>,
    /// The traffic monitor's control interval: with xcp-pep its fixed interval (default:
    /// the round trip over `link` for a full-size segment), with mpcp-pep its load-factor
    /// interval (default: VCP's t_rho, 200 ms).
    pub monitor_interval: Option<Duration>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    /// A name of its own, so that a sweep can select it (`agent.<name>.`).
    pub name: Option<String>,
    pub node: String,
    pub link: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadRouterSpec {
    /// A name of its own, so that a sweep can select it (`agent.<name>.`).
    pub name: Option<String>,
    pub node: String,
    pub link: String,
    /// The load-factor measurement interval.
    pub interval: Option<Duration>,
}

/// The names a scenario defines.
pub struct Names<'a> {
    pub nodes: &'a HashMap<String, NodeId>,
    pub links: &'a HashMap<String, LinkId>,
}

impl Names<'_> {
    fn node(&self, name: &str) -> Result<NodeId, KeyError> {
        self.node_at("node", name)
    }

    /// Node `name`, given under `key`.
    pub fn node_at(&self, key: &str, name: &str) -> Result<NodeId, KeyError> {
        self.nodes
            .get(name)
            .copied()
            .ok_or_else(|| KeyError::new(key, format!("unknown node '{name}'")))
    }

    /// The direction of link `name` that leaves `node`.
    fn leaving(
        &self,
        sim: &Simulation,
        name: &str,
        node: NodeId,
        node_name: &str,
    ) -> Result<DirId, KeyError> {
        let l = self
            .links
            .get(name)
            .ok_or_else(|| KeyError::new("link", format!("unknown link '{name}'")))?;
        sim.link_dirs(*l)
            .into_iter()
            .find(|&d| sim.dir(d).params.from == node)
            .ok_or_else(|| {
                KeyError::new(
                    "link",
                    format!("link '{name}' does not leave node '{node_name}'"),
                )
            })
    }
}

impl AgentSpec {
    /// A router's feedback kind (the flow controllers it serves) and the link direction
    /// it watches; `None` for the other agents. Call after `place` succeeded.
    pub fn router(
        &self,
        sim: &Simulation,
        names: &Names,
    ) -> Option<(&'static [&'static str], DirId)> {
        let (node, link, serves): (&str, &str, &'static [&'static str]) = match self {
            AgentSpec::XcpRouter(r) => (&r.node, &r.link, &["xcp"]),
            // one load-factor router serves both (`RouterKind::Load`)
            AgentSpec::VcpRouter(r) | AgentSpec::MpcpRouter(r) => {
                (&r.node, &r.link, &["vcp", "mpcp"])
            }
            _ => return None,
        };
        let n = names.node(node).ok()?;
        Some((serves, names.leaving(sim, link, n, node).ok()?))
    }

    /// The agent's own name, if it has one (split PEPs, routers, APOHN).
    pub fn name(&self) -> Option<&str> {
        match self {
            AgentSpec::SplitPep(s) => s.name.as_deref(),
            AgentSpec::XcpRouter(r) => r.name.as_deref(),
            AgentSpec::VcpRouter(r) | AgentSpec::MpcpRouter(r) => r.name.as_deref(),
            AgentSpec::Apohn(a) => a.name.as_deref(),
            AgentSpec::LiftBs(_) => None,
        }
    }

    /// The node of a split PEP, which ends the TCP connections it sees.
    pub fn split_pep_node(&self) -> Option<&str> {
        match self {
            AgentSpec::SplitPep(s) => Some(&s.node),
            _ => None,
        }
    }

    /// Builds the machine and places it. Errors name keys under the agent's table.
    pub fn place(
        &self,
        sim: &mut Simulation,
        names: &Names,
        tcp: &TcpSpec,
    ) -> Result<MachineId, KeyError> {
        match self {
            AgentSpec::SplitPep(s) => s.place(sim, names, tcp),
            AgentSpec::Apohn(a) => a.place(sim, names),
            AgentSpec::XcpRouter(r) => {
                let node = names.node(&r.node)?;
                let d = names.leaving(sim, &r.link, node, &r.node)?;
                let router =
                    RapRouter::new(RouterKind::Xcp(XcpRouter::new(XcpRouterConfig::default())));
                Ok(sim.add_machine(node, vec![d], Box::new(router)))
            }
            AgentSpec::LiftBs(l) => {
                let node = names.node(&l.node)?;
                let mut cfg = LiftBsConfig {
                    compromised: l.compromised,
                    ..LiftBsConfig::default()
                };
                if let Some(t) = l.timer {
                    if t.0 == Dur::ZERO {
                        return Err(KeyError::new("timer", "must be greater than zero"));
                    }
                    cfg.timer = t.0;
                }
                Ok(sim.add_machine(node, Vec::new(), Box::new(LiftBs::new(cfg))))
            }
            AgentSpec::VcpRouter(r) | AgentSpec::MpcpRouter(r) => {
                let node = names.node(&r.node)?;
                let d = names.leaving(sim, &r.link, node, &r.node)?;
                let mut cfg = LoadConfig::default();
                if let Some(i) = r.interval {
                    if i.0 == Dur::ZERO {
                        return Err(KeyError::new("interval", "must be greater than zero"));
                    }
                    cfg.interval = i.0;
                }
                let router = RapRouter::new(RouterKind::Load(LoadMonitor::new(cfg)));
                Ok(sim.add_machine(node, vec![d], Box::new(router)))
            }
        }
    }
}

impl SplitPepSpec {
    fn place(
        &self,
        sim: &mut Simulation,
        names: &Names,
        tcp: &TcpSpec,
    ) -> Result<MachineId, KeyError> {
        let node = names.node(&self.node)?;
        let iface = match &self.link {
            Some(l) => Some(names.leaving(sim, l, node, &self.node)?),
            None => None,
        };
        let own = self.tcp.clone().unwrap_or_default();
        let stack = resolve(tcp, &own, self.cc.as_ref(), DEFAULT_PEP_CC)?;
        let buffer = self.buffer.map_or(DEFAULT_PEP_BUFFER, |b| b.0);
        if buffer < stack.tcp.mss as u64 {
            return Err(KeyError::new(
                "buffer",
                format!(
                    "{buffer} bytes is less than one segment ({} bytes)",
                    stack.tcp.mss
                ),
            ));
        }
        let monitor = stack.cc.rap_monitor();
        let monitor_interval = match (monitor, iface) {
            (Some(_), None) => {
                return Err(KeyError::new(
                    "link",
                    format!(
                        "missing: cc = \"{}\" reads a traffic monitor on the link it sends over",
                        stack.cc.name()
                    ),
                ));
            }
            (Some(RapMonitor::Xcp), Some(d)) => self
                .monitor_interval
                .map_or_else(|| round_trip(sim, d, stack.tcp.mss), |i| i.0),
            (Some(RapMonitor::Load), Some(_)) => self
                .monitor_interval
                .map_or(LoadConfig::default().interval, |i| i.0),
            (None, _) if self.monitor_interval.is_some() => {
                return Err(KeyError::new(
                    "monitor_interval",
                    format!(
                        "cc = \"{}\" reads no traffic monitor; only xcp-pep and mpcp-pep have one",
                        stack.cc.name()
                    ),
                ));
            }
            (None, _) => Dur::ZERO,
        };
        if monitor.is_some() && monitor_interval == Dur::ZERO {
            return Err(KeyError::new(
                "monitor_interval",
                "must be greater than zero",
            ));
        }
        let pep = SplitPep::new(SplitConfig {
            // ILC-TCP's question needs a State Manager to answer it; a PEP's legs have
            // none (seed 002 section 3.1 freezes the mobile sender only).
            tcp: TcpConfig {
                ilc: None,
                ..stack.tcp
            },
            cc: stack.cc,
            buffer,
            monitor_interval,
        });
        Ok(sim.add_machine(node, iface.into_iter().collect(), Box::new(pep)))
    }
}

/// Round trip over link direction `d` and back for a full segment and a bare ACK.
fn round_trip(sim: &Simulation, d: DirId, mss: u32) -> Dur {
    let fwd = &sim.dir(d).params;
    let back = sim
        .dirs()
        .map(|(_, l)| &l.params)
        .find(|p| p.from == fwd.to && p.to == fwd.from)
        .unwrap_or(fwd);
    fwd.delay
        + back.delay
        + Dur::serialization(mss as u64 + 40, fwd.rate_bps)
        + Dur::serialization(40, back.rate_bps)
}

/// The ideal protocol's two ends for flow `f`: a source on `from` whose interface is its
/// first hop toward `to`, and a sink on `to`. The source needs a fixed first hop, which a
/// mobile host does not have.
pub fn place_ideal(
    sim: &mut Simulation,
    f: FlowId,
    from: NodeId,
    to: NodeId,
    mss: u32,
    size: u64,
    start: Time,
) -> Result<(), KeyError> {
    let first_hop = sim.first_hop(from, to).ok_or_else(|| {
        KeyError::new(
            "transport",
            "\"ideal\" needs a fixed first hop; it cannot start at the mobile host",
        )
    })?;
    let (src, dst) = ideal_endpoints(f, from, to);
    // A TCP flow between the same nodes must not get these ports: the hosts would take
    // the ideal flow's segments as that connection's.
    sim.reserve_port(from, src.port, dst);
    let source = IdealSource::new(src, dst, mss, size, start);
    let sink = IdealSink::new(src, dst, mss, size);
    let m = sim.add_machine(from, vec![first_hop], Box::new(source));
    sim.bind_stream(f, m);
    let m = sim.add_machine(to, Vec::new(), Box::new(sink));
    sim.bind_stream(f, m);
    Ok(())
}

/// An ideal flow's addresses and ports: the ports only tell apart the segments of ideal
/// flows between the same two nodes.
fn ideal_endpoints(f: FlowId, from: NodeId, to: NodeId) -> (Endpoint, Endpoint) {
    let port = |base: u32| (base + f.0 % 25_000) as u16;
    (
        Endpoint {
            addr: crate::sim::node_addr(from),
            port: port(40_000),
        },
        Endpoint {
            addr: crate::sim::node_addr(to),
            port: port(5_000),
        },
    )
}

/// ILC-TCP's State Managers: one per node whose flows ask one, in the mode they ask.
#[derive(Default)]
pub struct StateManagers {
    placed: HashMap<NodeId, Collaboration>,
}

impl StateManagers {
    /// Makes sure `node` has a State Manager in `mode`; a node has one.
    pub fn ensure(
        &mut self,
        sim: &mut Simulation,
        node: NodeId,
        mode: Collaboration,
    ) -> Result<(), KeyError> {
        match self.placed.get(&node) {
            Some(&m) if m == mode => Ok(()),
            Some(&m) => {
                let key = |c: Collaboration| match c {
                    Collaboration::LinkOnly => "link-only",
                    Collaboration::LinkIp => "link-ip",
                };
                Err(KeyError::new(
                    "tcp.ilc",
                    format!(
                        "'{}' here, but another flow from this node asks for '{}'; a node has \
                         one State Manager",
                        key(mode),
                        key(m)
                    ),
                ))
            }
            None => {
                // The node's layers are all up when the run starts (seed 002 Figure 7).
                let sm = StateManager::new(mode, true, true);
                sim.add_machine(node, Vec::new(), Box::new(sm));
                self.placed.insert(node, mode);
                Ok(())
            }
        }
    }
}
