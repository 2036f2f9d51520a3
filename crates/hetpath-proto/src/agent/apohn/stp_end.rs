//! One end of the SBP connection between the sender node and its edge router: STP's
//! sender toward the peer and its receiver from it (the seed's Fig. 7 has a pair of STP
//! agents each way), as IP packets between the two addresses.

use crate::packet::{Addr, Body, Packet, SbpPayload};
use crate::stp::{self, Pdu, StpConfig};
use crate::time::Time;

pub(super) struct StpEnd {
    me: Addr,
    peer: Addr,
    tx: stp::Sender<SbpPayload>,
    rx: stp::Receiver<SbpPayload>,
}

impl StpEnd {
    /// This end at `me`, the other at `peer`; `cfg` is for what this end sends.
    pub(super) fn new(me: Addr, peer: Addr, cfg: StpConfig) -> StpEnd {
        StpEnd {
            me,
            peer,
            tx: stp::Sender::new(cfg),
            rx: stp::Receiver::new(),
        }
    }

    /// Takes `p` if it is an SBP PDU from the peer: data and POLLs go to the receiver,
    /// STATs and USTATs to the sender. Returns whether it took it.
    pub(super) fn handle_packet(&mut self, now: Time, p: &mut Packet) -> bool {
        if !matches!(p.body, Body::Sbp(_)) || p.ip.src != self.peer {
            return false;
        }
        let Body::Sbp(pdu) = p.take().body else {
            unreachable!("matched above")
        };
        match *pdu {
            pdu @ (Pdu::Sd { .. } | Pdu::Poll { .. }) => self.rx.handle_pdu(now, pdu),
            pdu => self.tx.handle_pdu(now, pdu),
        }
        true
    }

    /// What the peer sent, in order.
    pub(super) fn poll_deliver(&mut self) -> Option<SbpPayload> {
        self.rx.poll_deliver()
    }

    pub(super) fn can_push(&self) -> bool {
        self.tx.can_push()
    }

    pub(super) fn push(&mut self, payload: SbpPayload, len: u32) {
        self.tx.push(payload, len);
    }

    /// The next packet: the receiver's STAT or USTAT first, then what the sender's pacer
    /// allows.
    pub(super) fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let pdu = self
            .rx
            .poll_transmit(now)
            .or_else(|| self.tx.poll_transmit(now))?;
        Some(Packet::new(self.me, self.peer, Body::Sbp(Box::new(pdu))))
    }

    pub(super) fn poll_timeout(&self) -> Option<Time> {
        self.tx.poll_timeout()
    }

    pub(super) fn handle_timeout(&mut self, now: Time) {
        self.tx.handle_timeout(now);
    }

    pub(super) fn sender_stats(&self) -> stp::SenderStats {
        self.tx.stats()
    }

    pub(super) fn receiver_stats(&self) -> stp::ReceiverStats {
        self.rx.stats()
    }
}
