//! The data receiver of one association: TSN bookkeeping, SACK contents and timing
//! (RFC 4960 sections 6.2 and 3.3.4), reassembly of fragmented messages (section 6.9)
//! and in-order delivery per stream, independent across streams (sections 6.5 and 6.6).
//!
//! The application is taken to read every message the moment it is complete, so the
//! buffer holds only chunks above a gap or of messages still waiting for an earlier one
//! of their stream; a_rwnd is the window less those bytes.
//!
//! Partial delivery (section 6.9): once the in-order start of a stream's next message
//! reaches half the window (the partial delivery point, RFC 6458 section 8.1.21), its
//! bytes go up to the application and leave the buffer, and so does the rest as it
//! arrives in order; the message is reported once, when its last byte is in. Without it
//! a message larger than the window could never complete (its fragments would fill the
//! window). Messages below the point are untouched.

use super::chunk::{DataChunk, GapBlock, SackChunk, SACK_HEADER_LEN};
use super::config::SctpConfig;
use super::serial;
use crate::runs::RunSet;
use crate::time::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};

/// Duplicate TSNs remembered for the next SACK; more are counted but not reported.
const MAX_DUPS: usize = 64;

/// A complete user message handed to the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Delivery {
    pub stream: u16,
    pub ssn: u16,
    pub bytes: u64,
    pub unordered: bool,
}

#[derive(Clone, Copy, Debug)]
struct Fragment {
    ssn: u16,
    begin: bool,
    end: bool,
    len: u32,
}

/// A message being handed up in part (section 6.9): its SSN, the TSN of its next
/// fragment, and the bytes handed up so far.
#[derive(Clone, Copy, Debug)]
struct Partial {
    ssn: u16,
    next_tsn: u64,
    bytes: u64,
}

#[derive(Default)]
struct InStream {
    next_ssn: u16,
    partial: Option<Partial>,
    /// Ordered fragments by TSN, waiting for their message or its predecessors.
    ordered: BTreeMap<u64, Fragment>,
    /// Unordered fragments by TSN, waiting for the rest of their message.
    unordered: BTreeMap<u64, Fragment>,
}

pub(super) struct Receiver {
    started: bool,
    /// Cumulative TSN: every TSN up to it received.
    cum: u64,
    /// TSNs received above `cum`, as runs (the Gap Ack Blocks).
    above: RunSet,
    highest: u64,
    dups: Vec<u32>,
    streams: Vec<InStream>,
    held: u64,
    window: u64,
    sack_every: u32,
    sack_delay: Dur,
    /// Packets with DATA since the last SACK.
    unacked_packets: u32,
    sack_deadline: Option<Time>,
    sack_now: bool,
    /// Per packet: what its DATA chunks were, and whether a gap existed before it.
    pkt_data: bool,
    pkt_dup: bool,
    gap_before: bool,
    deliveries: VecDeque<Delivery>,
    pub(super) duplicates: u64,
}

impl Receiver {
    pub(super) fn new(cfg: &SctpConfig) -> Receiver {
        Receiver {
            started: false,
            cum: 0,
            above: RunSet::default(),
            highest: 0,
            dups: Vec::new(),
            streams: Vec::new(),
            held: 0,
            window: cfg.rwnd as u64,
            sack_every: cfg.sack_every.max(1),
            sack_delay: cfg.sack_delay,
            unacked_packets: 0,
            sack_deadline: None,
            sack_now: false,
            pkt_data: false,
            pkt_dup: false,
            gap_before: false,
            deliveries: VecDeque::new(),
            duplicates: 0,
        }
    }

    /// The peer's initial TSN and the inbound streams agreed (section 5.1.1: at most
    /// our MIS and the peer's OS).
    pub(super) fn start(&mut self, peer_initial_tsn: u32, streams: u16) {
        if self.started {
            return;
        }
        self.started = true;
        self.cum = serial::first(peer_initial_tsn) - 1;
        self.highest = self.cum;
        self.streams = (0..streams).map(|_| InStream::default()).collect();
    }

    pub(super) fn is_started(&self) -> bool {
        self.started
    }

    /// The Cumulative TSN Ack, as on the wire.
    pub(super) fn cum_tsn(&self) -> u32 {
        self.cum as u32
    }

    /// Advertised receiver window: the buffer less what it holds (section 6.2).
    pub(super) fn a_rwnd(&self) -> u32 {
        self.window.saturating_sub(self.held).min(u32::MAX as u64) as u32
    }

    pub(super) fn begin_packet(&mut self) {
        self.pkt_data = false;
        self.pkt_dup = false;
        self.gap_before = !self.above.is_empty();
    }

