//! VCP end host (stub: replaced by the XCP implementation).
use super::{AckSample, CcConfig, CongestionControl, CongestionEvent};

#[derive(Debug)]
pub struct Vcp {
    cwnd: u64,
}

impl Vcp {
    pub fn new(cfg: CcConfig) -> Vcp {
        Vcp { cwnd: cfg.initial_window }
    }
}

impl CongestionControl for Vcp {
    fn name(&self) -> &'static str {
        "vcp"
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
