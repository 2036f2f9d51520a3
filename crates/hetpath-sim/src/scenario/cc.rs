//! `cc`: a flow's (or a PEP's) congestion controller, as a name (`cc = "cubic"`) or as a
//! table tagged by `name` with the controller's own parameters (`[flow.cc] name =
//! "cubic", beta = 0.7`). Each controller's table rejects keys it does not have, and is
//! checked here without building a controller (the `ChannelSpec` pattern).

use super::error::KeyError;
use crate::units::{Duration, Rate};
use hetpath_proto::cc::{
    Algorithm, CubicConfig, HyblaConfig, MpcpConfig, RadioConfig, SatpepConfig, NAMES,
};
use hetpath_proto::Dur;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// `cc = "name"` or `cc = { name = "...", ... }`.
#[derive(Debug, Clone, PartialEq)]
pub enum CcSpec {
    Name(String),
    Table(CcTable),
}

/// The controllers and their parameters, tagged by `name`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CcTable {
    // Struct variants, so that extra keys are rejected (serde ignores them on unit
    // variants).
    Tahoe {},
    Reno {},
    Newreno {},
    #[serde(rename = "westwood+", alias = "westwood", alias = "westwoodplus")]
    WestwoodPlus(WestwoodSpec),
    Cubic(CubicSpec),
    Hybla(HyblaSpec),
    TcpRadio(RadioSpec),
    Xcp {},
    Vcp {},
    Mpcp(MpcpSpec),
    XcpPep {},
    MpcpPep {},
    Satpep(SatpepSpec),
}

/// RFC 9438 section 5: C and beta_cubic; and `linux`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    pub c: Option<f64>,
    pub beta: Option<f64>,
    /// Linux tcp_cubic.c's rules instead of the RFC's (default false; the `linux` profile
    /// sets it; `hetpath_proto::cc::CubicConfig::linux`).
    pub linux: Option<bool>,
}

/// Westwood+: `acked` says how a bandwidth sample counts data that duplicate ACKs (SACKs)
/// reported before the cumulative ACK covered it: `"once"` (default; MobiCom 2001
/// AckedCount, Linux `westwood_acked_count`) or `"twice"` (ns-3 `TcpWestwoodPlus`).
/// `filter_stages`: cascaded 7/8 filter stages, 2 (default, Linux) or 1.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WestwoodSpec {
    pub acked: Option<String>,
    pub filter_stages: Option<u8>,
}

/// Hybla's reference RTT (default 25 ms, the paper's and Linux's), and `linux`: Linux
/// tcp_hybla.c's rules instead of the paper's (default false; the `linux` profile sets it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyblaSpec {
    pub rtt0: Option<Duration>,
    pub linux: Option<bool>,
}

/// TCP-radio: grow one segment per ACK (seed 003 Table 3) instead of holding the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RadioSpec {
    pub growth: Option<bool>,
}

/// SaTPEP: the rate it paces at (required; the satellite link's dedicated capacity).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SatpepSpec {
    pub rate: Option<Rate>,
}

/// MPCP: packets n that carry one load-factor code (2 or 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpcpSpec {
    pub packets: Option<u8>,
}

impl CcSpec {
    /// The controller's name as written.
    pub fn name(&self) -> &str {
        match self {
            CcSpec::Name(n) => n,
            CcSpec::Table(t) => t.algorithm_name(),
        }
    }

    /// The algorithm with its parameters, checked. Errors name the key under `cc`.
    pub fn algorithm(&self) -> Result<Algorithm, KeyError> {
        match self {
            // A rate-based protocol must be told its rate.
            CcSpec::Name(n) if n == "satpep" => Err(satpep_needs_a_rate("")),
            CcSpec::Name(n) => Algorithm::by_name(n).ok_or_else(|| {
                KeyError::new(
                    "",
                    format!(
                        "unknown controller '{n}'; expected one of {}",
                        NAMES.join(", ")
                    ),
                )
            }),
            CcSpec::Table(t) => t.algorithm(),
        }
    }

