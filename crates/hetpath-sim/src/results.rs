//! What a run produces: the summary (per flow, per link) and columnar time series that
//! the Python layer turns into DataFrames.
//!
//! These types are the result schema, defined once: the summary's keys are their serde
//! names, the series' columns are listed by `FlowSeries::columns` and
//! `LinkSeries::columns`, and `schema()` gathers them for the Python layer
//! (`hetpath._core.schema()`), which keeps no copies.

use crate::ids::DirId;
use crate::link::{LinkDir, LinkParams, LinkStats};
use hetpath_proto::tcp::ConnReport;
use hetpath_proto::{Dur, Time};
use serde::Serialize;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// A web flow's completed pages (`PageResult`); `None` for other flows.
    pub pages: Option<u64>,
    /// The mean of those pages' `time_s`; `None` if none completed or not a web flow.
    pub page_time_mean_s: Option<f64>,
}

/// One completed page of a web flow (`[flow.web]`, `traffic::web`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PageResult {
    pub flow: String,
    /// Its index in the flow, from 0.
    pub page: u64,
    /// When its first request was issued, from the run's start.
    pub start_s: f64,
    /// Download time: from the first request (a connection opened for it included) to
    /// the last byte of its last object.
    pub time_s: f64,
    /// The main object and the in-line objects.
    pub objects: u64,
    /// Their bytes (HTTP payload).
    pub bytes: u64,
    /// Retransmission timeouts of the flow's server-side connections during the page.
    pub timeouts: u64,
    /// IP bytes the browser's node transmitted during the page (all its packets).
    pub up_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkResult {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    /// Fraction of the run during which the transmitter was sending.
    pub utilization: f64,
    #[serde(flatten)]
    pub stats: LinkStats,
}

impl LinkResult {
    /// The row of a direction from `from` to `to` whose transmitter was busy for `busy`
    /// of a run `span_s` seconds long (a simulated run, or a live one).
    pub fn new(
        params: &LinkParams,
        from: &str,
        to: &str,
        stats: LinkStats,
        busy: Dur,
        span_s: f64,
    ) -> LinkResult {
        LinkResult {
            name: params.name.clone(),
            from: from.to_string(),
            to: to.to_string(),
            rate_bps: params.rate_bps,
            utilization: if span_s > 0.0 {
                (busy.as_secs_f64() / span_s).min(1.0)
            } else {
                0.0
            },
            stats,
        }
    }
}

/// What a node dropped itself, where no link lost the packet: one row per node, in file
/// order. A link's own losses are in its `LinkResult`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeResult {
    pub name: String,
    /// Packets whose TTL ran out here (a path longer than the TTL allows, a loop).
    pub ttl_drops: u64,
    /// Packets this node had no route for (a mobile host between stations, a machine
    /// sending where no link leads).
    pub no_route_drops: u64,
    /// Packets addressed to this node that no machine there took (a segment for a
    /// connection its host no longer has: no RST is modelled).
    pub unclaimed_drops: u64,
}

/// One leg of a flow: a TCP connection that carries the flow's data over part of its path
/// (`sim/legs.rs`). A flow between two hosts has one; each split PEP on its path adds one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LegResult {
    pub flow: String,
    /// Its place on the path, from 0 at the flow's source.
    pub leg: u32,
    /// The nodes that send and receive on it.
    pub from: String,
    pub to: String,
    /// Its controller.
    pub cc: String,
    /// The leg that crosses the flow's slowest link direction (the first such leg).
    pub bottleneck: bool,
    /// The slowest link direction it crosses, bits per second (0 if it crosses none).
    pub min_rate_bps: u64,
    pub bytes_acked: u64,
    /// Smoothed RTT at the end of the run; `None` if it never measured one.
    pub srtt_s: Option<f64>,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub freezes: u64,
}

