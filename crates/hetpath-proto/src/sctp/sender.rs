//! The data sender of one association: fragmentation into DATA chunks, what to send next
//! under cwnd and the peer's rwnd (RFC 4960 section 6.1), SACK processing (section
//! 6.2.1), fast retransmit and fast recovery (section 7.2.4), and the T3-rtx timer with
//! its RTO (sections 6.3.2 and 6.3.3).
//!
//! A queued message is cut into DATA chunks only as they are about to be sent (section
//! 6.9: a sender fragments as the window allows), so memory grows with what is in flight
//! and the number of messages queued, never with a message's size. Messages are cut in
//! the order they were queued and a TSN is assigned as a chunk is cut, so the fragments
//! of a message get consecutive TSNs and the TSNs are those of cutting every message at
//! once. `chunks` holds every chunk cut and not yet acknowledged by the Cumulative TSN
//! Ack, oldest first; the first `sent` of them have been transmitted at least once (at
//! most one more waits, cut but not sent).

use super::cc::{SackInput, Window};
use super::chunk::{pad4, DataChunk, GapBlock, DATA_HEADER_LEN};
use super::config::SctpConfig;
use super::serial;
use crate::tcp::{RtoConfig, RtoFormula, RttEstimator};
use crate::time::{Dur, Time};
use std::collections::VecDeque;

/// Why a chunk waits for retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Fast,
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxState {
    /// Queued, never sent.
    Unsent,
    /// Sent and counted in the flight size.
    InFlight,
    /// Reported received by a Gap Ack Block: not in flight, not yet cumulatively acked.
    GapAcked,
    /// Marked for retransmission: not in flight until sent again.
    Marked(Why),
}

#[derive(Clone, Copy, Debug)]
struct TxChunk {
    tsn: u64,
    stream: u16,
    ssn: u16,
    unordered: bool,
    begin: bool,
    end: bool,
    len: u32,
    state: TxState,
    transmissions: u32,
    /// Miss indications since it was last sent (section 7.2.4).
    misses: u32,
    /// Fast retransmitted once: never again by fast retransmit (section 7.2.4 step 5).
    fast_done: bool,
}

/// A queued message not yet wholly cut into chunks.
#[derive(Clone, Copy, Debug)]
struct Pending {
    stream: u16,
    ssn: u16,
    unordered: bool,
    /// Its bytes not yet in a chunk, and whether its first chunk is cut.
    left: u64,
    begun: bool,
}

/// What an association counts about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SctpStats {
    pub packets_sent: u64,
    pub packets_received: u64,
    /// DATA chunks sent for the first time, and their user data bytes.
    pub data_chunks_sent: u64,
    pub data_bytes_sent: u64,
    /// DATA chunks retransmitted by fast retransmit (section 7.2.4), including those
    /// marked by it but sent later as cwnd allowed.
    pub fast_retransmissions: u64,
    /// DATA chunks retransmitted after a T3-rtx expiry (section 6.3.3).
    pub timeout_retransmissions: u64,
    /// Entries into Fast Recovery: window reductions by fast retransmit.
    pub fast_recoveries: u64,
    /// T3-rtx expiries with data outstanding.
    pub timeouts: u64,
    pub sacks_sent: u64,
    pub sacks_received: u64,
    /// Duplicate TSNs this endpoint received.
    pub duplicate_tsns: u64,
    pub messages_delivered: u64,
    pub bytes_delivered: u64,
}

/// The sender's window state, for drivers and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcState {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub partial_bytes_acked: u64,
    /// Bytes of DATA chunks sent and neither acknowledged nor marked for retransmission.
    pub flight_size: u64,
    /// The peer's receive window as section 6.2.1 tracks it.
    pub peer_rwnd: u64,
    pub rto: Dur,
    pub srtt: Option<Dur>,
    pub in_fast_recovery: bool,
}

/// What a T3-rtx expiry did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum T3Outcome {
    /// Not due, or nothing outstanding.
    Nothing,
    /// Window reduced, RTO backed off, the earliest chunks go out in one packet.
    Retransmit,
    /// Association.Max.Retrans exceeded (section 8.1).
    Abort,
}

