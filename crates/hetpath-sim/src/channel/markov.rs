//! `markov`: a two-state (good/bad) Markov chain with a loss probability per state (the
//! discrete-time Gilbert-Elliott model), stepped per packet or per time slot.
//!
//! Steps on, by default: packets (transmissions on this link direction), never on time:
//! an idle link does not advance the chain. For packet i in state s_i:
//!   1. loss draw: lost with probability `loss_bad` if s_i is bad, else `loss_good`;
//!   2. transition: good -> bad with probability `alpha`, bad -> good with `beta`,
//!      giving s_{i+1}.
//!
//! Order: loss then transition, so `initial` is the state of the first packet and
//! [`Markov::state`] is the state the *next* packet will see (what an oracle wants).
//! Either order keeps every packet's marginal state stationary when the first state is
//! drawn from the stationary law (the default), since one step preserves it; with this
//! order that holds from packet 0, with no extra step before it.
//!
//! Stationary P(bad) = alpha / (alpha + beta); long-run loss
//! = P(good) loss_good + P(bad) loss_bad; mean bad run = 1 / beta packets.
//! Draws are skipped when a probability is 0 or 1 (at most two draws per packet).
//!
//! With `slot = "<duration>"` the chain steps on time instead: slot j = [j*slot,
//! (j+1)*slot) has state s_j, the chain makes exactly one transition per slot whether or
//! not anything is sent, and a packet takes the state of the slot its transmission starts
//! in. Transitions and per-packet loss draws use separate streams, so the sequence of
//! slot states is a function of the seed alone: every protocol run with the same seed
//! sees the same channel realisation however it transmits (seed 003's radio channel and
//! its ideal protocol need this). Mean bad run = slot / beta.
//!
//! `fec = { n = 255, k = 223 }` models a block code below IP: IP sees k/n of the link
//! rate; losses are whatever the chain says (seed 003 section 3.2: in the bad state every
//! block is lost, in the good state FEC corrects everything).

use super::spec::{check_positive, check_prob};
use super::*;
use crate::rng::uniform;
use crate::units::Duration;
use rand_core::SeedableRng;
use serde::Deserialize;

/// `{ model = "markov", alpha = 0.01, beta = 0.1 }`
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkovSpec {
    /// P(good -> bad) per packet.
    pub alpha: f64,
    /// P(bad -> good) per packet.
    pub beta: f64,
    /// Loss probability in the good state (default 0).
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability in the bad state (default 1).
    #[serde(default = "super::one")]
    pub loss_bad: f64,
    /// State of the first packet (or slot): "stationary" (default), "good" or "bad".
    #[serde(default)]
    pub initial: InitialState,
    /// Step once per slot of this length instead of once per packet.
    pub slot: Option<Duration>,
    /// What the chain steps on: "slot" (needs `slot`) or "packet" (ignores `slot`, so a
    /// sweep can switch a grid whose points each set their own slot). Default: "slot"
    /// when `slot` is given, else "packet".
    #[serde(default)]
    pub step: Option<MarkovStep>,
    /// A block code below IP whose rate k/n scales the link rate.
    pub fec: Option<BlockCode>,
}

/// A `markov` chain's `step` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkovStep {
    /// One transition per slot of `slot` (time).
    Slot,
    /// One transition per transmitted packet.
    Packet,
}

/// `fec = { n = 255, k = 223 }`: n coded symbols carry k information symbols; the `fec`
/// model's limits, 1 <= n <= 255 and 0 < k < n.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockCode {
    pub n: u32,
    pub k: u32,
}

