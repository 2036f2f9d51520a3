//! Load-factor routers (stub: replaced by the VCP/MPCP implementation).
use super::{Iface, RateMeasure};
use crate::time::{Dur, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadConfig {
    /// Measurement interval t_rho.
    pub interval: Dur,
    pub measure: RateMeasure,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            interval: Dur::from_millis(200),
            measure: RateMeasure::Arrivals,
        }
    }
}

#[derive(Debug)]
pub struct LoadMonitor {
    cfg: LoadConfig,
}

impl LoadMonitor {
    pub fn new(cfg: LoadConfig) -> LoadMonitor {
        LoadMonitor { cfg }
    }
    pub fn on_packet(&mut self, _now: Time, _size: u32, _iface: &Iface) {
        let _ = self.cfg;
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }
    pub fn handle_timeout(&mut self, _now: Time, _iface: &Iface) {}
    /// The load factor of the last interval.
    pub fn load(&self) -> f64 {
        0.0
    }
}

/// The code of `bits` bits for load factor `lf`.
pub fn load_code(_lf: f64, _bits: u8) -> u8 {
    1
}

/// The load factor a code of `bits` bits stands for.
pub fn load_of(_code: u8, _bits: u8) -> f64 {
    0.0
}
