//! What a run reports: a time-series sample of every flow and link direction, and the
//! summary at the end.

use super::flows::{Flow, FlowTransport};
use super::{DirId, Simulation};
use crate::results::{FlowResult, LinkResult, Summary};
use hetpath_proto::tcp::State;
use hetpath_proto::Time;

impl Simulation {
    pub(super) fn sample(&mut self, now: Time) {
        let mut series = std::mem::take(&mut self.series);
        for (i, f) in self.flows.iter().enumerate() {
            if f.started {
                series.push_flow(now, i, self.client_conn(f), self.delivered(f));
            }
        }
        for (i, d) in self.dirs.iter().enumerate() {
            series.push_link(now, DirId(i as u32), d);
        }
        self.series = series;
    }

    /// Per-flow and per-link results at the current time.
    pub fn summary(&self, wall_time_s: f64) -> Summary {
        let now = self.q.now();
        let flows = self
            .flows
            .iter()
            .map(|f| self.flow_result(f, now))
            .collect();
        let span = now.as_secs_f64();
        let links = self
            .dirs
            .iter()
            .map(|l| LinkResult {
                name: l.params.name.clone(),
                from: self.node_name(l.params.from).to_string(),
                to: self.node_name(l.params.to).to_string(),
                rate_bps: l.params.rate_bps,
                utilization: if span > 0.0 {
                    (l.stats.busy.as_secs_f64() / span).min(1.0)
                } else {
                    0.0
                },
                stats: l.stats,
            })
            .collect();
        Summary {
            scenario: self.name.clone(),
            seed: self.seed,
            sim_time_s: span,
            wall_time_s,
            events: self.q.executed(),
            flows,
            links,
        }
    }

    fn flow_result(&self, f: &Flow, now: Time) -> FlowResult {
        let p = &f.params;
        let client = self.client_conn(f);
        let delivered = self.delivered(f);
        let end = f.completion.unwrap_or(now);
        let elapsed = end.since(p.start).as_secs_f64();
        let mut stats = client.map(|c| *c.stats()).unwrap_or_default();
        if let FlowTransport::Machines = p.transport {
            stats.retransmissions = f.lost;
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
        }
    }
}
