//! The receiving half of a TCP endpoint: reassembly, cumulative and selective
//! acknowledgements, delayed ACKs and the advertised window.

use super::config::{DelayedAck, QuickAck};
use crate::packet::{SackBlock, SackList, MAX_SACK_BLOCKS};
use crate::time::Time;

/// Out-of-order arrivals remembered for SACK block ordering (RFC 2018 section 4).
const SACK_HISTORY: usize = 8;

#[derive(Clone, Debug)]
pub struct Receiver {
    /// Next sequence number expected (RFC 9293 RCV.NXT), relative to the peer's ISN.
    rcv_nxt: u64,
    /// Disjoint, sorted ranges received above `rcv_nxt`.
    ooo: Vec<(u64, u64)>,
    /// Sequence numbers of recent out-of-order arrivals, most recent first.
    sack_history: [u64; SACK_HISTORY],
    sack_history_len: usize,
    fin_seq: Option<u64>,
    fin_received: bool,
    /// Sequence number up to which the application has read.
    read_seq: u64,
    buffer: u64,
    auto_read: bool,
    delayed: Option<DelayedAck>,
    mss: u32,
    sack: bool,
    /// Segments received since the last ACK was sent.
    unacked_segments: u32,
    ack_deadline: Option<Time>,
    ack_now: bool,
    /// Right edge (`rcv_nxt + window`) in the last ACK we sent.
    advertised_edge: u64,
    /// Segments that carried nothing new.
    pub duplicate_segments: u64,
    quick_ack: QuickAck,
    /// ACKs still to send at once (Linux `icsk_ack.quick`); `QuickAck::Linux` only.
    quick: u32,
    /// How far Linux would have opened the window (`rcv_ssthresh`); `QuickAck::Linux` only.
    rcv_ssthresh: u64,
}

/// Linux's segment-size threshold for `tcp_grow_window` (`tcp_event_data_recv`).
const GROW_MIN_SEGMENT: u32 = 128;
/// TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u64 = 16;