pub(super) struct Sender {
    payload: u32,
    chunks_per_packet: usize,
    fast_threshold: u32,
    max_retrans: u32,
    /// The TSN the next queued chunk gets.
    next_tsn: u64,
    /// The Cumulative TSN Ack Point: every TSN up to it is acknowledged.
    cum_ack: u64,
    chunks: VecDeque<TxChunk>,
    /// Messages queued and not yet wholly cut into `chunks`, oldest first.
    pending: VecDeque<Pending>,
    sent: usize,
    /// Chunks in `Marked` state.
    marked: usize,
    next_ssn: Vec<u16>,
    out_streams: u16,
    flight: u64,
    peer_rwnd: u64,
    window: Window,
    rto: RttEstimator,
    t3: Option<Time>,
    /// The chunk being timed for an RTT sample, and when it left (section 6.3.1 C4, C5).
    timed: Option<(u64, Time)>,
    /// The highest TSN outstanding when Fast Recovery began (section 7.2.4 step 6).
    fast_recovery_exit: Option<u64>,
    /// A fast retransmit packet is due, ignoring cwnd (section 7.2.4 step 3).
    fast_rtx_due: bool,
    /// The single retransmission packet of a T3-rtx expiry is due (section 6.3.3 E3).
    t3_packet_due: bool,
    /// That packet has left: nothing more until a SACK arrives (as Linux sends one packet
    /// per expiry; the rest is "sent as soon as cwnd allows, normally when a SACK arrives").
    t3_hold: bool,
    /// Consecutive T3-rtx expiries without an acknowledgement (section 8.1).
    errors: u32,
    last_data_at: Option<Time>,
    pub(super) stats: SctpStats,
}

/// Why `send` refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("empty message: a DATA chunk carries at least one byte")]
    Empty,
    #[error("stream {stream} is not among the {streams} outbound streams")]
    InvalidStream { stream: u16, streams: u16 },
    #[error("the association is closing or closed")]
    Closed,
}

/// RFC 4960 section 6.3.1 is RFC 6298's estimator (alpha 1/8, beta 1/4, K = 4, then
/// RTO.Min and RTO.Max), with the clock granularity G at one nanosecond and the RTO
/// doubled per T3 expiry (section 6.3.3 rule E2).
fn rto_estimator(cfg: &SctpConfig) -> RttEstimator {
    RttEstimator::new(RtoConfig {
        initial: cfg.rto_initial,
        min: cfg.rto_min,
        max: cfg.rto_max,
        granularity: Dur(1),
        backoff: true,
        syn_retries: 0,
        data_retries: 0,
        formula: RtoFormula::Rfc6298,
    })
}

impl Sender {
    pub(super) fn new(cfg: &SctpConfig) -> Sender {
        Sender {
            payload: cfg.chunk_payload(),
            chunks_per_packet: cfg.chunks_per_packet.max(1) as usize,
            fast_threshold: cfg.fast_rtx_threshold.max(1),
            max_retrans: cfg.max_retrans,
            next_tsn: serial::first(cfg.initial_tsn),
            cum_ack: serial::first(cfg.initial_tsn) - 1,
            chunks: VecDeque::new(),
            pending: VecDeque::new(),
            sent: 0,
            marked: 0,
            next_ssn: vec![0; cfg.streams as usize],
            out_streams: cfg.streams,
            flight: 0,
            peer_rwnd: cfg.rwnd as u64,
            window: Window::new(cfg.mtu, cfg.initial_cwnd()),
            rto: rto_estimator(cfg),
            t3: None,
            timed: None,
            fast_recovery_exit: None,
            fast_rtx_due: false,
            t3_packet_due: false,
            t3_hold: false,
            errors: 0,
            last_data_at: None,
            stats: SctpStats::default(),
        }
    }