    /// One DATA chunk (section 6.2).
    pub(super) fn on_data(&mut self, d: &DataChunk) {
        if !self.started || d.len == 0 {
            return;
        }
        self.pkt_data = true;
        let tsn = serial::widen(self.cum + 1, d.tsn);
        if tsn <= self.cum || self.above.contains(tsn) {
            self.pkt_dup = true;
            self.duplicates += 1;
            if self.dups.len() < MAX_DUPS {
                self.dups.push(d.tsn);
            }
            return;
        }
        // A TSN a Gap Ack Block could not report (16-bit offsets) is dropped as lost.
        if tsn - self.cum > u16::MAX as u64 {
            return;
        }
        // Section 6.2: with no window left, drop new chunks above the highest TSN yet.
        if self.a_rwnd() == 0 && tsn > self.highest {
            return;
        }
        if tsn == self.cum + 1 {
            self.cum = tsn;
            // Runs are merged: at most one starts right above the new cumulative TSN.
            if let Some((_, end)) = self.above.first().filter(|&(s, _)| s == tsn + 1) {
                self.above.pop_first();
                self.cum = end - 1;
            }
        } else {
            self.above.insert(tsn);
        }
        self.highest = self.highest.max(tsn);
        let s = d.stream as usize;
        if s >= self.streams.len() {
            // Section 6.5: a DATA chunk for a stream that does not exist is acknowledged
            // and discarded (the ERROR chunk it calls for is not modelled).
            return;
        }
        let frag = Fragment {
            ssn: d.ssn,
            begin: d.begin,
            end: d.end,
            len: d.len,
        };
        self.held += d.len as u64;
        if d.unordered {
            self.streams[s].unordered.insert(tsn, frag);
            self.deliver_unordered(s, tsn);
        } else {
            self.streams[s].ordered.insert(tsn, frag);
            self.deliver_ordered(s);
        }
    }

    /// Delivers the stream's next messages in SSN order while they are complete. The
    /// message with the next SSN is the lowest TSN held for the stream, since a sender
    /// numbers a stream's messages and TSNs in the same order.
    fn deliver_ordered(&mut self, s: usize) {
        let pd_point = (self.window / 2).max(1);
        loop {
            let st = &mut self.streams[s];
            if let Some(p) = &mut st.partial {
                // The message in partial delivery takes its next fragments in order.
                let mut ended = false;
                while let Some(f) = st.ordered.get(&p.next_tsn).copied() {
                    if f.ssn != p.ssn || f.begin {
                        return; // a misbehaving peer: it stays incomplete
                    }
                    st.ordered.remove(&p.next_tsn);
                    self.held -= f.len as u64;
                    p.bytes += f.len as u64;
                    p.next_tsn += 1;
                    if f.end {
                        ended = true;
                        break;
                    }
                }
                if !ended {
                    return;
                }
                let p = st.partial.take().expect("in partial delivery");
                st.next_ssn = st.next_ssn.wrapping_add(1);
                self.deliveries.push_back(Delivery {
                    stream: s as u16,
                    ssn: p.ssn,
                    bytes: p.bytes,
                    unordered: false,
                });
                continue;
            }
            let Some((&first, &f)) = st.ordered.first_key_value() else {
                return;
            };
            if f.ssn != st.next_ssn {
                if (f.ssn.wrapping_sub(st.next_ssn) as i16) < 0 {
                    // A fragment of a message already delivered: a misbehaving peer.
                    st.ordered.remove(&first);
                    self.held -= f.len as u64;
                    continue;
                }
                return;
            }
            if !f.begin {
                return;
            }
            let Some((last, bytes)) = complete_run(&st.ordered, first) else {
                // Incomplete: handed up in part once its in-order start is large enough.
                let (next_tsn, bytes) = in_order_start(&st.ordered, first);
                if bytes >= pd_point {
                    for tsn in first..next_tsn {
                        st.ordered.remove(&tsn);
                    }
                    self.held -= bytes;
                    st.partial = Some(Partial {
                        ssn: f.ssn,
                        next_tsn,
                        bytes,
                    });
                }
                return;
            };
            for tsn in first..=last {
                st.ordered.remove(&tsn);
            }
            st.next_ssn = st.next_ssn.wrapping_add(1);
            self.held -= bytes;
            self.deliveries.push_back(Delivery {
                stream: s as u16,
                ssn: f.ssn,
                bytes,
                unordered: false,
            });
        }
    }

