//! APOHN at the edge router (seed 000 Figs. 6 and 7): the far end of the sender's SBP
//! connection, and LLE-TCP's agent toward the WLAN (Kliazovich and Granelli 2004, the
//! seed's [20]).
//!
//! Datagrams STP delivers in order go on toward their station as the IP packets they
//! carry; no application storage is involved. When the WLAN's MAC acknowledges one, the
//! router reports it confirmed to the sender: the feedback point moves from the receiver's
//! TCP to the router, but a datagram is confirmed only once the destination node has it.
//! A datagram the WLAN gives up (a full queue, the retry limit) is reported lost, and the
//! booster sends it again. Reports travel over the reverse STP connection.
//!
//! The seed's router "generates the TCP ACK"; here it names the confirmed datagram instead,
//! because under end-to-end ESP (§III.E) it cannot read or write the TCP header, and the
//! booster, which holds the datagram, turns the report into its release
//! (docs/model-notes.md, "Seed 000").

use super::stp_end::StpEnd;
use crate::machine::{At, Counter, Hooks, Machine, NodeView, Transmit, Verdict};
use crate::packet::{Addr, Body, Packet, SbpPayload};
use crate::stp::StpConfig;
use crate::time::Time;
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct ApohnBridgeConfig {
    /// This router's address and the sender node's.
    pub me: Addr,
    pub sender: Addr,
    /// STP back to the sender (the reports): its rate is the satellite return link's.
    pub stp: StpConfig,
}

/// What identifies a packet on the WLAN while its MAC works on it: addresses, protocol
/// and the first sequence number visible in clear (TCP's, or ESP's own).
type PacketKey = (Addr, Addr, u32, u64);

fn key(p: &Packet) -> PacketKey {
    let (a, b) = match &p.body {
        Body::Tcp(s) => ((s.src_port as u32) << 16 | s.dst_port as u32, s.seq),
        Body::Esp(e) => (e.spi, e.seq as u64),
        _ => (p.protocol() as u32, 0),
    };
    (p.ip.src, p.ip.dst, a, b)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    pub forwarded: u64,
    pub confirmed: u64,
    pub lost: u64,
}

pub struct ApohnBridge {
    stp: StpEnd,
    /// Datagrams on their way over the WLAN, by what the MAC reports them with.
    on_air: HashMap<PacketKey, u64>,
    forward: VecDeque<Packet>,
    confirmed: Vec<u64>,
    lost: Vec<u64>,
    stats: BridgeStats,
}

/// A report's bytes: a 4-byte SBP header, then 4 per datagram id.
fn report_len(ids: usize) -> u32 {
    4 + 4 * ids as u32
}

impl ApohnBridge {
    pub fn new(cfg: ApohnBridgeConfig) -> ApohnBridge {
        ApohnBridge {
            stp: StpEnd::new(cfg.me, cfg.sender, cfg.stp),
            on_air: HashMap::default(),
            forward: VecDeque::new(),
            confirmed: Vec::new(),
            lost: Vec::new(),
            stats: BridgeStats::default(),
        }
    }

    /// Datagrams STP delivered go on toward their stations.
    fn read_datagrams(&mut self) {
        while let Some(payload) = self.stp.poll_deliver() {
            if let SbpPayload::Datagram { id, packet, .. } = payload {
                self.on_air.insert(key(&packet), id);
                self.forward.push_back(*packet);
                self.stats.forwarded += 1;
            }
        }
    }

    fn outcome(&mut self, p: &Packet, acked: bool) {
        let Some(id) = self.on_air.remove(&key(p)) else {
            return; // not a datagram of ours
        };
        if acked {
            self.confirmed.push(id);
            self.stats.confirmed += 1;
        } else {
            self.lost.push(id);
            self.stats.lost += 1;
        }
    }
}

impl Machine for ApohnBridge {
    fn kind(&self) -> &'static str {
        "apohn-bridge"
    }

    fn hooks(&self) -> Hooks {
        Hooks {
            local: true,
            link_status: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        match at {
            At::LinkAcked(_) => self.outcome(p, true),
            At::LinkDropped(_) => self.outcome(p, false),
            _ if self.stp.handle_packet(now, p) => self.read_datagrams(),
            _ => return Verdict::Pass,
        }
        Verdict::Consume
    }

    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        self.stp.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Time, _: &dyn NodeView) -> Option<Transmit> {
        if (!self.confirmed.is_empty() || !self.lost.is_empty()) && self.stp.can_push() {
            let (confirmed, lost) = (
                std::mem::take(&mut self.confirmed),
                std::mem::take(&mut self.lost),
            );
            let len = report_len(confirmed.len() + lost.len());
            self.stp.push(SbpPayload::Report { confirmed, lost }, len);
        }
        // Reports and STATs first: a datagram for a full WLAN queue waits there and holds
        // back what is polled after it (the machine contract's `LocalQueue::Wait`).
        if let Some(p) = self.stp.poll_transmit(now) {
            return Some(Transmit::route(p));
        }
        self.forward.pop_front().map(Transmit::route)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.stp.poll_timeout()
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        let r = self.stp.receiver_stats();
        out.extend([
            ("datagrams_forwarded", self.stats.forwarded),
            ("datagrams_confirmed", self.stats.confirmed),
            ("datagrams_lost", self.stats.lost),
            ("stp_stats_sent", r.stats_sent),
            ("stp_ustats_sent", r.ustats_sent),
        ]);
    }
}
