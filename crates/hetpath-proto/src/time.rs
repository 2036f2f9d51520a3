//! Virtual time: integer nanoseconds, never `std::time` (docs/architecture.md, convention 2).
//!
//! `Time` is an instant since the start of a run, `Dur` a span. Arithmetic saturates
//! so that "never" (`Time::MAX`) stays never.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant in virtual time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A span of virtual time, in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub u64);

/// The earlier of two optional deadlines (`poll_timeout`s combine theirs this way).
pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn from_secs_f64(s: f64) -> Time {
        Time(Dur::from_secs_f64(s).0)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Span since an earlier instant; zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(n: u64) -> Dur {
        Dur(n)
    }
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN gives zero, huge gives `MAX`.
    pub fn from_secs_f64(s: f64) -> Dur {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else if s >= u64::MAX as f64 * 1e-9 {
            Dur::MAX
        } else {
            Dur((s * 1e9).round() as u64)
        }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Time to serialise `bytes` at `bits_per_sec`, rounded up to the next nanosecond.
    pub fn serialization(bytes: u64, bits_per_sec: u64) -> Dur {
        if bits_per_sec == 0 {
            return Dur::MAX;
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Dur(bits.div_ceil(bits_per_sec as u128).min(u64::MAX as u128) as u64)
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}
impl Sub<Dur> for Time {
    type Output = Time;
    fn sub(self, d: Dur) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Debug for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}ms", self.0 as f64 * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_rounds_up() {
        // 1500 bytes at 10 Mbit/s is exactly 1.2 ms.
        assert_eq!(Dur::serialization(1500, 10_000_000), Dur::from_micros(1200));
        // 1 byte at 3 bit/s is 8/3 s, rounded up.
        assert_eq!(Dur::serialization(1, 3), Dur(2_666_666_667));
    }

    #[test]
    fn saturating() {
        assert_eq!(Time::MAX + Dur(5), Time::MAX);
        assert_eq!(Time(3).since(Time(5)), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
    }
}
