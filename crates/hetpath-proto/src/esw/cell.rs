//! ESW cells: the 60-byte unit of every TDMA frame unit (seed 001 section IV, Table I).
//!
//! "An ESW cell is 60 bytes long: 7 bytes are reserved for the header, the remaining 53
//! bytes constitute the payload", and "the last ESW cell used in the fragmentation of an
//! IP datagram includes a padding if the datagram length is not a multiple of cell payload
//! size" (section IV). Data and ESW-ACK cells are both one cell on the air.
//!
//! Like TCP segments in `packet.rs`, cells carry no bytes, only the header fields the
//! protocol reads, and sequence numbers are 64-bit cell offsets from the start of the
//! link, so they never wrap inside the machine; a coder for real 7-byte headers would fold
//! them, as `wire` folds TCP's.

use std::fmt;

/// Bytes of one ESW cell on the air (Table I: 7 + 53).
pub const CELL_BYTES: u32 = 60;
/// Header bytes of an ESW cell (Table I, "ESW cell Header size").
pub const CELL_HEADER_BYTES: u32 = 7;
/// Payload bytes of an ESW cell (Table I, "ESW cell payload size").
pub const CELL_PAYLOAD_BYTES: u32 = 53;
/// The most blocks one ESW-ACK cell codes (section IV: "equal to 14").
pub const MAX_BLOCKS: usize = 14;

/// Cells needed for an SDU of `len` bytes: ceil(len / 53); zero bytes need none.
pub fn cells_for(len: u32) -> u32 {
    len.div_ceil(CELL_PAYLOAD_BYTES)
}

/// Padding bytes in the last cell of an SDU of `len` bytes (section IV).
pub fn padding(len: u32) -> u32 {
    cells_for(len) * CELL_PAYLOAD_BYTES - len
}

/// Bytes of the SDU carried by cell `index` of an SDU of `len` bytes (53, except in the
/// last cell). `index` must be below `cells_for(len)`.
pub(super) fn payload_of(len: u32, index: u32) -> u32 {
    let before = index.saturating_mul(CELL_PAYLOAD_BYTES);
    len.saturating_sub(before).min(CELL_PAYLOAD_BYTES)
}

/// One cell of a fragmented SDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// Position within the SDU, from 0.
    pub index: u32,
    /// SDU bytes in this cell; the rest of the 53 is padding.
    pub payload: u32,
    /// The SDU's last cell.
    pub last: bool,
}

/// The cells of an SDU of `len` bytes, in order.
pub fn fragments(len: u32) -> impl Iterator<Item = Fragment> {
    let n = cells_for(len);
    (0..n).map(move |index| Fragment {
        index,
        payload: payload_of(len, index),
        last: index + 1 == n,
    })
}

/// A data cell: the header fields of one cell of an SDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataCell {
    /// Cell sequence number: one per new cell, kept by its retransmissions.
    pub seq: u64,
    /// The SDU's `id`.
    pub sdu: u64,
    /// Position within the SDU, from 0.
    pub index: u32,
    /// The SDU's last cell.
    pub last: bool,
    /// SDU bytes in the cell (53 but in the last one). The receiver learns the datagram's
    /// length from the IP header inside; we carry the count instead of bytes.
    pub payload: u32,
    /// Every cell below `floor` is acknowledged or abandoned by the sender (data-link
    /// timeout), so the receiver need not wait for it. Our assumption: the paper does not
    /// say how an ESW receiver learns that its peer gave up; this plays the part of
    /// PR-SCTP's FORWARD-TSN (RFC 3758). Ignored with ARQ off.
    pub floor: u64,
}

impl DataCell {
    /// Padding bytes in the cell.
    pub fn padding(&self) -> u32 {
        CELL_PAYLOAD_BYTES.saturating_sub(self.payload)
    }
}

/// One coded block of an ESW-ACK: cells `left .. left + len` are received and queued in
/// the receiver window (section IV: "the left edge of the block, that is the sequence
/// number of the first cell in the block, and ... the block length (number of cells in
/// the block)").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckBlock {
    pub left: u64,
    pub len: u32,
}

impl AckBlock {
    /// One past the block's last cell.
    pub fn end(&self) -> u64 {
        self.left.saturating_add(self.len as u64)
    }
}

/// An ESW-ACK cell: up to `MAX_BLOCKS` blocks plus a cumulative point.
///
/// The paper gives the blocks (section IV) but not the cell's full layout. The
/// `cumulative` field (the next in-order cell the receiver expects: everything below it
/// is received) is our assumption: without it a sender could not tell delivered cells,
/// which have left the receiver window, from lost ones. Field widths are not modelled;
/// the cell is 60 bytes on the air like any other.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AckCell {
    cumulative: u64,
    n: u8,
    blocks: [AckBlock; MAX_BLOCKS],
}

impl AckCell {
    /// An ACK of every cell below `cumulative`, with no block yet.
    pub fn new(cumulative: u64) -> AckCell {
        AckCell {
            cumulative,
            n: 0,
            blocks: [AckBlock::default(); MAX_BLOCKS],
        }
    }

    /// Adds a block; `false` (and no change) when the cell already codes `MAX_BLOCKS`.
    pub fn push(&mut self, block: AckBlock) -> bool {
        let Some(slot) = self.blocks.get_mut(self.n as usize) else {
            return false;
        };
        *slot = block;
        self.n += 1;
        true
    }

    /// The next in-order cell the receiver expects.
    pub fn cumulative(&self) -> u64 {
        self.cumulative
    }

    /// The coded blocks, lowest first as the receiver writes them; never more than
    /// `MAX_BLOCKS`.
    pub fn blocks(&self) -> &[AckBlock] {
        &self.blocks[..self.n as usize]
    }
}

impl fmt::Debug for AckCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AckCell")
            .field("cumulative", &self.cumulative)
            .field("blocks", &self.blocks())
            .finish()
    }
}

/// What occupies one frame unit: a data cell or an ESW-ACK cell, `CELL_BYTES` either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Data(DataCell),
    Ack(AckCell),
}

impl Cell {
    /// Bytes on the air.
    pub fn wire_bytes(&self) -> u32 {
        CELL_BYTES
    }
}
