//! MH-LIFT, the mobile host's half of LIFT (seed 001, section II): it sits between the
//! host's TCP and ESP, the one place where the TCP header is still readable, and tells
//! BS-LIFT what the gateway cannot see. For each connection it
//!
//! - sends a Setup packet binding its TCP Flow Identifier to the downlink SA (II.A);
//! - remembers the ESP sequence number that carried each received data segment, so that
//!   an ACK's LIFT header can name the highest one it acknowledges (the IPsec ACK
//!   Number of the Local Acknowledgement procedure, II.B);
//! - wraps each outgoing ACK in a LIFT header with the D, F and S flags, preceded by a
//!   freezing ACK (the ACK with window 0 and no payload) when the ACK acknowledges new
//!   data or is piggybacked (II.B);
//! - sends a Teardown packet when the fixed host resets the connection (II.A).
//!
//! This file decides; the host seals what it returns under the uplink SA and sends it.
//! Not modelled: the self-protection of section III (inhibiting LIFT when FrACKs are
//! forced repeatedly), which needs an attacker to test against.

use crate::lift::LiftHeader;
use crate::packet::{proto, TcpFlags, TcpSegment};
use std::collections::VecDeque;

/// What MH-LIFT makes of one outgoing TCP segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiftOut {
    /// No LIFT header (a segment without ACK: the SYN).
    Plain,
    /// The segment behind this LIFT header.
    Ack(LiftHeader),
    /// First `frack` (the freezing ACK) behind `frack_header`, then the segment behind
    /// `ack_header`, in that order (II: "FrACK before unaltered TCP ACK segment").
    Pair {
        frack: TcpSegment,
        frack_header: LiftHeader,
        ack_header: LiftHeader,
    },
}

/// MH-LIFT state of one TCP connection.
#[derive(Clone, Debug)]
pub struct MhLift {
    flow: u16,
    downlink_spi: u32,
    setup_sent: bool,
    /// (end of a received data segment's sequence space, the ESP sequence number that
    /// carried it), in arrival order.
    received: VecDeque<(u64, u32)>,
    /// The highest ESP sequence number of data acknowledged so far.
    ipsec_ack: u32,
    /// Where the fixed host's FIN sits, once seen (its ACK is ack = fin + 1).
    fin: Option<u64>,
    /// The last ACK number and window sent.
    last: Option<(u64, u64)>,
}

impl MhLift {
    pub fn new(flow: u16, downlink_spi: u32) -> MhLift {
        MhLift {
            flow,
            downlink_spi,
            setup_sent: false,
            received: VecDeque::new(),
            ipsec_ack: 0,
            fin: None,
            last: None,
        }
    }

    /// The Setup header to send once, when the connection is established (II.A).
    pub fn poll_setup(&mut self) -> Option<LiftHeader> {
        if self.setup_sent {
            return None;
        }
        self.setup_sent = true;
        Some(LiftHeader::Setup {
            flow: self.flow,
            spi: self.downlink_spi,
            protocol: proto::ESP,
        })
    }

    /// A segment from the fixed host arrived in the ESP packet numbered `esp_seq`. Returns
    /// a Teardown header if it is a reset (II.A).
    pub fn on_received(&mut self, seg: &TcpSegment, esp_seq: u32) -> Option<LiftHeader> {
        if seg.flags.contains(TcpFlags::RST) {
            return Some(LiftHeader::Teardown { flow: self.flow });
        }
        let fin = seg.flags.contains(TcpFlags::FIN) as u64;
        if seg.len > 0 || fin > 0 {
            let end = seg.seq + seg.len as u64 + fin;
            self.received.push_back((end, esp_seq));
            if fin > 0 {
                self.fin = Some(seg.seq + seg.len as u64);
            }
        }
        None
    }