    /// The peer's INIT or INIT ACK: its window (initial rwnd and ssthresh, sections
    /// 6.2.1 and 7.2.1) and its inbound streams, which bound ours (section 5.1.1).
    pub(super) fn on_peer_init(&mut self, now: Time, a_rwnd: u32, peer_inbound: u16) {
        self.peer_rwnd = a_rwnd as u64;
        self.window.set_initial_ssthresh(a_rwnd);
        self.out_streams = self.out_streams.min(peer_inbound);
        self.last_data_at = Some(now);
    }

    pub(super) fn cc_state(&self) -> CcState {
        CcState {
            cwnd: self.window.cwnd,
            ssthresh: self.window.ssthresh,
            partial_bytes_acked: self.window.partial_bytes_acked,
            flight_size: self.flight,
            peer_rwnd: self.peer_rwnd,
            rto: self.rto.rto(),
            srtt: self.rto.srtt(),
            in_fast_recovery: self.fast_recovery_exit.is_some(),
        }
    }

    pub(super) fn rto(&self) -> Dur {
        self.rto.rto()
    }

    /// Nothing queued and nothing unacknowledged.
    pub(super) fn is_empty(&self) -> bool {
        self.chunks.is_empty() && self.pending.is_empty()
    }

    /// The TSN (wire value) the next chunk cut will carry.
    pub(super) fn next_tsn(&self) -> u32 {
        self.next_tsn as u32
    }

    /// Some chunk is cut or still to be cut and has never been sent.
    fn has_unsent(&self) -> bool {
        self.sent < self.chunks.len() || !self.pending.is_empty()
    }

    /// Makes sure a never-sent chunk is cut, if any data is queued: the next fragment of
    /// the oldest pending message gets the next TSN. False if nothing is left to send.
    fn cut_next(&mut self) -> bool {
        if self.sent < self.chunks.len() {
            return true;
        }
        let Some(m) = self.pending.front_mut() else {
            return false;
        };
        let len = m.left.min(self.payload as u64) as u32;
        m.left -= len as u64;
        let chunk = TxChunk {
            tsn: self.next_tsn,
            stream: m.stream,
            ssn: m.ssn,
            unordered: m.unordered,
            begin: !m.begun,
            end: m.left == 0,
            len,
            state: TxState::Unsent,
            transmissions: 0,
            misses: 0,
            fast_done: false,
        };
        m.begun = true;
        if m.left == 0 {
            self.pending.pop_front();
        }
        self.chunks.push_back(chunk);
        self.next_tsn += 1;
        true
    }

    /// Queues one user message of `bytes` on `stream`, to be fragmented into chunks of
    /// at most the configured payload as they are sent (section 6.9). Ordered messages
    /// take the stream's next Stream Sequence Number (section 6.5).
    pub(super) fn queue(
        &mut self,
        stream: u16,
        bytes: u64,
        unordered: bool,
    ) -> Result<(), SendError> {
        if bytes == 0 {
            return Err(SendError::Empty);
        }
        if stream >= self.out_streams {
            return Err(SendError::InvalidStream {
                stream,
                streams: self.out_streams,
            });
        }
        let ssn = if unordered {
            0
        } else {
            let next = &mut self.next_ssn[stream as usize];
            let ssn = *next;
            *next = next.wrapping_add(1);
            ssn
        };
        self.pending.push_back(Pending {
            stream,
            ssn,
            unordered,
            left: bytes,
            begun: false,
        });
        Ok(())
    }

