//! Run-time invariants (`hetpath run --check`): conservation balances the engine's
//! counters must satisfy at any instant between events, checked when a run ends, and
//! the event queue's record of events asked for before the clock.
//!
//! - Per link direction: offered = delivered + queue drops + channel losses + outage
//!   losses + in flight (queued, being serialised, on the wire). Over an ESW link "in
//!   flight" is what the link side holds (its backlog and its SR-ARQ window: a datagram
//!   leaves it delivered or written off, however many cells were resent); over a WLAN
//!   it is the direction's frames in the medium (queued, or on the air and not yet
//!   handed up: retries keep a frame there until its retry limit, then it is a loss).
//!   FEC keeps nothing: it decides each packet's fate once, as any channel does.
//! - The frame store: every frame in it is held by a link direction or waits in a
//!   machine's slot for room in a queue (nothing leaks, so memory grows with what is in
//!   flight only).
//! - Per TCP connection of every host: bytes acknowledged <= sent <= written; per flow
//!   between two hosts, bytes delivered <= bytes its sender wrote.
//! - The event queue: no event scheduled before the clock (`engine::Past`).
//!
//! The counters exist and are reported whether or not the checks run; the checks cost
//! nothing until the run ends, when a driver calls `Simulation::check_invariants`.

use super::{DirId, Ev, MachineId, Simulation};
use hetpath_proto::Time;
use std::fmt;

