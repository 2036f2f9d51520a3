//! One SCTP association as a sans-IO machine: `handle_packet`, `poll_transmit`,
//! `poll_timeout`, `handle_timeout`, `poll_event` (docs/architecture.md, "The machine
//! contract"). Both endpoints run this type: the client from `connect`, the server from
//! `accept`.
//!
//! It adds to the `Sender` and `Receiver` the association states of RFC 4960 section 4:
//! the four-way handshake (section 5.1) with T1-init and T1-cookie, verification tags
//! (section 8.5), graceful shutdown (section 9.2) with T2-shutdown, and ABORT.
//!
//! Deviations, all for a single-homed simulation without an adversary: the State Cookie
//! carries the peer's INIT parameters under a CRC32c, not a keyed MAC, and has no
//! lifetime (section 5.1.3); INIT collisions and restarts (section 5.2) are ignored;
//! DATA is not bundled with COOKIE ECHO; no ERROR chunk is ever sent; an out-of-the-blue
//! packet gets no ABORT (section 8.4), except that a SHUTDOWN ACK after close is
//! answered with SHUTDOWN COMPLETE as rule 5 asks. The TCB is never deleted: a closed
//! association stays to answer that SHUTDOWN ACK.

use super::chunk::{Chunk, InitParams, SctpPacket, COMMON_HEADER_LEN, SACK_HEADER_LEN};
use super::config::SctpConfig;
use super::receiver::Receiver;
use super::sender::{CcState, SctpStats, SendError, Sender, T3Outcome};
use super::wire::crc32c;
use crate::time::{Dur, Time};
use std::collections::VecDeque;

/// Association states (RFC 4960 section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// CLOSED with a listener: the server answers INIT statelessly (section 5.1 B) and
    /// waits for a valid COOKIE ECHO.
    Listen,
    CookieWait,
    CookieEchoed,
    Established,
    /// The user closed; SHUTDOWN waits until all our data is acknowledged.
    ShutdownPending,
    ShutdownSent,
    ShutdownReceived,
    ShutdownAckSent,
    /// Shut down gracefully.
    Closed,
    /// Aborted (`AbortReason`).
    Aborted,
}

/// Why an association ended without the shutdown of section 9.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// Association.Max.Retrans consecutive timeouts exceeded (section 8.1; also for
    /// T2-shutdown, section 9.2).
    MaxRetransmissions,
    /// Max.Init.Retransmits exceeded by INIT or COOKIE ECHO (section 5.1).
    InitFailed,
    /// The peer sent ABORT.
    Peer,
    /// `abort` was called.
    User,
}

/// What happened, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Established (COOKIE ACK received, or a valid COOKIE ECHO accepted).
    Connected,
    /// A complete message, in order within its stream unless `unordered`.
    Delivered {
        stream: u16,
        ssn: u16,
        bytes: u64,
        unordered: bool,
    },
    /// The shutdown of section 9.2 completed.
    Closed,
    Aborted(AbortReason),
}

/// Length of the State Cookie: the peer's five INIT fields, our tag, a check.
const COOKIE_LEN: usize = 24;

pub struct Association {
    cfg: SctpConfig,
    state: State,
    local_port: u16,
    peer_port: u16,
    /// The peer's Initiate Tag: what we write in every packet after INIT.
    peer_tag: u32,
    sender: Sender,
    receiver: Receiver,
    /// Whole packets to send before anything else: INIT ACKs of the stateless listener,
    /// ABORT, reflected SHUTDOWN COMPLETE.
    replies: VecDeque<SctpPacket>,
    init_due: bool,
    cookie: Vec<u8>,
    cookie_echo_due: bool,
    cookie_ack_due: bool,
    shutdown_due: bool,
    shutdown_ack_due: bool,
    shutdown_complete_due: bool,
    close_requested: bool,
    /// T1-init or T1-cookie, the attempts after the first, and the current timeout.
    t1: Option<Time>,
    t1_count: u32,
    t1_rto: Dur,
    /// T2-shutdown and its consecutive expiries.
    t2: Option<Time>,
    t2_count: u32,
    t2_rto: Dur,
    events: VecDeque<Event>,
}

