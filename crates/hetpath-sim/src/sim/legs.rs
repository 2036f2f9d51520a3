//! The legs of a flow: every TCP connection that sends the flow's data over part of its
//! path. A flow between two hosts has one, its client's connection. A transparent split
//! PEP on the path (PEPsal, RAPPEP) ends one leg and opens the next under the same
//! addresses and ports, so the other legs are the connections of the node's other
//! machines whose local end is the client's and whose remote end is the server's, in the
//! order the path reaches their nodes. They are read through the machine contract
//! (`Machine::report_connections`), never from a machine's insides.

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
}

/// The connections of every machine but the hosts, by (local, remote), with the node
/// each lives on. Empty unless a machine that holds connections (a PEP) is placed.
pub(super) type Reports = HashMap<(Endpoint, Endpoint), Vec<(NodeId, ConnReport)>>;

impl Simulation {
    pub(super) fn connection_reports(&self) -> Reports {
        let mut all = Reports::new();
        let mut buf = Vec::new();
        for slot in &self.machines {
            if let Owned::Other(m) = &slot.machine {
                m.report_connections(&mut buf);
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
        let mut senders = vec![(f.params.from, client.report())];
        if let Some(more) = reports.get(&(client.local(), client.remote())) {
            let dirs = self.path(f.params.from, f.params.to);
            let nodes: Vec<NodeId> = std::iter::once(f.params.from)
                .chain(dirs.iter().map(|d| self.dirs[d.index()].params.to))
                .collect();
            let mut more = more.clone();
            more.sort_by_key(|(n, _)| nodes.iter().position(|p| p == n).unwrap_or(usize::MAX));
            senders.extend(more);
        }
        // A leg ends where the next one starts, the last at the flow's destination.
        let ends: Vec<NodeId> = senders[1..]
            .iter()
            .map(|s| s.0)
            .chain([f.params.to])
            .collect();
        senders
            .into_iter()
            .zip(ends)
            .map(|((from, report), to)| Leg { from, to, report })
            .collect()
    }

    /// The slowest link direction a leg crosses.
    pub(super) fn slowest(&self, leg: &Leg) -> Option<DirId> {
        self.path(leg.from, leg.to)
            .into_iter()
            .min_by_key(|d| self.dirs[d.index()].params.rate_bps)
    }
}