impl MarkovSpec {
    pub(super) fn validate(&self, prefix: &str) -> Result<(), ChannelError> {
        check_prob(prefix, "alpha", self.alpha)?;
        check_prob(prefix, "beta", self.beta)?;
        check_prob(prefix, "loss_good", self.loss_good)?;
        check_prob(prefix, "loss_bad", self.loss_bad)?;
        if self.alpha + self.beta <= 0.0 {
            return Err(ChannelError::invalid(
                format!("{prefix}.alpha + {prefix}.beta"),
                0,
                "the chain never moves; expected a positive sum",
            ));
        }
        if let Some(d) = self.slot {
            check_positive(prefix, "slot", d)?;
        }
        if self.step == Some(MarkovStep::Slot) && self.slot.is_none() {
            return Err(ChannelError::invalid(
                format!("{prefix}.step"),
                "\"slot\"",
                "no `slot` duration is given; expected a `slot` or step = \"packet\"",
            ));
        }
        if let Some(c) = self.fec {
            // The `fec` model's limits (a code over 8-bit symbols).
            fec::check_code(&format!("{prefix}.fec"), c.n, c.k)?;
        }
        Ok(())
    }

    /// Stationary probability of the bad state, alpha / (alpha + beta).
    pub fn stationary_bad(&self) -> f64 {
        self.alpha / (self.alpha + self.beta)
    }

    /// Long-run packet loss: P(good) loss_good + P(bad) loss_bad.
    pub fn expected_loss(&self) -> f64 {
        let pb = self.stationary_bad();
        (1.0 - pb) * self.loss_good + pb * self.loss_bad
    }

    pub fn build(&self, mut rng: Rng) -> Markov {
        let bad = match self.initial {
            InitialState::Good => false,
            InitialState::Bad => true,
            InitialState::Stationary => uniform(&mut rng) < self.stationary_bad(),
        };
        let loss_rng = Rng::seed_from_u64(rand_core::Rng::next_u64(&mut rng));
        Markov {
            alpha: self.alpha,
            beta: self.beta,
            loss_good: self.loss_good,
            loss_bad: self.loss_bad,
            bad,
            slot: match self.step {
                Some(MarkovStep::Packet) => None,
                _ => self.slot.map(|d| d.0),
            },
            slot_index: 0,
            rate_factor: self.fec.map_or(1.0, |c| c.k as f64 / c.n as f64),
            rng,
            loss_rng,
        }
    }
}

/// The running model: see the module docs.
#[derive(Debug, Clone)]
pub struct Markov {
    alpha: f64,
    beta: f64,
    loss_good: f64,
    loss_bad: f64,
    /// The state of the next packet (per-packet mode) or of slot `slot_index`.
    bad: bool,
    slot: Option<Dur>,
    slot_index: u64,
    rate_factor: f64,
    /// Transitions.
    rng: Rng,
    /// Loss draws within a state.
    loss_rng: Rng,
}

/// True with probability `p`, without a draw when `p` is 0 or 1.
#[inline]
fn chance(rng: &mut Rng, p: f64) -> bool {
    p >= 1.0 || (p > 0.0 && uniform(rng) < p)
}

impl Markov {
    /// The state the next packet will be sent in: `true` = bad.
    pub fn state(&self) -> bool {
        self.bad
    }
    /// One transition of the chain.
    #[inline]
    fn step(&mut self) {
        if chance(&mut self.rng, if self.bad { self.beta } else { self.alpha }) {
            self.bad = !self.bad;
        }
    }
    /// Long-run packet loss, P(good) loss_good + P(bad) loss_bad.
    pub fn stationary_loss(&self) -> f64 {
        let pb = self.alpha / (self.alpha + self.beta);
        (1.0 - pb) * self.loss_good + pb * self.loss_bad
    }
}

