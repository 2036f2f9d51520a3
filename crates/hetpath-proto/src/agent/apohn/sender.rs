//! APOHN at the sender node (seed 000 Figs. 1 and 7): the protocol booster over one SBP
//! connection to the edge router, carried by STP across the satellite hop. The edge
//! router's reports come back over the reverse STP connection (the seed's second pair of
//! STP agents) and release or resend the booster's datagrams.

use super::booster::{Booster, BoosterConfig};
use super::stp_end::StpEnd;
use super::DATAGRAM_HEADER;
use crate::esp::SecurityAssociation;
use crate::machine::{At, Counter, Hooks, Machine, NodeView, Transmit, Verdict};
use crate::packet::{Addr, Body, Packet, SbpPayload, TcpSegment};
use crate::stp::StpConfig;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct ApohnSenderConfig {
    /// This node's address and the edge router's (the SBP connection's two ends).
    pub me: Addr,
    pub bridge: Addr,
    pub booster: BoosterConfig,
    /// STP toward the edge router: its rate is the satellite link's dedicated capacity.
    pub stp: StpConfig,
    /// Bytes subnetwork-layer encryption adds to each datagram between the node and the
    /// edge router (§III.E, Fig. 5); 0 when it is off.
    pub encryption: u32,
}

pub struct ApohnSender {
    cfg: ApohnSenderConfig,
    booster: Booster,
    stp: StpEnd,
}

impl ApohnSender {
    pub fn new(cfg: ApohnSenderConfig) -> ApohnSender {
        ApohnSender {
            booster: Booster::new(cfg.booster.clone()),
            stp: StpEnd::new(cfg.me, cfg.bridge, cfg.stp),
            cfg,
        }
    }

    /// Hands the booster's datagrams to STP while its window has room.
    fn feed(&mut self) {
        while self.stp.can_push() {
            let Some((id, p)) = self.booster.poll_subnet() else {
                return;
            };
            let len = p.size() + DATAGRAM_HEADER + self.cfg.encryption;
            let d = SbpPayload::Datagram {
                id,
                packet: Box::new(p),
                sealed: self.cfg.encryption,
            };
            self.stp.push(d, len);
        }
    }

    /// The edge router's reports: confirmed datagrams leave the booster, lost ones go
    /// again.
    fn read_reports(&mut self, now: Time) {
        while let Some(payload) = self.stp.poll_deliver() {
            if let SbpPayload::Report { confirmed, lost } = payload {
                confirmed
                    .iter()
                    .for_each(|&id| self.booster.confirmed(now, id));
                lost.iter().for_each(|&id| self.booster.lost(id));
            }
        }
    }
}

/// The TCP segment a packet of this node's host carries, opened if it is in ESP: the
/// booster is on the node that holds the SA (§III.E: APOHN reads transport headers only
/// at the end nodes, where the keys are; docs/architecture.md, convention 8).
pub(super) fn own_segment(p: &Packet) -> Option<TcpSegment> {
    match &p.body {
        Body::Tcp(seg) => Some(seg.clone()),
        Body::Esp(e) => SecurityAssociation::new(e.spi).open(e.clone()),
        _ => None,
    }
}

impl Machine for ApohnSender {
    fn kind(&self) -> &'static str {
        "apohn-sender"
    }

    fn hooks(&self) -> Hooks {
        Hooks {
            local: true,
            departure: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        if at == At::Local {
            if !self.stp.handle_packet(now, p) {
                return Verdict::Pass;
            }
            self.read_reports(now);
            return Verdict::Consume;
        }
        // Only this node's own packets are opened (a forwarded one is not ours to read).
        let seg = (p.ip.src == self.cfg.me).then(|| own_segment(p)).flatten();
        match seg {
            Some(seg) if Booster::boosts(&seg) => {
                self.booster.take(now, &seg, p.take());
                Verdict::Consume
            }
            _ => Verdict::Pass,
        }
    }

    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        self.stp.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Time, _: &dyn NodeView) -> Option<Transmit> {
        if let Some(ack) = self.booster.poll_tcp() {
            return Some(Transmit::route(ack));
        }
        self.feed();
        self.stp.poll_transmit(now).map(Transmit::route)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.stp.poll_timeout()
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        let b = self.booster.stats();
        let s = self.stp.sender_stats();
        out.extend([
            ("booster_taken", b.taken),
            ("booster_freezes", b.freezes),
            ("booster_resumes", b.resumes),
            ("booster_confirmed", b.confirmed),
            ("booster_resent", b.resent),
            ("booster_window", self.booster.window() as u64),
            ("stp_sds_sent", s.sds_sent),
            ("stp_retransmissions", s.retransmissions),
            ("stp_polls", s.polls),
        ]);
    }
}
