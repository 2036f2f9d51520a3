//! Mobility: where a mobile node is (`motion`) and what it hears (`propagation`).

pub mod motion;
pub mod propagation;

pub use motion::{Motion, Position};
pub use propagation::{PathLoss, Radio};