impl Association {
    /// Active open: the first `poll_transmit` yields the INIT (section 5.1 A).
    pub fn connect(cfg: SctpConfig, local_port: u16, peer_port: u16) -> Association {
        let mut a = Association::new(cfg, local_port, peer_port, State::CookieWait);
        a.init_due = true;
        a
    }

    /// Passive open: wait for an INIT on `local_port` from any port.
    pub fn accept(cfg: SctpConfig, local_port: u16) -> Association {
        Association::new(cfg, local_port, 0, State::Listen)
    }

    fn new(cfg: SctpConfig, local_port: u16, peer_port: u16, state: State) -> Association {
        Association {
            sender: Sender::new(&cfg),
            receiver: Receiver::new(&cfg),
            cfg,
            state,
            local_port,
            peer_port,
            peer_tag: 0,
            replies: VecDeque::new(),
            init_due: false,
            cookie: Vec::new(),
            cookie_echo_due: false,
            cookie_ack_due: false,
            shutdown_due: false,
            shutdown_ack_due: false,
            shutdown_complete_due: false,
            close_requested: false,
            t1: None,
            t1_count: 0,
            t1_rto: cfg.rto_initial,
            t2: None,
            t2_count: 0,
            t2_rto: cfg.rto_initial,
            events: VecDeque::new(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn config(&self) -> &SctpConfig {
        &self.cfg
    }

    pub fn stats(&self) -> SctpStats {
        SctpStats {
            duplicate_tsns: self.receiver.duplicates,
            ..self.sender.stats
        }
    }

    /// cwnd, ssthresh, flight size, rwnd and RTO as the sender holds them.
    pub fn cc_state(&self) -> CcState {
        self.sender.cc_state()
    }

    /// Every message queued so far is acknowledged (nothing queued, nothing in flight):
    /// how a driver learns that a sender is done without waiting for the shutdown.
    pub fn all_acked(&self) -> bool {
        self.sender.is_empty()
    }

    /// The TSN (wire value) the next DATA chunk cut from the queued messages will carry
    /// (chunks are cut as the window allows).
    pub fn next_tsn(&self) -> u32 {
        self.sender.next_tsn()
    }

    /// Queues a message of `bytes` (virtual) on `stream`, delivered in order within the
    /// stream. Allowed until the user closes (before the handshake completes too).
    pub fn send(&mut self, stream: u16, bytes: u64) -> Result<(), SendError> {
        self.send_with(stream, bytes, false)
    }

    /// `send`, optionally unordered (U bit, section 6.6).
    pub fn send_with(&mut self, stream: u16, bytes: u64, unordered: bool) -> Result<(), SendError> {
        if self.close_requested
            || !matches!(
                self.state,
                State::Listen | State::CookieWait | State::CookieEchoed | State::Established
            )
        {
            return Err(SendError::Closed);
        }
        self.sender.queue(stream, bytes, unordered)
    }

    /// Graceful shutdown (section 9.2) once every queued message is acknowledged.
    pub fn close(&mut self, now: Time) {
        match self.state {
            State::Listen => self.state = State::Closed,
            State::CookieWait | State::CookieEchoed => self.close_requested = true,
            State::Established => {
                self.close_requested = true;
                self.state = State::ShutdownPending;
                self.progress_shutdown(now);
            }
            _ => {}
        }
    }

    /// Sends ABORT (section 9.1) and ends the association at once.
    pub fn abort(&mut self) {
        if matches!(self.state, State::Closed | State::Aborted) {
            return;
        }
        if !matches!(self.state, State::Listen | State::CookieWait) {
            self.replies
                .push_back(self.packet(vec![Chunk::Abort { reflected: false }]));
        }
        self.end(Event::Aborted(AbortReason::User));
    }

    fn end(&mut self, event: Event) {
        self.state = match event {
            Event::Closed => State::Closed,
            _ => State::Aborted,
        };
        self.t1 = None;
        self.t2 = None;
        self.events.push_back(event);
    }

    fn packet(&self, chunks: Vec<Chunk>) -> SctpPacket {
        SctpPacket {
            src_port: self.local_port,
            dst_port: self.peer_port,
            verification_tag: self.peer_tag,
            chunks,
        }
    }

    fn our_init(&self) -> InitParams {
        InitParams {
            initiate_tag: self.cfg.initiate_tag,
            a_rwnd: self.cfg.rwnd,
            outbound_streams: self.cfg.streams,
            inbound_streams: self.cfg.streams,
            initial_tsn: self.cfg.initial_tsn,
        }
    }

    /// Section 8.5.1: the verification tag rules, per packet.
    fn tag_ok(&self, p: &SctpPacket) -> bool {
        match p.chunks.first() {
            // Rule A: INIT travels with tag 0, alone (section 6.10).
            Some(Chunk::Init(_)) => p.verification_tag == 0 && p.chunks.len() == 1,
            // Rules B and C: a reflected tag (T bit) is the peer's own.
            Some(
                Chunk::Abort { reflected: true } | Chunk::ShutdownComplete { reflected: true },
            ) => self.peer_tag != 0 && p.verification_tag == self.peer_tag,
            // Section 8.4 rule 5: a SHUTDOWN ACK after close, whatever its tag.
            Some(Chunk::ShutdownAck) if self.state == State::Closed => true,
            _ => p.verification_tag == self.cfg.initiate_tag,
        }
    }

    /// One arriving packet.
    pub fn handle_packet(&mut self, now: Time, p: &SctpPacket) {
        if self.state == State::Aborted
            || p.dst_port != self.local_port
            || (self.state != State::Listen && p.src_port != self.peer_port)
            || !self.tag_ok(p)
        {
            return;
        }
        self.sender.stats.packets_received += 1;
        self.receiver.begin_packet();
        for chunk in &p.chunks {
            if !self.handle_chunk(now, p, chunk) || matches!(self.state, State::Aborted) {
                break;
            }
        }
        if self.state == State::Aborted {
            return;
        }
        let summary = self.receiver.end_packet(now);
        if summary.had_data && self.state == State::ShutdownSent {
            // Section 9.2: answer each packet with DATA with SHUTDOWN, restarting T2;
            // a SACK too only if the cumulative ack alone cannot say it (RFC 9260).
            self.shutdown_due = true;
            self.t2 = None;
            if !summary.gap_or_dup {
                self.receiver.acknowledged();
            }
        }
        while let Some(d) = self.receiver.pop_delivery() {
            self.sender.stats.messages_delivered += 1;
            self.sender.stats.bytes_delivered += d.bytes;
            self.events.push_back(Event::Delivered {
                stream: d.stream,
                ssn: d.ssn,
                bytes: d.bytes,
                unordered: d.unordered,
            });
        }
        self.progress_shutdown(now);
    }

    /// One chunk; false stops processing the packet (section 3.2 for unknown types).
    fn handle_chunk(&mut self, now: Time, p: &SctpPacket, chunk: &Chunk) -> bool {
        match chunk {
            Chunk::Init(init) => self.on_init(p, init),
            Chunk::InitAck { params, cookie } => self.on_init_ack(now, params, cookie),
            Chunk::CookieEcho { cookie } => self.on_cookie_echo(now, p, cookie),
            Chunk::CookieAck => {
                if self.state == State::CookieEchoed {
                    self.t1 = None;
                    self.established(now);
                }
            }
            Chunk::Data(d) => {
                if !matches!(
                    self.state,
                    State::Listen | State::CookieWait | State::Closed
                ) {
                    self.receiver.on_data(d);
                }
            }
            Chunk::Sack(s) => {
                if self.sending_state() || self.state == State::ShutdownSent {
                    self.sender.stats.sacks_received += 1;
                    self.sender.on_sack(now, s.cum_tsn_ack, s.a_rwnd, &s.gaps);
                }
            }
            Chunk::Shutdown { cum_tsn_ack } => self.on_shutdown(now, *cum_tsn_ack),
            Chunk::ShutdownAck => match self.state {
                // Section 9.2: SHUTDOWN ACK ends it; also in SHUTDOWN-ACK-SENT when both
                // sides shut down at once.
                State::ShutdownSent | State::ShutdownAckSent => {
                    self.shutdown_complete_due = true;
                    self.end(Event::Closed);
                }
                State::Closed => {
                    self.replies.push_back(SctpPacket {
                        verification_tag: p.verification_tag,
                        ..self.packet(vec![Chunk::ShutdownComplete { reflected: true }])
                    });
                }
                _ => {}
            },
            Chunk::ShutdownComplete { .. } => {
                if self.state == State::ShutdownAckSent {
                    self.end(Event::Closed);
                }
            }
            Chunk::Abort { .. } => {
                if !matches!(self.state, State::Listen | State::Closed) {
                    self.end(Event::Aborted(AbortReason::Peer));
                }
            }
            // Section 3.2: the two high bits of an unrecognised type say whether to stop
            // processing the packet (00, 01) or skip the chunk (10, 11). Reporting it in
            // an ERROR chunk is not modelled.
            Chunk::Unknown { chunk_type, .. } => return chunk_type >> 6 >= 2,
        }
        true
    }

    fn sending_state(&self) -> bool {
        matches!(
            self.state,
            State::Established | State::ShutdownPending | State::ShutdownReceived
        )
    }

    /// Section 5.1 B: answer INIT with INIT ACK and a State Cookie, keeping no state.
    fn on_init(&mut self, p: &SctpPacket, init: &InitParams) {
        if self.state != State::Listen || !valid_init(init) {
            return;
        }
        let cookie = self.make_cookie(init);
        self.replies.push_back(SctpPacket {
            src_port: self.local_port,
            dst_port: p.src_port,
            verification_tag: init.initiate_tag,
            chunks: vec![Chunk::InitAck {
                params: self.our_init(),
                cookie,
            }],
        });
    }

    /// Section 5.1 C: COOKIE-WAIT takes the INIT ACK, sends COOKIE ECHO, starts
    /// T1-cookie.
    fn on_init_ack(&mut self, now: Time, params: &InitParams, cookie: &[u8]) {
        if self.state != State::CookieWait || !valid_init(params) {
            return;
        }
        self.peer_tag = params.initiate_tag;
        self.learn_peer(now, params);
        self.cookie = cookie.to_vec();
        self.state = State::CookieEchoed;
        self.cookie_echo_due = true;
        self.t1 = None;
        self.t1_count = 0;
        self.t1_rto = self.cfg.rto_initial;
    }

    fn learn_peer(&mut self, now: Time, peer: &InitParams) {
        self.receiver.start(
            peer.initial_tsn,
            self.cfg.streams.min(peer.outbound_streams),
        );
        self.sender
            .on_peer_init(now, peer.a_rwnd, peer.inbound_streams);
    }

    /// Section 5.1 D: a valid cookie establishes the association; a repeated one (our
    /// COOKIE ACK was lost) is acknowledged again (section 5.2.4 action D).
    fn on_cookie_echo(&mut self, now: Time, p: &SctpPacket, cookie: &[u8]) {
        let Some(peer) = self.open_cookie(cookie) else {
            return;
        };
        match self.state {
            State::Listen => {
                self.peer_port = p.src_port;
                self.peer_tag = peer.initiate_tag;
                self.learn_peer(now, &peer);
                self.cookie_ack_due = true;
                self.established(now);
            }
            State::CookieWait | State::CookieEchoed => {}
            _ => {
                if peer.initiate_tag == self.peer_tag {
                    self.cookie_ack_due = true;
                }
            }
        }
    }

    fn established(&mut self, now: Time) {
        self.state = State::Established;
        self.events.push_back(Event::Connected);
        if self.close_requested {
            self.state = State::ShutdownPending;
            self.progress_shutdown(now);
        }
    }

    /// The cookie: the peer's INIT fields and our tag, under a CRC32c keyed by our tag.
    fn make_cookie(&self, peer: &InitParams) -> Vec<u8> {
        let mut c = Vec::with_capacity(COOKIE_LEN);
        c.extend_from_slice(&peer.initiate_tag.to_be_bytes());
        c.extend_from_slice(&peer.a_rwnd.to_be_bytes());
        c.extend_from_slice(&peer.outbound_streams.to_be_bytes());
        c.extend_from_slice(&peer.inbound_streams.to_be_bytes());
        c.extend_from_slice(&peer.initial_tsn.to_be_bytes());
        c.extend_from_slice(&self.cfg.initiate_tag.to_be_bytes());
        let check = crc32c(&c) ^ self.cfg.initiate_tag;
        c.extend_from_slice(&check.to_be_bytes());
        c
    }

    fn open_cookie(&self, c: &[u8]) -> Option<InitParams> {
        if c.len() != COOKIE_LEN {
            return None;
        }
        let word = |at: usize| u32::from_be_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]]);
        if word(16) != self.cfg.initiate_tag || word(20) != crc32c(&c[..20]) ^ self.cfg.initiate_tag
        {
            return None;
        }
        let peer = InitParams {
            initiate_tag: word(0),
            a_rwnd: word(4),
            outbound_streams: u16::from_be_bytes([c[8], c[9]]),
            inbound_streams: u16::from_be_bytes([c[10], c[11]]),
            initial_tsn: word(12),
        };
        valid_init(&peer).then_some(peer)
    }

