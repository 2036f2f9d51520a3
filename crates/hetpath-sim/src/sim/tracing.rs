//! Filling the event trace (`crate::trace`) from what machines report: which flow an
//! event or a lost packet belongs to, and the window of the connection it concerns. Only
//! called while the trace is on.

use super::machines::Owned;
use super::{FlowId, MachineId, Simulation};
use crate::trace::TraceEvent;
use hetpath_proto::machine::Event;
use hetpath_proto::tcp::ConnReport;
use hetpath_proto::{ConnId, Packet};

impl Simulation {
    /// Records what machine `m` reported about `flow`, if known. A TCP event of a
    /// connection no flow maps (a PEP's leg) is attributed by its endpoints, and every
    /// TCP event carries its connection's window after it.
    pub(super) fn trace_event(&mut self, m: MachineId, ev: &Event, flow: Option<FlowId>) {
        if self.trace.is_none() {
            return;
        }
        let (what, conn) = match *ev {
            Event::Accepted { .. } => (TraceEvent::Accepted, None),
            Event::Delivered { bytes, .. } => (TraceEvent::Delivered(bytes), None),
            Event::Acked { bytes, .. } => (TraceEvent::Acked(bytes), None),
            Event::Lost { .. } => (TraceEvent::IdealLoss, None),
            Event::Tcp { conn, event } => (TraceEvent::Tcp(event), Some(conn)),
            Event::Signal(_) => return, // recorded where it is published
        };
        let report = conn.and_then(|c| self.conn_report(m, c));
        let flow = flow.or_else(|| {
            let r = report.as_ref()?;
            self.trace_flows.get(&(r.local, r.remote)).copied()
        });
        let node = self.machines[m.index()].node;
        let window = report.map(|r| (r.cwnd_bytes, r.ssthresh_bytes));
        if let Some(t) = &mut self.trace {
            t.push(self.q.now(), what, (node, flow, None), window);
        }
    }

    /// The report of connection `c` of machine `m` (`Machine::report_connections` lists
    /// them in `ConnId` order).
    fn conn_report(&self, m: MachineId, c: ConnId) -> Option<ConnReport> {
        match &self.machines[m.index()].machine {
            Owned::Host(h) => Some(h.connection(c).report()),
            Owned::Other(x) => {
                let mut all = Vec::new();
                x.report_connections(&mut all);
                all.into_iter().nth(c.index())
            }
            Owned::Vacant => None,
        }
    }

    /// The flow a TCP packet belongs to, by its endpoints (an ESP packet has none).
    pub(super) fn flow_of(&self, p: &Packet) -> Option<FlowId> {
        self.trace_flows.get(&p.tcp_endpoints()?).copied()
    }
}
