//! The legs of a flow: every TCP connection that sends the flow's data over part of its
//! path. A flow between two hosts has one leg; a transparent split PEP on the path
//! (PEPsal, RAPPEP) ends one leg and opens the next under the same addresses and ports,
//! so a flow's legs are the connections, on any machine, whose local end is the client's
//! and whose remote end is the server's, in the order the path reaches their nodes.
//! They are read through the machine contract (`Machine::report_connections`), never
//! from a machine's insides.

use super::machines::Owned;
use super::{DirId, NodeId, Simulation};
use hetpath_proto::tcp::ConnReport;
use hetpath_proto::Endpoint;
use std::collections::HashMap;

/// One leg as it is now.
pub(super) struct Leg {
    /// The node that sends on it, and the node that receives (the next leg's sender, or
    /// the flow's destination).
    pub(super) from: NodeId,
    pub(super) to: NodeId,
    pub(super) report: ConnReport,
    /// The slowest link direction it crosses: the flow's bottleneck if any leg's is.
    pub(super) slowest: Option<DirId>,
}

/// Every machine's connections, by (local, remote), with the node each lives on.
pub(super) type Reports = HashMap<(Endpoint, Endpoint), Vec<(NodeId, ConnReport)>>;

impl Simulation {
    pub(super) fn connection_reports(&self) -> Reports {
        let mut all = Reports::new();
        let mut buf = Vec::new();
        for slot in &self.machines {
            match &slot.machine {
                Owned::Host(h) => {
                    hetpath_proto::machine::Machine::report_connections(&**h, &mut buf)
                }
                Owned::Other(m) => m.report_connections(&mut buf),
                Owned::Vacant => {}
            }
            for r in buf.drain(..) {
                all.entry((r.local, r.remote))
                    .or_default()
                    .push((slot.node, r));
            }
        }
        all
    }

    /// The legs of flow `i` in path order; empty for a flow with no TCP connection yet.
    pub(super) fn legs(&self, i: usize, reports: &Reports) -> Vec<Leg> {
        let f = &self.flows[i];
        let Some(client) = self.client_conn(f) else {
            return Vec::new();
        };
        let Some(senders) = reports.get(&(client.local(), client.remote())) else {
            return Vec::new();
        };
        // The path's link directions, and its nodes: node k forwards on direction k.
        let dirs = self.path(f.params.from, f.params.to);
        let nodes: Vec<NodeId> = std::iter::once(f.params.from)
            .chain(dirs.iter().map(|d| self.dirs[d.index()].params.to))
            .collect();
        let at = |n: NodeId| nodes.iter().position(|&p| p == n).unwrap_or(usize::MAX);
        let mut legs: Vec<(usize, NodeId, &ConnReport)> =
            senders.iter().map(|(n, r)| (at(*n), *n, r)).collect();
        legs.sort_by_key(|l| l.0);
        (0..legs.len())
            .map(|k| {
                let (start, from, report) = legs[k];
                let (end, to) = legs
                    .get(k + 1)
                    .map_or((dirs.len(), f.params.to), |l| (l.0, l.1));
                let slowest = dirs
                    .get(start..end.min(dirs.len()))
                    .unwrap_or_default()
                    .iter()
                    .copied()
                    .min_by_key(|d| self.dirs[d.index()].params.rate_bps);
                Leg {
                    from,
                    to,
                    report: report.clone(),
                    slowest,
                }
            })
            .collect()
    }
}