    /// Section 9.2: the peer has no more data; its cumulative ack acknowledges ours.
    fn on_shutdown(&mut self, now: Time, cum_tsn_ack: u32) {
        match self.state {
            State::Established | State::ShutdownPending | State::ShutdownReceived => {
                self.sender.on_shutdown_ack_point(now, cum_tsn_ack);
                self.state = State::ShutdownReceived;
            }
            // Both sides closed at once: SHUTDOWN ACK at once, restarting T2.
            State::ShutdownSent => {
                self.state = State::ShutdownAckSent;
                self.shutdown_due = false;
                self.shutdown_ack_due = true;
                self.t2 = None;
                self.t2_rto = self.sender.rto();
            }
            // Our SHUTDOWN ACK was lost and the peer repeats its SHUTDOWN.
            State::ShutdownAckSent => self.shutdown_ack_due = true,
            _ => {}
        }
    }

    /// SHUTDOWN once our data is all acknowledged; SHUTDOWN ACK likewise after the
    /// peer's SHUTDOWN (section 9.2).
    fn progress_shutdown(&mut self, _now: Time) {
        if !self.sender.is_empty() {
            return;
        }
        // T2-shutdown starts from the current RTO (section 9.2).
        self.t2_rto = self.sender.rto();
        match self.state {
            State::ShutdownPending => {
                self.state = State::ShutdownSent;
                self.shutdown_due = true;
            }
            State::ShutdownReceived => {
                self.state = State::ShutdownAckSent;
                self.shutdown_ack_due = true;
            }
            _ => {}
        }
    }

