//! Scenario files: TOML in, a validated description out.

pub mod units;
