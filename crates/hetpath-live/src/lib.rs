//! `hetpath-live`: the simulator's link and channel models on real packets. A sans-IO
//! core (`emulator`) runs both directions of one scenario link as `hetpath_sim::link::
//! LinkDir`s over a preallocated slab of packet buffers (`buffers`), reporting each
//! packet's fate (`fate`); `scenario` detaches the link from a loaded scenario; `output`
//! writes the pcaps, fates and replayable loss traces; `sys` (Linux) drives the core
//! from TUN devices with epoll and an absolute timerfd, and samples the kernel's TCP
//! connections beside it (`tcp_diag` decodes their `sock_diag` dump). See docs/live.md. `pep` is the
//! transparent split-connection PEP daemon behind `hetpath pep`.

pub mod buffers;
pub mod emulator;
pub mod fate;
pub mod netlink;
pub mod output;
pub mod pep;
pub mod scenario;
#[cfg(target_os = "linux")]
pub mod sys;
pub mod tcp_diag;

pub use emulator::Emulator;
pub use fate::{Dir, Fate, Observer, Outcome};
