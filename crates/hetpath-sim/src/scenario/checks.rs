//! Checks across tables, once every node, link, flow and agent is placed: settings each
//! valid on its own that together would run and report nothing meaningful (an input
//! error), and ones that run but probably not as meant (a warning).

use super::error::{KeyError, ScenarioError, ScenarioWarning};
use super::machines::{AgentSpec, Names};
use super::spec::ScenarioFile;
use crate::sim::{DirId, NodeId, Simulation};
use crate::units::QueueLimit;
use hetpath_proto::packet::EspSizes;
use std::collections::HashMap;

/// Bytes of an IPv4 header, of a TCP header without options, and of the most options a
/// SYN or SYN-ACK carries (MSS 4, window scale 3 and a pad, SACK-permitted 2, timestamps
/// 10: RFC 9293 section 3.1, RFC 7323, RFC 2018).
const IP_HEADER: u32 = 20;
const TCP_HEADER: u32 = 20;
const SYN_OPTIONS: u32 = 20;
/// The largest IPv4 datagram: the total length is 16 bits (RFC 791).
const MAX_DATAGRAM: u32 = 65_535;
/// The TTL every packet starts with (`Packet::new`): a route of more links delivers
/// nothing.
pub const IP_TTL: usize = hetpath_proto::packet::DEFAULT_TTL as usize;
/// Controllers that need a router's feedback on the path (guide §4.5).
const FEEDBACK: [&str; 3] = ["xcp", "vcp", "mpcp"];

/// What the checks need to know of one flow.
pub struct FlowFacts {
    /// Where it is in the file (`flow[0] 'f'`).
    pub place: String,
    pub from: NodeId,
    pub to: NodeId,
    /// TCP flows only.
    pub tcp: Option<TcpFacts>,
    /// IP bytes of its full-size data packet and of its SYN-ACK (the largest packet the
    /// way back needs), where the loader knows them (TCP and the ideal protocol).
    pub packets: Option<(u32, u32)>,
}

/// What the checks need to know of a TCP flow.
pub struct TcpFacts {
    pub cc: &'static str,
    /// A PEP on the path can read its segments (no ESP).
    pub readable: bool,
    /// Its receiver runs MH-LIFT (`ipsec.lift`).
    pub lift: bool,
    /// Its sender asks a State Manager (`tcp.ilc`).
    pub ilc: bool,
}

/// The IP sizes of a TCP flow's full-size segment and of a SYN-ACK, ESP's included;
/// a segment that would not fit an IPv4 datagram is an error (under `tcp.mss`).
pub fn tcp_packets(mss: u32, esp: Option<EspSizes>) -> Result<(u32, u32), KeyError> {
    let ip = |tcp: u32| match esp {
        None => IP_HEADER + tcp,
        Some(sizes) => IP_HEADER + sizes.len(tcp),
    };
    let data = ip(TCP_HEADER + mss);
    if data > MAX_DATAGRAM {
        return Err(KeyError::new(
            "tcp.mss",
            format!(
                "{mss} bytes of payload make {data}-byte packets with their headers and ESP's \
                 overhead, more than an IPv4 datagram's {MAX_DATAGRAM}"
            ),
        ));
    }
    Ok((data, ip(TCP_HEADER + SYN_OPTIONS)))
}

/// What would run but give wrong results: a router-assisted controller with no router
/// of its kind on the flow's path (its window would never open); a split PEP on a flow's
/// own end (it answers the sender itself, and nothing reaches the host); MH-LIFT with no
/// `lift-bs` between its ends (every ACK is held for a gateway that is not there).
pub fn agents(
    s: &ScenarioFile,
    file: &str,
    sim: &mut Simulation,
    names: &Names,
    flows: &[FlowFacts],
) -> Result<(), ScenarioError> {
    let routers: Vec<_> = s
        .agents
        .iter()
        .filter_map(|a| a.router(sim, names))
        .collect();
    for f in flows {
        let Some(tcp) = &f.tcp else { continue };
        if !FEEDBACK.contains(&tcp.cc) {
            continue;
        }
        let path = sim.path(f.from, f.to);
        if path.is_empty() {
            continue; // from a mobile host: no static path to check
        }
        if !routers
            .iter()
            .any(|(serves, d)| serves.contains(&tcp.cc) && path.contains(d))
        {
            let cc = tcp.cc;
            return Err(ScenarioError::new(
                file,
                format!("{}.cc", f.place),
                format!("cc = \"{cc}\" needs a {cc}-router agent on a link direction the flow's data crosses, and there is none on its path"),
            ));
        }
    }
    for (i, a) in s.agents.iter().enumerate() {
        let Some(node) = a.split_pep_node() else {
            continue;
        };
        let Some(&n) = names.nodes.get(node) else {
            continue;
        };
        let own_end = flows
            .iter()
            .find(|f| f.tcp.as_ref().is_some_and(|t| t.readable) && (f.from == n || f.to == n));
        if let Some(f) = own_end {
            let end = if f.from == n { "source" } else { "destination" };
            return Err(ScenarioError::new(
                file,
                format!("agent[{i}].node"),
                format!("a split-pep on '{node}', the {end} of {}, would end the flow's connection itself and deliver nothing to the host; place it on a node the flow passes through", f.place),
            ));
        }
    }
    lift(s, file, sim, names, flows)
}

