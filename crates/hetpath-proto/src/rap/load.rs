//! Load-factor routers: VCP (Xia, Subramanian, Stoica, Kalyanaraman, "One More Bit Is
//! Enough", SIGCOMM 2005, section 3) and MPCP (Li and Yousefi'zadeh, CCR 39(5), 2009).
//!
//! Every interval t_rho a router computes the load factor of its outgoing link,
//!
//!   rho = (lambda + kappa * q) / (gamma * C * t_rho),
//!
//! with lambda the bytes offered to the queue during the interval (or, for RAPPEP's
//! traffic monitor, the bytes the interface sent: seed 004 section III-B), q the persistent
//! queue, kappa = 0.5 how fast it is drained, gamma = 0.98 the target utilisation and C the
//! capacity. t_rho is the span actually elapsed (the authors' ns-2 `vcp-queue.cc` divides
//! by `interval_end_ - interval_begin_`).
//!
//! Persistent queue: ns-2 `vcp-queue.cc` samples the queue every t_q = 10 ms, averages the
//! samples of an interval and smooths that average with an EWMA giving 1/4 to the newest
//! interval (`moving_avg_int(.., 2)`). We keep the EWMA but sample the queue at every
//! offered packet and once at the end of the interval, which needs no extra timer.
//!
//! Codes (`load_code`/`load_of`): 2 bits are VCP's (section 3): 01 low load (rho < 80%),
//! 10 high load (80% <= rho < 100%), 11 overload; 00 means "not VCP-capable". More bits
//! (MPCP's 2n) quantise rho uniformly in steps of 1.6 / 2^bits from 0 (code 1 is the
//! lowest step), the top code also taking everything above; MPCP's own table was not
//! reachable, so this is our choice: with that step 80% and 100% are level boundaries for
//! every n >= 2, so a level never straddles VCP's regions, and the top level starts at
//! 1.4 (n = 2) or 1.55 (n = 3).

use super::{Iface, RateMeasure};
use crate::time::{Dur, Time};

/// VCP's load-measurement interval t_rho (section 3; ns-2 `load_measurement_interval_`).
pub const T_RHO: Dur = Dur::from_millis(200);
/// Target utilisation gamma (section 3). ns-2 `vcp-queue.cc` uses 0.95.
pub const TARGET_UTILIZATION: f64 = 0.98;
/// Queue weight kappa_q (section 3; ns-2 `queue_weight_`).
pub const QUEUE_WEIGHT: f64 = 0.5;
/// EWMA gain of the newest interval's mean queue (ns-2 `moving_avg_int(.., 2)`).
pub const QUEUE_GAIN: f64 = 0.25;
/// Low load ends here (VCP section 3, ns-2 `LF_0`).
pub const LOW_LOAD_END: f64 = 0.8;
/// Overload starts here (VCP section 3, ns-2 `LF_1`).
pub const OVERLOAD: f64 = 1.0;
/// Multi-level codes (bits > 2) quantise [0, SPAN) into 2^bits equal steps (our choice).
pub const SPAN: f64 = 1.6;
/// Largest load factor the monitor reports (a zero-capacity link with traffic).
pub const MAX_LOAD: f64 = 1e6;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadConfig {
    /// Measurement interval t_rho.
    pub interval: Dur,
    pub measure: RateMeasure,
    /// Target utilisation gamma.
    pub target_utilization: f64,
    /// Persistent-queue weight kappa.
    pub queue_weight: f64,
    /// EWMA gain of each interval's mean queue in the persistent queue.
    pub queue_gain: f64,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            interval: T_RHO,
            measure: RateMeasure::Arrivals,
            target_utilization: TARGET_UTILIZATION,
            queue_weight: QUEUE_WEIGHT,
            queue_gain: QUEUE_GAIN,
        }
    }
}

#[derive(Debug)]
pub struct LoadMonitor {
    cfg: LoadConfig,
    /// Start of the current interval; `None` until the first packet.
    start: Option<Time>,
    /// Bytes offered during the current interval.
    offered: u64,
    /// `tx_bytes` of the interface when the interval began.
    tx_start: u64,
    /// Queue samples of the current interval.
    queue_sum: u128,
    queue_samples: u64,
    /// Persistent queue, bytes.
    queue: f64,
    load: f64,
}

impl LoadMonitor {
    pub fn new(cfg: LoadConfig) -> LoadMonitor {
        LoadMonitor {
            cfg,
            start: None,
            offered: 0,
            tx_start: 0,
            queue_sum: 0,
            queue_samples: 0,
            queue: 0.0,
            load: 0.0,
        }
    }

    /// A packet of `size` bytes is offered to the interface. The first one starts the
    /// first interval; one arriving after a missed deadline closes the interval first.
    pub fn on_packet(&mut self, now: Time, size: u32, iface: &Iface) {
        match self.deadline() {
            None => self.begin(now, iface),
            Some(d) if now >= d => self.close(now, iface),
            Some(_) => {}
        }
        self.offered = self.offered.saturating_add(size as u64);
        self.sample_queue(iface);
    }