    /// Appends to `out` the DATA chunks of the next packet, at most `room` bytes of them
    /// (padded) and `chunks_per_packet`, and records them as sent.
    ///
    /// Section 6.1: a packet may start only while the flight size is below cwnd (rule B;
    /// it may then pass cwnd by less than one packet); chunks marked for retransmission go
    /// before new ones (rule C); a new chunk needs room in the peer's rwnd, except that one
    /// chunk may always be in flight (rule A; this model asks for room for the whole chunk
    /// where rule A only forbids sending into a zero window, so that the receiver never
    /// has to drop). A fast retransmit packet and the packet of a T3-rtx expiry ignore
    /// cwnd (sections 7.2.4 step 3 and 6.3.3 E3).
    pub(super) fn poll_data(&mut self, now: Time, room: u32, out: &mut Vec<DataChunk>) {
        let mut room = room;
        if self.t3_packet_due || self.fast_rtx_due {
            let t3 = self.t3_packet_due;
            self.t3_packet_due = false;
            self.fast_rtx_due = false;
            let first_outstanding = self.first_outstanding();
            let before = out.len();
            for i in 0..self.sent {
                if out.len() - before >= self.chunks_per_packet {
                    break;
                }
                if matches!(self.chunks[i].state, TxState::Marked(_)) {
                    let need = pad4(DATA_HEADER_LEN + self.chunks[i].len);
                    if need > room {
                        break;
                    }
                    room -= need;
                    if Some(i) == first_outstanding {
                        // Step 4 of section 7.2.4: retransmitting the first outstanding
                        // chunk restarts T3-rtx.
                        self.t3 = None;
                    }
                    out.push(self.transmit(i, now));
                }
            }
            self.t3_hold = t3 && out.len() > before;
            return;
        }
        if self.t3_hold || self.flight >= self.window.cwnd {
            return;
        }
        let mut n = 0;
        if self.marked > 0 {
            for i in 0..self.sent {
                if n >= self.chunks_per_packet {
                    return;
                }
                if matches!(self.chunks[i].state, TxState::Marked(_)) {
                    let need = pad4(DATA_HEADER_LEN + self.chunks[i].len);
                    if need > room {
                        return;
                    }
                    room -= need;
                    out.push(self.transmit(i, now));
                    n += 1;
                }
            }
        }
        if self.has_unsent() && self.flight == 0 && self.marked == 0 {
            self.decay_idle_window(now);
        }
        while n < self.chunks_per_packet && self.cut_next() {
            let len = self.chunks[self.sent].len;
            let need = pad4(DATA_HEADER_LEN + len);
            if need > room || (len as u64 > self.peer_rwnd && self.flight > 0) {
                return;
            }
            room -= need;
            self.sent += 1;
            out.push(self.transmit(self.sent - 1, now));
            n += 1;
        }
    }

    /// Section 7.2.1: cwnd decays while nothing is sent (`Window::on_idle`).
    fn decay_idle_window(&mut self, now: Time) {
        let Some(last) = self.last_data_at else {
            return;
        };
        let rto = self.rto.rto().as_nanos().max(1);
        let rtos = now.since(last).as_nanos() / rto;
        if rtos > 0 {
            self.window.on_idle(rtos);
            self.last_data_at = Some(last + Dur(rto.saturating_mul(rtos)));
        }
    }

    /// Index of the lowest-TSN chunk sent and not acknowledged.
    fn first_outstanding(&self) -> Option<usize> {
        (0..self.sent).find(|&i| self.chunks[i].state != TxState::GapAcked)
    }

    fn transmit(&mut self, i: usize, now: Time) -> DataChunk {
        let c = &mut self.chunks[i];
        match c.state {
            TxState::Marked(why) => {
                self.marked -= 1;
                match why {
                    Why::Fast => self.stats.fast_retransmissions += 1,
                    Why::Timeout => self.stats.timeout_retransmissions += 1,
                }
            }
            TxState::Unsent => {
                self.stats.data_chunks_sent += 1;
                self.stats.data_bytes_sent += c.len as u64;
                if self.timed.is_none() {
                    self.timed = Some((c.tsn, now));
                }
            }
            TxState::InFlight | TxState::GapAcked => {}
        }
        c.state = TxState::InFlight;
        c.transmissions += 1;
        c.misses = 0;
        self.flight += c.len as u64;
        self.peer_rwnd = self.peer_rwnd.saturating_sub(c.len as u64);
        // Rule R1 of section 6.3.2.
        if self.t3.is_none() {
            self.t3 = Some(now + self.rto.rto());
        }
        self.last_data_at = Some(now);
        DataChunk {
            tsn: c.tsn as u32,
            stream: c.stream,
            ssn: c.ssn,
            ppid: 0,
            unordered: c.unordered,
            begin: c.begin,
            end: c.end,
            len: c.len,
        }
    }

