//! The Satellite Transport Protocol (STP) of Henderson and Katz ("Transport protocols for
//! Internet-compatible satellite networks", IEEE JSAC 17(2), 1999) as a sans-IO sender
//! and receiver: APOHN's subnetwork protocol on the GEO hop between the sender node and
//! the bridge router (seed 000, sections III.D and IV.A).
//!
//! STP is ATM's SSCOP (ITU-T Q.2110) carried in IP datagrams. The sender numbers its
//! sequenced data PDUs (SD) and sends them at a fixed rate, the link's dedicated
//! capacity (seed 000: "rate-based congestion control ... for the satellite links with
//! dedicated capacity"); it never waits for acknowledgements except when the receiver's
//! buffer (`StpConfig::window`) is full. It POLLs the receiver periodically; the receiver
//! answers each POLL with a STAT (its in-order point and every gap below the POLL's
//! N(S)) and reports a gap the moment it sees one with an unsolicited USTAT (selective
//! negative acknowledgement). The sender releases what a STAT or USTAT acknowledges
//! cumulatively and retransmits what they list, ahead of new data. SDs acknowledged
//! between the gaps stay held until the cumulative point passes them, as SSCOP's credit
//! counts from N(R).
//!
//! Not modelled: connection set-up and release (BGN/END), resynchronisation, keep-alive
//! and no-response timers, sequence number wrap (numbers are `u64`), and SSCOP's SDP
//! (poll piggybacked on data). The payload `T` is opaque (the simulator carries an IP
//! packet); this module uses only `time` and `runs`.
//!
//! Files: `sender`, `receiver`; scripted and property tests in `tests`.

mod receiver;
mod sender;

pub use receiver::{Receiver, ReceiverStats};
pub use sender::{Sender, SenderStats};

use crate::time::Dur;

/// Bytes of an SD's trailer: pad length, PDU type and N(S) in one word (Q.2110 §7.2).
pub const SD_TRAILER: u32 = 4;
/// Bytes of a POLL: N(PS), then type and N(S) (Q.2110 §7.2).
pub const POLL_BYTES: u32 = 8;
/// Bytes of a STAT without its list: N(PS), N(MR), type and N(R) (Q.2110 §7.2).
pub const STAT_BYTES: u32 = 12;
/// Bytes of one list element of a STAT (a sequence number in a word).
pub const LIST_ELEMENT: u32 = 4;
/// Bytes of a USTAT: two list elements, N(MR), type and N(R) (Q.2110 §7.2).
pub const USTAT_BYTES: u32 = 16;
/// Most gaps one STAT lists. SSCOP splits a longer list over several STATs of at most
/// MaxSTAT list elements (Q.2110 §7.7; 67 in the FreeBSD HARP and Cisco IOS SSCOPs); a
/// gap takes two elements (its first missing and its first received number): 33 gaps.
pub const MAX_STAT_GAPS: usize = 33;

/// Parameters of an STP connection (both ends take the sender's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StpConfig {
    /// Sending rate in bit/s counted on PDU wire bytes plus `overhead` per PDU (the IP
    /// header the PDU travels in): the link's dedicated capacity. Default 20 Mbit/s, the
    /// forward (downlink) GEO channel of seed 000 §IV.A.
    pub rate_bps: u64,
    /// Bytes added to every PDU's wire length for pacing (default 20, an IPv4 header).
    pub overhead: u32,
    /// Period of the sender's POLL while SDs are outstanding (SSCOP's Timer_POLL, Q.2110
    /// §7.6, which leaves the value to the layer above). Default 700 ms, the SSCOP poll
    /// timer default of Bay Networks' signalling AAL ("Configuring ATM Services",
    /// 117374-B: 7 tenths of a second); SSCOPs use 100 ms (NNI) to 1 s. A shorter period
    /// costs reverse-channel bandwidth, which STP was designed to save; it bounds how
    /// late a lost retransmission or a lost STAT is noticed.
    pub poll_interval: Dur,
    /// Most SDs pushed and not yet released by a STAT/USTAT cumulative point, queued ones
    /// included: the receiver's buffer (SSCOP's credit, N(MR) - N(R), Q.2110 §7.8).
    pub window: u64,
    /// Also POLL right after the SD that leaves the sender with nothing to send (no
    /// retransmission waiting, no new SD within the window), so that a lost tail costs
    /// one round trip instead of up to `poll_interval` more. Not in Q.2110, which polls on
    /// Timer_POLL and every MaxPD SDs. It costs a POLL and a STAT per burst: one per SD
    /// under a source slower than `rate_bps`, such as APOHN's ACK-clocked booster, where
    /// it sent 98,000 POLLs and STATs in 200 s. Off by default, as SSCOP.
    pub tail_poll: bool,
}

impl Default for StpConfig {
    fn default() -> StpConfig {
        StpConfig {
            rate_bps: 20_000_000,
            overhead: 20,
            poll_interval: Dur::from_millis(700),
            window: 4096,
            tail_poll: false,
        }
    }
}

impl StpConfig {
    /// Rejects parameters the machines cannot run with.
    pub fn check(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("stp rate_bps: expected a sending rate above 0 bit/s, got 0".into());
        }
        if self.poll_interval == Dur::ZERO {
            return Err("stp poll_interval: expected a POLL period above 0 s, got 0".into());
        }
        if self.window == 0 {
            return Err("stp window: expected a window of at least 1 SD, got 0".into());
        }
        Ok(())
    }
}

/// An STP protocol data unit. Sequence numbers count SDs from 0; `(start, end)` ranges are
/// half-open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pdu<T> {
    /// Sequenced data: N(S) = `seq`, `len` payload bytes.
    Sd { seq: u64, payload: T, len: u32 },
    /// Status request: N(PS) = `poll_seq` (POLLs sent so far, this one included), N(S) =
    /// `next` (VT(S), the first SD not yet sent).
    Poll { poll_seq: u64, next: u64 },
    /// Solicited status, the answer to POLL `poll_seq`: N(R) = `cum` (VR(R), every SD
    /// below it arrived) and the gaps in `[cum, next)` of that POLL, lowest first.
    Stat {
        poll_seq: u64,
        cum: u64,
        gaps: Vec<(u64, u64)>,
    },
    /// Unsolicited status: N(R) = `cum` and one newly detected gap.
    Ustat { cum: u64, gap: (u64, u64) },
}

impl<T> Pdu<T> {
    /// Bytes on the wire: SSCOP's PDU sizes (Q.2110 §7.2), an SD's payload padded to a
    /// word. STP's own header sizes are not at hand; these are the protocol it adapts.
    pub fn wire_len(&self) -> u32 {
        match self {
            Pdu::Sd { len, .. } => len.div_ceil(4).saturating_mul(4).saturating_add(SD_TRAILER),
            Pdu::Poll { .. } => POLL_BYTES,
            Pdu::Stat { gaps, .. } => {
                let elements = (gaps.len() as u32).saturating_mul(2);
                STAT_BYTES.saturating_add(elements.saturating_mul(LIST_ELEMENT))
            }
            Pdu::Ustat { .. } => USTAT_BYTES,
        }
    }
}

#[cfg(test)]
mod tests;