    /// The next packet to send now, if any.
    pub fn poll_transmit(&mut self, now: Time) -> Option<SctpPacket> {
        if let Some(p) = self.replies.pop_front() {
            self.sender.stats.packets_sent += 1;
            return Some(p);
        }
        let p = match self.state {
            State::CookieWait if self.init_due => {
                self.init_due = false;
                self.t1.get_or_insert(now + self.t1_rto);
                SctpPacket {
                    verification_tag: 0,
                    ..self.packet(vec![Chunk::Init(self.our_init())])
                }
            }
            State::Listen | State::CookieWait | State::Aborted => return None,
            _ => self.bundle(now)?,
        };
        self.sender.stats.packets_sent += 1;
        Some(p)
    }

    /// Control chunks first (section 6.10), then a SACK, then DATA.
    fn bundle(&mut self, now: Time) -> Option<SctpPacket> {
        let budget = self.cfg.packet_budget();
        let mut chunks = Vec::new();
        if std::mem::take(&mut self.cookie_echo_due) {
            chunks.push(Chunk::CookieEcho {
                cookie: self.cookie.clone(),
            });
            self.t1.get_or_insert(now + self.t1_rto);
        }
        if std::mem::take(&mut self.cookie_ack_due) {
            chunks.push(Chunk::CookieAck);
        }
        if std::mem::take(&mut self.shutdown_due) && self.state == State::ShutdownSent {
            chunks.push(Chunk::Shutdown {
                cum_tsn_ack: self.receiver.cum_tsn(),
            });
            if !self.receiver.needs_sack() {
                self.receiver.acknowledged();
            }
            self.t2.get_or_insert(now + self.t2_rto);
        }
        if std::mem::take(&mut self.shutdown_ack_due) && self.state == State::ShutdownAckSent {
            chunks.push(Chunk::ShutdownAck);
            self.t2.get_or_insert(now + self.t2_rto);
        }
        if std::mem::take(&mut self.shutdown_complete_due) {
            chunks.push(Chunk::ShutdownComplete { reflected: false });
        }
        let mut used = COMMON_HEADER_LEN + chunks.iter().map(Chunk::wire_len).sum::<u32>();
        let mut sack_sent = false;
        if self.receiver.is_started() && self.receiver.sack_due() {
            let sack = self.receiver.build_sack(budget.saturating_sub(used));
            used += sack.len();
            chunks.push(Chunk::Sack(sack));
            sack_sent = true;
        }
        if self.sending_state() {
            let mut data = Vec::new();
            self.sender
                .poll_data(now, budget.saturating_sub(used), &mut data);
            let data_len: u32 = data.iter().map(|d| Chunk::Data(*d).wire_len()).sum();
            let room = budget.saturating_sub(used + data_len);
            // Section 6.1: bundle a pending SACK with outgoing DATA if it fits the MTU.
            if !data.is_empty()
                && !sack_sent
                && self.receiver.sack_pending()
                && room >= SACK_HEADER_LEN
            {
                chunks.push(Chunk::Sack(self.receiver.build_sack(room)));
                sack_sent = true;
            }
            chunks.extend(data.into_iter().map(Chunk::Data));
        }
        if sack_sent {
            self.sender.stats.sacks_sent += 1;
        }
        if chunks.is_empty() {
            return None;
        }
        Some(self.packet(chunks))
    }

