//! BS-LIFT, the satellite gateway's half of LIFT (seed 001, section II): it holds the
//! mobile host's encrypted ACKs one pair behind, and when the link layer is late it
//! forwards the freezing ACK (window 0) instead, so that the fixed host's TCP waits in
//! persist mode rather than timing out while the satellite ARQ is still repairing.
//!
//! It reads only what LIFT puts in the clear: the LIFT header of uplink packets and the
//! SPI and sequence number of downlink ESP packets. The type enforces it: the TCP segment
//! inside `Esp` is private to the SA's endpoints (`esp.rs`). The state machine, and each
//! point where the paper's prose leaves a choice, is in docs/model-notes.md ("How we read
//! BS-LIFT").

use crate::lift::LiftHeader;
use crate::machine::{At, Counter, Hooks, Machine, NodeView, Transmit, Verdict};
use crate::packet::{Addr, Body, Esp, Packet};
use crate::time::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};

/// BS-LIFT's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiftBsConfig {
    /// The local timer: "slightly lower than the minimum Retransmission Timeout (RTO) of
    /// TCP" (section II.B); 0.98 s for TCP Reno's 1 s minimum (section IV, Table I).
    pub timer: Dur,
    /// Section III's intruder: the gateway forwards every FrACK at once "respecting no
    /// LIFT rules" and drops the ACKs, so the fixed host stays frozen. For testing
    /// MH-LIFT's self-protection.
    pub compromised: bool,
}

impl Default for LiftBsConfig {
    fn default() -> Self {
        LiftBsConfig {
            timer: Dur::from_millis(980),
            compromised: false,
        }
    }
}

/// What an ACK's LIFT header says (Fig. 5A), besides its flow.
#[derive(Clone, Copy, Debug)]
struct AckFields {
    ipsec_ack: u32,
    delete: bool,
    forward: bool,
    store: bool,
}

/// A (FrACK, ACK) pair held back, or the ACK kept to unfreeze the sender.
#[derive(Debug)]
struct Pair {
    frack: Option<Packet>,
    ack: Packet,
    ipsec_ack: u32,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    /// Forward every ACK at once, up to the first that acknowledges new data.
    Transitory,
    /// Hold ACKs one pair behind while the timer runs.
    Armed,
}

/// One entry of the TCP Flow Table (Fig. 4) and its freezing state.
#[derive(Debug)]
struct Flow {
    spi: u32,
    phase: Phase,
    timer: Option<Time>,
    frozen: bool,
    stored: Option<Pair>,
    /// The FrACK that came just before the ACK of its pair.
    frack: Option<Packet>,
    /// IPsec ACK number of the last ACK forwarded.
    forwarded: Option<u32>,
}

/// A downlink SA as the gateway sees it.
#[derive(Debug, Default)]
struct Sa {
    /// Highest ESP sequence number forwarded toward the MH.
    highest: Option<u32>,
    /// After an out-of-order packet: freezing is off until an ACK reaches this number.
    disorder: Option<u32>,
}

/// BS-LIFT on the gateway node.
#[derive(Debug, Default)]
pub struct LiftBs {
    cfg: LiftBsConfig,
    /// Keyed by (MH address, TCP Flow Identifier): the identifier is unique per MH.
    flows: BTreeMap<(Addr, u16), Flow>,
    sas: BTreeMap<u32, Sa>,
    out: VecDeque<Packet>,
    acks_forwarded: u64,
    fracks_forwarded: u64,
    freezes: u64,
    unfreezes: u64,
    fracks_dropped: u64,
}

/// The ESP packet of a LIFT packet, as the fixed host must receive it.
fn strip(ip: crate::packet::IpHeader, esp: Esp) -> Packet {
    Packet {
        ip,
        body: Body::Esp(esp),
    }
}

impl LiftBs {
    pub fn new(cfg: LiftBsConfig) -> LiftBs {
        LiftBs {
            cfg,
            ..LiftBs::default()
        }
    }