    /// End of the current measurement interval.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadline()
    }

    /// Closes the interval if it is over; early calls are no-ops.
    pub fn handle_timeout(&mut self, now: Time, iface: &Iface) {
        if self.deadline().is_some_and(|d| now >= d) {
            self.close(now, iface);
        }
    }

    /// The load factor of the last completed interval (0 before the first one).
    pub fn load(&self) -> f64 {
        self.load
    }

    /// The persistent queue in bytes, as of the last completed interval.
    pub fn persistent_queue(&self) -> f64 {
        self.queue
    }

    fn deadline(&self) -> Option<Time> {
        self.start
            .map(|s| s + Dur(self.cfg.interval.as_nanos().max(1)))
    }

    fn begin(&mut self, now: Time, iface: &Iface) {
        self.start = Some(now);
        self.offered = 0;
        self.tx_start = iface.tx_bytes;
        self.queue_sum = 0;
        self.queue_samples = 0;
    }

    fn sample_queue(&mut self, iface: &Iface) {
        self.queue_sum += iface.queue_bytes as u128;
        self.queue_samples += 1;
    }

    /// Section 3.1: rho = (lambda + kappa * q) / (gamma * C * t_rho).
    fn close(&mut self, now: Time, iface: &Iface) {
        let elapsed = now.since(self.start.unwrap_or(now));
        self.sample_queue(iface);
        let mean = self.queue_sum as f64 / self.queue_samples as f64;
        let gain = finite_in(self.cfg.queue_gain, 0.0, 1.0);
        self.queue += gain * (mean - self.queue);
        let lambda = match self.cfg.measure {
            RateMeasure::Arrivals => self.offered,
            RateMeasure::Departures => iface.tx_bytes.saturating_sub(self.tx_start),
        };
        let demand = lambda as f64 + finite_in(self.cfg.queue_weight, 0.0, f64::MAX) * self.queue;
        let gamma = finite_in(self.cfg.target_utilization, 0.0, f64::MAX);
        let capacity = gamma * iface.rate_bps as f64 / 8.0 * elapsed.as_secs_f64();
        self.load = if capacity > 0.0 {
            (demand / capacity).min(MAX_LOAD)
        } else if demand > 0.0 {
            MAX_LOAD
        } else {
            0.0
        };
        self.begin(now, iface);
    }
}

/// `x` clamped to [lo, hi], with NaN taken as `lo`.
fn finite_in(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        lo
    } else {
        x.clamp(lo, hi)
    }
}

/// Number of usable codes of `bits` bits (code 0 is reserved).
fn levels(bits: u8) -> u32 {
    (1u32 << bits.min(8)) - 1
}

/// The code of `bits` bits for load factor `lf` (0, "not supported", only for bits = 0).
/// NaN is taken as the highest level, the cautious reading.
pub fn load_code(lf: f64, bits: u8) -> u8 {
    let bits = bits.min(8);
    if bits == 0 {
        return 0;
    }
    let top = levels(bits) as u8;
    if lf.is_nan() {
        return top;
    }
    if bits == 2 {
        return if lf < LOW_LOAD_END {
            1
        } else if lf < OVERLOAD {
            2
        } else {
            3
        };
    }
    // Step index floor(lf / (SPAN / 2^bits)); 1/SPAN = 0.625 is exact in binary.
    let step = (lf.max(0.0) * (1u32 << bits) as f64 * 0.625).floor();
    (step.min(top as f64 - 1.0) as u8) + 1
}

