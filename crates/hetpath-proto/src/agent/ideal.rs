//! The ideal protocol of seed 003 section 6: an upper bound that "knows the channel state
//! a priori and, as a consequence, is able to transmit data segments when the channel
//! really allows it", with the same per-packet overhead as TCP.
//!
//! Reading used here (docs/model-notes.md): the source keeps its first-hop interface
//! busy with back-to-back segments of MSS payload and the TCP/IP header size, without
//! handshake, ACKs or windows. The oracle shows it every lost packet at once (channel,
//! queue or outage, `At::Lost`), and it sends that segment again next. On a channel whose
//! state evolves in time, a transmission the oracle knows will fail occupies the link
//! exactly as long as idling until the next chance would, so this is the same completion
//! time as "transmitting only when it will succeed"; it also works on channels that step
//! per packet, where idling would never change the state.
//!
//! Two machines: `IdealSource` on the sending node, whose interface 0 is the first hop,
//! and `IdealSink` on the receiving node. Both report on stream `ConnId(0)`; the sink's
//! `Acked` is the oracle telling the source it is done.

use crate::ids::{ConnId, IfaceId};
use crate::machine::{At, Event, Hooks, Machine, NodeView, Transmit, Verdict};
use crate::packet::{Endpoint, Packet, TcpFlags, TcpSegment};
use crate::time::Time;
use std::collections::VecDeque;

/// The stream both machines report on.
pub const STREAM: ConnId = ConnId(0);
const FIRST_HOP: IfaceId = IfaceId(0);

/// Which segment goes next.
#[derive(Debug, Clone)]
pub struct IdealSender {
    mss: u64,
    size: u64,
    next_new: u64,
    /// Starts of segments known lost, resent before new data.
    lost: VecDeque<u64>,
    pub transmissions: u64,
    pub losses: u64,
}

impl IdealSender {
    pub fn new(mss: u32, size: u64) -> IdealSender {
        IdealSender {
            mss: mss as u64,
            size,
            next_new: 0,
            lost: VecDeque::new(),
            transmissions: 0,
            losses: 0,
        }
    }

    /// The next segment to transmit as (offset, length), if any is left to send.
    pub fn poll_segment(&mut self) -> Option<(u64, u32)> {
        let start = match self.lost.pop_front() {
            Some(s) => s,
            None if self.next_new < self.size => {
                let s = self.next_new;
                self.next_new = (s + self.mss).min(self.size);
                s
            }
            None => return None,
        };
        self.transmissions += 1;
        Some((start, (self.size - start).min(self.mss) as u32))
    }

    /// The oracle reports that the segment starting at `start` was lost.
    pub fn handle_loss(&mut self, start: u64) {
        self.losses += 1;
        self.lost.push_back(start);
    }
}

/// Counts distinct bytes, whatever order they arrive in.
#[derive(Debug, Clone)]
pub struct IdealReceiver {
    mss: u64,
    size: u64,
    have: Vec<bool>,
    received: u64,
}

impl IdealReceiver {
    pub fn new(mss: u32, size: u64) -> IdealReceiver {
        let n = size.div_ceil(mss as u64) as usize;
        IdealReceiver {
            mss: mss as u64,
            size,
            have: vec![false; n],
            received: 0,
        }
    }

    pub fn handle_segment(&mut self, start: u64, len: u32) {
        let i = (start / self.mss) as usize;
        if start.is_multiple_of(self.mss) && i < self.have.len() && !self.have[i] {
            self.have[i] = true;
            self.received += (len as u64).min(self.size - start);
        }
    }

    pub fn bytes_received(&self) -> u64 {
        self.received
    }
    pub fn complete(&self) -> bool {
        self.received >= self.size
    }
}

/// Whether `p` is a segment from `src` to `dst`.
fn of_stream(p: &Packet, src: Endpoint, dst: Endpoint) -> Option<&TcpSegment> {
    let seg = p.as_tcp()?;
    let matches = p.ip.src == src.addr
        && p.ip.dst == dst.addr
        && seg.src_port == src.port
        && seg.dst_port == dst.port;
    matches.then_some(seg)
}