    fn mark(&mut self, i: usize, why: Why) {
        let c = &mut self.chunks[i];
        if c.state == TxState::InFlight {
            self.flight -= c.len as u64;
        }
        if !matches!(c.state, TxState::Marked(_)) {
            self.marked += 1;
        }
        c.state = TxState::Marked(why);
        // Karn's rule (section 6.3.1 C5): no sample from a retransmitted chunk.
        if self.timed.is_some_and(|(tsn, _)| tsn == c.tsn) {
            self.timed = None;
        }
    }

    /// A chunk newly acknowledged: out of the flight, an RTT sample if it is the timed
    /// one. Returns its bytes.
    fn acked(&mut self, c: TxChunk, now: Time) -> u64 {
        match c.state {
            TxState::InFlight => self.flight -= c.len as u64,
            TxState::Marked(_) => self.marked -= 1,
            TxState::GapAcked | TxState::Unsent => return 0,
        }
        if let Some((tsn, at)) = self.timed {
            if tsn == c.tsn && c.transmissions == 1 {
                // Rules C2 and C3; a measurement also ends any backoff.
                self.rto.on_sample(now.since(at), 0);
                self.rto.reset_backoff();
                self.timed = None;
            }
        }
        c.len as u64
    }

    /// A SACK (section 6.2.1 and 7.2). Returns false if it was dropped as stale or
    /// acknowledging what was never sent.
    pub(super) fn on_sack(&mut self, now: Time, cum: u32, a_rwnd: u32, gaps: &[GapBlock]) -> bool {
        self.on_ack(now, cum, Some(a_rwnd), Some(gaps))
    }

    /// The Cumulative TSN Ack of a SHUTDOWN (section 9.2): a SACK without gap blocks that
    /// says nothing about the window or the chunks above it.
    pub(super) fn on_shutdown_ack_point(&mut self, now: Time, cum: u32) {
        self.on_ack(now, cum, None, None);
    }

    fn on_ack(
        &mut self,
        now: Time,
        cum: u32,
        a_rwnd: Option<u32>,
        gaps: Option<&[GapBlock]>,
    ) -> bool {
        let cum = serial::widen(self.cum_ack, cum);
        // Section 6.2.1 D i: drop a SACK older than the Cumulative TSN Ack Point; one
        // acknowledging data never sent is a protocol violation, ignored here.
        if cum < self.cum_ack || cum > self.cum_ack + self.sent as u64 {
            return false;
        }
        let flight_before = self.flight;
        let cum_advanced = cum > self.cum_ack;
        let mut bytes_acked = 0;
        let mut htna: Option<u64> = None;
        while self.cum_ack < cum {
            let Some(c) = self.chunks.pop_front() else {
                break;
            };
            self.sent -= 1;
            self.cum_ack += 1;
            let b = self.acked(c, now);
            if b > 0 {
                bytes_acked += b;
                htna = Some(c.tsn);
            }
        }
        let mut highest_reported: Option<u64> = None;
        if let Some(gaps) = gaps {
            let blocks: Vec<(u64, u64)> = gaps
                .iter()
                .filter(|g| g.start >= 1 && g.start <= g.end)
                .map(|g| (cum + g.start as u64, cum + g.end as u64))
                .collect();
            for i in 0..self.sent {
                let c = self.chunks[i];
                let covered = blocks.iter().any(|&(s, e)| s <= c.tsn && c.tsn <= e);
                if covered {
                    highest_reported = Some(c.tsn);
                    if c.state != TxState::GapAcked {
                        let b = self.acked(c, now);
                        self.chunks[i].state = TxState::GapAcked;
                        if b > 0 {
                            bytes_acked += b;
                            htna = Some(c.tsn);
                        }
                    }
                } else if c.state == TxState::GapAcked {
                    // Reneged (section 6.2.1 D iv): outstanding again, in flight, left
                    // to T3-rtx or fast retransmit.
                    self.chunks[i].state = TxState::InFlight;
                    self.flight += c.len as u64;
                }
            }
        }
        if bytes_acked > 0 {
            // Section 8.1: the error counter is reset when outstanding data is acked.
            self.errors = 0;
        }
        self.t3_hold = false;
        if self
            .fast_recovery_exit
            .is_some_and(|exit| self.cum_ack >= exit)
        {
            self.fast_recovery_exit = None;
        }
        if let Some(a_rwnd) = a_rwnd {
            // Section 6.2.1 C: rwnd = a_rwnd less the bytes still outstanding.
            self.peer_rwnd = (a_rwnd as u64).saturating_sub(self.flight);
        }
        // Sections 7.2.1 and 7.2.2 come before any fast retransmit (7.2.4, "Note").
        self.window.on_sack(SackInput {
            cum_advanced,
            bytes_acked,
            flight_before,
            in_fast_recovery: self.fast_recovery_exit.is_some(),
            all_acked: self.sent == 0,
        });
        if gaps.is_some() {
            // Section 7.2.4, HTNA: a miss indication for each TSN reported missing below
            // the highest TSN newly acknowledged; in Fast Recovery, with an advancing
            // Cumulative TSN Ack, for every TSN reported missing.
            let limit = if self.fast_recovery_exit.is_some() && cum_advanced {
                highest_reported
            } else {
                htna
            };
            if let Some(limit) = limit {
                self.count_misses(limit);
            }
        }
        // Rules R2 and R3 of section 6.3.2.
        if self.flight == 0 && self.marked == 0 {
            self.t3 = None;
        } else if cum_advanced || self.t3.is_none() {
            self.t3 = Some(now + self.rto.rto());
        }
        true
    }

