//! `gilbert-elliott`: a continuous-time two-state (good/bad) process with exponential
//! sojourn times of means `t_good` and `t_bad`, and a loss probability per state.
//!
//! Steps on: time. The state process runs whether or not packets are sent; it is
//! advanced lazily to each packet's start (no per-tick loop). A packet is judged on its
//! transmission interval `[start, start + duration)`: it is lost with probability
//! `loss_bad` if any part of that interval overlaps a bad period, else with `loss_good`
//! (a zero-length interval takes the state at `start`). So long packets on slow links
//! are hit more often, as a fade that starts mid-packet corrupts it.
//!
//! Stationary P(bad) = t_bad / (t_good + t_bad). For a packet of duration d, started at a
//! time independent of the process, P(overlap) = P(bad) + P(good)(1 - e^{-d / t_good})
//! (the residual good time is exponential by memorylessness), and
//! loss = loss_bad P(overlap) + loss_good (1 - P(overlap)).
//!
//! Cost: a few periods are walked one by one; a longer gap (an idle link: more than 4
//! expected state changes) is crossed in one exact step, drawing the state at the new time from the chain's transition law
//! P(bad at t + dt | state at t) = P(bad) + (1{bad} - P(bad)) e^{-dt (1/t_good + 1/t_bad)}
//! and a fresh exponential residual (memorylessness makes this exact). O(1) per packet.
//! Sojourns are rounded to whole nanoseconds (at least 1 ns).

use super::spec::{check_positive, check_prob};
use super::*;
use crate::rng::uniform;
use crate::units::Duration;
use serde::Deserialize;

/// `{ model = "gilbert-elliott", t_good = "1s", t_bad = "50ms" }`
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottSpec {
    /// Mean sojourn in the good state.
    pub t_good: Duration,
    /// Mean sojourn in the bad state.
    pub t_bad: Duration,
    /// Loss probability of a packet that sees only good time (default 0). Inside `fec`:
    /// the error probability of a symbol sent in the good state.
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability of a packet that overlaps bad time (default 1). Inside `fec`:
    /// the error probability of a symbol sent in the bad state.
    #[serde(default = "super::one")]
    pub loss_bad: f64,
    /// State at time 0: "stationary" (default), "good" or "bad".
    #[serde(default)]
    pub initial: InitialState,
}

impl GilbertElliottSpec {
    pub(super) fn validate(&self, prefix: &str) -> Result<(), ChannelError> {
        check_positive(prefix, "t_good", self.t_good)?;
        check_positive(prefix, "t_bad", self.t_bad)?;
        check_prob(prefix, "loss_good", self.loss_good)?;
        check_prob(prefix, "loss_bad", self.loss_bad)
    }

    /// Stationary fraction of time in the bad state, t_bad / (t_good + t_bad).
    pub fn stationary_bad(&self) -> f64 {
        let (g, b) = (self.t_good.0.as_secs_f64(), self.t_bad.0.as_secs_f64());
        b / (g + b)
    }

    /// Long-run loss of packets whose transmission lasts `duration` (see module docs).
    pub fn expected_loss(&self, duration: Dur) -> f64 {
        let pb = self.stationary_bad();
        let hit =
            pb + (1.0 - pb) * -(-duration.as_secs_f64() / self.t_good.0.as_secs_f64()).exp_m1();
        hit * self.loss_bad + (1.0 - hit) * self.loss_good
    }

    pub fn build(&self, rng: Rng) -> GilbertElliott {
        GilbertElliott {
            process: GeProcess::new(self, rng),
            loss_good: self.loss_good,
            loss_bad: self.loss_bad,
        }
    }
}

/// The lazily advanced state process, shared with `fec`'s burst model. It owns the
/// channel's random stream (state draws and loss draws come from the same stream).
#[derive(Debug, Clone)]
pub(super) struct GeProcess {
    rng: Rng,
    /// Current state.
    pub bad: bool,
    /// End (exclusive, ns) of the current period; the next period has the other state.
    pub until: u64,
    mean_good: f64,
    mean_bad: f64,
    pi_bad: f64,
    /// 1/t_good + 1/t_bad, per ns: the chain's relaxation rate.
    rate_sum: f64,
    /// Mean state changes per ns, 2 / (t_good + t_bad).
    switch_rate: f64,
    /// Periods walked one by one before an exact jump (tests set 0 to force jumps).
    max_walk: u32,
}

