//! The limits a new connection passes in both loops once it is matched and under
//! `max_connections` (docs/live.md, "Limits" and "Memory"): the memory budget (the open
//! connections' worst case and its own must fit in `memory_limit`), then its source's
//! share (`max_connections_per_source`). A refusal is logged and counted here; the
//! caller resets the connection.

use super::config::{Config, LogLevel};
use super::log::log;
use super::memory_budget::MemoryBudget;
use super::metrics::Metrics;
use super::per_source::PerSource;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::Ordering::Relaxed;

pub struct Admission {
    budget: MemoryBudget,
    per_source: PerSource,
}

impl Admission {
    /// For `cfg`'s limits; publishes the budget in `m`.
    pub fn new(cfg: &Config, m: &Metrics) -> Admission {
        let budget = MemoryBudget::new(cfg.memory_limit, cfg.buffer_bytes);
        m.memory_limit.store(budget.limit, Relaxed);
        Admission {
            budget,
            per_source: PerSource::new(cfg.max_connections_per_source),
        }
    }

    /// Whether `peer -> dst` may open beside `open` connections. On `true` its source
    /// counts it: `release` it when the connection ends.
    pub fn admit(
        &mut self,
        cfg: &Config,
        m: &Metrics,
        open: usize,
        peer: SocketAddrV4,
        dst: SocketAddrV4,
    ) -> bool {
        if !self.budget.admits(open as u64 * self.budget.per_connection) {
            log(
                LogLevel::Warn,
                format_args!(
                    "refused {peer} -> {dst}: memory_limit ({}) reached",
                    self.budget.limit
                ),
            );
            m.rejected_memory.fetch_add(1, Relaxed);
            return false;
        }
        if !self.per_source.admit(*peer.ip()) {
            log(
                LogLevel::Warn,
                format_args!(
                    "refused {peer} -> {dst}: max_connections_per_source ({}) reached",
                    cfg.max_connections_per_source
                ),
            );
            m.rejected_per_source.fetch_add(1, Relaxed);
            return false;
        }
        true
    }

    /// A connection `admit` counted for `src` ended (or never opened).
    pub fn release(&mut self, src: Ipv4Addr) {
        self.per_source.release(src);
    }
}
