//! hetpath-sim: the deterministic discrete-event simulator.

pub mod channel;
pub mod rng;
pub mod scenario;