impl GeProcess {
    pub fn new(s: &GilbertElliottSpec, mut rng: Rng) -> GeProcess {
        let (mean_good, mean_bad) = (s.t_good.0 .0 as f64, s.t_bad.0 .0 as f64);
        let pi_bad = mean_bad / (mean_good + mean_bad);
        let bad = match s.initial {
            InitialState::Good => false,
            InitialState::Bad => true,
            InitialState::Stationary => uniform(&mut rng) < pi_bad,
        };
        let rate_sum = 1.0 / mean_good + 1.0 / mean_bad;
        let switch_rate = 2.0 / (mean_good + mean_bad);
        let mut p = GeProcess {
            rng,
            bad,
            until: 0,
            mean_good,
            mean_bad,
            pi_bad,
            rate_sum,
            switch_rate,
            max_walk: 4,
        };
        // Memorylessness: the residual of a stationary period is a full exponential.
        p.until = p.sojourn();
        p
    }

    #[inline]
    pub fn uniform(&mut self) -> f64 {
        uniform(&mut self.rng)
    }

    /// Length (ns, >= 1) of a fresh period in the current state.
    #[inline]
    fn sojourn(&mut self) -> u64 {
        let mean = if self.bad {
            self.mean_bad
        } else {
            self.mean_good
        };
        let x = -mean * (-self.uniform()).ln_1p();
        (x.round() as u64).max(1)
    }

    /// Ends the current period: switches state and draws the next period's length.
    #[inline]
    pub fn next_period(&mut self) {
        self.bad = !self.bad;
        self.until = self.until.saturating_add(self.sojourn());
    }

    /// Moves the process so that the current period contains `t` (`until > t`).
    #[inline]
    pub fn advance_to(&mut self, t: u64) {
        if self.until > t {
            return;
        }
        // Far behind (an idle link): one exact jump is cheaper than walking the periods.
        if (t - self.until) as f64 * self.switch_rate > f64::from(self.max_walk) {
            return self.jump(t);
        }
        let mut walked = 0;
        while self.until <= t && self.until < u64::MAX {
            if walked == self.max_walk {
                return self.jump(t);
            }
            self.next_period();
            walked += 1;
        }
    }

    /// Exact jump over `[until, t]`: at `until` the other state begins afresh; the state at
    /// `t` follows the transition law, and its residual is a fresh exponential.
    #[cold]
    fn jump(&mut self, t: u64) {
        let entering_bad = !self.bad;
        let decay = (-((t - self.until) as f64) * self.rate_sum).exp();
        let p_bad = self.pi_bad + (f64::from(u8::from(entering_bad)) - self.pi_bad) * decay;
        self.bad = self.uniform() < p_bad;
        self.until = t.saturating_add(self.sojourn());
    }
}

/// The running model: see the module docs.
#[derive(Debug, Clone)]
pub struct GilbertElliott {
    process: GeProcess,
    loss_good: f64,
    loss_bad: f64,
}

impl GilbertElliott {
    /// The state at the last transmission's start (`true` = bad) and the end of that
    /// period: the state holds until then, and the other state follows.
    pub fn state(&self) -> (bool, Time) {
        (self.process.bad, Time(self.process.until))
    }
}