impl Channel for Markov {
    #[inline]
    fn transmit(&mut self, start: Time, _: Dur, _: u32) -> bool {
        let Some(slot) = self.slot else {
            let lost = chance(
                &mut self.loss_rng,
                if self.bad {
                    self.loss_bad
                } else {
                    self.loss_good
                },
            );
            self.step();
            return !lost;
        };
        let target = start.0 / slot.0.max(1);
        while self.slot_index < target {
            self.step();
            self.slot_index += 1;
        }
        !chance(
            &mut self.loss_rng,
            if self.bad {
                self.loss_bad
            } else {
                self.loss_good
            },
        )
    }
    fn rate_factor(&self) -> f64 {
        self.rate_factor
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(self.clone()))
    }
    fn is_bad(&self) -> Option<bool> {
        Some(self.bad)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::rng::stream;

    fn spec(alpha: f64, beta: f64, loss_good: f64, loss_bad: f64) -> MarkovSpec {
        MarkovSpec {
            alpha,
            beta,
            loss_good,
            loss_bad,
            initial: InitialState::Stationary,
            slot: None,
            step: None,
            fec: None,
        }
    }

    /// N x variance of the mean loss indicator of a Markov-modulated Bernoulli sequence:
    /// p(1-p) + 2 (lb - lg)^2 pi_b pi_g lambda / (1 - lambda), lambda = 1 - alpha - beta.
    fn var_n(s: &MarkovSpec) -> f64 {
        let (p, pb) = (s.expected_loss(), s.stationary_bad());
        let lambda = 1.0 - s.alpha - s.beta;
        let d = s.loss_bad - s.loss_good;
        p * (1.0 - p) + 2.0 * d * d * pb * (1.0 - pb) * lambda / (1.0 - lambda)
    }

    #[test]
    fn markov_loss_converges_to_stationary() {
        const N: u64 = 1_000_000;
        for s in [
            spec(0.01, 0.1, 0.0, 1.0),
            spec(0.002, 0.05, 0.001, 0.6),
            spec(0.3, 0.6, 0.1, 0.9),
        ] {
            let measured = loss_rate(&mut s.build(stream(11, "m")), N, 1, 1, 1500);
            assert_within_se(
                &format!("{s:?}"),
                measured,
                s.expected_loss(),
                var_n(&s),
                N as f64,
            );
        }
    }

    #[test]
    fn markov_bad_runs_last_one_over_beta() {
        // With loss_bad = 1 and loss_good = 0, loss runs are bad sojourns: geometric with
        // mean 1/beta, variance (1-beta)/beta^2 per run.
        let s = spec(0.02, 0.25, 0.0, 1.0);
        let mut m = s.build(stream(5, "m"));
        let (mut runs, mut total, mut cur) = (0u64, 0u64, 0u64);
        for _ in 0..1_000_000 {
            if m.transmit(Time::ZERO, Dur::ZERO, 1) {
                if cur > 0 {
                    runs += 1;
                    total += cur;
                }
                cur = 0;
            } else {
                cur += 1;
            }
        }
        let mean = total as f64 / runs as f64;
        let var_run = (1.0 - s.beta) / (s.beta * s.beta);
        assert_within_se("mean bad run", mean, 1.0 / s.beta, var_run, runs as f64);
    }

    #[test]
    fn markov_initial_state_and_oracle() {
        let mut s = spec(0.0001, 0.0001, 0.0, 1.0);
        s.initial = InitialState::Bad;
        let mut m = s.build(stream(1, "m"));
        assert!(m.state());
        assert!(
            !m.transmit(Time::ZERO, Dur::ZERO, 1),
            "first packet sees the initial state"
        );
        s.initial = InitialState::Good;
        assert!(s.build(stream(1, "m")).transmit(Time::ZERO, Dur::ZERO, 1));
        // The state reported is the state the next packet sees (loss_bad = 1, loss_good = 0).
        let mut m = spec(0.1, 0.3, 0.0, 1.0).build(stream(2, "m"));
        for _ in 0..10_000 {
            let bad = m.is_bad().unwrap();
            assert_eq!(m.transmit(Time::ZERO, Dur::ZERO, 1), !bad);
        }
        assert!((m.stationary_loss() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn markov_deterministic_and_forkable() {
        let s = spec(0.05, 0.2, 0.01, 0.8);
        let a = outcomes(&mut s.build(stream(1, "m")), 2000, 1, 1, 1);
        assert_eq!(a, outcomes(&mut s.build(stream(1, "m")), 2000, 1, 1, 1));
        assert_ne!(a, outcomes(&mut s.build(stream(2, "m")), 2000, 1, 1, 1));
        let mut m = s.build(stream(3, "m"));
        outcomes(&mut m, 123, 1, 1, 1);
        let mut f = m.fork().unwrap();
        assert_eq!(
            outcomes(f.as_mut(), 2000, 1, 1, 1),
            outcomes(&mut m, 2000, 1, 1, 1)
        );
    }

    fn slotted(alpha: f64, beta: f64, slot_ms: u64) -> MarkovSpec {
        MarkovSpec {
            slot: Some(Duration(Dur::from_millis(slot_ms))),
            ..spec(alpha, beta, 0.0, 1.0)
        }
    }

    #[test]
    fn slotted_realisation_does_not_depend_on_who_asks() {
        // Probing every slot and probing sparse, irregular times must agree on every
        // slot both probe: the slot states are a function of the seed alone.
        let s = slotted(0.05, 0.2, 10);
        let mut dense = s.build(stream(7, "m"));
        let every: Vec<bool> = (0..5000)
            .map(|j| dense.transmit(Time(j * 10_000_000 + 3), Dur(1), 1500))
            .collect();
        let mut sparse = s.build(stream(7, "m"));
        let mut j = 0;
        while j < 5000 {
            assert_eq!(
                sparse.transmit(Time(j * 10_000_000 + 9_999_999), Dur(1), 40),
                every[j as usize],
                "slot {j}"
            );
            j += 1 + (j * 7919) % 37;
        }
    }

    #[test]
    fn slotted_loss_and_bad_runs_follow_the_chain() {
        const N: u64 = 1_000_000;
        let s = slotted(0.01, 0.1, 1);
        let mut m = s.build(stream(3, "m"));
        let measured = loss_rate(&mut m, N, 1_000_000, 1, 1500);
        assert_within_se(
            "slotted loss",
            measured,
            s.expected_loss(),
            var_n(&s),
            N as f64,
        );
        // Two packets in one slot share its fate.
        let mut m = s.build(stream(4, "m"));
        for j in 0..10_000u64 {
            let a = m.transmit(Time(j * 1_000_000), Dur(1), 40);
            assert_eq!(a, m.transmit(Time(j * 1_000_000 + 999_999), Dur(1), 40));
        }
    }

    #[test]
    fn fec_code_sets_the_rate_factor() {
        let s = MarkovSpec {
            fec: Some(BlockCode { n: 255, k: 223 }),
            ..spec(0.1, 0.9, 0.0, 1.0)
        };
        assert!((s.build(stream(1, "m")).rate_factor() - 223.0 / 255.0).abs() < 1e-12);
        let bad = MarkovSpec {
            fec: Some(BlockCode { n: 100, k: 200 }),
            ..s
        };
        assert!(bad
            .validate("channel")
            .unwrap_err()
            .to_string()
            .contains("channel.fec.k = 200: expected 0 < k < n = 100"));
    }

    #[test]
    fn step_packet_ignores_the_slot() {
        // step = "packet" with a slot behaves as the slot-less chain, draw for draw.
        let per_packet = spec(0.05, 0.2, 0.0, 1.0);
        let forced = MarkovSpec {
            step: Some(MarkovStep::Packet),
            ..slotted(0.05, 0.2, 10)
        };
        let times = |m: &mut Markov| -> Vec<bool> {
            (0..5000u64)
                .map(|j| m.transmit(Time(j * 1_000_000), Dur(1), 1500))
                .collect()
        };
        let a = times(&mut per_packet.build(stream(5, "m")));
        assert_eq!(a, times(&mut forced.build(stream(5, "m"))));
        // ... and differs from the slotted chain (ten packets share a 10 ms slot there).
        assert_ne!(a, times(&mut slotted(0.05, 0.2, 10).build(stream(5, "m"))));
        // step = "slot" is the default when a slot is given.
        let explicit = MarkovSpec {
            step: Some(MarkovStep::Slot),
            ..slotted(0.05, 0.2, 10)
        };
        assert_eq!(
            times(&mut explicit.build(stream(5, "m"))),
            times(&mut slotted(0.05, 0.2, 10).build(stream(5, "m")))
        );
        // step = "slot" without a slot is refused.
        let no_slot = MarkovSpec {
            step: Some(MarkovStep::Slot),
            ..spec(0.05, 0.2, 0.0, 1.0)
        };
        assert!(no_slot
            .validate("channel")
            .unwrap_err()
            .to_string()
            .contains("channel.step = \"slot\": no `slot` duration is given"));
    }
}
