//! Scenario files: TOML in, a validated, runnable `Simulation` out. The machines a
//! scenario can place are registered in `machines`; controllers and their parameters in
//! `cc`; the papers' TCP variants as `profiles`.

pub mod apohn;
mod build;
pub mod cc;
mod checks;
mod error;
pub mod esw;
pub mod machines;
mod mobile;
pub mod profiles;
pub mod sctp;
pub mod spec;
pub mod tcp;
pub mod web;
pub mod wlan;

pub use build::{
    build, build_warned, load, load_warned, load_with, parse, Loaded, DEFAULT_CC, DEFAULT_QUEUE,
    DEFAULT_SAMPLE_INTERVAL, MAX_ESP_OVERHEAD, MAX_SCENARIO_BYTES,
};
pub use checks::IP_TTL;
pub use error::{KeyError, ScenarioError, ScenarioWarning};
pub use tcp::tcp_config;
