//! The sender's record of outstanding segments: what was sent when, what the receiver
//! has SACKed, what is deemed lost, and the RFC 6675 "pipe" estimate of bytes in flight.
//!
//! Segments are kept in sequence order in a ring buffer covering `[snd_una, snd_max)`;
//! every flag change goes through `update` so that `pipe` stays exact in O(1).

use crate::packet::SackBlock;
use crate::time::Time;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    /// Last (re)transmission time.
    pub sent_at: Time,
    /// Transmissions beyond the first.
    pub retransmissions: u32,
    pub sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, a fast retransmit, or a timeout) and not yet resent.
    pub lost: bool,
    /// Resent since it was last marked lost; the resend is in flight.
    pub resent: bool,
}

impl Segment {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    fn resend_in_flight(&self) -> bool {
        self.resent && !self.sacked
    }
    /// Deemed lost and waiting to be resent (what `next_lost` looks for).
    fn awaits_resend(&self) -> bool {
        self.lost && !self.resent && !self.sacked
    }
    /// RFC 6675 SetPipe: an unSACKed octet counts once unless deemed lost, once more if
    /// retransmitted.
    fn pipe(&self) -> u64 {
        if self.sacked {
            0
        } else {
            self.len() * (!self.lost as u64 + self.resent as u64)
        }
    }
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    pub bytes: u64,
    /// Send time of the oldest newly acknowledged segment, if no newly acknowledged
    /// segment was ever retransmitted (Karn's rule, RFC 6298 section 3).
    pub rtt_sent_at: Option<Time>,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<Segment>,
    pipe: u64,
    sacked_bytes: u64,
    /// Highest SACKed sequence number (RFC 6675 HighSACK end).
    high_sacked: u64,
    /// Ranges reported by SACK blocks above the cumulative ACK, merged and sorted.
    known: Vec<(u64, u64)>,
    /// Below this sequence, every segment has been considered by `mark_lost_by_sack`.
    lost_scan: u64,
    /// No segment below this one is lost and not yet resent.
    resend_cursor: u64,
    /// Segments lost and not yet resent: `next_lost` has nothing to look for at 0.
    awaiting: usize,
    /// Retransmissions in flight (resent, not SACKed).
    resent_in_flight: usize,
    /// RFC 8985 RACK.xmit_ts: the latest send time of a delivered (SACKed or cumulatively
    /// acknowledged) segment, among segments sent once, whose delivery is unambiguous.
    rack_xmit_ts: Time,
    /// `rack_xmit_ts` when `mark_lost_retransmissions` last looked.
    rack_scanned: Time,
}

impl Scoreboard {
    pub fn pipe(&self) -> u64 {
        self.pipe
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn first(&self) -> Option<&Segment> {
        self.segs.front()
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    fn update(&mut self, i: usize, f: impl FnOnce(&mut Segment)) {
        let s = &mut self.segs[i];
        let (pipe0, sacked0, awaiting0) = (s.pipe(), s.sacked, s.awaits_resend());
        let in_flight0 = s.resend_in_flight();
        f(s);
        self.pipe = self.pipe - pipe0 + s.pipe();
        self.awaiting = self.awaiting + s.awaits_resend() as usize - awaiting0 as usize;
        self.resent_in_flight =
            self.resent_in_flight + s.resend_in_flight() as usize - in_flight0 as usize;
        if s.sacked != sacked0 {
            self.sacked_bytes =
                self.sacked_bytes + s.len() * s.sacked as u64 - s.len() * sacked0 as u64;
        }
    }

    fn index_of(&self, seq: u64) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.end <= seq);
        (i < self.segs.len() && self.segs[i].start <= seq).then_some(i)
    }

    /// Records a first transmission of `[start, end)`.
    pub fn on_new_segment(&mut self, start: u64, end: u64, now: Time) {
        let seg = Segment {
            start,
            end,
            sent_at: now,
            retransmissions: 0,
            sacked: false,
            lost: false,
            resent: false,
        };
        self.pipe += seg.pipe();
        self.segs.push_back(seg);
    }

    /// The next segment that is deemed lost and not yet resent, if any.
    pub fn next_lost(&mut self) -> Option<Segment> {
        if self.awaiting == 0 {
            self.resend_cursor = self.segs.back().map_or(self.resend_cursor, |s| s.end);
            return None;
        }
        let from = self.segs.partition_point(|s| s.end <= self.resend_cursor);
        match self
            .segs
            .range(from..)
            .position(|s| s.lost && !s.resent && !s.sacked)
        {
            Some(k) => {
                self.resend_cursor = self.segs[from + k].start;
                Some(self.segs[from + k])
            }
            None => {
                self.resend_cursor = self.segs.back().map_or(self.resend_cursor, |s| s.end);
                None
            }
        }
    }

    /// Records the retransmission of the segment starting at `start`.
    pub fn on_resent(&mut self, start: u64, now: Time) {
        if let Some(i) = self.index_of(start) {
            self.update(i, |s| {
                s.resent = true;
                s.retransmissions += 1;
                s.sent_at = now;
            });
        }
    }

