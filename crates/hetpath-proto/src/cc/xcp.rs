//! XCP end host (stub: replaced by the XCP implementation).
use super::{AckSample, CcConfig, CongestionControl, CongestionEvent};

#[derive(Debug)]
pub struct Xcp {
    cwnd: u64,
}

impl Xcp {
    pub fn new(cfg: CcConfig) -> Xcp {
        Xcp { cwnd: cfg.initial_window }
    }
    pub fn pep(cfg: CcConfig) -> Xcp {
        Xcp::new(cfg)
    }
}

impl CongestionControl for Xcp {
    fn name(&self) -> &'static str {
        "xcp"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn on_ack(&mut self, _ack: &AckSample) {}
    fn on_congestion_event(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent) {}
}