    /// The algorithm with a profile's keys for its table (`Profile::cc_keys`) below the
    /// keys written: `cc = "hybla"` under the `linux` profile is Linux's Hybla.
    pub fn algorithm_under(&self, defaults: Option<&str>) -> Result<Algorithm, KeyError> {
        let Some(name) = Algorithm::by_name(self.name()).map(|a| a.name()) else {
            return self.algorithm(); // unknown: its error
        };
        let Some(keys) = defaults else {
            return self.algorithm();
        };
        let base: CcTable = toml::from_str(&format!("name = \"{name}\"\n{keys}"))
            .expect("profiles' cc keys are valid tables (tested)");
        match self {
            CcSpec::Name(_) => base.algorithm(),
            CcSpec::Table(t) => t.over(&base).algorithm(),
        }
    }
}

impl CcTable {
    /// This table's keys over `base`'s, for the same controller.
    fn over(&self, base: &CcTable) -> CcTable {
        use CcTable as T;
        match (self, base) {
            (T::WestwoodPlus(a), T::WestwoodPlus(b)) => T::WestwoodPlus(WestwoodSpec {
                acked: a.acked.clone().or_else(|| b.acked.clone()),
                filter_stages: a.filter_stages.or(b.filter_stages),
            }),
            (T::Cubic(a), T::Cubic(b)) => T::Cubic(CubicSpec {
                c: a.c.or(b.c),
                beta: a.beta.or(b.beta),
                linux: a.linux.or(b.linux),
            }),
            (T::Hybla(a), T::Hybla(b)) => T::Hybla(HyblaSpec {
                rtt0: a.rtt0.or(b.rtt0),
                linux: a.linux.or(b.linux),
            }),
            (T::TcpRadio(a), T::TcpRadio(b)) => T::TcpRadio(RadioSpec {
                growth: a.growth.or(b.growth),
            }),
            (T::Mpcp(a), T::Mpcp(b)) => T::Mpcp(MpcpSpec {
                packets: a.packets.or(b.packets),
            }),
            (T::Satpep(a), T::Satpep(b)) => T::Satpep(SatpepSpec {
                rate: a.rate.or(b.rate),
            }),
            // Controllers without parameters, or another controller's keys.
            _ => self.clone(),
        }
    }