    /// Delivers the unordered message `tsn` belongs to, if it is now complete (section
    /// 6.6).
    fn deliver_unordered(&mut self, s: usize, tsn: u64) {
        let st = &mut self.streams[s];
        let mut first = tsn;
        loop {
            let f = st.unordered[&first];
            if f.begin {
                break;
            }
            match st.unordered.get(&(first - 1)) {
                Some(prev) if !prev.end => first -= 1,
                _ => return,
            }
        }
        let Some((last, bytes)) = complete_run(&st.unordered, first) else {
            return;
        };
        let ssn = st.unordered[&first].ssn;
        for t in first..=last {
            st.unordered.remove(&t);
        }
        self.held -= bytes;
        self.deliveries.push_back(Delivery {
            stream: s as u16,
            ssn,
            bytes,
            unordered: true,
        });
    }

    /// Section 6.2's SACK timing, once a packet's chunks are processed: at once on a
    /// duplicate or while a gap exists (and when one is filled), else for every
    /// `sack_every` packets with DATA or after `sack_delay`.
    pub(super) fn end_packet(&mut self, now: Time) -> PacketSummary {
        let summary = PacketSummary {
            had_data: self.pkt_data,
            gap_or_dup: self.pkt_dup || self.gap_before || !self.above.is_empty(),
        };
        if !self.pkt_data {
            return summary;
        }
        self.unacked_packets += 1;
        if summary.gap_or_dup || self.unacked_packets >= self.sack_every {
            self.sack_now = true;
        } else if self.sack_deadline.is_none() {
            self.sack_deadline = Some(now + self.sack_delay);
        }
        summary
    }

    /// Gaps or duplicates to report: a SHUTDOWN's cumulative ack is not enough.
    pub(super) fn needs_sack(&self) -> bool {
        !self.above.is_empty() || !self.dups.is_empty()
    }

    /// A SACK must go out now.
    pub(super) fn sack_due(&self) -> bool {
        self.sack_now
    }

    /// Something received is not yet acknowledged: a SACK may be bundled (section 6.1).
    pub(super) fn sack_pending(&self) -> bool {
        self.sack_now || self.unacked_packets > 0
    }

    pub(super) fn poll_timeout(&self) -> Option<Time> {
        self.sack_deadline
    }

    pub(super) fn on_timeout(&mut self, now: Time) {
        if self.sack_deadline.is_some_and(|t| t <= now) {
            self.sack_deadline = None;
            self.sack_now = true;
        }
    }

    /// The SACK to send now, with as many gap blocks and duplicate TSNs as fit in
    /// `max_len` bytes (section 3.3.4); the pending acknowledgement is then cleared.
    pub(super) fn build_sack(&mut self, max_len: u32) -> SackChunk {
        let mut room = max_len.saturating_sub(SACK_HEADER_LEN) / 4;
        let gaps: Vec<GapBlock> = self
            .above
            .iter()
            .take(room as usize)
            .map(|(s, e)| GapBlock {
                start: (s - self.cum) as u16,
                end: (e - 1 - self.cum) as u16,
            })
            .collect();
        room -= gaps.len() as u32;
        let mut dup_tsns = std::mem::take(&mut self.dups);
        dup_tsns.truncate(room as usize);
        self.acknowledged();
        SackChunk {
            cum_tsn_ack: self.cum as u32,
            a_rwnd: self.a_rwnd(),
            gaps,
            dup_tsns,
        }
    }

    /// Everything received is acknowledged (by a SACK, or by a SHUTDOWN's cumulative ack
    /// when no gap or duplicate needs saying).
    pub(super) fn acknowledged(&mut self) {
        self.unacked_packets = 0;
        self.sack_deadline = None;
        self.sack_now = false;
    }

    pub(super) fn pop_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }
}

/// What one packet's DATA did, for the association's SHUTDOWN-SENT rule (section 9.2).
#[derive(Clone, Copy, Debug)]
pub(super) struct PacketSummary {
    pub had_data: bool,
    /// A duplicate arrived or a gap exists or was filled: a SACK must say more than a
    /// cumulative ack.
    pub gap_or_dup: bool,
}

/// The TSN after the consecutive fragments of `first`'s message from `first` on (none
/// of them its end), and their bytes.
fn in_order_start(frags: &BTreeMap<u64, Fragment>, first: u64) -> (u64, u64) {
    let ssn = frags[&first].ssn;
    let mut next = first;
    let mut bytes = 0;
    for (&tsn, f) in frags.range(first..) {
        if tsn != next || f.ssn != ssn || (tsn != first && f.begin) || f.end {
            break;
        }
        bytes += f.len as u64;
        next += 1;
    }
    (next, bytes)
}