    /// Wraps an outgoing segment of this connection (II.B).
    pub fn wrap(&mut self, seg: &TcpSegment) -> LiftOut {
        if !seg.flags.contains(TcpFlags::ACK) {
            return LiftOut::Plain;
        }
        // The highest ESP number among the data segments this ACK covers.
        while let Some(&(end, esp)) = self.received.front() {
            if end > seg.ack {
                break;
            }
            self.ipsec_ack = self.ipsec_ack.max(esp);
            self.received.pop_front();
        }
        let piggybacked = seg.len > 0 || seg.flags.contains(TcpFlags::FIN);
        let new_data = self.last.is_none_or(|(a, _)| seg.ack > a);
        let duplicate = !piggybacked && self.last == Some((seg.ack, seg.window));
        let confirms_fin = self.fin.is_some_and(|f| seg.ack > f);
        let reopens = self.last.is_some_and(|(_, w)| w == 0) && seg.window > 0;
        self.last = Some((seg.ack, seg.window));
        let ack_header = LiftHeader::Ack {
            flow: self.flow,
            delete: confirms_fin || seg.flags.contains(TcpFlags::RST),
            forward: piggybacked || seg.window == 0 || reopens || confirms_fin,
            store: duplicate,
            ipsec_ack: self.ipsec_ack,
            next_header: proto::ESP,
        };
        if seg.window > 0 && (new_data || piggybacked) {
            let frack = TcpSegment {
                window: 0,
                len: 0,
                flags: TcpFlags(seg.flags.0 & !(TcpFlags::FIN.0 | TcpFlags::PSH.0)),
                ..seg.clone()
            };
            LiftOut::Pair {
                frack,
                frack_header: LiftHeader::Frack {
                    flow: self.flow,
                    next_header: proto::ESP,
                },
                ack_header,
            }
        } else {
            LiftOut::Ack(ack_header)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32) -> TcpSegment {
        TcpSegment {
            seq,
            len,
            flags: TcpFlags::ACK,
            ..Default::default()
        }
    }

    fn ack(ack: u64, window: u64) -> TcpSegment {
        TcpSegment {
            ack,
            window,
            flags: TcpFlags::ACK,
            ..Default::default()
        }
    }

    fn header(out: &LiftOut) -> LiftHeader {
        match out {
            LiftOut::Ack(h) | LiftOut::Pair { ack_header: h, .. } => *h,
            LiftOut::Plain => panic!("no header"),
        }
    }

    #[test]
    fn an_ack_names_the_highest_esp_number_of_the_data_it_covers() {
        let mut m = MhLift::new(3, 100);
        assert!(m.poll_setup().is_some() && m.poll_setup().is_none());
        // Three segments in ESP packets 10, 11 and 13 (12 carried something else).
        for (seq, esp) in [(1, 10), (1001, 11), (2001, 13)] {
            assert_eq!(m.on_received(&data(seq, 1000), esp), None);
        }
        let h = header(&m.wrap(&ack(2001, 65_535)));
        assert!(matches!(h, LiftHeader::Ack { ipsec_ack: 11, .. }), "{h:?}");
        let h = header(&m.wrap(&ack(3001, 65_535)));
        assert!(matches!(h, LiftHeader::Ack { ipsec_ack: 13, .. }), "{h:?}");
    }

    #[test]
    fn new_data_acks_come_with_a_frack_before_them_and_duplicates_without() {
        let mut m = MhLift::new(3, 100);
        m.on_received(&data(1, 1000), 1);
        match m.wrap(&ack(1001, 65_535)) {
            LiftOut::Pair { frack, .. } => {
                assert_eq!((frack.window, frack.len, frack.ack), (0, 0, 1001));
            }
            other => panic!("{other:?}"),
        }
        // The same ACK again: a duplicate, stored at the gateway, no FrACK.
        let out = m.wrap(&ack(1001, 65_535));
        assert!(
            matches!(
                out,
                LiftOut::Ack(LiftHeader::Ack {
                    store: true,
                    forward: false,
                    ..
                })
            ),
            "{out:?}"
        );
        // A zero window goes at once, without a FrACK; reopening it goes at once too.
        let out = m.wrap(&ack(1001, 0));
        assert!(
            matches!(out, LiftOut::Ack(LiftHeader::Ack { forward: true, .. })),
            "{out:?}"
        );
        let out = m.wrap(&ack(1001, 65_535));
        assert!(
            matches!(header(&out), LiftHeader::Ack { forward: true, .. }),
            "{out:?}"
        );
    }

    #[test]
    fn piggybacked_acks_are_forwarded_at_once_and_fin_acks_delete_the_entry() {
        let mut m = MhLift::new(3, 100);
        let request = TcpSegment {
            len: 300,
            ..ack(1, 65_535)
        };
        let out = m.wrap(&request);
        assert!(
            matches!(
                out,
                LiftOut::Pair {
                    ack_header: LiftHeader::Ack { forward: true, .. },
                    ..
                }
            ),
            "{out:?}"
        );
        let fin = TcpSegment {
            flags: TcpFlags::ACK | TcpFlags::FIN,
            ..data(1, 500)
        };
        m.on_received(&fin, 7);
        let h = header(&m.wrap(&ack(502, 65_535)));
        assert!(
            matches!(
                h,
                LiftHeader::Ack {
                    delete: true,
                    forward: true,
                    ipsec_ack: 7,
                    ..
                }
            ),
            "{h:?}"
        );
        let rst = TcpSegment {
            flags: TcpFlags::RST,
            ..Default::default()
        };
        assert_eq!(
            m.on_received(&rst, 8),
            Some(LiftHeader::Teardown { flow: 3 })
        );
        assert_eq!(
            m.wrap(&TcpSegment::default()),
            LiftOut::Plain,
            "no ACK flag: a SYN"
        );
    }
}
