//! Web pages as the LIFT paper's HTTP source draws them (seed 001, Table I): a main object,
//! a number of in-line objects, and a think time before the next page.
//!
//! Table I gives only means and standard deviations. Its numbers are those of Choi and
//! Limb's behavioural model of web traffic (H.-K. Choi, J. O. Limb, "A behavioral model of
//! Web traffic", IEEE ICNP 1999), which fits main and in-line object sizes with lognormal
//! distributions, the number of in-line objects with a gamma distribution and the viewing
//! (think) time with a Weibull distribution; 3GPP2's HTTP model (C.R1002, section 4.2)
//! takes the same object-size moments, also lognormal. Each distribution here is a
//! parameter (`Dist`), built from the table's mean and standard deviation by the method of
//! moments, and every value is drawn from the caller's seeded stream.

use crate::rng::Rng;
use rand_distr::{Distribution, Gamma, LogNormal, Weibull};

/// A distribution by family and first two moments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    LogNormal {
        mean: f64,
        std: f64,
    },
    Gamma {
        mean: f64,
        std: f64,
    },
    Weibull {
        mean: f64,
        std: f64,
    },
    /// Always `value` (for tests and fixed-size experiments).
    Constant {
        value: f64,
    },
}

/// Why a `Dist` cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum DistError {
    #[error("mean {0} must be positive and finite")]
    Mean(f64),
    #[error("standard deviation {0} must be positive and finite")]
    Std(f64),
}

/// A `Dist` ready to draw from.
#[derive(Clone, Copy, Debug)]
enum Sampler {
    LogNormal(LogNormal<f64>),
    Gamma(Gamma<f64>),
    Weibull(Weibull<f64>),
    Constant(f64),
}

impl Dist {
    fn sampler(self) -> Result<Sampler, DistError> {
        let (mean, std) = match self {
            Dist::Constant { value } if value.is_finite() && value >= 0.0 => {
                return Ok(Sampler::Constant(value))
            }
            Dist::Constant { value } => return Err(DistError::Mean(value)),
            Dist::LogNormal { mean, std }
            | Dist::Gamma { mean, std }
            | Dist::Weibull { mean, std } => (mean, std),
        };
        if !(mean.is_finite() && mean > 0.0) {
            return Err(DistError::Mean(mean));
        }
        if !(std.is_finite() && std > 0.0) {
            return Err(DistError::Std(std));
        }
        let cv = std / mean;
        Ok(match self {
            Dist::LogNormal { .. } => {
                // E = exp(mu + s^2/2), Var = E^2 (exp(s^2) - 1).
                let s2 = (1.0 + cv * cv).ln();
                let mu = mean.ln() - s2 / 2.0;
                Sampler::LogNormal(LogNormal::new(mu, s2.sqrt()).map_err(|_| DistError::Std(std))?)
            }
            Dist::Gamma { .. } => {
                // E = k theta, Var = k theta^2.
                let k = 1.0 / (cv * cv);
                Sampler::Gamma(Gamma::new(k, mean / k).map_err(|_| DistError::Std(std))?)
            }
            Dist::Weibull { .. } => {
                let k = weibull_shape(cv);
                let scale = mean / ln_gamma(1.0 + 1.0 / k).exp();
                Sampler::Weibull(Weibull::new(scale, k).map_err(|_| DistError::Std(std))?)
            }
            Dist::Constant { .. } => unreachable!("handled above"),
        })
    }
}

impl Sampler {
    fn draw(&self, rng: &mut Rng) -> f64 {
        // rand_distr draws through `rand::Rng`; our streams implement it.
        match self {
            Sampler::LogNormal(d) => d.sample(rng),
            Sampler::Gamma(d) => d.sample(rng),
            Sampler::Weibull(d) => d.sample(rng),
            Sampler::Constant(v) => *v,
        }
    }
}

