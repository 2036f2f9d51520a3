//! Scenario files: TOML in, a validated, runnable `Simulation` out.

mod agents;
mod build;
mod error;
mod mobile;
pub mod spec;
pub mod units;

pub use build::{build, load, parse, tcp_config, DEFAULT_QUEUE, DEFAULT_SAMPLE_INTERVAL};
pub use error::ScenarioError;