    /// The earliest time `handle_timeout` has work.
    pub fn poll_timeout(&self) -> Option<Time> {
        if matches!(self.state, State::Aborted | State::Closed | State::Listen) {
            return None;
        }
        [
            self.t1,
            self.t2,
            self.receiver.poll_timeout(),
            self.sender.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs every timer due at `now`; early or stale calls do nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        if matches!(self.state, State::Aborted | State::Closed | State::Listen) {
            return;
        }
        if self.t1.is_some_and(|t| t <= now) {
            // Section 5.1 A and C: retransmit INIT or COOKIE ECHO with a doubled timer,
            // up to Max.Init.Retransmits times.
            self.t1 = None;
            self.t1_count += 1;
            if self.t1_count > self.cfg.max_init_retrans {
                self.end(Event::Aborted(AbortReason::InitFailed));
                return;
            }
            self.t1_rto = self.t1_rto.saturating_mul(2).min(self.cfg.rto_max);
            match self.state {
                State::CookieWait => self.init_due = true,
                State::CookieEchoed => self.cookie_echo_due = true,
                _ => {}
            }
        }
        if self.t2.is_some_and(|t| t <= now) {
            // Section 9.2: repeat SHUTDOWN or SHUTDOWN ACK, backing off as T3-rtx does,
            // up to Association.Max.Retrans times.
            self.t2 = None;
            self.t2_count += 1;
            if self.t2_count > self.cfg.max_retrans {
                self.end(Event::Aborted(AbortReason::MaxRetransmissions));
                return;
            }
            self.t2_rto = self.t2_rto.saturating_mul(2).min(self.cfg.rto_max);
            match self.state {
                State::ShutdownSent => self.shutdown_due = true,
                State::ShutdownAckSent => self.shutdown_ack_due = true,
                _ => {}
            }
        }
        self.receiver.on_timeout(now);
        if self.sender.on_timeout(now) == T3Outcome::Abort {
            self.end(Event::Aborted(AbortReason::MaxRetransmissions));
        }
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

/// Section 3.3.2: the Initiate Tag is never 0 and both stream counts are at least 1.
fn valid_init(p: &InitParams) -> bool {
    p.initiate_tag != 0 && p.outbound_streams > 0 && p.inbound_streams > 0
}
