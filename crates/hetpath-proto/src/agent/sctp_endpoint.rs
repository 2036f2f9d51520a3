//! `SctpEndpoint`: one end of an SCTP association (`crate::sctp`, RFC 4960) as a machine
//! on its node, so that a flow can run over SCTP (seed 001 section IV's baseline).
//!
//! It owns one `Association` (the client's from `connect`, the server's from `accept`),
//! claims the SCTP packets addressed to its endpoint from the peer's (`At::Local`), and
//! drives the association's `handle_packet`, `poll_transmit` and timers. Each SCTP packet
//! travels as `Body::Sctp`, inside ESP when the association is configured with IPsec
//! (`SctpConfig::esp_overhead > 0`): then it is protocol 50 and opaque on the path.
//!
//! Two faces:
//!
//! - **the flow** (`Simulation::bind_stream`): like the ideal protocol, both ends report
//!   on `ConnId(0)`: `Delivered` with the message bytes the receiving application has so
//!   far, `Acked` once every byte of a sized source is acknowledged, `Lost` for each DATA
//!   chunk marked for retransmission, and an ABORT as the connection's
//!   `tcp::Event::Aborted` (what the flow machinery reads as an aborted flow);
//! - **an application** (a web client or server that wraps the endpoint, or reaches it
//!   through `Machine::messages` as the simulator's web flows do): `send(stream, bytes)`
//!   queues a message, `poll_message` says which stream delivered which message,
//!   complete and in order within its stream (`keep_messages` turns the queue on), and
//!   `delivered_on(stream)` counts a stream's bytes.
//!
//! A flow's source (`Feed`) writes its bytes as messages of `message` bytes, one per
//! stream in turn (0, 1, ..., streams - 1, 0, ...), the last one shorter; it keeps about
//! a receive window of unsent data queued, so that a bulk source (no size) never holds
//! more than that. A sized source closes the association (SHUTDOWN, section 9.2) once
//! everything is queued.

use crate::ids::ConnId;
pub use crate::machine::Message;
use crate::machine::{
    At, Counter, Event, Hooks, Machine, MessagePort, NodeView, Transmit, Verdict,
};
use crate::packet::{Body, Endpoint, Packet, SctpBody, SctpEsp};
use crate::sctp::{self, Association, SctpConfig, SendError, State};
use crate::tcp;
use crate::time::Time;
use std::collections::VecDeque;

/// The stream both ends report on (`Simulation::bind_stream`).
pub const STREAM: ConnId = ConnId(0);

/// The security parameter indexes of the association's ESP, one per direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EspSpis {
    /// On the packets this end sends.
    pub outbound: u32,
    /// On the packets it accepts.
    pub inbound: u32,
}

/// A flow source's bytes, written as messages round robin over the streams.
#[derive(Clone, Copy, Debug)]
struct Feed {
    /// Bytes not yet queued; `None`: a bulk source that never ends.
    left: Option<u64>,
    message: u64,
    next_stream: u16,
    streams: u16,
    /// Bytes queued so far, and the size once everything is.
    queued: u64,
    done: Option<u64>,
}

pub struct SctpEndpoint {
    assoc: Association,
    local: Endpoint,
    remote: Endpoint,
    /// ESP's SPIs and the next outbound sequence number (RFC 4303 section 3.3.3: from 1).
    esp: Option<(EspSpis, u32)>,
    start: Time,
    started: bool,
    feed: Option<Feed>,
    /// Message bytes delivered to the application, in total and per stream.
    delivered: u64,
    per_stream: Vec<u64>,
    keep_messages: bool,
    messages: VecDeque<Message>,
    /// DATA chunk retransmissions already reported as `Lost`.
    reported_rtx: u64,
    acked_reported: bool,
    report: bool,
    events: VecDeque<Event>,
}

impl SctpEndpoint {
    /// The active end: sends INIT at `start` (RFC 4960 section 5.1 A).
    pub fn connect(cfg: SctpConfig, local: Endpoint, remote: Endpoint, start: Time) -> Self {
        let assoc = Association::connect(cfg, local.port, remote.port);
        SctpEndpoint::new(assoc, local, remote, start)
    }

