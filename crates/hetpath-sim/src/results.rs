//! What a run produces: the summary (per flow, per link) and columnar time series that
//! the Python layer turns into DataFrames.

use crate::ids::DirId;
use crate::link::{LinkDir, LinkStats};
use hetpath_proto::tcp::Connection;
use hetpath_proto::Time;

#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    pub name: String,
    pub cc: String,
    pub from: String,
    pub to: String,
    pub start_s: f64,
    pub size_bytes: Option<u64>,
    /// In-order payload bytes received by the destination application.
    pub bytes_delivered: u64,
    /// bytes_delivered * 8 over the time from the flow's start to its completion (or to
    /// the end of the run if it did not complete).
    pub goodput_bps: f64,
    /// From the flow's start until the receiver had every byte; `None` if unfinished.
    pub completion_s: Option<f64>,
    /// From the flow's start until the sender had every byte acknowledged: by the
    /// receiver, or by a PEP that split the connection; `None` if unfinished.
    pub sender_done_s: Option<f64>,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Timeouts answered with FREEZE by ILC-TCP's State Manager.
    pub freezes: u64,
    pub aborted: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinkResult {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    /// Fraction of the run during which the transmitter was sending.
    pub utilization: f64,
    pub stats: LinkStats,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
}

/// Flow time series, one row per flow per sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd_bytes: Vec<u64>,
    /// NaN while ssthresh is still "arbitrarily high".
    pub ssthresh_bytes: Vec<f64>,
    pub srtt_s: Vec<f64>,
    pub rto_s: Vec<f64>,
    pub in_flight_bytes: Vec<u64>,
    pub bytes_delivered: Vec<u64>,
}

/// Link time series, one row per link direction per sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkSeries {
    pub time_s: Vec<f64>,
    pub link: Vec<u32>,
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    pub tx_bytes: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub flows: FlowSeries,
    pub links: LinkSeries,
}

impl Series {
    /// One sample of a flow; `c` is `None` for a flow without a TCP sender (the ideal
    /// protocol), whose TCP columns are then 0 or NaN.
    pub fn push_flow(&mut self, now: Time, flow: usize, c: Option<&Connection>, delivered: u64) {
        let s = &mut self.flows;
        let tx = c.map(Connection::sender);
        s.time_s.push(now.as_secs_f64());
        s.flow.push(flow as u32);
        s.cwnd_bytes.push(tx.map_or(0, |t| t.cwnd()));
        s.ssthresh_bytes.push(match tx.map(|t| t.ssthresh()) {
            Some(v) if v != u64::MAX => v as f64,
            _ => f64::NAN,
        });
        s.srtt_s.push(
            tx.and_then(|t| t.rtt().srtt())
                .map_or(f64::NAN, |d| d.as_secs_f64()),
        );
        s.rto_s
            .push(tx.map_or(f64::NAN, |t| t.rtt().rto().as_secs_f64()));
        s.in_flight_bytes.push(tx.map_or(0, |t| t.pipe()));
        s.bytes_delivered.push(delivered);
    }

    pub fn push_link(&mut self, now: Time, link: DirId, l: &LinkDir) {
        let s = &mut self.links;
        s.time_s.push(now.as_secs_f64());
        s.link.push(link.0);
        s.queue_pkts.push(l.queue_len() as u64);
        s.queue_bytes.push(l.queue_bytes());
        s.tx_bytes.push(l.stats.tx_bytes);
    }
}