    fn algorithm_name(&self) -> &'static str {
        match self {
            CcTable::Tahoe {} => "tahoe",
            CcTable::Reno {} => "reno",
            CcTable::Newreno {} => "newreno",
            CcTable::WestwoodPlus(_) => "westwood+",
            CcTable::Cubic(_) => "cubic",
            CcTable::Hybla(_) => "hybla",
            CcTable::TcpRadio(_) => "tcp-radio",
            CcTable::Xcp {} => "xcp",
            CcTable::Vcp {} => "vcp",
            CcTable::Mpcp(_) => "mpcp",
            CcTable::XcpPep {} => "xcp-pep",
            CcTable::MpcpPep {} => "mpcp-pep",
            CcTable::Satpep(_) => "satpep",
        }
    }

    fn algorithm(&self) -> Result<Algorithm, KeyError> {
        Ok(match self {
            CcTable::Tahoe {} => Algorithm::Tahoe,
            CcTable::Reno {} => Algorithm::Reno,
            CcTable::Newreno {} => Algorithm::NewReno,
            CcTable::WestwoodPlus(s) => {
                let Algorithm::WestwoodPlus {
                    count_twice,
                    filter_stages,
                } = Algorithm::westwood_plus()
                else {
                    unreachable!()
                };
                let count_twice = match s.acked.as_deref() {
                    None => count_twice,
                    Some("once") => false,
                    Some("twice") => true,
                    Some(v) => {
                        return Err(KeyError::new(
                            "acked",
                            format!("'{v}' is not one of \"once\", \"twice\""),
                        ))
                    }
                };
                let filter_stages = match s.filter_stages {
                    None => filter_stages,
                    Some(n @ 1..=2) => n,
                    Some(n) => {
                        return Err(KeyError::new(
                            "filter_stages",
                            format!("{n} is not supported; expected 1 or 2"),
                        ))
                    }
                };
                Algorithm::WestwoodPlus {
                    count_twice,
                    filter_stages,
                }
            }
            CcTable::Cubic(s) => {
                let d = CubicConfig::default();
                let c = s.c.unwrap_or(d.c);
                let beta = s.beta.unwrap_or(d.beta);
                if !(c.is_finite() && c > 0.0) {
                    return Err(KeyError::new("c", format!("{c} is not a positive number")));
                }
                if !(beta > 0.0 && beta < 1.0) {
                    return Err(KeyError::new("beta", format!("{beta} is outside (0, 1)")));
                }
                Algorithm::Cubic(CubicConfig {
                    c,
                    beta,
                    linux: s.linux.unwrap_or(false),
                })
            }
            CcTable::Hybla(s) => {
                let rtt0 = s.rtt0.map_or(HyblaConfig::default().rtt0, |d| d.0);
                if rtt0 == Dur::ZERO {
                    return Err(KeyError::new("rtt0", "must be greater than zero"));
                }
                Algorithm::Hybla(HyblaConfig {
                    rtt0,
                    linux: s.linux.unwrap_or(false),
                })
            }
            CcTable::TcpRadio(s) => Algorithm::TcpRadio(RadioConfig {
                growth: s.growth.unwrap_or(false),
            }),
            CcTable::Xcp {} => Algorithm::Xcp,
            CcTable::Vcp {} => Algorithm::Vcp,
            CcTable::Mpcp(s) => match s.packets {
                None => Algorithm::Mpcp(MpcpConfig::default()),
                Some(n @ 2..=3) => Algorithm::Mpcp(MpcpConfig { packets: n }),
                Some(n) => {
                    return Err(KeyError::new(
                        "packets",
                        format!("{n} is not supported; expected 2 or 3"),
                    ))
                }
            },
            CcTable::XcpPep {} => Algorithm::XcpPep,
            CcTable::MpcpPep {} => Algorithm::MpcpPep,
            CcTable::Satpep(s) => match s.rate {
                Some(Rate(rate_bps)) => Algorithm::Satpep(SatpepConfig { rate_bps }),
                None => return Err(satpep_needs_a_rate("rate")),
            },
        })
    }
}

fn satpep_needs_a_rate(key: &str) -> KeyError {
    KeyError::new(
        key,
        "missing: satpep paces at a rate it must be given, e.g. \
         cc = { name = \"satpep\", rate = \"20Mbps\" } (the satellite link's capacity)",
    )
}

