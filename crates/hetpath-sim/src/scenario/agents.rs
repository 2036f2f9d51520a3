//! Builds the `[[agent]]` tables: split-connection PEPs and congestion-feedback routers
//! placed on nodes (see `hetpath_proto::agent`).

use super::build::tcp_config;
use super::error::ScenarioError;
use super::spec::{AgentKind, AgentSpec, ScenarioFile};
use crate::sim::Simulation;
use hetpath_proto::agent::{Agent, RapRouter, RouterKind, SplitConfig, SplitPep};
use hetpath_proto::cc;
use hetpath_proto::rap::{LoadConfig, LoadMonitor, XcpRouter, XcpRouterConfig};
use hetpath_proto::Dur;
use std::collections::HashMap;

/// A PEP's buffer per direction and leg when the scenario gives none: Linux's default
/// maximum TCP receive buffer (net.ipv4.tcp_rmem, 6 MB), which PEPsal runs with.
pub const DEFAULT_PEP_BUFFER: u64 = 6 << 20;
/// A PEP's controller when the scenario gives none: Linux's default.
pub const DEFAULT_PEP_CC: &str = "cubic";

/// Controllers whose PEP reads a traffic monitor on the watched link (RAPPEP).
const MONITORED: [&str; 2] = ["xcp-pep", "mpcp-pep"];

pub fn build(
    s: &ScenarioFile,
    file: &str,
    sim: &mut Simulation,
    nodes: &HashMap<String, usize>,
    link_names: &HashMap<String, usize>,
) -> Result<(), ScenarioError> {
    for (i, a) in s.agents.iter().enumerate() {
        let at = format!("agent[{i}]");
        let err = |key: &str, msg: String| ScenarioError::new(file, format!("{at}.{key}"), msg);
        let node = *nodes
            .get(&a.node)
            .ok_or_else(|| err("node", format!("unknown node '{}'", a.node)))?;
        let iface = match &a.link {
            None => None,
            Some(name) => {
                let k = *link_names
                    .get(name)
                    .ok_or_else(|| err("link", format!("unknown link '{name}'")))?;
                // Scenario links come first, each as its a->b then b->a direction.
                let dir = [2 * k, 2 * k + 1]
                    .into_iter()
                    .find(|&d| sim.links()[d].params.from == node);
                Some(dir.ok_or_else(|| {
                    err(
                        "link",
                        format!("link '{name}' does not leave node '{}'", a.node),
                    )
                })?)
            }
        };
        let only_pep = |key: &str, set: bool| {
            if set && a.kind != AgentKind::SplitPep {
                return Err(err(key, "applies to kind = \"split-pep\" only".into()));
            }
            Ok(())
        };
        only_pep("cc", a.cc.is_some())?;
        only_pep("buffer", a.buffer.is_some())?;
        only_pep("tcp", a.tcp.is_some())?;
        only_pep("monitor_interval", a.monitor_interval.is_some())?;
        if a.interval.is_some() && !matches!(a.kind, AgentKind::VcpRouter | AgentKind::MpcpRouter) {
            return Err(err(
                "interval",
                "applies to kind = \"vcp-router\" or \"mpcp-router\" only".into(),
            ));
        }
        let agent: Box<dyn Agent> = match a.kind {
            AgentKind::SplitPep => {
                Box::new(split_pep(s, a, sim, iface).map_err(|(k, m)| err(k, m))?)
            }
            router => {
                if iface.is_none() {
                    return Err(err(
                        "link",
                        "missing: a router agent watches one link".into(),
                    ));
                }
                let kind = match router {
                    AgentKind::XcpRouter => {
                        RouterKind::Xcp(XcpRouter::new(XcpRouterConfig::default()))
                    }
                    _ => {
                        let mut cfg = LoadConfig::default();
                        if let Some(d) = a.interval {
                            if d.0 == Dur::ZERO {
                                return Err(err("interval", "must be greater than zero".into()));
                            }
                            cfg.interval = d.0;
                        }
                        RouterKind::Load(LoadMonitor::new(cfg))
                    }
                };
                Box::new(RapRouter::new(kind))
            }
        };
        sim.add_agent(node, iface, agent);
    }
    Ok(())
}

fn split_pep(
    s: &ScenarioFile,
    a: &AgentSpec,
    sim: &Simulation,
    iface: Option<usize>,
) -> Result<SplitPep, (&'static str, String)> {
    let cc = a.cc.clone().unwrap_or_else(|| DEFAULT_PEP_CC.into());
    if cc::by_name(&cc, cc::CcConfig::new(1460)).is_none() {
        return Err((
            "cc",
            format!(
                "unknown controller '{cc}'; expected one of {}",
                cc::NAMES.join(", ")
            ),
        ));
    }
    let spec = s.tcp.overridden_by(&a.tcp.unwrap_or_default());
    let tcp = tcp_config(&spec).map_err(|(k, m)| ("tcp", format!("{k}: {m}")))?;
    let buffer = a.buffer.map_or(DEFAULT_PEP_BUFFER, |b| b.0);
    if buffer < tcp.mss as u64 {
        return Err((
            "buffer",
            format!(
                "{buffer} bytes is less than one segment ({} bytes)",
                tcp.mss
            ),
        ));
    }
    let monitor_interval = match (MONITORED.contains(&cc.as_str()), iface) {
        (true, None) => {
            return Err((
                "link",
                format!("missing: cc = \"{cc}\" reads a traffic monitor on the link it sends over"),
            ));
        }
        (true, Some(l)) => a
            .monitor_interval
            .map_or_else(|| round_trip(sim, l, tcp.mss), |d| d.0),
        (false, _) => a.monitor_interval.map_or(Dur::ZERO, |d| d.0),
    };
    if monitor_interval == Dur::ZERO && cc == "xcp-pep" {
        return Err(("monitor_interval", "must be greater than zero".into()));
    }
    SplitPep::new(SplitConfig {
        tcp,
        cc,
        buffer,
        monitor_interval,
    })
    .map_err(|m| ("cc", m))
}

/// Round trip over link direction `l` and back for a full segment and a bare ACK.
fn round_trip(sim: &Simulation, l: usize, mss: u32) -> Dur {
    let fwd = &sim.links()[l].params;
    let back = sim
        .links()
        .iter()
        .find(|d| d.params.from == fwd.to && d.params.to == fwd.from)
        .map_or(fwd, |d| &d.params);
    fwd.delay
        + back.delay
        + Dur::serialization(mss as u64 + 40, fwd.rate_bps)
        + Dur::serialization(40, back.rate_bps)
}