    /// The passive end: answers an INIT from `remote` (section 5.1 B).
    pub fn accept(cfg: SctpConfig, local: Endpoint, remote: Endpoint) -> Self {
        let assoc = Association::accept(cfg, local.port);
        let mut e = SctpEndpoint::new(assoc, local, remote, Time::ZERO);
        e.started = true;
        e
    }

    fn new(assoc: Association, local: Endpoint, remote: Endpoint, start: Time) -> Self {
        SctpEndpoint {
            per_stream: vec![0; assoc.config().streams as usize],
            assoc,
            local,
            remote,
            esp: None,
            start,
            started: false,
            feed: None,
            delivered: 0,
            keep_messages: false,
            messages: VecDeque::new(),
            reported_rtx: 0,
            acked_reported: false,
            report: true,
            events: VecDeque::new(),
        }
    }

    /// Wraps every packet in ESP with these SPIs and `SctpConfig::esp_overhead` bytes
    /// (which must be above 0), and accepts only packets that come so.
    pub fn with_esp(mut self, spis: EspSpis) -> Self {
        debug_assert!(self.assoc.config().esp_overhead > 0);
        self.esp = Some((spis, 1));
        self
    }

    /// A flow's source: `size` bytes (`None`: forever) as messages of `message` bytes
    /// round robin over the streams, then a graceful shutdown.
    pub fn with_source(mut self, size: Option<u64>, message: u64) -> Self {
        self.feed = Some(Feed {
            left: size,
            message: message.max(1),
            next_stream: 0,
            streams: self.assoc.config().streams,
            queued: 0,
            done: None,
        });
        self
    }

    /// Keeps every received message for `poll_message` (an application that reads them;
    /// a flow's sink only counts bytes).
    pub fn keep_messages(mut self, on: bool) -> Self {
        self.keep_messages = on;
        self
    }

    /// Reports on `STREAM` for a flow (default on); an application that wraps the
    /// endpoint may turn it off and report as it likes.
    pub fn report_flow(mut self, on: bool) -> Self {
        self.report = on;
        self
    }

    /// Queues a message of `bytes` on `stream` (the application's send).
    pub fn send(&mut self, stream: u16, bytes: u64) -> Result<(), SendError> {
        self.assoc.send(stream, bytes)
    }

    /// Graceful shutdown once everything queued is acknowledged (section 9.2).
    pub fn close(&mut self, now: Time) {
        self.assoc.close(now);
    }

    /// The next message delivered to the application (with `keep_messages`).
    pub fn poll_message(&mut self) -> Option<Message> {
        self.messages.pop_front()
    }

    /// Message bytes delivered on `stream` so far.
    pub fn delivered_on(&self, stream: u16) -> u64 {
        self.per_stream.get(stream as usize).copied().unwrap_or(0)
    }

