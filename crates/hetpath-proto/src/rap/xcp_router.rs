//! XCP router (stub: replaced by the XCP implementation).
use super::{Iface, RateMeasure};
use crate::packet::XcpHeader;
use crate::time::{Dur, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XcpRouterConfig {
    pub alpha: f64,
    pub beta: f64,
    pub measure: RateMeasure,
    /// RAPPEP: a fixed control interval (the satellite leg's RTT) instead of the average
    /// RTT carried in the headers.
    pub fixed_interval: Option<Dur>,
}

impl Default for XcpRouterConfig {
    fn default() -> Self {
        XcpRouterConfig {
            alpha: 0.4,
            beta: 0.226,
            measure: RateMeasure::Arrivals,
            fixed_interval: None,
        }
    }
}

#[derive(Debug)]
pub struct XcpRouter {
    cfg: XcpRouterConfig,
}

impl XcpRouter {
    pub fn new(cfg: XcpRouterConfig) -> XcpRouter {
        XcpRouter { cfg }
    }
    /// A packet carrying `h` is offered to the interface: learn from it and lower
    /// `h.feedback` to this router's allocation.
    pub fn on_packet(&mut self, _now: Time, _size: u32, _h: &mut XcpHeader, _iface: &Iface) {
        let _ = self.cfg;
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }
    pub fn handle_timeout(&mut self, _now: Time, _iface: &Iface) {}
}
