//! hetpath-sim: the deterministic discrete-event simulator.
//!
//! `scenario::load` turns a TOML scenario into a `Simulation`; `Simulation::run` drives
//! it; `Simulation::summary` and `series` give the results. The engine reads no clock
//! and draws randomness only from per-component seeded streams (`rng`).

pub mod capture;
pub mod channel;
pub mod engine;
pub mod esw_link;
pub mod ids;
pub mod link;
pub mod mobility;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod trace;
pub mod traffic;
pub mod units;
pub mod wlan;

pub use results::Summary;
pub use scenario::{load, ScenarioError};
pub use sim::Simulation;