    /// Message bytes delivered on all streams so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    pub fn association(&self) -> &Association {
        &self.assoc
    }

    /// Whether `p` comes from the peer to us, as an SCTP packet in the form we expect.
    fn claims(&self, p: &Packet) -> bool {
        let Body::Sctp(b) = &p.body else {
            return false;
        };
        let esp_ok = match (self.esp, b.esp) {
            (None, None) => true,
            (Some((spis, _)), Some(e)) => e.spi == spis.inbound,
            _ => false,
        };
        esp_ok
            && p.ip.src == self.remote.addr
            && p.ip.dst == self.local.addr
            && b.packet.src_port == self.remote.port
            && b.packet.dst_port == self.local.port
    }

    /// Queues the source's next messages while less than a receive window (plus one
    /// message) of unsent data is queued, and closes once a sized source has queued all.
    fn top_up(&mut self, now: Time) {
        let Some(feed) = &mut self.feed else {
            return;
        };
        let low_water = self.assoc.config().rwnd as u64 + feed.message;
        while feed.left != Some(0) && feed.queued - self.assoc.stats().data_bytes_sent < low_water {
            let bytes = feed.left.map_or(feed.message, |l| l.min(feed.message));
            match self.assoc.send(feed.next_stream, bytes) {
                Ok(()) => {}
                // The peer offered fewer inbound streams than we asked for (section
                // 5.1.1): use those.
                Err(SendError::InvalidStream { streams, .. }) if streams > 0 => {
                    feed.streams = streams;
                    feed.next_stream = 0;
                    continue;
                }
                Err(_) => return,
            }
            feed.queued += bytes;
            feed.left = feed.left.map(|l| l - bytes);
            feed.next_stream = (feed.next_stream + 1) % feed.streams;
            if feed.left == Some(0) {
                feed.done = Some(feed.queued);
                self.assoc.close(now);
            }
        }
    }

    /// Turns what the association reported into the application's messages and the
    /// flow's events.
    fn pump(&mut self) {
        while let Some(e) = self.assoc.poll_event() {
            match e {
                sctp::Event::Delivered {
                    stream, ssn, bytes, ..
                } => {
                    self.delivered += bytes;
                    if let Some(n) = self.per_stream.get_mut(stream as usize) {
                        *n += bytes;
                    }
                    if self.keep_messages {
                        self.messages.push_back(Message { stream, ssn, bytes });
                    }
                    if self.report {
                        self.events.push_back(Event::Delivered {
                            conn: STREAM,
                            bytes: self.delivered,
                        });
                    }
                }
                sctp::Event::Aborted(_) if self.report => self.events.push_back(Event::Tcp {
                    conn: STREAM,
                    event: tcp::Event::Aborted,
                }),
                _ => {}
            }
        }
        if !self.report {
            return;
        }
        let s = self.assoc.stats();
        let rtx = s.fast_retransmissions + s.timeout_retransmissions;
        for _ in self.reported_rtx..rtx {
            self.events.push_back(Event::Lost { conn: STREAM });
        }
        self.reported_rtx = rtx;
        if let Some(bytes) = self.feed.and_then(|f| f.done) {
            if !self.acked_reported && self.assoc.all_acked() {
                self.acked_reported = true;
                self.events.push_back(Event::Acked {
                    conn: STREAM,
                    bytes,
                });
            }
        }
    }

    fn wrap(&mut self, p: sctp::SctpPacket) -> Packet {
        let overhead = self.assoc.config().esp_overhead;
        let esp = self.esp.as_mut().map(|(spis, seq)| {
            let e = SctpEsp {
                spi: spis.outbound,
                seq: *seq,
                overhead,
            };
            *seq = seq.wrapping_add(1);
            e
        });
        Packet::new(
            self.local.addr,
            self.remote.addr,
            Body::Sctp(SctpBody::new(p, esp)),
        )
    }
}

impl Machine for SctpEndpoint {
    fn hooks(&self) -> Hooks {
        Hooks {
            local: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, now: Time, _at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        if !self.claims(p) {
            return Verdict::Pass;
        }
        let Body::Sctp(b) = &p.body else {
            unreachable!("claimed above")
        };
        self.assoc.handle_packet(now, &b.packet);
        self.pump();
        Verdict::Consume
    }

    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        self.started |= now >= self.start;
        self.assoc.handle_timeout(now);
        self.pump();
    }

    /// The association's next packet, while the node's queue toward the peer has room
    /// (as a socket would block); the machine is woken when it drains.
    fn poll_transmit(&mut self, now: Time, node: &dyn NodeView) -> Option<Transmit> {
        self.started |= now >= self.start;
        if !self.started || !node.ready(self.remote.addr) {
            return None;
        }
        self.top_up(now);
        let p = self.assoc.poll_transmit(now)?;
        Some(Transmit::route(self.wrap(p)))
    }

    fn poll_timeout(&self) -> Option<Time> {
        if !self.started {
            return Some(self.start);
        }
        self.assoc.poll_timeout()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn kind(&self) -> &'static str {
        "sctp"
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        let s = self.assoc.stats();
        out.extend([
            ("packets_sent", s.packets_sent),
            ("packets_received", s.packets_received),
            ("data_chunks_sent", s.data_chunks_sent),
            ("data_bytes_sent", s.data_bytes_sent),
            ("fast_retransmissions", s.fast_retransmissions),
            ("timeout_retransmissions", s.timeout_retransmissions),
            ("fast_recoveries", s.fast_recoveries),
            ("t3_timeouts", s.timeouts),
            ("sacks_sent", s.sacks_sent),
            ("sacks_received", s.sacks_received),
            ("duplicate_tsns", s.duplicate_tsns),
            ("messages_delivered", s.messages_delivered),
            ("bytes_delivered", s.bytes_delivered),
            // 1 once the association ended: gracefully (section 9.2) or by ABORT.
            ("closed", (self.assoc.state() == State::Closed) as u64),
            ("aborted", (self.assoc.state() == State::Aborted) as u64),
        ]);
    }

