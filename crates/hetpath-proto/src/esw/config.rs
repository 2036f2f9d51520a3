//! `EswConfig`: the ESW data link's parameters, defaults from seed 001 Table I.

use crate::time::Dur;

/// Parameters of one direction of an ESW link (both ends use the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EswConfig {
    /// Run the Selective-Repeat ARQ (section IV: "an optional ARQ data link protocol").
    /// On by default: the LIFT configurations of seed 001 use the reliable data link; its
    /// SCTP comparison runs without it ("includes neither LIFT nor the satellite reliable
    /// data link protocol").
    pub arq: bool,
    /// ESW-ACK period (section IV and Table I: Tack = 636 ms).
    pub tack: Dur,
    /// Retransmission timer of a cell no ESW-ACK has covered, from its last transmission
    /// (put off while the last ESW-ACK could not code it: `sender`). Not in the paper: we
    /// take 1.5 s. A cell is acknowledged at the latest one one-way
    /// delay (265 ms, Table I) after it leaves, plus Tack (636 ms) until the next periodic
    /// ESW-ACK, plus 265 ms for that ACK to come back: 1,166 ms. The rest (about 330 ms)
    /// covers the ACK waiting for a frame unit of the reverse direction, so that the timer
    /// does not fire before an ACK that is on its way.
    pub rtx_timeout: Dur,
    /// Data-link timeout (Table I: 31.8 s): an SDU not fully acknowledged this long after
    /// its first cell was first sent is discarded (`EswEvent::SduDropped`). The ARQ
    /// receiver also gives up on a gap that has blocked delivery this long (`receiver`).
    pub dl_timeout: Dur,
    /// Bytes of SDUs the sender holds until they are acknowledged, dropped or (ARQ off)
    /// sent (Table I, "ESW LL-2 Tx Window on client/server side": 1003.82 KB, read as
    /// 1,003,820 bytes). An SDU that does not fit is refused.
    pub tx_window_bytes: u64,
    /// ARQ off only: an incomplete SDU is discarded this long after its first cell
    /// arrived if no later SDU completed first (`unreliable`). Not in the paper: we reuse
    /// the data-link timeout, the lifetime the link gives a cell. It only decides when
    /// the loss is reported and memory freed: with ARQ off nothing waits behind an SDU.
    pub reassembly_timeout: Dur,
}

impl Default for EswConfig {
    fn default() -> EswConfig {
        EswConfig {
            arq: true,
            tack: Dur::from_millis(636),
            rtx_timeout: Dur::from_millis(1_500),
            dl_timeout: Dur::from_millis(31_800),
            tx_window_bytes: 1_003_820,
            reassembly_timeout: Dur::from_millis(31_800),
        }
    }
}
