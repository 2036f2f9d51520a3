//! Exact binomial probabilities for the `fec` model's codeword failure: no normal or
//! Poisson approximation, every term summed in f64 from its log (n <= 255 in practice).

use std::sync::{Arc, Mutex};

/// PMF of Binomial(n, p) for i = 0..=n, each term computed in log space so that tiny
/// probabilities (1e-100 and below) stay accurate instead of underflowing a product.
fn pmf(n: u32, p: f64) -> Vec<f64> {
    let mut f = vec![0.0; n as usize + 1];
    if p <= 0.0 {
        f[0] = 1.0;
        return f;
    }
    if p >= 1.0 {
        f[n as usize] = 1.0;
        return f;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut ln_choose = 0.0; // ln C(n, i), updated incrementally
    for i in 0..=n {
        if i > 0 {
            ln_choose += f64::from(n - i + 1).ln() - f64::from(i).ln();
        }
        f[i as usize] = (ln_choose + f64::from(i) * lp + f64::from(n - i) * lq).exp();
    }
    f
}

/// P(Binomial(n, p) > t): the probability that more than `t` of `n` independent symbols,
/// each wrong with probability `p`, are wrong. Summed over the tail terms directly (not
/// as 1 - CDF) so that small failure probabilities keep their relative precision.
pub fn binomial_tail(n: u32, p: f64, t: u32) -> f64 {
    if t >= n {
        return 0.0;
    }
    pmf(n, p)[t as usize + 1..]
        .iter()
        .rev()
        .sum::<f64>()
        .min(1.0)
}

/// `table[b]` = P(Bin(b, e_bad) + Bin(n - b, e_good) > t) for b = 0..=n: the failure
/// probability of an n-symbol codeword correcting `t` errors when `b` of its symbols were
/// sent in the bad state (error probability `e_bad`) and the rest in the good state.
pub(super) fn mixed_failure_table(n: u32, t: u32, e_good: f64, e_bad: f64) -> Vec<f64> {
    (0..=n)
        .map(|b| {
            let x = pmf(b, e_bad);
            let y = pmf(n - b, e_good);
            // above[m] = P(Y > m), summed from the small end.
            let mut above = vec![0.0; y.len()];
            let mut acc = 0.0;
            for m in (0..y.len()).rev() {
                above[m] = acc;
                acc += y[m];
            }
            let t = t as usize;
            let p: f64 = x
                .iter()
                .enumerate()
                .map(|(i, &px)| match t.checked_sub(i) {
                    None => px, // already more than t errors from the bad symbols
                    Some(m) => px * above.get(m).copied().unwrap_or(0.0),
                })
                .sum();
            p.min(1.0)
        })
        .collect()
}

/// Results already computed, so that building many links or runs with the same code
/// costs one computation. Small and cleared when full; values never depend on it.
struct Memo<K, V>(Mutex<Vec<(K, V)>>);

impl<K: PartialEq + Copy, V: Clone> Memo<K, V> {
    const fn new() -> Self {
        Memo(Mutex::new(Vec::new()))
    }
    fn get(&self, key: K, compute: impl FnOnce() -> V) -> V {
        let lock = || self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = lock().iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let v = compute();
        let mut memo = lock();
        if memo.len() >= 64 {
            memo.clear();
        }
        memo.push((key, v.clone()));
        v
    }
}

/// `binomial_tail(n, p, t)`, cached per (n, t, p).
pub(super) fn cached_tail(n: u32, p: f64, t: u32) -> f64 {
    static MEMO: Memo<(u32, u32, u64), f64> = Memo::new();
    MEMO.get((n, t, p.to_bits()), || binomial_tail(n, p, t))
}

/// `mixed_failure_table(n, t, e_good, e_bad)`, cached per parameters and shared.
pub(super) fn cached_failure_table(n: u32, t: u32, e_good: f64, e_bad: f64) -> Arc<[f64]> {
    static MEMO: Memo<(u32, u32, u64, u64), Arc<[f64]>> = Memo::new();
    MEMO.get((n, t, e_good.to_bits(), e_bad.to_bits()), || {
        mixed_failure_table(n, t, e_good, e_bad).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: direct sum with exact integer binomial coefficients (small n only).
    fn direct_tail(n: u32, p: f64, t: u32) -> f64 {
        let mut c = 1u128; // C(n, i)
        let mut s = 0.0;
        for i in 0..=n {
            if i > t {
                s += c as f64 * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32);
            }
            c = c * u128::from(n - i) / u128::from(i + 1);
        }
        s
    }

    #[test]
    fn fec_math_tail_matches_direct_sum() {
        for (n, p, t) in [
            (15, 0.1, 2),
            (31, 0.05, 3),
            (63, 0.2, 10),
            (100, 0.01, 0),
            (7, 0.5, 6),
        ] {
            let (a, b) = (binomial_tail(n, p, t), direct_tail(n, p, t));
            assert!(
                (a - b).abs() <= 1e-12 * b.max(1e-300),
                "n={n} p={p} t={t}: {a} vs {b}"
            );
        }
        assert_eq!(binomial_tail(255, 0.0, 16), 0.0);
        assert_eq!(binomial_tail(255, 1.0, 16), 1.0);
        assert_eq!(binomial_tail(10, 0.3, 10), 0.0);
        // Deep tail keeps relative precision: P(Bin(255, 1e-6) > 16) ~ C(255,17) 1e-102.
        let deep = binomial_tail(255, 1e-6, 16);
        assert!(deep > 1e-80 && deep < 1e-75, "{deep}");
    }

    #[test]
    fn fec_math_mixed_table() {
        // Hard errors: a codeword fails iff more than t symbols are bad.
        let hard = mixed_failure_table(15, 4, 0.0, 1.0);
        for (b, &f) in hard.iter().enumerate() {
            assert_eq!(f, if b > 4 { 1.0 } else { 0.0 }, "b = {b}");
        }
        // b = 0 is the i.i.d. good-state tail; equal rates reduce to one binomial.
        let t = mixed_failure_table(31, 3, 0.02, 0.3);
        assert!((t[0] - binomial_tail(31, 0.02, 3)).abs() < 1e-15);
        assert!((t[31] - binomial_tail(31, 0.3, 3)).abs() < 1e-12);
        let same = mixed_failure_table(31, 3, 0.1, 0.1);
        assert!(same
            .iter()
            .all(|&f| (f - binomial_tail(31, 0.1, 3)).abs() < 1e-12));
        assert!(
            t.windows(2).all(|w| w[0] <= w[1] + 1e-15),
            "more bad symbols never help"
        );
        assert_eq!(&*cached_failure_table(31, 3, 0.02, 0.3), &t[..]);
        assert_eq!(cached_tail(31, 0.02, 3), t[0]);
    }
}