/// A flow with `ipsec.lift` needs a `lift-bs` agent on a node its packets cross between
/// its two ends (seed 001 Fig. 1: the gateway before the satellite hop). Its receiver
/// holds every pure ACK for that gateway; without one the sender never hears an ACK and
/// the connection aborts.
fn lift(
    s: &ScenarioFile,
    file: &str,
    sim: &mut Simulation,
    names: &Names,
    flows: &[FlowFacts],
) -> Result<(), ScenarioError> {
    let gateways: Vec<(usize, NodeId)> = s
        .agents
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            AgentSpec::LiftBs(l) => names.nodes.get(&l.node).map(|&n| (i, n)),
            _ => None,
        })
        .collect();
    for f in flows {
        if !f.tcp.as_ref().is_some_and(|t| t.lift) {
            continue;
        }
        // The ACKs' way back, or (from a mobile host, which has no static route) the
        // data's way there.
        let mut path = sim.path(f.to, f.from);
        if path.is_empty() {
            path = sim.path(f.from, f.to);
        }
        let between: Vec<NodeId> = path
            .iter()
            .map(|&d| sim.dir(d).params.to)
            .filter(|&n| n != f.from && n != f.to)
            .collect();
        if path.is_empty() || gateways.iter().any(|(_, n)| between.contains(n)) {
            continue;
        }
        let crossed: Vec<&str> = between.iter().map(|&n| sim.node_name(n)).collect();
        let route = if crossed.is_empty() {
            "its ends are neighbours: no node lies between them".to_string()
        } else {
            format!(
                "its route crosses {}",
                crossed
                    .iter()
                    .take(8)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let misplaced = gateways
            .iter()
            .map(|&(i, n)| format!("agent[{i}] is on '{}'", sim.node_name(n)))
            .collect::<Vec<_>>();
        let found = if misplaced.is_empty() {
            "there is none".to_string()
        } else {
            format!("{}, not between them", misplaced.join(", "))
        };
        return Err(ScenarioError::new(
            file,
            format!("{}.ipsec.lift", f.place),
            format!(
                "MH-LIFT needs a lift-bs agent on a node between '{}' and '{}' ({route}); {found}: its ACKs would wait for a gateway that is not there",
                sim.node_name(f.from),
                sim.node_name(f.to)
            ),
        ));
    }
    Ok(())
}

/// ILC-TCP freezes the sender when its node's State Manager hears the link or IP layer
/// go down (seed 002 section 3.3). Only the mobile host's layers report (`[mobile]`), so
/// any other sender never freezes: it runs as standard TCP. A warning, not an error: a
/// `[tcp]` table sets it for every flow, mobile or not, and the results are standard
/// TCP's, honestly.
fn ilc(
    s: &ScenarioFile,
    file: &str,
    sim: &Simulation,
    flows: &[FlowFacts],
) -> Vec<ScenarioWarning> {
    let mobile = s.mobile.as_ref().map(|m| m.node.as_str());
    let mut out = Vec::new();
    for f in flows {
        if !f.tcp.as_ref().is_some_and(|t| t.ilc) {
            continue;
        }
        let sender = sim.node_name(f.from);
        if Some(sender) == mobile {
            continue;
        }
        let which = match mobile {
            Some(m) => format!("'{sender}' is not the mobile host ('{m}')"),
            None => "this scenario has no [mobile] host".to_string(),
        };
        out.push(ScenarioWarning::new(
            file,
            format!("{}.tcp.ilc", f.place),
            format!("ILC-TCP acts on the link and IP layers' reports, which only the mobile host makes, and {which}: this sender will never freeze and runs as standard TCP"),
        ));
    }
    out
}

/// An IP link's queue limited in bytes must hold the packets that cross it: a flow's full-size
/// data packet on its way there, the SYN-ACK on the way back. A smaller limit drops every
/// such packet, even on an idle link, and the flow delivers nothing.
pub fn queues(
    file: &str,
    sim: &mut Simulation,
    flows: &[FlowFacts],
    // The place of each direction of an IP [[link]] in the file.
    dir_places: &HashMap<DirId, String>,
) -> Result<(), ScenarioError> {
    for f in flows {
        let Some((data, ack)) = f.packets else {
            continue;
        };
        for (a, b, size, what) in [
            (f.from, f.to, data, "full-size data packet"),
            (f.to, f.from, ack, "SYN-ACK"),
        ] {
            for d in sim.path(a, b) {
                // A WLAN's, the mobile host's and an ESW link's queues count packets.
                let Some(place) = dir_places.get(&d) else {
                    continue;
                };
                let QueueLimit::Bytes(limit) = sim.dir(d).params.queue else {
                    continue;
                };
                if limit >= size as u64 {
                    continue;
                }
                return Err(ScenarioError::new(
                    file,
                    format!("{place}.queue"),
                    format!(
                        "{limit} B holds no {what} of {} ({size} B): each would be dropped, and the flow would deliver nothing; give at least {size}B, or a packet count",
                        f.place
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The warnings: ILC-TCP where it cannot act (`ilc`), and a flow whose route is longer
/// than IP's TTL, so that every packet is dropped on the way when its TTL runs out (the
/// run reports those drops).
pub fn warnings(
    s: &ScenarioFile,
    file: &str,
    sim: &mut Simulation,
    flows: &[FlowFacts],
) -> Vec<ScenarioWarning> {
    let mut out = ilc(s, file, sim, flows);
    for f in flows {
        for (a, b) in [(f.from, f.to), (f.to, f.from)] {
            let hops = sim.path(a, b).len();
            if hops > IP_TTL {
                out.push(ScenarioWarning::new(
                    file,
                    f.place.clone(),
                    format!(
                        "the route from '{}' to '{}' crosses {hops} links, more than IP's TTL of {IP_TTL}: every packet that way will be dropped when its TTL runs out",
                        sim.node_name(a),
                        sim.node_name(b)
                    ),
                ));
            }
        }
    }
    out
}