impl<'de> Deserialize<'de> for CcSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CcSpec, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CcSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a controller name, or a table with `name` and its parameters")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CcSpec, E> {
                Ok(CcSpec::Name(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CcSpec, A::Error> {
                CcTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(CcSpec::Table)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct W {
        cc: CcSpec,
    }

    fn parse(s: &str) -> Result<Algorithm, String> {
        let w: W = toml::from_str(s).map_err(|e| e.message().to_string())?;
        w.cc.algorithm().map_err(|e| e.to_string())
    }

    #[test]
    fn a_name_or_a_table_with_parameters() {
        assert_eq!(
            parse("cc = \"hybla\""),
            Ok(Algorithm::Hybla(HyblaConfig::default()))
        );
        assert_eq!(
            parse("cc = { name = \"cubic\", beta = 0.8 }"),
            Ok(Algorithm::Cubic(CubicConfig {
                c: 0.4,
                beta: 0.8,
                linux: false
            }))
        );
        assert_eq!(
            parse("[cc]\nname = \"hybla\"\nrtt0 = \"50ms\""),
            Ok(Algorithm::Hybla(HyblaConfig {
                rtt0: Dur::from_millis(50),
                linux: false,
            }))
        );
        assert_eq!(
            parse("cc = { name = \"mpcp\", packets = 3 }"),
            Ok(Algorithm::Mpcp(MpcpConfig { packets: 3 }))
        );
        assert_eq!(
            parse("cc = { name = \"westwood\" }"),
            Ok(Algorithm::westwood_plus())
        );
        assert_eq!(
            parse("cc = { name = \"westwood+\", acked = \"twice\", filter_stages = 1 }"),
            Ok(Algorithm::WestwoodPlus {
                count_twice: true,
                filter_stages: 1
            })
        );
        assert_eq!(
            parse("cc = { name = \"westwood+\", acked = \"once\" }"),
            Ok(Algorithm::westwood_plus())
        );
    }

    #[test]
    fn every_name_is_a_table_too() {
        // SaTPEP has a required key: it is a table only (below).
        for n in NAMES.iter().filter(|n| **n != "satpep") {
            let by_name = parse(&format!("cc = \"{n}\"")).unwrap();
            let by_table = parse(&format!("cc = {{ name = \"{n}\" }}")).unwrap();
            assert_eq!(by_name, by_table, "{n}");
        }
    }

    #[test]
    fn satpep_takes_a_required_rate() {
        assert_eq!(
            parse("cc = { name = \"satpep\", rate = \"20Mbps\" }"),
            Ok(Algorithm::Satpep(SatpepConfig {
                rate_bps: 20_000_000
            }))
        );
        assert_eq!(
            parse("[cc]\nname = \"satpep\"\nrate = \"6.5Mbps\""),
            Ok(Algorithm::Satpep(SatpepConfig {
                rate_bps: 6_500_000
            }))
        );
        let by_name = parse("cc = \"satpep\"").unwrap_err();
        assert!(
            by_name.starts_with(": missing: satpep paces at a rate"),
            "{by_name}"
        );
        let no_rate = parse("cc = { name = \"satpep\" }").unwrap_err();
        assert!(no_rate.starts_with("rate: missing: "), "{no_rate}");
        assert!(parse("cc = { name = \"satpep\", rate = \"20\" }")
            .unwrap_err()
            .contains("has no unit"));
        assert!(parse("cc = { name = \"satpep\", rate = \"0bps\" }")
            .unwrap_err()
            .contains("below 1 bps"));
        assert!(
            parse("cc = { name = \"satpep\", rate = \"20Mbps\", window = 10 }")
                .unwrap_err()
                .contains("unknown field `window`, expected `rate`")
        );
    }

    #[test]
    fn bad_values_and_foreign_keys_name_the_key() {
        assert!(parse("cc = \"vegas\"")
            .unwrap_err()
            .contains("unknown controller 'vegas'"));
        assert!(parse("cc = { name = \"cubic\", beta = 1.5 }")
            .unwrap_err()
            .starts_with("beta: "));
        assert!(parse("cc = { name = \"mpcp\", packets = 5 }")
            .unwrap_err()
            .starts_with("packets: "));
        assert!(parse("cc = { name = \"reno\", beta = 0.5 }")
            .unwrap_err()
            .contains("unknown field `beta`"));
        assert!(parse("cc = { name = \"westwood+\", acked = \"thrice\" }")
            .unwrap_err()
            .starts_with("acked: "));
        assert!(parse("cc = { name = \"westwood+\", filter_stages = 3 }")
            .unwrap_err()
            .starts_with("filter_stages: "));
        assert!(parse("cc = { name = \"westwood+\", beta = 0.5 }")
            .unwrap_err()
            .contains("unknown field `beta`"));
        assert!(parse("cc = { name = \"vegas\" }")
            .unwrap_err()
            .contains("unknown variant `vegas`"));
    }
}
