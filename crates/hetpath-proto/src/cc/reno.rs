//! Placeholder until the real controller lands.
use super::*;
#[derive(Debug)]
pub struct Reno(NewReno);
impl Reno { pub fn new(cfg: CcConfig) -> Reno { Reno(NewReno::new(cfg)) } }
impl CongestionControl for Reno {
    fn name(&self) -> &'static str { "reno" }
    fn cwnd(&self) -> u64 { self.0.cwnd() }
    fn ssthresh(&self) -> u64 { self.0.ssthresh() }
    fn on_ack(&mut self, a: &AckSample) { self.0.on_ack(a) }
    fn on_congestion_event(&mut self, e: &CongestionEvent) { self.0.on_congestion_event(e) }
    fn on_rto(&mut self, e: &CongestionEvent) { self.0.on_rto(e) }
}
