//! Channel models: per link direction, they decide whether each transmitted packet
//! arrives (DESIGN.md convention 6: impairments live in the simulator, never in proto).
//!
//! Every model documents what it steps on: per packet, per bit, or per unit of time.
//! A model owns its random stream (see `rng`), so runs are reproducible per seed.

use crate::rng::Rng;
use hetpath_proto::{Dur, Time};
use std::fmt;

mod spec;
pub use spec::ChannelSpec;

/// A channel model for one link direction.
pub trait Channel: fmt::Debug + Send {
    /// Decides the fate of one packet of `bytes` (IP length) whose transmission occupies
    /// `[start, start + duration)`. Returns `true` if it arrives intact. Called once per
    /// transmitted packet, in order of `start`.
    fn transmit(&mut self, start: Time, duration: Dur, bytes: u32) -> bool;
    /// Fraction of the nominal link rate left for IP bytes (the FEC code rate k/n).
    fn rate_factor(&self) -> f64 {
        1.0
    }
}

/// A perfect channel.
#[derive(Debug, Default)]
pub struct NoLoss;

impl Channel for NoLoss {
    fn transmit(&mut self, _: Time, _: Dur, _: u32) -> bool {
        true
    }
}

/// Builds the channel a spec describes with its own random stream.
pub fn build(spec: &ChannelSpec, rng: Rng) -> Box<dyn Channel> {
    spec.build(rng)
}
