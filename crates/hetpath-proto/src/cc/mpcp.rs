//! MPCP end host (stub: replaced by the XCP implementation).
use super::{AckSample, CcConfig, CongestionControl, CongestionEvent};

#[derive(Debug)]
pub struct Mpcp {
    cwnd: u64,
}

impl Mpcp {
    pub fn new(cfg: CcConfig) -> Mpcp {
        Mpcp { cwnd: cfg.initial_window }
    }
    pub fn pep(cfg: CcConfig) -> Mpcp {
        Mpcp::new(cfg)
    }
}

impl CongestionControl for Mpcp {
    fn name(&self) -> &'static str {
        "mpcp"
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