    fn messages(&mut self) -> Option<&mut dyn MessagePort> {
        Some(self)
    }
}

impl MessagePort for SctpEndpoint {
    fn send(&mut self, stream: u16, bytes: u64) -> Result<(), SendError> {
        SctpEndpoint::send(self, stream, bytes)
    }

    fn poll_message(&mut self) -> Option<Message> {
        SctpEndpoint::poll_message(self)
    }

    fn timeouts(&self) -> u64 {
        self.assoc.stats().timeouts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Addr;
    use crate::testing::NoNode;
    use crate::time::Dur;

    const CLIENT: Endpoint = Endpoint {
        addr: Addr(1),
        port: 40_000,
    };
    const SERVER: Endpoint = Endpoint {
        addr: Addr(2),
        port: 5_000,
    };
    const DELAY: Dur = Dur::from_millis(50);

    fn cfg(tag: u32, tsn: u32, esp_overhead: u32) -> SctpConfig {
        SctpConfig {
            initiate_tag: tag,
            initial_tsn: tsn,
            esp_overhead,
            ..SctpConfig::default()
        }
    }

    /// Two endpoints joined by a fixed delay both ways, in explicit time; `drop` decides
    /// per packet (its index among all sent, the packet) whether it is lost. Returns
    /// every event with its time and side (0 client, 1 server) and the packets sent.
    fn run(
        ends: &mut [SctpEndpoint; 2],
        mut drop: impl FnMut(usize, &Packet) -> bool,
        until: Time,
    ) -> (Vec<(Time, usize, Event)>, Vec<Packet>) {
        let mut now = Time::ZERO;
        let mut flight: Vec<(Time, usize, Packet)> = Vec::new();
        let (mut events, mut sent) = (Vec::new(), Vec::new());
        while now <= until {
            for (side, e) in ends.iter_mut().enumerate() {
                while let Some(t) = e.poll_transmit(now, &NoNode) {
                    if !drop(sent.len(), &t.packet) {
                        flight.push((now + DELAY, 1 - side, t.packet.clone()));
                    }
                    sent.push(t.packet);
                }
                events.extend(std::iter::from_fn(|| e.poll_event()).map(|ev| (now, side, ev)));
            }
            let next = flight
                .iter()
                .map(|f| f.0)
                .chain(ends.iter().filter_map(|e| e.poll_timeout()))
                .min();
            let Some(next) = next else { break };
            now = next.max(now);
            if let Some(k) = flight.iter().position(|f| f.0 <= now) {
                let (_, to, mut p) = flight.remove(k);
                let v = ends[to].handle_packet(now, At::Local, &mut p, &NoNode);
                assert!(
                    matches!(v, Verdict::Consume),
                    "the peer's packet is claimed"
                );
            } else {
                for e in ends.iter_mut() {
                    e.handle_timeout(now, &NoNode);
                }
            }
        }
        (events, sent)
    }

    #[test]
    fn a_sized_source_reports_delivery_and_acknowledgement() {
        let size = 30_000;
        let start = Time::ZERO + Dur::from_secs(1);
        let mut ends = [
            SctpEndpoint::connect(cfg(7, 100, 0), CLIENT, SERVER, start)
                .with_source(Some(size), 1200),
            SctpEndpoint::accept(cfg(9, 5000, 0), SERVER, CLIENT),
        ];
        // Lose the fifth packet (DATA) once: a retransmission is reported as `Lost`.
        let (events, sent) = run(&mut ends, |i, _| i == 4, Time::ZERO + Dur::from_secs(60));
        assert!(sent.iter().all(|p| p.protocol() == 132 && p.size() <= 1282));
        assert_eq!(sent[0].ip.src, CLIENT.addr);
        let last_delivered = events.iter().rev().find_map(|e| match e.2 {
            Event::Delivered { bytes, .. } if e.1 == 1 => Some(bytes),
            _ => None,
        });
        assert_eq!(last_delivered, Some(size));
        let acked: Vec<_> = events
            .iter()
            .filter(|e| matches!(e.2, Event::Acked { .. }))
            .collect();
        assert_eq!(acked.len(), 1);
        assert_eq!(
            (acked[0].1, acked[0].2),
            (
                0,
                Event::Acked {
                    conn: STREAM,
                    bytes: size
                }
            )
        );
        assert!(events
            .iter()
            .any(|e| e.1 == 0 && matches!(e.2, Event::Lost { .. })));
        // Nothing before the start; messages round robin over the 10 streams.
        assert!(events.iter().all(|e| e.0 >= start));
        assert_eq!(ends[1].delivered_on(0), 3 * 1200);
        assert_eq!(ends[1].delivered_on(9), 2 * 1200);
        assert_eq!(ends[1].delivered(), size);
        // The source closed once everything was queued: both ends shut down.
        assert_eq!(ends[0].association().state(), State::Closed);
        assert_eq!(ends[1].association().state(), State::Closed);
    }

    #[test]
    fn an_application_learns_which_stream_delivered_what() {
        let mut ends = [
            SctpEndpoint::connect(cfg(7, 100, 18), CLIENT, SERVER, Time::ZERO).with_esp(EspSpis {
                outbound: 0x100,
                inbound: 0x101,
            }),
            SctpEndpoint::accept(cfg(9, 5000, 18), SERVER, CLIENT)
                .with_esp(EspSpis {
                    outbound: 0x101,
                    inbound: 0x100,
                })
                .keep_messages(true),
        ];
        // A request for an object on stream 3 (two chunks), one on stream 5, another on 3.
        ends[0].send(3, 1200).unwrap();
        ends[0].send(5, 600).unwrap();
        ends[0].send(3, 600).unwrap();
        // Lose the first packet that carries stream 3's data.
        let mut lost = false;
        let drop = |_: usize, p: &Packet| {
            let Body::Sctp(b) = &p.body else { return false };
            let hit = !lost && b.packet.data().any(|d| d.stream == 3);
            lost |= hit;
            hit
        };
        let (_, sent) = run(&mut ends, drop, Time::ZERO + Dur::from_secs(30));
        // In ESP: protocol 50, opaque on the path, at most the 1282-byte MTU.
        assert!(sent.iter().all(|p| p.protocol() == 50 && p.size() <= 1282));
        assert!(sent.iter().any(|p| p.size() == 1282));
        let got: Vec<Message> = std::iter::from_fn(|| ends[1].poll_message()).collect();
        // Stream 5 did not wait for stream 3's retransmission; stream 3 stayed in order.
        let m = |stream, ssn, bytes| Message { stream, ssn, bytes };
        assert_eq!(got, vec![m(5, 0, 600), m(3, 0, 1200), m(3, 1, 600)]);
        assert_eq!(
            (ends[1].delivered_on(3), ends[1].delivered_on(5)),
            (1800, 600)
        );
    }

    #[test]
    fn packets_of_another_endpoint_or_in_the_wrong_form_pass() {
        let mut e = SctpEndpoint::accept(cfg(9, 5000, 0), SERVER, CLIENT);
        let mut other = SctpEndpoint::connect(cfg(7, 100, 0), CLIENT, SERVER, Time::ZERO);
        let init = other.poll_transmit(Time::ZERO, &NoNode).unwrap().packet;
        let mut wrong_port = init.clone();
        if let Body::Sctp(b) = &mut wrong_port.body {
            b.packet.src_port += 1;
        }
        let mut sealed = init.clone();
        if let Body::Sctp(b) = &mut sealed.body {
            b.esp = Some(SctpEsp {
                spi: 1,
                seq: 1,
                overhead: 18,
            });
        }
        for mut p in [wrong_port, sealed] {
            let v = e.handle_packet(Time::ZERO, At::Local, &mut p, &NoNode);
            assert_eq!(v, Verdict::Pass);
        }
        let v = e.handle_packet(Time::ZERO, At::Local, &mut init.clone(), &NoNode);
        assert_eq!(v, Verdict::Consume);
    }
}