    fn count_misses(&mut self, limit: u64) {
        let mut fired = false;
        for i in 0..self.sent {
            let c = &mut self.chunks[i];
            if c.tsn >= limit {
                break;
            }
            if c.state != TxState::InFlight {
                continue;
            }
            c.misses += 1;
            if c.misses >= self.fast_threshold && !c.fast_done {
                // Step 5: ineligible for another fast retransmit, whether it fits the
                // fast retransmit packet or waits for cwnd.
                c.fast_done = true;
                self.mark(i, Why::Fast);
                fired = true;
            }
        }
        if fired {
            // Section 7.2.4 steps 2 and 6: one window reduction per Fast Recovery.
            if self.fast_recovery_exit.is_none() {
                self.window.on_fast_retransmit();
                self.stats.fast_recoveries += 1;
                self.fast_recovery_exit = Some(self.cum_ack + self.sent as u64);
            }
            self.fast_rtx_due = true;
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Time> {
        self.t3
    }

    /// T3-rtx (section 6.3.3): E1 window, E2 backoff, E3 every outstanding chunk marked,
    /// the earliest of them sent in one packet by the next `poll_data`.
    pub(super) fn on_timeout(&mut self, now: Time) -> T3Outcome {
        match self.t3 {
            Some(t) if t <= now => {}
            _ => return T3Outcome::Nothing,
        }
        self.t3 = None;
        if self.flight == 0 && self.marked == 0 {
            return T3Outcome::Nothing;
        }
        self.stats.timeouts += 1;
        self.errors += 1;
        if self.errors > self.max_retrans {
            return T3Outcome::Abort;
        }
        self.window.on_timeout();
        self.rto.on_timeout(); // rule E2: RTO doubled, at most RTO.Max
        for i in 0..self.sent {
            if self.chunks[i].state == TxState::InFlight {
                self.mark(i, Why::Timeout);
            }
        }
        // Like Linux, a timeout ends Fast Recovery: the next loss reduces the window again.
        self.fast_recovery_exit = None;
        self.fast_rtx_due = false;
        self.t3_packet_due = true;
        self.t3_hold = false;
        T3Outcome::Retransmit
    }
}
