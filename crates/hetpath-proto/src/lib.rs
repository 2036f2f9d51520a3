//! hetpath-proto: sans-IO protocol machines.
//!
//! Nothing here reads a clock, touches a socket or draws from a global RNG: time comes in
//! as arguments, packets go out through `poll_*` calls. The simulator and, later, the real
//! proxy drive the same machines (DESIGN.md convention 1).

pub mod agent;
pub mod cc;
pub mod crosslayer;
pub mod esp;
pub mod packet;
pub mod rap;
pub mod tcp;
pub mod time;
pub mod wire;

pub use packet::{Addr, Packet};
pub use time::{Dur, Time};