    fn forward_ack(&mut self, key: (Addr, u16), ack: Packet, ipsec_ack: u32) {
        self.acks_forwarded += 1;
        self.out.push_back(ack);
        if let Some(f) = self.flows.get_mut(&key) {
            f.forwarded = Some(f.forwarded.map_or(ipsec_ack, |l| l.max(ipsec_ack)));
        }
    }

    /// A downlink ESP packet on a known SA: note its sequence number.
    fn on_downlink(&mut self, spi: u32, seq: u32) {
        let sa = self.sas.entry(spi).or_default();
        match sa.highest {
            Some(h) if seq <= h => {
                // Section II.A: out of order on the wired side; let TCP's own congestion
                // control act until everything up to here is acknowledged.
                sa.disorder = Some(sa.disorder.map_or(h, |d| d.max(h)));
            }
            _ => sa.highest = Some(seq),
        }
    }

    fn on_ack(&mut self, now: Time, key: (Addr, u16), ack: Packet, fields: AckFields) {
        let AckFields {
            ipsec_ack,
            delete,
            forward,
            store,
        } = fields;
        let timer = self.cfg.timer;
        let Some(flow) = self.flows.get_mut(&key) else {
            self.forward_ack(key, ack, ipsec_ack);
            return;
        };
        let frack = flow.frack.take();
        let sa = self.sas.entry(flow.spi).or_default();
        if sa.disorder.is_some_and(|mark| ipsec_ack >= mark) {
            sa.disorder = None;
            flow.phase = Phase::Transitory;
        }
        let freezing = sa.disorder.is_none();
        let new_data = flow.forwarded.is_none_or(|l| ipsec_ack > l);
        if delete || !freezing {
            // Flush what is held, in order, then this ACK; no freezing meanwhile.
            let held = flow.stored.take();
            flow.phase = Phase::Transitory;
            flow.timer = None;
            flow.frozen = false;
            if let Some(p) = held {
                self.forward_ack(key, p.ack, p.ipsec_ack);
            }
            self.forward_ack(key, ack, ipsec_ack);
            if delete {
                self.flows.remove(&key);
            }
            return;
        }
        match flow.phase {
            Phase::Transitory => {
                if new_data {
                    flow.phase = Phase::Armed;
                    flow.timer = Some(now + timer);
                }
                self.fracks_dropped += frack.is_some() as u64;
                self.forward_ack(key, ack, ipsec_ack);
            }
            Phase::Armed if flow.frozen => {
                // A fresher ACK: the kept one unfreezes the sender (its window is open),
                // and the new pair is held.
                flow.frozen = false;
                flow.timer = Some(now + timer);
                let kept = flow.stored.replace(Pair {
                    frack,
                    ack,
                    ipsec_ack,
                });
                self.unfreezes += 1;
                if let Some(k) = kept {
                    self.forward_ack(key, k.ack, k.ipsec_ack);
                }
                if forward {
                    self.release(key);
                }
            }
            Phase::Armed if forward => {
                // F: the held ACK, then this one, at once.
                if new_data {
                    flow.timer = Some(now + timer);
                }
                self.fracks_dropped += frack.is_some() as u64;
                self.release(key);
                self.forward_ack(key, ack, ipsec_ack);
            }
            Phase::Armed if new_data || store => {
                let old = flow.stored.replace(Pair {
                    frack,
                    ack,
                    ipsec_ack,
                });
                if let Some(old) = old {
                    if flow.forwarded.is_none_or(|l| old.ipsec_ack > l) {
                        flow.timer = Some(now + timer);
                    }
                    self.fracks_dropped += old.frack.is_some() as u64;
                    self.forward_ack(key, old.ack, old.ipsec_ack);
                }
            }
            Phase::Armed => {
                self.fracks_dropped += frack.is_some() as u64;
                self.forward_ack(key, ack, ipsec_ack);
            }
        }
    }

    /// Forwards whatever ACK `key` holds (F: do not delay).
    fn release(&mut self, key: (Addr, u16)) {
        if let Some(p) = self.flows.get_mut(&key).and_then(|f| f.stored.take()) {
            self.fracks_dropped += p.frack.is_some() as u64;
            self.forward_ack(key, p.ack, p.ipsec_ack);
        }
    }

