//! What a run reports: a time-series sample of every flow and link direction, and the
//! summary at the end.

use super::flows::{Flow, FlowTransport};
use super::machines::Owned;
use super::{DirId, Simulation};
use crate::results::{
    FlowResult, LegResult, LinkCounterResult, LinkResult, MachineResult, NodeResult, PageResult,
    Summary,
};
use hetpath_proto::tcp::State;
use hetpath_proto::Time;

impl Simulation {
    pub(super) fn sample(&mut self, now: Time) {
        let mut series = std::mem::take(&mut self.series);
        let reports = self.connection_reports();
        for (i, f) in self.flows.iter().enumerate() {
            if !f.started {
                continue;
            }
            let delivered = self.delivered(f);
            if reports.is_empty() {
                // No PEP anywhere: the client's connection is the only leg.
                let report = self.client_conn(f).map(|c| c.report());
                series.push_flow(now, i, 0, report.as_ref(), delivered);
                continue;
            }
            let legs = self.legs(i, &reports);
            if legs.is_empty() {
                series.push_flow(now, i, 0, None, delivered);
            }
            for (k, leg) in legs.iter().enumerate() {
                series.push_flow(now, i, k, Some(&leg.report), delivered);
            }
        }
        for (i, d) in self.dirs.iter().enumerate() {
            let id = DirId(i as u32);
            series.push_link(now, id, d, self.queue_len(id));
        }
        self.series = series;
    }

    /// The counters of every machine but the hosts (whose connections are the flows and
    /// legs), through the contract.
    fn machine_results(&self) -> Vec<MachineResult> {
        let mut out = Vec::new();
        let mut counters = Vec::new();
        for slot in &self.machines {
            if let Owned::Other(m) = &slot.machine {
                m.counters(&mut counters);
                for (counter, value) in counters.drain(..) {
                    out.push(MachineResult {
                        node: self.node_name(slot.node).to_string(),
                        machine: m.kind().to_string(),
                        counter: counter.to_string(),
                        value,
                    });
                }
            }
        }
        out
    }

    /// Every node's own drops, in the order the nodes were added.
    fn node_results(&self) -> Vec<NodeResult> {
        self.nodes
            .iter()
            .map(|n| NodeResult {
                name: n.name.clone(),
                ttl_drops: n.ttl_drops,
                no_route_drops: n.no_route_drops,
                unclaimed_drops: n.unclaimed_drops,
            })
            .collect()
    }

    /// Every flow's legs, flow by flow, in path order.
    fn leg_results(&self) -> Vec<LegResult> {
        let reports = self.connection_reports();
        let mut out = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let legs = self.legs(i, &reports);
            // The slowest link each leg crosses; the bottleneck leg crosses the slowest.
            let rates: Vec<Option<u64>> = legs
                .iter()
                .map(|l| {
                    self.slowest(l)
                        .map(|d| self.dirs[d.index()].params.rate_bps)
                })
                .collect();
            let bottleneck = (0..legs.len())
                .filter_map(|k| rates[k].map(|r| (r, k)))
                .min()
                .map(|(_, k)| k);
            for (k, l) in legs.iter().enumerate() {
                let r = &l.report;
                out.push(LegResult {
                    flow: f.params.name.clone(),
                    leg: k as u32,
                    from: self.node_name(l.from).to_string(),
                    to: self.node_name(l.to).to_string(),
                    cc: r.cc.to_string(),
                    bottleneck: bottleneck == Some(k),
                    min_rate_bps: rates[k].unwrap_or(0),
                    bytes_acked: r.bytes_acked,
                    srtt_s: r.srtt.map(|d| d.as_secs_f64()),
                    retransmissions: r.stats.retransmissions,
                    fast_retransmits: r.stats.fast_retransmits,
                    timeouts: r.stats.timeouts,
                    freezes: r.stats.freezes,
                });
            }
        }
        out
    }

    /// Per-flow and per-link results at the current time.
    pub fn summary(&self, wall_time_s: f64) -> Summary {
        let now = self.q.now();
        let flows = self
            .flows
            .iter()
            .map(|f| self.flow_result(f, now))
            .collect();
        let pages: Vec<PageResult> = self
            .flows
            .iter()
            .filter_map(|f| f.web.as_ref())
            .flat_map(|w| w.pages.iter().cloned())
            .collect();
        let span = now.as_secs_f64();
        let links = self
            .dirs()
            .map(|(d, l)| {
                let busy = self.esw_stats(d).map_or(l.stats.busy, |s| s.busy);
                LinkResult::new(
                    &l.params,
                    self.node_name(l.params.from),
                    self.node_name(l.params.to),
                    l.stats,
                    busy,
                    span,
                )
            })
            .collect();
        let link_counters = self
            .dirs()
            .filter_map(|(d, l)| Some((l, self.esw_stats(d)?)))
            .flat_map(|(l, s)| {
                s.counters().map(|(counter, value)| LinkCounterResult {
                    link: l.params.name.clone(),
                    from: self.node_name(l.params.from).to_string(),
                    to: self.node_name(l.params.to).to_string(),
                    layer: "esw".into(),
                    counter: counter.into(),
                    value,
                })
            })
            .chain(self.wlan_stats().into_iter().flat_map(|(wlan, node, s)| {
                s.counters().map(|(counter, value)| LinkCounterResult {
                    link: wlan.to_string(),
                    from: self.node_name(node).to_string(),
                    to: "medium".into(),
                    layer: "802.11".into(),
                    counter: counter.into(),
                    value,
                })
            }))
            .collect();
        Summary {
            scenario: self.name.clone(),
            seed: self.seed,
            sim_time_s: span,
            wall_time_s,
            events: self.q.executed(),
            flows,
            links,
            nodes: self.node_results(),
            link_counters,
            legs: self.leg_results(),
            pages,
            machines: self.machine_results(),
        }
    }

    fn flow_result(&self, f: &Flow, now: Time) -> FlowResult {
        let p = &f.params;
        let client = self.client_conn(f);
        let delivered = self.delivered(f);
        let end = f.completion.unwrap_or(now);
        let elapsed = end.since(p.start).as_secs_f64();
        let mut stats = client.map(|c| c.report().stats).unwrap_or_default();
        if let FlowTransport::Machines = p.transport {
            stats.retransmissions = f.lost;
        }
        // A web flow's data senders are all its server-side connections.
        let web = f.web.as_ref().map(|w| {
            let n = w.pages.len();
            let mean = (n > 0).then(|| w.pages.iter().map(|p| p.time_s).sum::<f64>() / n as f64);
            (n as u64, mean)
        });
        if let Some(s) = self.web_stats(f) {
            stats = s;
        }
        FlowResult {
            name: p.name.clone(),
            cc: p.label.clone(),
            from: self.node_name(p.from).to_string(),
            to: self.node_name(p.to).to_string(),
            start_s: p.start.as_secs_f64(),
            size_bytes: p.size,
            bytes_delivered: delivered,
            goodput_bps: if elapsed > 0.0 {
                delivered as f64 * 8.0 / elapsed
            } else {
                0.0
            },
            completion_s: f.completion.map(|t| t.since(p.start).as_secs_f64()),
            sender_done_s: f.sender_done.map(|t| t.since(p.start).as_secs_f64()),
            retransmissions: stats.retransmissions,
            fast_retransmits: stats.fast_retransmits,
            timeouts: stats.timeouts,
            freezes: stats.freezes,
            aborted: f.aborted || client.is_some_and(|c| c.state() == State::Aborted),
            pages: web.map(|w| w.0),
            page_time_mean_s: web.and_then(|w| w.1),
        }
    }
}