/// The load factor a code of `bits` bits stands for: the middle of its interval (VCP: 0.4,
/// 0.9 and 1.1 for low, high and overload). Code 0 ("not supported") and bits = 0 give NaN,
/// no reading; codes above the top level are read as the top level.
pub fn load_of(code: u8, bits: u8) -> f64 {
    let bits = bits.min(8);
    if code == 0 || bits == 0 {
        return f64::NAN;
    }
    let code = (code as u32).min(levels(bits));
    if bits == 2 {
        return [0.4, 0.9, 1.1][code as usize - 1];
    }
    (code as f64 - 0.5) * SPAN / (1u32 << bits) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn iface(queue_bytes: u64, tx_bytes: u64) -> Iface {
        Iface {
            rate_bps: 10_000_000,
            queue_bytes,
            tx_bytes,
            ..Iface::default()
        }
    }

    /// gamma * C * t_rho for 10 Mbit/s over 200 ms, in bytes.
    const CAP: f64 = 0.98 * 250_000.0;

    #[test]
    fn codes_round_trip_and_are_monotonic() {
        for bits in [2u8, 4, 6] {
            let top = (1u32 << bits) as u8 - 1;
            let mut last = f64::NEG_INFINITY;
            for code in 1..=top {
                let lf = load_of(code, bits);
                assert!(lf > last, "bits {bits} code {code}");
                assert_eq!(load_code(lf, bits), code, "bits {bits} code {code}");
                last = lf;
            }
            let mut prev = 0;
            for i in 0..=4000 {
                let c = load_code(i as f64 * 0.001, bits);
                assert!((1..=top).contains(&c) && c >= prev, "bits {bits} lf {i}e-3");
                prev = c;
            }
            assert_eq!(load_code(100.0, bits), top);
            assert_eq!(load_code(-1.0, bits), 1);
            assert!(load_of(0, bits).is_nan());
        }
        assert_eq!(load_code(0.4, 0), 0);
    }

    #[test]
    fn vcp_thresholds_are_80_and_100_percent() {
        assert_eq!(load_code(0.0, 2), 1);
        assert_eq!(load_code(0.7999, 2), 1);
        assert_eq!(load_code(0.8, 2), 2);
        assert_eq!(load_code(0.9999, 2), 2);
        assert_eq!(load_code(1.0, 2), 3);
        assert_eq!(load_code(7.0, 2), 3);
    }

    #[test]
    fn multi_level_steps_put_vcp_thresholds_on_boundaries() {
        // n = 2: steps of 0.1; n = 3: steps of 0.025.
        assert_eq!((load_code(0.7999, 4), load_code(0.8, 4)), (8, 9));
        assert_eq!((load_code(0.9999, 4), load_code(1.0, 4)), (10, 11));
        assert_eq!((load_code(0.7999, 6), load_code(0.8, 6)), (32, 33));
        assert_eq!((load_code(0.9999, 6), load_code(1.0, 6)), (40, 41));
        assert!((load_of(9, 4) - 0.85).abs() < 1e-12);
        assert!((load_of(15, 4) - 1.45).abs() < 1e-12);
        assert_eq!(load_code(1.4, 4), 15);
        assert_eq!(load_code(1.3999, 4), 14);
    }

    #[test]
    fn arrivals_give_the_formula() {
        let mut m = LoadMonitor::new(LoadConfig::default());
        assert_eq!(m.poll_timeout(), None);
        // 100 packets of 1500 bytes within the first 200 ms, empty queue.
        for i in 0..100 {
            m.on_packet(Time(i * MS), 1500, &iface(0, 0));
        }
        assert_eq!(m.poll_timeout(), Some(Time(200 * MS)));
        m.handle_timeout(Time(150 * MS), &iface(0, 0)); // early: nothing
        assert_eq!(m.load(), 0.0);
        m.handle_timeout(Time(200 * MS), &iface(0, 0));
        assert!((m.load() - 150_000.0 / CAP).abs() < 1e-12, "{}", m.load());
        assert_eq!(m.poll_timeout(), Some(Time(400 * MS)));
        // An idle interval reads zero.
        m.handle_timeout(Time(400 * MS), &iface(0, 0));
        assert_eq!(m.load(), 0.0);
    }

    #[test]
    fn persistent_queue_is_counted() {
        let mut m = LoadMonitor::new(LoadConfig::default());
        for i in 0..100 {
            m.on_packet(Time(i * MS), 1500, &iface(10_000, 0));
        }
        m.handle_timeout(Time(200 * MS), &iface(10_000, 0));
        // q = 0.25 * 10000 (EWMA from zero), weighted by kappa = 0.5.
        assert!((m.persistent_queue() - 2500.0).abs() < 1e-9);
        let want = (150_000.0 + 0.5 * 2500.0) / CAP;
        assert!((m.load() - want).abs() < 1e-12, "{} vs {want}", m.load());
        // Second interval, same queue: q = 2500 + 0.25 * (10000 - 2500) = 4375.
        m.on_packet(Time(250 * MS), 1500, &iface(10_000, 0));
        m.handle_timeout(Time(400 * MS), &iface(10_000, 0));
        let want = (1500.0 + 0.5 * 4375.0) / CAP;
        assert!((m.load() - want).abs() < 1e-12, "{} vs {want}", m.load());
    }

    #[test]
    fn departures_count_sent_bytes() {
        let mut m = LoadMonitor::new(LoadConfig {
            measure: RateMeasure::Departures,
            ..LoadConfig::default()
        });
        // 300 kB offered, but the interface only sent 100 kB of it.
        for i in 0..200 {
            m.on_packet(Time(i * MS / 2), 1500, &iface(0, 1_000));
        }
        m.handle_timeout(Time(200 * MS), &iface(0, 101_000));
        assert!((m.load() - 100_000.0 / CAP).abs() < 1e-12, "{}", m.load());
    }

    #[test]
    fn late_packet_closes_interval_and_elapsed_time_is_used() {
        let mut m = LoadMonitor::new(LoadConfig::default());
        m.on_packet(Time(0), 49_000, &iface(0, 0));
        // No timeout was delivered; a packet at 400 ms closes the 400 ms interval.
        m.on_packet(Time(400 * MS), 1500, &iface(0, 0));
        assert!((m.load() - 49_000.0 / (2.0 * CAP)).abs() < 1e-12);
        assert_eq!(m.poll_timeout(), Some(Time(600 * MS)));
    }

    #[test]
    fn zero_capacity_is_finite() {
        let mut m = LoadMonitor::new(LoadConfig::default());
        let dead = Iface::default();
        m.on_packet(Time(0), 1500, &dead);
        m.handle_timeout(Time(200 * MS), &dead);
        assert_eq!(m.load(), MAX_LOAD);
        m.handle_timeout(Time(400 * MS), &dead);
        assert_eq!(m.load(), 0.0);
    }
}