/// If fragments with consecutive TSNs from `first` (a B fragment) reach an E fragment,
/// that TSN and the message's bytes.
fn complete_run(frags: &BTreeMap<u64, Fragment>, first: u64) -> Option<(u64, u64)> {
    let ssn = frags.get(&first)?.ssn;
    let mut bytes = 0;
    for (expect, (&tsn, f)) in (first..).zip(frags.range(first..)) {
        if tsn != expect || f.ssn != ssn || (tsn != first && f.begin) {
            return None;
        }
        bytes += f.len as u64;
        if f.end {
            return Some((tsn, bytes));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(tsn: u32, stream: u16, ssn: u16, begin: bool, end: bool) -> DataChunk {
        DataChunk {
            tsn,
            stream,
            ssn,
            ppid: 0,
            unordered: false,
            begin,
            end,
            len: 100,
        }
    }

    fn receiver() -> Receiver {
        let mut r = Receiver::new(&SctpConfig::default());
        r.start(u32::MAX - 1, 4);
        r
    }

    fn take(r: &mut Receiver) -> Vec<(u16, u16, u64)> {
        std::iter::from_fn(|| r.pop_delivery())
            .map(|d| (d.stream, d.ssn, d.bytes))
            .collect()
    }

    #[test]
    fn gap_blocks_and_duplicates_across_the_wrap() {
        let mut r = receiver();
        // TSNs u32::MAX - 1, then 1 and 2 (skipping u32::MAX and 0), then 4.
        for tsn in [u32::MAX - 1, 1, 2, 4, 1] {
            r.on_data(&chunk(tsn, 0, 0, true, true));
        }
        let sack = r.build_sack(1000);
        assert_eq!(sack.cum_tsn_ack, u32::MAX - 1);
        assert_eq!(
            sack.gaps,
            vec![GapBlock { start: 3, end: 4 }, GapBlock { start: 6, end: 6 }]
        );
        assert_eq!(sack.dup_tsns, vec![1]);
        // Only room for the header and one block.
        r.on_data(&chunk(1, 0, 0, true, true));
        let sack = r.build_sack(20);
        assert_eq!(sack.gaps.len(), 1);
        assert!(sack.dup_tsns.is_empty());
    }

    #[test]
    fn streams_deliver_independently_and_in_order() {
        let mut r = receiver();
        let base = u32::MAX - 1;
        // Stream 1's message 0 is TSNs base..base+1 (two fragments); stream 2's message 0
        // is base+2; stream 1's message 1 is base+3.
        r.on_data(&chunk(base.wrapping_add(3), 1, 1, true, true));
        r.on_data(&chunk(base.wrapping_add(2), 2, 0, true, true));
        assert_eq!(take(&mut r), vec![(2, 0, 100)], "stream 2 is not blocked");
        r.on_data(&chunk(base.wrapping_add(1), 1, 0, false, true));
        assert_eq!(take(&mut r), vec![], "the B fragment is missing");
        r.on_data(&chunk(base, 1, 0, true, false));
        assert_eq!(take(&mut r), vec![(1, 0, 200), (1, 1, 100)]);
        assert_eq!(r.a_rwnd(), 65536);
    }

    #[test]
    fn unordered_messages_skip_the_queue() {
        let mut r = receiver();
        let base = u32::MAX - 1;
        let mut u = chunk(base.wrapping_add(2), 1, 0, false, true);
        u.unordered = true;
        r.on_data(&u);
        u.tsn = base.wrapping_add(1);
        u.begin = true;
        u.end = false;
        r.on_data(&u);
        assert_eq!(take(&mut r), vec![(1, 0, 200)]);
        assert_eq!(r.a_rwnd(), 65536);
    }

    #[test]
    fn a_message_larger_than_half_the_window_is_handed_up_in_part() {
        let mut r = Receiver::new(&SctpConfig {
            rwnd: 1000,
            ..SctpConfig::default()
        });
        r.start(10, 2);
        // Message 0 of stream 0: TSNs 10..=21 (1200 bytes, more than the window).
        let frag = |tsn: u32| chunk(tsn, 0, 0, tsn == 10, tsn == 21);
        for tsn in 10..14 {
            r.on_data(&frag(tsn));
        }
        assert_eq!(r.a_rwnd(), 600, "400 bytes: below the 500-byte point");
        r.on_data(&frag(14));
        assert_eq!(r.a_rwnd(), 1000, "at the point the start goes up");
        // A gap: 16 waits above it, then 15 fills it.
        r.on_data(&frag(16));
        assert_eq!(r.a_rwnd(), 900);
        r.on_data(&frag(15));
        assert_eq!(r.a_rwnd(), 1000);
        for tsn in 17..21 {
            r.on_data(&frag(tsn));
        }
        assert_eq!(take(&mut r), vec![], "reported only when complete");
        r.on_data(&frag(21));
        // The next message on the stream, whole, follows at once.
        r.on_data(&chunk(22, 0, 1, true, true));
        assert_eq!(take(&mut r), vec![(0, 0, 1200), (0, 1, 100)]);
        assert_eq!(r.a_rwnd(), 1000);
    }
}
