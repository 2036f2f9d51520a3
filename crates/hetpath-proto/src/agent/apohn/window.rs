//! The SBP connection's window: how many datagrams the booster keeps unconfirmed. Seed 000
//! §III.D makes flow control "window-based ... where multiple network terminals contend
//! for a shared medium" and §IV.B credits "the backpressure congestion control" with
//! keeping the bottleneck buffer at 5-7 packets, without saying how the window is set.
//!
//! We set it as TCP Vegas does (Brakmo and Peterson, IEEE JSAC 13(8), 1995): once per
//! round the window is compared with what the fastest round trip seen (`base`) would need,
//! `diff = window * (rtt - base) / rtt`, which is the number of datagrams the window keeps
//! queued at the bottleneck. `rtt` is the round trip of the datagram that ends the round,
//! taken a window after the round began: Vegas' minimum over the round would be the first
//! datagram's, which a window just grown in one step sends into a queue not built yet. Below `alpha` the window grows by one, above `beta` it shrinks
//! by one; until `diff` first exceeds `gamma` it doubles (Vegas' slow start). A round
//! measures only datagrams taken since the window last changed, so that each change is
//! judged by what it did; after a change the window holds for a round, as Vegas holds
//! between doublings (Brakmo and Peterson §3.3).
//! The values are Linux `tcp_vegas.c`'s (alpha 2, beta 4, gamma 1): standard published
//! ones, not fitted to the seed's figure (docs/model-notes.md, "Seed 000").

use crate::time::Dur;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowConfig {
    /// Datagrams in the first round: RFC 6928's initial window of ten segments.
    pub initial: u32,
    /// Datagrams kept queued at the bottleneck: grow below `alpha`, shrink above `beta`.
    pub alpha: u32,
    pub beta: u32,
    /// Leave the doubling phase once more than `gamma` datagrams are queued.
    pub gamma: u32,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            initial: 10,
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Window {
    cfg: WindowConfig,
    size: u32,
    max: u32,
    doubling: bool,
    /// Datagrams from this id on were taken under the current window: only they measure it.
    changed_at: u64,
    /// The fastest round trip seen: the path without a queue.
    base: Option<Dur>,
    /// The round ends when a datagram numbered from here is confirmed.
    round_end: u64,
}

impl Window {
    /// A window of at most `max` datagrams.
    pub fn new(cfg: WindowConfig, max: u32) -> Window {
        Window {
            size: cfg.initial.clamp(1, max.max(1)),
            cfg,
            max: max.max(1),
            doubling: true,
            changed_at: 0,
            base: None,
            round_end: 0,
        }
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    /// Datagram `id` was confirmed `rtt` after the booster took it (`None` for one sent
    /// again: Karn's rule); `next_id` is the id the next datagram will get.
    pub fn on_confirmed(&mut self, id: u64, rtt: Option<Dur>, next_id: u64) {
        if let Some(r) = rtt {
            self.base = Some(self.base.map_or(r, |b| b.min(r)));
        }
        if id < self.round_end {
            return;
        }
        self.round_end = next_id;
        let (Some(base), Some(rtt), true) = (self.base, rtt, id >= self.changed_at) else {
            return;
        };
        let rtt = rtt.as_nanos().max(1) as u128;
        let queued = self.size as u128 * (rtt - base.as_nanos() as u128) / rtt;
        let c = self.cfg;
        let before = self.size;
        if self.doubling {
            if queued > c.gamma as u128 {
                // Vegas leaves slow start at the window the base round trip supports.
                self.doubling = false;
                let target = self.size as u128 * base.as_nanos() as u128 / rtt + 1;
                self.size = self.size.min(target as u32);
            } else {
                self.size = self.size.saturating_mul(2);
            }
        } else if queued > c.beta as u128 {
            self.size -= 1;
        } else if queued < c.alpha as u128 {
            self.size += 1;
        }
        let size = self.size.clamp(2.min(self.max), self.max);
        if size != before {
            // The next round: a window's worth of datagrams taken from now on.
            self.changed_at = next_id;
            self.round_end = next_id + size as u64;
        }
        self.size = size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bottleneck of `rate` datagrams per second behind a round trip of `base`: a
    /// window of `w` queues what exceeds the pipe, and the round trip grows with it.
    fn converge(base_ms: u64, rate: u64) -> (u32, u64) {
        let mut w = Window::new(WindowConfig::default(), 4096);
        let base = Dur::from_millis(base_ms);
        let pipe = rate * base_ms / 1000;
        let mut id = 0;
        for _ in 0..400 {
            let size = w.size() as u64;
            let queued = size.saturating_sub(pipe);
            let rtt = base + Dur::from_nanos(queued * 1_000_000_000 / rate);
            let start = id;
            id += size;
            for k in start..id {
                w.on_confirmed(k, Some(rtt), id);
            }
        }
        (w.size(), pipe)
    }

    #[test]
    fn the_window_settles_a_few_datagrams_above_the_pipe() {
        for (base_ms, rate) in [(600, 500), (50, 2_000), (620, 300)] {
            let (size, pipe) = converge(base_ms, rate);
            let queued = size as u64 - pipe;
            assert!(
                (1..=5).contains(&queued),
                "{base_ms} ms, {rate}/s: {size} for a pipe of {pipe}"
            );
        }
    }

    #[test]
    fn without_a_queue_it_grows_to_its_cap() {
        let mut w = Window::new(WindowConfig::default(), 100);
        for id in 0..10_000 {
            w.on_confirmed(id, Some(Dur::from_millis(10)), id + 1);
        }
        assert_eq!(w.size(), 100);
    }
}
