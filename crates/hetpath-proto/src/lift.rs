//! The LIFT header (seed 001, section II; Figs. 2, 3 and 5): the one piece of a LIFT
//! packet a base station may read. It sits between the IP header and ESP (Fig. 2), and
//! copies no TCP field (section III): the flow identifier is MH-LIFT's own number, and the
//! IPsec ACK number is an ESP sequence number.
//!
//! Control packets (Fig. 3) have A = 0 and carry nothing after the header; packets that
//! carry an ACK (Fig. 5) have A = 1 and a Next Header field that chains to ESP. The byte
//! layout is in `wire::lift`.

/// The IP protocol number of a LIFT packet. The paper assigns none; 253 is reserved for
/// experimentation (RFC 3692 section 2.1, IANA protocol numbers), which is what an
/// unassigned protocol on a testbed would use (docs/model-notes.md, LIFT).
pub const PROTO_LIFT: u8 = 253;

/// One LIFT header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiftHeader {
    /// A = 0, T = 0 (Fig. 3A): binds a TCP Flow Identifier to the downlink SA, so that
    /// BS-LIFT can fill its TCP Flow Table (Fig. 4). Delivered reliably.
    Setup {
        flow: u16,
        /// SPI of the downlink SA.
        spi: u32,
        /// Security protocol of the downlink SA (50 for ESP, 51 for AH).
        protocol: u8,
    },
    /// A = 0, T = 1 (Fig. 3B): the fixed host reset the connection. Delivered reliably.
    Teardown { flow: u16 },
    /// A = 1, T = 0 (Fig. 5A): carries the unaltered TCP ACK.
    Ack {
        flow: u16,
        /// D: delete the flow's table entry (the ACK confirms a FIN, or answers a RST).
        delete: bool,
        /// F: forward at once (piggybacked, zero window, unfreezing, or confirming a FIN).
        forward: bool,
        /// S: hold it while the local timer runs (a duplicate ACK).
        store: bool,
        /// The highest ESP sequence number of the data segments this ACK acknowledges
        /// (the Local Acknowledgement procedure, section II.B).
        ipsec_ack: u32,
        next_header: u8,
    },
    /// A = 1, T = 1 (Fig. 5B): carries the freezing ACK (the ACK with window 0 and no
    /// payload). Delivered unreliably.
    Frack { flow: u16, next_header: u8 },
}

impl LiftHeader {
    /// Bytes on the wire: 8 for every kind but Teardown, whose figure has 3 (one byte of
    /// A, T and reserved bits, two of flow identifier).
    pub fn wire_len(&self) -> u32 {
        match self {
            LiftHeader::Teardown { .. } => 3,
            _ => 8,
        }
    }

    /// The TCP Flow Identifier every kind carries.
    pub fn flow(&self) -> u16 {
        match *self {
            LiftHeader::Setup { flow, .. }
            | LiftHeader::Teardown { flow }
            | LiftHeader::Ack { flow, .. }
            | LiftHeader::Frack { flow, .. } => flow,
        }
    }

    /// A control packet (A = 0): nothing follows the header.
    pub fn is_control(&self) -> bool {
        matches!(self, LiftHeader::Setup { .. } | LiftHeader::Teardown { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frack_is_66_bytes_on_the_wire() {
        // Section IV: 20 (IP) + 8 (LIFT) + 18 (the paper's ESP overhead) + 20 (TCP).
        let frack = LiftHeader::Frack {
            flow: 1,
            next_header: crate::packet::proto::ESP,
        };
        assert_eq!(20 + frack.wire_len() + 18 + 20, 66);
        assert!(!frack.is_control());
        assert!(LiftHeader::Teardown { flow: 1 }.is_control());
    }
}
