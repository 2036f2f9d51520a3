//! `ber`: independent bit errors with probability `ber` per bit; any bit error loses the
//! packet (no link-layer FEC; see `fec` for coding).
//!
//! Steps on: bits, collapsed analytically to one draw per packet: a packet of L bytes
//! survives with probability (1 - ber)^(8L) = exp(8L ln1p(-ber)), and is lost iff a
//! uniform draw is at or above that. ln1p/expm1 keep tiny rates exact (1 - 1e-12 is not
//! representable to 12 digits in f64; ln1p(-1e-12) is). The survival probability of the
//! last packet size is cached, as sizes repeat (full segments, ACKs).
//! Long-run loss for size L: 1 - (1 - ber)^(8L) = -expm1(8L ln1p(-ber)).

use super::spec::check_prob;
use super::*;
use crate::rng::uniform;
use serde::Deserialize;

/// `{ model = "ber", ber = 1e-6 }`
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BerSpec {
    /// Bit error probability, in [0, 1].
    pub ber: f64,
}

impl BerSpec {
    pub(super) fn validate(&self, prefix: &str) -> Result<(), ChannelError> {
        check_prob(prefix, "ber", self.ber)
    }

    /// Long-run loss of packets of `bytes`: 1 - (1 - ber)^(8 bytes).
    pub fn expected_loss(&self, bytes: u32) -> f64 {
        if bytes == 0 || self.ber <= 0.0 {
            return 0.0;
        }
        -(8.0 * f64::from(bytes) * (-self.ber).ln_1p()).exp_m1()
    }

    pub fn build(&self, rng: Rng) -> Ber {
        Ber {
            ln_ok_bit: (-self.ber).ln_1p(),
            rng,
            last_bytes: 0,
            last_ok: 1.0,
        }
    }
}

/// exp(count * ln_ok): the probability that `count` independent trials all succeed, each
/// succeeding with probability exp(ln_ok). Exactly 1 for zero trials (even if ln_ok = -inf).
#[inline]
pub(super) fn survival(ln_ok: f64, count: u64) -> f64 {
    if count == 0 || ln_ok == 0.0 {
        1.0
    } else {
        (count as f64 * ln_ok).exp()
    }
}

/// The running model: see the module docs.
#[derive(Debug, Clone)]
pub struct Ber {
    /// ln(1 - ber).
    ln_ok_bit: f64,
    rng: Rng,
    last_bytes: u32,
    last_ok: f64,
}

impl Channel for Ber {
    #[inline]
    fn transmit(&mut self, _: Time, _: Dur, bytes: u32) -> bool {
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_ok = survival(self.ln_ok_bit, u64::from(bytes) * 8);
        }
        self.last_ok >= 1.0 || uniform(&mut self.rng) < self.last_ok
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

    #[test]
    fn ber_loss_converges_to_formula() {
        const N: u64 = 1_000_000;
        for (ber, bytes) in [(1e-6, 1500), (1e-5, 1500), (1e-5, 40), (1e-4, 576)] {
            let s = BerSpec { ber };
            let want = s.expected_loss(bytes);
            let measured = loss_rate(&mut s.build(stream(1, "ber")), N, 1, 1, bytes);
            assert_within_se(
                &format!("ber {ber} x {bytes} B"),
                measured,
                want,
                want * (1.0 - want),
                N as f64,
            );
        }
    }

    #[test]
    fn ber_formula_is_accurate_for_tiny_rates() {
        // 1 - (1 - 1e-12)^12000 = 1.2e-8 to 8 digits; the naive powi form loses digits.
        let p = BerSpec { ber: 1e-12 }.expected_loss(1500);
        assert!((p / 1.2e-8 - 1.0).abs() < 1e-6, "{p}");
        assert_eq!(BerSpec { ber: 0.0 }.expected_loss(1500), 0.0);
        assert_eq!(BerSpec { ber: 1.0 }.expected_loss(1500), 1.0);
        assert_eq!(BerSpec { ber: 1.0 }.expected_loss(0), 0.0);
    }

    #[test]
    fn ber_mixed_sizes_use_the_right_probability() {
        // Alternating sizes defeat the one-entry cache on every packet.
        const N: u64 = 400_000;
        let s = BerSpec { ber: 2e-5 };
        let mut m = s.build(stream(2, "ber"));
        let mut lost = [0u64; 2];
        for i in 0..N {
            let bytes = [1500, 40][(i % 2) as usize];
            lost[(i % 2) as usize] += u64::from(!m.transmit(Time::ZERO, Dur::ZERO, bytes));
        }
        for (j, bytes) in [1500, 40].into_iter().enumerate() {
            let want = s.expected_loss(bytes);
            let measured = lost[j] as f64 / (N / 2) as f64;
            assert_within_se(
                &format!("{bytes} B"),
                measured,
                want,
                want * (1.0 - want),
                (N / 2) as f64,
            );
        }
    }

    #[test]
    fn ber_extremes_and_determinism() {
        assert_eq!(
            loss_rate(
                &mut BerSpec { ber: 0.0 }.build(stream(1, "b")),
                10_000,
                1,
                1,
                1500
            ),
            0.0
        );
        assert_eq!(
            loss_rate(
                &mut BerSpec { ber: 1.0 }.build(stream(1, "b")),
                10_000,
                1,
                1,
                1
            ),
            1.0
        );
        assert!(BerSpec { ber: 1.0 }
            .build(stream(1, "b"))
            .transmit(Time::ZERO, Dur::ZERO, 0));
        let s = BerSpec { ber: 1e-4 };
        let a = outcomes(&mut s.build(stream(1, "b")), 2000, 1, 1, 1500);
        assert_eq!(a, outcomes(&mut s.build(stream(1, "b")), 2000, 1, 1, 1500));
        assert_ne!(a, outcomes(&mut s.build(stream(2, "b")), 2000, 1, 1, 1500));
    }
}
