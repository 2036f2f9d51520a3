//! Channel models: per link direction, they decide whether each transmitted packet
//! arrives (docs/architecture.md, convention 6: impairments live in the simulator, never
//! in proto).
//!
//! Every model documents what it steps on: per packet, per bit, or per unit of time.
//! A model owns its random stream (see `rng`), so runs are reproducible per seed, and
//! every model is `Clone`: a clone (see [`Channel::fork`]) holds the same random state,
//! so feeding it the same transmissions predicts the original's future exactly.
//!
//! | model             | file                 | steps on                                   |
//! |-------------------|----------------------|--------------------------------------------|
//! | `none`            | here                 | nothing                                    |
//! | `bernoulli`       | `bernoulli.rs`       | per packet                                 |
//! | `markov`          | `markov.rs`          | per packet (one chain step per transmission) |
//! | `gilbert-elliott` | `gilbert_elliott.rs` | time (continuous-time chain, lazy)         |
//! | `ber`             | `ber.rs`             | per bit, collapsed to one draw per packet  |
//! | `fec`             | `fec.rs`             | per codeword (i.i.d. symbols or GE time)   |
//! | `trace`           | `trace.rs`           | per transmission index or time interval    |
//!
//! The user-facing description of each model is docs/channels.md.

use crate::rng::Rng;
use hetpath_proto::{Dur, Time};
use std::fmt;

mod ber;
mod bernoulli;
mod fec;
mod fec_math;
mod gilbert_elliott;
mod markov;
mod spec;
mod trace;

pub use ber::{Ber, BerSpec};
pub use bernoulli::{Bernoulli, BernoulliSpec};
pub use fec::{Fec, FecInner, FecSpec};
pub use fec_math::binomial_tail;
pub use gilbert_elliott::{GilbertElliott, GilbertElliottSpec};
pub use markov::{Markov, MarkovSpec, MarkovStep};
pub use spec::{ChannelError, ChannelSpec};
pub use trace::{Trace, TraceData, TraceFileError, TraceSpec};

/// A channel model for one link direction.
pub trait Channel: fmt::Debug + Send {
    /// Decides the fate of one packet of `bytes` (IP length) whose transmission occupies
    /// `[start, start + duration)`. Returns `true` if it arrives intact. Called once per
    /// transmitted packet, in order of `start`.
    fn transmit(&mut self, start: Time, duration: Dur, bytes: u32) -> bool;
    /// Fraction of the nominal link rate left for IP bytes (the FEC code rate k/n).
    fn rate_factor(&self) -> f64 {
        1.0
    }
    /// A copy with the same parameters, position and random state: calling `transmit` on
    /// it with the same arguments gives the same outcomes this channel will give. Used by
    /// oracles (an "ideal protocol" that knows the channel's future). `None` if the model
    /// cannot be copied; every model in this module can.
    fn fork(&self) -> Option<Box<dyn Channel>> {
        None
    }
    /// Whether the channel's hidden state is currently "bad", for two-state models
    /// (`markov`: the state the next packet will see; `gilbert-elliott`: the state at the
    /// last transmission's start). `None` for models without such a state.
    fn is_bad(&self) -> Option<bool> {
        None
    }
    /// Whether every packet arrives (`transmit` always true, with nothing to step): the
    /// link direction then skips the call.
    fn lossless(&self) -> bool {
        false
    }
}

/// A perfect channel.
#[derive(Debug, Default, Clone)]
pub struct NoLoss;

impl Channel for NoLoss {
    fn transmit(&mut self, _: Time, _: Dur, _: u32) -> bool {
        true
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(NoLoss))
    }
    fn lossless(&self) -> bool {
        true
    }
}

/// The state a two-state model starts in (TOML key `initial`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InitialState {
    /// Drawn from the stationary distribution, so the process is stationary from the
    /// first packet on (no warm-up bias in short runs).
    #[default]
    Stationary,
    Good,
    Bad,
}

/// Builds the channel a spec describes with its own random stream.
pub fn build(spec: &ChannelSpec, rng: Rng) -> Box<dyn Channel> {
    spec.build(rng)
}

/// Serde default for loss probabilities of a bad state.
fn one() -> f64 {
    1.0
}

/// Statistical helpers shared by the models' tests.
#[cfg(test)]
pub(crate) mod testutil {
    /// Asserts that `measured` is within 5 standard errors of `expected`, where `var_n` is
    /// N times the variance of the estimator (p(1-p) for independent trials; larger for
    /// correlated ones) and `n` the number of trials. 5 sigma: a false alarm about once in
    /// 1.7 million runs; the seeds are fixed, so a pass is reproducible anyway.
    pub fn assert_within_se(what: &str, measured: f64, expected: f64, var_n: f64, n: f64) {
        let se = (var_n / n).sqrt();
        let tol = 5.0 * se + 1e-12;
        assert!(
            (measured - expected).abs() <= tol,
            "{what}: measured {measured:.6}, expected {expected:.6} +- {tol:.6} (5 se, n = {n})"
        );
    }

    /// Fraction of `n` packets of `bytes` sent back to back every `gap` that are lost.
    pub fn loss_rate(ch: &mut dyn super::Channel, n: u64, gap: u64, dur: u64, bytes: u32) -> f64 {
        use hetpath_proto::{Dur, Time};
        let lost = (0..n)
            .filter(|&i| !ch.transmit(Time(i * gap), Dur(dur), bytes))
            .count();
        lost as f64 / n as f64
    }

    /// The first `n` outcomes, as a bit string, for determinism tests.
    pub fn outcomes(
        ch: &mut dyn super::Channel,
        n: u64,
        gap: u64,
        dur: u64,
        bytes: u32,
    ) -> Vec<bool> {
        use hetpath_proto::{Dur, Time};
        (0..n)
            .map(|i| ch.transmit(Time(i * gap), Dur(dur), bytes))
            .collect()
    }
}
