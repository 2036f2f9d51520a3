//! EuroSkyWay (ESW) data link: cell segmentation and the optional Selective-Repeat ARQ
//! of the reliable satellite link in the LIFT paper (seed 001, section IV and Table I).
//!
//! An upper-layer unit (an IP datagram, here an opaque `Sdu` of `len` bytes) is cut into
//! 60-byte ESW cells, 53 bytes of payload each, the last one padded (`cell`). One
//! direction of the link runs a `Sender` at its source and a `Receiver` at its sink; the
//! receiver's ESW-ACK cells travel the other way. With ARQ on, the receiver hands SDUs up
//! complete and strictly in order; with ARQ off (`EswConfig::arq = false`), each cell is
//! sent once and an SDU goes up only if all its cells came (`unreliable`).
//!
//! Sans-IO like the TCP machines (docs/architecture.md, "The machine contract"): time comes
//! in as an argument; the caller asks `Sender::poll_cell` once per transmission
//! opportunity (one TDMA frame unit), so the machine knows nothing of the frame schedule,
//! and `Receiver::poll_ack` once per opportunity of the reverse direction. No clock, no
//! RNG, no I/O. The simulator wires it into a link; this module only uses `time`
//! and `runs`.
//!
//! Files: `cell` (cell formats and fragmentation), `config` (`EswConfig`, Table I),
//! `sender`, `receiver` (ARQ receiver and the dispatching `Receiver`), `unreliable` (the ARQ-off receiver).

mod cell;
mod config;
mod receiver;
mod sender;
mod unreliable;

pub use cell::{
    cells_for, fragments, padding, AckBlock, AckCell, Cell, DataCell, Fragment, CELL_BYTES,
    CELL_HEADER_BYTES, CELL_PAYLOAD_BYTES, MAX_BLOCKS,
};
pub use config::EswConfig;
pub use receiver::{ArqReceiver, Receiver, ReceiverStats};
pub use sender::{EnqueueError, Sender, SenderStats};
pub use unreliable::UnreliableReceiver;

/// A unit of the layer above (an IP datagram of `len` bytes). Payloads are virtual
/// (`packet.rs`): the caller keeps the datagram and identifies it by `id`, which the
/// cells carry so that the far end can say which one it reassembled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sdu {
    pub id: u64,
    pub len: u32,
}

/// What a sender or a receiver reports, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EswEvent {
    /// Receiver: a complete SDU went up to the higher layer (in order with ARQ).
    Delivered { id: u64, len: u32 },
    /// Sender, ARQ on: every cell of the SDU is acknowledged; its bytes left the window.
    Acked { id: u64, len: u32 },
    /// Sender, ARQ on: the data-link timeout (Table I, 31.8 s) expired before every cell
    /// of the SDU was acknowledged; it is discarded and its bytes leave the window. A copy
    /// already in flight may still complete it at the receiver.
    SduDropped { id: u64, len: u32 },
    /// Receiver: an incomplete SDU was thrown away: with ARQ off by the rule of
    /// `unreliable`, with ARQ on because the sender gave up on one of its cells.
    Discarded { id: u64 },
}

#[cfg(test)]
mod harness_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