/// The sending half, starting at `start`.
pub struct IdealSource {
    sender: IdealSender,
    src: Endpoint,
    dst: Endpoint,
    start: Time,
    started: bool,
    events: VecDeque<Event>,
}

impl IdealSource {
    pub fn new(src: Endpoint, dst: Endpoint, mss: u32, size: u64, start: Time) -> IdealSource {
        IdealSource {
            sender: IdealSender::new(mss, size),
            src,
            dst,
            start,
            started: false,
            events: VecDeque::new(),
        }
    }
}

impl Machine for IdealSource {
    fn hooks(&self) -> Hooks {
        Hooks {
            losses: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, _now: Time, _at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        if let Some(seg) = of_stream(p, self.src, self.dst) {
            self.sender.handle_loss(seg.seq);
            self.events.push_back(Event::Lost { conn: STREAM });
        }
        Verdict::Consume
    }

    fn handle_timeout(&mut self, now: Time, _: &dyn NodeView) {
        self.started |= now >= self.start;
    }

    /// One segment at a time: the next goes when the first hop is up and idle.
    fn poll_transmit(&mut self, _now: Time, node: &dyn NodeView) -> Option<Transmit> {
        if !self.started {
            return None;
        }
        let hop = node.iface(FIRST_HOP);
        if !(hop.up && hop.idle()) {
            node.wake_on(FIRST_HOP);
            return None;
        }
        let (seq, len) = self.sender.poll_segment()?;
        let seg = TcpSegment {
            src_port: self.src.port,
            dst_port: self.dst.port,
            seq,
            flags: TcpFlags::ACK,
            len,
            ..Default::default()
        };
        Some(Transmit::route(Packet::tcp(
            self.src.addr,
            self.dst.addr,
            seg,
        )))
    }

    fn poll_timeout(&self) -> Option<Time> {
        (!self.started).then_some(self.start)
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

/// The receiving half.
pub struct IdealSink {
    receiver: IdealReceiver,
    src: Endpoint,
    dst: Endpoint,
    events: VecDeque<Event>,
}

impl IdealSink {
    pub fn new(src: Endpoint, dst: Endpoint, mss: u32, size: u64) -> IdealSink {
        IdealSink {
            receiver: IdealReceiver::new(mss, size),
            src,
            dst,
            events: VecDeque::new(),
        }
    }
}

impl Machine for IdealSink {
    fn hooks(&self) -> Hooks {
        Hooks {
            local: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, _now: Time, _at: At, p: &mut Packet, _: &dyn NodeView) -> Verdict {
        let Some(seg) = of_stream(p, self.src, self.dst) else {
            return Verdict::Pass;
        };
        let before = self.receiver.bytes_received();
        self.receiver.handle_segment(seg.seq, seg.len);
        let bytes = self.receiver.bytes_received();
        if bytes > before {
            self.events.push_back(Event::Delivered {
                conn: STREAM,
                bytes,
            });
            if self.receiver.complete() {
                self.events.push_back(Event::Acked {
                    conn: STREAM,
                    bytes,
                });
            }
        }
        Verdict::Consume
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_segments_go_first_and_the_last_is_short() {
        let mut s = IdealSender::new(1000, 2500);
        assert_eq!(s.poll_segment(), Some((0, 1000)));
        assert_eq!(s.poll_segment(), Some((1000, 1000)));
        s.handle_loss(0);
        assert_eq!(s.poll_segment(), Some((0, 1000)));
        assert_eq!(s.poll_segment(), Some((2000, 500)));
        assert_eq!(s.poll_segment(), None);
        assert_eq!((s.transmissions, s.losses), (4, 1));
    }

    #[test]
    fn receiver_counts_each_byte_once() {
        let mut r = IdealReceiver::new(1000, 2500);
        r.handle_segment(2000, 500);
        r.handle_segment(0, 1000);
        r.handle_segment(0, 1000);
        assert!(!r.complete());
        r.handle_segment(1000, 1000);
        assert!(r.complete());
        assert_eq!(r.bytes_received(), 2500);
    }
}
