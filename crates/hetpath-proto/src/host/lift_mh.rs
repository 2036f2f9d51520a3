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
//!
//! Section III's self-protection is optional (`SelfProtection`): a compromised gateway
//! that forwards every FrACK keeps the fixed host frozen. MH-LIFT "reacts by temporarily
//! inhibiting the LIFT protocol and trying to discover the cause": it sees the frozen
//! sender's window probes arrive while no data does, stops wrapping its ACKs (plain ESP,
//! which the gateway passes untouched), and watches how soon data comes. Soon: the link
//! was fine, the gateway is suspect, and LIFT stays off for the connection. Late: the
//! satellite link was the cause, and LIFT resumes.

use crate::lift::LiftHeader;
use crate::packet::{proto, TcpFlags, TcpSegment};
use crate::time::{Dur, Time};
use std::collections::VecDeque;

/// When MH-LIFT suspects its gateway (module doc). The paper gives the procedure, not its
/// thresholds; these are ours (docs/model-notes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfProtection {
    /// Window probes in a row, with no new data between them, that inhibit LIFT.
    pub probes: u32,
    /// Data arriving this soon after inhibiting means the link was fine: LIFT stays off.
    pub patience: Dur,
}

/// Where the self-protection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Guard {
    Active,
    /// Inhibited at `since`, waiting for data to tell link from gateway.
    Testing {
        since: Time,
    },
    /// The gateway is suspect: LIFT stays off for this connection.
    Off,
}

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
    protection: Option<SelfProtection>,
    guard: Guard,
    /// The end of the highest data received: a later empty segment below it is a probe.
    received_end: Option<u64>,
    probes_in_a_row: u32,
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
            protection: None,
            guard: Guard::Active,
            received_end: None,
            probes_in_a_row: 0,
        }
    }

    /// Turns section III's self-protection on.
    pub fn with_protection(mut self, p: Option<SelfProtection>) -> MhLift {
        self.protection = p;
        self
    }

    /// Whether LIFT is inhibited (its ACKs go as plain ESP).
    pub fn inhibited(&self) -> bool {
        self.guard != Guard::Active
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
    pub fn on_received(&mut self, now: Time, seg: &TcpSegment, esp_seq: u32) -> Option<LiftHeader> {
        if seg.flags.contains(TcpFlags::RST) {
            return Some(LiftHeader::Teardown { flow: self.flow });
        }
        let fin = seg.flags.contains(TcpFlags::FIN) as u64;
        // The first segment MH-LIFT sees (the handshake's last) starts where data will.
        let received_end = *self.received_end.get_or_insert(seg.seq);
        if seg.len > 0 || fin > 0 {
            let end = seg.seq + seg.len as u64 + fin;
            self.received.push_back((end, esp_seq));
            if fin > 0 {
                self.fin = Some(seg.seq + seg.len as u64);
            }
            self.received_end = Some(received_end.max(end));
            self.probes_in_a_row = 0;
            if let (Guard::Testing { since }, Some(p)) = (self.guard, self.protection) {
                self.guard = if now.since(since) <= p.patience {
                    Guard::Off
                } else {
                    Guard::Active
                };
            }
        } else if seg.seq < received_end {
            // A window probe (RFC 9293 section 3.8.6.1): the sender is frozen.
            self.probes_in_a_row += 1;
            if let (Guard::Active, Some(p)) = (self.guard, self.protection) {
                if self.probes_in_a_row >= p.probes {
                    self.guard = Guard::Testing { since: now };
                }
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
        if self.inhibited() {
            return LiftOut::Plain;
        }
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
            assert_eq!(m.on_received(Time::ZERO, &data(seq, 1000), esp), None);
        }
        let h = header(&m.wrap(&ack(2001, 65_535)));
        assert!(matches!(h, LiftHeader::Ack { ipsec_ack: 11, .. }), "{h:?}");
        let h = header(&m.wrap(&ack(3001, 65_535)));
        assert!(matches!(h, LiftHeader::Ack { ipsec_ack: 13, .. }), "{h:?}");
    }

    #[test]
    fn new_data_acks_come_with_a_frack_before_them_and_duplicates_without() {
        let mut m = MhLift::new(3, 100);
        m.on_received(Time::ZERO, &data(1, 1000), 1);
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
        m.on_received(Time::ZERO, &fin, 7);
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
            m.on_received(Time::ZERO, &rst, 8),
            Some(LiftHeader::Teardown { flow: 3 })
        );
        assert_eq!(
            m.wrap(&TcpSegment::default()),
            LiftOut::Plain,
            "no ACK flag: a SYN"
        );
    }

    /// A window probe: an empty segment below the data received.
    fn probe(seq: u64) -> TcpSegment {
        TcpSegment {
            seq,
            ..ack(1, 65_535)
        }
    }

    #[test]
    fn probes_without_data_inhibit_lift_and_quick_data_keeps_it_off() {
        let p = SelfProtection {
            probes: 3,
            patience: Dur::from_secs(2),
        };
        let at = |s: u64| Time::from_secs_f64(s as f64);
        for (data_at, stays_off) in [(at(8), true), (at(30), false)] {
            let mut m = MhLift::new(3, 100).with_protection(Some(p));
            m.on_received(at(0), &data(1, 1000), 1);
            assert!(matches!(m.wrap(&ack(1001, 65_535)), LiftOut::Pair { .. }));
            for (i, t) in [1, 3, 7].into_iter().enumerate() {
                assert!(!m.inhibited(), "{i} probes");
                m.on_received(at(t), &probe(1000), 2 + i as u32);
                assert!(matches!(
                    m.wrap(&ack(1001, 65_535)),
                    LiftOut::Ack(_) | LiftOut::Plain
                ));
            }
            assert!(m.inhibited(), "three probes in a row");
            assert_eq!(m.wrap(&ack(1001, 65_535)), LiftOut::Plain);
            m.on_received(data_at, &data(1001, 1000), 9);
            assert_eq!(m.inhibited(), stays_off, "data at {data_at:?}");
            let out = m.wrap(&ack(2001, 65_535));
            assert_eq!(matches!(out, LiftOut::Plain), stays_off, "{out:?}");
        }
    }

    #[test]
    fn data_between_probes_or_no_protection_keeps_lift_on() {
        let p = SelfProtection {
            probes: 2,
            patience: Dur::from_secs(2),
        };
        let mut m = MhLift::new(3, 100).with_protection(Some(p));
        let mut bare = MhLift::new(4, 100);
        for m in [&mut m, &mut bare] {
            m.on_received(Time::ZERO, &data(1, 1000), 1);
            m.on_received(Time::from_secs_f64(1.0), &probe(1000), 2);
            m.on_received(Time::from_secs_f64(2.0), &data(1001, 1000), 3);
            m.on_received(Time::from_secs_f64(3.0), &probe(2000), 4);
        }
        assert!(!m.inhibited(), "the probes were not in a row");
        bare.on_received(Time::from_secs_f64(4.0), &probe(2000), 5);
        bare.on_received(Time::from_secs_f64(5.0), &probe(2000), 6);
        assert!(!bare.inhibited(), "no self-protection configured");
    }
}