/// One counter of a machine placed on a node (a PEP, a router, a State Manager), in the
/// long form: one row per counter.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MachineResult {
    pub node: String,
    /// Its kind (`split-pep`, `xcp-router`, `state-manager`, ...).
    pub machine: String,
    pub counter: String,
    pub value: u64,
}

/// One counter of a link direction's link layer (an ESW link: `esw_link.rs`), in the
/// long form: one row per counter. Plain IP links have none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkCounterResult {
    pub link: String,
    pub from: String,
    pub to: String,
    /// The link layer (`esw`, or `802.11` for a WLAN station, `to` being `medium`).
    pub layer: String,
    pub counter: String,
    pub value: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// Every node's own drops (TTL, no route), in file order.
    pub nodes: Vec<NodeResult>,
    /// The counters of link layers below IP (ESW cells and ARQ), per direction.
    pub link_counters: Vec<LinkCounterResult>,
    /// Every flow's legs, flow by flow, in path order.
    pub legs: Vec<LegResult>,
    /// Every web flow's completed pages, flow by flow.
    pub pages: Vec<PageResult>,
    /// The counters of the machines placed on nodes, in placement order.
    pub machines: Vec<MachineResult>,
}

impl Summary {
    /// The summary as JSON: the form every front end reads (NaN never occurs in it).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a summary always serialises")
    }
}

/// A record's keys in field order, read off its serde form.
fn keys_of<T: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
        _ => unreachable!("records serialise as maps"),
    }
}

/// The result schema: the keys of the summary and of each kind of record in it, and the
/// columns of both time series, each in output order.
pub fn schema() -> Vec<(&'static str, Vec<String>)> {
    let columns =
        |cols: &[(&'static str, Column<'_>)]| cols.iter().map(|c| c.0.to_string()).collect();
    let empty = Series::default();
    vec![
        ("summary", keys_of::<Summary>()),
        ("flow", keys_of::<FlowResult>()),
        ("page", keys_of::<PageResult>()),
        ("link", keys_of::<LinkResult>()),
        ("node", keys_of::<NodeResult>()),
        ("link_counter", keys_of::<LinkCounterResult>()),
        ("leg", keys_of::<LegResult>()),
        ("machine", keys_of::<MachineResult>()),
        ("flow_series", columns(&empty.flows.columns())),
        ("link_series", columns(&empty.links.columns())),
    ]
}

