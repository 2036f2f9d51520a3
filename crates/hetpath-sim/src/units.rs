//! Quantities written with units in scenario and channel tables: "10Mbps", "300ms",
//! "5MB", "100pkt". A leaf module: links and channels use these types, and the scenario
//! layer parses them, without either knowing of the other.
//!
//! Each type deserialises from a string with a unit (a bare number is an error: units
//! are never guessed), and its error says what was expected.

use hetpath_proto::Dur;
use serde::{de, Deserialize, Deserializer};
use std::fmt;

/// A bit rate in bits per second. Units: bps, kbps, Mbps, Gbps (decimal, SI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

/// A duration. Units: ns, us, ms, s, min.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub Dur);

/// A byte count. Units: B, KB, MB, GB (decimal), KiB, MiB, GiB (binary).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// A queue limit: in packets ("100pkt") or in bytes ("150KB").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

/// Why a quantity with a unit could not be read; the text says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' does not start with a number")]
    NotANumber(String),
    #[error("'{0}' is negative or not finite")]
    Negative(String),
    #[error("'{text}' has no unit; expected a {what} such as '10{example}' (units: {units})")]
    NoUnit {
        text: String,
        what: &'static str,
        example: &'static str,
        units: String,
    },
    #[error("'{text}' has an unknown unit '{unit}'; expected a {what} in {units}")]
    UnknownUnit {
        text: String,
        unit: String,
        what: &'static str,
        units: String,
    },
    /// Beyond what 64 bits hold: an error, never a clamp to the largest value.
    #[error("'{text}' is too large: the limit is {limit}")]
    TooLarge { text: String, limit: &'static str },
    #[error("'{0}' is below 1 bps; a link needs a positive rate")]
    BelowOneBps(String),
    #[error("'{0}': a queue in packets needs a whole number of at least 1")]
    NotWholePackets(String),
    #[error("'{0}' is not a queue size; expected packets ('100pkt') or bytes ('150KB')")]
    NotAQueue(String),
}

/// Splits "12.5Mbps" into (12.5, "Mbps"); rejects negatives, NaN and missing numbers.
fn split(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    let cut = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(cut);
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::NotANumber(s.to_string()))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError::Negative(s.to_string()));
    }
    Ok((v, unit.trim()))
}

/// 2^64 as f64: the first value a u64 cannot hold.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// `v` rounded to a u64, or `TooLarge` for `s` if it does not fit.
fn whole(v: f64, s: &str, limit: &'static str) -> Result<u64, UnitError> {
    let r = v.round();
    if r >= TWO_64 {
        return Err(UnitError::TooLarge {
            text: s.trim().to_string(),
            limit,
        });
    }
    Ok(r as u64)
}

