//! The event trace of a run (`hetpath run --trace FILE`): what happened, when, where and
//! to which flow, as typed events. It is kept only when asked for (`Simulation::tracing`),
//! so a run without it pays one branch per event site.
//!
//! Sources: the machines' events through the contract (`machine::Event`: TCP state,
//! fast retransmits, timeouts, ILC-TCP freezes and restores, deliveries), the signals
//! published on a node (cross-layer: link and IP state, association, so handoffs), the
//! links (queue drops, channel and outage losses, a direction going down or up), and the
//! nodes (packets whose TTL ran out, or with no route on).

use crate::ids::{DirId, FlowId, NodeId};
use hetpath_proto::crosslayer::Signal;
use hetpath_proto::tcp;
use hetpath_proto::Time;

/// Why a link lost a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Its queue was full.
    Queue,
    /// The channel corrupted it.
    Channel,
    /// The direction went down while it was queued or on the wire.
    Outage,
}

/// Why a node dropped a packet itself, where no link lost it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeDrop {
    /// Its TTL ran out on the way through (RFC 791 section 3.2, "Time to Live").
    Ttl,
    /// The node had no route toward its destination.
    NoRoute,
    /// It was addressed to the node and no machine there took it (a segment for a
    /// connection the host no longer has, and no RST is modelled; a node without a host).
    Unclaimed,
}

/// One thing that happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TraceEvent {
    Tcp(tcp::Event),
    Accepted,
    /// The receiving application holds `bytes` in-order bytes (all it expected).
    Delivered(u64),
    /// The sender has `bytes` acknowledged (all it wrote).
    Acked(u64),
    /// The ideal protocol learnt of a loss.
    IdealLoss,
    Signal(Signal),
    Lost(Loss),
    /// A node dropped a packet (its `ttl_drops`, `no_route_drops` or `unclaimed_drops`).
    Dropped(NodeDrop),
    LinkDown,
    LinkUp,
}

impl TraceEvent {
    /// Its name in the trace file.
    pub fn name(&self) -> &'static str {
        use tcp::Event as T;
        match self {
            TraceEvent::Tcp(e) => match e {
                T::State(s) => match s {
                    tcp::State::SynSent => "tcp.state.syn_sent",
                    tcp::State::SynReceived => "tcp.state.syn_received",
                    tcp::State::Established => "tcp.state.established",
                    tcp::State::FinWait1 => "tcp.state.fin_wait_1",
                    tcp::State::FinWait2 => "tcp.state.fin_wait_2",
                    tcp::State::CloseWait => "tcp.state.close_wait",
                    tcp::State::Closing => "tcp.state.closing",
                    tcp::State::LastAck => "tcp.state.last_ack",
                    tcp::State::TimeWait => "tcp.state.time_wait",
                    tcp::State::Closed => "tcp.state.closed",
                    tcp::State::Aborted => "tcp.state.aborted",
                },
                T::ZeroWindowAck => "tcp.zero_window_ack",
                T::Retransmitted { timeout: false, .. } => "tcp.retransmit.recovery",
                T::Retransmitted { timeout: true, .. } => "tcp.retransmit.timeout",
                T::Connected => "tcp.connected",
                T::RecoveryStarted => "tcp.fast_retransmit",
                T::Timeout { .. } => "tcp.rto",
                T::PeerFinished => "tcp.peer_finished",
                T::Closed => "tcp.closed",
                T::Aborted => "tcp.aborted",
                T::WhatShouldTcpDo => "tcp.what_should_tcp_do",
                T::Frozen => "tcp.frozen",
                T::Restored => "tcp.restored",
            },
            TraceEvent::Accepted => "tcp.accepted",
            TraceEvent::Delivered(_) => "flow.delivered",
            TraceEvent::Acked(_) => "flow.acked",
            TraceEvent::IdealLoss => "ideal.loss",
            TraceEvent::Signal(s) => match s {
                Signal::LinkOk => "signal.link_ok",
                Signal::LinkNotOk => "signal.link_not_ok",
                Signal::IpOk => "signal.ip_ok",
                Signal::IpNotOk => "signal.ip_not_ok",
                Signal::Associated => "signal.associated",
                Signal::Disassociated => "signal.disassociated",
                Signal::WhatShouldTcpDo(_) => "signal.what_should_tcp_do",
                Signal::Advise(..) => "signal.advise",
                Signal::Restore(_) => "signal.restore",
            },
            TraceEvent::Lost(Loss::Queue) => "link.queue_drop",
            TraceEvent::Lost(Loss::Channel) => "link.channel_loss",
            TraceEvent::Lost(Loss::Outage) => "link.outage_loss",
            TraceEvent::Dropped(NodeDrop::Ttl) => "node.ttl_expired",
            TraceEvent::Dropped(NodeDrop::NoRoute) => "node.no_route",
            TraceEvent::Dropped(NodeDrop::Unclaimed) => "node.unclaimed",
            TraceEvent::LinkDown => "link.down",
            TraceEvent::LinkUp => "link.up",
        }
    }

    /// Its number, where it has one: a timeout's consecutive count, a retransmitted
    /// segment's first byte (offset from the start of the stream), delivered or
    /// acknowledged bytes.
    pub fn value(&self) -> Option<u64> {
        match *self {
            TraceEvent::Tcp(tcp::Event::Timeout { count }) => Some(count as u64),
            TraceEvent::Tcp(tcp::Event::Retransmitted { seq, .. }) => Some(seq),
            TraceEvent::Delivered(b) | TraceEvent::Acked(b) => Some(b),
            _ => None,
        }
    }
}

/// The trace, one column per field, one row per event in the order they happened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub time_s: Vec<f64>,
    pub event: Vec<&'static str>,
    pub node: Vec<NodeId>,
    pub flow: Vec<Option<FlowId>>,
    pub link: Vec<Option<DirId>>,
    pub value: Vec<Option<u64>>,
    /// For a TCP event: the connection's congestion window and ssthresh (`None` while
    /// still "arbitrarily high") just after it, so a loss response reads off the trace.
    pub cwnd_bytes: Vec<Option<u64>>,
    pub ssthresh_bytes: Vec<Option<u64>>,
}

impl Trace {
    /// Appends `ev`; `window` is a TCP event's (cwnd, ssthresh) just after it.
    pub fn push(
        &mut self,
        now: Time,
        ev: TraceEvent,
        (node, flow, link): (NodeId, Option<FlowId>, Option<DirId>),
        window: Option<(u64, Option<u64>)>,
    ) {
        self.time_s.push(now.as_secs_f64());
        self.event.push(ev.name());
        self.node.push(node);
        self.flow.push(flow);
        self.link.push(link);
        self.value.push(ev.value());
        self.cwnd_bytes.push(window.map(|w| w.0));
        self.ssthresh_bytes.push(window.and_then(|w| w.1));
    }

    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}
