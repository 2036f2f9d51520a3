//! `bernoulli`: independent (i.i.d.) packet loss with probability `p`.
//!
//! Steps on: packets. Each transmission takes one uniform draw `u` from the channel's
//! stream and is lost iff `u < p` (no draw at all when `p = 0`). Size and timing play no
//! part. Long-run loss = `p`.

use super::spec::check_prob;
use super::*;
use crate::rng::uniform;
use serde::Deserialize;

/// `{ model = "bernoulli", p = 0.01 }`
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BernoulliSpec {
    /// Loss probability of every packet, in [0, 1].
    pub p: f64,
}

impl BernoulliSpec {
    pub(super) fn validate(&self, prefix: &str) -> Result<(), ChannelError> {
        check_prob(prefix, "p", self.p)
    }

    /// Long-run packet loss: `p`.
    pub fn expected_loss(&self) -> f64 {
        self.p
    }

    pub fn build(&self, rng: Rng) -> Bernoulli {
        Bernoulli { p: self.p, rng }
    }
}

/// The running model: see the module docs.
#[derive(Debug, Clone)]
pub struct Bernoulli {
    p: f64,
    rng: Rng,
}

impl Channel for Bernoulli {
    #[inline]
    fn transmit(&mut self, _: Time, _: Dur, _: u32) -> bool {
        self.p <= 0.0 || uniform(&mut self.rng) >= self.p
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::rng::stream;

    fn model(p: f64, seed: u64) -> Bernoulli {
        BernoulliSpec { p }.build(stream(seed, "link/test/ab/channel"))
    }

    #[test]
    fn bernoulli_loss_converges_to_p() {
        const N: u64 = 1_000_000;
        for p in [0.001, 0.01, 0.3] {
            let measured = loss_rate(&mut model(p, 7), N, 1000, 100, 1500);
            assert_within_se(
                &format!("bernoulli p={p}"),
                measured,
                p,
                p * (1.0 - p),
                N as f64,
            );
        }
    }

    #[test]
    fn bernoulli_extremes() {
        assert_eq!(loss_rate(&mut model(0.0, 1), 10_000, 1, 1, 1500), 0.0);
        assert_eq!(loss_rate(&mut model(1.0, 1), 10_000, 1, 1, 1500), 1.0);
    }

    #[test]
    fn bernoulli_deterministic_per_seed() {
        let a = outcomes(&mut model(0.2, 1), 1000, 10, 1, 100);
        assert_eq!(a, outcomes(&mut model(0.2, 1), 1000, 10, 1, 100));
        assert_ne!(a, outcomes(&mut model(0.2, 2), 1000, 10, 1, 100));
    }

    #[test]
    fn bernoulli_fork_predicts_future() {
        let mut m = model(0.5, 3);
        outcomes(&mut m, 17, 10, 1, 100);
        let mut f = m.fork().unwrap();
        assert_eq!(
            outcomes(f.as_mut(), 500, 10, 1, 100),
            outcomes(&mut m, 500, 10, 1, 100)
        );
    }
}
