//! RAPPEP's traffic monitor (RTM, seed 004 section III-B) on a gateway's own output, for
//! the satellite leg's xcp-pep and mpcp-pep controllers: they take no feedback from the
//! wire but from a monitor of the PEP's outgoing link. In the simulator that is
//! `SplitPep`'s monitor on its interface; here the link is the gateway's shaper
//! (`rate_bps`), which knows the capacity, what it sent and what waits, so the monitor
//! sees the same `Iface` a simulated link would show it. As in `SplitPep`: the load
//! monitor counts every datagram that leaves and hands its load factor to a connection
//! on each ACK; XCP's controllers stamp each data segment as it leaves and the feedback
//! is applied when an ACK covers that segment, as an echo would be.

use super::frame::ConnId;
use hetpath_proto::cc::{Algorithm, RapMonitor};
use hetpath_proto::packet::{TcpFlags, TcpSegment, XcpHeader};
use hetpath_proto::rap::{
    Feedback, Iface, LoadConfig, LoadMonitor, RateMeasure, XcpRouter, XcpRouterConfig,
};
use hetpath_proto::tcp::Connection;
use hetpath_proto::time::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};

/// What XCP-PEP's senders ask for: as much as the monitor will give (`SplitPep`'s).
const UNLIMITED_DEMAND: i64 = i64::MAX / 4;

enum Kind {
    Xcp(XcpRouter),
    Load(LoadMonitor),
}

pub struct Monitor {
    kind: Kind,
    /// XCP-PEP's fixed control interval: the satellite leg's round trip.
    interval: Dur,
    /// Per connection, the feedback of each data segment by its end sequence number.
    pending: BTreeMap<ConnId, VecDeque<(u64, i64)>>,
}

impl Monitor {
    /// The monitor `cc` needs, if any.
    pub fn new(cc: &Algorithm, interval: Dur) -> Option<Monitor> {
        let kind = match cc.rap_monitor()? {
            RapMonitor::Xcp => Kind::Xcp(XcpRouter::new(XcpRouterConfig {
                measure: RateMeasure::Departures,
                fixed_interval: Some(interval),
                ..Default::default()
            })),
            RapMonitor::Load => Kind::Load(LoadMonitor::new(LoadConfig {
                measure: RateMeasure::Departures,
                ..Default::default()
            })),
        };
        Some(Monitor {
            kind,
            interval,
            pending: BTreeMap::new(),
        })
    }

    /// A datagram of `size` bytes (on the wire) left.
    pub fn on_datagram(&mut self, now: Time, size: u32, iface: &Iface) {
        if let Kind::Load(m) = &mut self.kind {
            m.on_packet(now, size, iface);
        }
    }

    /// `conn` sent `seg` (its sender's window `cwnd`) in `size` bytes on the wire.
    pub fn on_segment(
        &mut self,
        now: Time,
        conn: ConnId,
        seg: &TcpSegment,
        cwnd: u64,
        size: u32,
        iface: &Iface,
    ) {
        let Kind::Xcp(router) = &mut self.kind else {
            return;
        };
        if seg.len == 0 {
            return;
        }
        let mut h = XcpHeader {
            cwnd,
            rtt: self.interval,
            feedback: UNLIMITED_DEMAND,
        };
        router.on_packet(now, size, &mut h, iface);
        let end = seg.seq + seg.len as u64;
        let pending = self.pending.entry(conn).or_default();
        // A retransmission replaces nothing: feedback follows the first copy.
        if pending.back().is_none_or(|&(e, _)| e < end) {
            pending.push_back((end, h.feedback));
        }
    }

    /// An ACK `seg` arrived for `conn`: its controller hears the monitor.
    pub fn on_ack(&mut self, now: Time, conn: ConnId, seg: &TcpSegment, tcp: &mut Connection) {
        if !seg.flags.contains(TcpFlags::ACK) {
            return;
        }
        match &self.kind {
            Kind::Xcp(_) => {
                let Some(pending) = self.pending.get_mut(&conn) else {
                    return;
                };
                let mut sum = 0i64;
                while pending.front().is_some_and(|&(end, _)| end <= seg.ack) {
                    sum = sum.saturating_add(pending.pop_front().expect("front").1);
                }
                if sum != 0 {
                    tcp.handle_feedback(now, Feedback::Window(sum));
                }
            }
            Kind::Load(m) => tcp.handle_feedback(now, Feedback::Load(m.load())),
        }
    }

    pub fn forget(&mut self, conn: ConnId) {
        self.pending.remove(&conn);
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        match &self.kind {
            Kind::Xcp(r) => r.poll_timeout(),
            Kind::Load(m) => m.poll_timeout(),
        }
    }

    pub fn handle_timeout(&mut self, now: Time, iface: &Iface) {
        match &mut self.kind {
            Kind::Xcp(r) => r.handle_timeout(now, iface),
            Kind::Load(m) => m.handle_timeout(now, iface),
        }
    }
}