impl Receiver {
    pub fn new(buffer: u64, delayed: Option<DelayedAck>, mss: u32) -> Receiver {
        Receiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            sack_history: [0; SACK_HISTORY],
            sack_history_len: 0,
            fin_seq: None,
            fin_received: false,
            read_seq: 1,
            buffer,
            auto_read: true,
            delayed,
            mss,
            sack: false,
            unacked_segments: 0,
            ack_deadline: None,
            ack_now: false,
            advertised_edge: 0,
            duplicate_segments: 0,
            quick_ack: QuickAck::Off,
            quick: 0,
            rcv_ssthresh: 0,
        }
    }

    /// Acknowledges at once where `q` says so (`TcpConfig::quick_ack`).
    pub fn with_quick_ack(mut self, q: QuickAck) -> Receiver {
        self.quick_ack = q;
        // Linux's first window: 64 KiB less what does not fill a segment
        // (`tcp_select_initial_window`), within the buffer.
        let mss = self.mss.max(1) as u64;
        self.rcv_ssthresh = (65_535 / mss * mss).min(self.buffer);
        self
    }

    /// The peer's SYN occupies sequence number 0; data starts at 1.
    pub fn on_syn(&mut self, sack: bool) {
        self.rcv_nxt = 1;
        self.read_seq = 1;
        self.sack = sack;
        self.ack_now = true;
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// In-order payload bytes received (FIN excluded).
    pub fn bytes_received(&self) -> u64 {
        self.data_end().saturating_sub(1)
    }

    fn data_end(&self) -> u64 {
        self.rcv_nxt - self.fin_received as u64
    }

    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    /// Free space in the receive buffer: the window to advertise (RFC 9293 section 3.8.6).
    pub fn window(&self) -> u64 {
        let unread = self.data_end().saturating_sub(self.read_seq);
        self.buffer.saturating_sub(unread)
    }

    /// Whether the application reads everything as soon as it arrives (the default).
    pub fn set_auto_read(&mut self, on: bool) {
        self.auto_read = on;
    }

    /// In-order bytes waiting for the application.
    pub fn readable(&self) -> u64 {
        self.data_end().saturating_sub(self.read_seq)
    }

    /// The application consumes up to `max` bytes; returns how many it got. Sends a window
    /// update when the window has grown by at least min(buffer/2, MSS) (RFC 9293 3.8.6.2.2).
    pub fn read(&mut self, max: u64) -> u64 {
        let n = self.readable().min(max);
        self.read_seq += n;
        let edge = self.rcv_nxt + self.window();
        if edge.saturating_sub(self.advertised_edge) >= (self.buffer / 2).min(self.mss as u64) {
            self.ack_now = true;
        }
        n
    }

    /// Handles the sequence space of an arriving segment: `[seq, seq + len)` of data, then
    /// a FIN if `fin`.
    pub fn on_segment(&mut self, now: Time, seq: u64, len: u32, fin: bool) {
        let end = seq + len as u64;
        if fin {
            self.fin_seq = Some(end);
        }
        let window_edge = self.rcv_nxt + self.window();
        let had_holes = !self.ooo.is_empty();
        if len > 0 && (end <= self.rcv_nxt || seq >= window_edge) {
            // Old duplicate or entirely outside the window: acknowledge at once
            // (RFC 5681 section 4.2; RFC 9293 section 3.10.7.4).
            self.duplicate_segments += 1;
            self.ack_now = true;
        } else if len > 0 && seq > self.rcv_nxt {
            self.grow_window(len);
            self.insert_ooo(seq, end.min(window_edge));
            self.remember_sack(seq);
            self.ack_now = true; // out of order: immediate duplicate ACK (RFC 5681 4.2)
        } else if len > 0 {
            self.note_data(len);
            self.rcv_nxt = end.min(window_edge);
            self.absorb_ooo();
            if had_holes {
                self.ack_now = true; // fills a hole: ACK at once (RFC 5681 4.2)
            } else {
                self.count_for_delayed_ack(now);
            }
        }
        if let Some(f) = self.fin_seq {
            if !self.fin_received && self.rcv_nxt == f {
                self.rcv_nxt += 1;
                self.fin_received = true;
                self.ack_now = true;
            }
        }
        if self.auto_read {
            self.read_seq = self.data_end();
        }
    }

    /// In-order data under `QuickAck::Linux`: the first segment starts quick-ACK mode
    /// (`tcp_event_data_recv`, `tcp_incr_quickack`), and the window may open.
    fn note_data(&mut self, len: u32) {
        if self.quick_ack == QuickAck::Off {
            return;
        }
        if self.rcv_nxt == 1 {
            // The first data (RCV.NXT still just past the SYN).
            let quickacks = self.rcv_ssthresh / (2 * len.max(1) as u64);
            self.quick = quickacks.clamp(2, MAX_QUICKACKS) as u32;
        }
        self.grow_window(len);
    }

    /// Linux `tcp_grow_window`: a segment that opens the window (`rcv_ssthresh`) is
    /// acknowledged at once.
    fn grow_window(&mut self, len: u32) {
        if self.quick_ack == QuickAck::Off || len < GROW_MIN_SEGMENT {
            return;
        }
        let room = self.window().saturating_sub(self.rcv_ssthresh);
        if room > 0 {
            let incr = (2 * self.mss as u64).max(2 * len as u64);
            self.rcv_ssthresh += room.min(incr);
            self.quick = self.quick.max(1);
        }
    }

    fn count_for_delayed_ack(&mut self, now: Time) {
        self.unacked_segments += 1;
        match self.delayed {
            None => self.ack_now = true,
            Some(_) if self.quick > 0 => self.ack_now = true,
            Some(d) if self.unacked_segments >= d.count => self.ack_now = true,
            Some(d) => {
                if self.ack_deadline.is_none() {
                    self.ack_deadline = Some(now + d.timeout);
                }
            }
        }
    }

    fn insert_ooo(&mut self, mut s: u64, mut e: u64) {
        if e <= s {
            return;
        }
        // Merge with every range that overlaps or touches [s, e).
        let first = self.ooo.partition_point(|r| r.1 < s);
        let mut last = first;
        let mut covered = false;
        while last < self.ooo.len() && self.ooo[last].0 <= e {
            let r = self.ooo[last];
            covered |= r.0 <= s && r.1 >= e;
            s = s.min(r.0);
            e = e.max(r.1);
            last += 1;
        }
        self.duplicate_segments += covered as u64;
        self.ooo.splice(first..last, [(s, e)]);
    }

    fn absorb_ooo(&mut self) {
        let n = self.ooo.iter().take_while(|r| r.0 <= self.rcv_nxt).count();
        if n > 0 {
            self.rcv_nxt = self.rcv_nxt.max(self.ooo[n - 1].1);
            self.ooo.drain(..n);
        }
    }

    fn remember_sack(&mut self, seq: u64) {
        let len = self.sack_history_len.min(SACK_HISTORY - 1);
        self.sack_history.copy_within(0..len, 1);
        self.sack_history[0] = seq;
        self.sack_history_len = len + 1;
    }

    /// SACK blocks for the next ACK, pushed onto `list`: the block holding the latest
    /// arrival first, then the blocks of earlier arrivals, most recent first (RFC 2018
    /// section 4).
    fn sack_blocks(&self, list: &mut SackList) {
        if !self.sack || self.ooo.is_empty() {
            return; // no block to report (the history may still name old arrivals)
        }
        for &seq in &self.sack_history[..self.sack_history_len] {
            let i = self.ooo.partition_point(|r| r.1 <= seq);
            if let Some(&(s, e)) = self.ooo.get(i).filter(|r| r.0 <= seq) {
                let b = SackBlock { start: s, end: e };
                if !list.iter().any(|x| x == b) && !list.push(b) {
                    break;
                }
            }
            if list.len() == MAX_SACK_BLOCKS {
                break;
            }
        }
    }

    pub fn ack_pending(&self) -> bool {
        self.ack_now
    }

    pub fn ack_deadline(&self) -> Option<Time> {
        self.ack_deadline
    }

    /// The delayed-ACK timer expired.
    pub fn on_ack_timer(&mut self, now: Time) {
        if self.ack_deadline.is_some_and(|d| d <= now) {
            self.ack_now = true;
        }
    }

    /// Forces an ACK on the next transmit opportunity (SYN-ACK, probes, RST replies).
    pub fn request_ack(&mut self) {
        self.ack_now = true;
    }

    /// Fills the acknowledgement fields of an outgoing segment and clears ACK state.
    pub fn on_ack_sent(&mut self) -> (u64, u64, SackList) {
        let mut sack = SackList::default();
        let (ack, window) = self.fill_ack(&mut sack);
        (ack, window, sack)
    }

    /// `on_ack_sent` for a segment whose (empty) SACK list is `sack`: the blocks are
    /// pushed where the list lies. (A list built apart and returned was copied whole,
    /// a load the processor could not forward from the narrower stores that built it.)
    pub fn fill_ack(&mut self, sack: &mut SackList) -> (u64, u64) {
        if self.unacked_segments > 0 || self.ack_now {
            // `tcp_dec_quickack_mode`: an ACK of received data spends one.
            self.quick = self.quick.saturating_sub(1);
        }
        self.ack_now = false;
        self.unacked_segments = 0;
        self.ack_deadline = None;
        let w = self.window();
        self.advertised_edge = self.rcv_nxt + w;
        self.sack_blocks(sack);
        (self.rcv_nxt, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    fn rx() -> Receiver {
        let mut r = Receiver::new(
            1 << 20,
            Some(DelayedAck {
                count: 2,
                timeout: Dur::from_millis(200),
            }),
            1000,
        );
        r.on_syn(true);
        r.on_ack_sent();
        r
    }

    /// ACKs a receiver with `buffer` bytes and `quick` sends for `n` in-order 1000-byte
    /// segments (an application that reads at once).
    fn acks_for(n: u64, buffer: u64, quick: QuickAck) -> usize {
        let delayed = Some(DelayedAck {
            count: 2,
            timeout: Dur::from_millis(40),
        });
        let mut r = Receiver::new(buffer, delayed, 1000).with_quick_ack(quick);
        r.on_syn(true);
        r.on_ack_sent();
        let mut acks = 0;
        for i in 0..n {
            r.on_segment(Time(i), 1 + i * 1000, 1000, false);
            if r.ack_pending() {
                r.on_ack_sent();
                acks += 1;
            }
        }
        acks
    }

    #[test]
    fn linux_acks_every_segment_while_its_window_opens() {
        // tcp_grow_window: from 65,000 bytes by 2,000 a segment, up to the 1 MB buffer.
        assert_eq!(acks_for(400, 1 << 20, QuickAck::Linux), 400);
        assert_eq!(acks_for(400, 1 << 20, QuickAck::Off), 200);
    }

    #[test]
    fn linux_acks_the_first_sixteen_segments_then_every_second() {
        // A window that cannot open (the buffer is the first window): only
        // tcp_incr_quickack's min(65,000 / 2,000, 16) = 16 quick ACKs, then every second.
        assert_eq!(acks_for(40, 65_000, QuickAck::Linux), 16 + 12);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timeout() {
        let mut r = rx();
        r.on_segment(Time(0), 1, 1000, false);
        assert!(!r.ack_pending());
        assert_eq!(r.ack_deadline(), Some(Time(200_000_000)));
        r.on_segment(Time(1), 1001, 1000, false);
        assert!(r.ack_pending());
        assert_eq!(r.on_ack_sent().0, 2001);
        r.on_segment(Time(2), 2001, 1000, false);
        r.on_ack_timer(Time(200_000_002));
        assert!(r.ack_pending());
    }

    #[test]
    fn hole_gives_immediate_dupack_with_sack_then_fill_acks_all() {
        let mut r = rx();
        r.on_segment(Time(0), 1001, 1000, false);
        r.on_segment(Time(0), 3001, 1000, false);
        assert!(r.ack_pending());
        let (ack, _, sack) = r.on_ack_sent();
        assert_eq!(ack, 1);
        assert_eq!(
            sack.iter().collect::<Vec<_>>(),
            [
                SackBlock {
                    start: 3001,
                    end: 4001
                },
                SackBlock {
                    start: 1001,
                    end: 2001
                }
            ]
        );
        r.on_segment(Time(0), 1, 1000, false);
        let (ack, _, sack) = r.on_ack_sent();
        assert_eq!(ack, 2001);
        assert_eq!(
            sack.iter().collect::<Vec<_>>(),
            [SackBlock {
                start: 3001,
                end: 4001
            }]
        );
        r.on_segment(Time(0), 2001, 1000, false);
        assert_eq!(r.on_ack_sent().0, 4001);
        assert_eq!(r.bytes_received(), 4000);
    }

    #[test]
    fn fin_after_data_is_acked_once_contiguous() {
        let mut r = rx();
        r.on_segment(Time(0), 1001, 0, true);
        assert!(!r.fin_received());
        r.on_segment(Time(0), 1, 1000, false);
        assert!(r.fin_received());
        assert_eq!(r.on_ack_sent().0, 1002);
        assert_eq!(r.bytes_received(), 1000);
    }

    #[test]
    fn window_closes_when_app_does_not_read() {
        let mut r = Receiver::new(3000, None, 1000);
        r.on_syn(false);
        r.set_auto_read(false);
        for i in 0..3 {
            r.on_segment(Time(0), 1 + i * 1000, 1000, false);
        }
        assert_eq!(r.on_ack_sent().1, 0);
        // A segment beyond a closed window is dropped.
        r.on_segment(Time(0), 3001, 1000, false);
        assert_eq!(r.bytes_received(), 3000);
        assert_eq!(r.read(1500), 1500);
        assert!(r.ack_pending(), "window update");
        assert_eq!(r.on_ack_sent().1, 1500);
    }
}