    /// The local timer of `key` expired: freeze if data is outstanding, else let the held
    /// ACK go.
    fn on_expiry(&mut self, key: (Addr, u16)) {
        let Some(flow) = self.flows.get_mut(&key) else {
            return;
        };
        flow.timer = None;
        let sa = self.sas.entry(flow.spi).or_default();
        let outstanding = |p: &Pair| sa.highest.is_some_and(|h| p.ipsec_ack < h);
        match &mut flow.stored {
            Some(p) if outstanding(p) && sa.disorder.is_none() && p.frack.is_some() => {
                let frack = p.frack.take().expect("checked");
                flow.frozen = true;
                self.freezes += 1;
                self.fracks_forwarded += 1;
                self.out.push_back(frack);
            }
            _ => {
                flow.phase = Phase::Transitory;
                self.release(key);
            }
        }
    }
}

impl Machine for LiftBs {
    fn hooks(&self) -> Hooks {
        Hooks {
            arrival: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(
        &mut self,
        now: Time,
        at: At,
        p: &mut Packet,
        _node: &dyn NodeView,
    ) -> Verdict {
        if at != At::Arrival {
            return Verdict::Pass;
        }
        match &p.body {
            Body::Esp(esp) => {
                if self.sas.contains_key(&esp.spi) {
                    self.on_downlink(esp.spi, esp.seq);
                }
                Verdict::Pass
            }
            Body::Lift(..) => {
                let Packet {
                    ip,
                    body: Body::Lift(h, esp),
                } = p.take()
                else {
                    unreachable!("matched above")
                };
                let key = (ip.src, h.flow());
                match (h, esp) {
                    (LiftHeader::Setup { spi, .. }, _) => {
                        self.sas.entry(spi).or_default();
                        self.flows.insert(
                            key,
                            Flow {
                                spi,
                                phase: Phase::Transitory,
                                timer: None,
                                frozen: false,
                                stored: None,
                                frack: None,
                                forwarded: None,
                            },
                        );
                    }
                    (LiftHeader::Teardown { .. }, _) => {
                        self.release(key);
                        self.flows.remove(&key);
                    }
                    (LiftHeader::Frack { .. }, Some(esp)) if self.cfg.compromised => {
                        self.fracks_forwarded += 1;
                        self.out.push_back(strip(ip, esp));
                    }
                    (LiftHeader::Frack { .. }, Some(esp)) => match self.flows.get_mut(&key) {
                        Some(f) => f.frack = Some(strip(ip, esp)),
                        None => self.fracks_dropped += 1,
                    },
                    (
                        LiftHeader::Ack {
                            delete,
                            forward,
                            store,
                            ipsec_ack,
                            ..
                        },
                        Some(esp),
                    ) => {
                        let fields = AckFields {
                            ipsec_ack,
                            delete,
                            forward,
                            store,
                        };
                        // A compromised gateway drops the ACKs (it forwarded the FrACKs).
                        if !self.cfg.compromised {
                            self.on_ack(now, key, strip(ip, esp), fields);
                        }
                    }
                    // An ACK or FrACK header with nothing after it carries nothing to forward.
                    (_, None) => {}
                }
                Verdict::Consume
            }
            _ => Verdict::Pass,
        }
    }

    fn handle_timeout(&mut self, now: Time, _node: &dyn NodeView) {
        let due: Vec<_> = self
            .flows
            .iter()
            .filter(|(_, f)| f.timer.is_some_and(|t| t <= now))
            .map(|(k, _)| *k)
            .collect();
        for key in due {
            self.on_expiry(key);
        }
    }

    fn poll_transmit(&mut self, _now: Time, _node: &dyn NodeView) -> Option<Transmit> {
        self.out.pop_front().map(Transmit::route)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.flows.values().filter_map(|f| f.timer).min()
    }

    fn kind(&self) -> &'static str {
        "lift-bs"
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        out.extend([
            ("acks_forwarded", self.acks_forwarded),
            ("fracks_forwarded", self.fracks_forwarded),
            ("freezes", self.freezes),
            ("unfreezes", self.unfreezes),
            ("fracks_dropped", self.fracks_dropped),
        ]);
    }
}
