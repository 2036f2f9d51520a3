//! hetpath-proto: sans-IO protocol machines.
//!
//! Nothing here reads a clock, touches a socket or draws from a global RNG: time comes in
//! as arguments, packets go out through `poll_*` calls. The simulator and, later, the real
//! proxy drive the same machines through one contract (`machine`). Modules, from the
//! bottom layer up (a module uses only those before it; `scripts/check_layers.py`):
//! `time`, `ids`, `runs`, `lift`, `sctp_chunk`, `stp`, `packet`, `esp`, `esw`, `crosslayer`, `iface`, `wire`, `rap`, `cc`, `tcp`,
//! `sctp`, `machine`, `host`, `agent`.

pub mod agent;
pub mod cc;
pub mod crosslayer;
pub mod esp;
pub mod esw;
pub mod host;
pub mod ids;
pub mod iface;
pub mod lift;
pub mod machine;
pub mod packet;
pub mod rap;
mod runs;
pub mod sctp;
pub mod sctp_chunk;
pub mod stp;
pub mod tcp;
pub mod time;
pub mod wire;

#[cfg(test)]
mod testing;

pub use ids::{ConnId, IfaceId};
pub use packet::{Addr, Endpoint, Packet};
pub use time::{Dur, Time};
