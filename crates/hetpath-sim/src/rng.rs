//! Seeded random streams, one per component (docs/architecture.md, convention 3).
//!
//! A component's stream is derived from the scenario seed and the component's stable name
//! (for example `link/sat/ab/channel`), so adding a component never perturbs the draws of
//! the others, and the same scenario and seed give the same bytes on every machine.

use rand_core::SeedableRng;
pub use rand_xoshiro::Xoshiro256PlusPlus as Rng;

/// FNV-1a over the name, then SplitMix64 mixing with the seed: cheap, stable, well spread.
pub fn stream(seed: u64, component: &str) -> Rng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in component.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Rng::seed_from_u64(splitmix64(seed ^ splitmix64(h)))
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A uniform draw in [0, 1) with 53 bits of precision.
pub fn uniform(rng: &mut Rng) -> f64 {
    use rand_core::Rng as _;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_component_and_seed() {
        let a = uniform(&mut stream(1, "a"));
        assert_eq!(a, uniform(&mut stream(1, "a")));
        assert_ne!(a, uniform(&mut stream(1, "b")));
        assert_ne!(a, uniform(&mut stream(2, "a")));
    }
}
