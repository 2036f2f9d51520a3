//! The receiver's half of a router-assisted protocol: it reads the feedback routers wrote
//! on arriving data and returns it on the next ACK, so the sender can act on it.
//!
//! - XCP (Katabi et al. section 3.1): the receiver copies H_feedback into the ACK. With
//!   delayed ACKs one ACK covers several segments, so the feedback of all of them is summed
//!   (the window change the sender would have applied ACK by ACK).
//! - VCP (Xia et al. section 3.1): the two-bit code of the latest segment is echoed.
//! - MPCP (Li and Yousefi'zadeh 2009): a code of 2n bits is spread over n consecutive
//!   packets; it is usable only once every packet of the chain has arrived. Chains are
//!   numbered by segment index (`index / n`); a chain overtaken by a newer one before it
//!   completed (a loss or reordering) is dropped, which is how MPCP guards against
//!   assembling bits of different codes. We carry the whole code on each packet and take
//!   the highest level over the chain, the most congested reading any router wrote.

use crate::packet::{RouterFeedback, XcpHeader};

#[derive(Clone, Debug, Default)]
pub struct Echo {
    /// XCP feedback summed since the last ACK.
    xcp: Option<i64>,
    /// A load-factor code ready to go back.
    load: Option<(u8, u8)>,
    chain: Option<Chain>,
}

#[derive(Clone, Copy, Debug)]
struct Chain {
    id: u64,
    /// Bit k set: position k of the chain has arrived.
    seen: u8,
    code: u8,
    done: bool,
}

impl Echo {
    /// The data segment starting at sequence offset `seq` (data starts at 1) arrived
    /// carrying `fb`; segments are numbered in units of the receiver's `mss`.
    pub fn on_segment(&mut self, seq: u64, mss: u32, fb: &RouterFeedback) {
        self.on_data(seq.saturating_sub(1) / mss.max(1) as u64, fb);
    }

    /// Data segment number `index` (its offset in segments) arrived carrying `fb`.
    pub fn on_data(&mut self, index: u64, fb: &RouterFeedback) {
        match *fb {
            RouterFeedback::Xcp(h) => {
                self.xcp = Some(self.xcp.unwrap_or(0).saturating_add(h.feedback));
            }
            RouterFeedback::Load { code, bits } if bits <= 2 => self.load = Some((code, bits)),
            RouterFeedback::Load { code, bits } => self.on_chain_part(index, code, bits),
        }
    }

    fn on_chain_part(&mut self, index: u64, code: u8, bits: u8) {
        let n = (bits as u64).div_ceil(2).min(8);
        let (id, pos) = (index / n, index % n);
        let chain = match &mut self.chain {
            Some(c) if c.id == id => c,
            Some(c) if c.id > id => return, // a late or retransmitted part of an old chain
            _ => self.chain.insert(Chain {
                id,
                seen: 0,
                code: 0,
                done: false,
            }),
        };
        chain.seen |= 1 << pos;
        chain.code = chain.code.max(code);
        if !chain.done && chain.seen.count_ones() as u64 == n {
            chain.done = true;
            self.load = Some((chain.code, bits));
        }
    }

    /// The feedback to put on the ACK being sent now, if any.
    pub fn take(&mut self) -> Option<RouterFeedback> {
        if let Some(feedback) = self.xcp.take() {
            return Some(RouterFeedback::Xcp(XcpHeader {
                feedback,
                ..Default::default()
            }));
        }
        self.load
            .take()
            .map(|(code, bits)| RouterFeedback::Load { code, bits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(code: u8, bits: u8) -> RouterFeedback {
        RouterFeedback::Load { code, bits }
    }

    #[test]
    fn xcp_feedback_of_delayed_segments_is_summed() {
        let mut e = Echo::default();
        let h = |feedback| {
            RouterFeedback::Xcp(XcpHeader {
                feedback,
                ..Default::default()
            })
        };
        e.on_data(0, &h(300));
        e.on_data(1, &h(-100));
        assert_eq!(e.take(), Some(h(200)));
        assert_eq!(e.take(), None);
    }

    #[test]
    fn vcp_code_goes_back_at_once() {
        let mut e = Echo::default();
        e.on_data(7, &load(2, 2));
        assert_eq!(e.take(), Some(load(2, 2)));
    }

    #[test]
    fn mpcp_code_needs_the_whole_chain() {
        let mut e = Echo::default();
        // n = 2: chain 5 is segments 10 and 11.
        e.on_data(10, &load(9, 4));
        assert_eq!(e.take(), None);
        e.on_data(11, &load(12, 4));
        assert_eq!(e.take(), Some(load(12, 4)));
        // Segment 12 starts chain 6; 13 is lost, 14 starts chain 7: chain 6 never counts.
        e.on_data(12, &load(3, 4));
        e.on_data(14, &load(4, 4));
        e.on_data(15, &load(4, 4));
        assert_eq!(e.take(), Some(load(4, 4)));
        // The retransmitted 13 belongs to a chain already overtaken.
        e.on_data(13, &load(15, 4));
        assert_eq!(e.take(), None);
    }
}