/// An invariant that did not hold: what broke it, when, and the counters that show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The link direction, flow, machine or component.
    pub subject: String,
    /// The simulated time it was found (or, for an event in the past, happened) at.
    pub at: Time,
    /// The balance and its counters.
    pub detail: String,
    /// Other violations found with it.
    pub more: usize,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invariant violated at t = {:.9} s: {}: {}",
            self.at.as_secs_f64(),
            self.subject,
            self.detail
        )?;
        if self.more > 0 {
            write!(f, " (and {} more)", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

impl Simulation {
    /// Checks the run's invariants now (the module's doc); the first violation, with the
    /// number of others.
    pub fn check_invariants(&self) -> Result<(), Violation> {
        let mut found = Vec::new();
        self.check_event_queue(&mut found);
        self.check_links(&mut found);
        self.check_frames(&mut found);
        self.check_connections(&mut found);
        let more = found.len().saturating_sub(1);
        match found.into_iter().next() {
            None => Ok(()),
            Some(v) => Err(Violation { more, ..v }),
        }
    }

    /// The invariants, if the `check` switch is on (`Ok` otherwise).
    pub fn checked(&self) -> Result<(), Violation> {
        if self.check {
            self.check_invariants()
        } else {
            Ok(())
        }
    }

    fn violation(&self, subject: String, detail: String) -> Violation {
        Violation {
            subject,
            at: self.q.now(),
            detail,
            more: 0,
        }
    }

    /// What a queued event concerns, for a message.
    fn event_label(&self, ev: Ev) -> String {
        match ev {
            Ev::TxDone(d, _) => format!("transmission end on {}", self.dir_label(d)),
            Ev::Arrive(d, _) => format!("arrival over {}", self.dir_label(d)),
            Ev::LinkState(d, up) => format!(
                "{} of {}",
                ["outage", "recovery"][up as usize],
                self.dir_label(d)
            ),
            Ev::Timer(m) => format!("deadline of {}", self.machine_label(m)),
            Ev::ConnTimer(m, c) => format!(
                "deadline of connection {} of {}",
                c.0,
                self.machine_label(m)
            ),
            Ev::FlowStart(f) | Ev::WebWake(f) => {
                format!("{ev:?} of flow {:?}", self.flows[f.index()].params.name)
            }
            other => format!("{other:?}"),
        }
    }

    fn check_event_queue(&self, found: &mut Vec<Violation>) {
        let past = self.q.past();
        if let Some((asked, now, ev)) = past.first {
            found.push(Violation {
                subject: "event queue".into(),
                at: now,
                detail: format!(
                    "{} scheduled for t = {:.9} s, before the clock ({} event(s) in the past in all)",
                    self.event_label(ev),
                    asked.as_secs_f64(),
                    past.count
                ),
                more: 0,
            });
        }
    }

    /// What direction `d` holds: its `LinkDir`'s queue, transmitter and wire, and what
    /// the ESW link side or WLAN medium it runs over holds of its packets.
    fn held_by(&self, d: DirId) -> u64 {
        self.dirs[d.index()].in_flight() + self.esw_held(d) + self.wlan_held(d)
    }

    fn check_links(&self, found: &mut Vec<Violation>) {
        for (d, dir) in self.dirs() {
            let s = &dir.stats;
            let held = self.held_by(d);
            let out = s.delivered + s.drops + s.lost_packets + held;
            if s.outage_losses > s.lost_packets {
                found.push(self.violation(
                    self.dir_label(d),
                    format!(
                        "outage losses {} > lost packets {} (they are a part of them)",
                        s.outage_losses, s.lost_packets
                    ),
                ));
            } else if s.offered != out {
                found.push(self.violation(
                    self.dir_label(d),
                    format!(
                        "offered {} != delivered {} + queue drops {} + channel losses {} + \
                         outage losses {} + in flight {} (= {out})",
                        s.offered,
                        s.delivered,
                        s.drops,
                        s.channel_losses(),
                        s.outage_losses,
                        held
                    ),
                ));
            }
            if let Some(e) = self.esw_stats(d) {
                // The ESW side counts the same datagrams: its losses include refusals.
                let (lost, delivered) = (s.drops + s.lost_packets, s.delivered);
                if (e.packets_lost, e.packets_delivered) != (lost, delivered) {
                    found.push(self.violation(
                        self.dir_label(d),
                        format!(
                            "the ESW side delivered {} and lost {} datagrams, the direction \
                             counts {delivered} delivered and {lost} dropped or lost",
                            e.packets_delivered, e.packets_lost
                        ),
                    ));
                }
            }
        }
    }

    fn check_frames(&self, found: &mut Vec<Violation>) {
        let links: u64 = self.dirs.iter().map(|d| d.in_flight()).sum();
        let waiting = self.machines.iter().filter(|s| s.is_blocked()).count() as u64;
        let live = self.frames.live() as u64;
        if live != links + waiting {
            found.push(self.violation(
                "frame store".into(),
                format!(
                    "{live} frames in the network != {links} held by link directions + \
                     {waiting} waiting for room in a queue"
                ),
            ));
        }
    }

    fn check_connections(&self, found: &mut Vec<Violation>) {
        for (i, slot) in self.machines.iter().enumerate() {
            let Some(host) = slot.host() else { continue };
            for (c, conn) in host.connections() {
                let (acked, sent, written) = conn.sender().sequence_ends();
                if !(acked <= sent && sent <= written) {
                    found.push(self.violation(
                        format!(
                            "connection {} (port {} to {:?}:{}) of {}",
                            c.0,
                            conn.local().port,
                            conn.remote().addr,
                            conn.remote().port,
                            self.machine_label(MachineId(i as u32))
                        ),
                        format!(
                            "bytes acknowledged {} <= sent {} <= written {} does not hold \
                             (sequence ends, the FIN counting one once queued)",
                            acked - 1,
                            sent - 1,
                            written - 1
                        ),
                    ));
                }
            }
        }
        // A web flow's bytes go both ways over many connections, checked one by one above.
        for f in self.flows.iter().filter(|f| f.web.is_none()) {
            let Some(client) = self.client_conn(f) else {
                continue;
            };
            let written = client.sender().bytes_written();
            let delivered = self.delivered(f);
            if delivered > written {
                found.push(self.violation(
                    format!("flow {:?}", f.params.name),
                    format!("bytes delivered {delivered} > bytes its sender wrote {written}"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Ev;
    use crate::link::Frame;
    use crate::scenario::load;
    use hetpath_proto::packet::{Addr, Body};
    use hetpath_proto::{Packet, Time};

    /// A router before a lossy bottleneck with a small queue and an outage: every kind
    /// of loss happens on its direction r -> b (the third).
    const LOSSY: &str = r#"
[scenario]
name = "t"
duration = "20s"
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
name = "in"
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "l"
a = "r"
b = "b"
rate = "2Mbps"
delay = "50ms"
queue = "5pkt"
channel = { model = "bernoulli", p = 0.02 }
outages = [{ down = "3s", up = "4s" }]
[[flow]]
name = "f"
from = "a"
to = "b"
cc = "cubic"
"#;

    /// The bottleneck direction r -> b.
    const BN: usize = 2;

    fn ran() -> super::Simulation {
        let mut sim = load(LOSSY, "t.toml", None).expect("loads");
        sim.check = true;
        sim.run(&mut |_, _| true);
        sim
    }

    /// Queue drops, channel and outage losses all happen, and the balance holds.
    #[test]
    fn every_loss_is_counted_and_the_balance_holds() {
        let sim = ran();
        let s = sim.dirs[BN].stats;
        assert!(
            s.drops > 0 && s.channel_losses() > 0 && s.outage_losses > 0,
            "{s:?}"
        );
        assert_eq!(
            s.offered,
            s.delivered + s.drops + s.lost_packets + sim.dirs[BN].in_flight()
        );
        sim.checked().expect("the invariants hold");
    }

    /// A packet that vanished without a counter is an error naming the link direction,
    /// the time and the counters.
    #[test]
    fn a_vanished_packet_names_the_link_and_its_counters() {
        let mut sim = ran();
        sim.dirs[BN].stats.delivered -= 1;
        let v = sim.checked().expect_err("unbalanced").to_string();
        assert!(v.contains("at t = 20.000000000 s"), "{v}");
        assert!(v.contains(r#"link "l" r -> b: offered "#), "{v}");
        assert!(v.contains("outage losses"), "{v}");
        sim.check = false;
        assert!(sim.checked().is_ok(), "off: nothing is checked");
        assert!(sim.check_invariants().is_err(), "asked for: checked");
    }

    /// A frame nothing holds is a leak.
    #[test]
    fn a_leaked_frame_is_found() {
        let mut sim = ran();
        sim.frames.insert(Frame {
            uid: 1 << 40,
            packet: Packet::new(Addr(1), Addr(2), Body::Raw { proto: 0, len: 0 }),
        });
        let v = sim.checked().expect_err("a leak").to_string();
        assert!(v.contains("frame store"), "{v}");
    }

    /// An event scheduled before the clock is reported with what it was.
    #[test]
    fn an_event_in_the_past_is_found() {
        let mut sim = ran();
        let f = sim.flows.len() as u32 - 1;
        sim.q
            .schedule(Time::ZERO, Ev::WebWake(super::super::FlowId(f)));
        let v = sim.checked().expect_err("in the past").to_string();
        assert!(
            v.contains(
                r#"event queue: WebWake(FlowId(0)) of flow "f" scheduled for t = 0.000000000 s"#
            ),
            "{v}"
        );
    }
}
