//! `SctpConfig`: the protocol parameters of RFC 4960 section 15 and the sizes of seed 001
//! (Table I and section IV), which are the defaults.

use super::chunk::{COMMON_HEADER_LEN, DATA_HEADER_LEN, MAX_DATA_LEN};
use crate::time::Dur;

/// One association's parameters. Both endpoints of the paper's SCTP baseline run the
/// defaults; `initiate_tag` and `initial_tsn` stand in for the random values of RFC 4960
/// section 5.1 (this core draws no random numbers), so a driver should give each endpoint
/// its own.
///
/// "MTU" here is RFC 4960's path MTU: the largest IP datagram, IP header included (seed
/// 001 Table I: 1282 bytes). Every SCTP packet is wrapped in `ip_header_len` bytes of IP
/// and `esp_overhead` bytes of ESP before it meets that limit, so the SCTP packet itself
/// may be `packet_budget()` = 1282 - 20 - 18 = 1244 bytes: exactly a common header and
/// two 600-byte DATA chunks (seed 001 section IV). The congestion window formulas of
/// section 7.2 use `mtu` as RFC 4960 writes them; the window itself counts user data bytes
/// of DATA chunks (section 6.1 and RFC 4460 section 2.8, as Linux counts it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SctpConfig {
    /// Path MTU, IP header included (Table I: IP MTU 1282 bytes).
    pub mtu: u32,
    /// The IPv4 header in front of each packet.
    pub ip_header_len: u32,
    /// IPsec ESP header, trailer and ICV around each packet (Table I: 18 bytes); 0 for
    /// SCTP without IPsec.
    pub esp_overhead: u32,
    /// The most user data per DATA chunk (Table I: 600 bytes); messages are fragmented
    /// into chunks of this size (section 6.9).
    pub max_chunk_payload: u32,
    /// The most DATA chunks bundled in one packet (seed 001 section IV: 2).
    pub chunks_per_packet: u32,
    /// Receive buffer, advertised as a_rwnd (Table I: SCTP Window 65536 bytes).
    pub rwnd: u32,
    /// Outbound and inbound streams offered in INIT (Table I: at most 10 streams).
    pub streams: u16,
    /// RTO.Initial, RTO.Min, RTO.Max (section 15: 3 s, 1 s, 60 s; section 6.3.1).
    pub rto_initial: Dur,
    pub rto_min: Dur,
    pub rto_max: Dur,
    /// Association.Max.Retrans (section 15: 10): consecutive retransmission timeouts
    /// after which the peer is unreachable and the association aborts (section 8.1).
    pub max_retrans: u32,
    /// Max.Init.Retransmits (section 15: 8): INIT and COOKIE ECHO attempts after the
    /// first (section 5.1 steps A and C).
    pub max_init_retrans: u32,
    /// Delayed SACK timer (section 6.2: at most 200 ms, and 200 ms here).
    pub sack_delay: Dur,
    /// A SACK for at least every this many packets with DATA (section 6.2: 2).
    pub sack_every: u32,
    /// Miss indications that trigger fast retransmit: 3 in RFC 4960 section 7.2.4, 4 in
    /// RFC 2960 section 7.2.4.
    pub fast_rtx_threshold: u32,
    /// Our Initiate Tag: the verification tag the peer writes to us (section 5.1); not 0.
    pub initiate_tag: u32,
    /// Our first TSN (section 5.1).
    pub initial_tsn: u32,
}

impl Default for SctpConfig {
    fn default() -> SctpConfig {
        SctpConfig {
            mtu: 1282,
            ip_header_len: 20,
            esp_overhead: 18,
            max_chunk_payload: 600,
            chunks_per_packet: 2,
            rwnd: 65536,
            streams: 10,
            rto_initial: Dur::from_secs(3),
            rto_min: Dur::from_secs(1),
            rto_max: Dur::from_secs(60),
            max_retrans: 10,
            max_init_retrans: 8,
            sack_delay: Dur::from_millis(200),
            sack_every: 2,
            fast_rtx_threshold: 3,
            initiate_tag: 0x5C7B_0001,
            initial_tsn: 1000,
        }
    }
}

/// A parameter set an association cannot run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SctpConfigError {
    #[error("MTU {mtu} leaves no room for a DATA chunk after {overhead} bytes of headers")]
    MtuTooSmall { mtu: u32, overhead: u32 },
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    #[error("RTO bounds out of order: min {min:?}, initial {initial:?}, max {max:?}")]
    RtoOrder { min: Dur, initial: Dur, max: Dur },
}

impl SctpConfig {
    /// The bytes an SCTP packet may take: the MTU less IP and ESP.
    pub fn packet_budget(&self) -> u32 {
        self.mtu
            .saturating_sub(self.ip_header_len)
            .saturating_sub(self.esp_overhead)
    }

    /// User data per DATA chunk: `max_chunk_payload`, or less if a lone chunk would not
    /// fit the packet budget; at least 1.
    pub fn chunk_payload(&self) -> u32 {
        let fits = self
            .packet_budget()
            .saturating_sub(COMMON_HEADER_LEN + DATA_HEADER_LEN)
            & !3;
        self.max_chunk_payload.min(fits).clamp(1, MAX_DATA_LEN)
    }

    /// Initial cwnd, section 7.2.1: min(4 * MTU, max(2 * MTU, 4380 bytes)).
    pub fn initial_cwnd(&self) -> u64 {
        let mtu = self.mtu as u64;
        (4 * mtu).min((2 * mtu).max(4380))
    }

    pub fn validate(&self) -> Result<(), SctpConfigError> {
        let overhead = self.ip_header_len + self.esp_overhead + COMMON_HEADER_LEN + DATA_HEADER_LEN;
        if self.mtu < overhead + 4 {
            return Err(SctpConfigError::MtuTooSmall {
                mtu: self.mtu,
                overhead,
            });
        }
        for (v, name) in [
            (self.max_chunk_payload, "max_chunk_payload"),
            (self.chunks_per_packet, "chunks_per_packet"),
            (self.streams as u32, "streams"),
            (self.sack_every, "sack_every"),
            (self.fast_rtx_threshold, "fast_rtx_threshold"),
            (self.initiate_tag, "initiate_tag"),
        ] {
            if v == 0 {
                return Err(SctpConfigError::Zero(name));
            }
        }
        if !(self.rto_min <= self.rto_initial && self.rto_initial <= self.rto_max)
            || self.rto_min == Dur::ZERO
        {
            return Err(SctpConfigError::RtoOrder {
                min: self.rto_min,
                initial: self.rto_initial,
                max: self.rto_max,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_defaults() {
        let c = SctpConfig::default();
        c.validate().unwrap();
        assert_eq!(c.packet_budget(), 1244);
        assert_eq!(c.chunk_payload(), 600);
        // min(4 * 1282, max(2 * 1282, 4380)) = min(5128, 4380).
        assert_eq!(c.initial_cwnd(), 4380);
        let small = SctpConfig { mtu: 500, ..c };
        // 500 - 38 - 12 - 16 = 434, rounded down to 432.
        assert_eq!(small.chunk_payload(), 432);
        assert_eq!(small.initial_cwnd(), 2000);
        let tiny = SctpConfig { mtu: 60, ..c };
        assert!(tiny.validate().is_err());
    }
}