fn scaled(s: &str, units: &[(&'static str, f64)], what: &'static str) -> Result<f64, UnitError> {
    let (v, unit) = split(s)?;
    let names: Vec<&str> = units.iter().map(|u| u.0).collect();
    match units.iter().find(|(u, _)| *u == unit) {
        Some((_, k)) => Ok(v * k),
        None if unit.is_empty() => Err(UnitError::NoUnit {
            text: s.to_string(),
            what,
            example: units[1.min(units.len() - 1)].0,
            units: names.join(", "),
        }),
        None => Err(UnitError::UnknownUnit {
            text: s.to_string(),
            unit: unit.to_string(),
            what,
            units: names.join(", "),
        }),
    }
}

impl std::str::FromStr for Rate {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Rate, UnitError> {
        let v = scaled(
            s,
            &[
                ("bps", 1.0),
                ("kbps", 1e3),
                ("Kbps", 1e3),
                ("Mbps", 1e6),
                ("Gbps", 1e9),
            ],
            "rate",
        )?;
        if v < 1.0 {
            return Err(UnitError::BelowOneBps(s.to_string()));
        }
        Ok(Rate(whole(
            v,
            s,
            "18446744073709551615 bps (about 18.4 Ebps)",
        )?))
    }
}

impl std::str::FromStr for Duration {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Duration, UnitError> {
        let v = scaled(
            s,
            &[
                ("ns", 1e-9),
                ("us", 1e-6),
                ("ms", 1e-3),
                ("s", 1.0),
                ("min", 60.0),
            ],
            "duration",
        )?;
        // In ns, as `Dur` holds it.
        let ns = whole(v * 1e9, s, "2^64 - 1 ns (about 584 years)")?;
        Ok(Duration(Dur(ns)))
    }
}

impl std::str::FromStr for Bytes {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Bytes, UnitError> {
        let units = [
            ("B", 1.0),
            ("KB", 1e3),
            ("kB", 1e3),
            ("MB", 1e6),
            ("GB", 1e9),
            ("KiB", 1024.0),
            ("MiB", 1048576.0),
            ("GiB", 1073741824.0),
        ];
        let v = scaled(s, &units, "size")?;
        Ok(Bytes(whole(
            v,
            s,
            "18446744073709551615 B (about 18.4 EB)",
        )?))
    }
}

impl std::str::FromStr for QueueLimit {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<QueueLimit, UnitError> {
        let (v, unit) = split(s)?;
        if matches!(unit, "pkt" | "pkts" | "packets" | "p") {
            if v.fract() != 0.0 || v < 1.0 {
                return Err(UnitError::NotWholePackets(s.to_string()));
            }
            return Ok(QueueLimit::Packets(whole(
                v,
                s,
                "18446744073709551615 packets",
            )?));
        }
        match s.parse::<Bytes>() {
            Ok(b) => Ok(QueueLimit::Bytes(b.0)),
            Err(e @ UnitError::TooLarge { .. }) => Err(e),
            Err(_) => Err(UnitError::NotAQueue(s.to_string())),
        }
    }
}

/// Deserialises any of the unit types from a TOML string.
macro_rules! from_string {
    ($t:ty, $expect:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$t, E> {
                        s.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

from_string!(Rate, "a rate string such as \"10Mbps\"");
from_string!(Duration, "a duration string such as \"300ms\"");
from_string!(Bytes, "a size string such as \"5MB\"");
from_string!(QueueLimit, "a queue size such as \"100pkt\" or \"150KB\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("10Mbps".parse::<Rate>(), Ok(Rate(10_000_000)));
        assert_eq!("64 kbps".parse::<Rate>(), Ok(Rate(64_000)));
        assert_eq!(
            "300ms".parse::<Duration>(),
            Ok(Duration(Dur::from_millis(300)))
        );
        assert_eq!(
            "1.5s".parse::<Duration>(),
            Ok(Duration(Dur::from_millis(1500)))
        );
        assert_eq!("5MB".parse::<Bytes>(), Ok(Bytes(5_000_000)));
        assert_eq!("100pkt".parse::<QueueLimit>(), Ok(QueueLimit::Packets(100)));
        assert_eq!(
            "150KB".parse::<QueueLimit>(),
            Ok(QueueLimit::Bytes(150_000))
        );
    }

    #[test]
    fn rejects_bad_input_with_reason() {
        let msg = |e: UnitError| e.to_string();
        assert!(msg("-5Mbps".parse::<Rate>().unwrap_err()).contains("negative"));
        assert!(msg("10Mbs".parse::<Rate>().unwrap_err()).contains("unknown unit"));
        assert!(msg("10".parse::<Duration>().unwrap_err()).contains("no unit"));
        assert!(msg("fast".parse::<Rate>().unwrap_err()).contains("number"));
        assert!("0.5pkt".parse::<QueueLimit>().is_err());
    }

    #[test]
    fn values_beyond_u64_are_errors_not_clamps() {
        let huge = [
            "20000000000Gbps".parse::<Rate>().map(|_| ()),
            "18446744073709551616bps".parse::<Rate>().map(|_| ()),
            "20000000000GB".parse::<Bytes>().map(|_| ()),
            "100000000000000000000B".parse::<Bytes>().map(|_| ()),
            "1000000000000s".parse::<Duration>().map(|_| ()),
            "1000000000000000min".parse::<Duration>().map(|_| ()),
            "100000000000000000000pkt".parse::<QueueLimit>().map(|_| ()),
            "100000000000000000000B".parse::<QueueLimit>().map(|_| ()),
        ];
        for r in huge {
            let e = r.expect_err("a huge value was clamped").to_string();
            assert!(e.contains("too large"), "{e}");
            assert!(
                e.starts_with("'1") || e.starts_with("'2"),
                "names the value: {e}"
            );
            assert!(!e.contains('\n'));
        }
        // The largest values that fit are still read.
        assert_eq!(
            "18000000000Gbps".parse::<Rate>(),
            Ok(Rate(18_000_000_000_000_000_000))
        );
        assert_eq!(
            "18000000000GB".parse::<Bytes>(),
            Ok(Bytes(18_000_000_000_000_000_000))
        );
        assert_eq!(
            "18000000000s".parse::<Duration>(),
            Ok(Duration(Dur(18_000_000_000_000_000_000)))
        );
    }
}
