//! SCTP (RFC 4960) as a sans-IO machine: the SCTP baseline of seed 001 (LIFT paper,
//! section IV and Table I), single-homed, one association per `Association`.
//!
//! - `chunk` (`crate::sctp_chunk`, below `packet` so that `Body::Sctp` can carry a
//!   packet): typed packets and chunks, virtual user data, sizes of section 3;
//! - `wire` (`crate::wire::sctp`, so that pcaps can write SCTP): RFC 4960 bytes with
//!   CRC32c, a decoder that never panics;
//! - `config`: `SctpConfig`, the section 15 parameters and Table I sizes;
//! - `serial`: 32-bit TSNs widened to 64 bits;
//! - `cc`: congestion control of section 7.2;
//! - `sender`: fragmentation, transmission rules, SACK processing, fast retransmit,
//!   T3-rtx;
//! - `receiver`: TSN tracking, SACK generation, reassembly, per-stream delivery;
//! - `association`: the state machine of section 4: handshake, shutdown, abort.
//!
//! In the simulator, `agent::sctp_endpoint` runs one association per machine.
//!
//! Not built: multi-homing and HEARTBEAT (sections 6.4 and 8.3), path MTU discovery,
//! ERROR chunks and the optional INIT parameters, PR-SCTP and the other extensions,
//! INIT collision and restart handling (section 5.2).

mod association;
mod cc;
/// The typed chunks live below `packet` (`crate::sctp_chunk`) and the wire codec in
/// `crate::wire::sctp`, so that packets can carry SCTP and pcaps can write it.
use crate::sctp_chunk as chunk;
mod config;
mod receiver;
mod sender;
mod serial;
pub use crate::wire::sctp as wire;

pub use association::{AbortReason, Association, Event, State};
pub use chunk::{
    kind, pad4, Chunk, DataChunk, GapBlock, InitParams, SackChunk, SctpPacket, CHUNK_HEADER_LEN,
    COMMON_HEADER_LEN, DATA_HEADER_LEN, INIT_LEN, MAX_DATA_LEN, PARAM_HEADER_LEN, SACK_HEADER_LEN,
};
pub use config::{SctpConfig, SctpConfigError};
pub use sender::{CcState, SctpStats, SendError};
pub use wire::{decode, encode, SctpWireError};

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