    /// Marks the segment holding `seq` lost (fast retransmit, NewReno partial ACK). With
    /// `unless_resent`, a segment whose retransmission is still in flight is left alone.
    /// Returns whether a segment was marked.
    pub fn mark_lost(&mut self, seq: u64, unless_resent: bool) -> bool {
        let Some(i) = self
            .index_of(seq)
            .filter(|&i| !(unless_resent && self.segs[i].resent))
        else {
            return false;
        };
        self.update(i, |s| {
            s.lost = true;
            s.resent = false;
        });
        self.resend_cursor = self.resend_cursor.min(self.segs[i].start);
        true
    }

    /// Retransmission timeout: everything not SACKed is lost and must be resent
    /// (go-back-N that skips SACKed data, RFC 6675 section 5.1).
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.update(i, |s| {
                s.lost = !s.sacked;
                s.resent = false;
            });
        }
        self.resend_cursor = 0;
        self.lost_scan = self.segs.back().map_or(0, |s| s.end);
    }

    /// Removes everything below the cumulative ACK `ack`.
    pub fn on_cumulative_ack(&mut self, ack: u64) -> Acked {
        let mut acked = Acked::default();
        let mut karn_ok = true;
        let mut oldest = None;
        while let Some(s) = self.segs.front() {
            if s.end > ack {
                // A cumulative ACK never splits a segment we sent whole; if the peer acked
                // part of one, trim it.
                if s.start < ack {
                    let cut = ack - s.start;
                    self.update(0, |s| s.start += cut);
                    acked.bytes += cut;
                }
                break;
            }
            let s = self.segs.pop_front().unwrap();
            self.pipe -= s.pipe();
            self.awaiting -= s.awaits_resend() as usize;
            self.resent_in_flight -= s.resend_in_flight() as usize;
            if s.sacked {
                self.sacked_bytes -= s.len();
            } else if s.retransmissions == 0 {
                self.rack_xmit_ts = self.rack_xmit_ts.max(s.sent_at);
            }
            karn_ok &= s.retransmissions == 0;
            oldest.get_or_insert(s.sent_at);
            acked.bytes += s.len();
        }
        acked.rtt_sent_at = if karn_ok { oldest } else { None };
        let below = self.known.partition_point(|r| r.1 <= ack);
        self.known.drain(..below);
        acked
    }

    /// Applies SACK blocks; returns the bytes newly SACKed. Only the parts of a block not
    /// already known are walked, so a large block repeated on every ACK costs little.
    pub fn on_sack(&mut self, blocks: impl IntoIterator<Item = SackBlock>) -> u64 {
        let mut newly = 0;
        for b in blocks {
            let mut from = b.start;
            while from < b.end {
                // Skip what earlier blocks already covered.
                let k = self.known.partition_point(|r| r.1 <= from);
                let (gap_end, next_from) = match self.known.get(k) {
                    Some(&(s, e)) if s <= from => (from, e),
                    Some(&(s, _)) => (s.min(b.end), s),
                    None => (b.end, b.end),
                };
                newly += self.mark_sacked(from, gap_end, &b);
                from = next_from.max(gap_end);
            }
            self.remember_sacked(b.start, b.end);
        }
        newly
    }

    /// Marks segments lying inside block `b` and starting in `[from, to)`.
    fn mark_sacked(&mut self, from: u64, to: u64, b: &SackBlock) -> u64 {
        let mut newly = 0;
        let mut i = self.segs.partition_point(|s| s.end <= from);
        while i < self.segs.len() && self.segs[i].start < to && self.segs[i].end <= b.end {
            if self.segs[i].start >= b.start && !self.segs[i].sacked {
                newly += self.segs[i].len();
                self.update(i, |s| s.sacked = true);
                let s = self.segs[i];
                self.high_sacked = self.high_sacked.max(s.end);
                if s.retransmissions == 0 {
                    self.rack_xmit_ts = self.rack_xmit_ts.max(s.sent_at);
                }
            }
            i += 1;
        }
        newly
    }

    /// Adds `[s, e)` to the set of ranges reported by SACK blocks (merged, sorted).
    fn remember_sacked(&mut self, mut s: u64, mut e: u64) {
        let first = self.known.partition_point(|r| r.1 < s);
        let mut last = first;
        while last < self.known.len() && self.known[last].0 <= e {
            s = s.min(self.known[last].0);
            e = e.max(self.known[last].1);
            last += 1;
        }
        self.known.splice(first..last, [(s, e)]);
    }

    /// RFC 6675 IsLost: a segment is lost once at least `(dupthresh - 1) * mss + 1` bytes
    /// above it are SACKed. Marks such segments (scanning each segment once) and returns
    /// whether the first outstanding segment is lost.
    pub fn mark_lost_by_sack(&mut self, dupthresh: u32, mss: u32) -> bool {
        let need = (dupthresh.max(1) as u64 - 1) * mss as u64 + 1;
        // Find the highest boundary with `need` SACKed bytes above it.
        let mut above = 0;
        let mut limit = None;
        if self.sacked_bytes < need || self.high_sacked <= self.lost_scan {
            return self.segs.front().is_some_and(|s| s.lost);
        }
        // Nothing above HighSACK is SACKed: start the walk there.
        let top = self.segs.partition_point(|s| s.end < self.high_sacked);
        for i in (0..=top.min(self.segs.len() - 1)).rev() {
            let s = self.segs[i];
            if s.end <= self.lost_scan {
                break;
            }
            if s.sacked {
                above += s.len();
            } else if above >= need {
                limit = Some(i);
                break;
            }
        }
        if let Some(limit) = limit {
            let from = self.segs.partition_point(|s| s.end <= self.lost_scan);
            for i in from..=limit {
                if !self.segs[i].sacked && !self.segs[i].lost && !self.segs[i].resent {
                    self.update(i, |s| s.lost = true);
                    self.resend_cursor = self.resend_cursor.min(self.segs[i].start);
                }
            }
            self.lost_scan = self.segs[limit].end;
        }
        self.segs.front().is_some_and(|s| s.lost)
    }

    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    /// RFC 8985 section 6.2 (RACK) for retransmissions: a retransmission in flight is
    /// lost once a segment sent after it has been delivered (with no reordering seen,
    /// Linux's reordering window is zero in recovery: `tcp_rack_reo_wnd`). Marks such
    /// segments for resending and returns how many.
    pub fn mark_lost_retransmissions(&mut self) -> usize {
        if self.resent_in_flight == 0 || self.rack_xmit_ts <= self.rack_scanned {
            return 0;
        }
        self.rack_scanned = self.rack_xmit_ts;
        let mut marked = 0;
        // A retransmission is a hole's: it lies below the highest SACKed segment.
        let top = self.segs.partition_point(|s| s.start < self.high_sacked);
        for i in 0..top {
            let s = self.segs[i];
            if s.resend_in_flight() && s.sent_at < self.rack_xmit_ts {
                self.update(i, |s| {
                    s.lost = true;
                    s.resent = false;
                });
                self.resend_cursor = self.resend_cursor.min(s.start);
                marked += 1;
            }
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.on_new_segment(1 + i * 100, 101 + i * 100, Time(i));
        }
        b
    }

    #[test]
    fn pipe_follows_sack_loss_and_resend() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 1000);
        b.on_sack([SackBlock {
            start: 101,
            end: 401,
        }]);
        assert_eq!((b.pipe(), b.sacked_bytes()), (700, 300));
        assert!(b.mark_lost_by_sack(3, 100));
        assert_eq!(b.pipe(), 600);
        let lost = b.next_lost().unwrap();
        assert_eq!(lost.start, 1);
        b.on_resent(1, Time(50));
        assert_eq!(b.pipe(), 700);
        assert!(b.next_lost().is_none());
        let acked = b.on_cumulative_ack(401);
        assert_eq!(acked.bytes, 400);
        assert_eq!(
            acked.rtt_sent_at, None,
            "Karn: a retransmitted segment was acked"
        );
        assert_eq!((b.pipe(), b.sacked_bytes()), (600, 0));
    }

    #[test]
    fn two_sacked_segments_do_not_mark_loss_with_dupthresh_3() {
        let mut b = board(5);
        b.on_sack([SackBlock {
            start: 101,
            end: 301,
        }]);
        assert!(!b.mark_lost_by_sack(3, 100));
        b.on_sack([SackBlock {
            start: 301,
            end: 401,
        }]);
        assert!(b.mark_lost_by_sack(3, 100));
    }

    #[test]
    fn a_retransmission_is_lost_once_a_segment_sent_after_it_is_sacked() {
        // Segments 0-9 sent at t = 0..9; 0 is lost and resent at t = 20.
        let mut b = board(10);
        b.on_sack([SackBlock {
            start: 101,
            end: 401,
        }]);
        assert!(b.mark_lost_by_sack(3, 100));
        let lost = b.next_lost().unwrap().start;
        b.on_resent(lost, Time(20));
        // SACKs of segments sent before the resend say nothing about it.
        b.on_sack([SackBlock {
            start: 101,
            end: 1001,
        }]);
        assert_eq!(b.mark_lost_retransmissions(), 0);
        assert!(b.next_lost().is_none());
        // Segment 10, first sent at t = 21 after the resend, is SACKed: the resend is lost.
        b.on_new_segment(1001, 1101, Time(21));
        b.on_sack([SackBlock {
            start: 101,
            end: 1101,
        }]);
        assert_eq!(b.mark_lost_retransmissions(), 1);
        assert_eq!(b.next_lost().map(|s| s.start), Some(1));
        assert_eq!(b.pipe(), 0, "the lost resend no longer counts in flight");
    }

    #[test]
    fn timeout_marks_unsacked_lost_in_order() {
        let mut b = board(4);
        b.on_sack([SackBlock {
            start: 201,
            end: 301,
        }]);
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        let order: Vec<u64> = std::iter::from_fn(|| {
            let s = b.next_lost()?;
            b.on_resent(s.start, Time(9));
            Some(s.start)
        })
        .collect();
        assert_eq!(order, vec![1, 101, 301]);
        let acked = b.on_cumulative_ack(101);
        assert!(acked.rtt_sent_at.is_none());
    }
}