/// One column of a time series, borrowed. Ids are resolved to names by the front end:
/// a flow id to the flow's name; a link-direction id to its link's name, `from` and `to`.
pub enum Column<'a> {
    F64(&'a [f64]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    Flow(&'a [u32]),
    Link(&'a [u32]),
    LinkFrom(&'a [u32]),
    LinkTo(&'a [u32]),
}

/// Flow time series, one row per leg of each flow per sample (one leg per flow unless a
/// PEP splits it; see `LegResult`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub leg: Vec<u32>,
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

impl FlowSeries {
    /// Every column, in output order: the one list of the flow series' columns.
    pub fn columns(&self) -> [(&'static str, Column<'_>); 9] {
        [
            ("time_s", Column::F64(&self.time_s)),
            ("flow", Column::Flow(&self.flow)),
            ("leg", Column::U32(&self.leg)),
            ("cwnd_bytes", Column::U64(&self.cwnd_bytes)),
            ("ssthresh_bytes", Column::F64(&self.ssthresh_bytes)),
            ("srtt_s", Column::F64(&self.srtt_s)),
            ("rto_s", Column::F64(&self.rto_s)),
            ("in_flight_bytes", Column::U64(&self.in_flight_bytes)),
            ("bytes_delivered", Column::U64(&self.bytes_delivered)),
        ]
    }
}

impl LinkSeries {
    /// Every column, in output order: the one list of the link series' columns.
    pub fn columns(&self) -> [(&'static str, Column<'_>); 7] {
        [
            ("time_s", Column::F64(&self.time_s)),
            ("link", Column::Link(&self.link)),
            ("from", Column::LinkFrom(&self.link)),
            ("to", Column::LinkTo(&self.link)),
            ("queue_pkts", Column::U64(&self.queue_pkts)),
            ("queue_bytes", Column::U64(&self.queue_bytes)),
            ("tx_bytes", Column::U64(&self.tx_bytes)),
        ]
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub flows: FlowSeries,
    pub links: LinkSeries,
}

impl Series {
    /// One sample of leg `leg` of a flow; `c` is `None` for a flow without a TCP sender
    /// (the ideal protocol), whose TCP columns are then 0 or NaN.
    pub fn push_flow(
        &mut self,
        now: Time,
        flow: usize,
        leg: usize,
        c: Option<&ConnReport>,
        delivered: u64,
    ) {
        let s = &mut self.flows;
        let secs = |d: Option<Dur>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        s.time_s.push(sample_time(now));
        s.flow.push(flow as u32);
        s.leg.push(leg as u32);
        s.cwnd_bytes.push(c.map_or(0, |c| c.cwnd_bytes));
        s.ssthresh_bytes.push(
            c.and_then(|c| c.ssthresh_bytes)
                .map_or(f64::NAN, |v| v as f64),
        );
        s.srtt_s.push(secs(c.and_then(|c| c.srtt)));
        s.rto_s.push(secs(c.map(|c| c.rto)));
        s.in_flight_bytes.push(c.map_or(0, |c| c.in_flight_bytes));
        s.bytes_delivered.push(delivered);
    }

    /// A link direction's row; `queued` is its interface queue in packets (a WLAN's is the
    /// medium's, not the `LinkDir`'s).
    pub fn push_link(&mut self, now: Time, link: DirId, l: &LinkDir, queued: usize) {
        let s = &mut self.links;
        s.time_s.push(sample_time(now));
        s.link.push(link.0);
        s.queue_pkts.push(queued as u64);
        s.queue_bytes.push(l.queue_bytes());
        s.tx_bytes.push(l.stats.tx_bytes);
    }
}

/// A sample's time in seconds, the double nearest the exact decimal (0.3, not the
/// 0.30000000000000004 that scaling by 1e-9 gives), so samples sit on their grid.
pub fn sample_time(t: Time) -> f64 {
    t.since(Time::ZERO).as_nanos() as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_the_fields_and_a_link_reports_its_counters_flat() {
        let flow = keys_of::<FlowResult>();
        let has = |keys: &[String], k: &str| keys.iter().any(|x| x == k);
        assert_eq!(flow[0], "name");
        assert!(has(&flow, "sender_done_s") && has(&flow, "freezes"));
        let link = keys_of::<LinkResult>();
        for k in ["drops", "max_queue_bytes", "tx_bytes", "lost_packets"] {
            assert!(has(&link, k), "{k} missing from {link:?}");
        }
        assert!(!has(&link, "stats") && !has(&link, "busy"));
        assert_eq!(
            keys_of::<Summary>().last().map(String::as_str),
            Some("machines")
        );
    }

    #[test]
    fn the_json_summary_has_exactly_the_schema_keys() {
        let s = Summary {
            flows: vec![FlowResult::default()],
            pages: vec![PageResult::default()],
            links: vec![LinkResult::default()],
            nodes: vec![NodeResult::default()],
            legs: vec![LegResult::default()],
            machines: vec![MachineResult::default()],
            ..Summary::default()
        };
        let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        let keys =
            |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v), keys_of::<Summary>());
        assert_eq!(keys(&v["flows"][0]), keys_of::<FlowResult>());
        assert_eq!(keys(&v["pages"][0]), keys_of::<PageResult>());
        assert_eq!(keys(&v["links"][0]), keys_of::<LinkResult>());
        assert_eq!(keys(&v["nodes"][0]), keys_of::<NodeResult>());
        assert_eq!(keys(&v["legs"][0]), keys_of::<LegResult>());
        assert_eq!(keys(&v["machines"][0]), keys_of::<MachineResult>());
    }
}