/// The Weibull shape k whose coefficient of variation is `cv`:
/// cv^2 = Gamma(1 + 2/k) / Gamma(1 + 1/k)^2 - 1, decreasing in k; found by bisection on
/// ln k (cv from about 0.01 to 1e4 is covered).
fn weibull_shape(cv: f64) -> f64 {
    let cv_of = |k: f64| {
        let g1 = ln_gamma(1.0 + 1.0 / k);
        let g2 = ln_gamma(1.0 + 2.0 / k);
        ((g2 - 2.0 * g1).exp() - 1.0).max(0.0).sqrt()
    };
    let (mut lo, mut hi) = (0.02f64.ln(), 200f64.ln());
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cv_of(mid.exp()) > cv {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo + hi) / 2.0).exp()
}

/// ln Gamma(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + 1.0 + i as f64));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The page model: one distribution per quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HttpModel {
    /// Main object size, bytes.
    pub main_size: Dist,
    /// Number of in-line objects (a draw rounded to the nearest integer).
    pub inline_count: Dist,
    /// In-line object size, bytes.
    pub inline_size: Dist,
    /// Think time before the next page, seconds.
    pub think_time: Dist,
}

impl HttpModel {
    /// Table I of seed 001 with Choi and Limb's families (module doc). KB is taken as
    /// 1000 bytes, as Choi and Limb's byte figures (10,710 and 7,758) show.
    pub const TABLE_I: HttpModel = HttpModel {
        main_size: Dist::LogNormal {
            mean: 10_000.0,
            std: 25_000.0,
        },
        inline_count: Dist::Gamma {
            mean: 5.5,
            std: 11.4,
        },
        inline_size: Dist::LogNormal {
            mean: 7_700.0,
            std: 126_000.0,
        },
        think_time: Dist::Weibull {
            mean: 39.5,
            std: 92.6,
        },
    };

    /// Checks every distribution; the error names the quantity.
    pub fn pages(&self) -> Result<Pages, (&'static str, DistError)> {
        Ok(Pages {
            main_size: self.main_size.sampler().map_err(|e| ("main_size", e))?,
            inline_count: self
                .inline_count
                .sampler()
                .map_err(|e| ("inline_count", e))?,
            inline_size: self.inline_size.sampler().map_err(|e| ("inline_size", e))?,
            think_time: self.think_time.sampler().map_err(|e| ("think_time", e))?,
        })
    }
}

/// How a web page starts: its main object and how many in-line objects follow. The
/// in-line objects' sizes and the think time are drawn later, as the browser reaches them
/// (`Pages::inline_size`, `Pages::think_time`), so memory does not grow with the count
/// drawn: a count of 10^9 costs no more than one of 5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageStart {
    pub main_size: u64,
    pub inline_count: u64,
}

/// Draws pages from a checked `HttpModel`. Within a page the draws come in this order:
/// the main object's size, the in-line count, each in-line size, the think time; a
/// browser that asks for them in that order gets the same pages from the same stream,
/// whenever it asks.
#[derive(Clone, Copy, Debug)]
pub struct Pages {
    main_size: Sampler,
    inline_count: Sampler,
    inline_size: Sampler,
    think_time: Sampler,
}

/// A size in whole bytes, at least one (a lognormal draw below 0.5 would round to an
/// empty object, which HTTP does not fetch). A draw beyond 2^64 - 1 saturates there.
fn size(s: &Sampler, rng: &mut Rng) -> u64 {
    (s.draw(rng).round() as u64).max(1)
}

impl Pages {
    /// The next page's main object and in-line count.
    pub fn start(&self, rng: &mut Rng) -> PageStart {
        let main_size = size(&self.main_size, rng);
        // `as` saturates: a count beyond 2^64 - 1 (or infinite) is 2^64 - 1.
        let inline_count = self.inline_count.draw(rng).round().max(0.0) as u64;
        PageStart {
            main_size,
            inline_count,
        }
    }

    /// The size of the page's next in-line object.
    pub fn inline_size(&self, rng: &mut Rng) -> u64 {
        size(&self.inline_size, rng)
    }