impl Channel for GilbertElliott {
    #[inline]
    fn transmit(&mut self, start: Time, duration: Dur, _: u32) -> bool {
        let p = &mut self.process;
        p.advance_to(start.0);
        // The period after the current one is the other state, so a good packet overlaps
        // bad time iff the current good period ends before the packet does.
        let hit = p.bad || p.until < start.0.saturating_add(duration.0);
        let lose = if hit { self.loss_bad } else { self.loss_good };
        !(lose >= 1.0 || (lose > 0.0 && p.uniform() < lose))
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(self.clone()))
    }
    fn is_bad(&self) -> Option<bool> {
        Some(self.process.bad)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::rng::stream;

    fn spec(t_good_us: u64, t_bad_us: u64) -> GilbertElliottSpec {
        GilbertElliottSpec {
            t_good: Duration(Dur::from_micros(t_good_us)),
            t_bad: Duration(Dur::from_micros(t_bad_us)),
            loss_good: 0.0,
            loss_bad: 1.0,
            initial: InitialState::Stationary,
        }
    }

    #[test]
    fn ge_bad_time_fraction_converges() {
        // Walk the periods over a horizon T and measure the bad-time fraction. The time
        // average of a stationary two-state chain with relaxation time tau has variance
        // about 2 pi_b pi_g tau / T.
        let s = spec(1000, 250);
        let mut p = GeProcess::new(&s, stream(3, "ge"));
        let horizon: u64 = 20_000_000_000; // 20 s = 16000 cycles
        let (mut t, mut bad_ns) = (0u64, 0u64);
        while t < horizon {
            let end = p.until.min(horizon);
            if p.bad {
                bad_ns += end - t;
            }
            t = end;
            p.next_period();
        }
        let pb = s.stationary_bad();
        let tau = 1.0 / p.rate_sum;
        let measured = bad_ns as f64 / horizon as f64;
        assert_within_se(
            "GE bad-time fraction",
            measured,
            pb,
            2.0 * pb * (1.0 - pb) * tau,
            horizon as f64,
        );
    }

    #[test]
    fn ge_loss_matches_overlap_formula() {
        // Packets of 100 us every 1 ms: P(hit) = pb + pg (1 - e^{-d/t_good}). Successive
        // packets are 5 relaxation times apart, so nearly independent; the variance is
        // inflated by (1 + r)/(1 - r), r = e^{-gap/tau}, to be safe.
        let s = spec(1000, 250);
        const N: u64 = 1_000_000;
        for (max_walk, seed) in [(4, 1), (0, 2)] {
            let mut m = s.build(stream(seed, "ge"));
            m.process.max_walk = max_walk;
            let measured = loss_rate(&mut m, N, 1_000_000, 100_000, 1500);
            let want = s.expected_loss(Dur::from_micros(100));
            let r = (-1_000_000.0 * m.process.rate_sum).exp();
            let var_n = want * (1.0 - want) * (1.0 + r) / (1.0 - r);
            assert_within_se(
                &format!("GE loss, max_walk {max_walk}"),
                measured,
                want,
                var_n,
                N as f64,
            );
        }
    }

    #[test]
    fn ge_jump_follows_transition_law() {
        // P(bad at t + dt | bad at t) = pb + pg e^{-dt/tau}, sampled with forced jumps and
        // with walking; dt = tau, pairs far apart so that pairs are independent.
        let s = spec(600, 200);
        for max_walk in [0, 1000] {
            let mut p = GeProcess::new(&s, stream(9, "ge"));
            p.max_walk = max_walk;
            let tau = 1.0 / p.rate_sum;
            let (mut n, mut both) = (0u64, 0u64);
            for i in 0..300_000u64 {
                let t = i * 3_000_000; // 20 tau apart
                p.advance_to(t);
                if p.bad {
                    p.advance_to(t + tau as u64);
                    n += 1;
                    both += p.bad as u64;
                }
            }
            let pb = s.stationary_bad();
            let want = pb + (1.0 - pb) * (-(tau as u64 as f64) / tau).exp();
            let measured = both as f64 / n as f64;
            assert_within_se(
                &format!("GE transition, max_walk {max_walk}"),
                measured,
                want,
                want * (1.0 - want),
                n as f64,
            );
        }
    }

    #[test]
    fn ge_long_packets_are_hit_more() {
        let s = spec(1000, 100);
        let short = loss_rate(
            &mut s.build(stream(4, "ge")),
            200_000,
            3_000_000,
            1_000,
            1500,
        );
        let long = loss_rate(
            &mut s.build(stream(4, "ge")),
            200_000,
            3_000_000,
            1_000_000,
            1500,
        );
        assert!(long > short + 0.3, "short {short}, long {long}");
    }

    #[test]
    fn ge_deterministic_and_forkable() {
        let s = spec(500, 100);
        let a = outcomes(&mut s.build(stream(1, "ge")), 5000, 50_000, 10_000, 1);
        assert_eq!(
            a,
            outcomes(&mut s.build(stream(1, "ge")), 5000, 50_000, 10_000, 1)
        );
        assert_ne!(
            a,
            outcomes(&mut s.build(stream(2, "ge")), 5000, 50_000, 10_000, 1)
        );
        let mut m = s.build(stream(3, "ge"));
        outcomes(&mut m, 77, 50_000, 10_000, 1);
        let mut f = m.fork().unwrap();
        let later = |ch: &mut dyn Channel| -> Vec<bool> {
            (0..5000u64)
                .map(|i| ch.transmit(Time(10_000_000 + i * 70_000), Dur(10_000), 1))
                .collect()
        };
        assert_eq!(later(f.as_mut()), later(&mut m));
    }

    #[test]
    fn ge_initial_state() {
        let mut s = spec(1_000_000, 1_000_000);
        s.initial = InitialState::Bad;
        let mut m = s.build(stream(1, "ge"));
        assert!(!m.transmit(Time::ZERO, Dur::ZERO, 1));
        assert!(m.state().0 && m.is_bad() == Some(true));
        s.initial = InitialState::Good;
        assert!(s.build(stream(1, "ge")).transmit(Time::ZERO, Dur::ZERO, 1));
    }
}
