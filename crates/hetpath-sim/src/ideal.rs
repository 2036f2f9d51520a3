//! The ideal protocol of seed 003 section 6: an upper bound that "knows the channel state
//! a priori and, as a consequence, is able to transmit data segments when the channel
//! really allows it", with the same per-packet overhead as TCP.
//!
//! Reading used here (docs/model-notes.md): the sender keeps its first-hop link busy with
//! back-to-back segments of MSS payload and the TCP/IP header size, without handshake,
//! ACKs or windows. The simulator tells it at the instant a packet is lost (channel,
//! queue or outage), and it sends that segment again next. On a channel whose state
//! evolves in time, a transmission the oracle knows will fail occupies the link exactly
//! as long as idling until the next chance would, so this is the same completion time as
//! "transmitting only when it will succeed"; it also works on channels that step per
//! packet, where idling would never change the state. Both machines are sans-IO: the
//! simulator moves their segments and reports losses.

use std::collections::VecDeque;

/// The sending half: which segment goes next.
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

/// The receiving half: counts distinct bytes, whatever order they arrive in.
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