    /// The think time after the page, in seconds (at least 0).
    pub fn think_time(&self, rng: &mut Rng) -> f64 {
        self.think_time.draw(rng).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn draws(d: Dist, n: usize) -> Vec<f64> {
        let s = d.sampler().unwrap();
        let mut rng = stream(7, "http-test");
        (0..n).map(|_| s.draw(&mut rng)).collect()
    }

    fn mean_sd(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
        (m, v.sqrt())
    }

    #[test]
    fn a_huge_in_line_count_is_a_number_not_an_allocation() {
        let c = |value| Dist::Constant { value };
        let model = HttpModel {
            inline_count: c(1e18),
            ..HttpModel::TABLE_I
        };
        let p = model.pages().unwrap().start(&mut stream(1, "t"));
        assert_eq!(p.inline_count, 1_000_000_000_000_000_000);
        let model = HttpModel {
            inline_count: c(1e300),
            main_size: c(1e300),
            ..HttpModel::TABLE_I
        };
        let p = model.pages().unwrap().start(&mut stream(1, "t"));
        assert_eq!((p.main_size, p.inline_count), (u64::MAX, u64::MAX));
    }

    #[test]
    fn ln_gamma_matches_known_values() {
        // Gamma(1) = Gamma(2) = 1, Gamma(5) = 24, Gamma(1/2) = sqrt(pi).
        assert!(ln_gamma(1.0).abs() < 1e-12);
        assert!(ln_gamma(2.0).abs() < 1e-12);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn lognormal_has_the_tables_log_moments() {
        // The sample mean of a lognormal with cv 16 converges too slowly to test; its log
        // is normal with the moments the method of moments sets.
        let (mean, std) = (7_700.0, 126_000.0);
        let x = draws(Dist::LogNormal { mean, std }, 200_000);
        let logs: Vec<f64> = x.iter().map(|v| v.ln()).collect();
        let (m, s) = mean_sd(&logs);
        let s2 = (1.0 + (std / mean) * (std / mean)).ln();
        let mu = mean.ln() - s2 / 2.0;
        let se = s2.sqrt() / (x.len() as f64).sqrt();
        assert!((m - mu).abs() < 5.0 * se, "{m} vs {mu}");
        assert!((s - s2.sqrt()).abs() < 0.01 * s2.sqrt(), "{s}");
    }

    #[test]
    fn gamma_and_weibull_have_the_tables_mean_and_std() {
        for (d, mean, std) in [
            (
                Dist::Gamma {
                    mean: 5.5,
                    std: 11.4,
                },
                5.5,
                11.4,
            ),
            (
                Dist::Weibull {
                    mean: 39.5,
                    std: 92.6,
                },
                39.5,
                92.6,
            ),
        ] {
            let x = draws(d, 400_000);
            let (m, s) = mean_sd(&x);
            let se = std / (x.len() as f64).sqrt();
            assert!((m - mean).abs() < 5.0 * se, "{d:?}: mean {m}");
            assert!((s - std).abs() < 0.1 * std, "{d:?}: std {s}");
        }
    }

    #[test]
    fn pages_are_reproducible_and_bad_moments_are_named() {
        let pages = HttpModel::TABLE_I.pages().unwrap();
        let run = || {
            let mut rng = stream(3, "web/mh");
            (0..50)
                .map(|_| {
                    let p = pages.start(&mut rng);
                    let sizes: Vec<u64> = (0..p.inline_count)
                        .map(|_| pages.inline_size(&mut rng))
                        .collect();
                    (p, sizes, pages.think_time(&mut rng))
                })
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        assert!(a.iter().all(|(p, sizes, think)| p.main_size >= 1
            && sizes.iter().all(|&s| s >= 1)
            && *think >= 0.0));
        let bad = HttpModel {
            think_time: Dist::Weibull {
                mean: 39.5,
                std: -1.0,
            },
            ..HttpModel::TABLE_I
        };
        assert_eq!(
            bad.pages().unwrap_err(),
            ("think_time", DistError::Std(-1.0))
        );
    }
}
